package main

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
)

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
	want, _ = json.Marshal(renderPrompt(promptByName("why-did-this-change"), map[string]string{"path": "cart.items.0"}, catalogOf(newTestToolSet(testConfig(t), nil))))
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
		{"completion/complete", map[string]any{"ref": map[string]any{"type": "ref/prompt", "name": "why-did-this-change"}, "argument": map[string]any{"name": "path", "value": `a["` + strings.Repeat(`\q`, 100_000)}}, `the value of "path" is longer than 2000 bytes`},
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
	for _, tc := range []struct {
		typed, parent, partial string
		bad                    bool
	}{
		{"", "", "", false},
		{"ca", "", "ca", false},
		{"cart.", "cart", "", false},
		{"cart.it", "cart", "it", false},
		{"cart.items.0.s", "cart.items.0", "s", false},
		{`settings[`, "settings", "", false},
		{`settings["`, "settings", "", false},
		{`settings["theme.d`, "settings", "theme.d", false},
		{`settings["theme.dark"]`, "settings", "theme.dark", false},
		{`settings["a\"b`, "settings", `a"b`, false},
		{`settings["a\`, "settings", "a", false},
		{`settings["a\u00`, "settings", "a", false},
		{`a["b.c"].d`, `a["b.c"]`, "d", false},
		{`a["\qxxxxxxxxxxxxx`, "a", "", true},
	} {
		parent, partial, ok := splitPartialPath(tc.typed)
		if parent != tc.parent || partial != tc.partial || ok != !tc.bad {
			t.Errorf("splitPartialPath(%q) = %q, %q, %v; want %q, %q, %v", tc.typed, parent, partial, ok, tc.parent, tc.partial, !tc.bad)
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
		if index, ok := parseIndex(segs[i]); ok {
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

// BenchmarkCompleteStatePath measures completing a path typed into a
// collection of a 512 KB state (about 5 000 keys), once the state is at
// hand: what each keystroke costs beyond fetching the state.
func BenchmarkCompleteStatePath(b *testing.B) {
	data := fakeLookups{demoBigState(512 << 10)}
	for _, typed := range []string{"catalog.byId.P-1", "catalog.byId.p-42"} {
		b.Run(typed, func(b *testing.B) {
			for b.Loop() {
				if len(completeStatePath(b.Context(), data, typed)) == 0 {
					b.Fatal("no completions")
				}
			}
		})
	}
}
