package main

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
)

// TestDemoTraffic checks the console and network events of 400 steps: the
// shapes of docs/protocol.md §3, and that the demo shows what it promises (every
// level, 200s, a 404, a 500 after the failed checkout with its error and
// stack, requests without a response, Authorization and Set-Cookie).
func TestDemoTraffic(t *testing.T) {
	a := newDemoTestApp(7, 5000)
	for range 400 {
		a.step()
	}
	seen := map[string]bool{}
	logs := demoAllEvents(t, a, "console")
	for i, ev := range logs {
		var p struct {
			Level   string  `json:"level"`
			Message string  `json:"message"`
			Stack   *string `json:"stack"`
		}
		if ev.Type != "log" || json.Unmarshal(ev.Payload, &p) != nil || p.Message == "" ||
			!slices.Contains([]string{"debug", "info", "warn", "error"}, p.Level) {
			t.Fatalf("console event %d: %s %s", ev.Seq, ev.Type, ev.Payload)
		}
		if i > 0 && ev.Timestamp < logs[i-1].Timestamp {
			t.Errorf("console seq %d goes back in time", ev.Seq)
		}
		seen["level "+p.Level] = true
		if p.Level == "error" && p.Stack != nil && strings.Contains(*p.Stack, "placeOrder") && strings.Contains(p.Message, "500") {
			seen["checkout error with stack"] = true
		}
	}
	for _, ev := range demoAllEvents(t, a, "network") {
		var p struct {
			Method     string   `json:"method"`
			URL        string   `json:"url"`
			Status     *int     `json:"status"`
			DurationMs *float64 `json:"durationMs"`
			Request    *struct {
				Headers map[string]string `json:"headers"`
				Params  map[string]string `json:"params"`
				Body    json.RawMessage   `json:"body"`
			} `json:"request"`
			Response *struct {
				Headers map[string]string `json:"headers"`
				Body    json.RawMessage   `json:"body"`
			} `json:"response"`
			Error string `json:"error"`
		}
		if ev.Type != "http_request" || json.Unmarshal(ev.Payload, &p) != nil || p.Method == "" ||
			!strings.HasPrefix(p.URL, demoAPI) || p.DurationMs == nil || p.Request == nil || p.Request.Headers == nil || p.Request.Params == nil {
			t.Fatalf("network event %d: %s", ev.Seq, ev.Payload)
		}
		if (p.Status == nil) != (p.Response == nil) || (p.Status == nil) != (p.Error != "") {
			t.Errorf("network event %d: a status goes with a response, no status with an error: %s", ev.Seq, ev.Payload)
		}
		switch {
		case p.Status == nil:
			seen["no response"] = true
		case *p.Status == 500 && p.Method == "POST" && strings.HasSuffix(p.URL, "/orders"):
			seen["checkout 500"] = true
		default:
			seen[fmt.Sprintf("status %dxx", *p.Status/100)] = true
			if *p.Status == 404 {
				seen["status 404"] = true
			}
		}
		if strings.HasPrefix(p.Request.Headers["Authorization"], "Bearer ") {
			seen["Authorization"] = true
		}
		if p.Response != nil && p.Response.Headers["Set-Cookie"] != "" {
			seen["Set-Cookie"] = true
		}
	}
	for _, want := range []string{"level debug", "level info", "level warn", "level error", "checkout error with stack",
		"status 2xx", "status 404", "checkout 500", "no response", "Authorization", "Set-Cookie"} {
		if !seen[want] {
			t.Errorf("400 steps never produced %s", want)
		}
	}
}

// TestDemoStartsWithFailedCheckout: -demo steps until the first checkout,
// which fails, leaving the cart full and one 500 to find.
func TestDemoStartsWithFailedCheckout(t *testing.T) {
	a := newDemoTestApp(3, 0)
	a.untilCheckoutFailed(500)
	var q demoTestQuery
	demoMustCall(t, a, "events.query", `{"stream":"redux","limit":200,"event_type":"action_dispatched"}`, &q)
	last := q.Events[len(q.Events)-1]
	if !strings.Contains(string(last.Payload), "cart/checkoutFailed") {
		t.Errorf("the last action is %s, want cart/checkoutFailed", last.Payload)
	}
	a.mu.Lock()
	items := len(a.redux.Cart.Items)
	a.mu.Unlock()
	if items == 0 {
		t.Error("a failed checkout emptied the cart")
	}
}
