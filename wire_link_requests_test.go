package main

// Requests to an adapter over a real connection: answers, adapter errors,
// timeouts, cancels, the pending bound and a disconnect; the harness is in
// wire_link_test.go.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/google/go-cmp/cmp"
)

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
