package main

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// startAppE2E is startE2E with a simulated app that has just had its first
// (failed) checkout, as -demo starts.
func startAppE2E(t *testing.T, cfg config) *e2e {
	t.Helper()
	e := startE2E(t, cfg, 0)
	e.app.untilCheckoutFailed(500)
	return e
}

// mustTool calls a tool that must succeed and decodes its result into out.
func (e *e2e) mustTool(name string, args map[string]any, out any) json.RawMessage {
	e.t.Helper()
	res, isError := e.callTool(name, args)
	if isError {
		e.t.Fatalf("%s %v failed: %s", name, args, res)
	}
	if out != nil {
		if err := json.Unmarshal(res, out); err != nil {
			e.t.Fatalf("%s: %v: %s", name, err, res)
		}
	}
	return res
}

type logsOut struct {
	Entries []struct {
		Seq        int64  `json:"seq"`
		Level      string `json:"level"`
		Message    string `json:"message"`
		Stack      any    `json:"stack"`
		MoreFrames int    `json:"moreFrames"`
	} `json:"entries"`
	HasMore   bool  `json:"hasMore"`
	LatestSeq int64 `json:"latestSeq"`
}

type networkOut struct {
	Requests []struct {
		Seq    int64  `json:"seq"`
		Method string `json:"method"`
		URL    string `json:"url"`
		Status *int   `json:"status"`
		Error  string `json:"error"`
	} `json:"requests"`
	HasMore   bool  `json:"hasMore"`
	LatestSeq int64 `json:"latestSeq"`
}

// TestAppToolsDoneWhen is the check: the failed checkout's error log
// and its 500 are found in one call each, its detail in one more; clearCart
// and a dispatched action change the state as the next read shows.
func TestAppToolsDoneWhen(t *testing.T) {
	e := startAppE2E(t, testConfig(t))

	var logs logsOut
	e.mustTool("debug_get_logs", map[string]any{"level": "error"}, &logs)
	if len(logs.Entries) != 1 || !strings.Contains(logs.Entries[0].Message, "order failed") ||
		logs.Entries[0].MoreFrames == 0 || !strings.Contains(fmt.Sprint(logs.Entries[0].Stack), "placeOrder") {
		t.Fatalf("error logs: %+v", logs)
	}

	var failed networkOut
	e.mustTool("debug_get_network", map[string]any{"status": "5xx"}, &failed)
	if len(failed.Requests) != 1 || failed.Requests[0].Method != "POST" || !strings.HasSuffix(failed.Requests[0].URL, "/v1/orders") {
		t.Fatalf("5xx requests: %+v", failed)
	}
	var detail struct {
		Status  int `json:"status"`
		Request struct {
			Headers map[string]string `json:"headers"`
		} `json:"request"`
		Response struct {
			Body map[string]any `json:"body"`
		} `json:"response"`
	}
	e.mustTool("debug_get_network", map[string]any{"seq": failed.Requests[0].Seq}, &detail)
	if detail.Status != 500 || detail.Request.Headers["Authorization"] == "" || detail.Response.Body["message"] != "payment provider unavailable" {
		t.Fatalf("detail: %+v", detail)
	}

	// The failed checkout left the cart full: clearCart empties it.
	var items struct {
		Value []any `json:"value"`
	}
	e.mustTool("debug_get_state_path", map[string]any{"path": "cart.items"}, &items)
	if len(items.Value) == 0 {
		t.Fatal("the cart is empty after the failed checkout")
	}
	var commands struct {
		Commands []struct{ Command string } `json:"commands"`
	}
	e.mustTool("debug_list_commands", nil, &commands)
	if len(commands.Commands) != 3 || commands.Commands[0].Command != "clearCart" {
		t.Fatalf("commands: %+v", commands)
	}
	var run struct {
		Command string         `json:"command"`
		Result  map[string]int `json:"result"`
	}
	e.mustTool("debug_run_command", map[string]any{"command": "clearCart"}, &run)
	if run.Result["removedItems"] != len(items.Value) {
		t.Errorf("clearCart: %+v, want %d items removed", run, len(items.Value))
	}
	e.mustTool("debug_get_state_path", map[string]any{"path": "cart.items"}, &items)
	if len(items.Value) != 0 {
		t.Errorf("cart after clearCart: %v", items.Value)
	}

	var dispatched struct {
		Event struct {
			Type    string `json:"type"`
			Payload struct {
				Action struct{ Type string } `json:"action"`
			} `json:"payload"`
		} `json:"event"`
		Changes []struct{ Path, Type string } `json:"changes"`
	}
	e.mustTool("debug_dispatch_action", map[string]any{"action": map[string]any{"type": "cart/addItem", "payload": map[string]any{"sku": "B-2", "qty": 2}}}, &dispatched)
	if dispatched.Event.Type != "action_dispatched" || dispatched.Event.Payload.Action.Type != "cart/addItem" {
		t.Errorf("dispatch event: %+v", dispatched.Event)
	}
	var paths []string
	for _, c := range dispatched.Changes {
		paths = append(paths, c.Path+" "+c.Type)
	}
	if diff := cmp.Diff([]string{"cart.items.0 added", "cart.total changed"}, paths); diff != "" {
		t.Errorf("dispatch changes (-want +got):\n%s", diff)
	}
	var qty struct {
		Value int `json:"value"`
	}
	e.mustTool("debug_get_state_path", map[string]any{"path": "cart.items.0.qty"}, &qty)
	if qty.Value != 2 {
		t.Errorf("cart.items.0.qty after the dispatch = %d, want 2", qty.Value)
	}
}

func TestAppToolsGolden(t *testing.T) {
	e := startAppE2E(t, testConfig(t))
	var failed networkOut
	e.mustTool("debug_get_network", map[string]any{"status": "500"}, &failed)
	if len(failed.Requests) != 1 {
		t.Fatalf("500s: %+v", failed)
	}
	for _, tc := range []struct {
		name string
		tool string
		args map[string]any
	}{
		{"logs_error", "debug_get_logs", map[string]any{"level": "error"}},
		{"logs_last5", "debug_get_logs", map[string]any{"limit": 5}},
		{"network_last5", "debug_get_network", map[string]any{"limit": 5}},
		{"network_detail_500", "debug_get_network", map[string]any{"seq": failed.Requests[0].Seq}},
		{"commands_list", "debug_list_commands", nil},
		{"run_clear_cart", "debug_run_command", map[string]any{"command": "clearCart"}},
		{"dispatch_set_theme", "debug_dispatch_action", map[string]any{"action": map[string]any{"type": "ui/setTheme", "payload": map[string]any{"theme": "solarized"}}}},
		{"error_run_unknown", "debug_run_command", map[string]any{"command": "selfDestruct"}},
		{"wait_network_500", "debug_wait_for", map[string]any{"stream": "network", "status": "5xx", "since_seq": 0}},
		{"wait_console_error", "debug_wait_for", map[string]any{"stream": "console", "level": "error", "since_seq": 0, "count": 2, "timeout_ms": 1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, _ := e.callTool(tc.tool, tc.args)
			checkGolden(t, tc.name, res)
		})
	}
}

// TestAppToolFilters checks every filter of the logs and network tools
// against the simulated app's streams.
func TestAppToolFilters(t *testing.T) {
	e := startAppE2E(t, testConfig(t))
	// Everything, to check filters against.
	var allLogs logsOut
	e.mustTool("debug_get_logs", map[string]any{"limit": 200}, &allLogs)
	var allNet networkOut
	e.mustTool("debug_get_network", map[string]any{"limit": 200}, &allNet)
	if allLogs.HasMore || allNet.HasMore || len(allLogs.Entries) < 20 || len(allNet.Requests) < 10 {
		t.Fatalf("want a whole history of some size: %d logs, %d requests", len(allLogs.Entries), len(allNet.Requests))
	}
	rank := map[string]int{"debug": 0, "info": 1, "warn": 2, "error": 3}
	logSeqs := func(keep func(level, message string) bool, limit int, since int64) (want []int64, hasMore bool) {
		for _, en := range allLogs.Entries {
			if en.Seq > since && keep(en.Level, en.Message) {
				want = append(want, en.Seq)
			}
		}
		if len(want) > limit {
			if since > 0 {
				return want[:limit], true
			}
			return want[len(want)-limit:], true
		}
		return want, false
	}
	for _, tc := range []struct {
		args  map[string]any
		keep  func(level, message string) bool
		limit int
		since int64
	}{
		{map[string]any{"level": "warn"}, func(l, _ string) bool { return rank[l] >= 2 }, 50, 0},
		{map[string]any{"level": "INFO", "limit": 3}, func(l, _ string) bool { return rank[l] >= 1 }, 3, 0},
		{map[string]any{"level": "debug"}, func(string, string) bool { return true }, 50, 0},
		{map[string]any{"contains": "CATALOG"}, func(_, m string) bool { return strings.Contains(strings.ToLower(m), "catalog") }, 50, 0},
		{map[string]any{"contains": "placeOrder"}, func(l, _ string) bool { return l == "error" }, 50, 0}, // found in the stack
		{map[string]any{"since_seq": 5, "limit": 4}, func(string, string) bool { return true }, 4, 5},
		{map[string]any{"since_seq": 5, "limit": 2, "level": "warn"}, func(l, _ string) bool { return rank[l] >= 2 }, 2, 5},
		{map[string]any{"limit": 2}, func(string, string) bool { return true }, 2, 0},
	} {
		var got logsOut
		e.mustTool("debug_get_logs", tc.args, &got)
		want, wantMore := logSeqs(tc.keep, tc.limit, tc.since)
		var seqs []int64
		for _, en := range got.Entries {
			seqs = append(seqs, en.Seq)
		}
		if diff := cmp.Diff(want, seqs); diff != "" || got.HasMore != wantMore || got.LatestSeq != allLogs.LatestSeq {
			t.Errorf("logs %v: hasMore %t latestSeq %d, want %t %d; seqs (-want +got):\n%s", tc.args, got.HasMore, got.LatestSeq, wantMore, allLogs.LatestSeq, diff)
		}
	}

	netSeqs := func(keep func(method, url string, status *int) bool, limit int, since int64) (want []int64, hasMore bool) {
		for _, r := range allNet.Requests {
			if r.Seq > since && keep(r.Method, r.URL, r.Status) {
				want = append(want, r.Seq)
			}
		}
		if len(want) > limit {
			if since > 0 {
				return want[:limit], true
			}
			return want[len(want)-limit:], true
		}
		return want, false
	}
	in := func(lo, hi int) func(string, string, *int) bool {
		return func(_, _ string, s *int) bool { return s != nil && *s >= lo && *s < hi }
	}
	for _, tc := range []struct {
		args  map[string]any
		keep  func(method, url string, status *int) bool
		limit int
		since int64
	}{
		{map[string]any{"status": "2xx"}, in(200, 300), 50, 0},
		{map[string]any{"status": "4XX"}, in(400, 500), 50, 0},
		{map[string]any{"status": "5xx"}, in(500, 600), 50, 0},
		{map[string]any{"status": "404"}, in(404, 405), 50, 0},
		{map[string]any{"status": "failed"}, func(_, _ string, s *int) bool { return s == nil }, 50, 0},
		{map[string]any{"method": "post"}, func(m, _ string, _ *int) bool { return m == "POST" }, 50, 0},
		{map[string]any{"url_contains": "/PRODUCTS"}, func(_, u string, _ *int) bool { return strings.Contains(u, "/products") }, 50, 0},
		{map[string]any{"method": "GET", "status": "2xx", "limit": 2}, func(m, u string, s *int) bool { return m == "GET" && in(200, 300)(m, u, s) }, 2, 0},
		{map[string]any{"since_seq": 3, "limit": 3}, func(string, string, *int) bool { return true }, 3, 3},
	} {
		var got networkOut
		e.mustTool("debug_get_network", tc.args, &got)
		want, wantMore := netSeqs(tc.keep, tc.limit, tc.since)
		var seqs []int64
		for _, r := range got.Requests {
			seqs = append(seqs, r.Seq)
		}
		if diff := cmp.Diff(want, seqs); diff != "" || got.HasMore != wantMore {
			t.Errorf("network %v: hasMore %t, want %t; seqs (-want +got):\n%s", tc.args, got.HasMore, wantMore, diff)
		}
	}
	res, isError := e.callTool("debug_get_network", map[string]any{"seq": allNet.LatestSeq + 5})
	if code, details, _ := decodeToolError(t, res); !isError || code != codeEventNotFound || details["latestSeq"] != float64(allNet.LatestSeq) {
		t.Errorf("a seq past the end: %s", res)
	}
	var failed networkOut
	e.mustTool("debug_get_network", map[string]any{"status": "failed"}, &failed)
	if len(failed.Requests) == 0 || failed.Requests[0].Error == "" {
		t.Errorf("a request without a response must say why: %+v", failed)
	}

	for _, tc := range []struct {
		tool     string
		args     map[string]any
		argument string
	}{
		{"debug_get_logs", map[string]any{"level": "loud"}, "level"},
		{"debug_get_network", map[string]any{"status": "6xx"}, "status"},
		{"debug_get_network", map[string]any{"status": "ok"}, "status"},
		{"debug_dispatch_action", map[string]any{"action": map[string]any{"payload": 1}}, "action"},
		{"debug_dispatch_action", map[string]any{"action": "cart/clear"}, "action"},
		{"debug_run_command", map[string]any{"command": "clearCart", "args": []any{}}, "args"},
	} {
		res, isError := e.callTool(tc.tool, tc.args)
		code, details, _ := decodeToolError(t, res)
		if !isError || code != codeInvalidParams || details["argument"] != tc.argument {
			t.Errorf("%s %v: %s, want INVALID_PARAMS for %s", tc.tool, tc.args, res, tc.argument)
		}
	}
}

// TestAppToolsOffline runs the command with an argument and sees its
// effect in the network stream.
func TestAppToolsOffline(t *testing.T) {
	e := startAppE2E(t, testConfig(t))
	var before networkOut
	e.mustTool("debug_get_network", map[string]any{"limit": 1}, &before)
	var run struct {
		Result map[string]bool `json:"result"`
	}
	e.mustTool("debug_run_command", map[string]any{"command": "simulateOffline", "args": map[string]any{"offline": true}}, &run)
	if !run.Result["offline"] {
		t.Errorf("simulateOffline: %+v", run)
	}
	e.app.step()
	var after networkOut
	e.mustTool("debug_get_network", map[string]any{"since_seq": before.LatestSeq}, &after)
	for _, r := range after.Requests {
		if r.Status != nil || !strings.Contains(r.Error, "offline") {
			t.Errorf("request %d while offline: %+v", r.Seq, r)
		}
	}
	if len(after.Requests) == 0 {
		t.Error("no request followed simulateOffline")
	}
}

func TestReadOnly(t *testing.T) {
	cfg := testConfig(t)
	cfg.ReadOnly = true
	ts := newTestToolSet(cfg, nil)
	var list struct {
		Tools []struct {
			Name        string
			Annotations map[string]bool
		}
	}
	if err := json.Unmarshal(ts.listJSON, &list); err != nil {
		t.Fatal(err)
	}
	for _, tool := range list.Tools {
		if !tool.Annotations["readOnlyHint"] {
			t.Errorf("read-only tools/list offers %s", tool.Name)
		}
	}
	if len(list.Tools) != len(allTools)-2 {
		t.Errorf("read-only tools/list has %d tools, want %d", len(list.Tools), len(allTools)-2)
	}

	e := startAppE2E(t, cfg)
	for _, name := range []string{"debug_dispatch_action", "debug_run_command"} {
		res, isError := e.callTool(name, map[string]any{"action": map[string]any{"type": "cart/clear"}, "command": "clearCart"})
		code, details, _ := decodeToolError(t, res)
		if !isError || code != codeNotSupported || details["readOnly"] != true {
			t.Errorf("%s under READ_ONLY: %s", name, res)
		}
	}
	var items struct {
		Value []any `json:"value"`
	}
	e.mustTool("debug_get_state_path", map[string]any{"path": "cart.items"}, &items)
	if len(items.Value) == 0 {
		t.Error("a refused call changed the app")
	}
	e.mustTool("debug_list_commands", nil, nil) // reading stays allowed
}

// ---------------------------------------------------------------------------
// Against a scripted adapter.

// appToolsOutput reads every log entry and every request in full through
// the tools, runs a command and a dispatch, and returns the results and the
// demo's tokens, password and session cookies.
func appToolsOutput(t *testing.T, cfg config) (string, []string) {
	e := startAppE2E(t, cfg)
	for range 120 { // logins and token refreshes
		e.app.step()
	}
	var out strings.Builder
	read := func(name string, args map[string]any) json.RawMessage {
		res, _ := e.callTool(name, args)
		out.Write(res)
		return res
	}
	read("debug_get_logs", map[string]any{"limit": 200})
	var all networkOut
	if err := json.Unmarshal(read("debug_get_network", map[string]any{"limit": 200}), &all); err != nil {
		t.Fatal(err)
	}
	for _, r := range all.Requests {
		read("debug_get_network", map[string]any{"seq": r.Seq})
	}
	read("debug_list_commands", nil)
	read("debug_run_command", map[string]any{"command": "logout"})
	read("debug_dispatch_action", map[string]any{"action": map[string]any{"type": "auth/refreshToken", "payload": map[string]any{"token": "eyJhbGciOiJIUzI1NiJ9.planted"}}})

	secrets := append(demoSecrets(t, e.app), "eyJhbGciOiJIUzI1NiJ9.planted")
	cookie := regexp.MustCompile(`sid=([A-Za-z0-9_-]{24})`)
	for _, ev := range demoAllEvents(t, e.app, "network") {
		for _, m := range cookie.FindAllStringSubmatch(string(ev.Payload), -1) {
			secrets = append(secrets, m[1])
		}
	}
	return out.String(), secrets
}

// TestAppToolsRedacted: logs, requests, commands and dispatches pass the
// same chokepoints as the other tools, so no secret of the demo gets
// through; with REDACT=off they do, which shows the scan finds them.
func TestAppToolsRedacted(t *testing.T) {
	t.Parallel()
	on, secrets := appToolsOutput(t, testConfig(t))
	for _, s := range secrets {
		if i := strings.Index(on, s); i >= 0 {
			t.Errorf("secret %q passed: …%s…", s, on[max(0, i-200):min(len(on), i+len(s)+50)])
		}
	}
	cfg := testConfig(t)
	cfg.Redact = false
	off, secrets := appToolsOutput(t, cfg)
	found := 0
	for _, s := range secrets {
		if strings.Contains(off, s) {
			found++
		}
	}
	if found < len(secrets)/2 || !strings.Contains(off, demoPassword) || !strings.Contains(off, "sid=") {
		t.Errorf("with REDACT=off only %d of %d secrets appear; the scan would miss leaks", found, len(secrets))
	}
}
