package main

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// The demo's TanStack-Query-like cache: two queries (one failing), one
// mutation, as docs/protocol.md's react_query stream shapes them; the product
// list is refetched every few steps.
func TestDemoQueryCache(t *testing.T) {
	a := newDemoApp(demoOptions{Seed: 3, Now: demoTestClock(), QueryCache: true})
	var types []string
	for _, ev := range demoAllEvents(t, a, "react_query") {
		types = append(types, ev.Type)
	}
	want := []string{"query_added", "observer_added", "query_added", "observer_added",
		"query_updated", "query_updated", "query_updated", "query_updated",
		"mutation_added", "mutation_updated", "mutation_updated", "cache_snapshot"}
	if diff := cmp.Diff(want, types); diff != "" {
		t.Errorf("react_query events (-want +got):\n%s", diff)
	}
	var snap struct {
		State struct {
			Queries   map[string]map[string]any `json:"queries"`
			Mutations map[string]map[string]any `json:"mutations"`
		} `json:"state"`
	}
	demoMustCall(t, a, "snapshot.get", `{"stream":"react_query"}`, &snap)
	products, user := snap.State.Queries[demoProductsHash], snap.State.Queries[demoUserHash]
	if products["status"] != "success" || len(products["data"].([]any)) != 3 || products["observerCount"] != 1.0 {
		t.Errorf("products = %v", products)
	}
	if user["status"] != "error" || user["error"].(map[string]any)["status"] != 401.0 || !cmp.Equal(user["queryKey"], []any{"user", "me"}) {
		t.Errorf("user = %v", user)
	}
	if m := snap.State.Mutations["1"]; m["status"] != "success" || m["variables"] == nil {
		t.Errorf("mutation 1 = %v", m)
	}
	before := len(demoAllEvents(t, a, "react_query"))
	for range demoQueryRefetchEvery {
		a.step()
	}
	after := demoAllEvents(t, a, "react_query")
	var refetched int
	for _, ev := range after[before:] {
		var p struct {
			QueryHash string `json:"queryHash"`
		}
		_ = json.Unmarshal(ev.Payload, &p)
		if ev.Type == "query_updated" && p.QueryHash == demoProductsHash {
			refetched++
		}
	}
	if refetched != 2 {
		t.Errorf("after %d steps, %d products updates; want a refetch (fetching, then its result)", demoQueryRefetchEvery, refetched)
	}
	// Without the option, no react_query stream.
	if _, werr := demoCall(t, newDemoTestApp(3, 0), "snapshot.get", `{"stream":"react_query"}`); werr == nil {
		t.Error("a demo app without QueryCache offers react_query")
	}
}
