package main

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

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
		{"live", live, catalogOf(newToolSet(testConfig(t), nil))},
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
		{"compare-sessions", future, []string{`debug_get_state_path(path="", session="ShopApp")`}, []string{"only one connected app"}},
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

// checkPromptGolden compares got with testdata/prompts/name.json.
func checkPromptGolden(t *testing.T, name string, got any) {
	t.Helper()
	var buf strings.Builder
	enc := json.NewEncoder(&buf)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(got); err != nil {
		t.Fatal(err)
	}
	checkGoldenFile(t, name+".json", []byte(buf.String()), func(want string) string { return normaliseJSON(t, want) })
}

// checkGoldenFile compares data with testdata/prompts/name after norm, or
// writes it there with -update.
func checkGoldenFile(t *testing.T, name string, data []byte, norm func(string) string) {
	t.Helper()
	file := filepath.Join("testdata", "prompts", name)
	if *update {
		if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(file, data, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(file)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if diff := cmp.Diff(norm(string(want)), norm(string(data))); diff != "" {
		t.Errorf("%s differs from %s (-want +got):\n%s", name, file, diff)
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

// TestPromptsOverMCP checks the server's replies: the capability, the list,
// a prompt rendered for the tools it registers, and the errors.
func TestPromptsOverMCP(t *testing.T) {
	ts := startServer(t, testConfig(t))
	init := ts.call(1, "initialize", map[string]any{"protocolVersion": "2025-11-25"})
	ts.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	if diff := cmp.Diff(map[string]any{"listChanged": false}, init["result"].(map[string]any)["capabilities"].(map[string]any)["prompts"]); diff != "" {
		t.Errorf("prompts capability (-want +got):\n%s", diff)
	}

	reply := ts.call(2, "prompts/list", map[string]any{})
	got, _ := json.Marshal(reply["result"])
	wantList, _ := promptsPage(allPrompts, nil, promptPageSize)
	want, _ := json.Marshal(wantList)
	if diff := cmp.Diff(normaliseJSON(t, string(want)), normaliseJSON(t, string(got))); diff != "" {
		t.Errorf("prompts/list (-want +got):\n%s", diff)
	}

	reply = ts.call(3, "prompts/get", map[string]any{"name": "why-did-this-change", "arguments": map[string]string{"path": `cart["items"].0`}})
	got, _ = json.Marshal(reply["result"])
	want, _ = json.Marshal(renderPrompt(promptByName("why-did-this-change"), map[string]string{"path": "cart.items.0"}, catalogOf(newToolSet(testConfig(t), nil))))
	if diff := cmp.Diff(normaliseJSON(t, string(want)), normaliseJSON(t, string(got))); diff != "" {
		t.Errorf("prompts/get (-want +got):\n%s", diff)
	}

	for i, tc := range []struct {
		method string
		params any
		want   string
	}{
		{"prompts/get", map[string]any{}, `"name" is required`},
		{"prompts/get", map[string]any{"name": 7}, `"name" must be a string`},
		{"prompts/get", map[string]any{"name": "nope"}, `unknown prompt "nope"; prompts: investigate-error, why-did-this-change`},
		{"prompts/get", map[string]any{"name": "why-did-this-change"}, `argument "path": required`},
		{"prompts/list", map[string]any{"cursor": "bogus!"}, `cursor "bogus!" was not issued by prompts/list`},
		{"completion/complete", map[string]any{"ref": map[string]any{"type": "ref/prompt", "name": "nope"}, "argument": map[string]any{"name": "a", "value": ""}}, `unknown prompt "nope"`},
		{"completion/complete", map[string]any{"ref": map[string]any{"type": "ref/prompt", "name": "storage-audit"}, "argument": map[string]any{"name": "path", "value": ""}}, `prompt storage-audit has no argument "path"; it takes instance`},
	} {
		reply := ts.call(10+i, tc.method, tc.params)
		e, _ := reply["error"].(map[string]any)
		if e == nil || e["code"] != float64(-32602) || !strings.Contains(fmt.Sprint(e["message"]), tc.want) {
			t.Errorf("%s %v: got %v, want -32602 with %q", tc.method, tc.params, reply, tc.want)
		}
	}
}

func TestPromptPagination(t *testing.T) {
	for size := 1; size <= len(allPrompts)+1; size++ {
		var names []string
		var cursor *string
		for pages := 0; ; pages++ {
			if pages > len(allPrompts) {
				t.Fatalf("page size %d: more pages than prompts", size)
			}
			page, err := promptsPage(allPrompts, cursor, size)
			if err != nil {
				t.Fatalf("page size %d: %v", size, err)
			}
			list := page["prompts"].([]map[string]any)
			if len(list) > size {
				t.Errorf("page size %d: a page of %d", size, len(list))
			}
			for _, p := range list {
				names = append(names, p["name"].(string))
			}
			next, ok := page["nextCursor"].(string)
			if !ok {
				break
			}
			if strings.Contains(next, "prompt") {
				t.Errorf("cursor %q is readable; it should be opaque", next)
			}
			cursor = &next
		}
		if diff := cmp.Diff(promptNames(), names); diff != "" {
			t.Errorf("page size %d: pages hold (-want +got):\n%s", size, diff)
		}
	}
}

func TestPromptCursorErrors(t *testing.T) {
	enc := func(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }
	for _, tc := range []struct{ cursor, want string }{
		{"", "was not issued by prompts/list"},
		{"%%%", "not base64url"},
		{enc("resources:investigate-error"), "was not issued by prompts/list"},
		{enc("prompts:nope"), "names no page"},
		{enc("prompts:" + allPrompts[0].name), "names no page"}, // the first page has no cursor
		{promptCursor(allPrompts[1].name) + "=", "not base64url"},
	} {
		_, err := promptsPage(allPrompts, &tc.cursor, 2)
		var re *rpcError
		if !errors.As(err, &re) || re.Code != -32602 || !strings.Contains(re.Message, tc.want) {
			t.Errorf("cursor %q: got %v, want -32602 containing %q", tc.cursor, err, tc.want)
		}
	}
}

func TestPromptArgs(t *testing.T) {
	for _, tc := range []struct {
		prompt, args string
		want         map[string]string // nil: an error is wanted
		problem      string
	}{
		{"investigate-error", ``, map[string]string{}, ""},
		{"investigate-error", `null`, map[string]string{}, ""},
		{"investigate-error", `{}`, map[string]string{}, ""},
		{"investigate-error", `{"symptom":""}`, map[string]string{}, ""},
		{"investigate-error", `{"symptom":null}`, map[string]string{}, ""},
		{"investigate-error", `{"symptom":"it\ncrashes\tbadly"}`, map[string]string{"symptom": "it\ncrashes\tbadly"}, ""},
		{"why-did-this-change", `{"path":"cart[\"items\"].0"}`, map[string]string{"path": "cart.items.0"}, ""},
		{"why-did-this-change", `{"path":"settings[\"theme.dark\"]"}`, map[string]string{"path": `settings["theme.dark"]`}, ""},
		{"explain-current-screen", `{}`, map[string]string{}, ""},
		{"compare-sessions", `{"a":"x","b":"y"}`, map[string]string{"a": "x", "b": "y"}, ""},

		{"investigate-error", `[]`, nil, `argument "arguments": must be an object of strings, not an array`},
		{"investigate-error", `{"symptom":5}`, nil, `argument "symptom": must be a string, not a number`},
		{"investigate-error", `{"Symptom":"x"}`, nil, `argument "Symptom": unknown argument; this prompt takes symptom`},
		{"explain-current-screen", `{"x":"y"}`, nil, `unknown argument; this prompt takes no arguments`},
		{"investigate-error", `{"symptom":"a","symptom":"b"}`, nil, `argument "symptom": given twice`},
		{"investigate-error", `{"symptom":"a\u0000b"}`, nil, `argument "symptom": contains a control character at byte 1`},
		{"investigate-error", `{"symptom":"` + strings.Repeat("x", maxPromptArgBytes+1) + `"}`, nil, `longer than 2000 bytes`},
		{"why-did-this-change", `{}`, nil, `argument "path": required (A Redux state path`},
		{"why-did-this-change", `{"path":""}`, nil, `argument "path": required`},
		{"why-did-this-change", `{"path":"a..b"}`, nil, `argument "path": not a state path: at byte 2`},
		{"why-did-this-change", `{"path":"a\nb"}`, nil, `contains a control character at byte 1`},
		{"compare-sessions", `{"a":"x"}`, nil, `argument "b": required`},
		{"storage-audit", `{"instance":"a\tb"}`, nil, `argument "instance": contains a control character`},
	} {
		got, err := parsePromptArgs(promptByName(tc.prompt), json.RawMessage(tc.args))
		if tc.want != nil {
			if err != nil {
				t.Errorf("%s %s: %v", tc.prompt, tc.args, err)
			} else if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s %s (-want +got):\n%s", tc.prompt, tc.args, diff)
			}
			continue
		}
		var re *rpcError
		if !errors.As(err, &re) || re.Code != -32602 || !strings.Contains(re.Message, tc.problem) {
			t.Errorf("%s %.60s: got %v, want -32602 containing %q", tc.prompt, tc.args, err, tc.problem)
		}
	}
}

func TestSplitPartialPath(t *testing.T) {
	for _, tc := range []struct{ typed, parent, partial string }{
		{"", "", ""},
		{"ca", "", "ca"},
		{"cart.", "cart", ""},
		{"cart.it", "cart", "it"},
		{"cart.items.0.s", "cart.items.0", "s"},
		{`settings[`, "settings", ""},
		{`settings["`, "settings", ""},
		{`settings["theme.d`, "settings", "theme.d"},
		{`settings["theme.dark"]`, "settings", "theme.dark"},
		{`settings["a\"b`, "settings", `a"b`},
		{`settings["a\`, "settings", "a"},
		{`settings["a\u00`, "settings", "a"},
		{`a["b.c"].d`, `a["b.c"]`, "d"},
	} {
		parent, partial := splitPartialPath(tc.typed)
		if parent != tc.parent || partial != tc.partial {
			t.Errorf("splitPartialPath(%q) = %q, %q; want %q, %q", tc.typed, parent, partial, tc.parent, tc.partial)
		}
	}
}

// complete asks completion/complete for a prompt argument and returns the values.
func (e *e2e) complete(prompt, arg, value string, context map[string]string) []string {
	e.t.Helper()
	e.nextID++
	params := map[string]any{"ref": map[string]any{"type": "ref/prompt", "name": prompt}, "argument": map[string]any{"name": arg, "value": value}}
	if context != nil {
		params["context"] = map[string]any{"arguments": context}
	}
	reply := e.call(e.nextID, "completion/complete", params)
	var res struct {
		Completion struct {
			Values  []string `json:"values"`
			Total   int      `json:"total"`
			HasMore bool     `json:"hasMore"`
		} `json:"completion"`
	}
	raw, _ := json.Marshal(reply["result"])
	if err := json.Unmarshal(raw, &res); err != nil || res.Completion.Values == nil || res.Completion.Total != len(res.Completion.Values) {
		e.t.Fatalf("malformed completion reply %v", reply)
	}
	return res.Completion.Values
}

// TestPromptCompletionsAgainstDemo completes each argument with known
// values against the simulated app, over MCP.
func TestPromptCompletionsAgainstDemo(t *testing.T) {
	e := startE2E(t, testConfig(t), 3)
	e.app.setReduxState(json.RawMessage(`{"cart":{"items":[{"sku":"A-1"},{"sku":"B-2"}],"itemCount":2,"total":3},` +
		`"settings":{"theme.dark":true,"theme":"x","42":1},"Auth":{},"auth":{"user":{"role":"admin"}}}`))
	health, _ := e.callTool("debug_health_check", nil)
	var h struct {
		Adapter struct {
			SessionID string `json:"sessionId"`
		} `json:"adapter"`
	}
	if err := json.Unmarshal(health, &h); err != nil || h.Adapter.SessionID == "" {
		t.Fatalf("health: %s", health)
	}
	for _, tc := range []struct {
		prompt, arg, value string
		context            map[string]string
		want               []string
	}{
		{"why-did-this-change", "path", "", nil, []string{"Auth", "auth", "cart", "settings"}},
		{"why-did-this-change", "path", "cart.it", nil, []string{"cart.itemCount", "cart.items"}},
		{"why-did-this-change", "path", "cart.items.", nil, []string{"cart.items.0", "cart.items.1"}},
		{"why-did-this-change", "path", "cart.items.1.", nil, []string{"cart.items.1.sku"}},
		{"why-did-this-change", "path", "settings.the", nil, []string{"settings.theme", `settings["theme.dark"]`}},
		{"why-did-this-change", "path", `settings["theme.`, nil, []string{`settings["theme.dark"]`}},
		{"why-did-this-change", "path", "settings.4", nil, []string{`settings["42"]`}},
		{"why-did-this-change", "path", "au", nil, []string{"auth", "Auth"}},
		{"why-did-this-change", "path", "nope.x", nil, []string{}},
		{"why-did-this-change", "path", "cart.total.", nil, []string{}},
		{"why-did-this-change", "path", "cart..x", nil, []string{}},
		{"storage-audit", "instance", "", nil, []string{"auth", "default"}},
		{"storage-audit", "instance", "D", nil, []string{"default"}},
		{"compare-sessions", "a", "", nil, []string{"ShopApp", h.Adapter.SessionID}},
		{"compare-sessions", "b", "s", nil, []string{"ShopApp"}},
		{"compare-sessions", "b", "", map[string]string{"a": "ShopApp"}, []string{h.Adapter.SessionID}},
		{"investigate-error", "symptom", "cra", nil, []string{}},
	} {
		if diff := cmp.Diff(tc.want, e.complete(tc.prompt, tc.arg, tc.value, tc.context)); diff != "" {
			t.Errorf("complete %s %s=%q (-want +got):\n%s", tc.prompt, tc.arg, tc.value, diff)
		}
	}
}

// TestPromptCompletionsWithoutApp: with no app connected there is nothing
// to offer, and that is not an error.
func TestPromptCompletionsWithoutApp(t *testing.T) {
	ts := startServer(t, testConfig(t))
	ts.initialize()
	e := &e2e{testServer: ts, nextID: 100}
	for _, arg := range [][2]string{{"why-did-this-change", "path"}, {"storage-audit", "instance"}, {"compare-sessions", "a"}} {
		if got := e.complete(arg[0], arg[1], "", nil); len(got) != 0 {
			t.Errorf("complete %s %s without an app = %q, want none", arg[0], arg[1], got)
		}
	}
}

// fakeLookups serves completions from a fixed JSON state.
type fakeLookups struct{ state []byte }

func (f fakeLookups) stateChildren(_ context.Context, parent []pathSegment) ([]pathSegment, error) {
	value, miss, err := resolveRaw(f.state, parent)
	if err != nil || miss != nil {
		return nil, errors.New("no such path")
	}
	return childrenAt(value)
}
func (fakeLookups) mmkvInstanceNames() []string { return nil }
func (fakeLookups) sessionNames() []string      { return nil }

// stateWithPath builds a JSON value in which the path segs exists: objects
// for keys, arrays (of nulls before the index) for indexes.
func stateWithPath(segs []pathSegment) ([]byte, bool) {
	value := []byte("1")
	for i := len(segs) - 1; i >= 0; i-- {
		if index, ok := arrayIndex(segs[i]); ok {
			if index > 64 {
				return nil, false
			}
			value = append([]byte("["+strings.Repeat("null,", index)), append(value, ']')...)
			continue
		}
		key := appendJSONString(nil, segs[i].Key, false)
		value = append(append(append([]byte("{"), key...), ':'), append(value, '}')...)
	}
	return value, true
}

// FuzzCompleteStatePath checks that every path, written canonically,
// completes to itself in a state that holds it, whatever its keys hold.
func FuzzCompleteStatePath(f *testing.F) {
	for _, s := range []string{"cart.items", "a.0.b", `settings["theme.dark"]`, `byId["42"]`, `a[""]`, `x["a\"b"].c`, `k["\u0001"]`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, path string) {
		segs, err := parsePath(path)
		if err != nil || len(segs) == 0 || !utf8.ValidString(path) { // JSON text cannot hold invalid UTF-8 keys
			return
		}
		canonical := formatPath(segs)
		state, ok := stateWithPath(segs)
		if !ok || !json.Valid(state) {
			return
		}
		got := completeStatePath(t.Context(), fakeLookups{state}, canonical)
		if !slices.Contains(got, canonical) {
			t.Fatalf("completing %q in %s offers %q, not itself", canonical, state, got)
		}
	})
}

// FuzzPromptCursor checks that a cursor is accepted exactly when it is one
// the list hands out, and then leads to the page it was handed out for.
func FuzzPromptCursor(f *testing.F) {
	for _, p := range allPrompts {
		f.Add(promptCursor(p.name))
	}
	f.Add("")
	f.Add("cHJvbXB0czo")
	f.Fuzz(func(t *testing.T, cursor string) {
		i, err := parsePromptCursor(allPrompts, cursor)
		if err != nil {
			var re *rpcError
			if !errors.As(err, &re) || re.Code != -32602 {
				t.Fatalf("cursor %q: error %v is not invalid params", cursor, err)
			}
			return
		}
		if i <= 0 || i >= len(allPrompts) || promptCursor(allPrompts[i].name) != cursor {
			t.Fatalf("cursor %q accepted as page start %d, which hands out another cursor", cursor, i)
		}
	})
}

// FuzzPromptArgs checks that accepted arguments are declared by the prompt,
// obey its rules, and read back the same when encoded again.
func FuzzPromptArgs(f *testing.F) {
	f.Add("why-did-this-change", `{"path":"cart.total"}`)
	f.Add("why-did-this-change", `{"path":"a[\"b\"]"}`)
	f.Add("investigate-error", `{"symptom":"x\ny"}`)
	f.Add("compare-sessions", `{"a":"x","b":"y","a":"z"}`)
	f.Add("storage-audit", `{"instance":null}`)
	f.Fuzz(func(t *testing.T, name, raw string) {
		p := promptByName(name)
		if p == nil {
			return
		}
		args, err := parsePromptArgs(p, json.RawMessage(raw))
		if err != nil {
			return
		}
		for _, a := range p.args {
			v, ok := args[a.name]
			if a.required && !ok {
				t.Fatalf("%s: required %s accepted absent", raw, a.name)
			}
			if ok && (v == "" || len(v) > maxPromptArgBytes) {
				t.Fatalf("%s: %s accepted as %q", raw, a.name, v)
			}
		}
		for k := range args {
			if !slices.ContainsFunc(p.args, func(a promptArg) bool { return a.name == k }) {
				t.Fatalf("%s: undeclared argument %q accepted", raw, k)
			}
		}
		again, _ := json.Marshal(args)
		args2, err := parsePromptArgs(p, again)
		if err != nil {
			t.Fatalf("%s: re-encoded arguments %s refused: %v", raw, again, err)
		}
		if diff := cmp.Diff(args, args2); diff != "" {
			t.Fatalf("%s: arguments changed on a round trip (-first +second):\n%s", raw, diff)
		}
	})
}

// TestWhyDidThisChangeOnDemo follows the why-did-this-change prompt call
// by call, as an agent would, against the simulated app: each call is taken
// from the prompt's own text with its placeholders filled in from earlier
// answers. The prompt must lead to the two snapshots between which the path
// changed and to the action that changed it.
func TestWhyDidThisChangeOnDemo(t *testing.T) {
	const path = "cart.total"
	e := startE2E(t, testConfig(t), 40)
	text := promptByName("why-did-this-change").text(map[string]string{"path": path}, catalogOf(newToolSet(testConfig(t), nil)))
	_, calls, err := promptMentions(text)
	if err != nil {
		t.Fatal(err)
	}
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
