package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"testing"
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

// futureSchemas is schemas as they will be once the log, network and wait
// tools and sessions land: debug_get_logs, debug_get_network,
// debug_wait_for, and a session argument on every tool that asks the app.
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
	out["debug_wait_for"] = toolSchema{types: map[string]string{"stream": "string", "event_type": "string", "contains": "string",
		"level": "string", "status": "string", "method": "string", "url_contains": "string", "since_seq": "integer",
		"count": "integer", "timeout_ms": "integer", "session": "string"}, required: []string{"stream"}}
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
// following the convention of mcp_prompts.go. It fails on a call it cannot
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
		{"investigate-error", future, []string{`debug_get_logs(level="error"`, `debug_get_network(status="5xx"`, `session="<id>"`}, []string{`debug_query_events(stream="console"`}},
		{"investigate-error", catalogOf(newTestToolSet(testConfig(t), nil)), []string{`debug_wait_for(stream="console", level="error"`, `debug_wait_for(stream="network", status="failed"`}, nil},
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
