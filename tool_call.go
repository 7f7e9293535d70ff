package main

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strings"
)

// tool_call.go is how one tool call is made: argument specs and their
// strict parsing, the input schema generated from them, and the result
// envelope — redaction, the result budget, which session answered.

// argKind is a tool argument's JSON type, as its input schema names it.
type argKind string

const (
	argString  argKind = "string"
	argInteger argKind = "integer"
	argObject  argKind = "object" // a JSON object, kept as JSON
)

// argSpec describes one tool argument. The input schema is generated from
// these, and arguments are checked against them, so the two cannot drift.
type argSpec struct {
	name        string
	kind        argKind
	required    bool
	description string
	min, max    int64 // integers: max 0 means unbounded
	def         int64 // integers: default, 0 means none
	clamp       bool  // integers: out-of-range values are clamped, not refused
}

// toolHints are a tool's MCP annotations.
type toolHints struct {
	ReadOnly    bool `json:"readOnlyHint"`
	Destructive bool `json:"destructiveHint"`
	Idempotent  bool `json:"idempotentHint"`
	OpenWorld   bool `json:"openWorldHint"`
}

var readOnlyHints = toolHints{ReadOnly: true, Idempotent: true}

// MarshalJSON leaves out what MCP ignores for a read-only tool (whether it
// destroys or repeats), saving bytes of every tools/list.
func (h toolHints) MarshalJSON() ([]byte, error) {
	if h.ReadOnly {
		return fmt.Appendf(nil, `{"readOnlyHint":true,"openWorldHint":%t}`, h.OpenWorld), nil
	}
	return fmt.Appendf(nil, `{"readOnlyHint":false,"destructiveHint":%t,"idempotentHint":%t,"openWorldHint":%t}`,
		h.Destructive, h.Idempotent, h.OpenWorld), nil
}

// toolArgs holds validated arguments by name, and the session the `session`
// argument named (nil for the health check when no app has connected).
type toolArgs struct {
	strings map[string]string
	ints    map[string]int64
	objects map[string]json.RawMessage
	session *session
}

func (a toolArgs) str(name string) (string, bool) { s, ok := a.strings[name]; return s, ok }

func (a toolArgs) int(name string) (int64, bool) { n, ok := a.ints[name]; return n, ok }

func (a toolArgs) object(name string) (json.RawMessage, bool) {
	o, ok := a.objects[name]
	return o, ok
}

// toolResult is a successful answer: body is the result object as JSON. When
// the body exceeds the result budget, the failure's outline lists the
// children of focus, the value found at focusPath.
type toolResult struct {
	body      []byte
	focus     []byte
	focusPath []pathSegment
	narrow    string // the suggestion when the body is over budget
}

// progressFunc sends a call's progress to its client: progress only grows,
// total is its end when known (0: unknown), message says it in words.
type progressFunc func(progress, total float64, message string)

type progressKey struct{}

// withProgress gives a call's tools a way to report progress; the MCP core
// installs one when the request asked for progress (a progressToken).
func withProgress(ctx context.Context, report progressFunc) context.Context {
	return context.WithValue(ctx, progressKey{}, report)
}

// progressFrom is the call's progressFunc, nil when nobody asked.
func progressFrom(ctx context.Context) progressFunc {
	report, _ := ctx.Value(progressKey{}).(progressFunc)
	return report
}

// schemaProperty is one argument in an input schema, its members in the
// order encoding/json gives a map's.
type schemaProperty struct {
	Default int64 `json:"default,omitempty"`
	// Empty for sessionArg, which says why.
	Description string `json:"description,omitempty"`
	Maximum     int64  `json:"maximum,omitempty"`
	Minimum     *int64 `json:"minimum,omitempty"`
	Type        string `json:"type"`
}

func inputSchema(args []argSpec) map[string]any {
	props := map[string]schemaProperty{}
	required := []string{}
	for _, a := range args {
		p := schemaProperty{Default: a.def, Description: a.description, Type: string(a.kind)}
		if a.kind == argInteger && !a.clamp {
			p.Minimum, p.Maximum = &a.min, a.max
		}
		props[a.name] = p
		if a.required {
			required = append(required, a.name)
		}
	}
	schema := map[string]any{"type": "object", "properties": props, "additionalProperties": false}
	if len(required) > 0 {
		schema["required"] = required
	}
	return schema
}

// call runs a tool and returns its CallToolResult, encoded. Failures are
// results with isError set, never JSON-RPC errors.
func (ts *toolSet) call(ctx context.Context, t *tool, rawArgs json.RawMessage) json.RawMessage {
	if limit, full := noWaitSlot(ctx); full && t.waits {
		return errorResult(tooManyWaits(limit, true), ts.redact)
	}
	if ts.cfg.ReadOnly && t.changesApp() {
		return errorResult(readOnlyError(t.name), ts.redact)
	}
	args, err := parseArgs(t.args, rawArgs)
	if err != nil {
		return errorResult(err, ts.redact)
	}
	// With no session at all, args.session is nil and the tool answers
	// NOT_CONNECTED once its own arguments have been checked.
	ref, _ := args.str("session")
	stream, ok := args.str("stream")
	if !ok {
		stream = t.stream
	}
	if args.session, err = ts.sessions.findFor(ref, stream); err != nil {
		return errorResult(err, ts.redact)
	}
	res, err := t.run(ctx, ts, args)
	if err != nil {
		if ctx.Err() != nil && toolErrorOf(err) == nil {
			return errorResult(newToolError(codeTimeout, map[string]any{"method": t.name}, "%s was cancelled", t.name), ts.redact)
		}
		return errorResult(err, ts.redact)
	}
	if !t.aboutServer {
		res.body = ts.sayWhoAnswered(res.body, args.session)
	}
	// Redacted before the budget is judged: the budget is for what is sent.
	res.body = ts.redact.JSON(res.body)
	if len(res.body) > ts.cfg.MaxResultBytes && !t.urgent {
		return errorResult(ts.overBudget(res), ts.redact)
	}
	return successResult(res.body)
}

// sayWhoAnswered adds to a result object which session answered, when more
// than one could have, and `live: false` when the app has left and the
// answer comes from what the server kept.
func (ts *toolSet) sayWhoAnswered(body []byte, s *session) []byte {
	if s == nil || len(body) < 2 || body[0] != '{' {
		return body
	}
	live := s.isLive()
	if live && ts.sessions.count() < 2 {
		return body
	}
	v := s.view()
	head, _ := json.Marshal(map[string]any{"id": v.ID, "app": nullable(v.AppName())})
	out := make([]byte, 0, len(body)+len(head)+32)
	out = append(out, `{"session":`...)
	out = append(out, head...)
	if !live {
		out = append(out, `,"live":false`...)
	}
	if rest := body[1:]; len(bytes.TrimSpace(rest)) > 1 {
		out = append(out, ',')
		return append(out, rest...)
	}
	return append(out, '}')
}

// overBudget describes a result too large to send, with an outline of where
// the bytes are so the agent can narrow its request in one more call.
func (ts *toolSet) overBudget(res *toolResult) *toolError {
	details := map[string]any{"size": len(res.body), "limit": ts.cfg.MaxResultBytes}
	if res.focus != nil {
		details["path"] = formatPath(res.focusPath)
		if outline, err := rawOutline(res.focus, res.focusPath); err == nil && len(outline) > 0 {
			details["outline"] = outline
		}
	}
	e := newToolError(codePayloadTooLarge, details, "the result is %d bytes, over the %d-byte budget (MAX_RESULT_BYTES)", len(res.body), ts.cfg.MaxResultBytes)
	e.Suggestion = res.narrow
	return e
}

// successResult wraps a result object as structuredContent and, for clients
// that read only content, as the same JSON in one text item.
func successResult(body []byte) json.RawMessage {
	out := make([]byte, 0, 2*len(body)+64)
	out = append(out, `{"content":[{"type":"text","text":`...)
	out = appendJSONString(out, body, false)
	out = append(out, `}],"structuredContent":`...)
	out = append(out, body...)
	return append(out, `,"isError":false}`...)
}

// errorResult encodes a failure, redacted by r: messages and details can
// quote the app's data. It carries no structuredContent: clients validate
// structuredContent against outputSchema even on errors.
func errorResult(err error, r *redactor) json.RawMessage {
	te := toolErrorOf(err)
	if te == nil {
		te = newToolError(codeAdapterError, nil, "%v", err)
	}
	body := map[string]any{"error": true, "code": te.Code, "message": te.Message}
	if te.Details != nil {
		body["details"] = te.Details
	}
	if s := cmp.Or(te.Suggestion, suggestions[te.Code]); s != "" {
		body["suggestion"] = s
	}
	data, _ := json.Marshal(body)
	data = r.JSON(data)
	out := append([]byte(`{"content":[{"type":"text","text":`), appendJSONString(nil, data, false)...)
	return append(out, `}],"isError":true}`...)
}

// parseArgs checks tool arguments against specs. Names are matched exactly
// (encoding/json would take "Stream" for "stream") and a repeated name is
// refused rather than silently merged. An explicit null is a wrong type: the
// schemas do not allow it, and reading it as absent would let a client's bug
// (an unset variable sent as null) pass as a request for the default.
func parseArgs(specs []argSpec, raw json.RawMessage) (toolArgs, error) {
	args := toolArgs{strings: map[string]string{}, ints: map[string]int64{}, objects: map[string]json.RawMessage{}}
	members := map[string][]byte{}
	names := namesOf(specs, func(s argSpec) string { return s.name })
	bad := func(name, problem string) error { return invalidParams(name, problem) }
	if err := strictMembers(raw, "tool", "an object", names, bad, func(name string, v []byte) error {
		members[name] = v
		return nil
	}); err != nil {
		return args, err
	}
	for _, s := range specs {
		v, ok := members[s.name]
		if !ok {
			if s.required {
				return args, invalidParams(s.name, "required")
			}
			if s.def != 0 {
				args.ints[s.name] = s.def
			}
			continue
		}
		switch s.kind {
		case argString:
			var str string
			if rawKind(v) != "string" || json.Unmarshal(v, &str) != nil {
				return args, invalidParams(s.name, "must be a string, not "+jsonKind(v))
			}
			args.strings[s.name] = str
		case argInteger:
			n, err := parseInteger(v, s)
			if err != nil {
				return args, err
			}
			args.ints[s.name] = n
		case argObject:
			if rawKind(v) != "object" {
				return args, invalidParams(s.name, "must be an object, not "+jsonKind(v))
			}
			args.objects[s.name] = compactJSON(v)
		}
	}
	return args, nil
}

// strictMembers walks the arguments object of a tool call or a prompt as
// both read it: absent or null is none, names match exactly, and a name
// given twice or not in takes is refused. shape says what the object must
// be, whose what takes it ("tool", "prompt"); bad words what is wrong with
// a member ("arguments": the whole), and each reads one member's value.
func strictMembers(raw json.RawMessage, whose, shape string, takes []string, bad func(name, problem string) error, each func(name string, v []byte) error) error {
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	if rawKind(raw) != "object" {
		return bad("arguments", "must be "+shape+", not "+jsonKind(raw))
	}
	seen := map[string]bool{}
	var problem error
	if eachMember(raw, func(name string, v []byte) bool {
		switch {
		case seen[name]:
			problem = bad(name, "given twice")
		case !slices.Contains(takes, name):
			problem = bad(name, "unknown argument; this "+whose+" takes "+argNames(takes))
		default:
			problem = each(name, v)
		}
		seen[name] = true
		return problem == nil
	}) != nil {
		return bad("arguments", "malformed JSON")
	}
	return problem
}

func namesOf[T any](items []T, name func(T) string) []string {
	names := make([]string, len(items))
	for i, item := range items {
		names[i] = name(item)
	}
	return names
}

// argNames lists the arguments a tool or a prompt takes for an error, "no
// arguments" when it takes none.
func argNames(names []string) string {
	if len(names) == 0 {
		return "no arguments"
	}
	return strings.Join(names, ", ")
}

// parseInteger reads an integer argument by decimalInteger's rules. Values
// beyond int64 saturate: since_seq 1e30 means "after everything", limit
// 1e30 is clamped to 200.
func parseInteger(v []byte, s argSpec) (int64, error) {
	if rawKind(v) != "number" {
		return 0, invalidParams(s.name, "must be an integer, not "+jsonKind(v))
	}
	n, _, ok := decimalInteger(v) // saturated beyond int64
	if !ok {
		return 0, invalidParams(s.name, fmt.Sprintf("must be an integer, not %s", v))
	}
	hi := cmp.Or(s.max, math.MaxInt64) // max 0: unbounded
	switch {
	case n >= s.min && n <= hi:
		return n, nil
	case s.clamp && n < s.min:
		return s.min, nil
	case s.clamp:
		return hi, nil
	case s.max != 0:
		// The range is named whichever end was passed.
		return 0, invalidParams(s.name, fmt.Sprintf("must be from %d to %d", s.min, s.max))
	case n < s.min:
		return 0, invalidParams(s.name, fmt.Sprintf("must be at least %d", s.min))
	}
	return 0, invalidParams(s.name, fmt.Sprintf("must be at most %d", hi))
}

// sessionArg is the optional `session` argument every tool takes. The
// health check's description says once what it takes (a session id or an
// app name), rather than each tool's schema.
var sessionArg = argSpec{name: "session", kind: argString}

func withSession(args ...argSpec) []argSpec { return append(args, sessionArg) }

func parsePathArg(name, path string) ([]pathSegment, error) {
	segs, err := parsePath(path)
	if err != nil {
		return nil, invalidParams(name, err.Error())
	}
	return segs, nil
}

// encodeResult is the answer v, with narrow the suggestion when it is over
// the result budget.
func encodeResult(v any, narrow string) (*toolResult, error) {
	body, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return &toolResult{body: body, narrow: narrow}, nil
}
