package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coder/websocket"
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

// demoPathTestState is the Redux state of the path request tests: an index
// key, an array, a key needing quotes and a string HTML would escape.
const demoPathTestState = `{"auth":{"user":{"role":"admin"}},"routes":[{"name":"Home"},{"name":"Cart","params":{"sku":"A-1"}}],` +
	`"byId":{"42":{"name":"x"}},"html":"<b>&"}`

func TestDemoSnapshotGetPath(t *testing.T) {
	a := newDemoTestApp(1, 10)
	a.setReduxState(json.RawMessage(demoPathTestState))
	var whole demoTestSnapshot
	demoMustCall(t, a, "snapshot.get", `{"stream":"redux"}`, &whole)
	for _, tc := range []struct{ path, want string }{
		{`["auth","user","role"]`, `"admin"`},
		{`["routes",1,"name"]`, `"Cart"`},
		{`["routes",1]`, `{"name":"Cart","params":{"sku":"A-1"}}`},
		{`["byId",42]`, `{"name":"x"}`}, // an integer on an object names the key it spells
		{`["byId","42","name"]`, `"x"`},
		{`["html"]`, `"<b>&"`},
		{`[]`, demoPathTestState},
	} {
		var got demoTestSnapshot
		demoMustCall(t, a, "snapshot.get", `{"stream":"redux","path":`+tc.path+`}`, &got)
		if got.Seq != whole.Seq || got.Timestamp != whole.Timestamp {
			t.Errorf("path %s: seq %d at %s, want the current snapshot's %d at %s", tc.path, got.Seq, got.Timestamp, whole.Seq, whole.Timestamp)
		}
		if diff := cmp.Diff(normaliseJSON(t, tc.want), normaliseJSON(t, string(got.State))); diff != "" {
			t.Errorf("path %s (-want +got):\n%s", tc.path, diff)
		}
	}
	// The path applies to the snapshot seq names, too.
	var nav demoTestSnapshot
	demoMustCall(t, a, "snapshot.get", `{"stream":"navigation","seq":2,"path":["routes",0,"name"]}`, &nav)
	if nav.Seq != 2 || string(nav.State) != `"Main"` {
		t.Errorf("navigation snapshot 2 at routes.0.name = seq %d %s, want seq 2 \"Main\"", nav.Seq, nav.State)
	}

	for _, tc := range []struct {
		path    string
		code    string
		details string
	}{
		{`["routes",5]`, "PATH_NOT_FOUND", `{"resolvedPrefix":["routes"],"available":{"length":2}}`},
		{`["routes","0"]`, "PATH_NOT_FOUND", `{"resolvedPrefix":["routes"],"available":{"length":2}}`}, // a string never indexes
		{`["byId",42,"nope"]`, "PATH_NOT_FOUND", `{"resolvedPrefix":["byId","42"],"available":["name"]}`},
		{`["auth","user","role","x"]`, "PATH_NOT_FOUND", `{"resolvedPrefix":["auth","user","role"],"available":null}`},
		{`["nope"]`, "PATH_NOT_FOUND", `{"resolvedPrefix":[],"available":["auth","byId","html","routes"]}`},
		{`"auth"`, "INVALID_PARAMS", ""},
		{`[true]`, "INVALID_PARAMS", ""},
		{`[-1]`, "INVALID_PARAMS", ""},
	} {
		_, werr := demoCall(t, a, "snapshot.get", `{"stream":"redux","path":`+tc.path+`}`)
		if werr == nil || werr.Code != tc.code {
			t.Errorf("path %s: error %v, want %s", tc.path, werr, tc.code)
			continue
		}
		if tc.details != "" {
			got, _ := json.Marshal(werr.Details)
			if diff := cmp.Diff(normaliseJSON(t, tc.details), normaliseJSON(t, string(got))); diff != "" {
				t.Errorf("path %s details (-want +got):\n%s", tc.path, diff)
			}
		}
	}
}

func TestDemoSnapshotKeys(t *testing.T) {
	a := newDemoTestApp(1, 10)
	a.setReduxState(json.RawMessage(demoPathTestState))
	var whole demoTestSnapshot
	demoMustCall(t, a, "snapshot.get", `{"stream":"redux"}`, &whole)
	head := fmt.Sprintf(`"seq":%d,"timestamp":%q`, whole.Seq, whole.Timestamp)
	size := func(s string) int { return len(s) }
	for _, tc := range []struct{ params, want string }{
		{`{"stream":"redux","path":[]}`, fmt.Sprintf(`{%s,"type":"object","size":%d,"total":4,"children":[`+
			`{"key":"routes","type":"array","size":%d,"length":2},{"key":"auth","type":"object","size":%d},`+
			`{"key":"byId","type":"object","size":%d},{"key":"html","type":"string","size":%d}]}`,
			head, size(demoPathTestState), size(`[{"name":"Home"},{"name":"Cart","params":{"sku":"A-1"}}]`),
			size(`{"user":{"role":"admin"}}`), size(`{"42":{"name":"x"}}`), size(`"<b>&"`))},
		{`{"stream":"redux","path":[],"limit":1}`, fmt.Sprintf(`{%s,"type":"object","size":%d,"total":4,"children":[`+
			`{"key":"routes","type":"array","size":%d,"length":2}]}`,
			head, size(demoPathTestState), size(`[{"name":"Home"},{"name":"Cart","params":{"sku":"A-1"}}]`))},
		{`{"stream":"redux","path":["routes"]}`, fmt.Sprintf(`{%s,"type":"array","size":%d,"length":2,"total":2,"children":[`+
			`{"index":1,"type":"object","size":%d},{"index":0,"type":"object","size":%d}]}`,
			head, size(`[{"name":"Home"},{"name":"Cart","params":{"sku":"A-1"}}]`),
			size(`{"name":"Cart","params":{"sku":"A-1"}}`), size(`{"name":"Home"}`))},
		{`{"stream":"redux","path":["byId",42,"name"]}`, fmt.Sprintf(`{%s,"type":"string","size":3,"total":0,"children":[]}`, head)},
	} {
		got, werr := demoCall(t, a, "snapshot.keys", tc.params)
		if werr != nil {
			t.Errorf("snapshot.keys %s: %v", tc.params, werr)
			continue
		}
		if diff := cmp.Diff(normaliseJSON(t, tc.want), normaliseJSON(t, string(got))); diff != "" {
			t.Errorf("snapshot.keys %s (-want +got):\n%s", tc.params, diff)
		}
	}
	for params, code := range map[string]string{
		`{"stream":"redux","path":["auth","nope"]}`: "PATH_NOT_FOUND",
		`{"stream":"redux"}`:                        "INVALID_PARAMS",
		`{"stream":"redux","path":[],"limit":0}`:    "INVALID_PARAMS",
		`{"stream":"nope","path":[]}`:               "STREAM_UNAVAILABLE",
	} {
		if _, werr := demoCall(t, a, "snapshot.keys", params); werr == nil || werr.Code != code {
			t.Errorf("snapshot.keys %s: error %v, want %s", params, werr, code)
		}
	}
}

func TestDemoSetReduxState(t *testing.T) {
	a := newDemoTestApp(1, 5)
	big := json.RawMessage(`{"big":"` + strings.Repeat("x", 4000) + `","n":[1,2,3]}`)
	a.setReduxState(big)

	var s demoTestSnapshot
	demoMustCall(t, a, "snapshot.get", `{"stream":"redux"}`, &s)
	if s.Seq != 2 || !bytes.Equal(s.State, big) {
		t.Fatalf("snapshot.get redux = seq %d state of %d bytes, want seq 2 (the recorded state_snapshot) with the state set", s.Seq, len(s.State))
	}
	// Later actions are recorded but leave the state alone; once the
	// snapshot is evicted a fresh one of the same state is taken.
	for range 12 {
		a.step()
	}
	demoMustCall(t, a, "snapshot.get", `{"stream":"redux"}`, &s)
	if !bytes.Equal(s.State, big) {
		t.Errorf("after steps, redux state = %.80s…, want the state set", s.State)
	}
	var q demoTestQuery
	demoMustCall(t, a, "events.query", `{"stream":"redux","limit":5,"event_type":"state_snapshot"}`, &q)
	for _, ev := range q.Events {
		if want := `{"state":` + string(big) + `}`; string(ev.Payload) != want {
			t.Errorf("state_snapshot %d payload = %.80s…, want the state set", ev.Seq, ev.Payload)
		}
	}
	for range 10 {
		a.mutate(a.toastCycleLocked)
	}
	before := s.Seq
	demoMustCall(t, a, "snapshot.get", `{"stream":"redux"}`, &s)
	if s.Seq <= before || !bytes.Equal(s.State, big) {
		t.Errorf("snapshot.get after the snapshot was evicted = seq %d, want a fresh seq > %d with the state set", s.Seq, before)
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
// encoding/json would, and that encodedSize is exact.
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
		enc := result.(demoEncoded)
		appended := enc.appendJSON([]byte("prefix"))
		if !bytes.HasPrefix(appended, []byte("prefix")) || len(appended)-len("prefix") != enc.encodedSize() {
			t.Errorf("%s %s: appended %d bytes, encodedSize says %d", c.method, c.params, len(appended)-len("prefix"), enc.encodedSize())
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
			if len(frame) != demoResponseSize(quoted, result) {
				t.Errorf("response frame is %d bytes, demoResponseSize says %d", len(frame), demoResponseSize(quoted, result))
			}
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

// demoTestPeer is the server end of one connection from a demoApp.
type demoTestPeer struct {
	t         *testing.T
	conn      *websocket.Conn
	handshake map[string]any
	connected <-chan error // connect's result
	cancel    context.CancelFunc
	stopOnce  sync.Once
	stopErr   error
}

// demoTestServer accepts WebSockets and hands them to the test. It lives
// until the test's cleanup.
func demoTestServer(t *testing.T) (wsURL string, conns <-chan *websocket.Conn) {
	t.Helper()
	accepted := make(chan *websocket.Conn)
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := websocket.Accept(w, r, nil) // also checks the app's Origin names the same host
		if err != nil {
			return
		}
		c.SetReadLimit(64 << 20)
		select {
		case accepted <- c:
		case <-release:
			c.CloseNow()
		}
	}))
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(release) })
	return "ws" + strings.TrimPrefix(srv.URL, "http"), accepted
}

// demoTestConnect starts app.connect against a test server and returns
// after reading the app's handshake; the test answers it.
func demoTestConnect(t *testing.T, app *demoApp) *demoTestPeer {
	t.Helper()
	wsURL, conns := demoTestServer(t)
	ctx, cancel := context.WithCancel(t.Context())
	connected := make(chan error, 1)
	go func() { connected <- app.connect(ctx, wsURL) }()
	p := &demoTestPeer{t: t, connected: connected, cancel: cancel}
	t.Cleanup(func() { p.stop() })
	select {
	case p.conn = <-conns:
	case err := <-connected:
		t.Fatalf("connect returned before the server accepted: %v", err)
	}
	msg := p.read()
	if err := json.Unmarshal(msg, &p.handshake); err != nil {
		t.Fatalf("handshake %s: %v", msg, err)
	}
	return p
}

func (p *demoTestPeer) read() []byte {
	p.t.Helper()
	for {
		typ, data, err := p.conn.Read(p.t.Context())
		if err != nil {
			p.t.Fatalf("server read: %v", err)
		}
		if typ == websocket.MessageText {
			return data
		}
	}
}

func (p *demoTestPeer) write(msg string) {
	p.t.Helper()
	if err := p.conn.Write(p.t.Context(), websocket.MessageText, []byte(msg)); err != nil {
		p.t.Fatalf("server write %s: %v", msg, err)
	}
}

// live answers the handshake with ack and returns once the app serves
// requests, and so also pushes.
func (p *demoTestPeer) live(ack string) {
	p.t.Helper()
	p.write(ack)
	p.write(`{"type":"request","id":"live","method":"streams.list"}`)
	p.response("live")
}

const demoTestAck = `{"type":"handshake_ack","protocolVersion":1,"server":{"name":"devtools-mcp","version":"0.1.0"},"maxPayload":524288,"requestTimeoutMs":5000}`

type demoTestFrame struct {
	Type   string          `json:"type"`
	ID     string          `json:"id"`
	Result json.RawMessage `json:"result"`
	Error  *wireError      `json:"error"`
	Event  demoTestEvent   `json:"event"`
	raw    []byte
}

// next reads the next frame.
func (p *demoTestPeer) next() demoTestFrame {
	p.t.Helper()
	raw := p.read()
	f := demoTestFrame{raw: raw}
	if err := json.Unmarshal(raw, &f); err != nil {
		p.t.Fatalf("frame %.200s: %v", raw, err)
	}
	return f
}

// response reads frames until the response to id, passing over pushes and
// responses to ids in skip.
func (p *demoTestPeer) response(id string, skip ...string) demoTestFrame {
	p.t.Helper()
	for {
		f := p.next()
		switch {
		case f.Type == "event":
		case f.Type == "response" && f.ID == id:
			if !bytes.HasPrefix(f.raw, []byte(`{"type":"response","id":`)) {
				p.t.Errorf("response %.60s does not start with type and id", f.raw)
			}
			return f
		case f.Type == "response" && slices.Contains(skip, f.ID):
		default:
			p.t.Fatalf("waiting for response %s, got %.200s", id, f.raw)
		}
	}
}

// stop cancels connect, lets the app close (reading to complete the close
// handshake) and returns connect's result.
func (p *demoTestPeer) stop() error {
	p.stopOnce.Do(func() {
		p.cancel()
		ctx := context.WithoutCancel(p.t.Context())
		for {
			if _, _, err := p.conn.Read(ctx); err != nil {
				if status := websocket.CloseStatus(err); status != websocket.StatusNormalClosure {
					p.stopErr = fmt.Errorf("app closed with %v (%v), want 1000", status, err)
				}
				break
			}
		}
		if err := <-p.connected; err != nil && p.stopErr == nil {
			p.stopErr = fmt.Errorf("connect returned %w after cancel, want nil", err)
		}
		p.conn.CloseNow()
	})
	return p.stopErr
}

func TestDemoConnect(t *testing.T) {
	checkDemoNoLeak(t)
	app := newDemoApp(demoOptions{Seed: 3, Now: demoTestClock(), Token: "s3cret"})
	p := demoTestConnect(t, app)

	wantHandshake := map[string]any{
		"type": "handshake", "protocolVersion": 1.0, "sessionId": app.sessionID, "adapterVersion": demoAdapterVersion,
		"startedAt": demoTestTime(0), "token": "s3cret",
		"app":    map[string]any{"name": "ShopApp", "version": "2.4.0", "bundleId": "com.example.shop"},
		"device": map[string]any{"platform": "ios", "osVersion": "18.1", "model": "iPhone 16", "isEmulator": true},
		"streams": []any{
			map[string]any{"name": "redux", "active": true},
			map[string]any{"name": "navigation", "active": true},
			map[string]any{"name": "mmkv", "active": true, "instances": []any{"default", "auth"}},
			map[string]any{"name": "console", "active": true},
			map[string]any{"name": "network", "active": true},
		},
		"capabilities": []any{"state.dispatch", "commands", "snapshot.path", "snapshot.keys"},
	}
	if diff := cmp.Diff(wantHandshake, p.handshake); diff != "" {
		t.Errorf("handshake (-want +got):\n%s", diff)
	}
	p.write(demoTestAck)

	// Requests are answered with what handle answers.
	for i, c := range []struct{ method, params string }{
		{"streams.list", `{}`},
		{"events.query", `{"stream":"navigation","limit":2}`},
		{"snapshot.get", `{"stream":"mmkv","seq":1}`},
	} {
		id := fmt.Sprint(i + 1)
		p.write(fmt.Sprintf(`{"type":"request","id":%q,"method":%q,"params":%s}`, id, c.method, c.params))
		f := p.response(id)
		want, werr := demoCall(t, app, c.method, c.params)
		if werr != nil || f.Error != nil || !bytes.Equal(want, f.Result) {
			t.Errorf("%s: result %s error %v, want %s %v", c.method, f.Result, f.Error, want, werr)
		}
	}
	p.write(`{"type":"request","id":"u","method":"state.dump","params":{}}`)
	if f := p.response("u"); f.Error == nil || f.Error.Code != "UNKNOWN_METHOD" {
		t.Errorf("unknown method: %s", f.raw)
	}

	// What a server may send that the adapter ignores; the connection stays.
	if err := p.conn.Write(t.Context(), websocket.MessageBinary, []byte(`{"type":"request","id":"bin","method":"streams.list"}`)); err != nil {
		t.Fatal(err)
	}
	for _, msg := range []string{`{"type":`, `[1,2]`, `{"type":"mystery","id":"x"}`, `{"type":"pong"}`,
		`{"type":"request","method":"streams.list"}`, `{"type":"cancel","id":"nothing-pending"}`} {
		p.write(msg)
	}
	p.write(`{"type":"request","id":"after","method":"streams.list"}`)
	p.response("after")

	// A cancelled request may or may not be answered; later ones are.
	p.write(`{"type":"request","id":"c","method":"snapshot.get","params":{"stream":"redux"}}`)
	p.write(`{"type":"cancel","id":"c"}`)
	p.write(`{"type":"request","id":"d","method":"streams.list"}`)
	p.response("d", "c")

	// Pushes: every event recorded by step arrives, in seq order per stream.
	latest := map[string]int64{}
	for _, s := range app.listStreams().Streams {
		latest[s.Name] = s.LatestSeq
	}
	app.step()
	want := map[string][]demoTestEvent{}
	remaining := 0
	for stream, seq := range latest {
		var q demoTestQuery
		demoMustCall(t, app, "events.query", fmt.Sprintf(`{"stream":%q,"limit":200,"since_seq":%d}`, stream, seq), &q)
		if len(q.Events) > 0 {
			want[stream] = q.Events
			remaining += len(q.Events)
		}
	}
	got := map[string][]demoTestEvent{}
	for remaining > 0 {
		f := p.next()
		if f.Type != "event" {
			t.Fatalf("waiting for pushes, got %.200s", f.raw)
		}
		if f.Event.Seq > latest[f.Event.Stream] {
			got[f.Event.Stream] = append(got[f.Event.Stream], f.Event)
			remaining--
		}
	}
	if diff := cmp.Diff(want, got, demoRawEqual); diff != "" {
		t.Errorf("pushed events (-queried +pushed):\n%s", diff)
	}

	if err := p.stop(); err != nil {
		t.Error(err)
	}
}

func TestDemoConnectRefused(t *testing.T) {
	checkDemoNoLeak(t)
	app := newDemoTestApp(3, 0)
	p := demoTestConnect(t, app)
	p.write(`{"type":"handshake_error","code":"UNAUTHORIZED","message":"token missing or wrong"}`)
	err := <-p.connected
	var refused *demoHandshakeError
	if !errors.As(err, &refused) || refused.Code != "UNAUTHORIZED" || !strings.Contains(err.Error(), "token missing or wrong") {
		t.Errorf("connect = %v, want a handshake error naming UNAUTHORIZED and the message", err)
	}
	p.stopOnce.Do(func() { p.conn.CloseNow() })
	if err := app.pushEvents(t.Context(), 1); !errors.Is(err, errDemoNotConnected) {
		t.Errorf("pushEvents after a refused handshake = %v, want errDemoNotConnected", err)
	}
}

func TestDemoConnectServerCloses(t *testing.T) {
	checkDemoNoLeak(t)
	app := newDemoTestApp(3, 0)
	p := demoTestConnect(t, app)
	p.write(demoTestAck)
	p.write(`{"type":"request","id":"1","method":"streams.list"}`)
	p.response("1")
	p.conn.Close(4000, "replaced")
	err := <-p.connected
	if websocket.CloseStatus(err) != 4000 {
		t.Errorf("connect = %v, want the server's close 4000", err)
	}
	p.stopOnce.Do(func() {})
}

func TestDemoPayloadLimit(t *testing.T) {
	big := json.RawMessage(`{"blob":"` + strings.Repeat("b", 8000) + `"}`)
	ack := `{"type":"handshake_ack","protocolVersion":1,"maxPayload":4096}`

	t.Run("answers PAYLOAD_TOO_LARGE", func(t *testing.T) {
		checkDemoNoLeak(t)
		app := newDemoTestApp(3, 0)
		p := demoTestConnect(t, app)
		p.live(ack)
		app.setReduxState(big) // its push is over the limit and skipped
		app.step()
		latest := app.listStreams().Streams[0].LatestSeq

		p.write(`{"type":"request","id":"1","method":"snapshot.get","params":{"stream":"redux","seq":2}}`)
		p.write(`{"type":"request","id":"2","method":"events.query","params":{"stream":"redux","limit":200}}`)
		p.write(`{"type":"request","id":"3","method":"events.query","params":{"stream":"navigation","limit":1}}`)
		responses := map[string]demoTestFrame{}
		seenLatest := false
		for len(responses) < 3 || !seenLatest {
			f := p.next()
			if len(f.raw) > 4096 {
				t.Errorf("frame of %d bytes over maxPayload 4096: %.100s", len(f.raw), f.raw)
			}
			switch f.Type {
			case "response":
				responses[f.ID] = f
			case "event":
				if f.Event.Stream == "redux" && f.Event.Seq == 2 {
					t.Errorf("the oversized state_snapshot was pushed")
				}
				seenLatest = seenLatest || (f.Event.Stream == "redux" && f.Event.Seq == latest)
			}
		}
		for _, id := range []string{"1", "2"} {
			e := responses[id].Error
			if e == nil || e.Code != "PAYLOAD_TOO_LARGE" {
				t.Errorf("response %s = %.200s, want PAYLOAD_TOO_LARGE", id, responses[id].raw)
				continue
			}
			details, _ := e.Details.(map[string]any)
			if bytes, _ := details["bytes"].(float64); bytes <= 4096 || details["maxPayload"] != 4096.0 {
				t.Errorf("response %s details %v, want bytes over maxPayload 4096", id, e.Details)
			}
		}
		if r := responses["3"]; r.Error != nil || r.Result == nil {
			t.Errorf("a small response was refused: %.200s", r.raw)
		}
		if err := p.stop(); err != nil {
			t.Error(err)
		}
	})

	t.Run("SendOversized", func(t *testing.T) {
		checkDemoNoLeak(t)
		app := newDemoApp(demoOptions{Seed: 3, Now: demoTestClock(), SendOversized: true})
		app.setReduxState(big)
		p := demoTestConnect(t, app)
		p.write(ack)
		p.write(`{"type":"request","id":"1","method":"snapshot.get","params":{"stream":"redux"}}`)
		f := p.response("1")
		var s demoTestSnapshot
		if err := json.Unmarshal(f.Result, &s); err != nil || !bytes.Equal(s.State, big) {
			t.Errorf("snapshot.get with SendOversized = %.100s (%v), want the whole state", f.raw, err)
		}
		if err := p.stop(); err != nil {
			t.Error(err)
		}
	})
}

func TestDemoPushEvents(t *testing.T) {
	checkDemoNoLeak(t)
	app := newDemoTestApp(3, 0)
	if err := app.pushEvents(t.Context(), 1); !errors.Is(err, errDemoNotConnected) {
		t.Errorf("pushEvents before connecting = %v, want errDemoNotConnected", err)
	}
	p := demoTestConnect(t, app)
	p.live(demoTestAck)

	const n = 300
	pushed := make(chan error, 1)
	go func() { pushed <- app.pushEvents(t.Context(), n) }()
	for i := range n {
		f := p.next()
		action := struct {
			Action struct{ Type string } `json:"action"`
		}{}
		_ = json.Unmarshal(f.Event.Payload, &action)
		if f.Type != "event" || f.Event.Stream != "redux" || f.Event.Seq != int64(2+i) || f.Event.Type != "action_dispatched" ||
			!strings.HasPrefix(action.Action.Type, "ui/") {
			t.Fatalf("push %d = %.200s, want redux action_dispatched seq %d", i, f.raw, 2+i)
		}
	}
	if err := <-pushed; err != nil {
		t.Errorf("pushEvents = %v", err)
	}
	if err := p.stop(); err != nil {
		t.Error(err)
	}
}

func TestDemoRun(t *testing.T) {
	checkDemoNoLeak(t)
	wsURL, conns := demoTestServer(t)
	app := newDemoTestApp(3, 0)
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() {
		defer close(done)
		app.run(ctx, wsURL, 0, nil)
	}()
	t.Cleanup(func() {
		cancel()
		<-done
	})
	accept := func() *demoTestPeer {
		t.Helper()
		p := &demoTestPeer{t: t}
		p.conn = <-conns
		if err := json.Unmarshal(p.read(), &p.handshake); err != nil || p.handshake["sessionId"] != app.sessionID {
			t.Fatalf("handshake %v: %v", p.handshake, err)
		}
		return p
	}

	// Refused, then dropped by the server, then stopped by the app: run
	// reconnects after each of the first two.
	p := accept()
	p.write(`{"type":"handshake_error","code":"UNAUTHORIZED","message":"token missing"}`)
	p.conn.CloseNow()

	p = accept()
	p.write(demoTestAck)
	p.conn.Close(4000, "replaced")

	p = accept()
	p.write(demoTestAck)
	p.write(`{"type":"request","id":"1","method":"streams.list"}`)
	p.response("1")
	cancel()
	for {
		if _, _, err := p.conn.Read(context.WithoutCancel(t.Context())); err != nil {
			if websocket.CloseStatus(err) != websocket.StatusNormalClosure {
				t.Errorf("run closed with %v, want 1000", err)
			}
			break
		}
	}
	<-done
}

// demoGoroutines counts the goroutines running demoApp or demoLink code.
func demoGoroutines() int {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	count := 0
	for _, g := range bytes.Split(buf, []byte("\n\n")) {
		if bytes.Contains(g, []byte("(*demoApp)")) || bytes.Contains(g, []byte("(*demoLink)")) {
			count++
		}
	}
	return count
}

// checkDemoNoLeak fails the test when, after its cleanups, more goroutines
// run demo code than before it. connect and run wait for their goroutines
// before returning, so no waiting is needed here.
func checkDemoNoLeak(t *testing.T) {
	t.Helper()
	before := demoGoroutines()
	t.Cleanup(func() {
		if after := demoGoroutines(); after > before {
			t.Errorf("%d goroutines running demo code outlived the test", after-before)
		}
	})
}

// TestDemoConcurrent runs steps, snapshot requests and pushEvents at once
// (for the race detector) and checks pushes stay in seq order per stream.
func TestDemoConcurrent(t *testing.T) {
	checkDemoNoLeak(t)
	app := newDemoTestApp(11, 0)
	p := demoTestConnect(t, app)
	p.live(demoTestAck)

	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for range 25 {
				app.step()
				app.handle("snapshot.get", json.RawMessage(`{"stream":"navigation"}`))
			}
		})
	}
	wg.Go(func() {
		if err := app.pushEvents(t.Context(), 50); err != nil {
			t.Errorf("pushEvents: %v", err)
		}
	})
	for i := range 20 {
		p.write(fmt.Sprintf(`{"type":"request","id":"r%d","method":"snapshot.get","params":{"stream":"redux"}}`, i))
	}

	// pushEvents flushes every push queued before its own: once its last
	// event arrives, all earlier pushes have.
	finalSeq := make(chan int64, 1)
	go func() {
		wg.Wait()
		err := app.pushEvents(t.Context(), 1)
		if err != nil {
			t.Errorf("final pushEvents: %v", err)
		}
		finalSeq <- app.listStreams().Streams[0].LatestSeq
	}()
	last := map[string]int64{}
	responses := 0
	final := int64(-1)
	for responses < 20 || final < 0 || last["redux"] < final {
		select {
		case final = <-finalSeq:
			continue
		default:
		}
		f := p.next()
		switch f.Type {
		case "response":
			if f.Error != nil {
				t.Errorf("response %s: %v", f.ID, f.Error)
			}
			responses++
		case "event":
			if f.Event.Seq <= last[f.Event.Stream] {
				t.Fatalf("%s push seq %d after seq %d", f.Event.Stream, f.Event.Seq, last[f.Event.Stream])
			}
			last[f.Event.Stream] = f.Event.Seq
		}
	}
	if err := p.stop(); err != nil {
		t.Error(err)
	}
}

// demoBigState is a Redux state of about size bytes.
func demoBigState(size int) json.RawMessage {
	var b bytes.Buffer
	b.WriteString(`{"catalog":{"byId":{`)
	for i := 0; b.Len() < size; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `"P-%d":{"sku":"P-%d","name":"Product number %d","price":%d.99,"tags":["a","b","c"]}`, i, i, i, i%100)
	}
	b.WriteString(`}}}`)
	return b.Bytes()
}

// BenchmarkDemoSnapshotResponse measures answering snapshot.get of a 5 MB
// state up to the bytes of the frame (no socket).
func BenchmarkDemoSnapshotResponse(b *testing.B) {
	app := newDemoApp(demoOptions{Seed: 1})
	app.setReduxState(demoBigState(5 << 20))
	quotedID := demoAppendString(nil, "17")
	var buf []byte
	b.ReportAllocs()
	for b.Loop() {
		result, werr := app.handle("snapshot.get", json.RawMessage(`{"stream":"redux"}`))
		if werr != nil {
			b.Fatal(werr)
		}
		buf = demoAppendResponse(buf[:0], quotedID, result, nil)
		b.SetBytes(int64(len(buf)))
	}
}

// BenchmarkDemoSnapshotOverSocket measures snapshot.get of a 5 MB state
// through a loopback WebSocket, request to response.
func BenchmarkDemoSnapshotOverSocket(b *testing.B) {
	app := newDemoApp(demoOptions{Seed: 1})
	app.setReduxState(demoBigState(5 << 20))
	accepted := make(chan *websocket.Conn, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := websocket.Accept(w, r, nil)
		if err == nil {
			c.SetReadLimit(64 << 20)
			accepted <- c
		}
	}))
	defer srv.Close()
	ctx, cancel := context.WithCancel(b.Context())
	done := make(chan error, 1)
	go func() { done <- app.connect(ctx, "ws"+strings.TrimPrefix(srv.URL, "http")) }()
	c := <-accepted
	defer c.CloseNow()
	if _, _, err := c.Read(b.Context()); err != nil {
		b.Fatal(err)
	}
	ack := `{"type":"handshake_ack","protocolVersion":1,"maxPayload":67108864}`
	if err := c.Write(b.Context(), websocket.MessageText, []byte(ack)); err != nil {
		b.Fatal(err)
	}
	req := []byte(`{"type":"request","id":"1","method":"snapshot.get","params":{"stream":"redux"}}`)
	b.ReportAllocs()
	for b.Loop() {
		if err := c.Write(b.Context(), websocket.MessageText, req); err != nil {
			b.Fatal(err)
		}
		for {
			_, data, err := c.Read(b.Context())
			if err != nil {
				b.Fatal(err)
			}
			if bytes.HasPrefix(data, []byte(`{"type":"response"`)) {
				b.SetBytes(int64(len(data)))
				break
			}
		}
	}
	b.StopTimer()
	cancel()
	for {
		if _, _, err := c.Read(context.WithoutCancel(b.Context())); err != nil {
			break
		}
	}
	if err := <-done; err != nil {
		b.Error(err)
	}
}
