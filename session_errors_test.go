package main

import (
	"encoding/json"
	"testing"
)

// TestPathMissOfAFeed: a feed that resolves paths itself and finds nothing
// (the Reactotron bridge slicing a whole state) says so with a typed miss,
// which reaches the agent as PATH_NOT_FOUND, or SCOPE_NOT_FOUND for a
// `scope`, with the feed's resolved prefix and keys, not as a malformed
// answer.
func TestPathMissOfAFeed(t *testing.T) {
	cfg := linkTestConfig()
	link := newTestLink(cfg, nil, func(linkEvent) {})
	feed := &testFeed{answer: func(method string, params any) (json.RawMessage, error) {
		if p, ok := params.(snapshotParams); ok && p.Path != nil {
			return nil, notFound(formatPath(pathFromWire(p.Path)), &pathMiss{ResolvedPrefix: "cart", Segment: "nope", Available: []string{"items", "total"}})
		}
		return nil, errAnswerLocally
	}}
	info := &adapterInfo{SessionID: "s", Capabilities: []string{capSnapshotPath}, Streams: []streamState{{Name: "redux", Active: true}}}
	registryOf(link).attach(sessionViaWire, "s", "", info, feed)
	ts := newTestToolSet(cfg, link)

	for _, tc := range []struct {
		tool string
		args map[string]any
		code string
	}{
		{"debug_get_state_path", map[string]any{"path": "cart.nope"}, codePathNotFound},
		{"debug_get_snapshot", map[string]any{"stream": "redux", "scope": "cart.nope"}, codeScopeNotFound},
	} {
		out, isError := callToolDirect(t, ts, tc.tool, tc.args)
		var got struct {
			Code    string
			Message string
			Details struct {
				Path, ResolvedPrefix string
				Available            []string
			}
		}
		if !isError || json.Unmarshal(out, &got) != nil {
			t.Fatalf("%s: %s, want an error", tc.tool, out)
		}
		if got.Code != tc.code || got.Details.Path != "cart.nope" || got.Details.ResolvedPrefix != "cart" || len(got.Details.Available) != 2 ||
			got.Message != `"cart.nope" does not exist: cart has no nope` {
			t.Errorf("%s: %s, want %s at cart.nope with cart's keys", tc.tool, out, tc.code)
		}
	}
}
