package main

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// appFrames returns the app's frames of a recording, split where the
// server sent a frame of type splitAt (not included).
func appFrames(t *testing.T, file, splitAt string) (before, after []json.RawMessage) {
	t.Helper()
	split := false
	for _, f := range readReactotronCaptured(t, file) {
		if f.Dir == "server" && splitAt != "" && strings.Contains(string(f.Frame), splitAt) {
			split = true
		}
		if f.Dir != "app" {
			continue
		}
		if split {
			after = append(after, f.Frame)
		} else {
			before = append(before, f.Frame)
		}
	}
	return before, after
}

// toolError calls a tool that must fail and returns its error body.
func (e *e2e) toolError(name string, args map[string]any) map[string]any {
	e.t.Helper()
	res, isError := e.callTool(name, args)
	if !isError {
		e.t.Fatalf("%s(%v) succeeded: %s, want an error", name, args, res)
	}
	var m map[string]any
	if err := json.Unmarshal([]byte(res), &m); err != nil {
		e.t.Fatal(err)
	}
	return m
}

// waitEvents waits until stream holds at least n events.
func (e *e2e) waitEvents(stream string, n int) []any {
	return e.waitEventsOf(stream, "", n)
}

// waitEventsOf waits until stream holds at least n events of type typ
// ("" for any), and returns the stream's events.
func (e *e2e) waitEventsOf(stream, typ string, n int) []any {
	e.t.Helper()
	var events []any
	e.waitHealthRaw(func(map[string]any) bool {
		res, isError := e.callTool("debug_query_events", map[string]any{"stream": stream, "limit": 200})
		if isError {
			return false
		}
		var m map[string]any
		_ = json.Unmarshal([]byte(res), &m)
		events, _ = m["events"].([]any)
		count := 0
		for _, ev := range events {
			if typ == "" || ev.(map[string]any)["type"] == typ {
				count++
			}
		}
		return count >= n
	})
	return events
}

// A TanStack Query app through reactotron-react-query: its queries and
// mutations land in react_query, none in redux; the cache is a snapshot
// that diffs; a Redux read fails at once; the plugin's command runs.
func TestReactotronReactQuery(t *testing.T) {
	t.Parallel()
	e, url := startBridgeE2E(t)
	app := dialReactotron(t, url, nil)
	before, after := appFrames(t, "testdata/reactotron/react_query.jsonl", "state.backup.request")
	for _, f := range before {
		app.send(f)
	}
	events := e.waitEvents("react_query", 21)
	types := map[string]int{}
	for _, ev := range events {
		types[ev.(map[string]any)["type"].(string)]++
	}
	want := map[string]int{"query_added": 2, "observer_added": 2, "observer_removed": 1, "query_updated": 10, "mutation_added": 2, "mutation_updated": 4}
	if diff := cmp.Diff(want, types); diff != "" {
		t.Errorf("react_query event types (-want +got):\n%s", diff)
	}
	if n := len(e.toolJSON("debug_query_events", map[string]any{"stream": "redux"})["events"].([]any)); n != 0 {
		t.Errorf("redux holds %d events; a TanStack mutation is no Redux action", n)
	}

	snap := e.toolJSON("debug_get_snapshot", map[string]any{"stream": "react_query"})
	queries := snap["state"].(map[string]any)["queries"].(map[string]any)
	todos := queries[`["todos"]`].(map[string]any)
	user := queries[`["user",42]`].(map[string]any)
	if todos["status"] != "success" || len(todos["data"].([]any)) != 2 || todos["observerCount"] != 1.0 {
		t.Errorf(`["todos"] = %v, want success with 2 items and 1 observer`, todos)
	}
	if user["status"] != "error" || user["isInvalidated"] != true || !cmp.Equal(user["queryKey"], []any{"user", 42.0}) {
		t.Errorf(`["user",42] = %v, want an invalidated error with key ["user",42]`, user)
	}
	mutations := snap["state"].(map[string]any)["mutations"].(map[string]any)
	if mutations["1"].(map[string]any)["status"] != "success" || mutations["2"].(map[string]any)["status"] != "error" {
		t.Errorf("mutations = %v, want 1 success and 2 error", mutations)
	}
	scoped := e.toolJSON("debug_get_snapshot", map[string]any{"stream": "react_query", "scope": `queries["[\"todos\"]"].status`})
	if scoped["state"] != "success" {
		t.Errorf("scoped status = %v, want success", scoped["state"])
	}
	// Reading again without a change records no new snapshot.
	again := e.toolJSON("debug_get_snapshot", map[string]any{"stream": "react_query"})
	if again["seq"] != snap["seq"] {
		t.Errorf("unchanged cache read at seq %v then %v, want one snapshot", snap["seq"], again["seq"])
	}

	// A Redux read fails at once (not as TIMEOUT), naming the stream to read instead.
	failed := e.toolError("debug_get_state_path", map[string]any{"path": "todos"})
	if failed["code"] != codeStreamUnavailable || !strings.Contains(failed["suggestion"].(string), "react_query") {
		t.Errorf("redux read on a React Query app = %v, want STREAM_UNAVAILABLE pointing at react_query", failed)
	}

	// The plugin's command goes to the app as Reactotron's desktop app sends it.
	// Other frames of the server's (its setClientId, under load) may come
	// in between: the command is looked for among those after the call.
	n := len(app.serverFrames())
	e.toolJSON("debug_run_command", map[string]any{"command": "invalidate-react-query", "args": map[string]any{"queryKey": "todos"}})
	const command = `{"type":"custom","payload":{"command":"invalidate-react-query","args":{"queryKey":"todos"}}}`
	linkWaitFor(t, "the command, as the desktop app sends it", func() bool {
		return slices.Contains(app.serverFrames()[n:], command)
	})

	for _, f := range after {
		app.send(f)
	}
	e.waitEventsOf("react_query", "mutation_removed", 2)
	later := e.toolJSON("debug_get_snapshot", map[string]any{"stream": "react_query"})
	diff := e.toolJSON("debug_diff_snapshots", map[string]any{"stream": "react_query", "base_seq": snap["seq"], "target_seq": later["seq"]})
	paths := map[string]string{}
	for _, c := range diff["changes"].([]any) {
		c := c.(map[string]any)
		paths[c["path"].(string)] = c["type"].(string)
	}
	for path, typ := range map[string]string{`queries["[\"user\",42]"]`: "removed", `mutations["1"]`: "removed", `mutations["2"]`: "removed", `queries["[\"todos\"]"].observerCount`: "changed"} {
		if paths[path] != typ {
			t.Errorf("diff %s = %q, want %s (all: %v)", path, paths[path], typ, paths)
		}
	}
	h := e.toolJSON("debug_health_check", nil)
	streams := h["sessions"].([]any)[0].(map[string]any)["streams"].([]any)
	if !slices.Contains(streams, any("react_query")) {
		t.Errorf("health check streams %v lack react_query", streams)
	}
}

// A Zustand app through reactotron-plugin-zustand: the probe on
// introduction fills the stores stream, the bridge subscribes by name, changes are snapshots
// whose functions do not make diffs flap; a Redux read fails at once.
func TestReactotronZustand(t *testing.T) {
	e, url := startBridgeE2E(t)
	frames := readReactotronCaptured(t, "testdata/reactotron/zustand.jsonl")
	var backup json.RawMessage
	var changes []json.RawMessage
	for _, f := range frames {
		if f.Dir == "app" && strings.Contains(string(f.Frame), `"type":"state.backup.response"`) {
			backup = f.Frame
		}
		if f.Dir == "app" && strings.Contains(string(f.Frame), `"type":"state.values.change"`) {
			changes = append(changes, f.Frame)
		}
	}
	// reactotron-plugin-zustand answers the probe's "*" with every store,
	// and the list after it (none) with no changes.
	app := dialReactotron(t, url, map[string][]json.RawMessage{"state.backup.request": {backup},
		"state.values.subscribe": {zustandProbeAnswer(t), []byte(`{"type":"state.values.change","payload":{"changes":[]}}`)}})
	app.send(frames[0].Frame) // client.intro
	linkWaitFor(t, "the subscription", func() bool {
		return slices.Contains(app.serverFrames(), `{"type":"state.values.subscribe","payload":{"paths":["auth","cart"]}}`)
	})
	for i, f := range app.serverFrames() {
		if (strings.Contains(f, `"*"`) || strings.Contains(f, `""`)) && f != probeOnIntro {
			t.Errorf("the server sent %s: never subscribe to everything but in the probe, replaced at once", f)
		}
		if f == probeOnIntro && (i+1 >= len(app.serverFrames()) || app.serverFrames()[i+1] != probeRestore) {
			t.Errorf("the probe on introduction was not followed at once by the bridge's list")
		}
		if strings.Contains(f, "state.backup.request") {
			t.Errorf("the server sent %s on introduction", f)
		}
	}
	first := e.toolJSON("debug_get_snapshot", map[string]any{"stream": "stores"})
	if diff := cmp.Diff(map[string]any{"cart": map[string]any{"items": []any{}, "total": 0.0}, "auth": map[string]any{"user": nil, "token": nil}}, first["state"]); diff != "" {
		t.Errorf("stores from the backup (-want +got):\n%s", diff)
	}
	for _, f := range changes {
		app.send(f)
	}
	// The backup, then one snapshot per change that changed a store: the
	// subscription's first report (functions and all) equals the backup,
	// and a store reported again unchanged is no change.
	e.waitEventsOf("stores", "stores_snapshot", 5)
	events := e.waitEventsOf("stores", "", 5)
	var changed []any
	for _, ev := range events {
		changed = append(changed, ev.(map[string]any)["payload"].(map[string]any)["changed"])
	}
	if diff := cmp.Diff([]any{[]any{"auth", "cart"}, []any{"cart"}, []any{"auth"}, []any{"cart"}, []any{"cart"}}, changed); diff != "" {
		t.Errorf("stores_snapshot changed lists (-want +got):\n%s", diff)
	}
	last := e.toolJSON("debug_get_snapshot", map[string]any{"stream": "stores"})
	if diff := cmp.Diff(map[string]any{"cart": map[string]any{"items": []any{map[string]any{"sku": "B-2", "price": 3.0}}, "total": 3.0},
		"auth": map[string]any{"user": map[string]any{"name": "ada"}, "token": "[REDACTED]"}}, last["state"]); diff != "" {
		t.Errorf("stores after the changes (-want +got):\n%s", diff)
	}
	if v := e.toolJSON("debug_get_snapshot", map[string]any{"stream": "stores", "scope": "cart.total"})["state"]; v != 3.0 {
		t.Errorf("cart.total = %v, want 3", v)
	}
	// A scope the stores lack is answered at once from what is held, naming what is there.
	miss := e.toolError("debug_get_snapshot", map[string]any{"stream": "stores", "scope": "cart.nothere"})
	if miss["code"] != codeScopeNotFound || !cmp.Equal(miss["details"].(map[string]any)["available"], []any{"items", "total"}) {
		t.Errorf("a missing scope in the stores = %v, want SCOPE_NOT_FOUND listing items and total", miss)
	}
	failed := e.toolError("debug_get_state_path", map[string]any{"path": "cart.items"})
	if failed["code"] != codeStreamUnavailable || !strings.Contains(failed["suggestion"].(string), "stores") {
		t.Errorf("redux read on a Zustand app = %v, want STREAM_UNAVAILABLE pointing at stores", failed)
	}
	for _, f := range app.serverFrames() {
		if strings.Contains(f, "state.values.request") || strings.Contains(f, "state.keys.request") {
			t.Errorf("the server asked %s, which the plugin never answers", f)
		}
	}
	bad := e.toolError("debug_dispatch_action", map[string]any{"action": map[string]any{"name": "clear"}})
	if bad["code"] != codeInvalidParams {
		t.Errorf("a typeless action on a Zustand app = %v, want INVALID_PARAMS", bad)
	}
}

// A MobX-State-Tree app through reactotron-mst: events keep the action's
// name and model; a dispatch without `type` completes, matched by name
// and path.
func TestReactotronMST(t *testing.T) {
	t.Parallel()
	e, url := startBridgeE2E(t)
	frames := readReactotronCaptured(t, "testdata/reactotron/mst.jsonl")
	answers := recordedAnswers(t, frames)
	for i, f := range frames {
		if f.Dir == "server" && strings.Contains(string(f.Frame), `"name":"rename"`) {
			answers["state.action.dispatch"] = []json.RawMessage{frames[i+1].Frame}
		}
	}
	app := dialReactotron(t, url, answers)
	sent := 0
	for _, f := range frames {
		if f.Dir == "server" && strings.Contains(string(f.Frame), "state.backup.request") {
			break
		}
		if f.Dir == "app" {
			app.send(f.Frame)
			sent++
		}
	}
	events := e.waitEvents("redux", 3)
	p := events[1].(map[string]any)["payload"].(map[string]any)
	if p["name"] != "todos.0.toggle()" || p["mst"].(map[string]any)["modelType"] != "RootStore" {
		t.Errorf("MST event payload = %v, want name todos.0.toggle() and modelType RootStore", p)
	}
	if v := e.toolJSON("debug_get_state_path", map[string]any{"path": "todos.1"})["value"]; !cmp.Equal(v, map[string]any{"title": "eggs", "done": false}) {
		t.Errorf("todos.1 = %v, want the eggs todo", v)
	}
	res := e.toolJSON("debug_dispatch_action", map[string]any{"action": map[string]any{"name": "rename", "path": "/todos/1", "args": []any{"free-range eggs"}}})
	ev := res["event"].(map[string]any)["payload"].(map[string]any)
	if ev["name"] != "todos.1.rename()" {
		t.Errorf("dispatched event = %v, want todos.1.rename()", ev)
	}
}
