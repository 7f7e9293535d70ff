package main

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// The prompts run on the simulated app: every call a prompt names runs
// and answers, and the steps lead where the prompt says.

// stepCalls drops the example call of the note on sessions, which names no
// step of the investigation.
func stepCalls(calls []promptCall) []promptCall {
	return slices.DeleteFunc(calls, func(c promptCall) bool { return c.args["session"] == `"<id>"` })
}

// promptCallArgs decodes the arguments a prompt's text gives call c;
// fill supplies an argument's value instead, for the placeholders it
// knows (the text "<seq before the change>", say).
func promptCallArgs(t *testing.T, c promptCall, fill func(name, value string) (any, bool)) map[string]any {
	t.Helper()
	args := map[string]any{}
	for name, value := range c.args {
		if v, ok := fill(name, value); ok {
			args[name] = v
			continue
		}
		var v any
		if err := json.Unmarshal([]byte(value), &v); err != nil {
			t.Fatalf("%s(%s=%s): %v", c.tool, name, value, err)
		}
		args[name] = v
	}
	return args
}

// fillText fills the placeholders that are keys of m with the JSON text
// they map to.
func fillText(t *testing.T, m map[string]string) func(name, value string) (any, bool) {
	return func(name, value string) (any, bool) {
		text, ok := m[value]
		if !ok {
			return nil, false
		}
		var v any
		if err := json.Unmarshal([]byte(text), &v); err != nil {
			t.Fatalf("%s=%s filled with %s: %v", name, value, text, err)
		}
		return v, true
	}
}

// runPromptCall makes call c as the prompt's text gives it, filled in by
// fill, and fails the test when the tool answers with an error.
func runPromptCall(t *testing.T, e *e2e, c promptCall, fill func(name, value string) (any, bool)) json.RawMessage {
	t.Helper()
	args := promptCallArgs(t, c, fill)
	res, isError := e.callTool(c.tool, args)
	if isError {
		t.Fatalf("%s%v: %s", c.tool, args, res)
	}
	return res
}

// TestWhyDidThisChangeOnDemo follows the why-did-this-change prompt call
// by call, as an agent would, against the simulated app: each call is taken
// from the prompt's own text with its placeholders filled in from earlier
// answers. The prompt must lead to the two snapshots between which the path
// changed and to the action that changed it.
func TestWhyDidThisChangeOnDemo(t *testing.T) {
	const path = "cart.total"
	e := startE2E(t, testConfig(t), 40)
	text := promptByName("why-did-this-change").text(map[string]string{"path": path}, catalogOf(newTestToolSet(testConfig(t), nil)))
	_, calls, err := promptMentions(text)
	if err != nil {
		t.Fatal(err)
	}
	calls = stepCalls(calls)
	fill := map[string]int64{}
	run := func(c promptCall) json.RawMessage {
		t.Helper()
		return runPromptCall(t, e, c, func(name, value string) (any, bool) {
			if !placeholder.MatchString(value) {
				return nil, false
			}
			n, ok := fill[value]
			if !ok {
				t.Fatalf("%s(%s=%s): nothing known yet to fill in", c.tool, name, value)
			}
			return n, true
		})
	}
	type event struct {
		Seq     int64           `json:"seq"`
		Payload json.RawMessage `json:"payload"`
	}
	type events struct {
		Events []event `json:"events"`
	}
	changesPath := func(diff json.RawMessage) bool {
		var d struct {
			Changes []struct {
				Path string `json:"path"`
			} `json:"changes"`
		}
		if err := json.Unmarshal(diff, &d); err != nil {
			t.Fatal(err)
		}
		return slices.ContainsFunc(d.Changes, func(c struct {
			Path string `json:"path"`
		}) bool {
			return c.Path == path || strings.HasPrefix(c.Path, path+".") || strings.HasPrefix(path, c.Path+".")
		})
	}
	tools := make([]string, len(calls))
	for i, c := range calls {
		tools[i] = c.tool
	}
	want := []string{"debug_get_state_path", "debug_query_events", "debug_diff_snapshots", "debug_diff_snapshots", "debug_query_events"}
	if diff := cmp.Diff(want, tools); diff != "" {
		t.Fatalf("the prompt's calls changed; update this test (-want +got):\n%s", diff)
	}

	run(calls[0]) // the current value
	var snaps events
	if err := json.Unmarshal(run(calls[1]), &snaps); err != nil || len(snaps.Events) < 2 {
		t.Fatalf("want two snapshots or more: %v %v", err, snaps)
	}
	seqs := make([]int64, len(snaps.Events))
	for i, ev := range snaps.Events {
		seqs[i] = ev.Seq
	}
	fill["<oldest snapshot seq>"], fill["<newest snapshot seq>"] = seqs[0], seqs[len(seqs)-1]
	if !changesPath(run(calls[2])) {
		t.Fatalf("%s did not change across snapshots %v; pick a path that does", path, seqs)
	}
	// Halve the range, keeping the latest change, as the prompt says.
	lo, hi := 0, len(seqs)-1
	for hi-lo > 1 {
		mid := (lo + hi) / 2
		c := calls[3] // both its placeholders read <seq>, so they are filled here by name
		c.args = map[string]string{"stream": c.args["stream"], "base_seq": strconv.FormatInt(seqs[mid], 10), "target_seq": strconv.FormatInt(seqs[hi], 10)}
		if changesPath(run(c)) {
			lo = mid
		} else {
			hi = mid
		}
	}
	fill["<base seq>"] = seqs[lo]
	var actions events
	if err := json.Unmarshal(run(calls[4]), &actions); err != nil {
		t.Fatal(err)
	}
	var types []string
	for _, ev := range actions.Events {
		if ev.Seq < seqs[hi] {
			var p struct {
				Action struct {
					Type string `json:"type"`
				} `json:"action"`
			}
			_ = json.Unmarshal(ev.Payload, &p)
			types = append(types, p.Action.Type)
		}
	}
	if !slices.ContainsFunc(types, func(typ string) bool { return strings.HasPrefix(typ, "cart/") }) {
		t.Errorf("between snapshots %d and %d, where %s changed, the actions %q hold no cart action", seqs[lo], seqs[hi], path, types)
	}
}

// TestExplainCurrentScreenOnDemo follows explain-current-screen against the
// simulated app after different histories: walking routes[index] through
// nested navigators, as the text says, must find the screen that the last
// route change went to and that the app's own UI state names.
func TestExplainCurrentScreenOnDemo(t *testing.T) {
	text := promptByName("explain-current-screen").text(nil, catalogOf(newTestToolSet(testConfig(t), nil)))
	_, calls, err := promptMentions(text)
	if err != nil {
		t.Fatal(err)
	}
	calls = stepCalls(calls)
	tools := make([]string, len(calls))
	for i, c := range calls {
		tools[i] = c.tool
	}
	want := []string{"debug_get_snapshot", "debug_get_snapshot", "debug_query_events", "debug_get_state_path", "debug_get_state_path"}
	if diff := cmp.Diff(want, tools); diff != "" {
		t.Fatalf("the prompt's calls changed; update this test (-want +got):\n%s", diff)
	}
	for _, steps := range []int{0, 7, 23, 41} {
		t.Run(fmt.Sprint(steps), func(t *testing.T) {
			e := startE2E(t, testConfig(t), steps)
			call := func(c promptCall, fill map[string]string) json.RawMessage {
				t.Helper()
				return runPromptCall(t, e, c, fillText(t, fill))
			}
			type navigator struct {
				Index  int `json:"index"`
				Routes []struct {
					Name  string          `json:"name"`
					State json.RawMessage `json:"state"`
				} `json:"routes"`
			}
			var snap struct {
				State json.RawMessage `json:"state"`
			}
			if err := json.Unmarshal(call(calls[0], nil), &snap); err != nil {
				t.Fatal(err)
			}
			var chain []string
			for raw := snap.State; raw != nil; {
				var n navigator
				if err := json.Unmarshal(raw, &n); err != nil || n.Index >= len(n.Routes) {
					t.Fatalf("navigator %s: %v", raw, err)
				}
				chain = append(chain, n.Routes[n.Index].Name)
				raw = n.Routes[n.Index].State
			}
			screen := chain[len(chain)-1]

			var changes struct {
				Events []struct {
					Payload struct {
						To struct {
							Name string `json:"name"`
						} `json:"to"`
					} `json:"payload"`
				} `json:"events"`
			}
			if err := json.Unmarshal(call(calls[2], nil), &changes); err != nil || len(changes.Events) == 0 {
				t.Fatalf("route changes: %v %v", err, changes)
			}
			if last := changes.Events[len(changes.Events)-1].Payload.To.Name; last != screen {
				t.Errorf("walking %v finds %s, but the last route change went to %s", chain, screen, last)
			}
			var ui struct {
				Value string `json:"value"`
			}
			if err := json.Unmarshal(call(calls[4], map[string]string{`"<slice or entry>"`: `"ui.currentScreen"`}), &ui); err != nil {
				t.Fatal(err)
			}
			if ui.Value != screen {
				t.Errorf("walking %v finds %s, but ui.currentScreen is %s", chain, screen, ui.Value)
			}
		})
	}
}

// TestPromptCallsRunOnDemo runs every call of every prompt text against
// the simulated app, integer placeholders filled with a real snapshot seq:
// none may be refused as INVALID_PARAMS. Other errors (a stream the demo
// lacks, a placeholder path that does not exist) are the app's answer, not
// a fault of the text.
func TestPromptCallsRunOnDemo(t *testing.T) {
	t.Parallel()
	e := startE2E(t, testConfig(t), 12)
	res, _ := e.callTool("debug_query_events", map[string]any{"stream": "redux", "event_type": "state_snapshot", "limit": 1})
	var snaps struct {
		Events []struct {
			Seq int64 `json:"seq"`
		} `json:"events"`
	}
	if err := json.Unmarshal(res, &snaps); err != nil || len(snaps.Events) == 0 {
		t.Fatalf("no snapshot: %s", res)
	}
	health, _ := e.callTool("debug_health_check", nil)
	var h struct {
		Adapter struct {
			SessionID string `json:"sessionId"`
		} `json:"adapter"`
	}
	if err := json.Unmarshal(health, &h); err != nil || h.Adapter.SessionID == "" {
		t.Fatalf("health: %s", health)
	}
	catalog := catalogOf(newTestToolSet(testConfig(t), nil))
	ran := 0
	for _, p := range allPrompts {
		for _, set := range promptArgSets(p) {
			_, calls, err := promptMentions(p.text(set, catalog))
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range calls {
				args := promptCallArgs(t, c, func(name, value string) (any, bool) {
					switch {
					case placeholder.MatchString(value):
						return snaps.Events[0].Seq, true
					case name == "session" && placeholder.MatchString(strings.Trim(value, `"`)):
						return h.Adapter.SessionID, true // the session an agent finds with debug_health_check
					}
					return nil, false
				})
				if c.tool == "debug_wait_for" {
					args["timeout_ms"] = 1 // a short timeout of its own: nothing may happen on the unstepped demo
				}
				res, isError := e.callTool(c.tool, args)
				ran++
				if isError {
					if code, details, _ := decodeToolError(t, res); code == codeInvalidParams {
						t.Errorf("prompt %s %v: %s%v refused: %v", p.name, set, c.tool, args, details)
					}
				}
			}
		}
	}
	t.Logf("%d calls ran", ran)
}

// phoneAdapter connects a second app next to the demo: a minimal adapter
// with its own deviceId, so that both sessions are live at once. It answers
// snapshot.get from fixed states and streams.list with its two streams.
func phoneAdapter(t *testing.T, wsURL string, states map[string]string) {
	t.Helper()
	hs := `{"type":"handshake","protocolVersion":1,"sessionId":"phone-session","adapterVersion":"0.0.1","deviceId":"phone-1",` +
		`"app":{"name":"PhoneApp"},"streams":[{"name":"redux","active":true},{"name":"navigation","active":true}]}`
	answeringAdapter(t, wsURL, hs, func(id, method string, params json.RawMessage) []byte {
		result := `{"streams":[{"name":"redux","active":true,"eventCount":1,"latestSeq":1,"oldestSeq":1,"hasSnapshot":true,"lastEventAt":null},` +
			`{"name":"navigation","active":true,"eventCount":1,"latestSeq":1,"oldestSeq":1,"hasSnapshot":true,"lastEventAt":null}]}`
		if method == "snapshot.get" {
			var p struct{ Stream string }
			_ = json.Unmarshal(params, &p)
			result = `{"seq":1,"timestamp":"2026-11-21T10:00:00.000Z","state":` + states[p.Stream] + `}`
		}
		return fmt.Appendf(nil, `{"type":"response","id":%q,"result":%s}`, id, result)
	})
}

// TestCompareSessionsOnDemo follows compare-sessions with two apps live at
// once, the demo and a second adapter: every call of the text must answer,
// and the slices the apps hold differently must show as different.
func TestCompareSessionsOnDemo(t *testing.T) {
	e := startE2E(t, testConfig(t), 10)
	health, _ := e.callTool("debug_health_check", nil)
	var h struct {
		Adapter struct {
			SessionID string `json:"sessionId"`
		} `json:"adapter"`
		Server struct {
			WSURL string `json:"wsUrl"`
		} `json:"server"`
	}
	if err := json.Unmarshal(health, &h); err != nil {
		t.Fatal(err)
	}
	phoneAdapter(t, h.Server.WSURL, map[string]string{
		"redux":      `{"auth":{"user":null,"token":null,"status":"anonymous"},"ui":{"theme":"dark"}}`,
		"navigation": `{"index":0,"routes":[{"key":"h","name":"Home"}]}`,
	})
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(5 * time.Millisecond) { // polling with a deadline
		res, _ := e.callTool("debug_health_check", nil)
		if strings.Contains(string(res), "phone-session") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the second app never connected: %s", res)
		}
	}
	if got := e.complete("compare-sessions", "b", "P", map[string]string{"a": "ShopApp"}); !slices.Contains(got, "PhoneApp") {
		t.Errorf("b completes to %q, want PhoneApp among them", got)
	}

	text := promptByName("compare-sessions").text(map[string]string{"a": "ShopApp", "b": "PhoneApp"}, catalogOf(newTestToolSet(testConfig(t), nil)))
	_, calls, err := promptMentions(text)
	if err != nil {
		t.Fatal(err)
	}
	if len(calls) != 7 {
		t.Fatalf("compare-sessions makes %d calls, want 7 once tools take a session:\n%s", len(calls), text)
	}
	ids := map[string]string{`"<id of a>"`: jsonQuote(h.Adapter.SessionID), `"<id of b>"`: `"phone-session"`}
	run := func(c promptCall, fill map[string]string) json.RawMessage {
		t.Helper()
		return runPromptCall(t, e, c, fillText(t, fill))
	}
	top := func(c promptCall) map[string]json.RawMessage {
		var v struct {
			Value map[string]json.RawMessage `json:"value"`
		}
		if err := json.Unmarshal(run(c, ids), &v); err != nil {
			t.Fatal(err)
		}
		return v.Value
	}
	run(calls[0], nil)
	stateA, stateB := top(calls[1]), top(calls[2])
	var onlyA, differ []string
	for key := range stateA {
		if _, ok := stateB[key]; !ok {
			onlyA = append(onlyA, key)
			continue
		}
		fill := map[string]string{`"<key>"`: jsonQuote(key)}
		for k, v := range ids {
			fill[k] = v
		}
		var a, b struct {
			Value json.RawMessage `json:"value"`
		}
		_ = json.Unmarshal(run(calls[3], fill), &a)
		_ = json.Unmarshal(run(calls[4], fill), &b)
		if normaliseJSON(t, string(a.Value)) != normaliseJSON(t, string(b.Value)) {
			differ = append(differ, key)
		}
	}
	slices.Sort(onlyA)
	slices.Sort(differ)
	if diff := cmp.Diff([]string{"cart", "catalog"}, onlyA); diff != "" {
		t.Errorf("slices only a holds (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"auth", "ui"}, differ); diff != "" {
		t.Errorf("slices that differ (-want +got):\n%s", diff)
	}
	run(calls[5], ids)
	run(calls[6], ids)
}
