package main

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/coder/websocket"
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

// scriptedApp answers a wire connection's requests from a table of
// handlers, until the test ends.
func scriptedApp(t *testing.T, a *wireTestAdapter, answer func(method string, params json.RawMessage) (result any, errObj map[string]any)) {
	t.Helper()
	var wg sync.WaitGroup
	t.Cleanup(wg.Wait)
	t.Cleanup(func() { a.ws.CloseNow() })
	wg.Go(func() {
		for {
			b, err := a.read()
			if err != nil {
				return
			}
			var r wireTestRequest
			if json.Unmarshal(b, &r) != nil || r.Type != "request" {
				continue
			}
			result, errObj := answer(r.Method, r.Params)
			msg := map[string]any{"type": "response", "id": r.ID}
			if errObj != nil {
				msg["error"] = errObj
			} else {
				msg["result"] = result
			}
			data, _ := json.Marshal(msg)
			ctx, cancel := context.WithTimeout(context.Background(), linkWaitLimit)
			err = a.ws.Write(ctx, websocket.MessageText, data)
			cancel()
			if err != nil {
				return
			}
		}
	})
}

// callToolDirect calls a tool of ts and returns its result object (or the
// error object) and whether it failed.
func callToolDirect(t *testing.T, ts *toolSet, name string, args map[string]any) (json.RawMessage, bool) {
	t.Helper()
	raw, _ := json.Marshal(args)
	out := ts.call(t.Context(), ts.byName[name], raw)
	var res struct {
		Content           []struct{ Text string } `json:"content"`
		StructuredContent json.RawMessage         `json:"structuredContent"`
		IsError           bool                    `json:"isError"`
	}
	if err := json.Unmarshal(out, &res); err != nil || len(res.Content) != 1 {
		t.Fatalf("%s: malformed result %s", name, out)
	}
	if res.IsError {
		return json.RawMessage(res.Content[0].Text), true
	}
	return res.StructuredContent, false
}

// wireEvents serves events.query over a list of events as an adapter must.
func wireEvents(events []map[string]any, params json.RawMessage) any {
	var p struct {
		Limit     int    `json:"limit"`
		SinceSeq  *int64 `json:"since_seq"`
		EventType string `json:"event_type"`
	}
	_ = json.Unmarshal(params, &p)
	var matched []map[string]any
	hasMore := false
	match := func(ev map[string]any) bool { return p.EventType == "" || ev["type"] == p.EventType }
	if p.SinceSeq != nil {
		for _, ev := range events {
			if ev["seq"].(int64) > *p.SinceSeq && match(ev) {
				if len(matched) == p.Limit {
					hasMore = true
					break
				}
				matched = append(matched, ev)
			}
		}
	} else {
		for i := len(events) - 1; i >= 0; i-- {
			if match(events[i]) {
				if len(matched) == p.Limit {
					hasMore = true
					break
				}
				matched = append([]map[string]any{events[i]}, matched...)
			}
		}
	}
	if matched == nil {
		matched = []map[string]any{}
	}
	return map[string]any{"events": matched, "hasMore": hasMore, "oldestSeq": events[0]["seq"], "latestSeq": events[len(events)-1]["seq"]}
}

func withAppStreams(m map[string]any) {
	m["streams"] = []any{
		map[string]any{"name": "redux", "active": true},
		map[string]any{"name": "console", "active": true},
		map[string]any{"name": "network", "active": true},
	}
}

// TestAppToolsScripted drives the tools against a scripted adapter: a
// console of 1 000 entries (an error every 97th, beyond the first page),
// a network stream with a request whose bodies exceed the result budget, a
// dispatch whose event carries the app's own diff, and commands.
func TestAppToolsScripted(t *testing.T) {
	h := startLinkHarness(t, nil, nil)
	a := connectWith(t, h, "scripted", withAppStreams, hsWith("capabilities", []any{"state.dispatch", "commands"}))
	var console, network []map[string]any
	for seq := int64(1); seq <= 1000; seq++ {
		p := map[string]any{"level": "info", "message": fmt.Sprintf("line %d", seq)}
		if seq%97 == 0 {
			p = map[string]any{"level": "error", "message": fmt.Sprintf("boom %d", seq), "stack": []any{"a", "b", "c", "d", "e", "f", "g", "h", "i", "j"}}
		}
		console = append(console, map[string]any{"stream": "console", "seq": seq, "type": "log", "timestamp": "2026-11-21T10:00:00.000Z", "payload": p})
	}
	big := strings.Repeat("x", 3000)
	network = append(network, map[string]any{"stream": "network", "seq": int64(1), "type": "http_request", "timestamp": "2026-11-21T10:00:00.000Z",
		"payload": map[string]any{"method": "GET", "url": "https://x.test/big", "status": 200, "durationMs": 12,
			"request":  map[string]any{"headers": map[string]any{"Accept": "*/*"}, "params": map[string]any{}, "body": nil},
			"response": map[string]any{"headers": map[string]any{"Content-Type": "application/json"}, "body": map[string]any{"a": big, "b": big, "c": "small"}}}})
	var mu sync.Mutex
	var methods []string
	scriptedApp(t, a, func(method string, params json.RawMessage) (any, map[string]any) {
		mu.Lock()
		methods = append(methods, method)
		mu.Unlock()
		var p struct{ Stream string }
		_ = json.Unmarshal(params, &p)
		switch {
		case method == "events.query" && p.Stream == "console":
			return wireEvents(console, params), nil
		case method == "events.query" && p.Stream == "network":
			return wireEvents(network, params), nil
		case method == "events.query" && p.Stream == "redux":
			return wireEvents([]map[string]any{{"stream": "redux", "seq": int64(8), "type": "action_dispatched", "timestamp": "2026-11-21T10:00:00.000Z",
				"payload": map[string]any{"action": map[string]any{"type": "x/y"}, "diff": []any{map[string]any{"path": "x", "type": "changed", "oldValue": 1, "newValue": 2}}}}}, params), nil
		case method == "snapshot.get":
			return map[string]any{"seq": 7, "timestamp": "2026-11-21T10:00:00.000Z", "state": map[string]any{"x": 1}}, nil
		case method == "state.dispatch":
			return map[string]any{"seq": 8}, nil
		case method == "commands.list":
			return map[string]any{"commands": []any{map[string]any{"command": "reset", "args": []any{map[string]any{"name": "hard", "type": "boolean"}}}}}, nil
		case method == "commands.run":
			var run struct {
				Command string
				Args    map[string]any
			}
			_ = json.Unmarshal(params, &run)
			return map[string]any{"result": map[string]any{"ran": run.Command, "args": run.Args}}, nil
		}
		return nil, map[string]any{"code": "UNKNOWN_METHOD", "message": method}
	})
	cfg := linkTestConfig()
	cfg.MaxResultBytes = 4096
	ts := newTestToolSet(cfg, h.link)

	// Errors every 97th entry: the newest 3 lie in the first page, the
	// oldest only further back.
	res, _ := callToolDirect(t, ts, "debug_get_logs", map[string]any{"level": "error", "limit": 3})
	var logs logsOut
	_ = json.Unmarshal(res, &logs)
	if len(logs.Entries) != 3 || logs.Entries[0].Seq != 776 || !logs.HasMore || logs.LatestSeq != 1000 {
		t.Errorf("newest 3 errors: %s", res)
	}
	if logs.Entries[0].MoreFrames != 10-maxStackFrames {
		t.Errorf("stack of 10 frames: moreFrames %d, want %d", logs.Entries[0].MoreFrames, 10-maxStackFrames)
	}
	res, _ = callToolDirect(t, ts, "debug_get_logs", map[string]any{"level": "error", "limit": 200})
	_ = json.Unmarshal(res, &logs)
	if len(logs.Entries) != 10 || logs.Entries[0].Seq != 97 || logs.HasMore {
		t.Errorf("all errors: %s", res)
	}
	res, _ = callToolDirect(t, ts, "debug_get_logs", map[string]any{"contains": "BOOM", "since_seq": 100, "limit": 2})
	_ = json.Unmarshal(res, &logs)
	if len(logs.Entries) != 2 || logs.Entries[0].Seq != 194 || logs.Entries[1].Seq != 291 || !logs.HasMore {
		t.Errorf("errors after 100: %s", res)
	}

	// The detail fits the budget by leaving out the largest bodies.
	res, isError := callToolDirect(t, ts, "debug_get_network", map[string]any{"seq": 1})
	var detail struct {
		Response struct {
			Body struct {
				Omitted bool `json:"omitted"`
				Bytes   int  `json:"bytes"`
			} `json:"body"`
			Headers map[string]string `json:"headers"`
		} `json:"response"`
	}
	if isError || json.Unmarshal(res, &detail) != nil || !detail.Response.Body.Omitted || detail.Response.Body.Bytes < 6000 ||
		detail.Response.Headers["Content-Type"] == "" || len(res) > cfg.MaxResultBytes {
		t.Errorf("detail over budget: %s", res)
	}

	res, isError = callToolDirect(t, ts, "debug_dispatch_action", map[string]any{"action": map[string]any{"type": "x/y"}})
	var dispatched struct {
		ChangesFrom string           `json:"changesFrom"`
		Changes     []map[string]any `json:"changes"`
		Event       struct {
			Seq int64 `json:"seq"`
		} `json:"event"`
	}
	if isError || json.Unmarshal(res, &dispatched) != nil || dispatched.ChangesFrom != "event" || len(dispatched.Changes) != 1 || dispatched.Event.Seq != 8 {
		t.Errorf("dispatch with the app's diff: %s", res)
	}

	res, isError = callToolDirect(t, ts, "debug_run_command", map[string]any{"command": "reset", "args": map[string]any{"hard": true}})
	if want := `{"command":"reset","result":{"args":{"hard":true},"ran":"reset"}}`; isError || normaliseJSON(t, string(res)) != normaliseJSON(t, want) {
		t.Errorf("run: %s, want %s", res, want)
	}
	res, isError = callToolDirect(t, ts, "debug_list_commands", nil)
	if isError || !strings.Contains(string(res), `"reset"`) {
		t.Errorf("list: %s", res)
	}

	// Gone: the commands listed are still known; running one needs the app.
	a.ws.CloseNow()
	linkWaitFor(t, "the adapter to leave", func() bool { return !h.link.status().Connected })
	res, isError = callToolDirect(t, ts, "debug_list_commands", nil)
	if isError || !strings.Contains(string(res), `"reset"`) || !strings.Contains(string(res), `"live":false`) {
		t.Errorf("list after disconnect: %s", res)
	}
	res, isError = callToolDirect(t, ts, "debug_run_command", map[string]any{"command": "reset"})
	if code, _, _ := decodeToolError(t, res); !isError || code != codeNotConnected {
		t.Errorf("run after disconnect: %s", res)
	}
}

// TestAppToolsCapabilities: an app that does not offer what a tool needs
// gets an error naming what it lacks, at once, without a request.
func TestAppToolsCapabilities(t *testing.T) {
	h := startLinkHarness(t, nil, nil)
	a := h.connect(t, "plain")
	scriptedApp(t, a, func(method string, _ json.RawMessage) (any, map[string]any) {
		t.Errorf("the server asked %s of an app that does not offer it", method)
		return nil, map[string]any{"code": "UNKNOWN_METHOD", "message": method}
	})
	ts := newTestToolSet(linkTestConfig(), h.link)
	for _, tc := range []struct {
		tool       string
		args       map[string]any
		capability string
	}{
		{"debug_dispatch_action", map[string]any{"action": map[string]any{"type": "a"}}, capStateDispatch},
		{"debug_list_commands", nil, capCommands},
		{"debug_run_command", map[string]any{"command": "a"}, capCommands},
	} {
		res, isError := callToolDirect(t, ts, tc.tool, tc.args)
		code, details, _ := decodeToolError(t, res)
		if !isError || code != codeNotSupported || details["capability"] != tc.capability ||
			!strings.Contains(string(res), "capabilities") {
			t.Errorf("%s: %s, want NOT_SUPPORTED naming %s", tc.tool, res, tc.capability)
		}
	}
	for _, tc := range []struct{ tool, stream string }{{"debug_get_logs", "console"}, {"debug_get_network", "network"}} {
		res, isError := callToolDirect(t, ts, tc.tool, nil)
		code, _, _ := decodeToolError(t, res)
		if !isError || code != codeStreamUnavailable || !strings.Contains(string(res), `would need to record a \"`+tc.stream+`\" stream`) {
			t.Errorf("%s: %s, want STREAM_UNAVAILABLE naming the %s stream", tc.tool, res, tc.stream)
		}
	}
}

// fireAndForgetFeed is a Reactotron-like feed: it answers nothing itself,
// and a command's effects arrive as events afterwards. It answers
// snapshot.get from state, as the bridge asks the app for its state.
type fireAndForgetFeed struct {
	s     *session
	ran   chan runCommandParams
	mu    sync.Mutex
	state string
	wg    sync.WaitGroup
}

func (f *fireAndForgetFeed) request(ctx context.Context, method string, params any) (json.RawMessage, error) {
	switch p := params.(type) {
	case runCommandParams:
		f.s.appendEvent(f, "redux", "action_dispatched", time.Now(), []byte(`{"action":{"type":"cart/clear"}}`))
		f.ran <- p
		return json.RawMessage(`{}`), nil
	case snapshotParams:
		f.mu.Lock()
		defer f.mu.Unlock()
		return json.RawMessage(`{"seq":1,"timestamp":"2026-11-21T10:00:00.000Z","state":` + f.state + `}`), nil
	case dispatchParams:
		// The app dispatches a moment later and reports the action.
		f.wg.Go(func() {
			time.Sleep(200 * time.Millisecond)
			f.mu.Lock()
			f.state = `{"cart":{"items":[]}}`
			f.mu.Unlock()
			f.s.appendEvent(f, "redux", "action_dispatched", time.Now(), []byte(`{"action":`+string(p.Action)+`}`))
		})
		return json.RawMessage(`{}`), nil
	}
	return nil, errAnswerLocally
}

func (f *fireAndForgetFeed) replaced() {}

// TestRunCommandFireAndForget: for an app that does not answer commands,
// the result holds the events of every stream within the second after, and
// none of later ones.
func TestRunCommandFireAndForget(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cfg := linkTestConfig()
		link := newTestLink(cfg, nil, func(linkEvent) {})
		feed := &fireAndForgetFeed{ran: make(chan runCommandParams, 1)}
		info := &adapterInfo{SessionID: "rt", AdapterVersion: "reactotron", ConnectedAt: time.Now(),
			Streams: []streamState{{Name: "redux", Active: true}, {Name: "console", Active: true}}}
		s, _ := registryOf(link).attach(sessionViaReactotron, "rt", "", info, feed)
		feed.s = s
		s.appendEvent(feed, "console", "log", time.Now(), []byte(`{"level":"info","message":"before"}`))
		s.setCommands([]json.RawMessage{json.RawMessage(`{"command":"clearCart","title":"Clear cart"}`)})
		ts := newTestToolSet(cfg, link)

		res, isError := callToolDirect(t, ts, "debug_list_commands", nil)
		if isError || normaliseJSON(t, string(res)) != normaliseJSON(t, `{"commands":[{"command":"clearCart","title":"Clear cart"}]}`) {
			t.Errorf("commands of a Reactotron session: %s", res)
		}

		done := make(chan json.RawMessage)
		go func() {
			res, _ := callToolDirect(t, ts, "debug_run_command", map[string]any{"command": "clearCart", "args": map[string]any{"all": true}})
			done <- res
		}()
		p := <-feed.ran
		if p.Command != "clearCart" || string(p.Args) != `{"all":true}` {
			t.Errorf("the feed got %+v", p)
		}
		time.Sleep(500 * time.Millisecond)
		s.appendEvent(feed, "console", "log", time.Now(), []byte(`{"level":"info","message":"cart cleared"}`))
		res = <-done
		s.appendEvent(feed, "console", "log", time.Now(), []byte(`{"level":"info","message":"too late"}`))

		var got struct {
			Command string
			Result  any
			Streams []struct {
				Stream string
				Events []struct {
					Seq     int64
					Payload map[string]any
				}
			}
		}
		if err := json.Unmarshal(res, &got); err != nil {
			t.Fatalf("%v: %s", err, res)
		}
		var summary []string
		for _, st := range got.Streams {
			for _, ev := range st.Events {
				summary = append(summary, fmt.Sprintf("%s %d", st.Stream, ev.Seq))
			}
		}
		if diff := cmp.Diff([]string{"redux 1", "console 2"}, summary); diff != "" || got.Command != "clearCart" || got.Result != nil {
			t.Errorf("run on a fire-and-forget app: %s\n(-want +got):\n%s", res, diff)
		}
	})
}

// TestDispatchFireAndForget: on an app that does not answer a dispatch, the
// tool waits for the action to be reported and diffs the state around it.
func TestDispatchFireAndForget(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cfg := linkTestConfig()
		link := newTestLink(cfg, nil, func(linkEvent) {})
		feed := &fireAndForgetFeed{state: `{"cart":{"items":[1]}}`}
		info := &adapterInfo{SessionID: "rt", AdapterVersion: "reactotron", ConnectedAt: time.Now(),
			Streams: []streamState{{Name: "redux", Active: true}}}
		s, _ := registryOf(link).attach(sessionViaReactotron, "rt", "", info, feed)
		feed.s = s
		s.appendEvent(feed, "redux", "action_dispatched", time.Now(), []byte(`{"action":{"type":"cart/clear"}}`))
		ts := newTestToolSet(cfg, link)
		res, isError := callToolDirect(t, ts, "debug_dispatch_action", map[string]any{"action": map[string]any{"type": "cart/clear"}})
		feed.wg.Wait()
		want := `{"changes":[{"path":"cart.items.0","type":"removed","oldValue":1}],"changesFrom":"snapshots","totalChanges":1,"truncated":false,
			"event":{"stream":"redux","seq":2,"type":"action_dispatched","timestamp":"2000-01-01T00:00:00.200Z","payload":{"action":{"type":"cart/clear"}}}}`
		if isError || normaliseJSON(t, string(res)) != normaliseJSON(t, want) {
			t.Errorf("dispatch on a fire-and-forget app:\n got %s\nwant %s", res, want)
		}
	})
}

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
