package main

import (
	"encoding/json"
	"fmt"
	"testing"
)

// TestMetroNetworkBounds: requests that never end are forgotten past
// maxMetroPendingRequests and counted; an end whose start was not seen
// and events without a requestId make nothing.
func TestMetroNetworkBounds(t *testing.T) {
	t.Parallel()
	var n metroNetwork
	for i := range maxMetroPendingRequests + 10 {
		params := fmt.Sprintf(`{"requestId":"%d","timestamp":1,"request":{"url":"https://x/%d","method":"GET","headers":{}}}`, i, i)
		if _, ok, err := n.handle("Network.requestWillBeSent", []byte(params), testNow, false); ok || err != nil {
			t.Fatalf("start %d: %v, %v", i, ok, err)
		}
	}
	if len(n.pending) != maxMetroPendingRequests || len(n.order) != maxMetroPendingRequests || n.evicted != 10 {
		t.Errorf("pending %d, order %d, evicted %d; want %d, %d, 10", len(n.pending), len(n.order), n.evicted, maxMetroPendingRequests, maxMetroPendingRequests)
	}
	if _, ok, _ := n.handle("Network.loadingFinished", []byte(`{"requestId":"0","timestamp":2}`), testNow, false); ok {
		t.Error("the end of a forgotten request made an event")
	}
	ev, ok, err := n.handle("Network.loadingFinished", []byte(`{"requestId":"521","timestamp":1.5}`), testNow, false)
	if !ok || err != nil {
		t.Fatalf("end of a pending request: %v, %v", ok, err)
	}
	var p map[string]any
	json.Unmarshal(ev.Payload, &p)
	if p["durationMs"] != 500.0 || p["status"] != nil || p["url"] != "https://x/521" {
		t.Errorf("event = %v", p)
	}
	if _, _, err := n.handle("Network.loadingFailed", []byte(`{"timestamp":1}`), testNow, false); err == nil {
		t.Error("an event without a requestId read without an error")
	}
}
