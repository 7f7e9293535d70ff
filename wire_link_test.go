package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/google/go-cmp/cmp"
)

// linkWaitLimit bounds every wait in these tests; nothing should take long,
// but a loaded machine running -race can be slow.
const linkWaitLimit = 30 * time.Second

// linkHarness is an adapterLink running on a real loopback listener.
type linkHarness struct {
	link   *adapterLink
	addr   string
	events *linkEventRecorder
	logs   *linkLogBuffer
	stop   func() error // cancels run and waits for it to return; idempotent
}

func linkTestConfig() config {
	return config{
		WSHost:         "127.0.0.1",
		WSPort:         0,
		RequestTimeout: time.Minute, // tests that want a timeout set a short one
		MaxPayloadSize: 524288,
		MaxResultBytes: 100000,
	}
}

// startLinkHarness runs a link on 127.0.0.1:0. configure edits the config, tune the
// link's tunables before run; either may be nil.
func startLinkHarness(t *testing.T, configure func(*config), tune func(*adapterLink)) *linkHarness {
	t.Helper()
	cfg := linkTestConfig()
	if configure != nil {
		configure(&cfg)
	}
	logs := &linkLogBuffer{}
	logger := slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	events := &linkEventRecorder{}
	l := newTestLink(cfg, logger, events.notify)
	// Generous, so that a loaded machine running -race still sees close
	// codes; tests that want a short one set it.
	l.closeTimeout = 5 * time.Second
	if tune != nil {
		tune(l)
	}
	ctx, cancel := context.WithCancel(context.Background())
	runErr := make(chan error, 1)
	go func() { runErr <- l.run(ctx) }()
	var once sync.Once
	var stopErr error
	h := &linkHarness{link: l, events: events, logs: logs}
	h.stop = func() error {
		once.Do(func() {
			cancel()
			select {
			case stopErr = <-runErr:
			case <-time.After(linkWaitLimit):
				stopErr = errors.New("run did not return after its context ended")
			}
		})
		return stopErr
	}
	t.Cleanup(func() {
		if err := h.stop(); err != nil {
			t.Errorf("run: %v", err)
		}
	})
	addrCtx, cancelAddr := context.WithTimeout(t.Context(), linkWaitLimit)
	defer cancelAddr()
	addr, err := l.addr(addrCtx)
	if err != nil {
		t.Fatalf("addr: %v", err)
	}
	h.addr = addr
	return h
}

func (h *linkHarness) port() string {
	_, port, _ := net.SplitHostPort(h.addr)
	return port
}

// wireTestAdapter is the adapter side of a connection, driven by the test.
type wireTestAdapter struct {
	t  *testing.T
	ws *websocket.Conn
}

func (h *linkHarness) dial(t *testing.T, opts *websocket.DialOptions) *wireTestAdapter {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), linkWaitLimit)
	defer cancel()
	ws, resp, err := websocket.Dial(ctx, "ws://"+h.addr+"/", opts)
	if err != nil {
		status := 0
		if resp != nil {
			status = resp.StatusCode
		}
		t.Fatalf("dial: %v (HTTP %d)", err, status)
	}
	t.Cleanup(func() { ws.CloseNow() })
	return &wireTestAdapter{t: t, ws: ws}
}

// connect dials and completes a valid handshake for sessionID.
func (h *linkHarness) connect(t *testing.T, sessionID string) *wireTestAdapter {
	t.Helper()
	a := h.dial(t, nil)
	a.send(testHandshake(sessionID))
	if got := a.recv(); got["type"] != "handshake_ack" {
		t.Fatalf("handshake answer = %v, want a handshake_ack", got)
	}
	linkWaitFor(t, "adapter "+sessionID+" to be live", func() bool {
		s := h.link.status()
		return s.Connected && s.Adapter.SessionID == sessionID
	})
	return a
}

func (a *wireTestAdapter) sendText(s string) {
	a.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), linkWaitLimit)
	defer cancel()
	if err := a.ws.Write(ctx, websocket.MessageText, []byte(s)); err != nil {
		a.t.Fatalf("write: %v", err)
	}
}

func (a *wireTestAdapter) sendBinary(b []byte) {
	a.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), linkWaitLimit)
	defer cancel()
	if err := a.ws.Write(ctx, websocket.MessageBinary, b); err != nil {
		a.t.Fatalf("write: %v", err)
	}
}

func (a *wireTestAdapter) send(v any) {
	a.t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		a.t.Fatal(err)
	}
	a.sendText(string(b))
}

func (a *wireTestAdapter) read() ([]byte, error) {
	ctx, cancel := context.WithTimeout(context.Background(), linkWaitLimit)
	defer cancel()
	_, b, err := a.ws.Read(ctx)
	return b, err
}

// recv reads one message as a JSON object.
func (a *wireTestAdapter) recv() map[string]any {
	a.t.Helper()
	b, err := a.read()
	if err != nil {
		a.t.Fatalf("read: %v", err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		a.t.Fatalf("server sent %q: %v", b, err)
	}
	return m
}

// wireTestRequest is a request as the adapter sees it.
type wireTestRequest struct {
	Type, ID, Method string
	Params           json.RawMessage
}

func (a *wireTestAdapter) recvRequest() wireTestRequest {
	a.t.Helper()
	b, err := a.read()
	if err != nil {
		a.t.Fatalf("read: %v", err)
	}
	var r wireTestRequest
	if err := json.Unmarshal(b, &r); err != nil || r.Type != "request" || r.ID == "" {
		a.t.Fatalf("got %s, want a request", b)
	}
	return r
}

func (a *wireTestAdapter) respond(id string, result any) {
	a.t.Helper()
	a.send(map[string]any{"type": "response", "id": id, "result": result})
}

// expectClose reads until the connection ends and checks the close code.
func (a *wireTestAdapter) expectClose(code websocket.StatusCode) {
	a.t.Helper()
	for {
		b, err := a.read()
		if err == nil {
			a.t.Logf("message before close: %s", b)
			continue
		}
		if got := websocket.CloseStatus(err); got != code {
			a.t.Fatalf("connection ended with %v (close code %d), want close code %d", err, got, code)
		}
		return
	}
}

// linkEventRecorder is a notify callback that keeps what it is told.
type linkEventRecorder struct {
	mu     sync.Mutex
	events []linkEvent
}

func (r *linkEventRecorder) notify(ev linkEvent) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, ev)
}

func (r *linkEventRecorder) all() []linkEvent {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]linkEvent(nil), r.events...)
}

func (r *linkEventRecorder) waitFor(t *testing.T, want []linkEvent) {
	t.Helper()
	deadline := time.Now().Add(linkWaitLimit)
	for {
		got := r.all()
		if cmp.Equal(got, want) {
			return
		}
		if time.Now().After(deadline) || len(got) > len(want) {
			t.Fatalf("events mismatch (-got +want):\n%s", cmp.Diff(got, want))
		}
		time.Sleep(time.Millisecond)
	}
}

// linkLogBuffer is a log sink safe for concurrent writers.
type linkLogBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *linkLogBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *linkLogBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// linkWaitFor polls cond until it holds, failing the test after linkWaitLimit.
func linkWaitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(linkWaitLimit)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

type linkOutcome struct {
	result json.RawMessage
	err    error
}

func requestInBackground(ctx context.Context, l *adapterLink, method string, params any) <-chan linkOutcome {
	ch := make(chan linkOutcome, 1)
	go func() {
		r, err := l.request(ctx, method, params)
		ch <- linkOutcome{r, err}
	}()
	return ch
}

func awaitOutcome(t *testing.T, ch <-chan linkOutcome) linkOutcome {
	t.Helper()
	select {
	case o := <-ch:
		return o
	case <-time.After(linkWaitLimit):
		t.Fatal("request did not return")
		return linkOutcome{}
	}
}

// linkNormJSON decodes JSON text, or encodes then decodes a value, for cmp.
func linkNormJSON(t *testing.T, v any) any {
	t.Helper()
	b, ok := v.([]byte)
	if raw, isRaw := v.(json.RawMessage); isRaw {
		b, ok = raw, true
	}
	if !ok {
		var err error
		if b, err = json.Marshal(v); err != nil {
			t.Fatal(err)
		}
	}
	var out any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatalf("%s: %v", b, err)
	}
	return out
}

// wantLinkToolError checks that err is a *toolError with code and, unless
// details is nil, details that encode to the same JSON.
func wantLinkToolError(t *testing.T, err error, code string, details any) *toolError {
	t.Helper()
	te := toolErrorOf(err)
	if te == nil {
		t.Fatalf("error = %v (%T), want a %s tool error", err, err, code)
	}
	if te.Code != code {
		t.Fatalf("error code = %s (%q), want %s", te.Code, te.Message, code)
	}
	if details != nil {
		if diff := cmp.Diff(linkNormJSON(t, te.Details), linkNormJSON(t, details)); diff != "" {
			t.Errorf("%s details mismatch (-got +want):\n%s", code, diff)
		}
	}
	return te
}

func testHandshake(sessionID string, mods ...func(map[string]any)) map[string]any {
	m := map[string]any{
		"type":            "handshake",
		"protocolVersion": 1,
		"sessionId":       sessionID,
		"adapterVersion":  "0.3.1",
		"startedAt":       "2026-11-21T10:00:00.000Z",
		"app":             map[string]any{"name": "ShopApp", "version": "2.4.0"},
		"device":          map[string]any{"platform": "ios", "isEmulator": true},
		"streams": []any{
			map[string]any{"name": "redux", "active": true},
			map[string]any{"name": "navigation", "active": true},
			map[string]any{"name": "mmkv", "active": true, "instances": []any{"default", "auth"}},
		},
	}
	for _, mod := range mods {
		mod(m)
	}
	return m
}

func hsWith(key string, value any) func(map[string]any) {
	return func(m map[string]any) { m[key] = value }
}

func hsWithout(key string) func(map[string]any) {
	return func(m map[string]any) { delete(m, key) }
}

func hsStreams(streams ...any) func(map[string]any) { return hsWith("streams", streams) }

func TestReplacement(t *testing.T) {
	t.Parallel()
	h := startLinkHarness(t, nil, nil)
	first := h.connect(t, "first")
	pending := requestInBackground(t.Context(), h.link, "snapshot.get", map[string]any{"stream": "redux"})
	first.recvRequest()

	second := h.connect(t, "second")
	o := awaitOutcome(t, pending)
	wantLinkToolError(t, o.err, codeNotConnected, linkNotConnectedDetails{Reason: linkReasonReplaced})
	first.expectClose(4000)
	h.events.waitFor(t, []linkEvent{
		{Kind: linkConnected, SessionID: "first"},
		{Kind: linkDisconnected, SessionID: "first", Reason: "replaced"},
		{Kind: linkConnected, SessionID: "second", Replaced: "first"},
	})

	ch := requestInBackground(t.Context(), h.link, "streams.list", nil)
	req := second.recvRequest()
	second.respond(req.ID, "from second")
	if o := awaitOutcome(t, ch); o.err != nil || string(o.result) != `"from second"` {
		t.Errorf("request after replacement = %s, %v", o.result, o.err)
	}
	if !strings.Contains(h.logs.String(), "adapter replaced by a newer connection") {
		t.Errorf("no log line for the replacement in:\n%s", h.logs)
	}
}

func TestSimultaneousHandshakes(t *testing.T) {
	t.Parallel()
	h := startLinkHarness(t, nil, nil)
	for round := range 20 {
		names := [2]string{fmt.Sprintf("r%d-a", round), fmt.Sprintf("r%d-b", round)}
		adapters := [2]*wireTestAdapter{h.dial(t, nil), h.dial(t, nil)}
		var wg sync.WaitGroup
		start := make(chan struct{})
		for i, a := range adapters {
			wg.Go(func() {
				<-start
				b, _ := json.Marshal(testHandshake(names[i]))
				if err := a.ws.Write(t.Context(), websocket.MessageText, b); err != nil {
					t.Errorf("write: %v", err)
				}
			})
		}
		close(start)
		wg.Wait()
		// Each adapter reads its ack, then its next message or close.
		type next struct {
			i    int
			msg  []byte
			code websocket.StatusCode
		}
		nexts := make(chan next, 2)
		for i, a := range adapters {
			go func() {
				if b, err := a.read(); err != nil || !bytes.Contains(b, []byte("handshake_ack")) {
					t.Errorf("adapter %d: got %s, %v; want an ack", i, b, err)
				}
				b, err := a.read()
				nexts <- next{i, b, websocket.CloseStatus(err)}
			}()
		}
		var loser next
		select {
		case loser = <-nexts:
		case <-time.After(linkWaitLimit):
			t.Fatal("neither adapter was replaced")
		}
		if loser.code != 4000 {
			t.Fatalf("adapter %d got %s (close code %d), want close code 4000", loser.i, loser.msg, loser.code)
		}
		winner := 1 - loser.i
		if s := h.link.status(); !s.Connected || s.Adapter.SessionID != names[winner] {
			t.Fatalf("status = %+v, want %s live", s, names[winner])
		}
		ch := requestInBackground(t.Context(), h.link, "streams.list", nil)
		w := <-nexts
		var req wireTestRequest
		if err := json.Unmarshal(w.msg, &req); err != nil || w.i != winner || req.Type != "request" {
			t.Fatalf("winner got %s (close code %d), want the request", w.msg, w.code)
		}
		adapters[winner].respond(req.ID, round)
		if o := awaitOutcome(t, ch); o.err != nil || string(o.result) != strconv.Itoa(round) {
			t.Fatalf("request = %s, %v", o.result, o.err)
		}
	}
}

func TestShutdown(t *testing.T) {
	t.Parallel()
	h := startLinkHarness(t, nil, func(l *adapterLink) { l.closeTimeout = time.Second })
	a := h.connect(t, "s")
	// One more connection that never reads, so never answers the close.
	deaf := h.dial(t, nil)
	ch := requestInBackground(t.Context(), h.link, "m", nil)
	a.recvRequest()
	closed := make(chan websocket.StatusCode, 1)
	go func() {
		_, err := a.read()
		closed <- websocket.CloseStatus(err)
	}()
	if err := h.stop(); err != nil {
		t.Fatal(err)
	}
	wantLinkToolError(t, awaitOutcome(t, ch).err, codeNotConnected, linkNotConnectedDetails{Reason: linkReasonDisconnected})
	if code := <-closed; code != websocket.StatusGoingAway {
		t.Errorf("adapter close code = %d, want 1001", code)
	}
	// run returned only after every event was delivered.
	if diff := cmp.Diff(h.events.all(), []linkEvent{
		{Kind: linkConnected, SessionID: "s"},
		{Kind: linkDisconnected, SessionID: "s", Reason: "shutdown"},
	}); diff != "" {
		t.Errorf("events (-got +want):\n%s", diff)
	}
	if s := h.link.status(); s.Listening || s.Connected || s.Reason != linkReasonNotListening {
		t.Errorf("status after run = %+v", s)
	}
	_ = deaf
}

func TestPortInUse(t *testing.T) {
	t.Parallel()
	holder, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Close()
	_, portStr, _ := net.SplitHostPort(holder.Addr().String())
	port, _ := strconv.Atoi(portStr)

	logs := &linkLogBuffer{}
	cfg := linkTestConfig()
	cfg.WSPort = port
	l := newTestLink(cfg, slog.New(slog.NewTextHandler(logs, nil)), nil)
	l.bindRetry = 5 * time.Millisecond
	ctx, cancel := context.WithCancel(t.Context())
	runErr := make(chan error, 1)
	go func() { runErr <- l.run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-runErr; err != nil {
			t.Errorf("run: %v", err)
		}
	})

	linkWaitFor(t, "the bind to fail", func() bool { return l.status().ListenError != "" })
	s := l.status()
	wantURL := "ws://127.0.0.1:" + portStr + "/"
	if s.Listening || s.Connected || s.Reason != linkReasonNotListening || s.WSURL != wantURL ||
		!strings.Contains(s.ListenError, "address already in use") {
		t.Errorf("status = %+v; want not listening, address in use", s)
	}
	_, err = l.request(t.Context(), "m", nil)
	te := wantLinkToolError(t, err, codeNotConnected, linkNotConnectedDetails{Reason: linkReasonNotListening, ListenError: s.ListenError})
	if !strings.Contains(te.Message, "address already in use") {
		t.Errorf("message %q does not say why", te.Message)
	}
	linkWaitFor(t, "a retry", func() bool { return strings.Contains(logs.String(), "cannot listen for app adapters") })

	holder.Close()
	addrCtx, cancelAddr := context.WithTimeout(t.Context(), linkWaitLimit)
	defer cancelAddr()
	addr, err := l.addr(addrCtx)
	if err != nil {
		t.Fatal(err)
	}
	if addr != "127.0.0.1:"+portStr {
		t.Errorf("addr = %s, want the configured port %s", addr, portStr)
	}
	if s := l.status(); !s.Listening || s.ListenError != "" || s.Reason != linkReasonNeverConnected || s.WSURL != wantURL {
		t.Errorf("status after takeover = %+v", s)
	}
}

func TestNonLoopbackWithoutTokenWarns(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		host, token string
		warn        bool
	}{
		{"0.0.0.0", "", true},
		{"0.0.0.0", "s3cret", false},
		{"127.0.0.1", "", false},
		{"localhost", "", false},
	} {
		h := startLinkHarness(t, func(c *config) { c.WSHost, c.WSToken = tt.host, tt.token }, nil)
		if err := h.stop(); err != nil {
			t.Fatal(err)
		}
		if got := strings.Contains(h.logs.String(), "WS_HOST is not a loopback address and WS_TOKEN is empty"); got != tt.warn {
			t.Errorf("host %s token %q: warned = %v, want %v", tt.host, tt.token, got, tt.warn)
		}
	}
}

// TestConnectDisconnectCycles churns connections with requests in flight and
// checks that nothing the link started outlives run.
func TestConnectDisconnectCycles(t *testing.T) {
	transport := &http.Transport{}
	defer transport.CloseIdleConnections()
	client := &http.Client{Transport: transport}
	before := runtime.NumGoroutine()

	h := startLinkHarness(t, nil, func(l *adapterLink) {
		l.pingInterval = time.Millisecond // pings race with everything else
	})
	const cycles = 1000
	for i := range cycles {
		ws, _, err := websocket.Dial(t.Context(), "ws://"+h.addr+"/", &websocket.DialOptions{HTTPClient: client})
		if err != nil {
			t.Fatalf("cycle %d: dial: %v", i, err)
		}
		a := &wireTestAdapter{t: t, ws: ws}
		if i%10 == 9 { // some never complete a handshake
			ws.CloseNow()
			continue
		}
		session := "cycle-" + strconv.Itoa(i)
		a.send(testHandshake(session))
		if got := a.recv(); got["type"] != "handshake_ack" {
			t.Fatalf("cycle %d: got %v", i, got)
		}
		linkWaitFor(t, "the adapter to be live", func() bool {
			s := h.link.status()
			return s.Connected && s.Adapter.SessionID == session
		})
		ch := requestInBackground(t.Context(), h.link, "m", nil)
		req := a.recvRequest()
		switch i % 3 {
		case 0:
			ws.CloseNow()
		case 1:
			ws.Close(websocket.StatusNormalClosure, "bye")
		case 2:
			a.respond(req.ID, i)
			ws.CloseNow()
		}
		o := awaitOutcome(t, ch)
		if i%3 == 2 && o.err != nil {
			t.Fatalf("cycle %d: answered request failed: %v", i, o.err)
		}
		if i%3 != 2 {
			wantLinkToolError(t, o.err, codeNotConnected, linkNotConnectedDetails{Reason: linkReasonDisconnected})
		}
	}
	if err := h.stop(); err != nil {
		t.Fatal(err)
	}
	transport.CloseIdleConnections()
	deadline := time.Now().Add(linkWaitLimit)
	for runtime.NumGoroutine() > before || linkGoroutines() != "" {
		if time.Now().After(deadline) {
			t.Fatalf("%d goroutines after run, %d before; link goroutines left:\n%s",
				runtime.NumGoroutine(), before, linkGoroutines())
		}
		time.Sleep(time.Millisecond)
	}
}

// linkGoroutines returns the stacks of goroutines running this file's code.
func linkGoroutines() string {
	buf := make([]byte, 1<<20)
	buf = buf[:runtime.Stack(buf, true)]
	var out []string
	for g := range strings.SplitSeq(string(buf), "\n\n") {
		if strings.Contains(g, "main.(*adapterLink)") || strings.Contains(g, "main.(*adapterConn)") ||
			strings.Contains(g, "main.(*linkEventQueue)") {
			out = append(out, g)
		}
	}
	return strings.Join(out, "\n\n")
}
