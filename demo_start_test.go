package main

import (
	"encoding/json"
	"fmt"
	"testing"
)

// TestDemoStartShowsEveryKind checks what -demo and -demo-adapter-only
// record before they first connect (untilCheckoutFailed): at least one event
// of every kind the simulated app produces, including a request that got
// no response, whatever the seed, so that a newcomer and check-adapter see
// them all within the first seconds.
func TestDemoStartShowsEveryKind(t *testing.T) {
	t.Parallel()
	want := []string{
		"redux action_dispatched", "redux state_snapshot", "navigation route_change", "navigation navigation_snapshot",
		"mmkv mmkv_mutation", "mmkv mmkv_snapshot", "console log", "network http_request",
		"log level error", "request without a response", "request answered 500",
	}
	for seed := range int64(30) {
		a := newDemoTestApp(seed, 5000)
		a.untilCheckoutFailed(500)
		seen := map[string]bool{}
		for _, stream := range []string{"redux", "navigation", "mmkv", "console", "network"} {
			for _, ev := range demoAllEvents(t, a, stream) {
				seen[stream+" "+ev.Type] = true
				var p struct {
					Level  string `json:"level"`
					Status *int   `json:"status"`
				}
				_ = json.Unmarshal(ev.Payload, &p)
				switch {
				case stream == "console":
					seen["log level "+p.Level] = true
				case stream == "network" && p.Status == nil:
					seen["request without a response"] = true
				case stream == "network":
					seen[fmt.Sprintf("request answered %d", *p.Status)] = true
				}
			}
		}
		for _, kind := range want {
			if !seen[kind] {
				t.Errorf("seed %d: no %s at start", seed, kind)
			}
		}
	}
}
