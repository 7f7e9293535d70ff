package main

// metro_standin_test.go is Metro as the tests need it: /json/list, /status
// and the inspector proxy's debugger socket, which checks the Origin as
// React Native 0.85 does, records every frame a debugger sends, answers
// each request, and sends the page's CDP frames when the test says so
// (recorded frames from testdata/metro/).

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"
)

// metroStandIn is Metro with its inspector proxy.
type metroStandIn struct {
	t   testing.TB
	srv *httptest.Server

	mu            sync.Mutex
	pages         []map[string]any // the list, in order
	listBody      []byte           // when set, /json/list answers it instead
	down          bool             // /json/list drops the connection unanswered
	lists         int              // /json/list requests answered
	dials         map[string]int   // debugger upgrades by page id
	refused       int              // upgrades refused for their Origin
	sockets       map[string][]*websocket.Conn
	methods       []string // every method a debugger sent, in order
	closeOnAttach map[string]bool
	answerEnable  string                   // "error": Network.enable is refused, as pages without network inspection do
	gates         map[string]chan struct{} // a debugger upgrade of the page waits for its gate to close, or its dialler to go
	dialling      chan string              // each gated page as its upgrade starts waiting
	ended         map[string]int           // debugger upgrades of the page whose handler has returned
	noPong        bool                     // the debugger sockets answer no ping, as a frozen device's
	wg            sync.WaitGroup
}

func startMetroStandIn(t testing.TB) *metroStandIn {
	t.Helper()
	m := &metroStandIn{t: t, dials: map[string]int{}, sockets: map[string][]*websocket.Conn{}, closeOnAttach: map[string]bool{},
		gates: map[string]chan struct{}{}, dialling: make(chan string, 16), ended: map[string]int{}}
	mux := http.NewServeMux()
	mux.HandleFunc("/json/list", m.serveList)
	mux.HandleFunc("/status", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-React-Native-Project-Root", "/work/shop")
		fmt.Fprint(w, "packager-status:running")
	})
	mux.HandleFunc("/inspector/debug", m.serveDebugger)
	m.srv = httptest.NewServer(mux)
	t.Cleanup(func() {
		m.mu.Lock()
		for _, list := range m.sockets {
			for _, ws := range list {
				ws.CloseNow()
			}
		}
		m.mu.Unlock()
		m.srv.CloseClientConnections()
		m.srv.Close()
		m.wg.Wait()
	})
	return m
}

// standInPage is a /json/list entry as dev-middleware writes it. Its
// debugger URL names another host, as the proxy does when a device
// reached it through 10.0.2.2.
func standInPage(id, app, device, logicalDevice string, multi bool) map[string]any {
	return map[string]any{
		"id": id, "title": app + " (" + device + ")", "appId": app, "description": app, "deviceName": device, "type": "node",
		"webSocketDebuggerUrl": "ws://10.0.2.2:8081/inspector/debug?device=" + logicalDevice + "&page=" + id,
		"devtoolsFrontendUrl":  "devtools://devtools/bundled/js_app.html",
		"reactNative": map[string]any{"logicalDeviceId": logicalDevice,
			"capabilities": map[string]any{"nativePageReloads": true, "supportsMultipleDebuggers": multi}},
	}
}

func (m *metroStandIn) setPages(pages ...map[string]any) {
	m.mu.Lock()
	m.pages = pages
	m.mu.Unlock()
}

func (m *metroStandIn) serveList(w http.ResponseWriter, r *http.Request) {
	m.mu.Lock()
	down, body := m.down, m.listBody
	if body == nil {
		body, _ = json.Marshal(m.pages)
		if m.pages == nil {
			body = []byte("[]")
		}
	}
	m.lists++
	m.mu.Unlock()
	if down {
		if hj, ok := w.(http.Hijacker); ok {
			if c, _, err := hj.Hijack(); err == nil {
				c.Close()
				return
			}
		}
	}
	w.Header().Set("Content-Type", "application/json")
	w.Write(body)
}

func (m *metroStandIn) serveDebugger(w http.ResponseWriter, r *http.Request) {
	if r.Header.Get("Origin") != m.srv.URL {
		m.mu.Lock()
		m.refused++
		m.mu.Unlock()
		http.Error(w, "Unauthorized: bad Origin", http.StatusUnauthorized)
		return
	}
	page := r.URL.Query().Get("page")
	defer func() {
		m.mu.Lock()
		m.ended[page]++
		m.mu.Unlock()
	}()
	m.mu.Lock()
	gate := m.gates[page]
	m.mu.Unlock()
	if gate != nil {
		m.dialling <- page
		select {
		case <-gate:
		case <-r.Context().Done():
			return
		}
	}
	ws, err := websocket.Accept(w, r, &websocket.AcceptOptions{OnPingReceived: func(context.Context, []byte) bool {
		m.mu.Lock()
		defer m.mu.Unlock()
		return !m.noPong
	}})
	if err != nil {
		return
	}
	ws.SetReadLimit(1 << 20)
	m.mu.Lock()
	m.dials[page]++
	quick := m.closeOnAttach[page]
	if !quick {
		m.sockets[page] = append(m.sockets[page], ws)
	}
	m.wg.Add(1)
	m.mu.Unlock()
	defer m.wg.Done()
	if quick {
		ws.Close(websocket.StatusInternalError, "[CONNECTION_LOST] the device went away")
		return
	}
	for {
		_, data, err := ws.Read(context.Background())
		if err != nil {
			return
		}
		var req struct {
			ID     int64  `json:"id"`
			Method string `json:"method"`
		}
		json.Unmarshal(data, &req)
		m.mu.Lock()
		m.methods = append(m.methods, req.Method)
		refuse := m.answerEnable == "error" && req.Method == "Network.enable"
		m.mu.Unlock()
		answer := fmt.Sprintf(`{"id":%d,"result":{}}`, req.ID)
		if refuse {
			answer = fmt.Sprintf(`{"id":%d,"error":{"code":-32601,"message":"Unsupported method 'Network.enable'"}}`, req.ID)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		err = ws.Write(ctx, websocket.MessageText, []byte(answer))
		cancel()
		if err != nil {
			return
		}
	}
}

// push sends frames to every debugger of page.
func (m *metroStandIn) push(page string, frames ...[]byte) {
	m.t.Helper()
	m.pushEach(page, len(frames), func(i int) []byte { return frames[i] })
}

// pushEach sends frame(i) for i from 0 to n-1 to every debugger of page.
func (m *metroStandIn) pushEach(page string, n int, frame func(i int) []byte) {
	m.t.Helper()
	var sockets []*websocket.Conn
	waitUntil(m.t, "a debugger on page "+page, func() bool {
		m.mu.Lock()
		defer m.mu.Unlock()
		sockets = append([]*websocket.Conn(nil), m.sockets[page]...)
		return len(sockets) > 0
	})
	// No deadline: a stuck write ends when the test's cleanup closes the
	// socket, and a write without one costs the stand-in no timer.
	for _, ws := range sockets {
		for i := range n {
			if err := ws.Write(context.Background(), websocket.MessageText, frame(i)); err != nil {
				m.t.Fatalf("push to page %s: %v", page, err)
			}
		}
	}
}

// closePage closes every debugger of page with code and reason, as the
// proxy does. It waits for one: the link can see its dial succeed before
// the stand-in has recorded the socket it accepted.
func (m *metroStandIn) closePage(page string, code websocket.StatusCode, reason string) {
	m.t.Helper()
	// The debugger may see its upgrade answered before the stand-in has
	// recorded the socket.
	var sockets []*websocket.Conn
	waitUntil(m.t, "a debugger on page "+page, func() bool {
		m.mu.Lock()
		defer m.mu.Unlock()
		sockets = m.sockets[page]
		if len(sockets) > 0 {
			delete(m.sockets, page)
		}
		return len(sockets) > 0
	})
	for _, ws := range sockets {
		ws.Close(code, reason)
	}
}

// set changes the stand-in under its lock.
func (m *metroStandIn) set(f func(m *metroStandIn)) {
	m.mu.Lock()
	f(m)
	m.mu.Unlock()
}

func (m *metroStandIn) sentMethods() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]string(nil), m.methods...)
}

func (m *metroStandIn) dialsOf(page string) int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.dials[page]
}

// endedOf is how many debugger upgrades of page have been served to their end.
func (m *metroStandIn) endedOf(page string) int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.ended[page]
}

// nextDialling is the next gated page whose upgrade waits at its gate.
func (m *metroStandIn) nextDialling() string {
	m.t.Helper()
	select {
	case page := <-m.dialling:
		return page
	case <-time.After(30 * time.Second):
		m.t.Fatal("no debugger upgrade reached its gate")
		return ""
	}
}

func (m *metroStandIn) listCount() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.lists
}

// waitPolls returns once the link has read the list n more times.
func (m *metroStandIn) waitPolls(n int) {
	m.t.Helper()
	target := m.listCount() + n
	waitUntil(m.t, fmt.Sprintf("%d more list reads", n), func() bool { return m.listCount() >= target })
}

// readMetroFrames reads recorded CDP frames, one a line.
func readMetroFrames(t testing.TB, path string) [][]byte {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var frames [][]byte
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		if line := bytes.TrimSpace(sc.Bytes()); len(line) > 0 {
			frames = append(frames, bytes.Clone(line))
		}
	}
	return frames
}

// waitUntil polls cond until it holds, failing the test after a deadline.
func waitUntil(t testing.TB, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); !cond(); {
		if time.Now().After(deadline) {
			t.Fatalf("never: %s", what)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// startMetroLink runs a Metro link against m with a registry of its own
// and fast polls, until the test ends.
func startMetroLink(t *testing.T, m *metroStandIn, tweak func(*config), linkOpts ...func(*metroLink)) (*metroLink, *sessionRegistry) {
	t.Helper()
	return startMetroLinkAt(t, m.srv.URL, tweak, linkOpts...)
}

// startMetroLinkAt is startMetroLink against the dev server at metroURL.
func startMetroLinkAt(t *testing.T, metroURL string, tweak func(*config), linkOpts ...func(*metroLink)) (*metroLink, *sessionRegistry) {
	t.Helper()
	cfg := testConfig(t)
	cfg.MetroURL = metroURL
	if tweak != nil {
		tweak(&cfg)
	}
	reg := newSessionRegistry(cfg, nil, &linkEventQueue{wake: make(chan struct{}, 1)})
	link := newMetroLink(cfg, slog.New(slog.DiscardHandler), reg)
	link.upEvery, link.downEvery = 5*time.Millisecond, 5*time.Millisecond
	link.minBackoff, link.maxBackoff = time.Hour, time.Hour // a backoff lasts the test: it is what is checked
	for _, opt := range linkOpts {
		opt(link)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		link.run(ctx)
	}()
	t.Cleanup(func() {
		cancel()
		<-done
	})
	return link, reg
}

// pageStatus is the link's status of page id, and whether it is listed.
func pageStatus(link *metroLink, id string) (metroPageStatus, bool) {
	for _, p := range link.status().Pages {
		if p.ID == id {
			return p, true
		}
	}
	return metroPageStatus{}, false
}

// sessionEvents is what session id holds of stream, via events.query.
func sessionEvents(t *testing.T, reg *sessionRegistry, id, stream string) []map[string]any {
	t.Helper()
	return sessionQuery(t, reg, id, eventsParams{Stream: stream, Limit: 1000})
}

// sessionQuery is session id's answer to events.query with params.
func sessionQuery(t *testing.T, reg *sessionRegistry, id string, params eventsParams) []map[string]any {
	t.Helper()
	s, err := reg.find(id)
	if err != nil || s == nil {
		t.Fatalf("session %s: %v", id, err)
	}
	raw, err := s.request(t.Context(), "events.query", params)
	if err != nil {
		t.Fatal(err)
	}
	var page struct {
		Events []map[string]any `json:"events"`
	}
	if err := json.Unmarshal(raw, &page); err != nil {
		t.Fatal(err)
	}
	return page.Events
}

// messages lists the console messages of events.
func messages(events []map[string]any) []string {
	var out []string
	for _, ev := range events {
		p, _ := ev["payload"].(map[string]any)
		msg, _ := p["message"].(string)
		out = append(out, msg)
	}
	return out
}

// hasMessage reports whether a console message contains text.
func hasMessage(events []map[string]any, text string) bool {
	for _, m := range messages(events) {
		if strings.Contains(m, text) {
			return true
		}
	}
	return false
}
