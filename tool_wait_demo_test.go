package main

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"
)

// The wait on the simulated shop, driven through stdio as a client drives
// it: the shop steps when the test says, so "within the demo's cadence"
// means within the steps it takes to do the thing.

// sendWait sends a debug_wait_for call with id and returns a function that
// reads its answer.
func (e *e2e) sendWait(id int, args map[string]any) func() waitOut {
	e.t.Helper()
	data, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": "tools/call",
		"params": map[string]any{"name": "debug_wait_for", "arguments": args}})
	e.send(string(data))
	return func() waitOut {
		e.t.Helper()
		for {
			var msg struct {
				ID     *int `json:"id"`
				Result struct {
					StructuredContent json.RawMessage `json:"structuredContent"`
					IsError           bool            `json:"isError"`
				} `json:"result"`
			}
			line := e.next()
			if json.Unmarshal([]byte(line), &msg) != nil || msg.ID == nil {
				continue // a notification
			}
			if *msg.ID != id || msg.Result.IsError {
				e.t.Fatalf("while waiting for the answer to %d: %s", id, line)
			}
			var w waitOut
			if err := json.Unmarshal(msg.Result.StructuredContent, &w); err != nil {
				e.t.Fatal(err)
			}
			return w
		}
	}
}

// stepUntil steps the shop until done says so, within limit steps.
func (e *e2e) stepUntil(limit int, done func(t *demoTraffic) bool) {
	e.t.Helper()
	for range limit {
		e.app.step()
		e.app.mu.Lock()
		ok := done(&e.app.traffic)
		e.app.mu.Unlock()
		if ok {
			return
		}
	}
	e.t.Fatalf("the shop did not get there in %d steps", limit)
}

// TestWaitForDemo: a wait on the network stream for the checkout's order
// resolves when the shop checks out; "go offline and show me the next
// request that fails" is two calls.
func TestWaitForDemo(t *testing.T) {
	t.Parallel()
	e := startE2E(t, testConfig(t), 0)
	var net networkOut
	e.mustTool("debug_get_network", map[string]any{"limit": 1}, &net)
	answer := e.sendWait(900, map[string]any{"stream": "network", "url_contains": "/v1/orders", "since_seq": net.LatestSeq, "timeout_ms": 60000})
	e.stepUntil(500, func(t *demoTraffic) bool { return t.checkouts > 0 })
	w := answer()
	if w.Ended != waitMatched || w.Matched != 1 {
		t.Errorf("the wait for the checkout's order: %+v", w)
	}

	var run struct {
		LatestSeqs map[string]int64 `json:"latestSeqs"`
	}
	e.mustTool("debug_run_command", map[string]any{"command": "simulateOffline"}, &run)
	answer = e.sendWait(901, map[string]any{"stream": "network", "status": "failed", "since_seq": run.LatestSeqs["network"], "timeout_ms": 60000})
	var before int
	e.stepUntil(1, func(t *demoTraffic) bool { before = t.requests; return true })
	e.stepUntil(500, func(t *demoTraffic) bool { return t.requests > before })
	w = answer()
	if w.Ended != waitMatched || w.Matched != 1 {
		t.Errorf("the next failing request after simulateOffline: %+v", w)
	}
	res, _ := e.callTool("debug_get_network", map[string]any{"seq": w.Events[0].Seq})
	if !strings.Contains(string(res), "offline") {
		t.Errorf("the failed request: %s, want the offline error", res)
	}
}

// TestWaitsLeaveHealthCheckFast: 200 calls waiting at once leave the health
// check and a tool served by the worker pool answering, not held until the
// waits end.
func TestWaitsLeaveHealthCheckFast(t *testing.T) {
	t.Parallel()
	e := startE2E(t, testConfig(t), 0)
	const waits = 200
	var burst strings.Builder
	for i := range waits {
		fmt.Fprintf(&burst, `{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"debug_wait_for","arguments":{"stream":"network","url_contains":"nothing-asks-this","timeout_ms":60000}}}`+"\n", 5000+i)
	}
	e.send(strings.TrimSuffix(burst.String(), "\n"))
	e.call(1, "ping", nil) // answered in arrival order: every wait has been read
	// A health check held behind the waits would answer only once they
	// end, after their 60 s; half that tells the two apart on any machine,
	// however loaded, while a quick answer stays quick.
	const bound = 30 * time.Second
	for i := range 20 {
		for _, name := range []string{"debug_health_check", "debug_list_streams"} {
			start := time.Now()
			if res, isError := e.callTool(name, nil); isError {
				t.Fatalf("%s: %s", name, res)
			}
			if took := time.Since(start); took > bound {
				t.Errorf("%s #%d with %d calls waiting took %s, over %s", name, i, waits, took, bound)
			}
		}
	}
}
