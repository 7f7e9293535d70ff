package main

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coder/websocket"
)

// pluginApp plays a Reactotron app with one state plugin as the real one
// behaves (testdata/reactotron/capture_lifecycle.mjs recorded what it
// answers): it answers the server's frames with recorded frames, and
// records what the real plugin would have thrown on.
type pluginApp struct {
	t      *testing.T
	ws     *websocket.Conn
	done   chan struct{}
	mu     sync.Mutex
	got    []string // frames from the server
	thrown []string // what the real plugin would have thrown on
	// respond answers one server frame; throws says the plugin would throw.
	respond func(typ string, paths []string) (answers []json.RawMessage, throws bool)
}

func dialPluginApp(t *testing.T, url string, respond func(string, []string) ([]json.RawMessage, bool)) *pluginApp {
	t.Helper()
	a := &pluginApp{t: t, ws: dialAppSocket(t, url), done: make(chan struct{}), respond: respond}
	go a.readLoop()
	t.Cleanup(func() {
		a.ws.Close(websocket.StatusNormalClosure, "")
		<-a.done
		if th := a.throws(); len(th) > 0 {
			t.Errorf("the app's plugin would have thrown on: %v", th)
		}
	})
	return a
}

func (a *pluginApp) readLoop() {
	defer close(a.done)
	for {
		_, data, err := a.ws.Read(context.Background())
		if err != nil {
			return
		}
		var f struct {
			Type    string `json:"type"`
			Payload struct {
				Paths []string `json:"paths"`
			} `json:"payload"`
		}
		json.Unmarshal(data, &f)
		a.mu.Lock()
		a.got = append(a.got, string(data))
		answers, throws := a.respond(f.Type, f.Payload.Paths)
		if throws {
			a.thrown = append(a.thrown, string(data))
		}
		a.mu.Unlock()
		for _, ans := range answers {
			a.ws.Write(context.Background(), websocket.MessageText, ans)
		}
	}
}

func (a *pluginApp) send(frame []byte) {
	a.t.Helper()
	if err := a.ws.Write(a.t.Context(), websocket.MessageText, frame); err != nil {
		a.t.Fatalf("send: %v", err)
	}
}

func (a *pluginApp) throws() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]string(nil), a.thrown...)
}

func (a *pluginApp) serverFrames() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]string(nil), a.got...)
}

// lifecycleFrames are the app's recorded frames of a capture_lifecycle
// recording: its intro, and its answers by what they answer.
type lifecycleFrames struct {
	intro   json.RawMessage
	answers map[string]json.RawMessage // by the server frame answered, as recorded
}

// readLifecycle reads the frames of the app named name from a recording:
// the first app frame after a server frame (the probe's restore aside) is
// filed as its answer.
func readLifecycle(t *testing.T, file, name string) lifecycleFrames {
	t.Helper()
	lf := lifecycleFrames{answers: map[string]json.RawMessage{}}
	var in bool
	var last string
	for _, f := range readReactotronCaptured(t, file) {
		switch {
		case f.Dir == "app" && strings.Contains(string(f.Frame), `"type":"client.intro"`):
			in = strings.Contains(string(f.Frame), `"name":"`+name+`"`)
			if in {
				lf.intro = f.Frame
			}
		case !in:
		case f.Dir == "server" && string(f.Frame) != probeRestore:
			last = string(f.Frame) // the probe's own answer follows its restore
		case f.Dir == "app" && last != "":
			lf.answers[last] = f.Frame
			last = "" // an answer is the first app frame after the request
		}
	}
	if lf.intro == nil {
		t.Fatalf("%s holds no app %s", file, name)
	}
	return lf
}

// answer is the recorded answer to a server frame.
func (lf lifecycleFrames) answer(t *testing.T, server string) json.RawMessage {
	t.Helper()
	a, ok := lf.answers[server]
	if !ok {
		t.Fatalf("no recorded answer to %s", server)
	}
	return a
}

const (
	probeOnIntro = `{"type":"state.values.subscribe","payload":{"paths":["*","__devtools_mcp_store_probe__"]}}`
	probeOnRead  = `{"type":"state.values.subscribe","payload":{"paths":["__devtools_mcp_store_probe__"]}}`
	probeRestore = `{"type":"state.values.subscribe","payload":{"paths":[]}}`
	backupAsk    = `{"type":"state.backup.request","payload":{}}`
)

// reactotronReduxReads are the requests reactotron-redux 3.2.1 reads its
// store for unguarded (commandHandler.js).
var reactotronReduxReads = map[string]bool{"state.keys.request": true, "state.values.request": true,
	"state.backup.request": true, "state.action.dispatch": true, "state.restore.request": true}

// startStoreProbeE2E runs the server with a Reactotron bridge whose reads
// wait for the store probe's answer only briefly until storeMade is
// called, so that a read of an app without a store fails at once; after
// it, and for everything answered, the wait is one no loaded machine
// reaches.
func startStoreProbeE2E(t *testing.T) (e *e2e, url string, storeMade func()) {
	t.Helper()
	var made atomic.Bool
	e, url = startBridgeE2EWith(t, time.Minute, func(cfg *config) {
		cfg.Tune.StoreProbe = func() time.Duration {
			if made.Load() {
				return time.Minute
			}
			return 20 * time.Millisecond
		}
	})
	return e, url, func() { made.Store(true) }
}

// waitSessions waits until debug_health_check lists n sessions.
func (e *e2e) waitSessions(n int) {
	e.t.Helper()
	e.waitHealthRaw(func(h map[string]any) bool {
		s, _ := h["sessions"].([]any)
		return len(s) == n
	})
}

// A reactotron-redux app whose store is created after it connects: nothing
// the server sends makes the plugin throw, a read before the store answers
// at once that there is none yet, and the first read after it answers with
// the state.
func TestReactotronReduxStoreCreatedLate(t *testing.T) {
	t.Parallel()
	e, url, storeMade := startStoreProbeE2E(t)
	late := readLifecycle(t, "testdata/reactotron/redux_late.jsonl", "LateReduxApp")
	probed, backedUp := late.answer(t, probeOnRead), late.answer(t, backupAsk)
	var mu sync.Mutex
	created := false
	app := dialPluginApp(t, url, func(typ string, paths []string) ([]json.RawMessage, bool) {
		mu.Lock()
		defer mu.Unlock()
		switch {
		case typ == "state.values.subscribe" && created && len(paths) > 0:
			return []json.RawMessage{probed}, false
		case typ == "state.backup.request" && created:
			return []json.RawMessage{backedUp}, false
		case reactotronReduxReads[typ] && !created:
			return nil, true // TypeError: Cannot read properties of undefined (reading 'getState')
		}
		return nil, false // no store: the plugin sends no empty change
	})
	app.send(late.intro)
	linkWaitFor(t, "the probe on introduction", func() bool { return len(app.serverFrames()) >= 3 })
	e.waitSessions(1) // the probe is sent before the session is registered

	before := e.toolError("debug_get_snapshot", map[string]any{"stream": "redux"})
	if before["code"] != codeStreamUnavailable || before["details"].(map[string]any)["noStoreYet"] != true ||
		!strings.Contains(before["message"].(string), "no store yet") || !strings.Contains(before["suggestion"].(string), "trackMstNode") {
		t.Errorf("a read before the store exists = %v, want STREAM_UNAVAILABLE saying the app has no store yet and what to do", before)
	}
	if got := e.toolError("debug_dispatch_action", map[string]any{"action": map[string]any{"type": "cart/add"}}); got["code"] != codeStreamUnavailable {
		t.Errorf("a dispatch before the store exists = %v, want STREAM_UNAVAILABLE", got)
	}

	mu.Lock()
	created = true
	mu.Unlock()
	storeMade()
	snap := e.toolJSON("debug_get_snapshot", map[string]any{"stream": "redux"})
	if got, _ := json.Marshal(snap["state"]); string(got) != `{"cart":{"items":[],"total":0}}` {
		t.Errorf("the first read after the store exists = %s, want the store's state", got)
	}
}

// A reactotron-mst app that tracks its tree after it connects: the first
// read after trackMstNode answers with the tree at once (no answer goes to
// a request nobody waits for), and one before it says there is no store.
func TestReactotronMSTTrackedLate(t *testing.T) {
	t.Parallel()
	e, url, storeMade := startStoreProbeE2E(t)
	late := readLifecycle(t, "testdata/reactotron/mst_late.jsonl", "LateMstApp")
	probed, backedUp := late.answer(t, probeOnRead), late.answer(t, backupAsk)
	var mu sync.Mutex
	tracked := false
	app := dialPluginApp(t, url, func(typ string, paths []string) ([]json.RawMessage, bool) {
		mu.Lock()
		defer mu.Unlock()
		switch {
		case !tracked: // reactotron-mst answers nothing until trackMstNode
		case typ == "state.values.subscribe" && len(paths) > 0:
			return []json.RawMessage{probed}, false
		case typ == "state.backup.request":
			return []json.RawMessage{backedUp}, false
		}
		return nil, false
	})
	app.send(late.intro)
	linkWaitFor(t, "the probe on introduction", func() bool { return len(app.serverFrames()) >= 3 })
	e.waitSessions(1) // the probe is sent before the session is registered
	if got := e.toolError("debug_get_snapshot", map[string]any{"stream": "redux"}); got["details"].(map[string]any)["noStoreYet"] != true {
		t.Errorf("a read before trackMstNode = %v, want the no-store error", got)
	}
	mu.Lock()
	tracked = true
	mu.Unlock()
	storeMade()
	snap := e.toolJSON("debug_get_snapshot", map[string]any{"stream": "redux"})
	if got, _ := json.Marshal(snap["state"]); string(got) != `{"todos":[{"done":false,"title":"milk"}]}` {
		t.Errorf("the first read after trackMstNode = %s, want the tree", got)
	}
	// Only the answered read asked for a backup: no request was left
	// waiting to take its answer.
	if n := strings.Count(strings.Join(app.serverFrames(), "\n"), "state.backup.request"); n != 1 {
		t.Errorf("the server sent %d backups, want the one the answered read asked", n)
	}
}

// An app whose store exists before it connects: the probe on introduction
// shows it, and a read goes straight to the state.
func TestReactotronStoreKnownOnIntro(t *testing.T) {
	t.Parallel()
	e, url := startBridgeE2EWith(t, time.Minute)
	ready := readLifecycle(t, "testdata/reactotron/redux_late.jsonl", "ReadyReduxApp")
	probed := ready.answer(t, probeOnIntro)
	app := dialPluginApp(t, url, func(typ string, paths []string) ([]json.RawMessage, bool) {
		switch {
		case typ == "state.values.subscribe" && len(paths) == 2:
			// A log behind the answer: once it is recorded, so is the answer.
			return []json.RawMessage{probed, []byte(`{"type":"log","payload":{"level":"debug","message":"after the probe"}}`)}, false
		case typ == "state.backup.request":
			return []json.RawMessage{[]byte(`{"type":"state.backup.response","payload":{"state":{"cart":{"items":["B-2"]}}}}`)}, false
		}
		return nil, false
	})
	app.send(ready.intro)
	e.waitEvents("console", 1)
	snap := e.toolJSON("debug_get_snapshot", map[string]any{"stream": "redux"})
	if got, _ := json.Marshal(snap["state"]); string(got) != `{"cart":{"items":["B-2"]}}` {
		t.Errorf("state = %s", got)
	}
	for _, f := range app.serverFrames() {
		if f == probeOnRead {
			t.Errorf("the server probed again on read, though the probe on introduction showed the store")
		}
	}
	// The whole state the probe brought under "" is no named store.
	if h := e.toolJSON("debug_health_check", nil); strings.Contains(mustJSON(t, h), `"stores"`) {
		t.Errorf("the probe's whole state became a stores stream: %s", mustJSON(t, h))
	}
}

// waitStoreKnown waits until the bridge's connection of clientID knows
// the app has a store: the answer to its probe has been handled.
func waitStoreKnown(t *testing.T, b *reactotronBridge, clientID string) {
	t.Helper()
	linkWaitFor(t, "the probe's answer", func() bool {
		for _, c := range b.host.open() {
			c.mu.Lock()
			id, known := c.clientID, isClosed(c.storeShown)
			c.mu.Unlock()
			if id == clientID && known {
				return true
			}
		}
		return false
	})
}
