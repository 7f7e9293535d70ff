package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// The simulated app's path requests: snapshot.get with a path, and
// snapshot.keys.

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
