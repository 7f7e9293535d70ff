package main

import (
	"context"
	"encoding/json"
	"sync/atomic"
	"time"
)

// listChangedInterval is the least time between two
// notifications/resources/list_changed: an app reloading in a loop (Fast
// Refresh) replaces its adapter many times a second, and each notification
// makes a client fetch resources/list again.
const listChangedInterval = 500 * time.Millisecond

// listAnnouncer sends notifications/resources/list_changed when, and only
// when, what resources/list answers differs from what it answered at the
// last announcement (listingKey). The first change is announced at once;
// changes within interval of an announcement wait for its end and are
// announced together, so the last is never lost.
//
// A change relayed from the process holding the adapter port (rpc_relay.go)
// is announced through the same bound, to this process's own clients only.
type listAnnouncer struct {
	listing  func() string    // what resources/list answers, as a comparable key
	send     func(params any) // sends one list_changed with params to whoever takes it
	interval time.Duration

	announced string        // the listing's key at the last announcement; owned by run
	relayed   atomic.Bool   // the holder announced a change
	wake      chan struct{} // cap 1: the listing may have changed
}

// clientsOnly wraps a notification's params for this process's MCP clients
// alone: what came through the relay goes no further, in particular not
// back out to subscriptions/listen streams, one of which may be the relay
// of another process.
type clientsOnly struct{ params any }

// unwrapClientsOnly returns a notification's params, and whether they were
// for this process's clients only.
func unwrapClientsOnly(params any) (any, bool) {
	if only, ok := params.(clientsOnly); ok {
		return only.params, true
	}
	return params, false
}

func newListAnnouncer(listing func() string, send func(params any), interval time.Duration) *listAnnouncer {
	return &listAnnouncer{listing: listing, send: send, interval: interval, announced: listing(),
		wake: make(chan struct{}, 1)}
}

// relayedChange tells the announcer that the process holding the adapter
// port announced a change of its listing. It never blocks.
func (a *listAnnouncer) relayedChange() {
	a.relayed.Store(true)
	wake(a.wake)
}

// run announces changes until ctx ends; serve runs it.
func (a *listAnnouncer) run(ctx context.Context) {
	var last time.Time // of the last announcement
	for {
		select {
		case <-ctx.Done():
			return
		case <-a.wake:
		}
		if wait := time.Until(last.Add(a.interval)); wait > 0 && !last.IsZero() && !sleepCtx(ctx, wait) {
			return
		}
		relayed := a.relayed.Swap(false)
		switch key := a.listing(); {
		case key != a.announced:
			a.announced, last = key, time.Now()
			a.send(struct{}{})
		case relayed:
			last = time.Now()
			a.send(clientsOnly{struct{}{}})
		}
	}
}

// listingKey is what resources/list answers, as a comparable key: the
// static resources never change, so the default session's MMKV instances
// say it all.
func (h *resourceHub) listingKey() string {
	instances := h.mmkvInstances()
	if len(instances) == 0 {
		return ""
	}
	key, _ := json.Marshal(instances) // strings: cannot fail
	return string(key)
}

// listMayHaveChanged tells the hub that an app came, went or changed its
// streams; clients hear of it only if the listing changed. It never blocks.
func (h *resourceHub) listMayHaveChanged() { wake(h.lists.wake) }
