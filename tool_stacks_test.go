package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// logsWithStacks is a console of every kind of app's stacks: an adapter's
// Hermes text and React Native frames pointing into Metro's bundle, a
// Reactotron app's error already mapped in the app, bytecode, none.
func logsWithStacks(bundle string) []map[string]any {
	logEvent := func(seq int64, level, message string, stack any) map[string]any {
		p := map[string]any{"level": level, "message": message}
		if stack != nil {
			p["stack"] = stack
		}
		return map[string]any{"stream": "console", "seq": seq, "type": "log", "timestamp": "2026-11-21T10:00:00.000Z", "payload": p}
	}
	return []map[string]any{
		logEvent(1, "info", "cart opened", nil),
		logEvent(2, "error", "add failed", "Error: add failed ("+testBearer+")\n"+
			"    at onPress ("+bundle+":48211:17)\n"+
			"    at _performTransitionSideEffects ("+bundle+":48300:5)\n"+
			"    at forEach (native)\n"+
			"    at anonymous ("+bundle+":9:9)"),
		logEvent(3, "error", "render failed", []any{
			map[string]any{"methodName": "App", "file": bundle, "lineNumber": 48400, "column": 0},
			map[string]any{"methodName": "x", "file": bundle, "lineNumber": 48300, "column": 4},
		}),
		logEvent(4, "error", "already mapped", reactotronStack(json.RawMessage(`[{"fileName":"/Users/ana/shop/src/a.js","functionName":"f","lineNumber":3}]`))),
	}
}

// startStackLogs connects a scripted adapter serving events and returns
// the tools over it.
func startStackLogs(t *testing.T, events []map[string]any) *toolSet {
	t.Helper()
	h := startLinkHarness(t, nil, nil)
	a := connectWith(t, h, "stacks", withAppStreams)
	scriptedApp(t, a, func(method string, params json.RawMessage) (any, map[string]any) {
		if method == "events.query" {
			return wireEvents(events, params), nil
		}
		return nil, map[string]any{"code": "UNKNOWN_METHOD", "message": method}
	})
	cfg := linkTestConfig()
	cfg.Redact = true
	return newTestToolSet(cfg, h.link)
}

type stackLogsOut struct {
	Entries []struct {
		Seq          int64
		Stack        json.RawMessage
		MoreFrames   int
		HiddenFrames int
		Symbolicated bool
	}
	Symbolication *stackNote
}

// debug_get_logs maps the stacks of a page of logs, whatever sent them,
// in one request to Metro, and a second read asks nothing.
func TestGetLogsMapsStacks(t *testing.T) {
	fm := startFakeMetro(t)
	events := logsWithStacks(deviceBundle)
	ts := startStackLogs(t, events)
	m, _ := newTestSymbolicator(t, fm)
	ts.stacks = m
	res, isError := callToolDirect(t, ts, "debug_get_logs", nil)
	if isError {
		t.Fatal(string(res))
	}
	checkGolden(t, "logs_symbolicated", res)
	var out stackLogsOut
	if err := json.Unmarshal(res, &out); err != nil {
		t.Fatal(err)
	}
	if len(out.Entries) != 4 || out.Symbolication != nil {
		t.Fatalf("entries %d, note %+v", len(out.Entries), out.Symbolication)
	}
	var hermes string
	_ = json.Unmarshal(out.Entries[1].Stack, &hermes)
	want := "Error: add failed (Bearer [REDACTED])\n" +
		"    at handleAdd (src/CartButton.tsx:42:9)\n" +
		"    at forEach (native)\n" +
		"    at anonymous (" + deviceBundle + ":9:9)"
	if diff := cmp.Diff(want, hermes); diff != "" || out.Entries[1].HiddenFrames != 1 || !out.Entries[1].Symbolicated {
		t.Errorf("Hermes stack (-want +got):\n%s\nhidden %d", diff, out.Entries[1].HiddenFrames)
	}
	if n := fm.postCount(); n != 1 {
		t.Errorf("%d requests for one page, want 1", n)
	}
	for _, f := range fm.posts[0] {
		if !strings.HasPrefix(f["file"].(string), "http://10.0.2.2:8081/") {
			t.Errorf("sent a frame that is no bundle URL: %v", f)
		}
	}
	if _, isError := callToolDirect(t, ts, "debug_get_logs", map[string]any{"level": "error"}); isError || fm.postCount() != 1 {
		t.Errorf("a second read: %d requests in all, want 1", fm.postCount())
	}
}

// Without a mapping, stacks stay as the app sent them, and one note says
// why, distinctly for each reason.
func TestGetLogsStackNotes(t *testing.T) {
	bytecode := []map[string]any{{"stream": "console", "seq": int64(1), "type": "log", "timestamp": "2026-11-21T10:00:00.000Z",
		"payload": map[string]any{"level": "error", "message": "x", "stack": "Error: x\n    at anonymous (address at /data/app/prebuilt.hbc:1:902133)"}}}
	unmapped := []map[string]any{{"stream": "console", "seq": int64(1), "type": "log", "timestamp": "2026-11-21T10:00:00.000Z",
		"payload": map[string]any{"level": "error", "message": "x", "stack": "Error: x\n    at f (" + deviceBundle + ":9:9)"}}}
	for _, tc := range []struct {
		name   string
		events []map[string]any
		metro  func(fm *fakeMetro) // nil: METRO_URL off
		status string
		reason string
	}{
		{"off", logsWithStacks(deviceBundle), nil, "off", "METRO_URL is off"},
		{"unreachable", logsWithStacks(deviceBundle), func(fm *fakeMetro) { fm.down = true }, "unavailable", "Metro not reachable at http://127.0.0.1:"},
		{"refused", logsWithStacks(deviceBundle), func(fm *fakeMetro) { fm.statuses = []int{500, 500} }, "unavailable", "Metro could not map the stacks (500: Unable to resolve module ./gone)"},
		{"slow", logsWithStacks(deviceBundle), func(fm *fakeMetro) { fm.hold = make(chan struct{}) }, "pending", "Metro did not answer within"},
		{"bytecode", bytecode, func(*fakeMetro) {}, "unavailable", "Hermes bytecode"},
		{"another Metro's port", logsWithStacks(strings.Replace(deviceBundle, ":8081", ":8082", 1)), func(*fakeMetro) {}, "unavailable", "served on port 8082, not by the Metro at http://127.0.0.1:"},
		{"nothing mapped", unmapped, func(*fakeMetro) {}, "unavailable", "Metro mapped none of the frames"},
		{"already source", logsWithStacks(deviceBundle)[3:], func(*fakeMetro) {}, "not needed", "already name source files"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ts := startStackLogs(t, tc.events)
			var fm *fakeMetro
			if tc.metro != nil {
				fm = startFakeMetro(t)
				tc.metro(fm)
				m, _ := newTestSymbolicator(t, fm)
				if fm.hold != nil {
					m.wait = 0
					t.Cleanup(func() { close(fm.hold) })
				}
				ts.stacks = m
			}
			res, isError := callToolDirect(t, ts, "debug_get_logs", nil)
			var out stackLogsOut
			if err := json.Unmarshal(res, &out); isError || err != nil {
				t.Fatalf("%s", res)
			}
			if n := out.Symbolication; n == nil || n.Status != tc.status || !strings.Contains(n.Reason, tc.reason) {
				t.Errorf("note %+v, want status %q and a reason with %q", n, tc.status, tc.reason)
			}
			for _, e := range out.Entries {
				if e.Symbolicated || strings.Contains(string(e.Stack), "src/CartButton.tsx") {
					t.Errorf("entry %d mapped: %s", e.Seq, e.Stack)
				}
			}
			if fm != nil && tc.name == "already source" && fm.postCount() != 0 {
				t.Errorf("stacks already mapped in the app were sent to Metro")
			}
		})
	}
}

func TestMappedStackText(t *testing.T) {
	frames := func(n int, collapse bool) ([]jsFrame, []mappedFrame) {
		var in []jsFrame
		var out []mappedFrame
		for i := range n {
			in = append(in, jsFrame{Method: "f", File: deviceBundle, Line: i + 1, Column: 1, Kind: frameURL})
			out = append(out, mappedFrame{jsFrame: jsFrame{Method: "f", File: "src/a.ts", Line: i + 1, Column: 1, Kind: framePath}, Mapped: true, Collapse: collapse && i%2 == 1})
		}
		return in, out
	}
	in, out := frames(20, true)
	text, hidden, more, ok := mappedStackText(jsStack{Message: []string{"Error: a", "b", "c"}, Frames: in}, out)
	if !ok || hidden != 10 || more != 2 || strings.Count(text, "\n    at ") != maxStackFrames || !strings.HasPrefix(text, "Error: a\nb\n    at f (src/a.ts:1:1)\n    at f (src/a.ts:3:1)") {
		t.Errorf("20 frames, every other collapsed: hidden %d, more %d, text:\n%s", hidden, more, text)
	}
	// Every frame collapsed: they are shown rather than nothing.
	in, out = frames(2, false)
	for i := range out {
		out[i].Collapse = true
	}
	if text, hidden, _, _ := mappedStackText(jsStack{Frames: in}, out); hidden != 0 || strings.Count(text, "at f") != 2 {
		t.Errorf("all collapsed: hidden %d, text %q", hidden, text)
	}
	if _, _, _, ok := mappedStackText(jsStack{Frames: in[:1]}, []mappedFrame{{jsFrame: jsFrame{Method: "f"}}}); ok {
		t.Error("nothing mapped, yet ok")
	}
}

var _ http.RoundTripper = (*fakeMetro)(nil)

// serve wires the Metro of METRO_URL into debug_get_logs: an adapter's
// stack in the bundle comes back mapped, from the whole program.
func TestServeMapsStacksThroughMetro(t *testing.T) {
	fm := startFakeMetro(t)
	cfg := testConfig(t)
	cfg.MetroURL = fm.srv.URL
	e := startE2E(t, cfg, 0)
	h := e.waitHealth(func(h healthOut) bool { return h.Connected })
	events, _ := json.Marshal(logsWithStacks(fm.bundleOf())[1:2])
	hs := `{"type":"handshake","protocolVersion":1,"sessionId":"bundle-app","adapterVersion":"0.0.1","deviceId":"emulator-2",` +
		`"app":{"name":"BundleApp"},"streams":[{"name":"console","active":true}]}`
	answeringAdapter(t, h.Server.WSURL, hs, func(id, method string, _ json.RawMessage) []byte {
		result := `{"events":` + string(events) + `,"hasMore":false,"oldestSeq":2,"latestSeq":2}`
		if method == "streams.list" {
			result = `{"streams":[{"name":"console","active":true,"eventCount":1,"latestSeq":2,"oldestSeq":2,"hasSnapshot":false,"lastEventAt":null}]}`
		}
		return fmt.Appendf(nil, `{"type":"response","id":%q,"result":%s}`, id, result)
	})
	for deadline := time.Now().Add(10 * time.Second); ; {
		res, isError := e.callTool("debug_get_logs", map[string]any{"session": "bundle-app"})
		if !isError {
			if !strings.Contains(string(res), `at handleAdd (src/CartButton.tsx:42:9)`) {
				t.Fatalf("stack not mapped: %s", res)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the adapter's session never answered: %s", res)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// metroErrorLog reads a CDP event of testdata/metro/errors/ (shaped as
// Hermes sends them through Metro's inspector proxy, with an Expo SDK 58
// bundle URL) into the console log event the Metro link records.
func metroErrorLog(t *testing.T, name string, seq int64) map[string]any {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "metro", "errors", name))
	if err != nil {
		t.Fatal(err)
	}
	f, err := parseCDPFrame(data)
	if err != nil {
		t.Fatal(err)
	}
	read := metroConsoleEvent
	if f.Method == "Runtime.exceptionThrown" {
		read = metroExceptionEvent
	}
	ev, err := read(f.Params, testNow)
	if err != nil {
		t.Fatal(err)
	}
	var payload map[string]any
	if err := json.Unmarshal(ev.Payload, &payload); err != nil {
		t.Fatal(err)
	}
	return map[string]any{"stream": "console", "seq": seq, "type": "log", "timestamp": "2026-11-21T10:00:00.000Z", "payload": payload}
}

// An uncaught error, logged as React Native logs it (console.error(e)
// from its exception handler, whose frames are framework frames), names
// its throw site mapped to source, in the message where the Error's stack
// is; so does an exception made in one place and thrown in another, and a
// stack a Reactotron client or an adapter sends as message text (here
// JavaScriptCore's, and one in a message longer than is searched). Every
// stack of the page goes in one request.
func TestGetLogsMapsErrorStacks(t *testing.T) {
	fm := startFakeMetro(t)
	fm.mu.Lock()
	fm.sources[fakeBundlePos{4024, 12}] = fakeSource{fakeRoot + "/src/screens/Checkout.js", 4, 9, "onCheckout", false}
	fm.sources[fakeBundlePos{3990, 6}] = fakeSource{fakeRoot + "/src/components/Button.js", 12, 4, "onPress", false}
	for pos, line := range map[fakeBundlePos]int{{30001, 4}: 101, {30101, 8}: 160} {
		fm.sources[pos] = fakeSource{fakeRoot + "/node_modules/react-native/Libraries/Core/ExceptionsManager.js", line, 2, "", true}
	}
	fm.mu.Unlock()
	bundle := "http://127.0.0.1:8081/index.bundle//&platform=ios&dev=true"
	rtron, err := reactotronLogEvent(json.RawMessage(`{"level":"debug","message":"checkout failed\nonCheckout@`+bundle+`:4024:13\nglobal code@`+bundle+`:3990:7"}`), false)
	if err != nil {
		t.Fatal(err)
	}
	var rtronPayload map[string]any
	_ = json.Unmarshal(rtron, &rtronPayload)
	long := map[string]any{"level": "error", "message": "Error: boom\n    at onCheckout (" + bundle + ":4024:13)\n" + strings.Repeat("x", maxStackScan) + "\n    at onPress (" + bundle + ":3990:7)"}
	events := []map[string]any{metroErrorLog(t, "console_error_uncaught.json", 1), metroErrorLog(t, "exception_rethrown.json", 2),
		{"stream": "console", "seq": int64(3), "type": "log", "timestamp": "2026-11-21T10:00:00.000Z", "payload": rtronPayload},
		{"stream": "console", "seq": int64(4), "type": "log", "timestamp": "2026-11-21T10:00:00.000Z", "payload": long}}
	ts := startStackLogs(t, events)
	m, _ := newTestSymbolicator(t, fm)
	ts.stacks = m
	res, isError := callToolDirect(t, ts, "debug_get_logs", nil)
	if isError {
		t.Fatal(string(res))
	}
	var out struct {
		Entries []struct {
			Message, Stack string
			HiddenFrames   int
			Symbolicated   bool
		}
		Symbolication *stackNote
	}
	if err := json.Unmarshal(res, &out); err != nil || len(out.Entries) != 4 {
		t.Fatalf("%s", res)
	}
	uncaught, rethrown := out.Entries[0], out.Entries[1]
	want := "Error: boom\n" +
		"    at onCheckout (src/screens/Checkout.js:4:10)\n" +
		"    at onPress (src/components/Button.js:12:5)\n" +
		"    at forEach (native)\n" +
		"    ... 1 framework frame hidden"
	if diff := cmp.Diff(want, uncaught.Message); diff != "" || !uncaught.Symbolicated {
		t.Errorf("the uncaught error's message (-want +got):\n%s", diff)
	}
	if !strings.Contains(uncaught.Stack, "node_modules/react-native/Libraries/Core/ExceptionsManager.js:101:3") {
		t.Errorf("the call site, all framework frames, is shown mapped: %q", uncaught.Stack)
	}
	if want := "Uncaught Error: boom\n    at onCheckout (src/screens/Checkout.js:4:10)"; rethrown.Message != want {
		t.Errorf("where the rethrown error was made: %q, want %q", rethrown.Message, want)
	}
	if want := "    at onPress (src/components/Button.js:12:5)"; rethrown.Stack != want || !rethrown.Symbolicated {
		t.Errorf("where it was thrown: %q, want %q", rethrown.Stack, want)
	}
	if want := "checkout failed\n    at onCheckout (src/screens/Checkout.js:4:10)\n    at onPress (src/components/Button.js:12:5)"; out.Entries[2].Message != want {
		t.Errorf("a Reactotron client's message: %q, want %q", out.Entries[2].Message, want)
	}
	if long := out.Entries[3].Message; !strings.HasPrefix(long, "Error: boom\n    at onCheckout (src/screens/Checkout.js:4:10)\nxxx") || !strings.Contains(long, "more characters") {
		t.Errorf("a long message: %.120q…", long)
	}
	if n := fm.postCount(); n != 1 || out.Symbolication != nil {
		t.Errorf("%d requests (want 1), note %+v", n, out.Symbolication)
	}
}
