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

// detach is session.leave as the tests of other files, which hold the
// registry, call it.
func (r *sessionRegistry) detach(s *session, feed sessionFeed, reason string) bool {
	return s.leave(feed, reason)
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
		if ring != r.events.bytes {
			t.Errorf("ring %s counts %d bytes, holds %d", name, r.events.bytes, ring)
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
		if !s.leave(gone, "disconnected") {
			t.Fatal("leave of the live feed reported it was not live")
		}
		if s.leave(gone, "disconnected") {
			t.Error("a second leave reported the feed live again")
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
	s.leave(old, "disconnected")
	o.leave(other, "disconnected")
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
			s.leave(feed, "disconnected")
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
	s.leave(feed, "disconnected")
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
	s.leave(feed, "disconnected")
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
	b.leave(feedB, "disconnected")
	check("the newest left", a)
	a.leave(feedA, "disconnected")
	check("both left, a last", a)
	if reg.currentLive("") != nil {
		t.Error("currentLive found a session with none live")
	}
	feedB2 := &testFeed{}
	reg.attach(sessionViaWire, "b", "tablet", testInfo("b", "tablet", "B"), feedB2)
	check("b back", b)
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
				s.leave(feed, "disconnected")
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
