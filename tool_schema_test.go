package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// goldenTools names the tool each success golden of testdata/tools answers
// for, by file-name prefix; the goldens are the simulated app's real answers
// (TestToolsGolden, TestAppToolsGolden).
var goldenTools = map[string]string{
	"commands_list": "debug_list_commands", "diff_": "debug_diff_snapshots", "dispatch_": "debug_dispatch_action",
	"events_": "debug_query_events", "health": "debug_health_check", "list_streams": "debug_list_streams",
	"logs_": "debug_get_logs", "network_": "debug_get_network", "run_": "debug_run_command",
	"snapshot_": "debug_get_snapshot", "state_path_": "debug_get_state_path", "wait_": "debug_wait_for",
}

// checkSchema reports where v breaks schema: a member the schema's
// properties do not name, a wrong type, a required member missing. It knows
// the keywords the tools' output schemas use: type, properties, required,
// items.
func checkSchema(schema map[string]any, v any, at string) []string {
	var problems []string
	if types := schemaTypes(schema["type"]); len(types) > 0 && !slices.Contains(types, jsonTypeOf(v)) &&
		!(jsonTypeOf(v) == "integer" && slices.Contains(types, "number")) {
		return []string{fmt.Sprintf("%s: %s, want %v", at, jsonTypeOf(v), types)}
	}
	switch v := v.(type) {
	case map[string]any:
		props, hasProps := schema["properties"].(map[string]any)
		if !strings.Contains(at, ".") && !strings.Contains(at, "[") && !hasProps {
			problems = append(problems, fmt.Sprintf("%s: an object schema without properties", at))
		}
		for name, member := range v {
			sub, ok := props[name].(map[string]any)
			if !ok {
				if hasProps {
					problems = append(problems, fmt.Sprintf("%s: member %q is not in the schema's properties", at, name))
				}
				continue
			}
			problems = append(problems, checkSchema(sub, member, at+"."+name)...)
		}
		required, _ := schema["required"].([]any)
		for _, name := range required {
			if _, ok := v[name.(string)]; !ok {
				problems = append(problems, fmt.Sprintf("%s: required member %q missing", at, name))
			}
		}
	case []any:
		if items, ok := schema["items"].(map[string]any); ok {
			for i, el := range v {
				problems = append(problems, checkSchema(items, el, fmt.Sprintf("%s[%d]", at, i))...)
			}
		}
	}
	return problems
}

func schemaTypes(t any) []string {
	switch t := t.(type) {
	case string:
		return []string{t}
	case []any:
		var out []string
		for _, s := range t {
			out = append(out, s.(string))
		}
		return out
	}
	return nil
}

func jsonTypeOf(v any) string {
	switch v := v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case string:
		return "string"
	case json.Number:
		if f, err := v.Float64(); err == nil && f == math.Trunc(f) && !strings.ContainsAny(string(v), ".eE") {
			return "integer"
		}
		return "number"
	case []any:
		return "array"
	}
	return "object"
}

func decodeNumbers(t *testing.T, data []byte) any {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		t.Fatal(err)
	}
	return v
}

// TestOutputSchemasCoverAnswers checks the simulated app's real answers,
// each tool's golden, against the tool's output schema: every member an
// answer carries must be named in the schema's properties, with its type.
// Every answer but the health check's may also say which session answered
// (sayWhoAnswered), so those members are checked on every such tool too.
func TestOutputSchemasCoverAnswers(t *testing.T) {
	ts := newTestToolSet(testConfig(t), nil)
	schemas := map[string]map[string]any{}
	for _, tl := range allTools {
		var s map[string]any
		if err := json.Unmarshal([]byte(tl.outputSchema), &s); err != nil {
			t.Fatalf("%s: outputSchema is not JSON: %v", tl.name, err)
		}
		schemas[tl.name] = s
	}
	files, err := filepath.Glob("testdata/tools/*.json")
	if err != nil {
		t.Fatal(err)
	}
	answered := map[string]int{}
	for _, file := range files {
		name := strings.TrimSuffix(filepath.Base(file), ".json")
		if strings.HasPrefix(name, "error_") {
			continue // errors carry no structuredContent
		}
		tool := ""
		for prefix, tn := range goldenTools {
			if strings.HasPrefix(name, prefix) {
				tool = tn
			}
		}
		if tool == "" {
			t.Errorf("%s: no tool known for this golden; add its prefix to goldenTools", name)
			continue
		}
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		answered[tool]++
		for _, p := range checkSchema(schemas[tool], decodeNumbers(t, data), name) {
			t.Errorf("%s (%s): %s", tool, name, p)
		}
	}
	for _, tl := range allTools {
		if answered[tl.name] == 0 {
			t.Errorf("%s: no golden answer to check its output schema against", tl.name)
		}
	}

	// Two sessions, one gone: answers name the session and say it left.
	reg := newSessionRegistry(config{}, nil, &linkEventQueue{wake: make(chan struct{}, 1)})
	ts.sessions = reg
	feed := &testFeed{}
	gone, _ := reg.attach(sessionViaWire, "gone-1", "phone", testInfo("gone-1", "phone", "ShopApp", "redux"), feed)
	reg.attach(sessionViaWire, "live-1", "tablet", testInfo("live-1", "tablet", "ShopApp", "redux"), &testFeed{})
	reg.detach(gone, feed, "disconnected")
	who := decodeNumbers(t, ts.sayWhoAnswered([]byte(`{}`), gone)).(map[string]any)
	if len(who) != 2 || who["session"] == nil || who["live"] == nil {
		t.Fatalf("sayWhoAnswered of a gone session among two = %v, want session and live", who)
	}
	for _, tl := range allTools {
		if tl.name == "debug_health_check" {
			continue
		}
		props, _ := schemas[tl.name]["properties"].(map[string]any)
		for member, value := range who {
			sub, ok := props[member].(map[string]any)
			if !ok {
				t.Errorf("%s: member %q, which says who answered, is not in the output schema", tl.name, member)
				continue
			}
			for _, p := range checkSchema(sub, value, tl.name+"."+member) {
				t.Errorf("%s", p)
			}
		}
	}
}

// TestToolListModelSize holds the part of tools/list a model reads — names,
// descriptions and input schemas — to 7 000 bytes for twelve tools (6 400
// for eleven before debug_wait_for): output schemas are for clients that
// check structuredContent, and may grow; this part costs the agent every
// session.
func TestToolListModelSize(t *testing.T) {
	ts := newTestToolSet(testConfig(t), nil)
	var list struct{ Tools []map[string]json.RawMessage }
	if err := json.Unmarshal(ts.listJSON, &list); err != nil {
		t.Fatal(err)
	}
	size := 0
	for _, tl := range list.Tools {
		part, _ := json.Marshal(map[string]json.RawMessage{"name": tl["name"], "description": tl["description"], "inputSchema": tl["inputSchema"]})
		size += len(part)
	}
	if size > 7000 {
		t.Errorf("names, descriptions and input schemas of tools/list: %d bytes, want at most 7 000", size)
	}
	t.Logf("model-facing part of tools/list: %d bytes; whole reply %d bytes", size, len(ts.listJSON))
}
