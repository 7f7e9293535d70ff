package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
)

// freePort returns a loopback port nothing listens on right now.
func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// healthOf calls debug_health_check and returns its structured content.
func healthOf(ts *testServer, id int) map[string]any {
	ts.t.Helper()
	reply := ts.call(id, "tools/call", map[string]any{"name": "debug_health_check", "arguments": map[string]any{}})
	result, _ := reply["result"].(map[string]any)
	health, _ := result["structuredContent"].(map[string]any)
	if health == nil {
		ts.t.Fatalf("health check without structured content: %v", reply)
	}
	return health
}

// TestRelayToPortHolderAndTakeover runs two processes' worth of server on
// one adapter port: the second cannot bind it and answers its client from
// the first, which holds the app; when the first exits, the second takes
// the port over and the app reconnects to it, with no restart of its client.
func TestRelayToPortHolderAndTakeover(t *testing.T) {
	port := freePort(t)
	cfg := testConfig(t)
	cfg.WSPort = port
	cfg.Tune.BindRetry = 20 * time.Millisecond // the takeover waits for the next bind attempt

	holderCtx, stopHolder := context.WithCancel(context.Background())
	defer stopHolder()
	holderIn, holderInW := io.Pipe()
	defer holderInW.Close()
	holderDone := make(chan error, 1)
	go func() { holderDone <- serve(holderCtx, cfg, holderIn, io.Discard, &lockedBuffer{}) }()

	appCtx, stopApp := context.WithCancel(context.Background())
	appDone := make(chan struct{})
	go func() {
		defer close(appDone)
		// Steps every 20 ms: its events drive resource updates.
		newDemoApp(demoOptions{Seed: 7}).run(appCtx, fmt.Sprintf("ws://127.0.0.1:%d/", port), 20*time.Millisecond, nil)
	}()
	defer func() {
		stopApp()
		<-appDone
	}()

	// The holder must hold the port before the newcomer starts.
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if conn, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", port)); err == nil {
			conn.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the holder did not bind within 20 s")
		}
	}
	newcomer := startServer(t, cfg)
	newcomer.initialize()
	id := 1
	// Polling with a deadline: the holder binds and the app connects on
	// their own schedule.
	waitFor := func(what string, ok func(health map[string]any) bool) map[string]any {
		t.Helper()
		for deadline := time.Now().Add(20 * time.Second); ; {
			id++
			health := healthOf(newcomer, id)
			if ok(health) {
				return health
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: not within 20 s; last health %v", what, health)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	waitFor("the app answers through the holder", func(h map[string]any) bool { return h["connected"] == true })

	if !strings.Contains(newcomer.stderr.String(), "cannot listen for app adapters") {
		t.Fatalf("the newcomer holds the port itself; stderr:\n%s", newcomer.stderr.String())
	}
	// The health check says who holds the app and how it is reached.
	id++
	relayNote, _ := healthOf(newcomer, id)["server"].(map[string]any)["relay"].(map[string]any)
	if want := fmt.Sprintf("http://127.0.0.1:%d/mcp", port); relayNote["via"] != want || relayNote["holderPid"] == "" ||
		!strings.Contains(fmt.Sprint(relayNote["listenError"]), "address already in use") {
		t.Errorf("server.relay = %v, want via %s, the holder's pid and why this process cannot bind", relayNote, want)
	}

	// A full answer from the app, through the relay.
	id++
	reply := newcomer.call(id, "tools/call", map[string]any{"name": "debug_get_state_path", "arguments": map[string]any{"path": "auth"}})
	result, _ := reply["result"].(map[string]any)
	if result == nil || result["isError"] == true {
		t.Fatalf("state through the relay: %v", reply)
	}
	for _, member := range []string{"resultType", "ttlMs", "_meta"} {
		if _, ok := result[member]; ok {
			t.Errorf("a legacy client got the 2026-07-28 member %q through the relay", member)
		}
	}
	id++
	reply = newcomer.call(id, "resources/read", map[string]any{"uri": "debug://nowhere"})
	if code := errorCode(reply); code != -32002 {
		t.Errorf("resource not found through the relay: code %d, want the legacy -32002", code)
	}

	// A subscription made here is served from the holder's events.
	id++
	if reply := newcomer.call(id, "resources/subscribe", map[string]any{"uri": uriRedux}); errorCode(reply) != 0 {
		t.Fatalf("subscribe: %v", reply)
	}
	for {
		var msg map[string]any
		if err := json.Unmarshal([]byte(newcomer.next()), &msg); err != nil {
			t.Fatal(err)
		}
		if params, _ := msg["params"].(map[string]any); msg["method"] == "notifications/resources/updated" && params["uri"] == uriRedux {
			break
		}
	}

	// The holder exits; the newcomer binds the port and the app comes back to it.
	stopHolder()
	if err := <-holderDone; err != nil {
		t.Errorf("holder: %v", err)
	}
	health := waitFor("takeover", func(h map[string]any) bool {
		server, _ := h["server"].(map[string]any)
		return h["connected"] == true && server["listening"] == true
	})
	server := health["server"].(map[string]any)
	if !strings.HasSuffix(fmt.Sprint(server["wsUrl"]), fmt.Sprintf(":%d/", port)) {
		t.Errorf("after takeover the newcomer listens on %v, want port %d", server["wsUrl"], port)
	}
	if _, relayed := server["relay"]; relayed {
		t.Errorf("after takeover the health check still says it is relayed: %v", server)
	}
}

// TestRelayEndpointLoopbackOnly refuses MCP on the adapter port to callers
// that are not on this machine.
func TestRelayEndpointLoopbackOnly(t *testing.T) {
	tr, _ := newTestTransport(testConfig(t))
	defer tr.close()
	h := relayEndpoint(tr, "test")
	for _, tt := range []struct {
		remote string
		want   int
	}{
		{"127.0.0.1:5000", 200},
		{"[::1]:5000", 200},
		{"192.168.1.20:5000", 403},
		{"garbage", 403},
	} {
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, mcpPath, strings.NewReader(initializeBody))
		req.RemoteAddr = tt.remote
		req.Host = "127.0.0.1:19850"
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		rec := &recorder{header: http.Header{}}
		h.ServeHTTP(rec, req)
		if rec.status != tt.want {
			t.Errorf("from %s: status %d, want %d", tt.remote, rec.status, tt.want)
		}
	}
}

type recorder struct {
	header http.Header
	status int
	body   strings.Builder
}

func (r *recorder) Header() http.Header { return r.header }
func (r *recorder) WriteHeader(code int) {
	if r.status == 0 {
		r.status = code
	}
}
func (r *recorder) Write(p []byte) (int, error) {
	r.WriteHeader(200)
	return r.body.Write(p)
}

func TestLegacyResultDropsModernMembers(t *testing.T) {
	in := `{"resultType":"complete","ttlMs":0,"cacheScope":"private","_meta":{"x":1},"contents":[{"uri":"a"}],"isError":false}`
	got := string(legacyResult([]byte(in)))
	if want := `{"contents":[{"uri":"a"}],"isError":false}`; got != want {
		t.Errorf("legacyResult = %s, want %s", got, want)
	}
	var v any
	if json.Unmarshal([]byte(got), &v) != nil {
		t.Errorf("not JSON: %s", got)
	}
}

func TestRelayName(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"debug_health_check", "debug_health_check"},
		{"débug", "=?base64?ZMOpYnVn?="},
		{" padded ", "=?base64?IHBhZGRlZCA=?="},
		{"=?base64?literal?=", "=?base64?PT9iYXNlNjQ/bGl0ZXJhbD89?="},
	} {
		raw, _ := json.Marshal(tt.in)
		got, _ := relayName("tools/call", map[string]json.RawMessage{"name": raw})
		if got != tt.want {
			t.Errorf("relayName(%q) = %q, want %q", tt.in, got, tt.want)
		}
		if back, ok := decodeHeaderValue(got); !ok || back != tt.in {
			t.Errorf("decodeHeaderValue(%q) = %q, %v; want the name back", got, back, ok)
		}
	}
}

// TestHolderCheck: the holder of the adapter port is asked once, with a
// deadline; the verdict is remembered for its TTL and then renewed in the
// background while the old one still answers; a caller that may not wait
// (the health check) never waits, even for the first verdict.
func TestHolderCheck(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const timeout, ttl = time.Second, 10 * time.Second
		var probes atomic.Int32
		var answering atomic.Bool
		h := newHolderCheck(func(ctx context.Context) bool {
			probes.Add(1)
			if answering.Load() {
				return true
			}
			<-ctx.Done() // a socket that never answers
			return false
		}, timeout, ttl)
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() {
			defer close(done)
			h.run(ctx)
		}()

		start := time.Now()
		if h.verdict(ctx, false) {
			t.Error("no verdict yet, and an urgent caller was told the holder answers")
		}
		if time.Since(start) != 0 {
			t.Errorf("an urgent caller waited %v for the first verdict", time.Since(start))
		}
		if h.verdict(ctx, true) {
			t.Error("a silent holder was found to answer")
		}
		if waited := time.Since(start); waited != timeout {
			t.Errorf("the first verdict took %v, want the probe's deadline %v", waited, timeout)
		}
		for range 100 {
			if h.verdict(ctx, true) || h.verdict(ctx, false) {
				t.Fatal("a remembered silent holder was found to answer")
			}
		}
		if n := probes.Load(); n != 1 || time.Since(start) != timeout {
			t.Errorf("200 calls within the verdict's life: %d probes, %v waited; want 1 probe and no more waiting", n, time.Since(start)-timeout)
		}

		// The verdict grows old; the holder has started answering. The old
		// verdict answers at once while the background probe renews it.
		time.Sleep(ttl)
		answering.Store(true)
		before := time.Now()
		if h.verdict(ctx, true) {
			t.Error("an old verdict changed without a probe")
		}
		if time.Since(before) != 0 {
			t.Error("a caller waited for the renewal of an old verdict")
		}
		synctest.Wait()
		if !h.verdict(ctx, false) || probes.Load() != 2 {
			t.Errorf("after the renewal: verdict %v with %d probes, want true with 2", h.verdict(ctx, false), probes.Load())
		}
		// A relayed request that fails is a verdict too.
		h.record(false)
		if h.verdict(ctx, false) {
			t.Error("a failed relay did not count")
		}
		// A relayed health check that timed out asks again at once; the
		// verdict stands until the probe says otherwise.
		h.record(true)
		answering.Store(false)
		h.recheck()
		if !h.verdict(ctx, false) {
			t.Error("a recheck dropped the verdict before its probe ended")
		}
		time.Sleep(timeout)
		synctest.Wait()
		if h.verdict(ctx, false) || probes.Load() != 3 {
			t.Errorf("after the recheck: verdict %v with %d probes, want false with 3", h.verdict(ctx, false), probes.Load())
		}
		cancel()
		<-done
	})
}

// TestRelayEventsReadsPastLongLine: a line of the listen stream over the
// bound is skipped, and the notifications after it are still relayed.
func TestRelayEventsReadsPastLongLine(t *testing.T) {
	stream := io.MultiReader(
		strings.NewReader(`data: {"method":"notifications/resources/updated","params":{"uri":"a://1"}}`+"\n\ndata: "),
		&endlessReader{n: maxHTTPBodyBytes + 10},
		strings.NewReader("\n\n"+`data: {"method":"notifications/resources/updated","params":{"uri":"a://2"}}`+"\n\n"))
	var got []string
	relayEvents(stream, func(method, uri string) { got = append(got, method+" "+uri) })
	want := []string{"notifications/resources/updated a://1", "notifications/resources/updated a://2"}
	if !slices.Equal(got, want) {
		t.Errorf("relayed %q, want %q", got, want)
	}
}

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
