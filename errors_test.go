package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"testing"
	"time"
)

// TestToolErrorOf pins the words an agent reads for the typed errors of the
// layers below: code, message, details and the suggestion where it is not
// the code's own. The ones the goldens and other tests do not reach are
// here; the texts are those the links and sessions used to write themselves.
func TestToolErrorOf(t *testing.T) {
	for _, tc := range []struct {
		name       string
		err        error
		code, msg  string
		details    string // JSON; "" for none
		suggestion string // "" for the code's own
	}{
		{"too many pending", &errTooManyPending{Limit: 1024}, codeAdapterError,
			"too many requests pending on the app adapter (limit 1024); it is not answering", "", ""},
		{"not offered", &errNotOffered{Via: "wire", Method: "commands.list"}, codeAdapterError,
			"the app's wire session does not offer commands.list", `{"adapterMessage":"commands.list is not offered by this app"}`, ""},
		{"answer malformed", &errAnswerMalformed{Method: "streams.list", Problem: "want {streams: [...]}"}, codeAdapterError,
			"the adapter's streams.list answer is malformed: want {streams: [...]}", `{"adapterMessage":"want {streams: [...]}"}`, ""},
		{"answer envelope malformed", &errAnswerMalformed{Method: "streams.list", Problem: "it has neither result nor error", Envelope: true}, codeAdapterError,
			"the app adapter's answer to streams.list is malformed: it has neither result nor error", "", ""},
		{"frame too large", &errFrameTooLarge{Method: "snapshot.get", Size: 600000, Limit: 524288}, codePayloadTooLarge,
			"the app adapter's answer to snapshot.get is 600000 bytes, over MAX_PAYLOAD_SIZE (524288 bytes)", `{"size":600000,"limit":524288}`,
			"The app's whole answer is over MAX_PAYLOAD_SIZE: restart the server with a larger MAX_PAYLOAD_SIZE (up to 67108864)."},
		{"session gone", &errSessionGone{ID: "s1", At: time.Date(2026, 1, 2, 3, 4, 5, 6e6, time.UTC), What: "commands.list"}, codeNotConnected,
			"the app of session s1 disconnected at 2026-01-02T03:04:05.006Z, and commands.list needs the app", `{"reason":"disconnected"}`, ""},
		{"not listening", &errNotConnected{Reason: linkReasonNotListening, WSURL: "ws://127.0.0.1:19850/", ListenError: "address in use"}, codeNotConnected,
			"the server is not listening for app adapters on ws://127.0.0.1:19850/: address in use; another devtools-mcp may hold the port, and the bind is retried until it is free",
			`{"reason":"not_listening","listenError":"address in use"}`,
			"Another process (likely another devtools-mcp) holds ws://127.0.0.1:19850/: stop it, or give this server another WS_PORT and point the app's adapter at it; the bind is retried every 2 s."},
		{"never connected, other port", &errNotConnected{Reason: linkReasonNeverConnected, WSURL: "ws://127.0.0.1:9999/"}, codeNotConnected,
			"no app adapter has connected since the server started", `{"reason":"never_connected"}`,
			"Start the app's dev build with the debug adapter enabled and pointed at port 9999 (on Android also run `adb reverse tcp:9999 tcp:9999`), then call debug_health_check."},
		{"wrapped timeout", fmt.Errorf("asking: %w", &errAdapterTimeout{Method: "events.query", After: 1500 * time.Millisecond}), codeTimeout,
			"the app adapter did not answer events.query within 1500 ms", `{"method":"events.query","timeoutMs":1500}`, ""},
		{"reactotron too many pending", &errTooManyPending{Via: sessionViaReactotron, Limit: 64}, codeAdapterError,
			"too many requests waiting on the Reactotron app (limit 64); it is not answering", "", ""},
		{"reactotron timeout", &errAdapterTimeout{Via: sessionViaReactotron, Method: "state.values.request", After: 2 * time.Second}, codeTimeout,
			"the Reactotron app did not answer state.values.request within 2000 ms (is reactotron-redux set up in it?)", `{"method":"state.values.request","timeoutMs":2000}`, ""},
		{"adapter path miss outside snapshots", &errAdapterAnswered{Method: "events.query", Code: "PATH_NOT_FOUND", Message: "no"}, codeAdapterError,
			"the app adapter answered events.query with PATH_NOT_FOUND: no", `{"adapterCode":"PATH_NOT_FOUND","adapterMessage":"no"}`, ""},
		{"adapter stream unavailable", &errAdapterAnswered{Method: "events.query", Code: "STREAM_UNAVAILABLE", Details: json.RawMessage(`{"stream":"x"}`)}, codeStreamUnavailable,
			"the app adapter answered events.query with STREAM_UNAVAILABLE", `{"stream":"x"}`, ""},
		{"Reactotron action", &reactotronBadActionError{Argument: "action", Problem: "action: want a JSON object, got array"}, codeInvalidParams,
			`argument "action": action: want a JSON object, got array`, `{"argument":"action","problem":"action: want a JSON object, got array"}`, ""},
		{"scope miss", scopeError(&errPathNotFound{Path: "a.b", Miss: &pathMiss{ResolvedPrefix: "a", Segment: "b"}}), codeScopeNotFound,
			`"a.b" does not exist: a has no b`, `{"available":[],"path":"a.b","resolvedPrefix":"a"}`, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			te := toolErrorOf(tc.err)
			if te == nil {
				t.Fatalf("toolErrorOf(%v) = nil", tc.err)
			}
			if te.Code != tc.code || te.Message != tc.msg || te.Suggestion != tc.suggestion {
				t.Errorf("got %s %q (suggestion %q)\nwant %s %q (suggestion %q)", te.Code, te.Message, te.Suggestion, tc.code, tc.msg, tc.suggestion)
			}
			var details string
			if te.Details != nil {
				b, err := json.Marshal(te.Details)
				if err != nil {
					t.Fatal(err)
				}
				details = string(b)
			}
			if details != tc.details {
				t.Errorf("details = %s, want %s", details, tc.details)
			}
		})
	}
	for _, err := range []error{nil, errors.New("plain"), fmt.Errorf("wrapped: %w", errors.New("plain"))} {
		if te := toolErrorOf(err); te != nil {
			t.Errorf("toolErrorOf(%v) = %v, want nil for an error no layer typed", err, te)
		}
	}
}
