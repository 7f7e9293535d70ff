package main

// This file serves MCP prompts: the investigations developers repeat, as
// slash commands of their MCP client. A prompt's text tells an agent which
// tools to call in which order with which arguments, what to compare and
// what to report. The texts live in mcp_prompttexts.go; this file holds the
// table, prompts/list with its cursor, prompts/get with its argument checks,
// and completion of prompt arguments.
//
// Texts follow one convention so that a test can check them against
// tools/list and they cannot drift: a tool is named by its name (debug_…),
// and its arguments are mentioned only in call form,
// debug_tool(arg="string", n=5), with string values as JSON strings and
// <placeholders> for what the agent fills in. Texts adapt to the tools
// actually registered (toolCatalog), so a prompt uses a tool once it exists
// and never before.

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// promptArg is one argument of a prompt. Prompt arguments are strings
// (the protocol's GetPromptRequest says so).
type promptArg struct {
	name, title, description string
	required                 bool
	kind                     promptArgKind
}

// promptArgKind says how an argument value is checked and completed.
type promptArgKind int

const (
	argText     promptArgKind = iota // free text, no completion
	argPath                          // a Redux state path; completes from the current state
	argInstance                      // an MMKV instance; completes from the advertised instances
	argSession                       // a session id or app name; completes from the sessions
)

// maxPromptArgBytes bounds one argument value: a prompt's text embeds it,
// and no real path, name or symptom description comes near it.
const maxPromptArgBytes = 2000

// prompt is one MCP prompt: what prompts/list shows and the function that
// writes its text for the given arguments and tools.
type prompt struct {
	name, title, description string
	args                     []promptArg
	write                    func(t *promptText, args map[string]string, tools toolCatalog)
}

func (p *prompt) text(args map[string]string, tools toolCatalog) string {
	var t promptText
	p.write(&t, args, tools)
	return strings.TrimRight(t.b.String(), "\n")
}

// promptPageSize is how many prompts one prompts/list page holds. Every
// prompt fits one page today; cursors still work as the protocol asks, and
// the tests page with smaller sizes.
const promptPageSize = 20

// toolCatalog is what prompt texts may name: each registered tool with the
// names of the arguments it takes.
type toolCatalog map[string][]string

func (c toolCatalog) has(tool string) bool { _, ok := c[tool]; return ok }

// takes reports whether the tool is registered and takes the argument.
func (c toolCatalog) takes(tool, arg string) bool { return slices.Contains(c[tool], arg) }

func catalogOf(ts *toolSet) toolCatalog {
	c := toolCatalog{}
	for name, t := range ts.byName {
		c[name] = namesOf(t.args, func(a argSpec) string { return a.name })
	}
	return c
}

func promptByName(name string) *prompt {
	if i := slices.IndexFunc(allPrompts, func(p *prompt) bool { return p.name == name }); i >= 0 {
		return allPrompts[i]
	}
	return nil
}

func promptNames() []string {
	return namesOf(allPrompts, func(p *prompt) string { return p.name })
}

// The cursor names the first prompt of the next page, so it stays valid as
// long as that prompt exists, whatever is added before it. It is base64 so
// that clients treat it as the opaque token it is meant to be.
const promptCursorPrefix = "prompts:"

func promptCursor(name string) string {
	return base64.RawURLEncoding.EncodeToString([]byte(promptCursorPrefix + name))
}

// parsePromptCursor returns the index in prompts where the page of cursor
// starts, or an error saying why the cursor is not one this server gave out.
func parsePromptCursor(prompts []*prompt, cursor string) (int, error) {
	raw, err := base64.RawURLEncoding.DecodeString(cursor)
	if err != nil {
		return 0, rpcErrorf(errInvalidParams, map[string]string{"cursor": cursor},
			"invalid params: cursor %q was not issued by prompts/list: not base64url", cursor)
	}
	// Only the spelling handed out counts: the decoder skips line breaks,
	// so other strings decode to the same bytes.
	name, ok := strings.CutPrefix(string(raw), promptCursorPrefix)
	if !ok || promptCursor(name) != cursor {
		return 0, rpcErrorf(errInvalidParams, map[string]string{"cursor": cursor},
			"invalid params: cursor %q was not issued by prompts/list", cursor)
	}
	i := slices.IndexFunc(prompts, func(p *prompt) bool { return p.name == name })
	if i <= 0 { // the first page is asked for without a cursor
		return 0, rpcErrorf(errInvalidParams, map[string]string{"cursor": cursor},
			"invalid params: cursor %q names no page of prompts/list; list again without a cursor", cursor)
	}
	return i, nil
}

// promptsPage is one page of prompts/list: the prompts from cursor on, at
// most pageSize, and nextCursor when more follow.
func promptsPage(prompts []*prompt, cursor *string, pageSize int) (map[string]any, error) {
	start := 0
	if cursor != nil {
		var err error
		if start, err = parsePromptCursor(prompts, *cursor); err != nil {
			return nil, err
		}
	}
	end := min(start+pageSize, len(prompts))
	list := make([]map[string]any, 0, end-start)
	for _, p := range prompts[start:end] {
		args := make([]map[string]any, len(p.args))
		for i, a := range p.args {
			args[i] = map[string]any{"name": a.name, "title": a.title, "description": a.description, "required": a.required}
		}
		list = append(list, map[string]any{"name": p.name, "title": p.title, "description": p.description, "arguments": args})
	}
	page := map[string]any{"prompts": list}
	if end < len(prompts) {
		page["nextCursor"] = promptCursor(prompts[end].name)
	}
	return page, nil
}

func (s *mcpServer) listPrompts(_ context.Context, params json.RawMessage) (any, error) {
	var p struct {
		Cursor *string `json:"cursor"`
	}
	if err := decodeParams(params, &p); err != nil {
		return nil, err
	}
	return promptsPage(allPrompts, p.Cursor, promptPageSize)
}

func (s *mcpServer) getPrompt(_ context.Context, params json.RawMessage) (any, error) {
	var p struct {
		Name      *string         `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
	}
	if err := decodeRequired(params, &p, "name", &p.Name); err != nil {
		return nil, err
	}
	pr := promptByName(*p.Name)
	if pr == nil {
		return nil, rpcErrorf(errInvalidParams, map[string]any{"prompt": *p.Name, "available": promptNames()},
			"invalid params: unknown prompt %q; prompts: %s", *p.Name, strings.Join(promptNames(), ", "))
	}
	args, err := parsePromptArgs(pr, p.Arguments)
	if err != nil {
		return nil, err
	}
	return renderPrompt(pr, args, catalogOf(s.tools)), nil
}

// renderPrompt is a GetPromptResult: the prompt's description and one user
// message holding its text.
func renderPrompt(p *prompt, args map[string]string, tools toolCatalog) map[string]any {
	return map[string]any{
		"description": p.description,
		"messages": []map[string]any{{
			"role":    "user",
			"content": map[string]string{"type": "text", "text": p.text(args, tools)},
		}},
	}
}

// parsePromptArgs checks prompts/get arguments against the prompt as
// strictly as tool arguments (strictMembers); values are strings. An empty
// string or null counts as absent, because clients send "" for a field the
// user left blank. Paths are parsed and returned in canonical form, so that
// they equal the paths a diff reports.
func parsePromptArgs(p *prompt, raw json.RawMessage) (map[string]string, error) {
	args := map[string]string{}
	bad := func(arg, problem string) error {
		return rpcErrorf(errInvalidParams, map[string]string{"prompt": p.name, "argument": arg, "problem": problem},
			"invalid params: prompt %s: argument %q: %s", p.name, arg, problem)
	}
	if err := strictMembers(raw, "prompt", "an object of strings", promptArgNames(p), bad, func(name string, v []byte) error {
		switch {
		case string(v) == "null":
		case rawKind(v) != "string":
			return bad(name, "must be a string, not "+jsonKind(v))
		default:
			if s, _ := wireString(v); s != "" {
				args[name] = s
			}
		}
		return nil
	}); err != nil {
		return nil, err
	}
	for _, a := range p.args {
		v, ok := args[a.name]
		if !ok {
			if a.required {
				return nil, bad(a.name, "required ("+a.description+")")
			}
			continue
		}
		if len(v) > maxPromptArgBytes {
			return nil, bad(a.name, "longer than "+strconv.Itoa(maxPromptArgBytes)+" bytes")
		}
		if i := strings.IndexFunc(v, func(r rune) bool { return r < 0x20 && (a.kind != argText || r != '\n' && r != '\t') || r == 0x7f }); i >= 0 {
			return nil, bad(a.name, "contains a control character at byte "+strconv.Itoa(i))
		}
		if a.kind == argPath {
			segs, err := parsePath(v)
			if err != nil {
				return nil, bad(a.name, "not a state path: "+err.Error())
			}
			args[a.name] = formatPath(segs)
		}
	}
	return args, nil
}

func promptArgNames(p *prompt) []string {
	return namesOf(p.args, func(a promptArg) string { return a.name })
}

// promptLookups are the data that completions of prompt arguments need, one
// small method each, so that they can follow the data to wherever it lives.
type promptLookups interface {
	// stateChildren lists the children of the value at parent in the
	// current Redux state: object keys, or array indexes.
	stateChildren(ctx context.Context, parent []pathSegment) ([]pathSegment, error)
	// mmkvInstanceNames lists the MMKV instances the app advertises.
	mmkvInstanceNames() []string
	// sessionNames lists the connected apps by session id and app name.
	sessionNames() []string
}

// completePrompt offers values for one argument of a prompt (matchPrefix).
// An argument whose values cannot be known (free text), or data that
// cannot be had now (no app connected), yields no values rather than an
// error: a client asks while the user types.
func completePrompt(ctx context.Context, data promptLookups, promptName, argName, typed string, context map[string]string) ([]string, error) {
	p := promptByName(promptName)
	if p == nil {
		return nil, rpcErrorf(errInvalidParams, map[string]any{"prompt": promptName, "available": promptNames()},
			"invalid params: unknown prompt %q; prompts: %s", promptName, strings.Join(promptNames(), ", "))
	}
	i := slices.IndexFunc(p.args, func(a promptArg) bool { return a.name == argName })
	if i < 0 {
		return nil, rpcErrorf(errInvalidParams, map[string]any{"prompt": promptName, "argument": argName},
			"invalid params: prompt %s has no argument %q; it takes %s", promptName, argName, argNames(promptArgNames(p)))
	}
	if len(typed) > maxPromptArgBytes {
		return nil, rpcErrorf(errInvalidParams, map[string]any{"prompt": promptName, "argument": argName},
			"invalid params: the value of %q is longer than %d bytes", argName, maxPromptArgBytes)
	}
	var candidates []string
	switch p.args[i].kind {
	case argPath:
		return completeStatePath(ctx, data, typed), nil
	case argInstance:
		candidates = data.mmkvInstanceNames()
	case argSession:
		// The other side of a comparison (compare-sessions' a and b) is not
		// offered twice.
		other := context["a"]
		if argName == "a" {
			other = context["b"]
		}
		candidates = slices.DeleteFunc(data.sessionNames(), func(n string) bool { return n == other && n != "" })
	}
	return matchPrefix(candidates, typed), nil
}

// matchPrefix returns the candidates starting with typed, then those that
// do so only when case is ignored, each group sorted, without repeats.
func matchPrefix(candidates []string, typed string) []string {
	var exact, folded []string
	lower := strings.ToLower(typed)
	for _, c := range candidates {
		switch {
		case strings.HasPrefix(c, typed):
			exact = append(exact, c)
		case strings.HasPrefix(strings.ToLower(c), lower):
			folded = append(folded, c)
		}
	}
	slices.Sort(exact)
	slices.Sort(folded)
	return append(append([]string{}, slices.Compact(exact)...), slices.Compact(folded)...)
}

// completeStatePath completes a state path typed so far: the part before
// its last segment must resolve in the current state, and the last segment
// is matched against the keys (or indexes) found there. Typing cart.it
// offers cart.items.
func completeStatePath(ctx context.Context, data promptLookups, typed string) []string {
	parentText, partial, ok := splitPartialPath(typed)
	parent, err := parsePath(parentText)
	if err != nil || !ok {
		return []string{}
	}
	children, err := data.stateChildren(ctx, parent)
	if err != nil {
		return []string{}
	}
	keys := make([]string, len(children))
	byKey := make(map[string]pathSegment, len(children))
	for i, c := range children {
		keys[i] = c.Key
		byKey[c.Key] = c
	}
	matched := matchPrefix(keys, partial)
	for i, k := range matched { // format only what is offered
		matched[i] = formatPath(append(slices.Clip(parent), byKey[k]))
	}
	return matched
}

// splitPartialPath splits a path being typed into the part before its last
// segment and what has been typed of that segment, unquoted: cart.it gives
// cart and it; settings["theme.d gives settings and theme.d. A quoted
// segment may be cut anywhere, even inside an escape; ok is false when it
// cannot be read.
func splitPartialPath(typed string) (parent, partial string, ok bool) {
	start, inQuote := 0, false
	for i := 0; i < len(typed); i++ {
		switch c := typed[i]; {
		case inQuote && c == '\\':
			i++
		case inQuote:
			inQuote = c != '"'
		case c == '"':
			inQuote = true
		case c == '.':
			start = i + 1
		case c == '[':
			start = i
		}
	}
	parent = strings.TrimSuffix(typed[:start], ".")
	tail := typed[start:]
	if !strings.HasPrefix(tail, "[") {
		return parent, tail, true
	}
	tail = strings.TrimPrefix(tail[1:], `"`)
	tail = strings.TrimSuffix(strings.TrimSuffix(tail, "]"), `"`)
	// Drop a cut-off escape: at most the 6 bytes of \uXXXX. A key with a bad
	// escape elsewhere matches nothing.
	var unquoted string
	for end := len(tail); end >= max(0, len(tail)-6); end-- {
		if json.Unmarshal([]byte(`"`+tail[:end]+`"`), &unquoted) == nil {
			return parent, unquoted, true
		}
	}
	return parent, "", false
}

// childrenAt lists the children of a JSON value: the keys of an object (a
// key that reads as an index is marked Quoted), the indexes of an array,
// none for a scalar.
func childrenAt(value []byte) ([]pathSegment, error) {
	var out []pathSegment
	var err error
	switch rawKind(value) {
	case "object":
		err = eachMember(value, func(name string, _ []byte) bool {
			out = append(out, pathSegment{Key: name, Quoted: isCanonicalDecimal(name)})
			return true
		})
	case "array":
		err = eachElement(value, func(i int, _ []byte) bool {
			out = append(out, pathSegment{Key: strconv.Itoa(i)})
			return true
		})
	}
	return out, err
}

// serverLookups answers promptLookups from the session registry: states and
// MMKV instances of the default session, names of every session.
type serverLookups struct{ s *mcpServer }

func (l serverLookups) stateChildren(ctx context.Context, parent []pathSegment) ([]pathSegment, error) {
	ctx, cancel := context.WithTimeout(ctx, min(l.s.cfg.RequestTimeout, healthStreamsTimeout))
	defer cancel()
	q := &l.s.tools.adapterQueries
	sess, err := q.sessionFor("", "")
	if err != nil {
		return nil, err
	}
	_, value, err := q.stateAt(ctx, sess, "redux", formatPath(parent), parent)
	if err != nil {
		return nil, err
	}
	return childrenAt(l.s.redact.At(parent, value))
}

func (l serverLookups) mmkvInstanceNames() []string { return l.s.resources.mmkvInstances() }

// sessionNames lists every session the registry holds, live or
// post-mortem, by id and by app name: both are accepted as `session`.
func (l serverLookups) sessionNames() []string {
	if l.s.tools.sessions == nil {
		return nil
	}
	var names []string
	for _, sess := range l.s.tools.sessions.list() {
		v := sess.view()
		names = append(names, v.ID)
		if app := v.AppName(); app != "" && utf8.ValidString(app) {
			names = append(names, app)
		}
	}
	return names
}
