package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/google/go-cmp/cmp"
)

// todayTools is the tool set of the release that introduced prompts,
// frozen, so that the golden texts below do not move when tools are added.
var todayTools = toolCatalog{
	"debug_health_check":   {},
	"debug_list_streams":   {},
	"debug_get_snapshot":   {"stream", "scope"},
	"debug_query_events":   {"stream", "limit", "since_seq", "event_type"},
	"debug_get_state_path": {"path"},
	"debug_diff_snapshots": {"stream", "base_seq", "target_seq"},
}

// toolSchema is what tools/list says of one tool's input: each argument's
// JSON type, and which arguments are required.
type toolSchema struct {
	types    map[string]string
	required []string
}

// toolSchemas decodes a tools/list result: the oracle of the drift test,
// independent of how the server builds its catalog.
func toolSchemas(t *testing.T, toolsList []byte) map[string]toolSchema {
	t.Helper()
	var list struct {
		Tools []struct {
			Name        string `json:"name"`
			InputSchema struct {
				Properties map[string]struct {
					Type string `json:"type"`
				} `json:"properties"`
				Required []string `json:"required"`
			} `json:"inputSchema"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(toolsList, &list); err != nil || len(list.Tools) == 0 {
		t.Fatalf("tools/list: %v: %s", err, toolsList)
	}
	out := map[string]toolSchema{}
	for _, tool := range list.Tools {
		s := toolSchema{types: map[string]string{}, required: tool.InputSchema.Required}
		for name, p := range tool.InputSchema.Properties {
			s.types[name] = p.Type
		}
		out[tool.Name] = s
	}
	return out
}

// futureSchemas is schemas as they will be once the log and network tools
// and sessions land: debug_get_logs, debug_get_network, and a session
// argument on every tool that asks the app.
func futureSchemas(today map[string]toolSchema) map[string]toolSchema {
	out := map[string]toolSchema{}
	for name, s := range today {
		types := map[string]string{}
		for k, v := range s.types {
			types[k] = v
		}
		if name != "debug_health_check" {
			types["session"] = "string"
		}
		out[name] = toolSchema{types: types, required: s.required}
	}
	out["debug_get_logs"] = toolSchema{types: map[string]string{"level": "string", "contains": "string",
		"since_seq": "integer", "limit": "integer", "session": "string"}}
	out["debug_get_network"] = toolSchema{types: map[string]string{"status": "string", "method": "string",
		"url_contains": "string", "since_seq": "integer", "limit": "integer", "seq": "integer", "session": "string"}}
	return out
}

// futureCatalog is todayTools with the log and network tools and a session
// argument on every tool that asks the app.
func futureCatalog() toolCatalog {
	schemas := map[string]toolSchema{}
	for name, args := range todayTools {
		s := toolSchema{types: map[string]string{}}
		for _, a := range args {
			s.types[a] = "string"
		}
		schemas[name] = s
	}
	return catalogOfSchemas(futureSchemas(schemas))
}

func catalogOfSchemas(schemas map[string]toolSchema) toolCatalog {
	c := toolCatalog{}
	for name, s := range schemas {
		c[name] = []string{}
		for arg := range s.types {
			c[name] = append(c[name], arg)
		}
	}
	return c
}

// promptCall is one debug_tool(arg=value, …) found in a prompt text, with
// each value as written.
type promptCall struct {
	tool string
	args map[string]string
}

var (
	toolWord   = regexp.MustCompile(`debug_[A-Za-z0-9_]*`)
	looseAssig = regexp.MustCompile(`\b[a-z_]+=`)
)

// promptMentions finds every tool named in text and parses every call,
// following the convention of prompts.go. It fails on a call it cannot
// read and on an argument assignment outside a call, so that nothing
// escapes the check by being written differently.
func promptMentions(text string) (tools []string, calls []promptCall, err error) {
	outside := []byte(text)
	for _, loc := range toolWord.FindAllStringIndex(text, -1) {
		if loc[0] > 0 && isIdentByte(text[loc[0]-1]) {
			continue // part of a longer word, e.g. xdebug_…
		}
		name := text[loc[0]:loc[1]]
		tools = append(tools, name)
		if loc[1] >= len(text) || text[loc[1]] != '(' {
			continue
		}
		call, end, err := parseCall(text, loc[1]+1)
		if err != nil {
			return nil, nil, fmt.Errorf("call of %s at byte %d: %w", name, loc[0], err)
		}
		call.tool = name
		calls = append(calls, call)
		for i := loc[0]; i < end; i++ {
			outside[i] = ' '
		}
	}
	if m := looseAssig.Find(outside); m != nil {
		return nil, nil, fmt.Errorf("argument %q mentioned outside a call", m)
	}
	return tools, calls, nil
}

func isIdentByte(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// parseCall reads name=value pairs from text[i:] up to the closing
// parenthesis and returns the offset after it.
func parseCall(text string, i int) (promptCall, int, error) {
	call := promptCall{args: map[string]string{}}
	skip := func() {
		for i < len(text) && text[i] == ' ' {
			i++
		}
	}
	skip()
	if i < len(text) && text[i] == ')' {
		return call, i + 1, nil
	}
	for {
		skip()
		start := i
		for i < len(text) && isIdentByte(text[i]) {
			i++
		}
		name := text[start:i]
		if name == "" || i >= len(text) || text[i] != '=' {
			return call, 0, fmt.Errorf("want name=value at byte %d", start)
		}
		i++
		start = i
		if i < len(text) && text[i] == '"' {
			for i++; i < len(text) && text[i] != '"'; i++ {
				if text[i] == '\\' {
					i++
				}
			}
			i++
		} else {
			for i < len(text) && text[i] != ',' && text[i] != ')' {
				i++
			}
		}
		if i > len(text) {
			return call, 0, errors.New("unterminated string")
		}
		if _, dup := call.args[name]; dup {
			return call, 0, fmt.Errorf("argument %s given twice", name)
		}
		call.args[name] = strings.TrimSpace(text[start:i])
		skip()
		if i >= len(text) {
			return call, 0, errors.New("no closing parenthesis")
		}
		switch text[i] {
		case ')':
			return call, i + 1, nil
		case ',':
			i++
		default:
			return call, 0, fmt.Errorf("want , or ) at byte %d", i)
		}
	}
}

var placeholder = regexp.MustCompile(`^<[^<>]+>$`)

// checkPromptText checks every tool and call in text against schemas: the
// tool exists, each argument is one it takes with a value of its type, and
// every required argument is given.
func checkPromptText(text string, schemas map[string]toolSchema) []string {
	tools, calls, err := promptMentions(text)
	if err != nil {
		return []string{err.Error()}
	}
	var problems []string
	for _, name := range tools {
		if _, ok := schemas[name]; !ok {
			problems = append(problems, "names tool "+name+", which tools/list does not offer")
		}
	}
	for _, c := range calls {
		s, ok := schemas[c.tool]
		if !ok {
			continue
		}
		for arg, value := range c.args {
			typ, ok := s.types[arg]
			switch {
			case !ok:
				problems = append(problems, fmt.Sprintf("%s has no argument %s", c.tool, arg))
			case typ == "string":
				var str string
				if !strings.HasPrefix(value, `"`) || json.Unmarshal([]byte(value), &str) != nil {
					problems = append(problems, fmt.Sprintf("%s(%s=%s): want a JSON string", c.tool, arg, value))
				}
			case typ == "integer":
				var n int64
				if !placeholder.MatchString(value) && json.Unmarshal([]byte(value), &n) != nil {
					problems = append(problems, fmt.Sprintf("%s(%s=%s): want an integer or a <placeholder>", c.tool, arg, value))
				}
			}
		}
		for _, req := range s.required {
			if _, ok := c.args[req]; !ok {
				problems = append(problems, fmt.Sprintf("%s called without its required %s", c.tool, req))
			}
		}
	}
	return problems
}

// promptArgSets lists argument sets covering every prompt with each
// optional argument present and absent, and values that need quoting.
func promptArgSets(p *prompt) []map[string]string {
	samples := map[string][]string{
		"symptom":  {`checkout "spinner" never stops`},
		"path":     {"cart.total", `settings["theme.dark"]`},
		"a":        {"ShopApp"},
		"b":        {"e911a758-3fe3-4890-b4d3-2428da6c0681"},
		"instance": {"auth", "with.dot"},
	}
	sets := []map[string]string{{}}
	for _, a := range p.args {
		var next []map[string]string
		for _, set := range sets {
			if !a.required {
				next = append(next, set)
			}
			for _, v := range samples[a.name] {
				with := map[string]string{a.name: v}
				for k, old := range set {
					with[k] = old
				}
				next = append(next, with)
			}
		}
		sets = next
	}
	return sets
}

// TestPromptTextsMatchTools is the drift test: every tool and argument that
// any prompt text mentions, with any arguments, is checked against the
// server's own tools/list, and against tools/list as it will be once the
// log, network and session tools land.
func TestPromptTextsMatchTools(t *testing.T) {
	ts := startServer(t, testConfig(t))
	ts.initialize()
	reply := ts.call(1, "tools/list", nil)
	raw, _ := json.Marshal(reply["result"])
	live := toolSchemas(t, raw)
	future := futureSchemas(live)

	for _, era := range []struct {
		name    string
		schemas map[string]toolSchema
		catalog toolCatalog
	}{
		{"live", live, catalogOf(newTestToolSet(testConfig(t), nil))},
		{"future", future, catalogOfSchemas(future)},
	} {
		for _, p := range allPrompts {
			for _, args := range promptArgSets(p) {
				text := p.text(args, era.catalog)
				for _, problem := range checkPromptText(text, era.schemas) {
					t.Errorf("%s tools, prompt %s %v: %s", era.name, p.name, args, problem)
				}
				if tools, _, _ := promptMentions(text); len(tools) == 0 {
					t.Errorf("%s tools, prompt %s names no tool", era.name, p.name)
				}
			}
		}
	}
}

// TestPromptTextsAdaptToTools pins which branch each catalog takes: the
// log and network tools are used once they exist, the console and network
// streams before; compare-sessions compares only once tools take a session.
func TestPromptTextsAdaptToTools(t *testing.T) {
	future := futureCatalog()
	for _, tc := range []struct {
		prompt      string
		catalog     toolCatalog
		want, never []string
	}{
		{"investigate-error", todayTools, []string{`debug_query_events(stream="console"`, `debug_query_events(stream="network"`}, []string{"debug_get_logs", "debug_get_network", "session"}},
		{"investigate-error", future, []string{`debug_get_logs(level="error"`, `debug_get_network(status="5xx"`, `session="<id>"`}, []string{`stream="console"`}},
		{"compare-sessions", todayTools, []string{"only one connected app at a time"}, []string{"session="}},
		{"compare-sessions", future, []string{`a = "ShopApp"`, `debug_get_state_path(path="", session="<id of a>")`}, []string{"only one connected app"}},
	} {
		text := promptByName(tc.prompt).text(map[string]string{"a": "ShopApp", "b": "Other"}, tc.catalog)
		for _, w := range tc.want {
			if !strings.Contains(text, w) {
				t.Errorf("%s with %d tools: text lacks %q:\n%s", tc.prompt, len(tc.catalog), w, text)
			}
		}
		for _, n := range tc.never {
			if strings.Contains(text, n) {
				t.Errorf("%s with %d tools: text has %q:\n%s", tc.prompt, len(tc.catalog), n, text)
			}
		}
	}
}

// TestPromptMentionsRefusesSloppyTexts shows the checker catches what it
// is for: an unknown tool, an argument a tool does not take, a missing
// required argument, a value of the wrong type, an argument outside a call.
func TestPromptMentionsRefusesSloppyTexts(t *testing.T) {
	schemas := map[string]toolSchema{
		"debug_get_state_path": {types: map[string]string{"path": "string"}, required: []string{"path"}},
		"debug_query_events":   {types: map[string]string{"stream": "string", "limit": "integer"}, required: []string{"stream"}},
	}
	for _, tc := range []struct {
		text string
		want string // "" means no problem
	}{
		{`call debug_get_state_path(path="a.b") then debug_query_events(stream="redux", limit=<n>)`, ""},
		{`call debug_get_logs()`, "debug_get_logs, which tools/list does not offer"},
		{`debug_query_events(stream="redux", level="error")`, "has no argument level"},
		{`debug_query_events(limit=5)`, "without its required stream"},
		{`debug_query_events(stream=redux)`, "want a JSON string"},
		{`debug_query_events(stream="redux", limit="5")`, "want an integer"},
		{`debug_query_events(stream="redux" limit=5)`, "want , or )"},
		{`debug_query_events(stream="redux"`, "no closing parenthesis"},
		{`pass since_seq=5 to debug_query_events`, `argument "since_seq=" mentioned outside a call`},
	} {
		problems := strings.Join(checkPromptText(tc.text, schemas), "; ")
		if tc.want == "" && problems != "" || !strings.Contains(problems, tc.want) {
			t.Errorf("checkPromptText(%q) = %q, want a problem containing %q", tc.text, problems, tc.want)
		}
	}
}

// TestPromptsGolden pins prompts/list and every prompt's text with today's
// tools and with the tools to come.
func TestPromptsGolden(t *testing.T) {
	list, err := promptsPage(allPrompts, nil, promptPageSize)
	if err != nil {
		t.Fatal(err)
	}
	checkPromptGolden(t, "list", list)
	future := futureCatalog()
	args := map[string]map[string]string{
		"investigate-error":   {"symptom": "checkout spinner never stops"},
		"why-did-this-change": {"path": "cart.total"},
		"compare-sessions":    {"a": "ShopApp", "b": "e911a758-3fe3-4890-b4d3-2428da6c0681"},
		"storage-audit":       {"instance": "auth"},
	}
	// The texts are also kept as plain text, where a change reads as a diff
	// of the prose.
	same := func(s string) string { return s }
	for _, p := range allPrompts {
		checkPromptGolden(t, "get-"+p.name, renderPrompt(p, args[p.name], todayTools))
		checkPromptGolden(t, "get-"+p.name+"-future", renderPrompt(p, args[p.name], future))
		checkGoldenFile(t, p.name+".txt", []byte(p.text(args[p.name], todayTools)+"\n"), same)
		checkGoldenFile(t, p.name+"-future.txt", []byte(p.text(args[p.name], future)+"\n"), same)
	}
}

// stepCalls drops the example call of the note on sessions, which names no
// step of the investigation.
func stepCalls(calls []promptCall) []promptCall {
	return slices.DeleteFunc(calls, func(c promptCall) bool { return c.args["session"] == `"<id>"` })
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
		args := map[string]any{}
		for name, value := range c.args {
			var v any
			if placeholder.MatchString(value) {
				n, ok := fill[value]
				if !ok {
					t.Fatalf("%s(%s=%s): nothing known yet to fill in", c.tool, name, value)
				}
				v = n
			} else if err := json.Unmarshal([]byte(value), &v); err != nil {
				t.Fatalf("%s(%s=%s): %v", c.tool, name, value, err)
			}
			args[name] = v
		}
		res, isError := e.callTool(c.tool, args)
		if isError {
			t.Fatalf("%s%v: %s", c.tool, args, res)
		}
		return res
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
				args := map[string]any{}
				for name, value := range c.args {
					if v, ok := fill[value]; ok {
						value = v
					}
					var v any
					if err := json.Unmarshal([]byte(value), &v); err != nil {
						t.Fatalf("%s(%s=%s): %v", c.tool, name, value, err)
					}
					args[name] = v
				}
				res, isError := e.callTool(c.tool, args)
				if isError {
					t.Fatalf("%s%v: %s", c.tool, args, res)
				}
				return res
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
				args := map[string]any{}
				for name, value := range c.args {
					if placeholder.MatchString(value) {
						args[name] = snaps.Events[0].Seq
						continue
					}
					if name == "session" && placeholder.MatchString(strings.Trim(value, `"`)) {
						args[name] = h.Adapter.SessionID // the session an agent finds with debug_health_check
						continue
					}
					var v any
					if err := json.Unmarshal([]byte(value), &v); err != nil {
						t.Fatalf("%s(%s=%s): %v", c.tool, name, value, err)
					}
					args[name] = v
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
	ctx, cancel := context.WithCancel(context.Background())
	c, _, err := websocket.Dial(ctx, wsURL, nil)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	hs := `{"type":"handshake","protocolVersion":1,"sessionId":"phone-session","adapterVersion":"0.0.1","deviceId":"phone-1",` +
		`"app":{"name":"PhoneApp"},"streams":[{"name":"redux","active":true},{"name":"navigation","active":true}]}`
	if err := c.Write(ctx, websocket.MessageText, []byte(hs)); err != nil {
		cancel()
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			_, data, err := c.Read(ctx)
			if err != nil {
				return
			}
			var msg struct {
				Type, ID, Method string
				Params           struct{ Stream string }
			}
			if json.Unmarshal(data, &msg) != nil || msg.Type != "request" {
				continue
			}
			result := `{"streams":[{"name":"redux","active":true,"eventCount":1,"latestSeq":1,"oldestSeq":1,"hasSnapshot":true,"lastEventAt":null},` +
				`{"name":"navigation","active":true,"eventCount":1,"latestSeq":1,"oldestSeq":1,"hasSnapshot":true,"lastEventAt":null}]}`
			if msg.Method == "snapshot.get" {
				result = `{"seq":1,"timestamp":"2026-11-21T10:00:00.000Z","state":` + states[msg.Params.Stream] + `}`
			}
			reply := fmt.Sprintf(`{"type":"response","id":%q,"result":%s}`, msg.ID, result)
			_ = c.Write(ctx, websocket.MessageText, []byte(reply))
		}
	}()
	t.Cleanup(func() {
		c.Close(websocket.StatusNormalClosure, "")
		cancel()
		<-done
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
		args := map[string]any{}
		for name, value := range c.args {
			if v, ok := fill[value]; ok {
				value = v
			}
			var v any
			if err := json.Unmarshal([]byte(value), &v); err != nil {
				t.Fatalf("%s(%s=%s): %v", c.tool, name, value, err)
			}
			args[name] = v
		}
		res, isError := e.callTool(c.tool, args)
		if isError {
			t.Fatalf("%s%v: %s", c.tool, args, res)
		}
		return res
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
