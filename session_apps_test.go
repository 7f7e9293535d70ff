package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/google/go-cmp/cmp"
)

// sessionTestApp is an app adapter on a real WebSocket, driven by a test:
// it answers every request with answer's result.
type sessionTestApp struct {
	t     *testing.T
	ws    *websocket.Conn
	pongs chan struct{}
	done  chan struct{} // closed when its read loop has ended
}

// dialSessionApp connects an app with handshake hs to wsURL and returns once
// the server has attached its session.
func dialSessionApp(t *testing.T, wsURL string, hs map[string]any, answer func(method string, params json.RawMessage) any) *sessionTestApp {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), linkWaitLimit)
	defer cancel()
	ws, _, err := websocket.Dial(ctx, wsURL, nil)
	if err != nil {
		t.Fatalf("dial: %v", err)
	}
	app := &sessionTestApp{t: t, ws: ws, pongs: make(chan struct{}, 1), done: make(chan struct{})}
	app.send(hs)
	if _, ack, err := ws.Read(ctx); err != nil || !strings.Contains(string(ack), `"handshake_ack"`) {
		t.Fatalf("handshake: %s, %v", ack, err)
	}
	go func() {
		defer close(app.done)
		for {
			_, data, err := ws.Read(context.Background())
			if err != nil {
				return
			}
			var m struct {
				Type, ID, Method string
				Params           json.RawMessage
			}
			if json.Unmarshal(data, &m) != nil {
				continue
			}
			switch m.Type {
			case "pong":
				app.pongs <- struct{}{}
			case "request":
				reply, _ := json.Marshal(map[string]any{"type": "response", "id": m.ID, "result": answer(m.Method, m.Params)})
				if ws.Write(context.Background(), websocket.MessageText, reply) != nil {
					return
				}
			}
		}
	}()
	t.Cleanup(func() {
		ws.CloseNow()
		<-app.done
	})
	app.sync()
	return app
}

func (a *sessionTestApp) send(v any) {
	a.t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		a.t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), linkWaitLimit)
	defer cancel()
	if err := a.ws.Write(ctx, websocket.MessageText, b); err != nil {
		a.t.Fatalf("write: %v", err)
	}
}

// push sends an event; payload is JSON text.
func (a *sessionTestApp) push(stream string, seq int64, typ, payload string) {
	a.t.Helper()
	a.send(map[string]any{"type": "event", "event": json.RawMessage(testEvent(stream, seq, typ, payload))})
}

// sync returns once the server has handled everything the app sent before.
func (a *sessionTestApp) sync() {
	a.t.Helper()
	a.send(map[string]string{"type": "ping"})
	select {
	case <-a.pongs:
	case <-time.After(linkWaitLimit):
		a.t.Fatal("no pong")
	}
}

// leave closes the connection as an app that quits does.
func (a *sessionTestApp) leave() {
	a.t.Helper()
	if err := a.ws.Close(websocket.StatusNormalClosure, "bye"); err != nil {
		a.t.Fatalf("close: %v", err)
	}
	<-a.done
}

// appAnswers answers as an app whose current state is state (JSON text)
// at seq 5.
func appAnswers(state string) func(method string, params json.RawMessage) any {
	return func(method string, params json.RawMessage) any {
		switch method {
		case "snapshot.get":
			return json.RawMessage(`{"seq":5,"timestamp":"2026-11-21T10:00:05.000Z","state":` + state + `}`)
		case "events.query":
			return json.RawMessage(`{"events":[],"hasMore":false,"oldestSeq":0,"latestSeq":0}`)
		}
		return map[string]any{"streams": []any{}}
	}
}

func appHandshake(sessionID, deviceID, app string) map[string]any {
	return testHandshake(sessionID, hsWith("deviceId", deviceID), hsWith("app", map[string]any{"name": app}))
}

// startSessionsE2E runs the whole program with no app connected and
// returns it with its adapter URL.
func startSessionsE2E(t *testing.T) (*e2e, string) {
	t.Helper()
	ts := startServer(t, testConfig(t))
	ts.initialize()
	e := &e2e{testServer: ts, nextID: 100}
	return e, e.waitHealth(func(h healthOut) bool { return h.Server.Listening }).Server.WSURL
}

func (e *e2e) mustCall(name string, args map[string]any) json.RawMessage {
	e.t.Helper()
	res, isError := e.callTool(name, args)
	if isError {
		e.t.Fatalf("%s %v: %s", name, args, res)
	}
	return res
}

// wantResult compares a tool result with want (JSON text), ignoring order.
func wantResult(t *testing.T, what string, got json.RawMessage, want string) {
	t.Helper()
	if diff := cmp.Diff(linkNormJSON(t, got), linkNormJSON(t, []byte(want))); diff != "" {
		t.Errorf("%s (-got +want):\n%s", what, diff)
	}
}

type sessionsHealthOut struct {
	Connected bool `json:"connected"`
	Adapter   *struct {
		SessionID string `json:"sessionId"`
	} `json:"adapter"`
	Sessions []healthSession `json:"sessions"`
}

func (e *e2e) sessionsHealth() sessionsHealthOut {
	e.t.Helper()
	var h sessionsHealthOut
	if err := json.Unmarshal(e.mustCall("debug_health_check", nil), &h); err != nil {
		e.t.Fatal(err)
	}
	return h
}

// TestSeveralWireSessions: two apps on two devices are live at once, both
// listed, each reached through the session argument by id or app name;
// results say which session answered only when there is more than one.
func TestSeveralWireSessions(t *testing.T) {
	e, url := startSessionsE2E(t)
	shopApp := dialSessionApp(t, url, appHandshake("shop-1", "phone", "ShopApp"), appAnswers(`{"who":"shop"}`))
	wantResult(t, "the only session's answer", e.mustCall("debug_get_state_path", map[string]any{"path": "who"}),
		`{"path":"who","value":"shop"}`)

	adminHS := appHandshake("admin-1", "tablet", "AdminApp")
	adminHS["device"] = map[string]any{"platform": "android"}
	adminHS["streams"] = []any{map[string]any{"name": "redux", "active": true}}
	dialSessionApp(t, url, adminHS, appAnswers(`{"who":"admin"}`))

	h := e.sessionsHealth()
	if !h.Connected || h.Adapter == nil || h.Adapter.SessionID != "admin-1" {
		t.Errorf("health check's default session = %+v, want admin-1, connected last", h.Adapter)
	}
	for _, s := range h.Sessions {
		if _, err := time.Parse(time.RFC3339, s.ConnectedAt); err != nil {
			t.Errorf("session %s connectedAt %q: %v", s.ID, s.ConnectedAt, err)
		}
	}
	wantSessions := []healthSession{
		{ID: "admin-1", App: "AdminApp", Via: "wire", Connected: true, Device: json.RawMessage(`{"platform":"android"}`), Streams: []string{"redux"}},
		{ID: "shop-1", App: "ShopApp", Via: "wire", Connected: true, Device: json.RawMessage(`{"isEmulator":true,"platform":"ios"}`), Streams: []string{"redux", "navigation", "mmkv"}},
	}
	ignoreConnectedAt := cmp.FilterPath(func(p cmp.Path) bool { return p.Last().String() == ".ConnectedAt" }, cmp.Ignore())
	if diff := cmp.Diff(h.Sessions, wantSessions, ignoreConnectedAt); diff != "" {
		t.Errorf("health check sessions (-got +want):\n%s", diff)
	}

	shop := `{"session":{"id":"shop-1","app":"ShopApp"},"path":"who","value":"shop"}`
	admin := `{"session":{"id":"admin-1","app":"AdminApp"},"path":"who","value":"admin"}`
	for _, tc := range []struct{ ref, want string }{
		{"", admin}, {"admin-1", admin}, {"AdminApp", admin}, {"shop-1", shop}, {"ShopApp", shop}, {"shopapp", shop},
	} {
		args := map[string]any{"path": "who"}
		if tc.ref != "" {
			args["session"] = tc.ref
		}
		wantResult(t, "session "+tc.ref, e.mustCall("debug_get_state_path", args), tc.want)
	}
	// Every adapter-backed tool says who answered.
	for _, tc := range []struct {
		tool string
		args map[string]any
	}{
		{"debug_list_streams", map[string]any{}},
		{"debug_get_snapshot", map[string]any{"stream": "redux"}},
		{"debug_query_events", map[string]any{"stream": "redux"}},
		{"debug_diff_snapshots", map[string]any{"stream": "redux", "base_seq": 5, "target_seq": 5}},
	} {
		tc.args["session"] = "shop-1"
		var got struct {
			Session map[string]any `json:"session"`
			Live    *bool          `json:"live"`
		}
		if err := json.Unmarshal(e.mustCall(tc.tool, tc.args), &got); err != nil || got.Session["id"] != "shop-1" || got.Session["app"] != "ShopApp" || got.Live != nil {
			t.Errorf("%s: session %v, live %v (%v); want shop-1 and no live member", tc.tool, got.Session, got.Live, err)
		}
	}

	// Resources take the session as ?session=.
	for uri, want := range map[string]string{
		uriRedux:                                `{"who":"admin"}`,
		uriRedux + "?session=shop-1":            `{"who":"shop"}`,
		uriRedux + "?session=ShopApp":           `{"who":"shop"}`,
		uriRedux + "?session=admin-1":           `{"who":"admin"}`,
		uriSession + "?session=shop-1":          `"shop-1"`,
		"debug://mmkv/auth?session=shop-1":      `SCOPE_NOT_FOUND`, // the state has no mmkv instances
		uriSessions + "?session=shop-1":         `"admin-1"`,
		"debug://navigation/state?session=Shop": `INVALID_PARAMS`,
	} {
		text, errObj := readResource(t, e, uri)
		if errObj != nil {
			text = fmt.Sprint(errObj)
		}
		if !strings.Contains(text, want) {
			t.Errorf("read %s = %s, want it to contain %s", uri, text, want)
		}
	}
	text, _ := readResource(t, e, uriSessions)
	var list struct{ Sessions []healthSession }
	if err := json.Unmarshal([]byte(text), &list); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(list.Sessions, wantSessions, ignoreConnectedAt); diff != "" {
		t.Errorf("debug://sessions (-got +want):\n%s", diff)
	}

	// One app gone: both sessions still exist, so answers still say which
	// answered; the gone one's answers are marked live: false.
	shopApp.leave()
	linkWaitFor(t, "shop-1 to be disconnected", func() bool {
		h := e.sessionsHealth()
		return len(h.Sessions) == 2 && !h.Sessions[1].Connected
	})
	wantResult(t, "the live session's answer", e.mustCall("debug_get_state_path", map[string]any{"path": "who"}), admin)
	wantResult(t, "the gone session's answer", e.mustCall("debug_query_events", map[string]any{"stream": "redux", "session": "ShopApp"}),
		`{"session":{"id":"shop-1","app":"ShopApp"},"live":false,"events":[],"hasMore":false,"oldestSeq":0,"latestSeq":0}`)
}

// TestSessionArgumentErrors: a session argument naming no session, or an
// app name several sessions share, is INVALID_PARAMS listing the sessions,
// for every tool; in a resource URI it is -32602. Any other query is an
// unknown resource.
func TestSessionArgumentErrors(t *testing.T) {
	e, url := startSessionsE2E(t)
	dialSessionApp(t, url, appHandshake("a-1", "phone", "ShopApp"), appAnswers(`{"who":"a"}`))
	dialSessionApp(t, url, appHandshake("b-1", "tablet", "ShopApp"), appAnswers(`{"who":"b"}`))
	sessions := []any{
		map[string]any{"id": "b-1", "app": "ShopApp", "connected": true},
		map[string]any{"id": "a-1", "app": "ShopApp", "connected": true},
	}
	unknown := map[string]any{"argument": "session", "problem": `no session has the id or app name "nope"`, "sessions": sessions}
	ambiguous := map[string]any{"argument": "session", "problem": `2 sessions have the app name "shopapp"; pass a session id`, "sessions": sessions}
	toolArgs := map[string]map[string]any{
		"debug_health_check":   {},
		"debug_list_streams":   {},
		"debug_get_snapshot":   {"stream": "redux"},
		"debug_query_events":   {"stream": "redux"},
		"debug_get_state_path": {"path": "who"},
		"debug_diff_snapshots": {"stream": "redux", "base_seq": 1, "target_seq": 2},
	}
	for tool, args := range toolArgs {
		for ref, want := range map[string]map[string]any{"nope": unknown, "shopapp": ambiguous} {
			args["session"] = ref
			res, isError := e.callTool(tool, args)
			if !isError {
				t.Errorf("%s with session %q succeeded: %s", tool, ref, res)
				continue
			}
			code, details, suggestion := decodeToolError(t, res)
			if code != codeInvalidParams || suggestion == "" {
				t.Errorf("%s with session %q: %s, want INVALID_PARAMS with a suggestion", tool, ref, res)
			}
			if diff := cmp.Diff(details, want); diff != "" {
				t.Errorf("%s with session %q: details (-got +want):\n%s", tool, ref, diff)
			}
		}
	}
	wantResult(t, "by id", e.mustCall("debug_get_state_path", map[string]any{"path": "who", "session": "a-1"}),
		`{"session":{"id":"a-1","app":"ShopApp"},"path":"who","value":"a"}`)

	for _, tc := range []struct {
		uri     string
		code    float64
		details map[string]any
	}{
		{uriRedux + "?session=nope", -32602, unknown},
		{uriSession + "?session=shopapp", -32602, ambiguous},
		{"debug://mmkv/auth?session=nope", -32602, unknown},
		{uriRedux + "?foo=bar", -32002, nil},
		{uriRedux + "?session=a-1&foo=bar", -32002, nil},
		{uriRedux + "?session=a-1&session=b-1", -32002, nil},
		{uriRedux + "?session=", -32002, nil},
	} {
		_, errObj := readResource(t, e, tc.uri)
		if errObj == nil {
			t.Errorf("read %s succeeded", tc.uri)
			continue
		}
		data, _ := errObj["data"].(map[string]any)
		if errObj["code"] != tc.code || data["uri"] != tc.uri {
			t.Errorf("read %s: %v, want code %v naming the URI", tc.uri, errObj, tc.code)
		}
		if tc.details != nil {
			if data["code"] != codeInvalidParams {
				t.Errorf("read %s: data.code %v, want INVALID_PARAMS", tc.uri, data["code"])
			}
			if diff := cmp.Diff(data["details"], any(tc.details)); diff != "" {
				t.Errorf("read %s: details (-got +want):\n%s", tc.uri, diff)
			}
		}
	}
}

// TestPostMortemSession: an app that disconnects stays listed and keeps
// answering from what the server holds (pushed events, the last snapshot
// fetched), marked live: false; what needs the app is NOT_CONNECTED.
func TestPostMortemSession(t *testing.T) {
	e, url := startSessionsE2E(t)
	app := dialSessionApp(t, url, appHandshake("crash-1", "phone", "ShopApp"),
		appAnswers(`{"cart":{"items":[1,2]},"user":"ann"}`))
	app.push("redux", 1, "action_dispatched", `{"action":{"type":"cart/open"}}`)
	app.push("redux", 2, "state_snapshot", `{"state":{"cart":{"items":[]}}}`)
	app.push("redux", 3, "action_dispatched", `{"action":{"type":"cart/add"}}`)
	app.push("redux", 4, "state_snapshot", `{"state":{"cart":{"items":[1]}}}`)
	app.push("navigation", 1, "route_change", `{"from":null,"to":{"name":"Home"}}`)
	app.sync()
	// Fetched while live: the app answers its current state at seq 5.
	live := e.mustCall("debug_get_snapshot", map[string]any{"stream": "redux"})
	wantResult(t, "live snapshot", live, `{"stream":"redux","seq":5,"timestamp":"2026-11-21T10:00:05.000Z","state":{"cart":{"items":[1,2]},"user":"ann"}}`)

	app.leave()
	var h sessionsHealthOut
	for deadline := time.Now().Add(linkWaitLimit); ; {
		if h = e.sessionsHealth(); len(h.Sessions) == 1 && !h.Sessions[0].Connected {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the session never showed as disconnected: %+v", h)
		}
		time.Sleep(5 * time.Millisecond) // polling with a deadline
	}
	if h.Connected || h.Adapter != nil {
		t.Errorf("health check: connected %v, adapter %v; want false and null", h.Connected, h.Adapter)
	}
	if s := h.Sessions[0]; s.ID != "crash-1" || s.DisconnectedAt == nil {
		t.Errorf("session %+v, want crash-1 with disconnectedAt", s)
	} else if _, err := time.Parse(time.RFC3339, *s.DisconnectedAt); err != nil {
		t.Errorf("disconnectedAt %q: %v", *s.DisconnectedAt, err)
	}

	head := `"session":{"id":"crash-1","app":"ShopApp"},"live":false,`
	ev := func(seq int64, typ, payload string) string { return string(testEvent("redux", seq, typ, payload)) }
	for _, tc := range []struct {
		tool string
		args map[string]any
		want string
	}{
		{"debug_query_events", map[string]any{"stream": "redux"},
			`{` + head + `"events":[` + ev(1, "action_dispatched", `{"action":{"type":"cart/open"}}`) + `,` +
				ev(2, "state_snapshot", `{"state":{"cart":{"items":[]}}}`) + `,` + ev(3, "action_dispatched", `{"action":{"type":"cart/add"}}`) + `,` +
				ev(4, "state_snapshot", `{"state":{"cart":{"items":[1]}}}`) + `],"hasMore":false,"oldestSeq":1,"latestSeq":4}`},
		{"debug_query_events", map[string]any{"stream": "redux", "limit": 1, "event_type": "state_snapshot", "session": "ShopApp"},
			`{` + head + `"events":[` + ev(4, "state_snapshot", `{"state":{"cart":{"items":[1]}}}`) + `],"hasMore":true,"oldestSeq":1,"latestSeq":4}`},
		{"debug_get_snapshot", map[string]any{"stream": "redux"},
			`{` + head + `"stream":"redux","seq":5,"timestamp":"2026-11-21T10:00:05.000Z","state":{"cart":{"items":[1,2]},"user":"ann"}}`},
		{"debug_get_snapshot", map[string]any{"stream": "redux", "scope": "cart.items", "session": "crash-1"},
			`{` + head + `"stream":"redux","seq":5,"timestamp":"2026-11-21T10:00:05.000Z","scope":"cart.items","state":[1,2]}`},
		{"debug_get_state_path", map[string]any{"path": "user"}, `{` + head + `"path":"user","value":"ann"}`},
		{"debug_diff_snapshots", map[string]any{"stream": "redux", "base_seq": 2, "target_seq": 4},
			`{` + head + `"baseSeq":2,"targetSeq":4,"totalChanges":1,"truncated":false,"changes":[{"path":"cart.items.0","type":"added","newValue":1}]}`},
		{"debug_diff_snapshots", map[string]any{"stream": "redux", "base_seq": 4, "target_seq": 5},
			`{` + head + `"baseSeq":4,"targetSeq":5,"totalChanges":2,"truncated":false,"changes":[{"path":"cart.items.1","type":"added","newValue":2},{"path":"user","type":"added","newValue":"ann"}]}`},
		{"debug_list_streams", map[string]any{},
			`{` + head + `"streams":[{"name":"redux","active":true,"eventCount":4,"oldestSeq":1,"latestSeq":4,"hasSnapshot":true},` +
				`{"name":"navigation","active":true,"eventCount":1,"oldestSeq":1,"latestSeq":1,"hasSnapshot":false},` +
				`{"name":"mmkv","active":true,"eventCount":0,"oldestSeq":0,"latestSeq":0,"hasSnapshot":false,"instances":["default","auth"]}]}`},
	} {
		wantResult(t, fmt.Sprintf("%s %v", tc.tool, tc.args), e.mustCall(tc.tool, tc.args), tc.want)
	}

	// A seq the server never held, and a stream it never fetched.
	res, isError := e.callTool("debug_diff_snapshots", map[string]any{"stream": "redux", "base_seq": 2, "target_seq": 3})
	if code, details, _ := decodeToolError(t, res); !isError || code != codeSnapshotNotFound || fmt.Sprint(details["missing"]) != "[target_seq]" {
		t.Errorf("diff with an action's seq: %s, want SNAPSHOT_NOT_FOUND missing target_seq", res)
	}
	res, isError = e.callTool("debug_get_snapshot", map[string]any{"stream": "navigation"})
	code, details, _ := decodeToolError(t, res)
	if !isError || code != codeNotConnected || details["reason"] != linkReasonDisconnected || !strings.Contains(string(res), "crash-1 disconnected at") {
		t.Errorf("snapshot never fetched: %s, want NOT_CONNECTED disconnected naming the session", res)
	}

	// Resources answer from the same buffers.
	if text, errObj := readResource(t, e, uriRedux); errObj != nil || text != `{"cart":{"items":[1,2]},"user":"ann"}` {
		t.Errorf("read %s = %s, %v", uriRedux, text, errObj)
	}
	text, _ := readResource(t, e, uriSession)
	var current map[string]any
	if err := json.Unmarshal([]byte(text), &current); err != nil || current["connected"] != false || current["sessionId"] != "crash-1" || current["disconnectedAt"] == nil {
		t.Errorf("read %s = %s", uriSession, text)
	}
	_, errObj := readResource(t, e, uriNavigation)
	if data, _ := errObj["data"].(map[string]any); errObj["code"] != float64(-32603) || data["code"] != codeNotConnected {
		t.Errorf("read %s: %v, want -32603 NOT_CONNECTED", uriNavigation, errObj)
	}

	// The same device coming back with a new session ends the post-mortem.
	dialSessionApp(t, url, appHandshake("crash-2", "phone", "ShopApp"), appAnswers(`{}`))
	h = e.sessionsHealth()
	if len(h.Sessions) != 1 || h.Sessions[0].ID != "crash-2" || !h.Sessions[0].Connected {
		t.Errorf("sessions after the device came back: %+v, want crash-2 alone", h.Sessions)
	}
	res, isError = e.callTool("debug_query_events", map[string]any{"stream": "redux", "session": "crash-1"})
	if code, _, _ := decodeToolError(t, res); !isError || code != codeInvalidParams {
		t.Errorf("the forgotten session answered: %s", res)
	}
}

// TestSessionEventsReachTheClient: with several apps, the client hears of
// each session coming and going, by session id, and of each change of the
// resource listing that a session's coming brings.
func TestSessionEventsReachTheClient(t *testing.T) {
	e, url := startSessionsE2E(t)
	e.call(1, "logging/setLevel", map[string]any{"level": "info"})
	message := func(level, event, sessionID string) notificationWant {
		return notificationWant{"notifications/message", func(p map[string]any) bool {
			data, _ := p["data"].(map[string]any)
			return p["level"] == level && data["event"] == event && data["sessionId"] == sessionID
		}}
	}
	listChanged := notificationWant{"notifications/resources/list_changed", nil}
	// Each app names an MMKV instance of its own, so that the listing of
	// resources changes whenever the default session does, and only then.
	handshake := func(sessionID, deviceID string) map[string]any {
		return testHandshake(sessionID, hsWith("deviceId", deviceID), hsWith("app", map[string]any{"name": "ShopApp"}),
			hsWith("streams", []any{map[string]any{"name": "mmkv", "active": true, "instances": []any{sessionID}}}))
	}
	listed := func(instance string) {
		t.Helper()
		e.nextID++
		if page, _ := json.Marshal(e.call(e.nextID, "resources/list", nil)); !strings.Contains(string(page), "debug://mmkv/"+instance) {
			t.Errorf("after list_changed the listing is %s, want instance %s", page, instance)
		}
	}
	a := dialSessionApp(t, url, handshake("a-1", "phone"), appAnswers(`{}`))
	e.waitNotifications(message("info", "adapter connected", "a-1"), listChanged)
	listed("a-1")
	dialSessionApp(t, url, handshake("b-1", "tablet"), appAnswers(`{}`))
	e.waitNotifications(message("info", "adapter connected", "b-1"), listChanged)
	listed("b-1")
	a.leave()
	e.waitNotifications(message("warning", "adapter disconnected", "a-1")) // b-1 stays the default: the listing is the same
	dialSessionApp(t, url, handshake("a-2", "phone"), appAnswers(`{}`))
	e.waitNotifications(message("info", "adapter connected", "a-2"), listChanged)
	listed("a-2")
}
