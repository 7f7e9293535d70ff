package main

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

// TestRelayExchange: every exchange with the holder is written as one
// stateless request (its headers and _meta), and an answer from another
// kind of server, from this very server, or that is no JSON-RPC answer is
// told apart the same way, whoever asked (a relayed request, the probe,
// the listen stream).
func TestRelayExchange(t *testing.T) {
	t.Parallel()
	cfg := testConfig(t)
	rl := newRelay(cfg, func() (bool, string) { return false, "" }, time.Second)
	type seen struct {
		header http.Header
		body   map[string]json.RawMessage
	}
	requests := make(chan seen, 16)
	var answer func(w http.ResponseWriter)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		data, _ := io.ReadAll(r.Body)
		var body map[string]json.RawMessage
		json.Unmarshal(data, &body)
		requests <- seen{r.Header.Clone(), body}
		answer(w)
	}))
	defer srv.Close()
	rl.url = srv.URL + mcpPath

	answerJSON := func(instance, body string) func(w http.ResponseWriter) {
		return func(w http.ResponseWriter) {
			w.Header().Set("Content-Type", "application/json")
			if instance != "" {
				w.Header().Set(holderInstanceHeader, instance)
			}
			io.WriteString(w, body)
		}
	}
	for _, tt := range []struct {
		name              string
		answer            func(w http.ResponseWriter)
		wantErr, wantRead error
		wantSelf          bool
	}{
		{"a devtools-mcp", answerJSON("other", `{"jsonrpc":"2.0","id":1,"result":{}}`), nil, nil, false},
		{"this very server", answerJSON(rl.instance, `{"jsonrpc":"2.0","id":1,"result":{}}`), nil, nil, true},
		{"another kind of server", func(w http.ResponseWriter) {
			w.Header().Set("Content-Type", "text/html")
			io.WriteString(w, "<html>")
		}, errRelayNotMCP, nil, false},
		{"no JSON-RPC answer", answerJSON("", `{"ok":true}`), nil, errRelayNotMCP, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			answer = tt.answer
			params := map[string]json.RawMessage{"name": json.RawMessage(`"debug_get_logs"`)}
			resp, self, err := rl.exchange(t.Context(), rl.client, 1, "tools/call", params, "debug_get_logs", "application/json")
			got := <-requests
			for h, want := range map[string]string{"Content-Type": "application/json", "Mcp-Method": "tools/call",
				"Mcp-Name": "debug_get_logs", "MCP-Protocol-Version": modernVersions[0]} {
				if v := got.header.Get(h); v != want {
					t.Errorf("header %s = %q, want %q", h, v, want)
				}
			}
			var sent struct {
				Name string         `json:"name"`
				Meta map[string]any `json:"_meta"`
			}
			if err := json.Unmarshal(got.body["params"], &sent); err != nil || sent.Name != "debug_get_logs" || sent.Meta[metaProtocolVersion] != modernVersions[0] {
				t.Errorf("params = %s, want the caller's and the relay's _meta", got.body["params"])
			}
			if !errors.Is(err, tt.wantErr) || (err == nil) != (tt.wantErr == nil) {
				t.Fatalf("exchange err = %v, want %v", err, tt.wantErr)
			}
			if err != nil {
				return
			}
			defer resp.Body.Close()
			if self != tt.wantSelf {
				t.Errorf("self = %t, want %t", self, tt.wantSelf)
			}
			if _, err := readRelayReply(resp); !errors.Is(err, tt.wantRead) || (err == nil) != (tt.wantRead == nil) {
				t.Errorf("readRelayReply err = %v, want %v", err, tt.wantRead)
			}
		})
	}

	// The probe refuses this very server and another kind alike.
	answer = answerJSON(rl.instance, `{"jsonrpc":"2.0","id":"probe","result":{}}`)
	if rl.probeHolder(t.Context()) {
		t.Error("the probe took this very server for the holder")
	}
	<-requests
	answer = answerJSON("other", `{"jsonrpc":"2.0","id":"probe","result":{}}`)
	if !rl.probeHolder(t.Context()) {
		t.Error("the probe refused a devtools-mcp")
	}
	if got := <-requests; got.header.Get("Mcp-Method") != "server/discover" {
		t.Errorf("the probe sent Mcp-Method %q", got.header.Get("Mcp-Method"))
	}

	srv.Close()
	if _, _, err := rl.exchange(t.Context(), rl.client, 1, "tools/call", nil, "", "application/json"); !errors.Is(err, errRelayUnreachable) {
		t.Errorf("exchange with nothing listening = %v, want %v", err, errRelayUnreachable)
	}
}
