package main

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/google/go-cmp/cmp"
)

// fakeReactotronApp plays a recorded Reactotron client against the bridge:
// it sends the app's frames of a recording and answers the server's
// requests with the answers recorded for them.
type fakeReactotronApp struct {
	t        *testing.T
	ws       *websocket.Conn
	answers  map[string][]json.RawMessage // request type + path → recorded answers
	mu       sync.Mutex
	got      []json.RawMessage // frames from the server
	clientID string
	closeErr error // why reading ended
	done     chan struct{}
}

// requestKey names a server request for matching it with its recorded answer.
func requestKey(frame []byte) string {
	var f struct {
		Type    string          `json:"type"`
		Payload json.RawMessage `json:"payload"`
	}
	json.Unmarshal(frame, &f)
	var p struct {
		Path *string `json:"path"`
	}
	json.Unmarshal(f.Payload, &p)
	if p.Path != nil {
		return f.Type + " " + *p.Path
	}
	return f.Type
}

// recordedAnswers maps each server request of a recording to the app
// frame that answered it (the next state.* response after it).
func recordedAnswers(t *testing.T, frames []reactotronCaptured) map[string][]json.RawMessage {
	answers := map[string][]json.RawMessage{}
	for i, f := range frames {
		if f.Dir != "server" || !strings.HasPrefix(requestKey(f.Frame), "state.") || strings.HasPrefix(requestKey(f.Frame), "state.action") {
			continue
		}
		for _, next := range frames[i+1:] {
			if next.Dir == "app" && strings.Contains(string(next.Frame), `.response"`) {
				answers[requestKey(f.Frame)] = append(answers[requestKey(f.Frame)], next.Frame)
				break
			}
		}
	}
	return answers
}

// dialAppSocket connects to the bridge at url as a Reactotron app does,
// reading messages of any size.
func dialAppSocket(t *testing.T, url string) *websocket.Conn {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	ws, _, err := websocket.Dial(ctx, url, nil)
	if err != nil {
		t.Fatalf("dial %s: %v", url, err)
	}
	ws.SetReadLimit(-1)
	return ws
}

func dialReactotron(t *testing.T, url string, answers map[string][]json.RawMessage) *fakeReactotronApp {
	t.Helper()
	a := &fakeReactotronApp{t: t, ws: dialAppSocket(t, url), answers: answers, done: make(chan struct{})}
	go a.readLoop()
	t.Cleanup(func() { a.close() })
	return a
}

func (a *fakeReactotronApp) readLoop() {
	defer close(a.done)
	for {
		_, data, err := a.ws.Read(context.Background())
		if err != nil {
			a.mu.Lock()
			a.closeErr = err
			a.mu.Unlock()
			return
		}
		a.mu.Lock()
		a.got = append(a.got, data)
		var f struct {
			Type    string `json:"type"`
			Payload string `json:"payload"`
		}
		if json.Unmarshal(data, &f) == nil && f.Type == "setClientId" {
			a.clientID = f.Payload
		}
		list := a.answers[requestKey(data)]
		var answer json.RawMessage
		if len(list) > 0 {
			answer = list[0]
			if len(list) > 1 {
				a.answers[requestKey(data)] = list[1:]
			}
		}
		a.mu.Unlock()
		if answer != nil {
			a.ws.Write(context.Background(), websocket.MessageText, answer)
		}
	}
}

func (a *fakeReactotronApp) send(frame []byte) {
	a.t.Helper()
	if err := a.ws.Write(a.t.Context(), websocket.MessageText, frame); err != nil {
		a.t.Fatalf("send: %v", err)
	}
}

func (a *fakeReactotronApp) close() {
	a.ws.Close(websocket.StatusNormalClosure, "")
	<-a.done
}

func (a *fakeReactotronApp) serverFrames() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	var out []string
	for _, f := range a.got {
		out = append(out, string(f))
	}
	return out
}

// startBridgeE2E runs the server with the Reactotron bridge on a free port
// and returns the bridge's URL.
func startBridgeE2E(t *testing.T) (*e2e, string) {
	t.Helper()
	return startBridgeE2EWith(t, 2*time.Second)
}

// startBridgeE2EWith is startBridgeE2E with a request timeout, and the
// config changed by tweaks.
func startBridgeE2EWith(t *testing.T, requestTimeout time.Duration, tweaks ...func(*config)) (*e2e, string) {
	t.Helper()
	cfg := testConfig(t)
	cfg.Reactotron, cfg.ReactotronPort = true, 0 // any free port
	cfg.RequestTimeout = requestTimeout
	for _, tweak := range tweaks {
		tweak(&cfg)
	}
	ts := startServer(t, cfg)
	ts.initialize()
	e := &e2e{testServer: ts, nextID: 100}
	var url string
	e.waitHealthRaw(func(h map[string]any) bool {
		rt, _ := h["server"].(map[string]any)["reactotron"].(map[string]any)
		url, _ = rt["url"].(string)
		return rt["listening"] == true
	})
	return e, url
}

// waitHealthRaw polls debug_health_check until ok holds, with a deadline
// generous enough for a loaded machine.
func (e *e2e) waitHealthRaw(ok func(map[string]any) bool) map[string]any {
	e.t.Helper()
	for deadline := time.Now().Add(linkWaitLimit); ; {
		res, isError := e.callTool("debug_health_check", nil)
		if isError {
			e.t.Fatalf("health check failed: %s", res)
		}
		var h map[string]any
		if err := json.Unmarshal([]byte(res), &h); err != nil {
			e.t.Fatal(err)
		}
		if ok(h) {
			return h
		}
		if time.Now().After(deadline) {
			e.t.Fatalf("health check never as wanted; last: %s", res)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// toolJSON calls a tool that must succeed and decodes its result.
func (e *e2e) toolJSON(name string, args map[string]any) map[string]any {
	e.t.Helper()
	res, isError := e.callTool(name, args)
	if isError {
		e.t.Fatalf("%s(%v) failed: %s", name, args, res)
	}
	var m map[string]any
	if err := json.Unmarshal([]byte(res), &m); err != nil {
		e.t.Fatal(err)
	}
	return m
}

func TestReactotronBridgeSession(t *testing.T) {
	e, url := startBridgeE2E(t)
	frames := readReactotronCaptured(t, "testdata/reactotron/session.jsonl")
	answers := recordedAnswers(t, frames)
	answers["state.values.subscribe"] = []json.RawMessage{reduxProbeAnswer} // the store exists
	app := dialReactotron(t, url, answers)
	// Everything the app sent before the server's first state request.
	events := 0 // the frames that become events: all but the intro and the command announcements
	for _, f := range frames {
		if f.Dir == "server" && strings.HasPrefix(requestKey(f.Frame), "state.values.request") {
			break
		}
		if f.Dir == "app" {
			app.send(f.Frame)
			if typ := requestKey(f.Frame); typ != "client.intro" && !strings.HasPrefix(typ, "customCommand.") {
				events++
			}
		}
	}

	// The client had no clientId: it gets one, and its session carries it.
	h := e.waitHealthRaw(func(h map[string]any) bool {
		sessions, _ := h["sessions"].([]any)
		if len(sessions) != 1 {
			return false
		}
		streams, _ := e.toolJSON("debug_list_streams", nil)["streams"].([]any)
		var total float64
		for _, s := range streams {
			total += s.(map[string]any)["eventCount"].(float64)
		}
		return total == float64(events)
	})
	session := h["sessions"].([]any)[0].(map[string]any)
	if session["via"] != "reactotron" || session["app"] != "ShopApp" || session["connected"] != true {
		t.Errorf("session = %v, want a connected reactotron session of ShopApp", session)
	}
	app.mu.Lock()
	clientID := app.clientID
	app.mu.Unlock()
	if clientID == "" || session["id"] != clientID {
		t.Errorf("session id %v, setClientId %q: want the id the server assigned", session["id"], clientID)
	}

	// Each stream holds the translated events.
	for _, c := range []struct {
		stream, eventType string
		count             int
	}{
		{"redux", "action_dispatched", 3},
		{"console", "log", 11},
		{"network", "http_request", 3},
		{"mmkv", "mmkv_mutation", 4},
		{"async_storage", "async_storage_mutation", 7},
	} {
		got := e.toolJSON("debug_query_events", map[string]any{"stream": c.stream, "event_type": c.eventType, "limit": 200})
		if n := len(got["events"].([]any)); n != c.count {
			t.Errorf("%s %s events = %d, want %d", c.stream, c.eventType, n, c.count)
		}
	}
	timeline := e.toolJSON("debug_query_events", map[string]any{"stream": "timeline", "limit": 200})["events"].([]any)
	types := map[string]bool{}
	for _, ev := range timeline {
		types[ev.(map[string]any)["type"].(string)] = true
	}
	for _, want := range []string{"display", "benchmark.report", "image"} {
		if !types[want] {
			t.Errorf("timeline lacks %s events: %v", want, types)
		}
	}

	// A path read asks for just that value.
	got := e.toolJSON("debug_get_state_path", map[string]any{"path": "cart.total"})
	if got["value"] != 15.5 {
		t.Errorf("cart.total = %v, want 15.5", got["value"])
	}
	// The whole state comes from a backup, recorded as a snapshot event.
	snap := e.toolJSON("debug_get_snapshot", map[string]any{"stream": "redux"})
	state := snap["state"].(map[string]any)
	if _, ok := state["cart"]; !ok {
		t.Errorf("snapshot state = %v, want the store", state)
	}
	if n := len(e.toolJSON("debug_query_events", map[string]any{"stream": "redux", "event_type": "state_snapshot"})["events"].([]any)); n != 1 {
		t.Errorf("state_snapshot events = %d, want 1", n)
	}
	// The MMKV snapshot is what was observed, and says so.
	mmkv := e.toolJSON("debug_get_snapshot", map[string]any{"stream": "mmkv"})["state"].(map[string]any)
	def, _ := mmkv["default"].(map[string]any)
	if def["observedOnly"] != true || !cmp.Equal(def["keys"], map[string]any{"empty": ""}) {
		t.Errorf("mmkv snapshot = %v, want default {keys: {empty: \"\"}, observedOnly}", mmkv)
	}
	for _, f := range app.serverFrames() {
		if strings.Contains(f, "state.values.request") && !strings.Contains(f, `"path":"cart.total"`) {
			t.Errorf("the server asked for more than the path: %s", f)
		}
	}

	// After the app closes, its session stays, answering from the buffers.
	app.close()
	e.waitHealthRaw(func(h map[string]any) bool {
		s := h["sessions"].([]any)[0].(map[string]any)
		return s["connected"] == false && s["disconnectedAt"] != nil
	})
	after := e.toolJSON("debug_query_events", map[string]any{"stream": "console", "limit": 200})
	if after["live"] != false || len(after["events"].([]any)) != 11 {
		t.Errorf("post-mortem console events: live=%v, %d events; want live false and 11", after["live"], len(after["events"].([]any)))
	}
	if v := e.toolJSON("debug_get_snapshot", map[string]any{"stream": "redux", "scope": "cart.total"})["state"]; v != 15.5 {
		t.Errorf("post-mortem cart.total = %v, want 15.5 from the kept snapshot", v)
	}
}

func TestReactotronReconnectKeepsSession(t *testing.T) {
	e, url := startBridgeE2E(t)
	intro := []byte(`{"type":"client.intro","payload":{"name":"ShopApp","clientId":"fixed-id"},"important":false}`)
	log := []byte(`{"type":"log","payload":{"level":"warn","message":"before reload"},"important":false}`)
	first := dialReactotron(t, url, nil)
	first.send(intro)
	first.send(log)
	e.waitHealthRaw(func(h map[string]any) bool {
		s, _ := h["sessions"].([]any)
		return len(s) == 1 && len(e.toolJSON("debug_query_events", map[string]any{"stream": "console"})["events"].([]any)) == 1
	})
	// The reloaded app dials again with its clientId: same session, the
	// old connection is closed as replaced, the events stay.
	second := dialReactotron(t, url, nil)
	second.send(intro)
	<-first.done
	if code := websocket.CloseStatus(first.closeErr); code != wireCloseReplaced {
		t.Errorf("first connection closed with %d, want %d", code, wireCloseReplaced)
	}
	second.send([]byte(`{"type":"log","payload":{"level":"error","message":"after reload"},"important":true}`))
	h := e.waitHealthRaw(func(h map[string]any) bool {
		return len(e.toolJSON("debug_query_events", map[string]any{"stream": "console"})["events"].([]any)) == 2
	})
	sessions := h["sessions"].([]any)
	if len(sessions) != 1 || sessions[0].(map[string]any)["id"] != "fixed-id" || sessions[0].(map[string]any)["connected"] != true {
		t.Errorf("sessions = %v, want one live session fixed-id", sessions)
	}
}

func TestReactotronPortHeld(t *testing.T) {
	held, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	cfg := testConfig(t)
	_, port, _ := net.SplitHostPort(held.Addr().String())
	cfg.Reactotron, cfg.ReactotronPort = true, atoi(t, port)
	ts := startServer(t, cfg)
	ts.initialize()
	e := &e2e{testServer: ts, nextID: 100}
	h := e.waitHealthRaw(func(h map[string]any) bool {
		rt, _ := h["server"].(map[string]any)["reactotron"].(map[string]any)
		return rt["listenError"] != nil
	})
	rt := h["server"].(map[string]any)["reactotron"].(map[string]any)
	if rt["listening"] != false || !strings.Contains(rt["listenError"].(string), "address already in use") {
		t.Errorf("reactotron = %v, want not listening, saying the address is in use", rt)
	}
	if h["server"].(map[string]any)["listening"] != true {
		t.Error("the adapter listener should still be listening")
	}
}

func atoi(t *testing.T, s string) int {
	t.Helper()
	var n int
	for _, r := range s {
		n = n*10 + int(r-'0')
	}
	return n
}

// startBridge runs a bridge on a free port, outside any server, so a test
// can reach the sessions it makes.
func startBridge(t *testing.T) (*reactotronBridge, *adapterLink, string) {
	t.Helper()
	return startBridgeWith(t, 2*time.Second, nil)
}

// startBridgeWith is startBridge with a request timeout, and with the
// desktop relay opts names (nil: none).
func startBridgeWith(t *testing.T, requestTimeout time.Duration, desktop *reactotronDesktopOptions) (*reactotronBridge, *adapterLink, string) {
	t.Helper()
	return startBridgeTuned(t, requestTimeout, desktop, func(*reactotronBridge) {})
}

// startBridgeTuned is startBridgeWith with tune applied to the bridge
// before it runs.
func startBridgeTuned(t *testing.T, requestTimeout time.Duration, desktop *reactotronDesktopOptions, tune func(*reactotronBridge)) (*reactotronBridge, *adapterLink, string) {
	t.Helper()
	cfg := testConfig(t)
	cfg.Reactotron, cfg.ReactotronPort = true, 0 // any free port
	cfg.RequestTimeout = requestTimeout
	link := newTestLink(cfg, nil, nil)
	b := newReactotronBridge(cfg, slog.New(slog.DiscardHandler), link)
	b.desktop = desktop
	tune(b)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		b.run(ctx)
	}()
	t.Cleanup(func() {
		cancel()
		<-done
	})
	addr, err := b.addr(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	return b, link, "ws://" + addr + "/"
}

// TestReactotronActsOnTheApp pins the frames a Reactotron session sends to
// dispatch an action and run a custom command: byte for byte those the
// Reactotron app sends (recorded in session.jsonl).
func TestReactotronActsOnTheApp(t *testing.T) {
	_, link, url := startBridge(t)
	// The app has a store: it answers the probe as reactotron-redux does.
	app := dialReactotron(t, url, map[string][]json.RawMessage{"state.values.subscribe": {reduxProbeAnswer}})
	app.send([]byte(`{"type":"client.intro","payload":{"name":"ShopApp","clientId":"c1"}}`))
	var s *session
	linkWaitFor(t, "the session", func() bool {
		s = registryOf(link).currentLive(sessionViaReactotron)
		return s != nil
	})
	// The store probe sent on introduction (rtron_storeprobe.go) and the
	// list after it: the app answered the probe before it read the list,
	// and a log it sends now is handled after that answer.
	linkWaitFor(t, "the probe", func() bool { return slices.Contains(app.serverFrames(), probeRestore) })
	app.send([]byte(`{"type":"log","payload":{"level":"debug","message":"after the probe"}}`))
	linkWaitFor(t, "the log", func() bool { return s.latestSeq("console") == 1 })
	recorded := map[string]string{}
	for _, f := range readReactotronCaptured(t, "testdata/reactotron/session.jsonl") {
		if f.Dir == "server" {
			recorded[requestKey(f.Frame)+" "+string(f.Frame)] = string(f.Frame)
		}
	}
	for _, c := range []struct {
		method string
		params any
		want   string
	}{
		{"state.dispatch", dispatchParams{Action: json.RawMessage(`{"type":"cart/add","payload":{"sku":"C-3","qty":1,"price":1.5}}`)},
			`{"type":"state.action.dispatch","payload":{"action":{"type":"cart/add","payload":{"sku":"C-3","qty":1,"price":1.5}}}}`},
		{"commands.run", runCommandParams{Command: "login", Args: json.RawMessage(`{"user":"ada","role":"admin"}`)},
			`{"type":"custom","payload":{"command":"login","args":{"user":"ada","role":"admin"}}}`},
	} {
		if _, ok := recorded[requestKey([]byte(c.want))+" "+c.want]; !ok {
			t.Fatalf("%s: %s is not a frame the Reactotron app sends", c.method, c.want)
		}
		before := len(app.serverFrames())
		raw, err := s.request(t.Context(), c.method, c.params)
		if err != nil || string(raw) != "{}" {
			t.Fatalf("%s = %s, %v; want {}", c.method, raw, err)
		}
		linkWaitFor(t, "the frame", func() bool { return len(app.serverFrames()) > before })
		if got := app.serverFrames()[before]; got != c.want {
			t.Errorf("%s sent %s, want %s", c.method, got, c.want)
		}
	}
	// Commands are recorded once by name, however often Fast Refresh
	// announces them, and commands.list answers from them.
	for _, f := range readReactotronCaptured(t, "testdata/reactotron/session.jsonl") {
		if f.Dir == "app" && strings.Contains(string(f.Frame), `"customCommand.`) {
			app.send(f.Frame)
		}
	}
	// Frames are handled in order: once a last command is listed, all of
	// the recorded ones have been. (Waiting for three commands instead
	// stopped midway, as the list holds three more than once.)
	app.send([]byte(`{"type":"customCommand.register","payload":{"id":99,"command":"marker"}}`))
	var names []string
	linkWaitFor(t, "the commands", func() bool {
		var list struct {
			Commands []struct {
				Command string `json:"command"`
			} `json:"commands"`
		}
		raw, err := s.request(t.Context(), "commands.list", listCommandsParams{})
		if err != nil || json.Unmarshal(raw, &list) != nil {
			return false
		}
		names = names[:0]
		for _, c := range list.Commands {
			names = append(names, c.Command)
		}
		return slices.Contains(names, "marker")
	})
	if diff := cmp.Diff([]string{"resetCart", "login", "ping", "marker"}, names); diff != "" {
		t.Errorf("commands (-want +got):\n%s", diff)
	}
}

// TestHealthCheckSummarisesWithinBudget pins that the health check never
// fails for size: beyond MAX_RESULT_BYTES it drops the sessions' stream
// names, then streams, then sessions, and says how many there were.
func TestHealthCheckSummarisesWithinBudget(t *testing.T) {
	ts := newTestToolSet(config{MaxResultBytes: 1024}, nil)
	out := healthOutput{Streams: []healthStream{}, Sessions: []healthSession{}}
	for i := range 40 {
		out.Streams = append(out.Streams, healthStream{Name: fmt.Sprintf("stream-%02d", i)})
	}
	for i := range 10 {
		h := healthSession{ID: fmt.Sprintf("session-%d", i), Via: sessionViaWire, Device: json.RawMessage("null")}
		for j := range 30 {
			h.Streams = append(h.Streams, fmt.Sprintf("stream-%02d", j))
		}
		out.Sessions = append(out.Sessions, h)
	}
	res, err := ts.healthResult(out)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.body) > 1024-256 {
		t.Errorf("health check of %d bytes, over the budget less its margin", len(res.body))
	}
	var got healthOutput
	if err := json.Unmarshal(res.body, &got); err != nil {
		t.Fatal(err)
	}
	if got.SessionsTotal != 10 || len(got.Sessions) == 0 || len(got.Sessions) >= 10 || got.StreamsTotal != 40 || len(got.Streams) > 5 {
		t.Errorf("sessions %d of %d, streams %d of %d; want some of 10 and at most 5 of 40",
			len(got.Sessions), got.SessionsTotal, len(got.Streams), got.StreamsTotal)
	}
	if s := got.Sessions[0]; len(s.Streams) != 0 || s.StreamsTotal != 30 {
		t.Errorf("first session lists %d streams of %d, want none of 30", len(s.Streams), s.StreamsTotal)
	}
}

// TestReactotronInfo pins how a client.intro describes the session: the
// real client's build placeholder is not a version.
func TestReactotronInfo(t *testing.T) {
	for _, c := range []struct {
		intro reactotronIntro
		want  string
	}{
		{reactotronIntro{ClientID: "a", CoreClientVersion: "2.10.0"}, "2.10.0"},
		{reactotronIntro{ClientID: "a", CoreClientVersion: "REACTOTRON_CORE_CLIENT_VERSION", LibraryVersion: "5.1.14"}, "5.1.14"},
		{reactotronIntro{ClientID: "a", CoreClientVersion: "REACTOTRON_CORE_CLIENT_VERSION"}, "reactotron"},
	} {
		info := reactotronInfo(c.intro, time.Now())
		if info.AdapterVersion != c.want || info.SessionID != "a" {
			t.Errorf("reactotronInfo(%+v) = version %q, id %q; want %q, a", c.intro, info.AdapterVersion, info.SessionID, c.want)
		}
	}
}

// TestReactotronUpgradeChecks pins that the Reactotron port refuses what
// the adapter port refuses: a foreign Origin or Host gets 403.
func TestReactotronUpgradeChecks(t *testing.T) {
	_, _, url := startBridge(t)
	for _, h := range []http.Header{
		{"Origin": {"http://evil.example"}},
		{"Host": {"rebind.example"}},
	} {
		ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
		opts := &websocket.DialOptions{HTTPHeader: h}
		if host := h.Get("Host"); host != "" {
			opts.Host = host
		}
		ws, resp, err := websocket.Dial(ctx, url, opts)
		cancel()
		if err == nil {
			ws.CloseNow()
			t.Fatalf("upgrade with %v accepted, want 403", h)
		}
		if resp == nil || resp.StatusCode != http.StatusForbidden {
			t.Errorf("upgrade with %v: %v, want 403", h, err)
		}
	}
}
