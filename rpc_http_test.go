package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
	"time"
)

// modernMeta is the _meta every 2026-07-28 request in these tests carries.
const modernMeta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`

// testHTTP is an HTTP transport over a server whose adapter link is not
// running: tools answer NOT_CONNECTED, which is all these tests need.
type testHTTP struct {
	t   *testing.T
	tr  *httpTransport
	srv *mcpServer
	url string
}

func newTestHTTP(t *testing.T, cfg config) *testHTTP {
	t.Helper()
	tr, srv := newTestTransport(cfg)
	hs := httptest.NewServer(tr)
	t.Cleanup(func() {
		tr.close()
		hs.Close()
	})
	return &testHTTP{t: t, tr: tr, srv: srv, url: hs.URL + mcpPath}
}

func newTestTransport(cfg config) (*httpTransport, *mcpServer) {
	logger := slog.New(slog.DiscardHandler)
	srv := newMCPServer(cfg, logger)
	srv.link = newTestLink(cfg, logger, srv.onLinkEvent)
	srv.tools = newTestToolSet(cfg, srv.link)
	srv.resources = newTestResourceHub(cfg, srv.link, srv.notifyClient)
	return newHTTPTransport(srv, cfg, srv.link.checkUpgrade, logger), srv
}

// post sends body with the standard POST headers plus extra ("Name: value"
// pairs; an empty value deletes the header).
func (h *testHTTP) post(body string, extra ...string) (*http.Response, map[string]any) {
	h.t.Helper()
	req, err := http.NewRequestWithContext(h.t.Context(), http.MethodPost, h.url, strings.NewReader(body))
	if err != nil {
		h.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	setHeaders(req, extra)
	return h.do(req)
}

func setHeaders(req *http.Request, pairs []string) {
	for _, p := range pairs {
		name, value, _ := strings.Cut(p, ": ")
		if value == "" {
			req.Header.Del(name)
		} else {
			req.Header.Add(name, value)
		}
	}
}

func (h *testHTTP) do(req *http.Request) (*http.Response, map[string]any) {
	h.t.Helper()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		h.t.Fatal(err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		h.t.Fatal(err)
	}
	if len(data) == 0 {
		return resp, nil
	}
	var msg map[string]any
	if err := json.Unmarshal(data, &msg); err != nil {
		h.t.Fatalf("%s %s: body is not JSON: %v: %q", req.Method, req.URL, err, data)
	}
	return resp, msg
}

// errorCode returns the JSON-RPC error code of msg, or 0 for a result.
func errorCode(msg map[string]any) int {
	e, ok := msg["error"].(map[string]any)
	if !ok {
		return 0
	}
	code, _ := e["code"].(float64)
	return int(code)
}

func errorMessage(msg map[string]any) string {
	e, _ := msg["error"].(map[string]any)
	s, _ := e["message"].(string)
	return s
}

func modernHeaders(method string, name ...string) []string {
	h := []string{"MCP-Protocol-Version: 2026-07-28", "Mcp-Method: " + method}
	for _, n := range name {
		h = append(h, "Mcp-Name: "+n)
	}
	return h
}

func TestHTTPModernRequests(t *testing.T) {
	h := newTestHTTP(t, testConfig(t))
	call := func(id int, method, params string) string {
		if params != "" {
			params += ","
		}
		return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":%q,"params":{%s%s}}`, id, method, params, modernMeta)
	}
	b64 := func(s string) string { return "=?base64?" + base64.StdEncoding.EncodeToString([]byte(s)) + "?=" }
	tests := []struct {
		name       string
		body       string
		headers    []string
		wantStatus int
		wantCode   int    // 0: a result
		wantInMsg  string // in the error message
	}{
		{"discover", call(1, "server/discover", ""), modernHeaders("server/discover"), 200, 0, ""},
		{"tools/list", call(1, "tools/list", ""), modernHeaders("tools/list"), 200, 0, ""},
		{"tools/call with Mcp-Name", call(1, "tools/call", `"name":"debug_health_check"`), modernHeaders("tools/call", "debug_health_check"), 200, 0, ""},
		{"Mcp-Name base64-encoded", call(1, "tools/call", `"name":"debug_health_check"`), modernHeaders("tools/call", b64("debug_health_check")), 200, 0, ""},
		{"resources/read with Mcp-Name", call(1, "resources/read", `"uri":"debug://nowhere"`), modernHeaders("resources/read", "debug://nowhere"), 200, -32602, "resource not found"},
		{"header names are case-insensitive", call(1, "tools/list", ""), []string{"mcp-protocol-version: 2026-07-28", "MCP-METHOD: tools/list"}, 200, 0, ""},
		{"MCP-Protocol-Version missing", call(1, "tools/list", ""), []string{"Mcp-Method: tools/list"}, 400, -32020, "MCP-Protocol-Version is missing"},
		{"MCP-Protocol-Version differs from _meta", call(1, "tools/list", ""), []string{"MCP-Protocol-Version: 2025-11-25", "Mcp-Method: tools/list"}, 400, -32020, "does not match"},
		{"MCP-Protocol-Version twice", call(1, "tools/list", ""), append(modernHeaders("tools/list"), "MCP-Protocol-Version: 2026-07-28"), 400, -32020, "appears 2 times"},
		{"Mcp-Method missing", call(1, "tools/list", ""), []string{"MCP-Protocol-Version: 2026-07-28"}, 400, -32020, "Mcp-Method is missing"},
		{"Mcp-Method differs", call(1, "tools/list", ""), modernHeaders("resources/list"), 400, -32020, `"resources/list" does not match body value "tools/list"`},
		{"Mcp-Method differs in case", call(1, "tools/list", ""), modernHeaders("Tools/List"), 400, -32020, "does not match"},
		{"Mcp-Name missing", call(1, "tools/call", `"name":"debug_health_check"`), modernHeaders("tools/call"), 400, -32020, "Mcp-Name is missing"},
		{"Mcp-Name differs", call(1, "tools/call", `"name":"debug_health_check"`), modernHeaders("tools/call", "debug_list_streams"), 400, -32020, "does not match"},
		{"Mcp-Name base64 of another name", call(1, "tools/call", `"name":"debug_health_check"`), modernHeaders("tools/call", b64("x")), 400, -32020, "does not match"},
		{"Mcp-Name broken base64", call(1, "tools/call", `"name":"debug_health_check"`), modernHeaders("tools/call", "=?base64?!!!?="), 400, -32020, "invalid =?base64?"},
		{"Mcp-Name for resources/read differs", call(1, "resources/read", `"uri":"debug://session"`), modernHeaders("resources/read", "debug://redux/state"), 400, -32020, "does not match"},
		{"unsupported version", `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2099-01-01","io.modelcontextprotocol/clientCapabilities":{}}}}`,
			[]string{"MCP-Protocol-Version: 2099-01-01", "Mcp-Method: tools/list"}, 400, -32022, "2099-01-01"},
		{"clientCapabilities missing", `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`,
			modernHeaders("tools/list"), 400, -32602, "clientCapabilities"},
		{"version header without _meta", `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, modernHeaders("tools/list"), 400, -32602, "protocolVersion\" is required"},
		{"unknown method", call(1, "tools/nothing", ""), modernHeaders("tools/nothing"), 404, -32601, "tools/nothing"},
		{"ping was removed", call(1, "ping", ""), modernHeaders("ping"), 404, -32601, "removed in 2026-07-28"},
		{"resources/subscribe was removed", call(1, "resources/subscribe", `"uri":"debug://session"`), modernHeaders("resources/subscribe"), 404, -32601, "subscriptions/listen"},
		{"a session header is ignored", call(1, "tools/list", ""), append(modernHeaders("tools/list"), "MCP-Session-Id: nonesuch"), 200, 0, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, msg := h.post(tt.body, tt.headers...)
			if resp.StatusCode != tt.wantStatus {
				t.Errorf("status = %d, want %d; body %v", resp.StatusCode, tt.wantStatus, msg)
			}
			if got := errorCode(msg); got != tt.wantCode {
				t.Errorf("error code = %d, want %d; body %v", got, tt.wantCode, msg)
			}
			if !strings.Contains(errorMessage(msg), tt.wantInMsg) {
				t.Errorf("error message = %q, want it to contain %q", errorMessage(msg), tt.wantInMsg)
			}
			if tt.wantCode == 0 {
				result, _ := msg["result"].(map[string]any)
				if result["resultType"] != "complete" {
					t.Errorf("result has resultType %v, want \"complete\"", result["resultType"])
				}
			}
			if resp.Header.Get("MCP-Session-Id") != "" {
				t.Errorf("a 2026-07-28 reply carries MCP-Session-Id %q", resp.Header.Get("MCP-Session-Id"))
			}
		})
	}

	t.Run("unsupported version names the supported ones", func(t *testing.T) {
		_, msg := h.post(`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2099-01-01","io.modelcontextprotocol/clientCapabilities":{}}}}`,
			"MCP-Protocol-Version: 2099-01-01", "Mcp-Method: tools/list")
		data := msg["error"].(map[string]any)["data"].(map[string]any)
		if data["requested"] != "2099-01-01" || fmt.Sprint(data["supported"]) != "[2026-07-28 2025-11-25 2025-06-18 2025-03-26 2024-11-05]" {
			t.Errorf("data = %v", data)
		}
	})
	t.Run("notification", func(t *testing.T) {
		resp, msg := h.post(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1,`+modernMeta+`}}`, modernHeaders("notifications/cancelled")...)
		if resp.StatusCode != http.StatusAccepted || msg != nil {
			t.Errorf("status %d, body %v; want 202 and no body", resp.StatusCode, msg)
		}
	})
	for _, method := range []string{http.MethodGet, http.MethodDelete} {
		t.Run(method+" is not part of 2026-07-28", func(t *testing.T) {
			req, _ := http.NewRequestWithContext(t.Context(), method, h.url, nil)
			req.Header.Set("MCP-Protocol-Version", "2026-07-28")
			req.Header.Set("Accept", "text/event-stream")
			resp, _ := h.do(req)
			if resp.StatusCode != http.StatusMethodNotAllowed {
				t.Errorf("status = %d, want 405", resp.StatusCode)
			}
		})
	}
}

const initializeBody = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`

// initialize opens a legacy session and returns its id.
func (h *testHTTP) initialize() string {
	h.t.Helper()
	resp, msg := h.post(initializeBody)
	id := resp.Header.Get("MCP-Session-Id")
	if resp.StatusCode != 200 || id == "" || errorCode(msg) != 0 {
		h.t.Fatalf("initialize: status %d, session %q, body %v", resp.StatusCode, id, msg)
	}
	if !regexp.MustCompile(`^[\x21-\x7e]{16,}$`).MatchString(id) {
		h.t.Errorf("session id %q is not visible ASCII of at least 16 characters", id)
	}
	resp, _ = h.post(`{"jsonrpc":"2.0","method":"notifications/initialized"}`, "MCP-Session-Id: "+id, "MCP-Protocol-Version: 2025-11-25")
	if resp.StatusCode != http.StatusAccepted {
		h.t.Fatalf("notifications/initialized: status %d, want 202", resp.StatusCode)
	}
	return id
}

func TestHTTPLegacySessions(t *testing.T) {
	h := newTestHTTP(t, testConfig(t))
	id := h.initialize()
	other := h.initialize()
	if id == other {
		t.Fatalf("two sessions share the id %q", id)
	}
	toolsList := `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`
	tests := []struct {
		name       string
		body       string
		headers    []string
		wantStatus int
		wantCode   int
	}{
		{"in the session", toolsList, []string{"MCP-Session-Id: " + id, "MCP-Protocol-Version: 2025-11-25"}, 200, 0},
		{"without MCP-Protocol-Version (taken as 2025-03-26)", toolsList, []string{"MCP-Session-Id: " + id}, 200, 0},
		{"unknown MCP-Protocol-Version", toolsList, []string{"MCP-Session-Id: " + id, "MCP-Protocol-Version: 1999-01-01"}, 400, -32600},
		{"no session header", toolsList, nil, 400, -32600},
		{"unknown session", toolsList, []string{"MCP-Session-Id: nonesuch"}, 404, -32600},
		{"a client's response is accepted", `{"jsonrpc":"2.0","id":7,"result":{}}`, []string{"MCP-Session-Id: " + id}, 202, 0},
		{"initialize refused with a bad version opens no session", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`, nil, 200, -32602},
		{"a notification without a session", `{"jsonrpc":"2.0","method":"notifications/initialized"}`, nil, 400, -32600},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, msg := h.post(tt.body, tt.headers...)
			if resp.StatusCode != tt.wantStatus || errorCode(msg) != tt.wantCode {
				t.Errorf("status %d, code %d; want %d, %d; body %v", resp.StatusCode, errorCode(msg), tt.wantStatus, tt.wantCode, msg)
			}
			if tt.wantCode != 0 && resp.Header.Get("MCP-Session-Id") != "" {
				t.Errorf("an error reply opened session %q", resp.Header.Get("MCP-Session-Id"))
			}
		})
	}

	t.Run("DELETE ends the session, not the others", func(t *testing.T) {
		del := func(sid string) int {
			req, _ := http.NewRequestWithContext(t.Context(), http.MethodDelete, h.url, nil)
			req.Header.Set("MCP-Session-Id", sid)
			resp, _ := h.do(req)
			return resp.StatusCode
		}
		if got := del(id); got != http.StatusNoContent {
			t.Errorf("DELETE: status %d, want 204", got)
		}
		if got := del(id); got != http.StatusNotFound {
			t.Errorf("second DELETE: status %d, want 404", got)
		}
		if resp, _ := h.post(toolsList, "MCP-Session-Id: "+id); resp.StatusCode != http.StatusNotFound {
			t.Errorf("POST after DELETE: status %d, want 404", resp.StatusCode)
		}
		if resp, msg := h.post(toolsList, "MCP-Session-Id: "+other); resp.StatusCode != 200 || errorCode(msg) != 0 {
			t.Errorf("other session after DELETE: status %d, body %v", resp.StatusCode, msg)
		}
	})
}

func TestHTTPRefusals(t *testing.T) {
	t.Parallel()
	cfg := testConfig(t)
	h := newTestHTTP(t, cfg)
	host := strings.TrimPrefix(strings.TrimSuffix(h.url, mcpPath), "http://")
	tests := []struct {
		name       string
		method     string
		path       string
		body       string
		headers    []string
		wantStatus int
		wantInBody string
	}{
		{"foreign Origin", "POST", mcpPath, initializeBody, []string{"Origin: https://evil.example"}, 403, "Origin"},
		{"Origin of the same host", "POST", mcpPath, initializeBody, []string{"Origin: http://" + host}, 200, ""},
		{"rebinding Host", "POST", mcpPath, initializeBody, []string{"Host: evil.example"}, 403, "Host"},
		{"other path", "POST", "/", initializeBody, nil, 404, "/mcp"},
		{"PUT", "PUT", mcpPath, initializeBody, nil, 405, "PUT"},
		{"Content-Type text/plain", "POST", mcpPath, initializeBody, []string{"Content-Type: ", "Content-Type: text/plain"}, 415, "Content-Type"},
		{"Content-Type with charset", "POST", mcpPath, initializeBody, []string{"Content-Type: ", "Content-Type: application/json; charset=utf-8"}, 200, ""},
		{"Accept without event-stream", "POST", mcpPath, initializeBody, []string{"Accept: ", "Accept: application/json"}, 406, "text/event-stream"},
		{"Accept */*", "POST", mcpPath, initializeBody, []string{"Accept: ", "Accept: */*"}, 200, ""},
		{"batch", "POST", mcpPath, "[" + initializeBody + "]", nil, 400, "batches"},
		{"empty body", "POST", mcpPath, "", nil, 400, "empty body"},
		{"not JSON", "POST", mcpPath, `{"jsonrpc":`, nil, 400, "parse error"},
		{"too deep", "POST", mcpPath, strings.Repeat("[", 200) + strings.Repeat("]", 200), nil, 400, "nesting deeper than 128"},
		{"member name in capitals", "POST", mcpPath, `{"jsonrpc":"2.0","id":1,"METHOD":"initialize"}`, nil, 400, `missing \"method\"`},
		{"duplicate member", "POST", mcpPath, `{"jsonrpc":"2.0","id":1,"method":"ping","method":"initialize"}`, nil, 400, "appears twice"},
		{"id echoed byte for byte", "POST", mcpPath, `{"jsonrpc":"2.0","id":1.50,"method":"tools/list"}`, nil, 400, `"id":1.50`},
		{"GET without a session", "GET", mcpPath, "", []string{"Accept: text/event-stream"}, 400, "MCP-Session-Id"},
		{"GET without Accept event-stream", "GET", mcpPath, "", []string{"Accept: ", "Accept: application/json"}, 406, "text/event-stream"},
		{"DELETE without a session", "DELETE", mcpPath, "", nil, 400, "MCP-Session-Id"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req, err := http.NewRequestWithContext(t.Context(), tt.method, strings.TrimSuffix(h.url, mcpPath)+tt.path, strings.NewReader(tt.body))
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			for _, p := range tt.headers {
				if v, ok := strings.CutPrefix(p, "Host: "); ok {
					req.Host = v
					continue
				}
				setHeaders(req, []string{p})
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != tt.wantStatus {
				t.Errorf("status = %d, want %d; body %s", resp.StatusCode, tt.wantStatus, body)
			}
			if !strings.Contains(string(body), tt.wantInBody) {
				t.Errorf("body %s does not contain %q", body, tt.wantInBody)
			}
		})
	}

	t.Run("body over the limit", func(t *testing.T) {
		big := `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"pad":"` + strings.Repeat("x", maxHTTPBodyBytes) + `"}}`
		resp, msg := h.post(big)
		if resp.StatusCode != http.StatusRequestEntityTooLarge || !strings.Contains(errorMessage(msg), "16777216") {
			t.Errorf("status %d, body %v; want 413 naming 16777216", resp.StatusCode, msg)
		}
	})
}

func TestHTTPBearerToken(t *testing.T) {
	cfg := testConfig(t)
	cfg.HTTPToken = "s3cret"
	h := newTestHTTP(t, cfg)
	for _, tt := range []struct {
		name, auth string
		want       int
	}{
		{"none", "", 401},
		{"wrong", "Authorization: Bearer nope", 401},
		{"other scheme", "Authorization: Basic s3cret", 401},
		{"right", "Authorization: Bearer s3cret", 200},
		{"scheme in other case", "Authorization: bearer s3cret", 200},
	} {
		t.Run(tt.name, func(t *testing.T) {
			resp, _ := h.post(initializeBody, tt.auth)
			if resp.StatusCode != tt.want {
				t.Errorf("status %d, want %d", resp.StatusCode, tt.want)
			}
			if tt.want == 401 && !strings.HasPrefix(resp.Header.Get("WWW-Authenticate"), "Bearer") {
				t.Errorf("WWW-Authenticate = %q, want a Bearer challenge", resp.Header.Get("WWW-Authenticate"))
			}
		})
	}
}

// sseStream reads one SSE response's data lines as they come.
type sseStream struct {
	resp   *http.Response
	events chan map[string]any
}

func openSSE(t *testing.T, req *http.Request) *sseStream {
	t.Helper()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" {
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		t.Fatalf("status %d, Content-Type %q, body %s; want an event stream", resp.StatusCode, resp.Header.Get("Content-Type"), body)
	}
	s := &sseStream{resp: resp, events: make(chan map[string]any, 64)}
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer close(s.events)
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			if data, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
				var msg map[string]any
				if json.Unmarshal([]byte(data), &msg) != nil {
					t.Errorf("event data is not JSON: %q", data)
					continue
				}
				s.events <- msg
			}
		}
	}()
	t.Cleanup(func() {
		resp.Body.Close()
		<-done
	})
	return s
}

// next returns the next event; the deadline only keeps a broken server
// from hanging the test.
func (s *sseStream) next(t *testing.T) map[string]any {
	t.Helper()
	select {
	case msg, ok := <-s.events:
		if !ok {
			t.Fatal("stream ended")
		}
		return msg
	case <-time.After(10 * time.Second):
		t.Fatal("no event within 10 s")
		return nil
	}
}

func (s *sseStream) ended(t *testing.T) {
	t.Helper()
	select {
	case msg, ok := <-s.events:
		if ok {
			t.Fatalf("unexpected event %v", msg)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("stream still open after 10 s")
	}
}

func TestHTTPLegacyGETStreams(t *testing.T) {
	h := newTestHTTP(t, testConfig(t))
	get := func(sid string) *http.Request {
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, h.url, nil)
		req.Header.Set("Accept", "text/event-stream")
		req.Header.Set("MCP-Session-Id", sid)
		return req
	}
	a, b := h.initialize(), h.initialize()
	streamA, streamB := openSSE(t, get(a)), openSSE(t, get(b))

	resp, _ := h.do(get(a))
	if resp.StatusCode != http.StatusConflict {
		t.Errorf("second GET stream of a session: status %d, want 409", resp.StatusCode)
	}
	// Subscribe only a to the session resource.
	if resp, msg := h.post(`{"jsonrpc":"2.0","id":2,"method":"resources/subscribe","params":{"uri":"debug://session/current"}}`, "MCP-Session-Id: "+a); resp.StatusCode != 200 || errorCode(msg) != 0 {
		t.Fatalf("subscribe: %d %v", resp.StatusCode, msg)
	}
	h.srv.notifyClient("notifications/resources/list_changed", struct{}{})
	h.srv.notifyClient("notifications/resources/updated", map[string]string{"uri": uriSession})
	for name, s := range map[string]*sseStream{"a": streamA, "b": streamB} {
		if got := s.next(t)["method"]; got != "notifications/resources/list_changed" {
			t.Errorf("session %s got %v first, want list_changed", name, got)
		}
	}
	if got := streamA.next(t); got["method"] != "notifications/resources/updated" {
		t.Errorf("session a got %v, want resources/updated", got)
	}
	// b did not subscribe: the next thing it sees is the end of its stream.
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodDelete, h.url, nil)
	req.Header.Set("MCP-Session-Id", b)
	h.do(req)
	streamB.ended(t)
}

func TestHTTPListenStream(t *testing.T) {
	h := newTestHTTP(t, testConfig(t))
	body := `{"jsonrpc":"2.0","id":"L1","method":"subscriptions/listen","params":{"notifications":{"resourcesListChanged":true,"toolsListChanged":true,"resourceSubscriptions":["debug://session/current","nope://x"]},` + modernMeta + `}}`
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, h.url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	setHeaders(req, modernHeaders("subscriptions/listen"))
	s := openSSE(t, req)

	ack := s.next(t)
	want := `{"_meta":{"io.modelcontextprotocol/subscriptionId":"L1"},"notifications":{"resourceSubscriptions":["debug://session/current"],"resourcesListChanged":true}}`
	if ack["method"] != "notifications/subscriptions/acknowledged" || mustJSON(t, ack["params"]) != want {
		t.Errorf("first event = %v, want the acknowledgement %s", ack, want)
	}
	h.srv.notifyClient("notifications/resources/list_changed", struct{}{})
	h.srv.notifyClient("notifications/resources/updated", map[string]string{"uri": "debug://redux/state"}) // not subscribed
	h.srv.notifyClient("notifications/resources/updated", map[string]string{"uri": uriSession})
	for _, want := range []string{
		`{"jsonrpc":"2.0","method":"notifications/resources/list_changed","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":"L1"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/resources/updated","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":"L1"},"uri":"debug://session/current"}}`,
	} {
		if got := mustJSON(t, s.next(t)); got != want {
			t.Errorf("event %s, want %s", got, want)
		}
	}
	// Shutdown ends the subscription gracefully with its result.
	h.tr.close()
	final := s.next(t)
	result, _ := final["result"].(map[string]any)
	meta, _ := result["_meta"].(map[string]any)
	if final["id"] != "L1" || result["resultType"] != "complete" || meta[metaSubscriptionID] != "L1" {
		t.Errorf("closing event = %v, want the result of L1 tagged with its subscription id", final)
	}
	s.ended(t)
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

func TestHTTPSessionBound(t *testing.T) {
	h := newTestHTTP(t, testConfig(t))
	for range maxHTTPSessions {
		h.initialize()
	}
	resp, msg := h.post(initializeBody)
	if resp.StatusCode != http.StatusServiceUnavailable || !strings.Contains(errorMessage(msg), "64 sessions") {
		t.Errorf("session over the bound: status %d, body %v; want 503 naming 64 sessions", resp.StatusCode, msg)
	}
}

func TestHTTPStreamBound(t *testing.T) {
	h := newTestHTTP(t, testConfig(t))
	listen := func(id int) *http.Request {
		body := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"subscriptions/listen","params":{"notifications":{},%s}}`, id, modernMeta)
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, h.url, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		setHeaders(req, modernHeaders("subscriptions/listen"))
		return req
	}
	for i := range maxHTTPStreams {
		s := openSSE(t, listen(i))
		s.next(t) // acknowledged: the stream is open
	}
	resp, msg := h.do(listen(99))
	if resp.StatusCode != http.StatusServiceUnavailable || !strings.Contains(errorMessage(msg), "32 streams") {
		t.Errorf("stream over the bound: status %d, body %v; want 503 naming 32 streams", resp.StatusCode, msg)
	}
}

// TestHTTPServe runs the whole program with MCP_TRANSPORT=http on a real
// loopback port: stdin is not read, a signal (ctx) stops it, and an open
// stream does not hold the shutdown.
func TestHTTPServe(t *testing.T) {
	cfg := testConfig(t)
	cfg.Transport, cfg.HTTPAddr = "http", "127.0.0.1:0"
	stderr := &lockedBuffer{}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- serve(ctx, cfg, strings.NewReader(""), io.Discard, stderr) }()

	urlRE := regexp.MustCompile(`url=(http://127\.0\.0\.1:\d+/mcp)`)
	var url string
	for deadline := time.Now().Add(10 * time.Second); url == "" && time.Now().Before(deadline); {
		if m := urlRE.FindStringSubmatch(stderr.String()); m != nil {
			url = m[1]
		} else {
			time.Sleep(5 * time.Millisecond) // polling the log, not synchronising
		}
	}
	if url == "" {
		t.Fatalf("no HTTP url logged; stderr:\n%s", stderr.String())
	}
	h := &testHTTP{t: t, url: url}
	resp, msg := h.post(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"debug_health_check",`+modernMeta+`}}`,
		modernHeaders("tools/call", "debug_health_check")...)
	if resp.StatusCode != 200 || errorCode(msg) != 0 {
		t.Fatalf("tools/call: %d %v", resp.StatusCode, msg)
	}
	sid := h.initialize()
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, url, nil)
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("MCP-Session-Id", sid)
	stream := openSSE(t, req)

	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("serve: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("serve did not return after cancel with a stream open")
	}
	stream.ended(t)
}

// FuzzHTTPPost sends arbitrary bodies to the endpoint. Whatever the body,
// the answer is 202 with no body or one JSON-RPC response with exactly one
// of result and error, and an id, when there is one, is the request's id
// byte for byte, as an independent decoder reads it.
func FuzzHTTPPost(f *testing.F) {
	for _, seed := range []string{
		initializeBody,
		`{"jsonrpc":"2.0","id":"a\u00e9","method":"tools/list","params":{` + modernMeta + `}}`,
		`{"jsonrpc":"2.0","id":-1e3,"method":"ping"}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":1,"result":{}}`,
		`[{"jsonrpc":"2.0","id":1,"method":"ping"}]`,
		`{"jsonrpc":"2.0","id":1,"id":2,"method":"ping"}`,
		`{"jsonrpc":"2.0","id":null,"method":"ping"}`,
		`{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{"uri":"debug://x",` + modernMeta + `}}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":7}}}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":[]}`,
		"{\"jsonrpc\":\"2.0\",\"id\":\"\xff\",\"method\":\"ping\"}",
	} {
		f.Add(seed)
	}
	cfg, err := loadConfig(nil, func(string) string { return "" })
	if err != nil {
		f.Fatal(err)
	}
	tr, _ := newTestTransport(cfg)
	f.Cleanup(tr.close)
	f.Fuzz(func(t *testing.T, body string) {
		req := httptest.NewRequest(http.MethodPost, mcpPath, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("MCP-Protocol-Version", "2026-07-28")
		rec := httptest.NewRecorder()
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		tr.ServeHTTP(rec, req.WithContext(ctx))
		out := rec.Body.Bytes()
		if rec.Code == http.StatusAccepted {
			if len(out) != 0 {
				t.Fatalf("202 with a body: %q", out)
			}
			return
		}
		var resp map[string]json.RawMessage
		if err := json.Unmarshal(out, &resp); err != nil {
			t.Fatalf("status %d with a body that is not one JSON object: %v: %q", rec.Code, err, out)
		}
		_, hasResult := resp["result"]
		_, hasError := resp["error"]
		if hasResult == hasError || string(resp["jsonrpc"]) != `"2.0"` {
			t.Fatalf("not a JSON-RPC response: %s", out)
		}
		gotID, hasID := resp["id"]
		if !hasID {
			return
		}
		var in map[string]json.RawMessage
		if json.Unmarshal([]byte(body), &in) != nil {
			t.Fatalf("reply carries id %s for a body that is not an object: %q", gotID, body)
		}
		wantID := in["id"]
		if string(canonicalID(bytes.TrimSpace(wantID))) != string(gotID) {
			t.Fatalf("id %s in the reply, %s in the request", gotID, wantID)
		}
	})
}

// BenchmarkHTTPModernToolsList measures one stateless 2026-07-28 request
// over a loopback connection, headers checked and result reshaped.
func BenchmarkHTTPModernToolsList(b *testing.B) {
	cfg, err := loadConfig(nil, func(string) string { return "" })
	if err != nil {
		b.Fatal(err)
	}
	tr, _ := newTestTransport(cfg)
	hs := httptest.NewServer(tr)
	defer hs.Close()
	defer tr.close()
	body := `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{` + modernMeta + `}}`
	b.ReportAllocs()
	for b.Loop() {
		req, _ := http.NewRequest(http.MethodPost, hs.URL+mcpPath, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("MCP-Protocol-Version", "2026-07-28")
		req.Header.Set("Mcp-Method", "tools/list")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		n, _ := io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 {
			b.Fatalf("status %d", resp.StatusCode)
		}
		b.SetBytes(n)
	}
}

// TestHTTPRequestBound holds the only request slot with an open listen
// stream: the next POST is refused, naming the bound.
func TestHTTPRequestBound(t *testing.T) {
	h := newTestHTTP(t, testConfig(t))
	h.tr.requests = make(chan struct{}, 1)
	body := `{"jsonrpc":"2.0","id":1,"method":"subscriptions/listen","params":{"notifications":{},` + modernMeta + `}}`
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, h.url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	setHeaders(req, modernHeaders("subscriptions/listen"))
	openSSE(t, req).next(t)
	resp, msg := h.post(initializeBody)
	if resp.StatusCode != http.StatusServiceUnavailable || !strings.Contains(errorMessage(msg), "1 requests are being served") {
		t.Errorf("status %d, body %v; want 503 naming the bound", resp.StatusCode, msg)
	}
}

// TestHTTPInspectorProbe replays the first POST of the MCP Inspector CLI
// 2.12.0 (--protocol-era auto or modern), headers and body as captured: a
// modern answer keeps it on 2026-07-28 rather than falling back.
func TestHTTPInspectorProbe(t *testing.T) {
	h := newTestHTTP(t, testConfig(t))
	body := `{"jsonrpc":"2.0","id":"server-discover-probe-1","method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"inspector-cli","version":"2.12.0"},"io.modelcontextprotocol/clientCapabilities":{"roots":{"listChanged":true},"extensions":{"io.modelcontextprotocol/tasks":{},"io.modelcontextprotocol/skills":{}}}}}}`
	resp, msg := h.post(body, "Accept: ", "Accept: application/json, text/event-stream", "mcp-protocol-version: 2026-07-28",
		"mcp-method: server/discover", "accept-language: *", "sec-fetch-mode: cors", "user-agent: node")
	result, _ := msg["result"].(map[string]any)
	versions, _ := result["supportedVersions"].([]any)
	if resp.StatusCode != 200 || msg["id"] != "server-discover-probe-1" || len(versions) == 0 || versions[0] != "2026-07-28" {
		t.Errorf("status %d, reply %v; want 200 and a discover result listing 2026-07-28 first", resp.StatusCode, msg)
	}
}
