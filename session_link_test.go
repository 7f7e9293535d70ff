package main

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/google/go-cmp/cmp"
)

// connectWith dials h and completes a handshake for sessionID, edited by
// mods; it returns once the server has attached the session (the server
// reads in order: a ping sent after the handshake is answered after it).
func connectWith(t *testing.T, h *linkHarness, sessionID string, mods ...func(map[string]any)) *wireTestAdapter {
	t.Helper()
	a := h.dial(t, nil)
	a.send(testHandshake(sessionID, mods...))
	if got := a.recv(); got["type"] != "handshake_ack" {
		t.Fatalf("handshake answer = %v, want a handshake_ack", got)
	}
	a.sync()
	return a
}

// sync returns once the server has handled everything a sent before.
func (a *wireTestAdapter) sync() {
	a.t.Helper()
	a.send(map[string]string{"type": "ping"})
	if got := a.recv(); got["type"] != "pong" {
		a.t.Fatalf("got %v, want a pong", got)
	}
}

func sessionByID(t *testing.T, reg *sessionRegistry, id string) *session {
	t.Helper()
	for _, s := range reg.list() {
		if s.id == id {
			return s
		}
	}
	t.Fatalf("no session %q", id)
	return nil
}

func sessionIDs(reg *sessionRegistry) map[string]bool {
	out := map[string]bool{}
	for _, s := range reg.list() {
		out[s.id] = s.isLive()
	}
	return out
}

func sessionRequestInBackground(ctx context.Context, s *session, method string, params any) <-chan linkOutcome {
	ch := make(chan linkOutcome, 1)
	go func() {
		r, err := s.request(ctx, method, params)
		ch <- linkOutcome{r, err}
	}()
	return ch
}

// answerOnce answers the next request a receives and checks the outcome.
func answerOnce(t *testing.T, a *wireTestAdapter, ch <-chan linkOutcome, result string) {
	t.Helper()
	req := a.recvRequest()
	a.send(map[string]any{"type": "response", "id": req.ID, "result": json.RawMessage(result)})
	if o := awaitOutcome(t, ch); o.err != nil || string(o.result) != result {
		t.Errorf("request = %s, %v; want %s", o.result, o.err, result)
	}
}

// TestWireReplacementByDeviceID: a handshake with a deviceId replaces the
// live session of that device (close 4000, its pending requests fail
// NOT_CONNECTED "replaced") and leaves other devices' sessions alone.
func TestWireReplacementByDeviceID(t *testing.T) {
	t.Parallel()
	h := startLinkHarness(t, nil, nil)
	reg := registryOf(h.link)
	phone1 := connectWith(t, h, "phone-1", hsWith("deviceId", "phone"))
	tablet := connectWith(t, h, "tablet-1", hsWith("deviceId", "tablet"))
	pending := sessionRequestInBackground(t.Context(), sessionByID(t, reg, "phone-1"), "snapshot.get", snapshotParams{Stream: "redux"})
	phone1.recvRequest()

	connectWith(t, h, "phone-2", hsWith("deviceId", "phone"))
	wantLinkToolError(t, awaitOutcome(t, pending).err, codeNotConnected, linkNotConnectedDetails{Reason: linkReasonReplaced})
	phone1.expectClose(4000)
	if diff := cmp.Diff(sessionIDs(reg), map[string]bool{"phone-2": true, "tablet-1": true}); diff != "" {
		t.Errorf("sessions (-got +want):\n%s", diff)
	}
	// The other device still answers through its session.
	answerOnce(t, tablet, sessionRequestInBackground(t.Context(), sessionByID(t, reg, "tablet-1"), "streams.list", struct{}{}), `{"streams":[]}`)
	h.events.waitFor(t, []linkEvent{
		{Kind: linkConnected, SessionID: "phone-1"},
		{Kind: linkConnected, SessionID: "tablet-1"},
		{Kind: linkDisconnected, SessionID: "phone-1", Reason: "replaced"},
		{Kind: linkConnected, SessionID: "phone-2", Replaced: "phone-1"},
	})
}

// TestWireReplacementWithoutDeviceID: a handshake without a deviceId
// replaces the live session without one (v1's rule), and no session that
// has a deviceId.
func TestWireReplacementWithoutDeviceID(t *testing.T) {
	t.Parallel()
	h := startLinkHarness(t, nil, nil)
	reg := registryOf(h.link)
	bare1 := connectWith(t, h, "bare-1")
	phone := connectWith(t, h, "phone-1", hsWith("deviceId", "phone"))
	pending := sessionRequestInBackground(t.Context(), sessionByID(t, reg, "bare-1"), "streams.list", struct{}{})
	bare1.recvRequest()

	connectWith(t, h, "bare-2", hsWith("deviceId", nil)) // null is no deviceId
	wantLinkToolError(t, awaitOutcome(t, pending).err, codeNotConnected, linkNotConnectedDetails{Reason: linkReasonReplaced})
	bare1.expectClose(4000)
	if diff := cmp.Diff(sessionIDs(reg), map[string]bool{"bare-2": true, "phone-1": true}); diff != "" {
		t.Errorf("sessions (-got +want):\n%s", diff)
	}
	answerOnce(t, phone, sessionRequestInBackground(t.Context(), sessionByID(t, reg, "phone-1"), "streams.list", struct{}{}), `{"streams":[]}`)
	if s := h.link.status(); !s.Connected || s.Adapter.SessionID != "bare-2" {
		t.Errorf("status = %+v, want bare-2, the newest, as the default", s)
	}
}

// TestWireReconnectKeepsSession: an adapter that reconnects with its
// sessionId gets its session back with the events buffered so far, after
// a disconnect and while its old connection is still open alike.
func TestWireReconnectKeepsSession(t *testing.T) {
	t.Parallel()
	h := startLinkHarness(t, nil, nil)
	reg := registryOf(h.link)
	first := connectWith(t, h, "s-1", hsWith("deviceId", "phone"))
	for seq := 1; seq <= 3; seq++ {
		first.sendText(fmt.Sprintf(`{"type":"event","event":{"stream":"redux","seq":%d,"type":"action_dispatched","payload":{}}}`, seq))
	}
	first.sync()
	s := sessionByID(t, reg, "s-1")
	if err := first.ws.Close(websocket.StatusNormalClosure, "reload"); err != nil {
		t.Fatal(err)
	}
	linkWaitFor(t, "the session to be disconnected", func() bool { return !s.isLive() })

	second := connectWith(t, h, "s-1", hsWith("deviceId", "phone"))
	if got := sessionByID(t, reg, "s-1"); got != s || !s.isLive() {
		t.Fatalf("reconnected session = %p (live %v), want the same session %p, live", got, s.isLive(), s)
	}
	if n := len(reg.list()); n != 1 {
		t.Errorf("%d sessions, want 1", n)
	}
	second.sendText(`{"type":"event","event":{"stream":"redux","seq":4,"type":"action_dispatched","payload":{}}}`)
	second.sync()
	if got := queryBuffer(t, s, eventsParams{Stream: "redux", Limit: 50}); !slices.Equal(got.Seqs, []int64{1, 2, 3, 4}) {
		t.Errorf("buffered redux events %v, want [1 2 3 4]", got.Seqs)
	}
	if st := h.link.status(); st.Adapter.Streams[0].EventCount != 4 || st.Adapter.Streams[0].LatestSeq != 4 {
		t.Errorf("redux figures %+v, want 4 events up to seq 4", st.Adapter.Streams[0])
	}

	// Reconnecting while the old connection is still open replaces it.
	pending := sessionRequestInBackground(t.Context(), s, "streams.list", struct{}{})
	second.recvRequest()
	third := connectWith(t, h, "s-1", hsWith("deviceId", "phone"))
	wantLinkToolError(t, awaitOutcome(t, pending).err, codeNotConnected, linkNotConnectedDetails{Reason: linkReasonReplaced})
	second.expectClose(4000)
	if got := sessionByID(t, reg, "s-1"); got != s || !s.isLive() {
		t.Fatalf("session after a reconnect over an open connection = %p, want %p, live", got, s)
	}
	if got := queryBuffer(t, s, eventsParams{Stream: "redux", Limit: 50}); len(got.Seqs) != 4 {
		t.Errorf("buffered redux events %v, want 4", got.Seqs)
	}
	answerOnce(t, third, sessionRequestInBackground(t.Context(), s, "streams.list", struct{}{}), `{"streams":[]}`)
}

// TestStreamsPushBounds: a streams push is held to the handshake's bounds,
// and an accepted one keeps the figures of the streams that stay.
func TestStreamsPushBounds(t *testing.T) {
	t.Parallel()
	h := startLinkHarness(t, nil, nil)
	a := connectWith(t, h, "s")
	a.sendText(`{"type":"event","event":{"stream":"redux","seq":1,"type":"action_dispatched","timestamp":"2026-11-21T10:00:01.000Z","payload":{}}}`)
	a.sendText(`{"type":"event","event":{"stream":"redux","seq":2,"type":"action_dispatched","timestamp":"2026-11-21T10:00:02.000Z","payload":{}}}`)
	a.sendText(`{"type":"event","event":{"stream":"mmkv","seq":9,"type":"mmkv_mutation","timestamp":"2026-11-21T10:00:03.000Z","payload":{}}}`)
	a.sync()
	before := h.link.status().Adapter.Streams

	pushStreams := func(head []string, n int) string {
		items := slices.Clone(head)
		for i := len(head); i < n; i++ {
			items = append(items, fmt.Sprintf(`{"name":"s%05d","active":true}`, i))
		}
		return `{"type":"streams","streams":[` + strings.Join(items, ",") + `]}`
	}
	for _, n := range []int{10000, maxWireStreams + 1} {
		a.sendText(pushStreams(nil, n))
		a.sync()
		if diff := cmp.Diff(h.link.status().Adapter.Streams, before); diff != "" {
			t.Errorf("a push of %d streams changed the streams (-got +want):\n%s", n, diff)
		}
	}
	if got := strings.Count(h.logs.String(), "at most 256 streams"); got != 2 {
		t.Errorf("%d refusals naming the bound logged, want 2:\n%s", got, h.logs)
	}
	instances := make([]string, maxWireInstances+1)
	for i := range instances {
		instances[i] = fmt.Sprintf(`"i%d"`, i)
	}
	a.sendText(`{"type":"streams","streams":[{"name":"redux","active":true,"instances":[` + strings.Join(instances, ",") + `]}]}`)
	a.sync()
	if !strings.Contains(h.logs.String(), "streams[0].instances: at most 1024 instances") {
		t.Errorf("no refusal naming the instance bound in:\n%s", h.logs)
	}

	// The largest push allowed: mmkv and redux stay, navigation goes.
	a.sendText(pushStreams([]string{
		`{"name":"mmkv","active":true,"instances":["default","auth","cache"]}`,
		`{"name":"redux","active":false}`,
	}, maxWireStreams))
	a.sync()
	got := h.link.status().Adapter.Streams
	if len(got) != maxWireStreams {
		t.Fatalf("%d streams after the push, want %d", len(got), maxWireStreams)
	}
	want := []streamState{
		{Name: "mmkv", Active: true, Instances: []string{"default", "auth", "cache"}, EventCount: 1, LatestSeq: 9, LastEventAt: time.Date(2026, 11, 21, 10, 0, 3, 0, time.UTC)},
		{Name: "redux", EventCount: 2, LatestSeq: 2, LastEventAt: time.Date(2026, 11, 21, 10, 0, 2, 0, time.UTC)},
		{Name: "s00002", Active: true},
	}
	if diff := cmp.Diff(got[:3], want); diff != "" {
		t.Errorf("streams after the push (-got +want):\n%s", diff)
	}
	if got[255].Name != "s00255" || got[255].EventCount != 0 {
		t.Errorf("last stream = %+v, want s00255 without events", got[255])
	}
	// The stream index follows the new list.
	a.sendText(`{"type":"event","event":{"stream":"s00200","seq":1,"type":"log","payload":{}}}`)
	a.sendText(`{"type":"event","event":{"stream":"navigation","seq":1,"type":"route_change","payload":{}}}`)
	a.sendText(`{"type":"event","event":{"stream":"redux","seq":3,"type":"action_dispatched","payload":{}}}`)
	a.sync()
	got = h.link.status().Adapter.Streams
	if got[200].EventCount != 1 || got[1].EventCount != 3 {
		t.Errorf("s00200 counts %d events, redux %d; want 1 and 3", got[200].EventCount, got[1].EventCount)
	}
	if slices.ContainsFunc(got, func(s streamState) bool { return s.Name == "navigation" }) {
		t.Error("navigation, no longer advertised, is listed")
	}
}

// TestSessionsExpireUnasked: the registry looks for expired sessions by
// itself, so that clients hear of an expiry without calling anything.
func TestSessionsExpireUnasked(t *testing.T) {
	t.Parallel()
	h := startLinkHarness(t, nil, func(l *adapterLink) {
		reg := registryOf(l)
		reg.pruneEvery = time.Millisecond
		reg.ttl = 0 // expired as soon as it leaves
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() {
			defer close(done)
			reg.run(ctx)
		}()
		t.Cleanup(func() {
			cancel()
			<-done
		})
	})
	a := connectWith(t, h, "s")
	if err := a.ws.Close(websocket.StatusNormalClosure, "bye"); err != nil {
		t.Fatal(err)
	}
	// Nothing here lists the sessions: only the registry's own pruning can
	// report the expiry.
	h.events.waitFor(t, []linkEvent{
		{Kind: linkConnected, SessionID: "s"},
		{Kind: linkDisconnected, SessionID: "s", Reason: "disconnected"},
		{Kind: linkSessionExpired, SessionID: "s"},
	})
}

// TestEventBufferSetting: EVENT_BUFFER bounds what a wire session keeps.
func TestEventBufferSetting(t *testing.T) {
	t.Parallel()
	h := startLinkHarness(t, func(c *config) { c.EventBuffer = 3 }, nil)
	a := connectWith(t, h, "s")
	for seq := 1; seq <= 5; seq++ {
		a.sendText(fmt.Sprintf(`{"type":"event","event":{"stream":"navigation","seq":%d,"type":"route_change","payload":{}}}`, seq))
	}
	a.sync()
	want := eventsAnswer{[]int64{3, 4, 5}, false, 3, 5}
	if diff := cmp.Diff(queryBuffer(t, sessionByID(t, registryOf(h.link), "s"), eventsParams{Stream: "navigation", Limit: 200}), want); diff != "" {
		t.Errorf("navigation buffer (-got +want):\n%s", diff)
	}
}
