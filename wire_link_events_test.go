package main

// What an adapter pushes and what the link tells its owner: stream status,
// the bounded event queues and notices for agents.

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// linkEventKindNames names the kinds in test failures, as their String
// says them.
var linkEventKindNames = [...]string{linkConnected: "connected", linkDisconnected: "disconnected",
	linkStreamsChanged: "streams_changed", linkEventPushed: "event_pushed", linkSessionExpired: "session_expired",
	linkNotice: "notice"}

func (k linkEventKind) String() string {
	if k > 0 && int(k) < len(linkEventKindNames) {
		return linkEventKindNames[k]
	}
	return "linkEventKind(" + strconv.Itoa(int(k)) + ")"
}

func TestPushesUpdateStatus(t *testing.T) {
	t.Parallel()
	h := startLinkHarness(t, nil, nil)
	a := h.connect(t, "s")
	a.sendText(`{"type":"event","event":{"stream":"redux","seq":1,"type":"action_dispatched","timestamp":"2026-11-21T10:00:01.000Z","payload":{}}}`)
	a.sendText(`{"type":"event","event":{"stream":"redux","seq":2,"type":"action_dispatched","timestamp":"2026-11-21T10:00:02.500Z","payload":{}}}`)
	a.sendText(`{"type":"event","event":{"stream":"navigation","seq":7,"type":"route_change"}}`)
	a.sendText(`{"type":"event","event":{"stream":"console","seq":1,"type":"log"}}`)
	linkWaitFor(t, "the pushes to count", func() bool {
		s := h.link.status()
		return s.Connected && s.Adapter.Streams[1].EventCount == 1
	})
	got := h.link.status().Adapter.Streams
	if got[1].LastEventAt.IsZero() {
		t.Error("navigation LastEventAt is zero; want the arrival time")
	}
	want := []streamState{
		{Name: "redux", Active: true, EventCount: 2, LatestSeq: 2, LastEventAt: time.Date(2026, 11, 21, 10, 0, 2, 5e8, time.UTC)},
		{Name: "navigation", Active: true, EventCount: 1, LatestSeq: 7, LastEventAt: got[1].LastEventAt},
		{Name: "mmkv", Active: true, Instances: []string{"default", "auth"}},
	}
	if diff := cmp.Diff(got, want, cmpopts.EquateApproxTime(0)); diff != "" {
		t.Errorf("streams after events (-got +want):\n%s", diff)
	}

	a.sendText(`{"type":"streams","streams":[{"name":"mmkv","active":true,"instances":["default","auth","cache"]},{"name":"redux","active":false},{"name":"console","active":true}]}`)
	a.sendText(`{"type":"streams","streams":[{"name":"redux","active":true},{"name":"redux","active":true}]}`) // invalid: ignored
	a.sendText(`{"type":"event","event":{"stream":"console","seq":2,"type":"log","timestamp":"not a time"}}`)
	linkWaitFor(t, "the stream list to change", func() bool {
		s := h.link.status()
		return s.Connected && len(s.Adapter.Streams) == 3 && s.Adapter.Streams[2].EventCount == 1
	})
	got = h.link.status().Adapter.Streams
	want = []streamState{
		{Name: "mmkv", Active: true, Instances: []string{"default", "auth", "cache"}},
		{Name: "redux", EventCount: 2, LatestSeq: 2, LastEventAt: time.Date(2026, 11, 21, 10, 0, 2, 5e8, time.UTC)},
		{Name: "console", Active: true, EventCount: 1, LatestSeq: 2, LastEventAt: got[2].LastEventAt},
	}
	if diff := cmp.Diff(got, want, cmpopts.EquateApproxTime(0)); diff != "" {
		t.Errorf("streams after the streams push (-got +want):\n%s", diff)
	}
	h.events.waitFor(t, []linkEvent{
		{Kind: linkConnected, SessionID: "s"},
		{Kind: linkEventPushed, SessionID: "s", Stream: "redux"},
		{Kind: linkEventPushed, SessionID: "s", Stream: "redux"},
		{Kind: linkEventPushed, SessionID: "s", Stream: "navigation"},
		{Kind: linkEventPushed, SessionID: "s", Stream: "console"},
		{Kind: linkStreamsChanged, SessionID: "s"},
		{Kind: linkEventPushed, SessionID: "s", Stream: "console"},
	})
}

func TestEventQueueBoundsPushedEvents(t *testing.T) {
	t.Parallel()
	var q linkEventQueue
	q.wake = make(chan struct{}, 1)
	for range maxQueuedPushEvents + 10 {
		q.push(linkEvent{Kind: linkEventPushed})
	}
	q.push(linkEvent{Kind: linkDisconnected})
	q.close()
	q.push(linkEvent{Kind: linkConnected}) // after close: dropped
	var got []linkEvent
	q.run(func(ev linkEvent) { got = append(got, ev) })
	if len(got) != maxQueuedPushEvents+1 || got[len(got)-1].Kind != linkDisconnected {
		t.Errorf("delivered %d events; want %d pushes then the disconnect", len(got), maxQueuedPushEvents)
	}
}

func TestLinkEventQueueBounds(t *testing.T) {
	q := linkEventQueue{wake: make(chan struct{}, 1)}
	streams := linkEvent{Kind: linkStreamsChanged, SessionID: "s"}
	q.push(streams)
	q.push(streams)
	if len(q.items) != 1 {
		t.Errorf("repeated stream-list changes queued %d times, want once", len(q.items))
	}
	for i := range 2 * maxQueuedLinkEvents {
		q.push(linkEvent{Kind: linkConnected, SessionID: strconv.Itoa(i)})
	}
	if len(q.items) != maxQueuedLinkEvents {
		t.Errorf("queue holds %d events, want the bound %d", len(q.items), maxQueuedLinkEvents)
	}
}

// TestNoticesForAgents pins what the link tells MCP clients beyond
// connects: a request that timed out, a malformed answer, an oversized
// message, each naming the session and the particulars. The request that
// times out has a link of its own with a short timeout, so that the one
// answered malformed never times out on a slow machine.
func TestNoticesForAgents(t *testing.T) {
	t.Parallel()
	h := startLinkHarness(t, func(c *config) { c.RequestTimeout = time.Minute }, nil)
	a := h.connect(t, "s")
	ch := requestInBackground(t.Context(), h.link, "streams.list", nil)
	req := a.recvRequest()
	a.sendText(`{"type":"response","id":"` + req.ID + `","error":"oops"}`)
	awaitOutcome(t, ch)
	a.sendText(`{"type":"event","pad":"` + strings.Repeat("x", 600<<10) + `"}`)
	h.events.waitFor(t, []linkEvent{
		{Kind: linkConnected, SessionID: "s"},
		{Kind: linkNotice, SessionID: "s", Level: "warning", Notice: "malformed answer dropped",
			Detail: "the app adapter's answer to streams.list is malformed: error is not an object"},
		{Kind: linkNotice, SessionID: "s", Level: "warning", Notice: "oversized message dropped",
			Detail: `a "event" message of 614425 bytes, over MAX_PAYLOAD_SIZE (524288)`},
	})

	short := startLinkHarness(t, func(c *config) { c.RequestTimeout = 200 * time.Millisecond }, nil)
	b := short.connect(t, "s")
	ch = requestInBackground(t.Context(), short.link, "events.query", nil)
	b.recvRequest()
	awaitOutcome(t, ch)
	b.recv() // the cancel
	short.events.waitFor(t, []linkEvent{
		{Kind: linkConnected, SessionID: "s"},
		{Kind: linkNotice, SessionID: "s", Level: "warning", Notice: "request timed out",
			Detail: "events.query got no answer within 200 ms"},
	})
}
