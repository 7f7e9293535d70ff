package main

import (
	"bytes"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/google/go-cmp/cmp"
)

const standInSession = "metro:com.example.shop@Pixel 8"

// TestMetroAttachesAndRecords: a page listed with supportsMultipleDebuggers
// is attached with Metro's Origin on Metro's own host, and its recorded
// console, exception and network frames become the session's events;
// garbage and unknown answers are counted, not kept.
func TestMetroAttachesAndRecords(t *testing.T) {
	t.Parallel()
	m := startMetroStandIn(t)
	m.setPages(standInPage("1", "com.example.shop", "Pixel 8", "dev-a", true))
	link, reg := startMetroLink(t, m, nil)
	waitUntil(t, "page 1 attached", func() bool { p, _ := pageStatus(link, "1"); return p.Attached })
	waitUntil(t, "Runtime.enable sent", func() bool { return slices.Contains(m.sentMethods(), "Runtime.enable") })

	m.push("1", readMetroFrames(t, "testdata/metro/session.jsonl")...)
	waitUntil(t, "the exception recorded", func() bool {
		s, _ := reg.find(standInSession)
		return s != nil && s.latestSeq("console") == 3
	})
	console := sessionEvents(t, reg, standInSession, "console")
	want := []string{
		`Cart loaded 3 {id: 42, name: "Ada"}`,
		"Warning: componentWillMount is deprecated, use useEffect",
		"Uncaught TypeError: Cannot read property 'price' of undefined",
	}
	if got := messages(console); !slices.Equal(got, want) {
		t.Errorf("console messages = %q, want %q", got, want)
	}
	warn := console[1]["payload"].(map[string]any)
	if warn["level"] != "warn" || !strings.HasPrefix(warn["stack"].(string), "at warnOnce (http://10.0.2.2:8081/index.bundle?platform=android&dev=true&minify=false:1201:5)") {
		t.Errorf("warning = %v, want level warn and a 1-based stack", warn)
	}
	exc := console[2]["payload"].(map[string]any)
	if exc["level"] != "error" || !strings.Contains(exc["stack"].(string), "at onPress (") {
		t.Errorf("exception = %v, want an error with its stack", exc)
	}
	network := sessionEvents(t, reg, standInSession, "network")
	if len(network) != 2 {
		t.Fatalf("network events = %v, want 2 (one per request)", network)
	}
	ok := network[0]["payload"].(map[string]any)
	if ok["status"] != 200.0 || ok["method"] != "GET" || ok["url"] != "https://api.example.com/cart?user=42" {
		t.Errorf("first request = %v", ok)
	}
	failed := network[1]["payload"].(map[string]any)
	if failed["status"] != nil || failed["response"] != nil || !strings.Contains(failed["error"].(string), "offline") {
		t.Errorf("failed request = %v, want status null, response null and the error", failed)
	}
	d := link.status().Dropped
	if d.MalformedFrames != 1 || d.UnknownAnswers != 1 {
		t.Errorf("dropped = %+v, want 1 malformed frame and 1 unknown answer", d)
	}
	m.set(func(m *metroStandIn) {
		if m.refused != 0 {
			t.Errorf("%d upgrades were refused for their Origin", m.refused)
		}
	})
}

// TestMetroSendsOnlyAllowedMethods: everything that reaches the page is a
// method of metroSentMethods, which holds no method that runs code or
// pauses the app; the link refuses to build any other frame.
func TestMetroSendsOnlyAllowedMethods(t *testing.T) {
	t.Parallel()
	m := startMetroStandIn(t)
	m.setPages(standInPage("1", "com.example.shop", "Pixel 8", "dev-a", true))
	startMetroLink(t, m, nil, func(l *metroLink) { l.keepalive = time.Millisecond })
	waitUntil(t, "a keepalive", func() bool { return slices.Contains(m.sentMethods(), metroKeepaliveMethod) })
	for _, method := range m.sentMethods() {
		if !slices.Contains(metroSentMethods, method) {
			t.Errorf("the link sent %q, which metroSentMethods does not list", method)
		}
	}
	for _, method := range metroSentMethods {
		if strings.HasPrefix(method, "Debugger.") || strings.Contains(method, "evaluate") || strings.Contains(method, "callFunction") {
			t.Errorf("metroSentMethods lists %q, which can run code in or pause the app", method)
		}
	}
	for _, method := range []string{"Runtime.evaluate", "Debugger.enable", "Debugger.pause", "Network.getResponseBody"} {
		if _, err := metroRequestFrame(1, method); err == nil {
			t.Errorf("metroRequestFrame(%q) built a frame", method)
		}
	}
}

// TestMetroReloadKeepsSession: a reload lists the app under a new page id;
// the link moves to it and the session, its events and its seqs go on.
func TestMetroReloadKeepsSession(t *testing.T) {
	t.Parallel()
	m := startMetroStandIn(t)
	m.setPages(standInPage("1", "com.example.shop", "Pixel 8", "dev-a", true))
	link, reg := startMetroLink(t, m, nil)
	waitUntil(t, "page 1 attached", func() bool { p, _ := pageStatus(link, "1"); return p.Attached })
	m.push("1", consoleFrame("before reload"))
	waitUntil(t, "first log", func() bool { s, _ := reg.find(standInSession); return s != nil && s.latestSeq("console") == 1 })

	// The reload: the old page goes, a new one comes, as the proxy lists them.
	m.setPages(standInPage("2", "com.example.shop", "Pixel 8", "dev-a", true))
	m.closePage("1", websocket.StatusGoingAway, "[PAGE_NOT_FOUND] page reloaded")
	waitUntil(t, "page 2 attached", func() bool { p, _ := pageStatus(link, "2"); return p.Attached && p.Session == standInSession })
	m.push("2", consoleFrame("after reload"))
	waitUntil(t, "second log", func() bool { s, _ := reg.find(standInSession); return s.latestSeq("console") == 2 })
	if got := messages(sessionEvents(t, reg, standInSession, "console")); !slices.Equal(got, []string{"before reload", "after reload"}) {
		t.Errorf("console = %q, want both logs in one session", got)
	}
	if n := reg.count(); n != 1 {
		t.Errorf("%d sessions, want 1", n)
	}

	// Metro restarted: a new logical device id, the same app and device.
	m.setPages(standInPage("3", "com.example.shop", "Pixel 8", "dev-b", true))
	waitUntil(t, "page 3 attached to the same session", func() bool {
		p, _ := pageStatus(link, "3")
		return p.Attached && p.Session == standInSession
	})
}

// TestMetroCrashLeavesPostMortem: the app dies (its page goes and the
// socket drops): the session stays, not live, with what it held.
func TestMetroCrashLeavesPostMortem(t *testing.T) {
	t.Parallel()
	m := startMetroStandIn(t)
	m.setPages(standInPage("1", "com.example.shop", "Pixel 8", "dev-a", true))
	link, reg := startMetroLink(t, m, nil)
	waitUntil(t, "page 1 attached", func() bool { p, _ := pageStatus(link, "1"); return p.Attached })
	m.push("1", readMetroFrames(t, "testdata/metro/session.jsonl")...)
	waitUntil(t, "the exception recorded", func() bool { s, _ := reg.find(standInSession); return s.latestSeq("console") == 3 })

	m.setPages()
	m.closePage("1", websocket.StatusAbnormalClosure, "")
	s, _ := reg.find(standInSession)
	waitUntil(t, "the session not live", func() bool { return !s.isLive() })
	if !hasMessage(sessionEvents(t, reg, standInSession, "console"), "Uncaught TypeError") {
		t.Error("the crash's exception is not held after the app left")
	}
}

// TestMetroNewDebuggerIsLeftAlone: closed with [NEW_DEBUGGER_OPENED], the
// page is not taken back while listed; the app's next page is attached.
func TestMetroNewDebuggerIsLeftAlone(t *testing.T) {
	t.Parallel()
	m := startMetroStandIn(t)
	m.setPages(standInPage("1", "com.example.shop", "Pixel 8", "dev-a", true))
	link, _ := startMetroLink(t, m, nil)
	waitUntil(t, "page 1 attached", func() bool { p, _ := pageStatus(link, "1"); return p.Attached })
	m.closePage("1", websocket.StatusNormalClosure, "[NEW_DEBUGGER_OPENED] New debugger opened for the same app instance")
	waitUntil(t, "page 1 left alone", func() bool { p, _ := pageStatus(link, "1"); return p.Reason == metroOtherDebugger })
	m.waitPolls(5)
	if n := m.dialsOf("1"); n != 1 {
		t.Errorf("page 1 dialled %d times, want 1: it was taken back", n)
	}
	m.setPages(standInPage("2", "com.example.shop", "Pixel 8", "dev-a", true))
	waitUntil(t, "the reloaded page attached", func() bool { p, _ := pageStatus(link, "2"); return p.Attached })
}

// TestMetroSingleDebuggerPage: a page without supportsMultipleDebuggers is
// not attached, and the status says why; METRO_ATTACH_EXCLUSIVE attaches it.
func TestMetroSingleDebuggerPage(t *testing.T) {
	t.Parallel()
	m := startMetroStandIn(t)
	m.setPages(standInPage("1", "com.example.shop", "Pixel 8", "dev-a", false))
	link, _ := startMetroLink(t, m, nil)
	m.waitPolls(3)
	p, listed := pageStatus(link, "1")
	if !listed || p.Attached || p.Reason != metroNotMultiDebugger || m.dialsOf("1") != 0 {
		t.Errorf("page = %+v (listed %t, dialled %d), want listed, not attached, reason %s", p, listed, m.dialsOf("1"), metroNotMultiDebugger)
	}
	h := describeMetro(link.status())
	if len(h.Pages) != 1 || !strings.Contains(h.Pages[0].NotAttached, "METRO_ATTACH_EXCLUSIVE") {
		t.Errorf("health pages = %+v, want the setting named", h.Pages)
	}

	exclusive, _ := startMetroLink(t, m, func(c *config) { c.MetroAttachExclusive = true })
	waitUntil(t, "attached with METRO_ATTACH_EXCLUSIVE", func() bool { p, _ := pageStatus(exclusive, "1"); return p.Attached })
}

// TestMetroCloseOnAttachBacksOff: a page that closes at once is not dialled
// again in a loop, and the status says so.
func TestMetroCloseOnAttachBacksOff(t *testing.T) {
	t.Parallel()
	m := startMetroStandIn(t)
	m.set(func(m *metroStandIn) { m.closeOnAttach["1"] = true })
	m.setPages(standInPage("1", "com.example.shop", "Pixel 8", "dev-a", true))
	link, _ := startMetroLink(t, m, nil)
	waitUntil(t, "backing off", func() bool { p, _ := pageStatus(link, "1"); return p.Reason == metroClosedOnAttach })
	m.waitPolls(5)
	if n := m.dialsOf("1"); n != 1 {
		t.Errorf("page dialled %d times, want 1", n)
	}
	p, _ := pageStatus(link, "1")
	if p.RetryAt.IsZero() || !strings.Contains(p.Detail, "CONNECTION_LOST") {
		t.Errorf("status = %+v, want a retry time and the close reason", p)
	}
}

// TestMetroDownThenUp: Metro not running, then answering garbage, then
// running: the status says each once, and the app is attached when it is up.
func TestMetroDownThenUp(t *testing.T) {
	t.Parallel()
	m := startMetroStandIn(t)
	m.set(func(m *metroStandIn) { m.down = true })
	link, reg := startMetroLink(t, m, nil)
	waitUntil(t, "Metro down", func() bool { st := link.status(); return st.Checked && !st.Reachable && st.Error != "" })

	m.set(func(m *metroStandIn) { m.down, m.listBody = false, []byte(`{"not":"a list"`) })
	m.waitPolls(2)
	if st := link.status(); st.Reachable || !strings.Contains(st.Error, "not a list of pages") {
		t.Errorf("status with garbage = %+v, want unreachable, naming the list", st)
	}

	m.set(func(m *metroStandIn) { m.listBody = nil })
	m.setPages(standInPage("1", "com.example.shop", "Pixel 8", "dev-a", true))
	waitUntil(t, "attached once Metro is up", func() bool { p, _ := pageStatus(link, "1"); return p.Attached })
	waitUntil(t, "session live", func() bool { s, _ := reg.find(standInSession); return s != nil && s.isLive() })
	if st := link.status(); !st.Reachable || st.Error != "" {
		t.Errorf("status = %+v, want reachable", st)
	}
}

// TestMetroFloodStaysBounded: a page that floods console events, oversized
// frames and huge arguments is held to the session's ring and the frame
// limit: memory stays flat, drops are counted.
func TestMetroFloodStaysBounded(t *testing.T) {
	t.Parallel()
	m := startMetroStandIn(t)
	m.setPages(standInPage("1", "com.example.shop", "Pixel 8", "dev-a", true))
	link, reg := startMetroLink(t, m, func(c *config) { c.EventBuffer = 100; c.MaxPayloadSize = 64 << 10 })
	waitUntil(t, "page 1 attached", func() bool { p, _ := pageStatus(link, "1"); return p.Attached })

	huge := consoleFrame(strings.Repeat("x", 40<<10))
	oversized := consoleFrame(strings.Repeat("y", 100<<10))
	burst := func(n int) {
		frames := make([][]byte, 0, n)
		for i := range n {
			frames = append(frames, consoleFrame(fmt.Sprintf("flood %d", i)))
		}
		frames = append(frames, huge, oversized)
		m.push("1", frames...)
	}
	s := func() *session { s, _ := reg.find(standInSession); return s }
	held := func() int64 {
		s := s()
		s.mu.Lock()
		defer s.mu.Unlock()
		return s.bytes
	}
	burst(2000)
	waitUntil(t, "first burst", func() bool { return s() != nil && s().latestSeq("console") == 2001 })
	before := held()
	burst(2000)
	waitUntil(t, "second burst", func() bool { return s().latestSeq("console") == 4002 })
	// The same events, cut the same way, fill the ring the same: what the
	// session holds does not grow with what the page sends.
	if after := held(); after > before+before/10 || before > 100*(maxMetroArgChars+1024) {
		t.Errorf("the session holds %d bytes after one burst and %d after two, want flat and within the ring", before, after)
	}
	events := sessionEvents(t, reg, standInSession, "console")
	if len(events) != 100 {
		t.Errorf("the session holds %d events, want EVENT_BUFFER (100)", len(events))
	}
	last := events[len(events)-1]["payload"].(map[string]any)["message"].(string)
	if len([]rune(last)) > maxMetroArgChars+64 || !strings.Contains(last, "more characters") {
		t.Errorf("a 40 KB argument was kept as %d characters, want cut to %d", len(last), maxMetroArgChars)
	}
	// Each burst ends with an oversized frame, read after the last kept event.
	waitUntil(t, "2 oversized frames counted", func() bool { return link.status().Dropped.OversizedFrames == 2 })
}

// consoleFrame is a console.log of one string, as Hermes sends it.
func consoleFrame(text string) []byte {
	b, _ := reactotronMarshal(map[string]any{"method": "Runtime.consoleAPICalled", "params": map[string]any{
		"type": "log", "args": []any{map[string]any{"type": "string", "value": text}}, "executionContextId": 1}})
	return b
}

// TestMetroRecordedProxyFrames replays what the real inspector proxy
// (@react-native/dev-middleware, with a page backed by V8's inspector)
// listed and delivered (testdata/metro/proxy/, recorded with
// RECORD_DIR): its list is read, the page attached on the stand-in's host
// although the list names another port, and its console calls and
// exception become the events debug_get_logs reads.
func TestMetroRecordedProxyFrames(t *testing.T) {
	t.Parallel()
	read := func(name string) []byte {
		data, err := os.ReadFile("testdata/metro/proxy/" + name)
		if err != nil {
			t.Fatal(err)
		}
		return bytes.TrimSpace(data)
	}
	m := startMetroStandIn(t)
	m.set(func(m *metroStandIn) { m.listBody = read("json_list.json") })
	link, reg := startMetroLink(t, m, nil)
	waitUntil(t, "the recorded page attached", func() bool { p, _ := pageStatus(link, "metro-check-device-1"); return p.Attached })
	m.push("1", read("console_log_string.json"), read("console_error_object.json"), read("exception_thrown.json"))
	const id = "metro:com.example.metrocheck@Check Phone"
	waitUntil(t, "three console events", func() bool { s, _ := reg.find(id); return s != nil && s.latestSeq("console") == 3 })
	events := sessionEvents(t, reg, id, "console")
	var got []string
	for _, ev := range events {
		p := ev["payload"].(map[string]any)
		stack, _ := p["stack"].(string)
		first, _, _ := strings.Cut(stack, "\n")
		got = append(got, fmt.Sprintf("%s|%s|%s", p["level"], p["message"], first))
	}
	want := []string{
		"info|metro-check: cart loaded with 3 items|",
		`error|metro-check: payment failed {code: "E_CARD_DECLINED", amount: 42.5, retry: Object}|at pay (http://127.0.0.1:41895/index.bundle?platform=ios&dev=true&minify=false:9:13)`,
		"error|Uncaught TypeError: Cannot read properties of undefined (reading 'total')|at onPressCheckout (http://127.0.0.1:41895/index.bundle?platform=ios&dev=true&minify=false:21:22)",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("console events (-want +got):\n%s", diff)
	}
}

// TestMetroStopWhileDialling: a page that leaves the list while its socket
// is being dialled is not left attached when the dial completes: the dial
// is abandoned, and a socket it returns is closed at once.
func TestMetroStopWhileDialling(t *testing.T) {
	t.Parallel()
	m := startMetroStandIn(t)
	gate := make(chan struct{})
	m.set(func(m *metroStandIn) { m.gates["1"] = gate })
	m.setPages(standInPage("1", "com.example.shop", "Pixel 8", "dev-a", true))
	link, _ := startMetroLink(t, m, nil)
	t.Cleanup(func() {
		// Run before the link's own cleanup: a socket the link never
		// closed would hold the link's end, and the test's, for ever.
		m.mu.Lock()
		defer m.mu.Unlock()
		for _, ws := range m.sockets["1"] {
			ws.CloseNow()
		}
	})
	if page := m.nextDialling(); page != "1" {
		t.Fatalf("dialling page %q, want 1", page)
	}
	m.setPages()
	m.waitPolls(2) // the link has read the list without page 1, and stopped it
	close(gate)    // the proxy answers the upgrade after all
	waitUntil(t, "page 1's socket closed", func() bool { return m.endedOf("1") == 1 })
	waitUntil(t, "page 1's connection gone", func() bool {
		link.mu.Lock()
		defer link.mu.Unlock()
		return len(link.conns) == 0
	})
}

// TestMetroStatusIsPollsDecision: the health check says of each page what
// the next poll does with it; a hold that has expired is not reported as a
// reason any more, since the page is attached again at the next poll.
func TestMetroStatusIsPollsDecision(t *testing.T) {
	t.Parallel()
	cfg := testConfig(t)
	cfg.MetroURL = "http://127.0.0.1:1"
	link := newMetroLink(cfg, slog.New(slog.DiscardHandler), nil)
	multi, single := metroPageInfo{ID: "1", AppID: "a", MultipleDebuggers: true}, metroPageInfo{ID: "2", AppID: "b"}
	older := metroPageInfo{ID: "0", AppID: "a", MultipleDebuggers: true}
	link.listed = []metroPageInfo{older, multi, single}
	link.held["1"] = &metroBackoff{until: time.Now().Add(-time.Second), reason: metroClosedOnAttach, detail: "closed"}
	got := map[string]string{}
	for _, p := range link.status().Pages {
		got[p.ID] = p.Reason
		if p.ID == "1" && (!p.RetryAt.IsZero() || p.Detail != "") {
			t.Errorf("page 1 = %+v, want no retry time or detail once its hold has expired", p)
		}
	}
	want := map[string]string{"0": metroOlderPage, "1": "", "2": metroNotMultiDebugger}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("reasons (-want +got):\n%s", diff)
	}
	link.held["1"].until = time.Now().Add(time.Hour)
	for _, p := range link.status().Pages {
		if p.ID == "1" && p.Reason != metroClosedOnAttach {
			t.Errorf("page 1's reason = %q while held, want %s", p.Reason, metroClosedOnAttach)
		}
	}
}
