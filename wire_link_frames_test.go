package main

// Frames an adapter should not send: oversized, fragmented, malformed or of
// an unknown type, and the integers the wire reads.

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/coder/websocket"
)

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
