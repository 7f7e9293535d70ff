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
	"github.com/google/go-cmp/cmp/cmpopts"
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

func TestRequestRoundTrip(t *testing.T) {
	t.Parallel()
	h := startLinkHarness(t, func(c *config) { c.MaxPayloadSize = 8 << 20 }, nil)
	a := h.connect(t, "s")

	t.Run("params", func(t *testing.T) {
		for _, tt := range []struct {
			params any
			want   string
		}{
			{nil, `{}`},
			{json.RawMessage(nil), `{}`},
			{map[string]any{"stream": "redux", "limit": 50}, `{"limit":50,"stream":"redux"}`},
			{json.RawMessage(`{"stream": "a<b"}`), `{"stream":"a<b"}`},
		} {
			ch := requestInBackground(t.Context(), h.link, "events.query", tt.params)
			req := a.recvRequest()
			if req.Method != "events.query" || string(req.Params) != tt.want {
				t.Errorf("adapter got method %q params %s, want events.query %s", req.Method, req.Params, tt.want)
			}
			a.respond(req.ID, true)
			if o := awaitOutcome(t, ch); o.err != nil || string(o.result) != "true" {
				t.Errorf("request = %s, %v", o.result, o.err)
			}
		}
	})

	t.Run("params that do not encode", func(t *testing.T) {
		_, err := h.link.request(t.Context(), "m", map[string]any{"c": make(chan int)})
		if err == nil || toolErrorOf(err) != nil || !strings.Contains(err.Error(), "m: encoding params") {
			t.Errorf("error = %v, want a plain encoding error", err)
		}
	})

	t.Run("out of order", func(t *testing.T) {
		var chans []<-chan linkOutcome
		for i := range 3 {
			chans = append(chans, requestInBackground(t.Context(), h.link, "m", map[string]int{"n": i}))
		}
		var reqs []wireTestRequest
		for range 3 {
			reqs = append(reqs, a.recvRequest())
		}
		for i := len(reqs) - 1; i >= 0; i-- {
			a.sendText(fmt.Sprintf(`{"id":%q,"result":{"echo":%s},"type":"response"}`, reqs[i].ID, reqs[i].Params))
		}
		for i, ch := range chans {
			o := awaitOutcome(t, ch)
			if want := fmt.Sprintf(`{"echo":{"n":%d}}`, i); o.err != nil || string(o.result) != want {
				t.Errorf("request %d = %s, %v; want %s", i, o.result, o.err, want)
			}
		}
	})

	t.Run("large results", func(t *testing.T) {
		results := make([]string, 3)
		got := make([]json.RawMessage, 3)
		for i := range results {
			results[i] = `{"state":"` + strings.Repeat(string(rune('a'+i)), 5<<20) + `"}`
			ch := requestInBackground(t.Context(), h.link, "snapshot.get", nil)
			req := a.recvRequest()
			a.sendText(`{"type":"response","id":"` + req.ID + `","result":` + results[i] + `}`)
			o := awaitOutcome(t, ch)
			if o.err != nil {
				t.Fatal(o.err)
			}
			got[i] = o.result
			// A small message in between reuses the connection's buffer.
			ch = requestInBackground(t.Context(), h.link, "streams.list", nil)
			req = a.recvRequest()
			a.respond(req.ID, strings.Repeat("x", 100))
			if o := awaitOutcome(t, ch); o.err != nil || len(o.result) != 102 {
				t.Fatalf("small request = %s, %v", o.result, o.err)
			}
		}
		for i := range results {
			if string(got[i]) != results[i] {
				t.Errorf("result %d changed after later reads (len %d, want %d)", i, len(got[i]), len(results[i]))
			}
		}
	})
}

func TestAdapterErrors(t *testing.T) {
	t.Parallel()
	h := startLinkHarness(t, nil, nil)
	a := h.connect(t, "s")
	tests := []struct {
		name     string
		response string // %s is the id
		code     string
		message  string
		details  any // nil: no details
	}{
		{"stream unavailable", `{"type":"response","id":%q,"error":{"code":"STREAM_UNAVAILABLE","message":"no such stream: console","details":{"stream":"console","activeStreams":["redux"]}}}`,
			codeStreamUnavailable, "no such stream: console", map[string]any{"stream": "console", "activeStreams": []any{"redux"}}},
		{"snapshot not found without message", `{"type":"response","id":%q,"error":{"code":"SNAPSHOT_NOT_FOUND"}}`,
			codeSnapshotNotFound, "the app adapter answered m with SNAPSHOT_NOT_FOUND", nil},
		{"payload too large from the adapter", `{"type":"response","id":%q,"error":{"code":"PAYLOAD_TOO_LARGE","message":"too big","details":{"size":9,"limit":1}}}`,
			codePayloadTooLarge, "too big", map[string]any{"size": 9.0, "limit": 1.0}},
		{"invalid params", `{"type":"response","id":%q,"error":{"code":"INVALID_PARAMS","message":"limit must be 1-200"}}`,
			codeAdapterError, "the app adapter answered m with INVALID_PARAMS: limit must be 1-200", linkAdapterErrorDetails{"INVALID_PARAMS", "limit must be 1-200"}},
		{"unknown method", `{"type":"response","id":%q,"error":{"code":"UNKNOWN_METHOD","message":"m"}}`,
			codeAdapterError, "the app adapter answered m with UNKNOWN_METHOD: m", linkAdapterErrorDetails{"UNKNOWN_METHOD", "m"}},
		{"internal", `{"type":"response","id":%q,"error":{"code":"INTERNAL","message":"boom","details":{"stack":"x"}}}`,
			codeAdapterError, "the app adapter answered m with INTERNAL: boom", linkAdapterErrorDetails{"INTERNAL", "boom"}},
		{"unknown code", `{"type":"response","id":%q,"error":{"code":"WEIRD"}}`,
			codeAdapterError, "the app adapter answered m with WEIRD", linkAdapterErrorDetails{AdapterCode: "WEIRD"}},
		{"neither result nor error", `{"type":"response","id":%q}`,
			codeAdapterError, "the app adapter's answer to m is malformed: it has neither result nor error", nil},
		{"error not an object", `{"type":"response","id":%q,"error":"boom"}`,
			codeAdapterError, "the app adapter's answer to m is malformed: error is not an object", nil},
		{"error without code", `{"type":"response","id":%q,"error":{"message":"boom"}}`,
			codeAdapterError, "the app adapter's answer to m is malformed: error.code is not a non-empty string", nil},
		{"error message not a string", `{"type":"response","id":%q,"error":{"code":"INTERNAL","message":5}}`,
			codeAdapterError, "the app adapter's answer to m is malformed: error.message is not a string", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ch := requestInBackground(t.Context(), h.link, "m", nil)
			req := a.recvRequest()
			a.sendText(fmt.Sprintf(tt.response, req.ID))
			o := awaitOutcome(t, ch)
			te := wantLinkToolError(t, o.err, tt.code, tt.details)
			if te.Message != tt.message {
				t.Errorf("message = %q, want %q", te.Message, tt.message)
			}
			if tt.details == nil && te.Details != nil {
				t.Errorf("details = %#v, want none", te.Details)
			}
		})
	}
	for _, tt := range []struct{ name, response, want string }{
		{"null result", `{"type":"response","id":%q,"result":null}`, "null"},
		{"null error with result", `{"type":"response","id":%q,"error":null,"result":[1]}`, "[1]"},
		{"id after result", `{"result":{"a":[1,{"b":"}"}]},"type":"response","id":%q}`, `{"a":[1,{"b":"}"}]}`},
		{"whitespace", " {\n\t\"type\" : \"response\" , \"id\" : %q , \"result\" : [ 1 , 2 ] }\n", "[ 1 , 2 ]"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ch := requestInBackground(t.Context(), h.link, "m", nil)
			req := a.recvRequest()
			a.sendText(fmt.Sprintf(tt.response, req.ID))
			if o := awaitOutcome(t, ch); o.err != nil || string(o.result) != tt.want {
				t.Errorf("request = %s, %v; want %s", o.result, o.err, tt.want)
			}
		})
	}
}

func TestRequestTimeout(t *testing.T) {
	t.Parallel()
	h := startLinkHarness(t, func(c *config) { c.RequestTimeout = 100 * time.Millisecond }, nil)
	a := h.connect(t, "s")
	ch := requestInBackground(t.Context(), h.link, "events.query", map[string]any{"stream": "redux"})
	req := a.recvRequest()
	o := awaitOutcome(t, ch)
	te := wantLinkToolError(t, o.err, codeTimeout, linkTimeoutDetails{Method: "events.query", TimeoutMs: 100})
	if want := "the app adapter did not answer events.query within 100 ms"; te.Message != want {
		t.Errorf("message = %q, want %q", te.Message, want)
	}
	if diff := cmp.Diff(a.recv(), map[string]any{"type": "cancel", "id": req.ID}); diff != "" {
		t.Errorf("cancel mismatch (-got +want):\n%s", diff)
	}
	a.respond(req.ID, "late") // dropped
	// The pong shows the connection survived, and that the late answer,
	// read before the ping, was handled. (A next request would race the
	// short timeout.)
	a.sendText(`{"type":"ping"}`)
	if got := a.recv(); got["type"] != "pong" {
		t.Fatalf("got %v, want a pong", got)
	}
	if !h.link.status().Connected {
		t.Error("late answer ended the connection")
	}
	if !strings.Contains(h.logs.String(), "dropping late or unknown app adapter response") {
		t.Errorf("late response not logged in:\n%s", h.logs)
	}
}

func TestRequestCancelled(t *testing.T) {
	t.Parallel()
	h := startLinkHarness(t, nil, nil)
	a := h.connect(t, "s")
	ctx, cancel := context.WithCancel(t.Context())
	ch := requestInBackground(ctx, h.link, "snapshot.get", nil)
	req := a.recvRequest()
	cancel()
	if o := awaitOutcome(t, ch); !errors.Is(o.err, context.Canceled) {
		t.Fatalf("request error = %v, want context.Canceled", o.err)
	}
	if diff := cmp.Diff(a.recv(), map[string]any{"type": "cancel", "id": req.ID}); diff != "" {
		t.Errorf("cancel mismatch (-got +want):\n%s", diff)
	}
	// Already cancelled: nothing is sent.
	if _, err := h.link.request(ctx, "m", nil); !errors.Is(err, context.Canceled) {
		t.Errorf("request with a done context = %v, want context.Canceled", err)
	}
	a.sendText(`{"type":"ping"}`)
	if got := a.recv(); got["type"] != "pong" {
		t.Errorf("got %v, want the pong (no request for the done context)", got)
	}
}

func TestMaxPending(t *testing.T) {
	t.Parallel()
	h := startLinkHarness(t, nil, func(l *adapterLink) { l.maxPending = 2 })
	a := h.connect(t, "s")
	first := requestInBackground(t.Context(), h.link, "m", nil)
	second := requestInBackground(t.Context(), h.link, "m", nil)
	r1, r2 := a.recvRequest(), a.recvRequest()
	_, err := h.link.request(t.Context(), "m", nil)
	te := wantLinkToolError(t, err, codeAdapterError, nil)
	if !strings.Contains(te.Message, "limit 2") {
		t.Errorf("message %q does not name the bound", te.Message)
	}
	a.respond(r1.ID, 1)
	a.respond(r2.ID, 2)
	awaitOutcome(t, first)
	awaitOutcome(t, second)
}

func TestOversizedFrames(t *testing.T) {
	t.Parallel()
	const limit = 1024
	h := startLinkHarness(t, func(c *config) { c.MaxPayloadSize = limit }, nil)
	a := h.connect(t, "s")
	pad := func(n int) string { return strings.Repeat("p", n) }

	// An oversized push is discarded; the connection stays.
	a.sendText(`{"type":"event","event":{"stream":"redux","seq":1,"payload":"` + pad(5000) + `"}}`)
	a.sendBinary(bytes.Repeat([]byte{7}, 5000))

	// A response with type and id up front fails its request.
	ch := requestInBackground(t.Context(), h.link, "snapshot.get", nil)
	req := a.recvRequest()
	big := `{"type":"response","id":"` + req.ID + `","result":{"state":"` + pad(5000) + `"}}`
	a.sendText(big)
	o := awaitOutcome(t, ch)
	te := wantLinkToolError(t, o.err, codePayloadTooLarge, linkPayloadDetails{Size: int64(len(big)), Limit: limit})
	if want := fmt.Sprintf("the app adapter's answer to snapshot.get is %d bytes, over MAX_PAYLOAD_SIZE (1024 bytes)", len(big)); te.Message != want {
		t.Errorf("message = %q, want %q", te.Message, want)
	}

	// Sent in fragments, it is measured whole.
	ch = requestInBackground(t.Context(), h.link, "snapshot.get", nil)
	req = a.recvRequest()
	w, err := a.ws.Writer(t.Context(), websocket.MessageText)
	if err != nil {
		t.Fatal(err)
	}
	fragmented := `{"type":"response","id":"` + req.ID + `","result":"` + pad(3000) + `"}`
	for chunk := range byteChunks([]byte(fragmented), 700) {
		if _, err := w.Write(chunk); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	wantLinkToolError(t, awaitOutcome(t, ch).err, codePayloadTooLarge, linkPayloadDetails{Size: int64(len(fragmented)), Limit: limit})

	// One byte over the limit is too large; exactly at the limit is not.
	for _, size := range []int{limit + 1, limit} {
		ch = requestInBackground(t.Context(), h.link, "m", nil)
		req = a.recvRequest()
		head := `{"type":"response","id":"` + req.ID + `","result":"`
		msg := head + pad(size-len(head)-2) + `"}`
		a.sendText(msg)
		o := awaitOutcome(t, ch)
		if size > limit {
			wantLinkToolError(t, o.err, codePayloadTooLarge, linkPayloadDetails{Size: limit + 1, Limit: limit})
		} else if o.err != nil || len(o.result) != size-len(head) {
			t.Errorf("response of exactly %d bytes: %d byte result, %v", size, len(o.result), o.err)
		}
	}

	// The id beyond the first 256 bytes: discarded without failing the request.
	ch = requestInBackground(t.Context(), h.link, "m", nil)
	req = a.recvRequest()
	a.sendText(`{"type":"response","result":"` + pad(5000) + `","id":"` + req.ID + `"}`)
	a.sendText(`{"type":"response","id":"` + req.ID + `","result":"small"}`)
	if o := awaitOutcome(t, ch); o.err != nil || string(o.result) != `"small"` {
		t.Errorf("request = %s, %v; want the small answer", o.result, o.err)
	}
	if got := strings.Count(h.logs.String(), "discarded an app adapter message over MAX_PAYLOAD_SIZE"); got != 5 {
		t.Errorf("%d oversized messages logged, want 5:\n%s", got, h.logs)
	}
	if s := h.link.status(); !s.Connected || s.Adapter.Streams[0].EventCount != 0 {
		t.Errorf("status = %+v, want connected with no event counted", s)
	}
}

// byteChunks yields b in pieces of at most n bytes.
func byteChunks(b []byte, n int) func(func([]byte) bool) {
	return func(yield func([]byte) bool) {
		for len(b) > 0 {
			k := min(n, len(b))
			if !yield(b[:k]) {
				return
			}
			b = b[k:]
		}
	}
}

func TestMalformedAndUnknownIgnored(t *testing.T) {
	t.Parallel()
	h := startLinkHarness(t, nil, nil)
	a := h.connect(t, "s")
	ch := requestInBackground(t.Context(), h.link, "streams.list", nil)
	req := a.recvRequest()
	for _, msg := range []string{
		`not json`,
		`{"type":"response","id":"` + req.ID + `","result":1`,
		`[1,2]`,
		`{}`,
		`{"type":5}`,
		`{"type":"nope","id":"` + req.ID + `"}`,
		`{"type":"handshake","protocolVersion":1}`,
		`{"type":"response","id":"999999","result":1}`,
		`{"type":"response","id":` + req.ID + `,"result":1}`,
		// Keys match exactly and a repeated member voids the message: these
		// must not answer the pending request.
		`{"type":"response","ID":"` + req.ID + `","result":"wrong"}`,
		`{"Type":"response","id":"` + req.ID + `","result":"wrong"}`,
		`{"type":"response","id":"` + req.ID + `","id":"` + req.ID + `","result":"wrong"}`,
		`{"type":"event"}`,
		`{"type":"event","event":"x"}`,
		`{"type":"event","event":{"stream":"redux","seq":0}}`,
		`{"type":"event","event":{"stream":"redux","seq":"1"}}`,
		`{"type":"streams"}`,
		`{"type":"streams","streams":[{"name":"Bad","active":true}]}`,
		`{"type":"streams","streams":{}}`,
	} {
		a.sendText(msg)
	}
	a.sendBinary([]byte(`{"type":"response","id":"` + req.ID + `","result":"binary"}`))
	a.respond(req.ID, "right")
	if o := awaitOutcome(t, ch); o.err != nil || string(o.result) != `"right"` {
		t.Fatalf("request = %s, %v; want the well-formed answer", o.result, o.err)
	}
	s := h.link.status()
	if !s.Connected || len(s.Adapter.Streams) != 3 || s.Adapter.Streams[0].EventCount != 0 {
		t.Errorf("status = %+v; want connected, streams and counts unchanged", s)
	}
	h.events.waitFor(t, []linkEvent{{Kind: linkConnected, SessionID: "s"}})
	logs := h.logs.String()
	for _, want := range []string{
		"ignoring malformed message from app adapter",
		"ignoring app adapter message without a string type",
		"ignoring app adapter message of unknown type",
		"ignoring app adapter response without a string id",
		"ignoring event without a stream name and a seq >= 1",
		"ignoring invalid streams message",
		"ignoring binary frame from app adapter",
	} {
		if !strings.Contains(logs, want) {
			t.Errorf("log lacks %q", want)
		}
	}
}

func TestDisconnectFailsPending(t *testing.T) {
	t.Parallel()
	h := startLinkHarness(t, nil, nil)
	_, err := h.link.request(t.Context(), "m", nil)
	te := wantLinkToolError(t, err, codeNotConnected, linkNotConnectedDetails{Reason: linkReasonNeverConnected})
	if want := "no app adapter has connected since the server started"; te.Message != want {
		t.Errorf("message = %q, want %q", te.Message, want)
	}

	a := h.connect(t, "s")
	var chans []<-chan linkOutcome
	for range 3 {
		chans = append(chans, requestInBackground(t.Context(), h.link, "m", nil))
	}
	for range 3 {
		a.recvRequest()
	}
	a.ws.CloseNow()
	for _, ch := range chans {
		wantLinkToolError(t, awaitOutcome(t, ch).err, codeNotConnected, linkNotConnectedDetails{Reason: linkReasonDisconnected})
	}
	linkWaitFor(t, "the disconnect", func() bool { return !h.link.status().Connected })
	if s := h.link.status(); s.Reason != linkReasonDisconnected || s.Adapter != nil {
		t.Errorf("status = %+v, want disconnected", s)
	}
	_, err = h.link.request(t.Context(), "m", nil)
	wantLinkToolError(t, err, codeNotConnected, linkNotConnectedDetails{Reason: linkReasonDisconnected})
	h.events.waitFor(t, []linkEvent{
		{Kind: linkConnected, SessionID: "s"},
		{Kind: linkDisconnected, SessionID: "s", Reason: "disconnected"},
	})
	if !strings.Contains(h.logs.String(), `msg="adapter disconnected" session=s reason=disconnected`) {
		t.Errorf("no disconnect log line in:\n%s", h.logs)
	}
}

func TestAppPing(t *testing.T) {
	t.Parallel()
	h := startLinkHarness(t, nil, nil)
	a := h.connect(t, "s")
	a.sendText(`{"type":"ping","extra":true}`)
	if diff := cmp.Diff(a.recv(), map[string]any{"type": "pong"}); diff != "" {
		t.Errorf("pong mismatch (-got +want):\n%s", diff)
	}
}

func TestPushesUpdateStatus(t *testing.T) {
	t.Parallel()
	h := startLinkHarness(t, nil, nil)
	a := h.connect(t, "s")
	a.sendText(`{"type":"event","event":{"stream":"redux","seq":1,"type":"action_dispatched","timestamp":"2026-11-21T10:00:01.000Z","payload":{}}}`)
	a.sendText(`{"type":"event","event":{"stream":"redux","seq":2,"type":"action_dispatched","timestamp":"2026-11-21T10:00:02.500Z","payload":{}}}`)
	a.sendText(`{"type":"event","event":{"stream":"navigation","seq":7,"type":"route_change"}}`)
	a.sendText(`{"type":"event","event":{"stream":"console","seq":1,"type":"log"}}`)
	linkWaitFor(t, "the pushes to count", func() bool {
		s := h.link.status()
		return s.Connected && s.Adapter.Streams[1].EventCount == 1
	})
	got := h.link.status().Adapter.Streams
	if got[1].LastEventAt.IsZero() {
		t.Error("navigation LastEventAt is zero; want the arrival time")
	}
	want := []streamState{
		{Name: "redux", Active: true, EventCount: 2, LatestSeq: 2, LastEventAt: time.Date(2026, 11, 21, 10, 0, 2, 5e8, time.UTC)},
		{Name: "navigation", Active: true, EventCount: 1, LatestSeq: 7, LastEventAt: got[1].LastEventAt},
		{Name: "mmkv", Active: true, Instances: []string{"default", "auth"}},
	}
	if diff := cmp.Diff(got, want, cmpopts.EquateApproxTime(0)); diff != "" {
		t.Errorf("streams after events (-got +want):\n%s", diff)
	}

	a.sendText(`{"type":"streams","streams":[{"name":"mmkv","active":true,"instances":["default","auth","cache"]},{"name":"redux","active":false},{"name":"console","active":true}]}`)
	a.sendText(`{"type":"streams","streams":[{"name":"redux","active":true},{"name":"redux","active":true}]}`) // invalid: ignored
	a.sendText(`{"type":"event","event":{"stream":"console","seq":2,"type":"log","timestamp":"not a time"}}`)
	linkWaitFor(t, "the stream list to change", func() bool {
		s := h.link.status()
		return s.Connected && len(s.Adapter.Streams) == 3 && s.Adapter.Streams[2].EventCount == 1
	})
	got = h.link.status().Adapter.Streams
	want = []streamState{
		{Name: "mmkv", Active: true, Instances: []string{"default", "auth", "cache"}},
		{Name: "redux", EventCount: 2, LatestSeq: 2, LastEventAt: time.Date(2026, 11, 21, 10, 0, 2, 5e8, time.UTC)},
		{Name: "console", Active: true, EventCount: 1, LatestSeq: 2, LastEventAt: got[2].LastEventAt},
	}
	if diff := cmp.Diff(got, want, cmpopts.EquateApproxTime(0)); diff != "" {
		t.Errorf("streams after the streams push (-got +want):\n%s", diff)
	}
	h.events.waitFor(t, []linkEvent{
		{Kind: linkConnected, SessionID: "s"},
		{Kind: linkEventPushed, SessionID: "s", Stream: "redux"},
		{Kind: linkEventPushed, SessionID: "s", Stream: "redux"},
		{Kind: linkEventPushed, SessionID: "s", Stream: "navigation"},
		{Kind: linkEventPushed, SessionID: "s", Stream: "console"},
		{Kind: linkStreamsChanged, SessionID: "s"},
		{Kind: linkEventPushed, SessionID: "s", Stream: "console"},
	})
}

func TestPingTimeout(t *testing.T) {
	t.Parallel()
	h := startLinkHarness(t, nil, func(l *adapterLink) {
		l.pingInterval = 10 * time.Millisecond
		l.pongTimeout = 30 * time.Millisecond
	})
	// A coder/websocket client answers pings only while it reads; this one
	// does not read after the ack, like a frozen app.
	a := h.dial(t, nil)
	a.send(testHandshake("frozen"))
	if got := a.recv(); got["type"] != "handshake_ack" {
		t.Fatalf("got %v, want the ack", got)
	}
	h.events.waitFor(t, []linkEvent{
		{Kind: linkConnected, SessionID: "frozen"},
		{Kind: linkDisconnected, SessionID: "frozen", Reason: "ping timeout"},
	})
	if s := h.link.status(); s.Connected || s.Reason != linkReasonDisconnected {
		t.Errorf("status = %+v, want disconnected", s)
	}
}

func TestPingsKeepAdapterAlive(t *testing.T) {
	t.Parallel()
	h := startLinkHarness(t, nil, func(l *adapterLink) {
		l.pingInterval = 5 * time.Millisecond
		l.pongTimeout = 5 * time.Second
	})
	pings := make(chan struct{}, 100)
	a := h.dial(t, &websocket.DialOptions{OnPingReceived: func(context.Context, []byte) bool {
		select {
		case pings <- struct{}{}:
		default:
		}
		return true
	}})
	a.send(testHandshake("alive"))
	readDone := make(chan error, 1)
	go func() {
		for {
			if _, err := a.read(); err != nil {
				readDone <- err
				return
			}
		}
	}()
	for range 5 {
		select {
		case <-pings:
		case err := <-readDone:
			t.Fatalf("connection ended: %v", err)
		case <-time.After(linkWaitLimit):
			t.Fatal("no ping")
		}
	}
	if s := h.link.status(); !s.Connected || s.Adapter.SessionID != "alive" {
		t.Errorf("status = %+v, want alive connected", s)
	}
	a.ws.CloseNow()
	<-readDone
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

func TestEventQueueBoundsPushedEvents(t *testing.T) {
	t.Parallel()
	var q linkEventQueue
	q.wake = make(chan struct{}, 1)
	for range maxQueuedPushEvents + 10 {
		q.push(linkEvent{Kind: linkEventPushed})
	}
	q.push(linkEvent{Kind: linkDisconnected})
	q.close()
	q.push(linkEvent{Kind: linkConnected}) // after close: dropped
	var got []linkEvent
	q.run(func(ev linkEvent) { got = append(got, ev) })
	if len(got) != maxQueuedPushEvents+1 || got[len(got)-1].Kind != linkDisconnected {
		t.Errorf("delivered %d events; want %d pushes then the disconnect", len(got), maxQueuedPushEvents)
	}
}

func TestWireInt(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		raw  string
		want int64
		ok   bool
	}{
		{"1", 1, true}, {"-3", -3, true}, {"1.0", 1, true}, {"2e2", 200, true}, {"1.5", 0, false},
		{`"1"`, 0, false}, {"true", 0, false}, {"9223372036854775807", 9223372036854775807, true},
		{"9223372036854775808", 0, false}, {"1e300", 0, false}, {"", 0, false},
	} {
		got, ok := wireInt([]byte(tt.raw))
		if got != tt.want || ok != tt.ok {
			t.Errorf("wireInt(%s) = %d, %v; want %d, %v", tt.raw, got, ok, tt.want, tt.ok)
		}
	}
}

// BenchmarkLargeResponse measures a 5 MB result crossing a real connection,
// from the adapter's write to request's return.
func BenchmarkLargeResponse(b *testing.B) {
	cfg := linkTestConfig()
	cfg.MaxPayloadSize = 8 << 20
	l := newTestLink(cfg, nil, nil)
	ctx, cancel := context.WithCancel(b.Context())
	runErr := make(chan error, 1)
	go func() { runErr <- l.run(ctx) }()
	defer func() {
		cancel()
		<-runErr
	}()
	addr, err := l.addr(ctx)
	if err != nil {
		b.Fatal(err)
	}
	ws, _, err := websocket.Dial(ctx, "ws://"+addr+"/", nil)
	if err != nil {
		b.Fatal(err)
	}
	defer ws.CloseNow()
	hs, _ := json.Marshal(testHandshake("bench"))
	ws.Write(ctx, websocket.MessageText, hs)
	ws.Read(ctx)
	for !l.status().Connected {
		runtime.Gosched()
	}
	result := `{"state":"` + strings.Repeat("x", 5<<20) + `"}`
	suffix := []byte(`","result":` + result + `}`)
	adapterDone := make(chan struct{})
	defer func() { ws.CloseNow(); <-adapterDone }()
	go func() {
		defer close(adapterDone)
		var frame []byte // reused, so that the adapter side allocates little
		for {
			_, msg, err := ws.Read(ctx)
			if err != nil {
				return
			}
			var req wireTestRequest
			json.Unmarshal(msg, &req)
			frame = append(append(append(frame[:0], `{"type":"response","id":"`...), req.ID...), suffix...)
			if ws.Write(ctx, websocket.MessageText, frame) != nil {
				return
			}
		}
	}()
	b.SetBytes(int64(len(result)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := l.request(ctx, "snapshot.get", nil); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkParseResponse compares the envelope scan with encoding/json on a
// 5 MB response.
func BenchmarkParseResponse(b *testing.B) {
	msg := []byte(`{"type":"response","id":"17","result":{"state":{"items":[` +
		strings.Repeat(`{"sku":"A-1","qty":2,"price":12.5,"tags":["x","y"]},`, 100000) + `{}]}}}`)
	b.Run("wireMessage", func(b *testing.B) {
		b.SetBytes(int64(len(msg)))
		b.ReportAllocs()
		var m wireMessage
		for b.Loop() {
			if err := m.parse(msg); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("encoding/json", func(b *testing.B) {
		b.SetBytes(int64(len(msg)))
		b.ReportAllocs()
		for b.Loop() {
			var m struct {
				Type, ID string
				Result   json.RawMessage
			}
			if err := json.Unmarshal(msg, &m); err != nil {
				b.Fatal(err)
			}
		}
	})
}

func TestLinkEventQueueBounds(t *testing.T) {
	q := linkEventQueue{wake: make(chan struct{}, 1)}
	streams := linkEvent{Kind: linkStreamsChanged, SessionID: "s"}
	q.push(streams)
	q.push(streams)
	if len(q.items) != 1 {
		t.Errorf("repeated stream-list changes queued %d times, want once", len(q.items))
	}
	for i := range 2 * maxQueuedLinkEvents {
		q.push(linkEvent{Kind: linkConnected, SessionID: strconv.Itoa(i)})
	}
	if len(q.items) != maxQueuedLinkEvents {
		t.Errorf("queue holds %d events, want the bound %d", len(q.items), maxQueuedLinkEvents)
	}
}

// TestNoticesForAgents pins what the link tells MCP clients beyond
// connects: a request that timed out, a malformed answer, an oversized
// message, each naming the session and the particulars.
func TestNoticesForAgents(t *testing.T) {
	t.Parallel()
	h := startLinkHarness(t, func(c *config) { c.RequestTimeout = 200 * time.Millisecond }, nil)
	a := h.connect(t, "s")

	ch := requestInBackground(t.Context(), h.link, "streams.list", nil)
	req := a.recvRequest()
	a.sendText(`{"type":"response","id":"` + req.ID + `","error":"oops"}`)
	awaitOutcome(t, ch)

	ch = requestInBackground(t.Context(), h.link, "events.query", nil)
	a.recvRequest()
	awaitOutcome(t, ch)
	a.recv() // the cancel

	a.sendText(`{"type":"event","pad":"` + strings.Repeat("x", 600<<10) + `"}`)
	h.events.waitFor(t, []linkEvent{
		{Kind: linkConnected, SessionID: "s"},
		{Kind: linkNotice, SessionID: "s", Level: "warning", Notice: "malformed answer dropped",
			Detail: "the app adapter's answer to streams.list is malformed: error is not an object"},
		{Kind: linkNotice, SessionID: "s", Level: "warning", Notice: "request timed out",
			Detail: "events.query got no answer within 200 ms"},
		{Kind: linkNotice, SessionID: "s", Level: "warning", Notice: "oversized message dropped",
			Detail: `a "event" message of 614425 bytes, over MAX_PAYLOAD_SIZE (524288)`},
	})
}
