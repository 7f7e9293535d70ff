package main

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/coder/websocket"
	"github.com/google/go-cmp/cmp"
)

// testFeed is a session feed driven by a test: answer answers requests
// (nil: everything is answered from the session's buffers), and replaced
// is counted.
type testFeed struct {
	answer func(method string, params any) (json.RawMessage, error)

	mu            sync.Mutex
	replacedCalls int
}

func (f *testFeed) request(ctx context.Context, method string, params any) (json.RawMessage, error) {
	if f.answer == nil {
		return nil, errAnswerLocally
	}
	return f.answer(method, params)
}

func (f *testFeed) replaced() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.replacedCalls++
}

func (f *testFeed) timesReplaced() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.replacedCalls
}

// newTestRegistry is a registry keeping eventBuffer events per stream, whose
// link events pile up in the returned queue (nobody consumes them).
func newTestRegistry(eventBuffer int) (*sessionRegistry, *linkEventQueue) {
	q := &linkEventQueue{}
	return newSessionRegistry(config{EventBuffer: eventBuffer}, nil, q), q
}

func queuedEvents(q *linkEventQueue) []linkEvent {
	q.mu.Lock()
	defer q.mu.Unlock()
	return slices.Clone(q.items)
}

// testInfo describes an app named app with the given active streams.
func testInfo(sessionID, deviceID, app string, streams ...string) *adapterInfo {
	info := &adapterInfo{SessionID: sessionID, AdapterVersion: "1", DeviceID: deviceID, ConnectedAt: time.Now()}
	if app != "" {
		info.App = json.RawMessage(fmt.Sprintf(`{"name":%q}`, app))
	}
	for _, name := range streams {
		info.Streams = append(info.Streams, streamState{Name: name, Active: true})
	}
	return info
}

// testEvent is a pushed event's JSON; payload is JSON text.
func testEvent(stream string, seq int64, typ, payload string) []byte {
	return fmt.Appendf(nil, `{"stream":%q,"seq":%d,"type":%q,"timestamp":"2026-11-21T10:00:00.000Z","payload":%s}`, stream, seq, typ, payload)
}

func recordTestEvent(s *session, feed sessionFeed, stream string, seq int64, typ, payload string) {
	s.record(feed, stream, seq, typ, time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC), testEvent(stream, seq, typ, payload))
}

// eventsAnswer is an events.query answer with events reduced to their seqs.
type eventsAnswer struct {
	Seqs      []int64
	HasMore   bool
	OldestSeq int64
	LatestSeq int64
}

func decodeEventsAnswer(t *testing.T, raw json.RawMessage) eventsAnswer {
	t.Helper()
	var res struct {
		Events    []struct{ Seq int64 }
		HasMore   bool
		OldestSeq int64
		LatestSeq int64
	}
	if err := json.Unmarshal(raw, &res); err != nil {
		t.Fatalf("events.query answer %s: %v", raw, err)
	}
	out := eventsAnswer{Seqs: []int64{}, HasMore: res.HasMore, OldestSeq: res.OldestSeq, LatestSeq: res.LatestSeq}
	for _, e := range res.Events {
		out.Seqs = append(out.Seqs, e.Seq)
	}
	return out
}

func queryBuffer(t *testing.T, s *session, p eventsParams) eventsAnswer {
	t.Helper()
	raw, err := s.answerLocally("events.query", p)
	if err != nil {
		t.Fatalf("events.query %+v: %v", p, err)
	}
	return decodeEventsAnswer(t, raw)
}

// checkSessionBytes checks that a session's byte count is what its rings
// and snapshots hold, and within the bound.
func checkSessionBytes(t *testing.T, s *session) {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	var total int64
	for name, r := range s.rings {
		var ring int64
		for i := range r.events.len() {
			ring += int64(len(r.events.at(i).raw))
		}
		if ring != r.bytes {
			t.Errorf("ring %s counts %d bytes, holds %d", name, r.bytes, ring)
		}
		total += ring + int64(len(r.snapshot))
	}
	if total != s.bytes {
		t.Errorf("session counts %d bytes, holds %d", s.bytes, total)
	}
	if s.bytes > s.reg.bufferBytes {
		t.Errorf("session holds %d bytes, over its bound of %d", s.bytes, s.reg.bufferBytes)
	}
}

func since(n int64) *int64 { return &n }

// TestEventsQueryFromBuffers pins events.query answered from a session's
// buffers to wire protocol §4: the newest `limit` without since_seq, the
// oldest `limit` after since_seq, hasMore both ways, event_type filtering,
// and oldestSeq/latestSeq describing the whole buffer.
func TestEventsQueryFromBuffers(t *testing.T) {
	t.Parallel()
	reg, _ := newTestRegistry(10)
	feed := &testFeed{}
	s, _ := reg.attach(sessionViaWire, "s", "", testInfo("s", "", "ShopApp", "redux", "navigation"), feed)
	// Seqs 1-12 into a ring of 10: 1 and 2 are evicted. Every third event
	// is a snapshot: 3, 6, 9, 12.
	for seq := int64(1); seq <= 12; seq++ {
		typ, payload := "action_dispatched", `{"action":{"type":"a"}}`
		if seq%3 == 0 {
			typ, payload = "state_snapshot", fmt.Sprintf(`{"state":{"n":%d}}`, seq)
		}
		recordTestEvent(s, feed, "redux", seq, typ, payload)
	}
	const snap = "state_snapshot"
	tests := []struct {
		name string
		p    eventsParams
		want eventsAnswer
	}{
		{"newest limit", eventsParams{Stream: "redux", Limit: 3}, eventsAnswer{[]int64{10, 11, 12}, true, 3, 12}},
		{"newest, limit one short of all", eventsParams{Stream: "redux", Limit: 9}, eventsAnswer{[]int64{4, 5, 6, 7, 8, 9, 10, 11, 12}, true, 3, 12}},
		{"newest, limit exactly all", eventsParams{Stream: "redux", Limit: 10}, eventsAnswer{[]int64{3, 4, 5, 6, 7, 8, 9, 10, 11, 12}, false, 3, 12}},
		{"newest, limit over all", eventsParams{Stream: "redux", Limit: 200}, eventsAnswer{[]int64{3, 4, 5, 6, 7, 8, 9, 10, 11, 12}, false, 3, 12}},
		{"since 0 is the oldest limit", eventsParams{Stream: "redux", Limit: 3, SinceSeq: since(0)}, eventsAnswer{[]int64{3, 4, 5}, true, 3, 12}},
		{"since an evicted seq", eventsParams{Stream: "redux", Limit: 2, SinceSeq: since(1)}, eventsAnswer{[]int64{3, 4}, true, 3, 12}},
		{"since, newer ones left", eventsParams{Stream: "redux", Limit: 2, SinceSeq: since(9)}, eventsAnswer{[]int64{10, 11}, true, 3, 12}},
		{"since, exactly the rest", eventsParams{Stream: "redux", Limit: 3, SinceSeq: since(9)}, eventsAnswer{[]int64{10, 11, 12}, false, 3, 12}},
		{"since the latest", eventsParams{Stream: "redux", Limit: 50, SinceSeq: since(12)}, eventsAnswer{[]int64{}, false, 3, 12}},
		{"since beyond the latest", eventsParams{Stream: "redux", Limit: 50, SinceSeq: since(1 << 62)}, eventsAnswer{[]int64{}, false, 3, 12}},
		{"type, newest", eventsParams{Stream: "redux", Limit: 2, EventType: snap}, eventsAnswer{[]int64{9, 12}, true, 3, 12}},
		{"type, all", eventsParams{Stream: "redux", Limit: 4, EventType: snap}, eventsAnswer{[]int64{3, 6, 9, 12}, false, 3, 12}},
		{"type, since", eventsParams{Stream: "redux", Limit: 2, EventType: snap, SinceSeq: since(3)}, eventsAnswer{[]int64{6, 9}, true, 3, 12}},
		{"type, since, the rest", eventsParams{Stream: "redux", Limit: 2, EventType: snap, SinceSeq: since(6)}, eventsAnswer{[]int64{9, 12}, false, 3, 12}},
		{"type, since between matches", eventsParams{Stream: "redux", Limit: 1, EventType: snap, SinceSeq: since(10)}, eventsAnswer{[]int64{12}, false, 3, 12}},
		{"type, newest, non-matching newer events skipped", eventsParams{Stream: "redux", Limit: 1, EventType: "action_dispatched"}, eventsAnswer{[]int64{11}, true, 3, 12}},
		{"type matching nothing", eventsParams{Stream: "redux", Limit: 5, EventType: "route_change"}, eventsAnswer{[]int64{}, false, 3, 12}},
		{"empty stream", eventsParams{Stream: "navigation", Limit: 5}, eventsAnswer{[]int64{}, false, 0, 0}},
		{"empty stream, since", eventsParams{Stream: "navigation", Limit: 5, SinceSeq: since(0)}, eventsAnswer{[]int64{}, false, 0, 0}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(queryBuffer(t, s, tt.p), tt.want); diff != "" {
				t.Errorf("events.query %+v (-got +want):\n%s", tt.p, diff)
			}
		})
	}

	// Events come back as the app sent them.
	raw, err := s.answerLocally("events.query", eventsParams{Stream: "redux", Limit: 1})
	if err != nil {
		t.Fatal(err)
	}
	want := `{"events":[` + string(testEvent("redux", 12, "state_snapshot", `{"state":{"n":12}}`)) + `],"hasMore":true,"oldestSeq":3,"latestSeq":12}`
	if string(raw) != want {
		t.Errorf("events.query = %s\nwant %s", raw, want)
	}
}

// TestRingBoundsEventCount: a stream keeps EVENT_BUFFER events, evicting the
// oldest, and its oldestSeq moves with them; other streams are untouched.
func TestRingBoundsEventCount(t *testing.T) {
	t.Parallel()
	reg, _ := newTestRegistry(5)
	feed := &testFeed{}
	s, _ := reg.attach(sessionViaWire, "s", "", testInfo("s", "", "ShopApp", "redux", "navigation"), feed)
	recordTestEvent(s, feed, "navigation", 1, "route_change", `{}`)
	for seq := int64(1); seq <= 8; seq++ {
		recordTestEvent(s, feed, "redux", seq, "action_dispatched", `{}`)
		got := queryBuffer(t, s, eventsParams{Stream: "redux", Limit: 200})
		oldest := max(1, seq-4)
		var want []int64
		for n := oldest; n <= seq; n++ {
			want = append(want, n)
		}
		if diff := cmp.Diff(got, eventsAnswer{want, false, oldest, seq}); diff != "" {
			t.Errorf("after seq %d (-got +want):\n%s", seq, diff)
		}
	}
	if got := queryBuffer(t, s, eventsParams{Stream: "navigation", Limit: 200}); !slices.Equal(got.Seqs, []int64{1}) {
		t.Errorf("navigation holds %v, want [1]", got.Seqs)
	}
	checkSessionBytes(t, s)

	// The stream figures count every event received, not only those kept.
	raw, err := s.answerLocally("streams.list", struct{}{})
	if err != nil {
		t.Fatal(err)
	}
	var list struct{ Streams []liveStream }
	if err := json.Unmarshal(raw, &list); err != nil {
		t.Fatal(err)
	}
	at := "2026-11-21T10:00:00.000Z"
	want := []liveStream{
		{Name: "redux", Active: true, EventCount: 8, OldestSeq: 4, LatestSeq: 8, LastEventAt: &at},
		{Name: "navigation", Active: true, EventCount: 1, OldestSeq: 1, LatestSeq: 1, LastEventAt: &at},
	}
	if diff := cmp.Diff(list.Streams, want); diff != "" {
		t.Errorf("streams.list from buffers (-got +want):\n%s", diff)
	}
}

// TestRingBoundsBytes: beyond the per-session byte bound the oldest events
// of the largest ring go first, kept snapshots last.
func TestRingBoundsBytes(t *testing.T) {
	t.Parallel()
	reg, _ := newTestRegistry(1000)
	reg.bufferBytes = 2000
	var snapshotAnswerJSON json.RawMessage
	feed := &testFeed{answer: func(method string, params any) (json.RawMessage, error) {
		if method == "snapshot.get" {
			return snapshotAnswerJSON, nil
		}
		return nil, errAnswerLocally
	}}
	s, _ := reg.attach(sessionViaWire, "s", "", testInfo("s", "", "ShopApp", "redux", "navigation", "mmkv"), feed)
	pad := func(n int) string { return `"` + strings.Repeat("x", n) + `"` }

	// A kept snapshot of 600 bytes, and two small navigation events.
	snapshotAnswerJSON = json.RawMessage(`{"seq":1,"timestamp":"t","state":` + pad(600-len(`{"seq":1,"timestamp":"t","state":}`)) + `}`)
	if _, err := s.request(t.Context(), "snapshot.get", snapshotParams{Stream: "mmkv"}); err != nil {
		t.Fatal(err)
	}
	recordTestEvent(s, feed, "navigation", 1, "route_change", pad(50))
	recordTestEvent(s, feed, "navigation", 2, "route_change", pad(50))
	navBytes := int64(2 * len(testEvent("navigation", 1, "route_change", pad(50))))

	// Redux events of about 100 bytes each, far more than fit.
	var sizes []int64
	for seq := int64(1); seq <= 40; seq++ {
		ev := testEvent("redux", seq, "action_dispatched", pad(20))
		sizes = append(sizes, int64(len(ev)))
		recordTestEvent(s, feed, "redux", seq, "action_dispatched", pad(20))
		checkSessionBytes(t, s)
	}
	// The newest redux events that fit next to the others are kept.
	room := reg.bufferBytes - int64(len(snapshotAnswerJSON)) - navBytes
	var kept []int64
	for i := len(sizes) - 1; i >= 0 && room >= sizes[i]; i-- {
		room -= sizes[i]
		kept = append([]int64{int64(i + 1)}, kept...)
	}
	got := queryBuffer(t, s, eventsParams{Stream: "redux", Limit: 200})
	if diff := cmp.Diff(got, eventsAnswer{kept, false, kept[0], 40}); diff != "" {
		t.Errorf("redux after 40 events (-got +want):\n%s", diff)
	}
	if got := queryBuffer(t, s, eventsParams{Stream: "navigation", Limit: 200}); !slices.Equal(got.Seqs, []int64{1, 2}) {
		t.Errorf("navigation holds %v, want [1 2]: the largest ring gives way first", got.Seqs)
	}
	if raw, err := s.answerLocally("snapshot.get", snapshotParams{Stream: "mmkv"}); err != nil || string(raw) != string(snapshotAnswerJSON) {
		t.Errorf("kept snapshot = %.80s, %v; want it kept while events can go", raw, err)
	}

	// One event larger than the bound empties its own ring, itself
	// included, and breaks nothing.
	recordTestEvent(s, feed, "redux", 41, "action_dispatched", pad(3000))
	checkSessionBytes(t, s)
	if got := queryBuffer(t, s, eventsParams{Stream: "redux", Limit: 200}); len(got.Seqs) != 0 || got.OldestSeq != 0 {
		t.Errorf("after an event over the bound: %+v, want an empty buffer", got)
	}
	if got := queryBuffer(t, s, eventsParams{Stream: "navigation", Limit: 200}); !slices.Equal(got.Seqs, []int64{1, 2}) {
		t.Errorf("navigation holds %v after a large redux event, want [1 2]", got.Seqs)
	}
	recordTestEvent(s, feed, "redux", 42, "action_dispatched", `{}`)
	if got := queryBuffer(t, s, eventsParams{Stream: "redux", Limit: 200}); !slices.Equal(got.Seqs, []int64{42}) {
		t.Errorf("redux holds %v, want [42]", got.Seqs)
	}

	// A snapshot over half the bound is not kept: the one before stays.
	small := snapshotAnswerJSON
	snapshotAnswerJSON = json.RawMessage(`{"seq":2,"timestamp":"t","state":` + pad(1200) + `}`)
	if raw, err := s.request(t.Context(), "snapshot.get", snapshotParams{Stream: "mmkv"}); err != nil || len(raw) != len(snapshotAnswerJSON) {
		t.Fatalf("live snapshot.get = %.40s, %v; want the app's answer", raw, err)
	}
	checkSessionBytes(t, s)
	if raw, err := s.answerLocally("snapshot.get", snapshotParams{Stream: "mmkv"}); err != nil || string(raw) != string(small) {
		t.Errorf("kept snapshot = %.40s, %v; want the earlier one, the %d-byte one is over half the bound", raw, err, len(snapshotAnswerJSON))
	}
}

// TestPostMortemExpiry: a disconnected session stays listed for the TTL,
// then is forgotten and clients are told; live sessions never expire.
func TestPostMortemExpiry(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		reg, q := newTestRegistry(10)
		gone, stays := &testFeed{}, &testFeed{}
		s, _ := reg.attach(sessionViaWire, "gone", "phone", testInfo("gone", "phone", "ShopApp", "redux"), gone)
		reg.attach(sessionViaWire, "stays", "tablet", testInfo("stays", "tablet", "ShopApp", "redux"), stays)
		recordTestEvent(s, gone, "redux", 1, "action_dispatched", `{}`)
		left := time.Now()
		if !reg.detach(s, gone, "disconnected") {
			t.Fatal("detach of the live feed reported it was not live")
		}
		if reg.detach(s, gone, "disconnected") {
			t.Error("a second detach reported the feed live again")
		}

		time.Sleep(sessionPostMortemTTL - time.Second)
		ids := func() []string {
			var out []string
			for _, s := range reg.list() {
				out = append(out, s.id)
			}
			return out
		}
		if diff := cmp.Diff(ids(), []string{"stays", "gone"}); diff != "" {
			t.Fatalf("sessions a second before expiry (-got +want):\n%s", diff)
		}
		v := s.view()
		if v.Connected || !v.DisconnectedAt.Equal(left) {
			t.Errorf("view = connected %v, disconnectedAt %v; want false, %v", v.Connected, v.DisconnectedAt, left)
		}
		if got := queryBuffer(t, s, eventsParams{Stream: "redux", Limit: 10}); !slices.Equal(got.Seqs, []int64{1}) {
			t.Errorf("post-mortem buffer holds %v, want [1]", got.Seqs)
		}

		time.Sleep(time.Second)
		reg.prune()
		if diff := cmp.Diff(ids(), []string{"stays"}); diff != "" {
			t.Errorf("sessions at expiry (-got +want):\n%s", diff)
		}
		if _, err := reg.find("gone"); err == nil {
			t.Error("an expired session is still found by id")
		}
		expired := slices.DeleteFunc(queuedEvents(q), func(ev linkEvent) bool { return ev.Kind != linkSessionExpired })
		if diff := cmp.Diff(expired, []linkEvent{{Kind: linkSessionExpired, SessionID: "gone"}}); diff != "" {
			t.Errorf("expiry events (-got +want):\n%s", diff)
		}

		time.Sleep(24 * time.Hour)
		if diff := cmp.Diff(ids(), []string{"stays"}); diff != "" {
			t.Errorf("a live session expired (-got +want):\n%s", diff)
		}
	})
}

// TestSameDeviceReconnectEndsPostMortem: a disconnected session is dropped
// as soon as its device connects again with a new session; other devices'
// sessions stay.
func TestSameDeviceReconnectEndsPostMortem(t *testing.T) {
	t.Parallel()
	reg, _ := newTestRegistry(10)
	old, other := &testFeed{}, &testFeed{}
	s, _ := reg.attach(sessionViaWire, "old", "phone", testInfo("old", "phone", "ShopApp", "redux"), old)
	o, _ := reg.attach(sessionViaWire, "other", "tablet", testInfo("other", "tablet", "ShopApp", "redux"), other)
	reg.detach(s, old, "disconnected")
	reg.detach(o, other, "disconnected")
	_, displaced := reg.attach(sessionViaWire, "new", "phone", testInfo("new", "phone", "ShopApp", "redux"), &testFeed{})
	if len(displaced) != 0 {
		t.Errorf("displaced %d feeds, want none: the old session had already left", len(displaced))
	}
	var ids []string
	for _, s := range reg.list() {
		ids = append(ids, s.id)
	}
	if diff := cmp.Diff(ids, []string{"new", "other"}); diff != "" {
		t.Errorf("sessions (-got +want):\n%s", diff)
	}
}

// TestReplacementRules pins which sessions a new wire session replaces:
// those of its deviceId, or without one those without one; never others.
func TestReplacementRules(t *testing.T) {
	t.Parallel()
	reg, q := newTestRegistry(10)
	feeds := map[string]*testFeed{}
	attach := func(id, device string) []sessionFeed {
		feeds[id] = &testFeed{}
		_, displaced := reg.attach(sessionViaWire, id, device, testInfo(id, device, "ShopApp"), feeds[id])
		return displaced
	}
	attach("phone-1", "phone")
	attach("tablet-1", "tablet")
	attach("bare-1", "")
	if d := attach("phone-2", "phone"); len(d) != 1 || d[0] != feeds["phone-1"] {
		t.Errorf("phone-2 displaced %v, want phone-1's feed", d)
	}
	if d := attach("bare-2", ""); len(d) != 1 || d[0] != feeds["bare-1"] {
		t.Errorf("bare-2 displaced %v, want bare-1's feed", d)
	}
	live := map[string]bool{}
	for _, s := range reg.list() {
		live[s.id] = s.isLive()
	}
	want := map[string]bool{"phone-2": true, "tablet-1": true, "bare-2": true}
	if diff := cmp.Diff(live, want); diff != "" {
		t.Errorf("sessions after replacement (-got +want):\n%s", diff)
	}
	connects := slices.DeleteFunc(queuedEvents(q), func(ev linkEvent) bool { return ev.Kind == linkEventPushed })
	wantEvents := []linkEvent{
		{Kind: linkConnected, SessionID: "phone-1"},
		{Kind: linkConnected, SessionID: "tablet-1"},
		{Kind: linkConnected, SessionID: "bare-1"},
		{Kind: linkDisconnected, SessionID: "phone-1", Reason: "replaced"},
		{Kind: linkConnected, SessionID: "phone-2", Replaced: "phone-1"},
		{Kind: linkDisconnected, SessionID: "bare-1", Reason: "replaced"},
		{Kind: linkConnected, SessionID: "bare-2", Replaced: "bare-1"},
	}
	if diff := cmp.Diff(connects, wantEvents); diff != "" {
		t.Errorf("link events (-got +want):\n%s", diff)
	}
}

// TestSessionsBounded: beyond maxSessions the oldest disconnected sessions
// are forgotten; live ones never are.
func TestSessionsBounded(t *testing.T) {
	t.Parallel()
	reg, _ := newTestRegistry(10)
	for i := range maxSessions {
		id := fmt.Sprintf("s%d", i)
		feed := &testFeed{}
		s, _ := reg.attach(sessionViaWire, id, id, testInfo(id, id, "App"), feed)
		if i%2 == 0 {
			reg.detach(s, feed, "disconnected")
		}
	}
	reg.attach(sessionViaWire, "newest", "newest", testInfo("newest", "newest", "App"), &testFeed{})
	all := reg.list()
	if len(all) != maxSessions {
		t.Fatalf("%d sessions, want %d", len(all), maxSessions)
	}
	if _, err := reg.find("s0"); err == nil {
		t.Error("the oldest disconnected session s0 is still held")
	}
	for _, id := range []string{"s1", "s2", "newest"} {
		if _, err := reg.find(id); err != nil {
			t.Errorf("session %s was dropped: %v", id, err)
		}
	}
}

// TestAnswersThatNeedTheApp: what only the app can answer fails
// NOT_CONNECTED "disconnected" once it has left, saying when.
func TestAnswersThatNeedTheApp(t *testing.T) {
	t.Parallel()
	reg, _ := newTestRegistry(10)
	feed := &testFeed{}
	s, _ := reg.attach(sessionViaWire, "s", "", testInfo("s", "", "ShopApp", "redux", "navigation"), feed)
	reg.detach(s, feed, "disconnected")
	for _, tc := range []struct {
		method string
		params any
	}{
		{"snapshot.get", snapshotParams{Stream: "redux", Path: []any{"cart"}}},
		{"snapshot.get", snapshotParams{Stream: "navigation"}},
		{"commands.list", struct{}{}},
	} {
		_, err := s.request(t.Context(), tc.method, tc.params)
		te := wantLinkToolError(t, err, codeNotConnected, linkNotConnectedDetails{Reason: linkReasonDisconnected})
		if !strings.Contains(te.Message, "session s disconnected at ") {
			t.Errorf("%s: message %q does not say which session left and when", tc.method, te.Message)
		}
	}
	// What a kept snapshot event can answer, it answers.
	if _, err := s.request(t.Context(), "snapshot.get", snapshotParams{Stream: "redux", Seq: 3}); toolErrorOf(err) == nil || toolErrorOf(err).Code != codeSnapshotNotFound {
		t.Errorf("snapshot.get of a seq never kept: %v, want SNAPSHOT_NOT_FOUND", err)
	}
}

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

// sessionTestApp is an app adapter on a real WebSocket, driven by a test:
// it answers every request with answer's result.
type sessionTestApp struct {
	t     *testing.T
	ws    *websocket.Conn
	pongs chan struct{}
	done  chan struct{} // closed when its read loop has ended
}

// dialSessionApp connects an app with handshake hs to wsURL and returns once
// the server has attached its session.
func dialSessionApp(t *testing.T, wsURL string, hs map[string]any, answer func(method string, params json.RawMessage) any) *sessionTestApp {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), linkWaitLimit)
	defer cancel()
	ws, _, err := websocket.Dial(ctx, wsURL, nil)
	if err != nil {
		t.Fatalf("dial: %v", err)
	}
	app := &sessionTestApp{t: t, ws: ws, pongs: make(chan struct{}, 1), done: make(chan struct{})}
	app.send(hs)
	if _, ack, err := ws.Read(ctx); err != nil || !strings.Contains(string(ack), `"handshake_ack"`) {
		t.Fatalf("handshake: %s, %v", ack, err)
	}
	go func() {
		defer close(app.done)
		for {
			_, data, err := ws.Read(context.Background())
			if err != nil {
				return
			}
			var m struct {
				Type, ID, Method string
				Params           json.RawMessage
			}
			if json.Unmarshal(data, &m) != nil {
				continue
			}
			switch m.Type {
			case "pong":
				app.pongs <- struct{}{}
			case "request":
				reply, _ := json.Marshal(map[string]any{"type": "response", "id": m.ID, "result": answer(m.Method, m.Params)})
				if ws.Write(context.Background(), websocket.MessageText, reply) != nil {
					return
				}
			}
		}
	}()
	t.Cleanup(func() {
		ws.CloseNow()
		<-app.done
	})
	app.sync()
	return app
}

func (a *sessionTestApp) send(v any) {
	a.t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		a.t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), linkWaitLimit)
	defer cancel()
	if err := a.ws.Write(ctx, websocket.MessageText, b); err != nil {
		a.t.Fatalf("write: %v", err)
	}
}

// push sends an event; payload is JSON text.
func (a *sessionTestApp) push(stream string, seq int64, typ, payload string) {
	a.t.Helper()
	a.send(map[string]any{"type": "event", "event": json.RawMessage(testEvent(stream, seq, typ, payload))})
}

// sync returns once the server has handled everything the app sent before.
func (a *sessionTestApp) sync() {
	a.t.Helper()
	a.send(map[string]string{"type": "ping"})
	select {
	case <-a.pongs:
	case <-time.After(linkWaitLimit):
		a.t.Fatal("no pong")
	}
}

// leave closes the connection as an app that quits does.
func (a *sessionTestApp) leave() {
	a.t.Helper()
	if err := a.ws.Close(websocket.StatusNormalClosure, "bye"); err != nil {
		a.t.Fatalf("close: %v", err)
	}
	<-a.done
}

// appAnswers answers as an app whose current state is state (JSON text)
// at seq 5.
func appAnswers(state string) func(method string, params json.RawMessage) any {
	return func(method string, params json.RawMessage) any {
		switch method {
		case "snapshot.get":
			return json.RawMessage(`{"seq":5,"timestamp":"2026-11-21T10:00:05.000Z","state":` + state + `}`)
		case "events.query":
			return json.RawMessage(`{"events":[],"hasMore":false,"oldestSeq":0,"latestSeq":0}`)
		}
		return map[string]any{"streams": []any{}}
	}
}

func appHandshake(sessionID, deviceID, app string) map[string]any {
	return testHandshake(sessionID, hsWith("deviceId", deviceID), hsWith("app", map[string]any{"name": app}))
}

// startSessionsE2E runs the whole program with no app connected and
// returns it with its adapter URL.
func startSessionsE2E(t *testing.T) (*e2e, string) {
	t.Helper()
	ts := startServer(t, testConfig(t))
	ts.initialize()
	e := &e2e{testServer: ts, nextID: 100}
	return e, e.waitHealth(func(h healthOut) bool { return h.Server.Listening }).Server.WSURL
}

func (e *e2e) mustCall(name string, args map[string]any) json.RawMessage {
	e.t.Helper()
	res, isError := e.callTool(name, args)
	if isError {
		e.t.Fatalf("%s %v: %s", name, args, res)
	}
	return res
}

// wantResult compares a tool result with want (JSON text), ignoring order.
func wantResult(t *testing.T, what string, got json.RawMessage, want string) {
	t.Helper()
	if diff := cmp.Diff(linkNormJSON(t, got), linkNormJSON(t, []byte(want))); diff != "" {
		t.Errorf("%s (-got +want):\n%s", what, diff)
	}
}

type sessionsHealthOut struct {
	Connected bool `json:"connected"`
	Adapter   *struct {
		SessionID string `json:"sessionId"`
	} `json:"adapter"`
	Sessions []healthSession `json:"sessions"`
}

func (e *e2e) sessionsHealth() sessionsHealthOut {
	e.t.Helper()
	var h sessionsHealthOut
	if err := json.Unmarshal(e.mustCall("debug_health_check", nil), &h); err != nil {
		e.t.Fatal(err)
	}
	return h
}

// TestSeveralWireSessions: two apps on two devices are live at once, both
// listed, each reached through the session argument by id or app name;
// results say which session answered only when there is more than one.
func TestSeveralWireSessions(t *testing.T) {
	e, url := startSessionsE2E(t)
	shopApp := dialSessionApp(t, url, appHandshake("shop-1", "phone", "ShopApp"), appAnswers(`{"who":"shop"}`))
	wantResult(t, "the only session's answer", e.mustCall("debug_get_state_path", map[string]any{"path": "who"}),
		`{"path":"who","value":"shop"}`)

	adminHS := appHandshake("admin-1", "tablet", "AdminApp")
	adminHS["device"] = map[string]any{"platform": "android"}
	adminHS["streams"] = []any{map[string]any{"name": "redux", "active": true}}
	dialSessionApp(t, url, adminHS, appAnswers(`{"who":"admin"}`))

	h := e.sessionsHealth()
	if !h.Connected || h.Adapter == nil || h.Adapter.SessionID != "admin-1" {
		t.Errorf("health check's default session = %+v, want admin-1, connected last", h.Adapter)
	}
	for _, s := range h.Sessions {
		if _, err := time.Parse(time.RFC3339, s.ConnectedAt); err != nil {
			t.Errorf("session %s connectedAt %q: %v", s.ID, s.ConnectedAt, err)
		}
	}
	wantSessions := []healthSession{
		{ID: "admin-1", App: "AdminApp", Via: "wire", Connected: true, Device: json.RawMessage(`{"platform":"android"}`), Streams: []string{"redux"}},
		{ID: "shop-1", App: "ShopApp", Via: "wire", Connected: true, Device: json.RawMessage(`{"isEmulator":true,"platform":"ios"}`), Streams: []string{"redux", "navigation", "mmkv"}},
	}
	ignoreConnectedAt := cmp.FilterPath(func(p cmp.Path) bool { return p.Last().String() == ".ConnectedAt" }, cmp.Ignore())
	if diff := cmp.Diff(h.Sessions, wantSessions, ignoreConnectedAt); diff != "" {
		t.Errorf("health check sessions (-got +want):\n%s", diff)
	}

	shop := `{"session":{"id":"shop-1","app":"ShopApp"},"path":"who","value":"shop"}`
	admin := `{"session":{"id":"admin-1","app":"AdminApp"},"path":"who","value":"admin"}`
	for _, tc := range []struct{ ref, want string }{
		{"", admin}, {"admin-1", admin}, {"AdminApp", admin}, {"shop-1", shop}, {"ShopApp", shop}, {"shopapp", shop},
	} {
		args := map[string]any{"path": "who"}
		if tc.ref != "" {
			args["session"] = tc.ref
		}
		wantResult(t, "session "+tc.ref, e.mustCall("debug_get_state_path", args), tc.want)
	}
	// Every adapter-backed tool says who answered.
	for _, tc := range []struct {
		tool string
		args map[string]any
	}{
		{"debug_list_streams", map[string]any{}},
		{"debug_get_snapshot", map[string]any{"stream": "redux"}},
		{"debug_query_events", map[string]any{"stream": "redux"}},
		{"debug_diff_snapshots", map[string]any{"stream": "redux", "base_seq": 5, "target_seq": 5}},
	} {
		tc.args["session"] = "shop-1"
		var got struct {
			Session map[string]any `json:"session"`
			Live    *bool          `json:"live"`
		}
		if err := json.Unmarshal(e.mustCall(tc.tool, tc.args), &got); err != nil || got.Session["id"] != "shop-1" || got.Session["app"] != "ShopApp" || got.Live != nil {
			t.Errorf("%s: session %v, live %v (%v); want shop-1 and no live member", tc.tool, got.Session, got.Live, err)
		}
	}

	// Resources take the session as ?session=.
	for uri, want := range map[string]string{
		uriRedux:                                `{"who":"admin"}`,
		uriRedux + "?session=shop-1":            `{"who":"shop"}`,
		uriRedux + "?session=ShopApp":           `{"who":"shop"}`,
		uriRedux + "?session=admin-1":           `{"who":"admin"}`,
		uriSession + "?session=shop-1":          `"shop-1"`,
		"debug://mmkv/auth?session=shop-1":      `SCOPE_NOT_FOUND`, // the state has no mmkv instances
		uriSessions + "?session=shop-1":         `"admin-1"`,
		"debug://navigation/state?session=Shop": `INVALID_PARAMS`,
	} {
		text, errObj := readResource(t, e, uri)
		if errObj != nil {
			text = fmt.Sprint(errObj)
		}
		if !strings.Contains(text, want) {
			t.Errorf("read %s = %s, want it to contain %s", uri, text, want)
		}
	}
	text, _ := readResource(t, e, uriSessions)
	var list struct{ Sessions []healthSession }
	if err := json.Unmarshal([]byte(text), &list); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(list.Sessions, wantSessions, ignoreConnectedAt); diff != "" {
		t.Errorf("debug://sessions (-got +want):\n%s", diff)
	}

	// One app gone: both sessions still exist, so answers still say which
	// answered; the gone one's answers are marked live: false.
	shopApp.leave()
	linkWaitFor(t, "shop-1 to be disconnected", func() bool {
		h := e.sessionsHealth()
		return len(h.Sessions) == 2 && !h.Sessions[1].Connected
	})
	wantResult(t, "the live session's answer", e.mustCall("debug_get_state_path", map[string]any{"path": "who"}), admin)
	wantResult(t, "the gone session's answer", e.mustCall("debug_query_events", map[string]any{"stream": "redux", "session": "ShopApp"}),
		`{"session":{"id":"shop-1","app":"ShopApp"},"live":false,"events":[],"hasMore":false,"oldestSeq":0,"latestSeq":0}`)
}

// TestSessionArgumentErrors: a session argument naming no session, or an
// app name several sessions share, is INVALID_PARAMS listing the sessions,
// for every tool; in a resource URI it is -32602. Any other query is an
// unknown resource.
func TestSessionArgumentErrors(t *testing.T) {
	e, url := startSessionsE2E(t)
	dialSessionApp(t, url, appHandshake("a-1", "phone", "ShopApp"), appAnswers(`{"who":"a"}`))
	dialSessionApp(t, url, appHandshake("b-1", "tablet", "ShopApp"), appAnswers(`{"who":"b"}`))
	sessions := []any{
		map[string]any{"id": "b-1", "app": "ShopApp", "connected": true},
		map[string]any{"id": "a-1", "app": "ShopApp", "connected": true},
	}
	unknown := map[string]any{"argument": "session", "problem": `no session has the id or app name "nope"`, "sessions": sessions}
	ambiguous := map[string]any{"argument": "session", "problem": `2 sessions have the app name "shopapp"; pass a session id`, "sessions": sessions}
	toolArgs := map[string]map[string]any{
		"debug_health_check":   {},
		"debug_list_streams":   {},
		"debug_get_snapshot":   {"stream": "redux"},
		"debug_query_events":   {"stream": "redux"},
		"debug_get_state_path": {"path": "who"},
		"debug_diff_snapshots": {"stream": "redux", "base_seq": 1, "target_seq": 2},
	}
	for tool, args := range toolArgs {
		for ref, want := range map[string]map[string]any{"nope": unknown, "shopapp": ambiguous} {
			args["session"] = ref
			res, isError := e.callTool(tool, args)
			if !isError {
				t.Errorf("%s with session %q succeeded: %s", tool, ref, res)
				continue
			}
			code, details, suggestion := decodeToolError(t, res)
			if code != codeInvalidParams || suggestion == "" {
				t.Errorf("%s with session %q: %s, want INVALID_PARAMS with a suggestion", tool, ref, res)
			}
			if diff := cmp.Diff(details, want); diff != "" {
				t.Errorf("%s with session %q: details (-got +want):\n%s", tool, ref, diff)
			}
		}
	}
	wantResult(t, "by id", e.mustCall("debug_get_state_path", map[string]any{"path": "who", "session": "a-1"}),
		`{"session":{"id":"a-1","app":"ShopApp"},"path":"who","value":"a"}`)

	for _, tc := range []struct {
		uri     string
		code    float64
		details map[string]any
	}{
		{uriRedux + "?session=nope", -32602, unknown},
		{uriSession + "?session=shopapp", -32602, ambiguous},
		{"debug://mmkv/auth?session=nope", -32602, unknown},
		{uriRedux + "?foo=bar", -32002, nil},
		{uriRedux + "?session=a-1&foo=bar", -32002, nil},
		{uriRedux + "?session=a-1&session=b-1", -32002, nil},
		{uriRedux + "?session=", -32002, nil},
	} {
		_, errObj := readResource(t, e, tc.uri)
		if errObj == nil {
			t.Errorf("read %s succeeded", tc.uri)
			continue
		}
		data, _ := errObj["data"].(map[string]any)
		if errObj["code"] != tc.code || data["uri"] != tc.uri {
			t.Errorf("read %s: %v, want code %v naming the URI", tc.uri, errObj, tc.code)
		}
		if tc.details != nil {
			if data["code"] != codeInvalidParams {
				t.Errorf("read %s: data.code %v, want INVALID_PARAMS", tc.uri, data["code"])
			}
			if diff := cmp.Diff(data["details"], any(tc.details)); diff != "" {
				t.Errorf("read %s: details (-got +want):\n%s", tc.uri, diff)
			}
		}
	}
}

// TestPostMortemSession: an app that disconnects stays listed and keeps
// answering from what the server holds (pushed events, the last snapshot
// fetched), marked live: false; what needs the app is NOT_CONNECTED.
func TestPostMortemSession(t *testing.T) {
	e, url := startSessionsE2E(t)
	app := dialSessionApp(t, url, appHandshake("crash-1", "phone", "ShopApp"),
		appAnswers(`{"cart":{"items":[1,2]},"user":"ann"}`))
	app.push("redux", 1, "action_dispatched", `{"action":{"type":"cart/open"}}`)
	app.push("redux", 2, "state_snapshot", `{"state":{"cart":{"items":[]}}}`)
	app.push("redux", 3, "action_dispatched", `{"action":{"type":"cart/add"}}`)
	app.push("redux", 4, "state_snapshot", `{"state":{"cart":{"items":[1]}}}`)
	app.push("navigation", 1, "route_change", `{"from":null,"to":{"name":"Home"}}`)
	app.sync()
	// Fetched while live: the app answers its current state at seq 5.
	live := e.mustCall("debug_get_snapshot", map[string]any{"stream": "redux"})
	wantResult(t, "live snapshot", live, `{"stream":"redux","seq":5,"timestamp":"2026-11-21T10:00:05.000Z","state":{"cart":{"items":[1,2]},"user":"ann"}}`)

	app.leave()
	var h sessionsHealthOut
	for deadline := time.Now().Add(linkWaitLimit); ; {
		if h = e.sessionsHealth(); len(h.Sessions) == 1 && !h.Sessions[0].Connected {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the session never showed as disconnected: %+v", h)
		}
		time.Sleep(5 * time.Millisecond) // polling with a deadline
	}
	if h.Connected || h.Adapter != nil {
		t.Errorf("health check: connected %v, adapter %v; want false and null", h.Connected, h.Adapter)
	}
	if s := h.Sessions[0]; s.ID != "crash-1" || s.DisconnectedAt == nil {
		t.Errorf("session %+v, want crash-1 with disconnectedAt", s)
	} else if _, err := time.Parse(time.RFC3339, *s.DisconnectedAt); err != nil {
		t.Errorf("disconnectedAt %q: %v", *s.DisconnectedAt, err)
	}

	head := `"session":{"id":"crash-1","app":"ShopApp"},"live":false,`
	ev := func(seq int64, typ, payload string) string { return string(testEvent("redux", seq, typ, payload)) }
	for _, tc := range []struct {
		tool string
		args map[string]any
		want string
	}{
		{"debug_query_events", map[string]any{"stream": "redux"},
			`{` + head + `"events":[` + ev(1, "action_dispatched", `{"action":{"type":"cart/open"}}`) + `,` +
				ev(2, "state_snapshot", `{"state":{"cart":{"items":[]}}}`) + `,` + ev(3, "action_dispatched", `{"action":{"type":"cart/add"}}`) + `,` +
				ev(4, "state_snapshot", `{"state":{"cart":{"items":[1]}}}`) + `],"hasMore":false,"oldestSeq":1,"latestSeq":4}`},
		{"debug_query_events", map[string]any{"stream": "redux", "limit": 1, "event_type": "state_snapshot", "session": "ShopApp"},
			`{` + head + `"events":[` + ev(4, "state_snapshot", `{"state":{"cart":{"items":[1]}}}`) + `],"hasMore":true,"oldestSeq":1,"latestSeq":4}`},
		{"debug_get_snapshot", map[string]any{"stream": "redux"},
			`{` + head + `"stream":"redux","seq":5,"timestamp":"2026-11-21T10:00:05.000Z","state":{"cart":{"items":[1,2]},"user":"ann"}}`},
		{"debug_get_snapshot", map[string]any{"stream": "redux", "scope": "cart.items", "session": "crash-1"},
			`{` + head + `"stream":"redux","seq":5,"timestamp":"2026-11-21T10:00:05.000Z","scope":"cart.items","state":[1,2]}`},
		{"debug_get_state_path", map[string]any{"path": "user"}, `{` + head + `"path":"user","value":"ann"}`},
		{"debug_diff_snapshots", map[string]any{"stream": "redux", "base_seq": 2, "target_seq": 4},
			`{` + head + `"baseSeq":2,"targetSeq":4,"totalChanges":1,"truncated":false,"changes":[{"path":"cart.items.0","type":"added","newValue":1}]}`},
		{"debug_diff_snapshots", map[string]any{"stream": "redux", "base_seq": 4, "target_seq": 5},
			`{` + head + `"baseSeq":4,"targetSeq":5,"totalChanges":2,"truncated":false,"changes":[{"path":"cart.items.1","type":"added","newValue":2},{"path":"user","type":"added","newValue":"ann"}]}`},
		{"debug_list_streams", map[string]any{},
			`{` + head + `"streams":[{"name":"redux","active":true,"eventCount":4,"oldestSeq":1,"latestSeq":4,"hasSnapshot":true},` +
				`{"name":"navigation","active":true,"eventCount":1,"oldestSeq":1,"latestSeq":1,"hasSnapshot":false},` +
				`{"name":"mmkv","active":true,"eventCount":0,"oldestSeq":0,"latestSeq":0,"hasSnapshot":false,"instances":["default","auth"]}]}`},
	} {
		wantResult(t, fmt.Sprintf("%s %v", tc.tool, tc.args), e.mustCall(tc.tool, tc.args), tc.want)
	}

	// A seq the server never held, and a stream it never fetched.
	res, isError := e.callTool("debug_diff_snapshots", map[string]any{"stream": "redux", "base_seq": 2, "target_seq": 3})
	if code, details, _ := decodeToolError(t, res); !isError || code != codeSnapshotNotFound || fmt.Sprint(details["missing"]) != "[target_seq]" {
		t.Errorf("diff with an action's seq: %s, want SNAPSHOT_NOT_FOUND missing target_seq", res)
	}
	res, isError = e.callTool("debug_get_snapshot", map[string]any{"stream": "navigation"})
	code, details, _ := decodeToolError(t, res)
	if !isError || code != codeNotConnected || details["reason"] != linkReasonDisconnected || !strings.Contains(string(res), "crash-1 disconnected at") {
		t.Errorf("snapshot never fetched: %s, want NOT_CONNECTED disconnected naming the session", res)
	}

	// Resources answer from the same buffers.
	if text, errObj := readResource(t, e, uriRedux); errObj != nil || text != `{"cart":{"items":[1,2]},"user":"ann"}` {
		t.Errorf("read %s = %s, %v", uriRedux, text, errObj)
	}
	text, _ := readResource(t, e, uriSession)
	var current map[string]any
	if err := json.Unmarshal([]byte(text), &current); err != nil || current["connected"] != false || current["sessionId"] != "crash-1" || current["disconnectedAt"] == nil {
		t.Errorf("read %s = %s", uriSession, text)
	}
	_, errObj := readResource(t, e, uriNavigation)
	if data, _ := errObj["data"].(map[string]any); errObj["code"] != float64(-32603) || data["code"] != codeNotConnected {
		t.Errorf("read %s: %v, want -32603 NOT_CONNECTED", uriNavigation, errObj)
	}

	// The same device coming back with a new session ends the post-mortem.
	dialSessionApp(t, url, appHandshake("crash-2", "phone", "ShopApp"), appAnswers(`{}`))
	h = e.sessionsHealth()
	if len(h.Sessions) != 1 || h.Sessions[0].ID != "crash-2" || !h.Sessions[0].Connected {
		t.Errorf("sessions after the device came back: %+v, want crash-2 alone", h.Sessions)
	}
	res, isError = e.callTool("debug_query_events", map[string]any{"stream": "redux", "session": "crash-1"})
	if code, _, _ := decodeToolError(t, res); !isError || code != codeInvalidParams {
		t.Errorf("the forgotten session answered: %s", res)
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

// TestStaleSeqsNotBuffered: seqs increase strictly within a stream (wire
// protocol §3). An event at or below the stream's latest seq, such as one
// replayed after a reconnect, is neither kept nor counted, so answers
// from the buffer stay ascending and describe it truly.
func TestStaleSeqsNotBuffered(t *testing.T) {
	t.Parallel()
	reg, _ := newTestRegistry(10)
	feed := &testFeed{}
	s, _ := reg.attach(sessionViaWire, "s", "", testInfo("s", "", "ShopApp", "redux"), feed)
	for _, seq := range []int64{1, 2, 3} {
		recordTestEvent(s, feed, "redux", seq, "action_dispatched", `{}`)
	}
	reg.detach(s, feed, "disconnected")
	again := &testFeed{}
	reg.attach(sessionViaWire, "s", "", testInfo("s", "", "ShopApp", "redux"), again)
	for _, seq := range []int64{1, 2, 3, 4, 2} { // a replay, a new event, a step back
		recordTestEvent(s, again, "redux", seq, "action_dispatched", `{}`)
	}
	want := eventsAnswer{[]int64{1, 2, 3, 4}, false, 1, 4}
	if diff := cmp.Diff(queryBuffer(t, s, eventsParams{Stream: "redux", Limit: 50}), want); diff != "" {
		t.Errorf("buffer after a replay (-got +want):\n%s", diff)
	}
	want = eventsAnswer{[]int64{3, 4}, false, 1, 4}
	if diff := cmp.Diff(queryBuffer(t, s, eventsParams{Stream: "redux", Limit: 50, SinceSeq: since(2)}), want); diff != "" {
		t.Errorf("since 2 after a replay (-got +want):\n%s", diff)
	}
	if st := s.view().Info.Streams[0]; st.EventCount != 4 || st.LatestSeq != 4 {
		t.Errorf("redux figures %+v, want 4 events up to seq 4", st)
	}
	checkSessionBytes(t, s)
}

// TestDefaultSession: without a session argument, the most recently
// connected live session answers, else the most recently disconnected one.
func TestDefaultSession(t *testing.T) {
	t.Parallel()
	reg, _ := newTestRegistry(10)
	if s, err := reg.find(""); s != nil || err != nil {
		t.Fatalf("default of an empty registry = %v, %v; want none", s, err)
	}
	feedA, feedB := &testFeed{}, &testFeed{}
	a, _ := reg.attach(sessionViaWire, "a", "phone", testInfo("a", "phone", "A"), feedA)
	b, _ := reg.attach(sessionViaWire, "b", "tablet", testInfo("b", "tablet", "B"), feedB)
	check := func(what string, want *session) {
		t.Helper()
		if got, err := reg.find(""); got != want || err != nil {
			t.Errorf("%s: default = %+v, %v; want session %s", what, got, err, want.id)
		}
	}
	check("both live", b)
	reg.detach(b, feedB, "disconnected")
	check("the newest left", a)
	reg.detach(a, feedA, "disconnected")
	check("both left, a last", a)
	if reg.currentLive("") != nil {
		t.Error("currentLive found a session with none live")
	}
	feedB2 := &testFeed{}
	reg.attach(sessionViaWire, "b", "tablet", testInfo("b", "tablet", "B"), feedB2)
	check("b back", b)
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

// TestDescribeSession: a session's health entry names at most
// maxHealthStreams streams, and says how many there are beyond; a gone
// session says when it left.
func TestDescribeSession(t *testing.T) {
	t.Parallel()
	names := make([]string, maxWireStreams)
	for i := range names {
		names[i] = fmt.Sprintf("s%d", i)
	}
	info := testInfo("s", "phone", "", names...)
	info.ConnectedAt = time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)
	left := time.Date(2026, 11, 21, 11, 0, 0, 0, time.UTC)
	got := describeSession(sessionView{ID: "s", Via: sessionViaWire, DeviceID: "phone", DisconnectedAt: left, Info: info})
	at := "2026-11-21T11:00:00.000Z"
	want := healthSession{ID: "s", App: nil, Via: "wire", Connected: false, ConnectedAt: "2026-11-21T10:00:00.000Z",
		Device: json.RawMessage("null"), DisconnectedAt: &at, Streams: names[:maxHealthStreams], StreamsTotal: maxWireStreams}
	if diff := cmp.Diff(got, want); diff != "" {
		t.Errorf("describeSession (-got +want):\n%s", diff)
	}
	b, _ := json.Marshal(got)
	if !strings.Contains(string(b), `"app":null`) || !strings.Contains(string(b), `"device":null`) {
		t.Errorf("entry %s, want app and device null when the app gave none", b)
	}
}

// TestRegistryConcurrentUse runs every registry and session operation at
// once, for the race detector and to catch lock-order deadlocks.
func TestRegistryConcurrentUse(t *testing.T) {
	t.Parallel()
	reg, _ := newTestRegistry(20)
	reg.bufferBytes = 4000
	const rounds = 300
	var wg sync.WaitGroup
	for d := range 3 {
		device := fmt.Sprintf("device-%d", d)
		wg.Go(func() {
			for i := range rounds {
				feed := &testFeed{answer: func(method string, params any) (json.RawMessage, error) {
					if method == "snapshot.get" {
						return json.RawMessage(`{"seq":1,"timestamp":"t","state":{}}`), nil
					}
					return nil, errAnswerLocally
				}}
				id := fmt.Sprintf("%s-%d", device, i%4)
				s, _ := reg.attach(sessionViaWire, id, device, testInfo(id, device, "App", "redux", "navigation"), feed)
				for seq := range int64(5) {
					recordTestEvent(s, feed, "redux", int64(i)*5+seq+1, "action_dispatched", `{}`)
				}
				s.setStreams(feed, []streamState{{Name: "redux", Active: true}, {Name: "mmkv", Active: i%2 == 0}})
				if _, err := s.request(context.Background(), "snapshot.get", snapshotParams{Stream: "redux"}); err != nil {
					t.Errorf("snapshot.get: %v", err)
					return
				}
				reg.detach(s, feed, "disconnected")
			}
		})
	}
	wg.Go(func() {
		for range rounds {
			for _, s := range reg.list() {
				_, _ = s.request(context.Background(), "events.query", eventsParams{Stream: "redux", Limit: 5})
				_, _ = s.request(context.Background(), "streams.list", struct{}{})
				s.streamActive("redux")
				mmkvInstancesOf(s)
				describeSession(s.view())
			}
			_, _ = reg.find("App")
			_, _ = reg.find("device-1-2")
			reg.current()
			reg.prune()
		}
	})
	wg.Wait()
	for _, s := range reg.list() {
		checkSessionBytes(t, s)
	}
}

// TestSessionEventsReachTheClient: with several apps, the client hears of
// each session coming and going, by session id.
func TestSessionEventsReachTheClient(t *testing.T) {
	e, url := startSessionsE2E(t)
	e.call(1, "logging/setLevel", map[string]any{"level": "info"})
	message := func(level, event, sessionID string) {
		t.Helper()
		e.waitNotification("notifications/message", func(p map[string]any) bool {
			data, _ := p["data"].(map[string]any)
			return p["level"] == level && data["event"] == event && data["sessionId"] == sessionID
		})
	}
	// Each app names an MMKV instance of its own, so that the listing of
	// resources changes whenever the default session does, and only then.
	handshake := func(sessionID, deviceID string) map[string]any {
		return testHandshake(sessionID, hsWith("deviceId", deviceID), hsWith("app", map[string]any{"name": "ShopApp"}),
			hsWith("streams", []any{map[string]any{"name": "mmkv", "active": true, "instances": []any{sessionID}}}))
	}
	listed := func(instance string) {
		t.Helper()
		e.waitNotification("notifications/resources/list_changed", nil)
		e.nextID++
		if page, _ := json.Marshal(e.call(e.nextID, "resources/list", nil)); !strings.Contains(string(page), "debug://mmkv/"+instance) {
			t.Errorf("after list_changed the listing is %s, want instance %s", page, instance)
		}
	}
	a := dialSessionApp(t, url, handshake("a-1", "phone"), appAnswers(`{}`))
	message("info", "adapter connected", "a-1")
	listed("a-1")
	dialSessionApp(t, url, handshake("b-1", "tablet"), appAnswers(`{}`))
	message("info", "adapter connected", "b-1")
	listed("b-1")
	a.leave()
	message("warning", "adapter disconnected", "a-1") // b-1 stays the default: the listing is the same
	dialSessionApp(t, url, handshake("a-2", "phone"), appAnswers(`{}`))
	message("info", "adapter connected", "a-2")
	listed("a-2")
}
