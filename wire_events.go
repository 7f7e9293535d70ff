package main

import "sync"

// wire_events.go is what the link reports to the MCP core — apps coming,
// going, pushing events, notices — and the bounded queue that hands the
// reports over in order from one goroutine.

// linkEventKind says what a linkEvent reports.
type linkEventKind int

const (
	linkConnected      linkEventKind = iota + 1 // an adapter completed its handshake
	linkDisconnected                            // the live adapter went away
	linkStreamsChanged                          // the live adapter pushed a new stream list
	linkEventPushed                             // the live adapter pushed an event
	linkSessionExpired                          // a disconnected session was forgotten
	linkNotice                                  // something an agent should hear of: Level, Notice, Detail
)

// linkEvent is what adapterLink reports to its notify callback. A
// replacement is reported as linkDisconnected (Reason "replaced") for the old
// session, then linkConnected (Replaced set) for the new one; events of a
// session that is no longer live are not reported.
type linkEvent struct {
	Kind      linkEventKind
	SessionID string
	Replaced  string // linkConnected: session id of the adapter it replaced, if any
	Reason    string // linkDisconnected: "disconnected", "replaced", "shutdown", "ping timeout"
	Stream    string // linkEventPushed
	Level     string // linkNotice: an MCP log level
	Notice    string // linkNotice: what happened, e.g. "request timed out"
	Detail    string // linkNotice: the particulars
}

// linkEventQueue hands events to notify from one goroutine, in order.
type linkEventQueue struct {
	mu     sync.Mutex
	items  []linkEvent
	pushed int // linkEventPushed items in items
	closed bool
	wake   chan struct{} // capacity 1
}

// push queues ev. It never blocks, so it may be called under other locks.
func (q *linkEventQueue) push(ev linkEvent) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.closed {
		return
	}
	switch {
	case ev.Kind == linkEventPushed:
		if q.pushed >= maxQueuedPushEvents {
			return
		}
		q.pushed++
	case ev.Kind == linkStreamsChanged && len(q.items) > 0 && q.items[len(q.items)-1] == ev:
		return // a repeated stream-list change says nothing new
	case len(q.items) >= maxQueuedLinkEvents:
		// Only a client that stopped reading stdout lets this many pile
		// up; an adapter reconnecting in a loop must not grow memory.
		return
	}
	q.items = append(q.items, ev)
	wake(q.wake)
}

// run calls notify (if not nil) for each event until close, then drains.
func (q *linkEventQueue) run(notify func(linkEvent)) {
	for {
		<-q.wake
		q.mu.Lock()
		items, closed := q.items, q.closed
		q.items, q.pushed = nil, 0
		q.mu.Unlock()
		if notify != nil {
			for _, ev := range items {
				notify(ev)
			}
		}
		if closed {
			return
		}
	}
}

func (q *linkEventQueue) close() {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.closed = true
	wake(q.wake)
}
