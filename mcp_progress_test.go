package main

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestCallContext: a progressToken (string or integer, as both eras define
// it) gets the call a reporter sending notifications/progress; any other
// token none; and a call that waits ends when the transport stops.
func TestCallContext(t *testing.T) {
	for _, tc := range []struct {
		params string
		want   []any
	}{
		{`{"name":"debug_wait_for","_meta":{"progressToken":"tok"}}`, []any{"notifications/progress",
			map[string]any{"progressToken": json.RawMessage(`"tok"`), "progress": 3000.0, "total": 10000.0, "message": "waited 3s"}}},
		{`{"name":"debug_wait_for","_meta":{"progressToken":12}}`, []any{"notifications/progress",
			map[string]any{"progressToken": json.RawMessage(`12`), "progress": 3000.0, "total": 10000.0, "message": "waited 3s"}}},
		{`{"name":"debug_wait_for","_meta":{"progressToken":1.5}}`, nil},
		{`{"name":"debug_wait_for","_meta":{"progressToken":{"a":1}}}`, nil},
		{`{"name":"debug_wait_for"}`, nil},
	} {
		var sent []any
		stopped := make(chan struct{})
		call := &callInfo{send: func(method string, params any) { sent = append(sent, method, params) }, stopped: stopped}
		ctx, done := callContext(withCall(t.Context(), call), waitTool, json.RawMessage(tc.params))
		if report := progressFrom(ctx); report != nil {
			report(3000, 10000, "waited 3s")
		}
		if diff := cmp.Diff(tc.want, sent); diff != "" {
			t.Errorf("%s: sent (-want +got):\n%s", tc.params, diff)
		}
		close(stopped)
		select {
		case <-ctx.Done():
		case <-time.After(10 * time.Second):
			t.Errorf("%s: the call did not end when the transport stopped", tc.params)
		}
		done()
	}
	stopped := make(chan struct{})
	close(stopped)
	ctx, done := callContext(withCall(t.Context(), &callInfo{stopped: stopped}), stateTools[0], nil)
	defer done()
	if ctx.Err() != nil {
		t.Error("a call that does not wait ended with the transport")
	}
}

// FuzzProgressToken: whatever the params, the token read is nil or a JSON
// string or integer found in them, and reading never fails.
func FuzzProgressToken(f *testing.F) {
	for _, seed := range []string{
		`{"name":"debug_wait_for","_meta":{"progressToken":"tok"}}`,
		`{"_meta":{"progressToken":12}}`,
		`{"_meta":{"progressToken":1.5e3}}`,
		`{"_meta":{"progressToken":null},"_meta":{"progressToken":"last"}}`,
		`{"_meta":[1,2]}`, `[]`, `"x"`, `{`, ``,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, params []byte) {
		token := progressToken(params)
		if token == nil {
			return
		}
		if !json.Valid(token) || !bytes.Contains(params, token) {
			t.Fatalf("token %q is not JSON found in %q", token, params)
		}
		if _, isInt := wireInt(token); rawKind(token) != "string" && !isInt {
			t.Fatalf("token %q is neither a string nor an integer", token)
		}
	})
}
