package main

import (
	"sync"
	"testing"
)

// TestSubscriptionListWhileChanging: a client's subscriptions are listed
// (heldURIs) while the client subscribes and drops them all on other
// goroutines. The set's map is made on first use and dropped by clear, so
// the listing must read the field itself under the lock: go test -race
// holds it.
func TestSubscriptionListWhileChanging(t *testing.T) {
	hub := newTestResourceHub(config{}, newTestLink(config{}, nil, nil), func(string, any) {})
	s := subscriptionSet{onChange: func() {}}
	var wg sync.WaitGroup
	wg.Go(func() {
		for range 200 {
			if err := s.add(hub, uriSession); err != nil {
				t.Errorf("add: %v", err)
				return
			}
			s.clear(hub)
		}
	})
	for range 200 {
		if got := s.list(); len(got) > 1 {
			t.Fatalf("list = %v, want at most the one URI", got)
		}
	}
	wg.Wait()
	if got := s.list(); len(got) != 0 {
		t.Errorf("list after clear = %v, want none", got)
	}
}
