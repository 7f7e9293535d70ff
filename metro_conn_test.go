package main

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// startMetroE2E runs the whole program with the Metro link pointed at a
// stand-in that lists one React Native page.
func startMetroE2E(t *testing.T) (*e2e, *metroStandIn) {
	t.Helper()
	m := startMetroStandIn(t)
	m.setPages(standInPage("1", "com.example.shop", "Pixel 8", "dev-a", true))
	cfg := testConfig(t)
	cfg.MetroURL = m.srv.URL
	cfg.Tune.MetroPoll = 5 * time.Millisecond
	ts := startServer(t, cfg)
	ts.initialize()
	return &e2e{testServer: ts, nextID: 100}, m
}

// metroAttached waits until the health check lists the Metro page attached
// and its session live.
func metroAttached(e *e2e) map[string]any {
	e.t.Helper()
	return e.waitHealthRaw(func(h map[string]any) bool {
		metro, _ := h["server"].(map[string]any)["metro"].(map[string]any)
		pages, _ := metro["pages"].([]any)
		sessions, _ := h["sessions"].([]any)
		if len(pages) != 1 || pages[0].(map[string]any)["attached"] != true {
			return false
		}
		for _, s := range sessions {
			if s := s.(map[string]any); s["via"] == "metro" && s["connected"] == true {
				return true
			}
		}
		return false
	})
}

// TestMetroThroughTheServer: with nothing in the app, the health check
// lists it, debug_get_logs returns its console output and its uncaught
// exception with the stack, debug_get_network its requests, and a state
// tool says at once that state does not come through Metro.
func TestMetroThroughTheServer(t *testing.T) {
	t.Parallel()
	e, m := startMetroE2E(t)
	h := metroAttached(e)
	metro := h["server"].(map[string]any)["metro"].(map[string]any)
	if metro["reachable"] != true || metro["url"] != m.srv.URL {
		t.Errorf("server.metro = %v, want reachable at %s", metro, m.srv.URL)
	}
	m.push("1", readMetroFrames(t, "testdata/metro/session.jsonl")...)
	e.waitEventsOf("console", "log", 3)

	logs := e.toolJSON("debug_get_logs", nil)
	entries := logs["entries"].([]any)
	if len(entries) != 3 {
		t.Fatalf("entries = %v, want 3", entries)
	}
	exc := entries[2].(map[string]any)
	if exc["level"] != "error" || exc["message"] != "Uncaught TypeError: Cannot read property 'price' of undefined" ||
		!strings.Contains(exc["stack"].(string), "at onPress (http://10.0.2.2:8081/index.bundle?platform=android&dev=true&minify=false:48211:18)") {
		t.Errorf("the exception's entry = %v", exc)
	}
	errorsOnly := e.toolJSON("debug_get_logs", map[string]any{"level": "warn"})
	if n := len(errorsOnly["entries"].([]any)); n != 2 {
		t.Errorf("warn and above: %d entries, want 2", n)
	}

	network := e.toolJSON("debug_get_network", nil)
	requests, _ := network["requests"].([]any)
	if len(requests) != 2 {
		t.Fatalf("debug_get_network = %v, want 2 requests", network)
	}
	if r := requests[0].(map[string]any); r["status"] != 200.0 || r["durationMs"] != 250.0 {
		t.Errorf("first request = %v, want status 200 in 250 ms", r)
	}

	for _, call := range []struct {
		tool string
		args map[string]any
	}{
		{"debug_get_state_path", map[string]any{"path": ""}},
		{"debug_get_snapshot", map[string]any{"stream": "navigation"}},
		{"debug_list_commands", nil},
	} {
		got := e.toolError(call.tool, call.args)
		if got["code"] != codeNotSupported || !strings.Contains(got["message"].(string), "not reachable through Metro") ||
			!strings.Contains(got["suggestion"].(string), "Reactotron") {
			t.Errorf("%s on a Metro session = %v, want NOT_SUPPORTED saying how to get state", call.tool, got)
		}
	}
	_, rpcErr := readResource(t, e, "debug://redux/state")
	if data, _ := rpcErr["data"].(map[string]any); data["code"] != codeNotSupported {
		t.Errorf("debug://redux/state = %v, want NOT_SUPPORTED", rpcErr)
	}
}

// TestMetroNetworkMissing: a Metro app that reported no request yet is
// told apart from an adapter without a network stream.
func TestMetroNetworkMissing(t *testing.T) {
	t.Parallel()
	e, _ := startMetroE2E(t)
	metroAttached(e)
	got := e.toolError("debug_get_network", nil)
	if got["code"] != codeStreamUnavailable || !strings.Contains(got["message"].(string), "through Metro") {
		t.Errorf("debug_get_network = %v, want STREAM_UNAVAILABLE explaining Metro's network events", got)
	}
}

// TestMetroHealthWhenMetroIsDown: Metro not running is said once, in the
// health check's server.metro, and nothing else changes.
func TestMetroHealthWhenMetroIsDown(t *testing.T) {
	t.Parallel()
	m := startMetroStandIn(t)
	m.set(func(m *metroStandIn) { m.down = true })
	cfg := testConfig(t)
	cfg.MetroURL = m.srv.URL
	cfg.Tune.MetroPoll = 5 * time.Millisecond
	ts := startServer(t, cfg)
	ts.initialize()
	e := &e2e{testServer: ts, nextID: 100}
	h := e.waitHealthRaw(func(h map[string]any) bool {
		metro := h["server"].(map[string]any)["metro"].(map[string]any)
		return metro["error"] != nil
	})
	metro := h["server"].(map[string]any)["metro"].(map[string]any)
	if metro["reachable"] != false || !strings.Contains(metro["status"].(string), "not running") {
		t.Errorf("server.metro = %v, want not reachable, said once", metro)
	}
	m.waitPolls(3)
	if n := strings.Count(ts.stderr.String(), "Metro is not reachable"); n > 1 {
		t.Errorf("the log says Metro is not reachable %d times, want at most once", n)
	}
	raw, _ := json.Marshal(h)
	if strings.Contains(string(raw), `"via":"metro"`) {
		t.Errorf("a Metro session exists while Metro is down: %s", raw)
	}
}
