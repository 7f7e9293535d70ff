package main

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// A session's query cache follows the events; an unchanged cache is not
// recorded again, a changed one is.
func TestSessionQueryCache(t *testing.T) {
	reg, _ := newTestRegistry(100)
	feed := &testFeed{}
	s, _ := reg.attach(sessionViaReactotron, "c1", "", &adapterInfo{}, feed)
	s.keepQueryEvent(feed, "query_added", time.Now(), json.RawMessage(`{"queryHash":"[1]","queryKey":[1],"status":"pending","observerCount":1}`))
	s.keepQueryEvent(feed, "query_updated", time.Now(), json.RawMessage(`{"queryHash":"[1]","queryKey":[1],"status":"success","data":3}`))
	s.keepQueryEvent(feed, "mutation_added", time.Now(), json.RawMessage(`{"mutationId":4,"status":"idle"}`))
	first, err := s.queryCacheSnapshot(feed)
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Seq   int64
		State struct {
			Queries   map[string]map[string]any
			Mutations map[string]map[string]any
		}
	}
	if err := json.Unmarshal(first, &got); err != nil {
		t.Fatal(err)
	}
	q := got.State.Queries["[1]"]
	if q["status"] != "success" || q["data"] != 3.0 || q["observerCount"] != 1.0 || got.State.Mutations["4"]["status"] != "idle" {
		t.Errorf("cache = %+v", got.State)
	}
	if again, _ := s.queryCacheSnapshot(feed); string(again) != string(first) {
		t.Errorf("an unchanged cache gave %s then %s", first, again)
	}
	s.keepQueryEvent(feed, "query_removed", time.Now(), json.RawMessage(`{"queryHash":"[1]"}`))
	later, _ := s.queryCacheSnapshot(feed)
	if string(later) == string(first) || strings.Contains(string(later), `"[1]"`) {
		t.Errorf("after query_removed the cache is %s", later)
	}
	// A connection that is no longer the session's feed changes nothing.
	s.keepQueryEvent(&testFeed{}, "query_added", time.Now(), json.RawMessage(`{"queryHash":"[2]"}`))
	if now, _ := s.queryCacheSnapshot(feed); string(now) != string(later) {
		t.Errorf("a stale connection changed the cache: %s", now)
	}
}
