package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// demoTestBase is the injected clock's first reading; each reading after
// advances it by 10ms.
var demoTestBase = time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)

func demoTestClock() func() time.Time {
	var calls atomic.Int64
	return func() time.Time {
		return demoTestBase.Add(time.Duration(calls.Add(1)-1) * 10 * time.Millisecond)
	}
}

// demoTestTime is the timestamp of the clock's i-th reading (from 0).
func demoTestTime(i int) string {
	return demoTestBase.Add(time.Duration(i) * 10 * time.Millisecond).Format("2006-01-02T15:04:05.000Z")
}

func newDemoTestApp(seed int64, bufferSize int) *demoApp {
	return newDemoApp(demoOptions{Seed: seed, Now: demoTestClock(), BufferSize: bufferSize})
}

// addDemoTestConsole adds a "ticker" stream to a and records n events on
// it: seq%5 == 0 is a ticker_snapshot of {"lines": <non-snapshot events so
// far>}, seq%3 == 0 a "warn", anything else a "log" with payload {"line": seq}.
func addDemoTestConsole(a *demoApp, n int) *demoStream {
	lines := 0
	s := a.addStream("ticker", "ticker_snapshot", nil, func() json.RawMessage {
		return json.RawMessage(fmt.Sprintf(`{"lines":%d}`, lines))
	})
	a.mutate(func() {
		for seq := 1; seq <= n; seq++ {
			switch {
			case seq%5 == 0:
				a.snapshotLocked(s)
			case seq%3 == 0:
				lines++
				s.markChanged()
				a.recordLocked(s, "warn", map[string]int{"line": seq})
			default:
				lines++
				s.markChanged()
				a.recordLocked(s, "log", map[string]int{"line": seq})
			}
		}
	})
	return s
}

// Error is for the tests' messages: the product only encodes a wireError.
func (e *wireError) Error() string { return e.Code + ": " + e.Message }

// The product writes results with appendJSON; demoCall marshals them.
func (r *demoEventsResult) MarshalJSON() ([]byte, error)   { return r.appendJSON(nil), nil }
func (r *demoSnapshotResult) MarshalJSON() ([]byte, error) { return r.appendJSON(nil), nil }

// demoCall calls handle and returns the result as its JSON encoding.
func demoCall(t *testing.T, a *demoApp, method, params string) (json.RawMessage, *wireError) {
	t.Helper()
	var raw json.RawMessage
	if params != "" {
		raw = json.RawMessage(params)
	}
	result, werr := a.handle(method, raw)
	if werr != nil {
		if result != nil {
			t.Fatalf("%s %s: result %v alongside error %v", method, params, result, werr)
		}
		return nil, werr
	}
	b, err := json.Marshal(result)
	if err != nil {
		t.Fatalf("%s %s: marshal result: %v", method, params, err)
	}
	return b, nil
}

func demoMustCall(t *testing.T, a *demoApp, method, params string, into any) {
	t.Helper()
	b, werr := demoCall(t, a, method, params)
	if werr != nil {
		t.Fatalf("%s %s: %v", method, params, werr)
	}
	if err := json.Unmarshal(b, into); err != nil {
		t.Fatalf("%s %s: decode %s: %v", method, params, b, err)
	}
}

type demoTestEvent struct {
	Stream    string          `json:"stream"`
	Seq       int64           `json:"seq"`
	Type      string          `json:"type"`
	Timestamp string          `json:"timestamp"`
	Payload   json.RawMessage `json:"payload"`
}

type demoTestQuery struct {
	Events    []demoTestEvent `json:"events"`
	HasMore   bool            `json:"hasMore"`
	OldestSeq int64           `json:"oldestSeq"`
	LatestSeq int64           `json:"latestSeq"`
}

// demoAllEvents pages through a stream with since_seq.
func demoAllEvents(t *testing.T, a *demoApp, stream string) []demoTestEvent {
	t.Helper()
	var all []demoTestEvent
	var since int64
	for {
		var q demoTestQuery
		demoMustCall(t, a, "events.query", fmt.Sprintf(`{"stream":%q,"limit":200,"since_seq":%d}`, stream, since), &q)
		all = append(all, q.Events...)
		if !q.HasMore {
			return all
		}
		since = q.Events[len(q.Events)-1].Seq
	}
}

func demoSeqs(events []demoTestEvent) []int64 {
	seqs := []int64{}
	for _, ev := range events {
		seqs = append(seqs, ev.Seq)
	}
	return seqs
}

func demoSeqRange(lo, hi int64) []int64 {
	var seqs []int64
	for s := lo; s <= hi; s++ {
		seqs = append(seqs, s)
	}
	return seqs
}

func TestDemoEventsQuery(t *testing.T) {
	a := newDemoTestApp(1, 10)
	addDemoTestConsole(a, 23)
	// The ring holds 14..23: 15 and 20 are snapshots, 18 and 21 warns.
	type want struct {
		Seqs      []int64
		HasMore   bool
		OldestSeq int64
		LatestSeq int64
	}
	ring := func(seqs []int64, hasMore bool) want { return want{seqs, hasMore, 14, 23} }
	tests := []struct {
		name   string
		params string
		want   want
	}{
		{"newest few", `{"stream":"ticker","limit":3}`, ring([]int64{21, 22, 23}, true)},
		{"newest exactly all", `{"stream":"ticker","limit":10}`, ring(demoSeqRange(14, 23), false)},
		{"newest all but one", `{"stream":"ticker","limit":9}`, ring(demoSeqRange(15, 23), true)},
		{"newest limit over buffer", `{"stream":"ticker","limit":200}`, ring(demoSeqRange(14, 23), false)},
		{"newest of a type", `{"stream":"ticker","limit":2,"event_type":"log"}`, ring([]int64{22, 23}, true)},
		{"all of a type", `{"stream":"ticker","limit":6,"event_type":"log"}`, ring([]int64{14, 16, 17, 19, 22, 23}, false)},
		{"fewer of a type than limit", `{"stream":"ticker","limit":5,"event_type":"warn"}`, ring([]int64{18, 21}, false)},
		{"snapshots by type", `{"stream":"ticker","limit":5,"event_type":"ticker_snapshot"}`, ring([]int64{15, 20}, false)},
		{"no such type", `{"stream":"ticker","limit":5,"event_type":"error"}`, ring([]int64{}, false)},
		{"since zero", `{"stream":"ticker","limit":3,"since_seq":0}`, ring([]int64{14, 15, 16}, true)},
		{"since before buffer", `{"stream":"ticker","limit":2,"since_seq":5}`, ring([]int64{14, 15}, true)},
		{"since just before buffer", `{"stream":"ticker","limit":10,"since_seq":13}`, ring(demoSeqRange(14, 23), false)},
		{"since inside", `{"stream":"ticker","limit":2,"since_seq":20}`, ring([]int64{21, 22}, true)},
		{"since inside to the end", `{"stream":"ticker","limit":2,"since_seq":21}`, ring([]int64{22, 23}, false)},
		{"since latest", `{"stream":"ticker","limit":5,"since_seq":23}`, ring([]int64{}, false)},
		{"since the future", `{"stream":"ticker","limit":5,"since_seq":1000}`, ring([]int64{}, false)},
		{"since with type", `{"stream":"ticker","limit":2,"since_seq":16,"event_type":"log"}`, ring([]int64{17, 19}, true)},
		{"since with type to the end", `{"stream":"ticker","limit":2,"since_seq":19,"event_type":"log"}`, ring([]int64{22, 23}, false)},
		{"since with type, newer of type left", `{"stream":"ticker","limit":1,"since_seq":14,"event_type":"ticker_snapshot"}`, ring([]int64{15}, true)},
		{"integral float limit", `{"stream":"ticker","limit":2.0}`, ring([]int64{22, 23}, true)},
		{"null since is absent", `{"stream":"ticker","limit":1,"since_seq":null}`, ring([]int64{23}, true)},
		{"unknown members ignored", `{"stream":"ticker","limit":1,"cursor":"x"}`, ring([]int64{23}, true)},
		{"fresh stream", `{"stream":"redux","limit":5}`, want{[]int64{1}, false, 1, 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var q demoTestQuery
			demoMustCall(t, a, "events.query", tt.params, &q)
			got := want{demoSeqs(q.Events), q.HasMore, q.OldestSeq, q.LatestSeq}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("events.query %s (-want +got):\n%s", tt.params, diff)
			}
		})
	}
}

func TestDemoEventEnvelope(t *testing.T) {
	a := newDemoTestApp(1, 10)
	addDemoTestConsole(a, 23)
	var q demoTestQuery
	demoMustCall(t, a, "events.query", `{"stream":"ticker","limit":200}`, &q)
	// Clock readings 0-4 went to the app's start; the ticker's seq k got reading 4+k.
	for _, ev := range q.Events {
		if ev.Stream != "ticker" || ev.Timestamp != demoTestTime(4+int(ev.Seq)) {
			t.Errorf("event %d: stream %q timestamp %q, want ticker at %s", ev.Seq, ev.Stream, ev.Timestamp, demoTestTime(4+int(ev.Seq)))
		}
	}
	got := q.Events[len(q.Events)-1]
	want := demoTestEvent{Stream: "ticker", Seq: 23, Type: "log", Timestamp: demoTestTime(27), Payload: json.RawMessage(`{"line":23}`)}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("newest event (-want +got):\n%s", diff)
	}
	snap := q.Events[6] // seq 20
	if snap.Type != "ticker_snapshot" || string(snap.Payload) != `{"state":{"lines":16}}` {
		t.Errorf("seq %d: type %q payload %s, want ticker_snapshot {\"state\":{\"lines\":16}}", snap.Seq, snap.Type, snap.Payload)
	}
}

func TestDemoRequestErrors(t *testing.T) {
	a := newDemoTestApp(1, 10)
	addDemoTestConsole(a, 23)
	invalid := func(param string) *wireError {
		return &wireError{Code: "INVALID_PARAMS", Details: map[string]any{"param": param}}
	}
	tests := []struct {
		method, params string
		want           *wireError // Message is only checked to be non-empty; Details only the listed members
	}{
		{"events.query", `{"stream":"ticker","limit":0}`, invalid("limit")},
		{"events.query", `{"stream":"ticker","limit":201}`, invalid("limit")},
		{"events.query", `{"stream":"ticker","limit":-1}`, invalid("limit")},
		{"events.query", `{"stream":"ticker","limit":1.5}`, invalid("limit")},
		{"events.query", `{"stream":"ticker","limit":"5"}`, invalid("limit")},
		{"events.query", `{"stream":"ticker","limit":true}`, invalid("limit")},
		{"events.query", `{"stream":"ticker"}`, invalid("limit")},
		{"events.query", `{"stream":"ticker","limit":5,"since_seq":-1}`, invalid("since_seq")},
		{"events.query", `{"stream":"ticker","limit":5,"since_seq":"3"}`, invalid("since_seq")},
		{"events.query", `{"stream":"ticker","limit":5,"event_type":5}`, invalid("event_type")},
		{"events.query", `{"stream":"ticker","limit":5,"event_type":""}`, invalid("event_type")},
		{"events.query", `{"limit":5}`, invalid("stream")},
		{"events.query", `{"stream":7,"limit":5}`, invalid("stream")},
		// Members match exactly, unlike encoding/json's struct decoding.
		{"events.query", `{"Stream":"ticker","limit":5}`, invalid("stream")},
		{"events.query", `{"stream":"ticker","Limit":5}`, invalid("limit")},
		{"events.query", `[]`, invalid("params")},
		{"events.query", `"ticker"`, invalid("params")},
		{"events.query", ``, invalid("stream")},
		{"events.query", `{"stream":"sensors","limit":5}`, &wireError{Code: "STREAM_UNAVAILABLE",
			Details: map[string]any{"stream": "sensors", "activeStreams": []any{"redux", "navigation", "mmkv", "console", "network", "ticker"}}}},
		{"snapshot.get", `{"stream":"ticker","seq":16}`, &wireError{Code: "SNAPSHOT_NOT_FOUND",
			Details: map[string]any{"stream": "ticker", "seq": 16.0, "oldestSeq": 14.0, "latestSeq": 23.0}}},
		{"snapshot.get", `{"stream":"ticker","seq":10}`, &wireError{Code: "SNAPSHOT_NOT_FOUND", Details: map[string]any{"seq": 10.0}}},
		{"snapshot.get", `{"stream":"ticker","seq":24}`, &wireError{Code: "SNAPSHOT_NOT_FOUND", Details: map[string]any{"seq": 24.0}}},
		{"snapshot.get", `{"stream":"ticker","seq":0}`, invalid("seq")},
		{"snapshot.get", `{"stream":"ticker","seq":-3}`, invalid("seq")},
		{"snapshot.get", `{"stream":"ticker","seq":1.5}`, invalid("seq")},
		{"snapshot.get", `{"stream":"ticker","seq":"15"}`, invalid("seq")},
		{"snapshot.get", `{}`, invalid("stream")},
		{"snapshot.get", `{"stream":"sensors"}`, &wireError{Code: "STREAM_UNAVAILABLE", Details: map[string]any{"stream": "sensors"}}},
		{"events.list", `{}`, &wireError{Code: "UNKNOWN_METHOD", Details: map[string]any{"method": "events.list"}}},
		{"", `{}`, &wireError{Code: "UNKNOWN_METHOD", Details: map[string]any{"method": ""}}},
	}
	for _, tt := range tests {
		t.Run(tt.method+" "+tt.params, func(t *testing.T) {
			res, werr := demoCall(t, a, tt.method, tt.params)
			if werr == nil {
				t.Fatalf("%s %s = %s, want error %s", tt.method, tt.params, res, tt.want.Code)
			}
			if werr.Message == "" {
				t.Errorf("error %s has no message", werr.Code)
			}
			var details map[string]any
			if err := json.Unmarshal(demoMarshal(werr.Details), &details); err != nil {
				t.Fatalf("details %v: %v", werr.Details, err)
			}
			got := &wireError{Code: werr.Code, Details: map[string]any{}}
			for k := range tt.want.Details.(map[string]any) {
				got.Details.(map[string]any)[k] = details[k]
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("%s %s (-want +got):\n%s\nmessage: %s", tt.method, tt.params, diff, werr.Message)
			}
		})
	}
}

func TestDemoStreamsList(t *testing.T) {
	type info = map[string]any
	tests := []struct {
		name  string
		setup func() *demoApp
		want  []info
	}{{
		name:  "fresh app",
		setup: func() *demoApp { return newDemoTestApp(1, 10) },
		want: []info{
			{"name": "redux", "active": true, "eventCount": 1.0, "oldestSeq": 1.0, "latestSeq": 1.0, "hasSnapshot": true, "lastEventAt": demoTestTime(1)},
			{"name": "navigation", "active": true, "eventCount": 2.0, "oldestSeq": 1.0, "latestSeq": 2.0, "hasSnapshot": true, "lastEventAt": demoTestTime(3)},
			{"name": "mmkv", "active": true, "eventCount": 1.0, "oldestSeq": 1.0, "latestSeq": 1.0, "hasSnapshot": true, "lastEventAt": demoTestTime(4),
				"instances": []any{"default", "auth"}},
		},
	}, {
		name: "empty stream",
		setup: func() *demoApp {
			a := newDemoTestApp(1, 10)
			addDemoTestConsole(a, 0)
			return a
		},
		want: []info{{"name": "ticker", "active": true, "eventCount": 0.0, "oldestSeq": 0.0, "latestSeq": 0.0, "hasSnapshot": false, "lastEventAt": nil}},
	}, {
		name: "after eviction",
		setup: func() *demoApp {
			a := newDemoTestApp(1, 10)
			addDemoTestConsole(a, 23)
			return a
		},
		want: []info{{"name": "ticker", "active": true, "eventCount": 10.0, "oldestSeq": 14.0, "latestSeq": 23.0, "hasSnapshot": true, "lastEventAt": demoTestTime(27)}},
	}, {
		name: "snapshots evicted",
		setup: func() *demoApp {
			a := newDemoTestApp(1, 3)
			addDemoTestConsole(a, 9) // holds 7 log, 8 log, 9 warn
			return a
		},
		want: []info{{"name": "ticker", "active": true, "eventCount": 3.0, "oldestSeq": 7.0, "latestSeq": 9.0, "hasSnapshot": false, "lastEventAt": demoTestTime(13)}},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := tt.setup()
			var got struct{ Streams []info }
			demoMustCall(t, a, "streams.list", `{}`, &got)
			// Only the streams named in want are compared; the others are
			// covered by "fresh app".
			var picked []info
			for _, w := range tt.want {
				for _, s := range got.Streams {
					if s["name"] == w["name"] {
						picked = append(picked, s)
					}
				}
			}
			if diff := cmp.Diff(tt.want, picked); diff != "" {
				t.Errorf("streams.list (-want +got):\n%s", diff)
			}
		})
	}
}

type demoTestSnapshot struct {
	Seq       int64           `json:"seq"`
	Timestamp string          `json:"timestamp"`
	State     json.RawMessage `json:"state"`
}

func TestDemoSnapshotGet(t *testing.T) {
	a := newDemoTestApp(1, 10)
	addDemoTestConsole(a, 23)
	get := func(params string) demoTestSnapshot {
		t.Helper()
		var s demoTestSnapshot
		demoMustCall(t, a, "snapshot.get", params, &s)
		return s
	}
	for _, want := range []demoTestSnapshot{
		{Seq: 15, Timestamp: demoTestTime(19), State: json.RawMessage(`{"lines":12}`)},
		{Seq: 20, Timestamp: demoTestTime(24), State: json.RawMessage(`{"lines":16}`)},
	} {
		got := get(fmt.Sprintf(`{"stream":"ticker","seq":%d}`, want.Seq))
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("snapshot.get seq %d (-want +got):\n%s", want.Seq, diff)
		}
	}

	// Without seq: the state changed since seq 20, so a snapshot is taken
	// now, as seq 24 (clock reading 28); asking again before any change
	// returns the same one.
	fresh := demoTestSnapshot{Seq: 24, Timestamp: demoTestTime(28), State: json.RawMessage(`{"lines":19}`)}
	for i, params := range []string{`{"stream":"ticker"}`, `{"stream":"ticker","seq":null}`, `{"stream":"ticker","seq":24}`} {
		if diff := cmp.Diff(fresh, get(params)); diff != "" {
			t.Errorf("call %d: snapshot.get %s (-want +got):\n%s", i, params, diff)
		}
	}
	var q demoTestQuery
	demoMustCall(t, a, "events.query", `{"stream":"ticker","limit":1}`, &q)
	if len(q.Events) != 1 || q.Events[0].Seq != 24 || q.Events[0].Type != "ticker_snapshot" || q.LatestSeq != 24 {
		t.Errorf("after snapshot.get the newest event is %+v (latestSeq %d), want the ticker_snapshot 24", q.Events, q.LatestSeq)
	}
}

func TestDemoSnapshotGetWithoutSnapshots(t *testing.T) {
	a := newDemoTestApp(1, 10)
	a.addStream("ticker", "", nil, nil)
	_, werr := demoCall(t, a, "snapshot.get", `{"stream":"ticker"}`)
	if werr == nil || werr.Code != "SNAPSHOT_NOT_FOUND" {
		t.Errorf("snapshot.get of a stream without snapshots: error %v, want SNAPSHOT_NOT_FOUND", werr)
	}
}

// demoRawEqual compares JSON texts as bytes: cmp's default walks them byte
// by byte, which is slow on big dumps.
var demoRawEqual = cmp.Comparer(func(a, b json.RawMessage) bool { return bytes.Equal(a, b) })

// demoDump is every event of every stream, as JSON.
func demoDump(t *testing.T, a *demoApp) map[string][]demoTestEvent {
	t.Helper()
	dump := map[string][]demoTestEvent{}
	for _, stream := range []string{"redux", "navigation", "mmkv"} {
		dump[stream] = demoAllEvents(t, a, stream)
	}
	return dump
}

func TestDemoDeterministic(t *testing.T) {
	run := func(seed int64) (*demoApp, map[string][]demoTestEvent) {
		a := newDemoTestApp(seed, 0)
		for range 80 {
			a.step()
		}
		return a, demoDump(t, a)
	}
	a1, d1 := run(42)
	a2, d2 := run(42)
	if diff := cmp.Diff(d1, d2, demoRawEqual); diff != "" {
		t.Errorf("same seed, different events (-first +second):\n%s", diff)
	}
	if a1.sessionID != a2.sessionID {
		t.Errorf("same seed, session ids %q and %q", a1.sessionID, a2.sessionID)
	}
	if !regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`).MatchString(a1.sessionID) {
		t.Errorf("session id %q is not a v4 UUID", a1.sessionID)
	}
	a3, d3 := run(43)
	if cmp.Equal(d1["redux"], d3["redux"], demoRawEqual) || a1.sessionID == a3.sessionID {
		t.Errorf("seeds 42 and 43 gave the same content")
	}
	if a := newDemoApp(demoOptions{Seed: 42, SessionID: "given"}); a.sessionID != "given" {
		t.Errorf("SessionID option ignored: %q", a.sessionID)
	}
}

func TestDemoSteps(t *testing.T) {
	t.Parallel()
	const steps = 400
	a := newDemoTestApp(7, 5000)
	for i := 1; i <= steps; i++ {
		before := a.listStreams().Streams[0].LatestSeq
		a.step()
		var q demoTestQuery
		demoMustCall(t, a, "events.query", fmt.Sprintf(`{"stream":"redux","limit":200,"since_seq":%d,"event_type":"action_dispatched"}`, before), &q)
		if len(q.Events) == 0 {
			t.Fatalf("step %d dispatched no Redux action", i)
		}
	}

	timestamp := regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$`)
	seen := map[string]bool{}
	for stream, events := range demoDump(t, a) {
		snapshots := 0
		for i, ev := range events {
			if ev.Seq != int64(i+1) || ev.Stream != stream || !timestamp.MatchString(ev.Timestamp) {
				t.Fatalf("%s event %d: seq %d stream %q timestamp %q", stream, i, ev.Seq, ev.Stream, ev.Timestamp)
			}
			if i > 0 && ev.Timestamp < events[i-1].Timestamp {
				t.Errorf("%s seq %d: timestamp %s before the previous %s", stream, ev.Seq, ev.Timestamp, events[i-1].Timestamp)
			}
			var p map[string]any
			if err := json.Unmarshal(ev.Payload, &p); err != nil {
				t.Fatalf("%s seq %d payload %s: %v", stream, ev.Seq, ev.Payload, err)
			}
			key := stream + " " + ev.Type
			switch key {
			case "redux state_snapshot", "navigation navigation_snapshot", "mmkv mmkv_snapshot":
				snapshots++
				checkDemoSnapshotState(t, stream, p["state"])
			case "redux action_dispatched":
				action, _ := p["action"].(map[string]any)
				key += " " + fmt.Sprint(action["type"])
			case "navigation route_change":
				to, _ := p["to"].(map[string]any)
				if to["name"] == nil || (ev.Seq > 1) != (p["from"] != nil) {
					t.Errorf("route_change %d: %s", ev.Seq, ev.Payload)
				}
			case "mmkv mmkv_mutation":
				op := fmt.Sprint(p["op"])
				_, hasValue := p["value"]
				if !slices.Contains(demoMMKVInstances, fmt.Sprint(p["instance"])) || hasValue != (op == "set") {
					t.Errorf("mmkv_mutation %d: %s", ev.Seq, ev.Payload)
				}
				key += " " + op
			default:
				t.Errorf("unexpected event %s seq %d", key, ev.Seq)
			}
			seen[key] = true
		}
		// One snapshot per stream at the start and one every fifth step.
		if want := 1 + steps/demoSnapshotEvery; snapshots != want {
			t.Errorf("%s has %d snapshots, want %d", stream, snapshots, want)
		}
	}
	for _, key := range []string{
		"redux action_dispatched cart/addItem", "redux action_dispatched cart/removeItem",
		"redux action_dispatched catalog/fetchSucceeded", "redux action_dispatched auth/refreshToken",
		"redux action_dispatched ui/showToast", "redux action_dispatched auth/logout",
		"navigation route_change", "mmkv mmkv_mutation set", "mmkv mmkv_mutation delete", "mmkv mmkv_mutation clear",
	} {
		if !seen[key] {
			t.Errorf("%d steps never produced %s", steps, key)
		}
	}
}

func checkDemoSnapshotState(t *testing.T, stream string, state any) {
	t.Helper()
	s, _ := state.(map[string]any)
	path := func(keys ...string) any {
		var v any = s
		for _, k := range keys {
			m, _ := v.(map[string]any)
			v = m[k]
		}
		return v
	}
	switch stream {
	case "redux":
		if path("auth", "status") == "authenticated" && path("auth", "user", "role") != "admin" {
			t.Errorf("redux state: auth %v", path("auth"))
		}
		if path("cart", "currency") != "EUR" || path("cart", "items") == nil || path("ui", "theme") == nil {
			t.Errorf("redux state: cart %v ui %v", path("cart"), path("ui"))
		}
		byID, _ := path("catalog", "byId").(map[string]any)
		for sku := range byID {
			if !regexp.MustCompile(`^[A-C]-[1-6]$`).MatchString(sku) {
				t.Errorf("redux state: catalog.byId key %q", sku)
			}
		}
	case "navigation":
		routes, _ := s["routes"].([]any)
		if s["type"] != "stack" || s["stale"] != false || len(routes) == 0 {
			t.Fatalf("navigation state: %v", s)
		}
		main, _ := routes[0].(map[string]any)
		tabs, _ := main["state"].(map[string]any)
		if main["name"] != "Main" || tabs["type"] != "tab" || !cmp.Equal(tabs["routeNames"], []any{"Home", "Catalog", "Cart", "Profile"}) {
			t.Errorf("navigation state: routes[0] = %v", main)
		}
	case "mmkv":
		for _, instance := range demoMMKVInstances {
			size, _ := path(instance, "totalSize").(float64)
			if _, ok := path(instance, "keys").(map[string]any); !ok || (size == 0) != (len(path(instance, "keys").(map[string]any)) == 0) {
				t.Errorf("mmkv state: %s = %v", instance, path(instance))
			}
		}
	}
}

func TestDemoRingEviction(t *testing.T) {
	a := newDemoTestApp(3, 20)
	for range 100 {
		a.step()
	}
	for _, s := range a.listStreams().Streams {
		if s.EventCount != 20 || s.OldestSeq != s.LatestSeq-19 || s.LatestSeq <= 20 {
			t.Errorf("%s: eventCount %d oldestSeq %d latestSeq %d, want 20 events ending at latestSeq", s.Name, s.EventCount, s.OldestSeq, s.LatestSeq)
		}
		if got := demoSeqs(demoAllEvents(t, a, s.Name)); !cmp.Equal(got, demoSeqRange(s.OldestSeq, s.LatestSeq)) {
			t.Errorf("%s: paging from since_seq 0 gave %v", s.Name, got)
		}
	}
}

// TestDemoEncoding pins that results encode themselves exactly as
// encoding/json would.
func TestDemoEncoding(t *testing.T) {
	a := newDemoTestApp(5, 0)
	for range 12 {
		a.step()
	}
	a.setReduxState(json.RawMessage(`{"nested":{"a":[1,2,{"b":"\u2028<>&"}]}}`))
	for _, c := range []struct{ method, params string }{
		{"streams.list", `{}`},
		{"events.query", `{"stream":"redux","limit":200}`},
		{"events.query", `{"stream":"navigation","limit":1}`},
		{"events.query", `{"stream":"mmkv","limit":3,"event_type":"nothing"}`},
		{"snapshot.get", `{"stream":"redux"}`},
		{"snapshot.get", `{"stream":"mmkv"}`},
	} {
		result, werr := a.handle(c.method, json.RawMessage(c.params))
		if werr != nil {
			t.Fatalf("%s %s: %v", c.method, c.params, werr)
		}
		appended := append([]byte("prefix"), demoMarshal(result)...)
		if enc, ok := result.(demoEncoded); ok {
			appended = enc.appendJSON([]byte("prefix"))
		}
		if !bytes.HasPrefix(appended, []byte("prefix")) {
			t.Errorf("%s %s: appendJSON dropped what it was appended to", c.method, c.params)
		}
		var viaAppend, viaMarshal any
		if err := json.Unmarshal(appended[len("prefix"):], &viaAppend); err != nil {
			t.Fatalf("%s %s: appended JSON invalid: %v", c.method, c.params, err)
		}
		if err := json.Unmarshal(demoMarshal(result), &viaMarshal); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(viaMarshal, viaAppend); diff != "" {
			t.Errorf("%s %s: appendJSON differs from json.Marshal (-marshal +append):\n%s", c.method, c.params, diff)
		}

		for _, id := range []string{"17", "q\"\\\u2028\x01"} {
			quoted := demoAppendString(nil, id)
			frame := demoAppendResponse(nil, quoted, result, nil)
			var resp struct {
				Type, ID string
				Result   json.RawMessage
			}
			if err := json.Unmarshal(frame, &resp); err != nil || resp.Type != "response" || resp.ID != id {
				t.Errorf("response frame %.100s: type %q id %q err %v", frame, resp.Type, resp.ID, err)
			}
		}
	}
	frame := demoAppendResponse(nil, []byte(`"9"`), nil, &wireError{Code: "UNKNOWN_METHOD", Message: "m"})
	if want := `{"type":"response","id":"9","error":{"code":"UNKNOWN_METHOD","message":"m"}}`; string(frame) != want {
		t.Errorf("error frame = %s, want %s", frame, want)
	}
}

// ---------------------------------------------------------------------------
// Over a real loopback WebSocket.
