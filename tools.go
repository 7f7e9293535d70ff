package main

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// argKind is the JSON type a tool argument must have.
type argKind int

const (
	argString argKind = iota
	argInteger
	argObject // a JSON object, kept as JSON
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

// tool is one MCP tool: its description for clients and the function that
// answers a call with parsed arguments.
type tool struct {
	name, title, description string
	args                     []argSpec
	outputSchema             string
	run                      func(ctx context.Context, ts *toolSet, a toolArgs) (*toolResult, error)
	hints                    *toolHints // nil: reads only (readOnlyHints)
}

// toolHints are a tool's MCP annotations.
type toolHints struct {
	ReadOnly    bool `json:"readOnlyHint"`
	Destructive bool `json:"destructiveHint"`
	Idempotent  bool `json:"idempotentHint"`
	OpenWorld   bool `json:"openWorldHint"`
}

// readOnlyHints are the annotations of a tool that only reads.
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

// changesApp reports whether the tool acts on the app rather than reading
// it; READ_ONLY withholds such tools.
func (t *tool) changesApp() bool { return t.hints != nil && !t.hints.ReadOnly }

// toolArgs holds validated arguments: strings and integers by name, and
// the session the `session` argument named (nil for the health check when
// no app has connected).
type toolArgs struct {
	strings map[string]string
	ints    map[string]int64
	objects map[string]json.RawMessage
	session *session
}

func (a toolArgs) str(name string) (string, bool) { s, ok := a.strings[name]; return s, ok }
func (a toolArgs) int(name string) (int64, bool)  { n, ok := a.ints[name]; return n, ok }
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

// toolSet is the registry of tools, with their tools/list reply encoded once.
type toolSet struct {
	adapterQueries
	reactotronStatus func() *healthListener // nil: no bridge
	byName           map[string]*tool
	names            []string
	listJSON         json.RawMessage
}

func newToolSet(cfg config, link *adapterLink) *toolSet {
	q := adapterQueries{cfg: cfg, link: link, redact: newRedactor(cfg)}
	if link != nil {
		q.sessions = link.sessions
	}
	ts := &toolSet{adapterQueries: q, byName: make(map[string]*tool)}
	var list []map[string]any
	for _, t := range allTools {
		ts.byName[t.name] = t
		if cfg.ReadOnly && t.changesApp() {
			continue // listed nowhere; a call is refused (toolSet.call)
		}
		ts.names = append(ts.names, t.name)
		hints := readOnlyHints
		if t.hints != nil {
			hints = *t.hints
		}
		list = append(list, map[string]any{
			"name":         t.name,
			"title":        t.title,
			"description":  t.description,
			"inputSchema":  inputSchema(t.args),
			"outputSchema": json.RawMessage(t.outputSchema),
			"annotations":  hints,
		})
	}
	data, err := json.Marshal(map[string]any{"tools": list})
	if err != nil {
		panic(fmt.Sprintf("encode tools/list: %v", err)) // static data: a bug, caught by every test
	}
	ts.listJSON = data
	return ts
}

func inputSchema(args []argSpec) map[string]any {
	props := map[string]any{}
	required := []string{}
	for _, a := range args {
		p := map[string]any{"description": a.description}
		switch a.kind {
		case argString:
			p["type"] = "string"
		case argInteger:
			p["type"] = "integer"
			if !a.clamp {
				p["minimum"] = a.min
			}
			if a.def != 0 {
				p["default"] = a.def
			}
		case argObject:
			p["type"] = "object"
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
	if args.session, err = ts.sessions.find(ref); err != nil {
		return errorResult(err, ts.redact)
	}
	res, err := t.run(ctx, ts, args)
	if err != nil {
		if ctx.Err() != nil && asToolError(err) == nil {
			return errorResult(newToolError(codeTimeout, map[string]any{"method": t.name}, "%s was cancelled", t.name), ts.redact)
		}
		return errorResult(err, ts.redact)
	}
	if t.name != "debug_health_check" {
		res.body = ts.sayWhoAnswered(res.body, args.session)
	}
	// Redacted before the budget is judged: the budget is for what is sent.
	// The health check keeps to the budget by summarising, never failing.
	res.body = ts.redact.JSON(res.body)
	if len(res.body) > ts.cfg.MaxResultBytes && t.name != "debug_health_check" {
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
	te := asToolError(err)
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
// refused rather than silently merged. An explicit null is refused like any
// other wrong type ("must be a string, not null"): the input schemas say
// string or integer, not null, and reading null as "absent" would let a
// client's bug (an unset variable sent as null) pass as a request for the
// default.
func parseArgs(specs []argSpec, raw json.RawMessage) (toolArgs, error) {
	args := toolArgs{strings: map[string]string{}, ints: map[string]int64{}, objects: map[string]json.RawMessage{}}
	members := map[string][]byte{}
	if len(raw) > 0 && string(raw) != "null" {
		if rawKind(raw) != "object" {
			return args, invalidParams("arguments", "must be an object, not "+jsonKind(raw))
		}
		var problem error
		err := eachMember(raw, func(name string, v []byte) bool {
			if _, dup := members[name]; dup {
				problem = invalidParams(name, "given twice")
				return false
			}
			if !slices.ContainsFunc(specs, func(s argSpec) bool { return s.name == name }) {
				problem = invalidParams(name, "unknown argument; this tool takes "+argNames(specs))
				return false
			}
			members[name] = v
			return true
		})
		if err != nil {
			return args, invalidParams("arguments", "malformed JSON")
		}
		if problem != nil {
			return args, problem
		}
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

func argNames(specs []argSpec) string {
	if len(specs) == 0 {
		return "no arguments"
	}
	names := make([]string, len(specs))
	for i, s := range specs {
		names[i] = s.name
	}
	return strings.Join(names, ", ")
}

// parseInteger reads an integer argument. Integral values written as 5.0 or
// 5e1 are accepted, as JSON Schema's "integer" accepts them; fractions are
// refused. Values beyond int64 saturate: since_seq 1e30 means "after
// everything", limit 1e30 is clamped to 200.
func parseInteger(v []byte, s argSpec) (int64, error) {
	if rawKind(v) != "number" {
		return 0, invalidParams(s.name, "must be an integer, not "+jsonKind(v))
	}
	n, err := strconv.ParseInt(string(v), 10, 64) // exact, beyond 2^53 too
	if err != nil {
		f, ferr := strconv.ParseFloat(string(v), 64)
		switch {
		case ferr != nil && !isRangeError(ferr), f != math.Trunc(f), f == 0 && nonZeroMantissa(v):
			return 0, invalidParams(s.name, fmt.Sprintf("must be an integer, not %s", v))
		case f >= math.MaxInt64:
			n = math.MaxInt64
		case f <= math.MinInt64:
			n = math.MinInt64
		default:
			n = int64(f)
		}
	}
	hi := int64(math.MaxInt64)
	if s.max != 0 {
		hi = s.max
	}
	switch {
	case n >= s.min && n <= hi:
		return n, nil
	case s.clamp && n < s.min:
		return s.min, nil
	case s.clamp:
		return hi, nil
	case n < s.min:
		return 0, invalidParams(s.name, fmt.Sprintf("must be at least %d", s.min))
	}
	return 0, invalidParams(s.name, fmt.Sprintf("must be at most %d", hi))
}

// nonZeroMantissa reports whether a number's digits before any exponent
// are not all zero: 1e-400 parses as 0 but is no integer.
func nonZeroMantissa(v []byte) bool {
	mantissa, _, _ := strings.Cut(strings.ToLower(string(v)), "e")
	return strings.ContainsAny(mantissa, "123456789")
}

func isRangeError(err error) bool {
	ne, ok := err.(*strconv.NumError)
	return ok && ne.Err == strconv.ErrRange
}

// parsePathArg parses a path argument, reporting a malformed one as INVALID_PARAMS.
// sessionArg is the optional `session` argument every tool takes.
var sessionArg = argSpec{name: "session", kind: argString,
	description: "Session id or app name."}

// withSession appends sessionArg to a tool's own arguments.
func withSession(args ...argSpec) []argSpec { return append(args, sessionArg) }

func parsePathArg(name, path string) ([]pathSegment, error) {
	segs, err := parsePath(path)
	if err != nil {
		return nil, invalidParams(name, err.Error())
	}
	return segs, nil
}

// The tools. Descriptions are written for an agent: what the tool answers,
// when to use it, what to call next. tools/list must stay under 9 000 bytes.
var allTools = []*tool{
	{
		name:  "debug_health_check",
		title: "Health check",
		description: "Call first. Says whether the app's debug adapter is connected, which app session it is, " +
			"and which streams (redux, navigation, mmkv, …) it offers with event counts. Never fails; " +
			"if not connected, the app must be started with its adapter enabled.",
		outputSchema: `{"type":"object","properties":{"connected":{"type":"boolean"},"adapter":{"type":["object","null"]},"streams":{"type":"array"},"server":{"type":"object"},"stale":{"type":"boolean"}},"required":["connected","adapter","streams","server"]}`,
		args:         withSession(),
		run:          healthCheck,
	},
	{
		name:  "debug_list_streams",
		title: "List streams",
		description: "Lists the app's event streams with event counts, the seq range held (oldestSeq–latestSeq) " +
			"and whether a snapshot exists. Use before debug_query_events or debug_diff_snapshots to pick seqs.",
		outputSchema: `{"type":"object","properties":{"streams":{"type":"array"}},"required":["streams"]}`,
		args:         withSession(),
		run:          listStreams,
	},
	{
		name:  "debug_get_snapshot",
		title: "Get current state of a stream",
		description: "Returns the current state of a stream: the Redux store, the navigation tree (focused screen = " +
			"routes[index], recursively through nested `state`), or MMKV storage by instance. Pass `scope` to get " +
			"only part of it; if the answer is too large the error outlines the biggest children to scope to.",
		args: withSession(
			argSpec{name: "stream", kind: argString, required: true, description: "Stream name, e.g. redux, navigation, mmkv."},
			argSpec{name: "scope", kind: argString, description: "Path inside the state, e.g. cart.items.0 or, for mmkv, auth.keys.session. Keys with dots or digits only: settings[\"theme.dark\"]."},
		),
		outputSchema: `{"type":"object","properties":{"stream":{"type":"string"},"seq":{"type":"integer"},"timestamp":{"type":"string"},"scope":{"type":"string"},"state":{}},"required":["stream","seq","timestamp","state"]}`,
		run:          getSnapshot,
	},
	{
		name:  "debug_query_events",
		title: "Query events",
		description: "Returns a stream's recent events (Redux actions, route changes, MMKV mutations, snapshots), " +
			"ascending. Without since_seq: the newest `limit`; with it: the oldest `limit` after it. " +
			"Snapshot events' seqs feed debug_diff_snapshots.",
		args: withSession(
			argSpec{name: "stream", kind: argString, required: true, description: "Stream name, e.g. redux."},
			argSpec{name: "limit", kind: argInteger, min: 1, max: 200, def: 50, clamp: true, description: "How many events, 1-200 (default 50)."},
			argSpec{name: "since_seq", kind: argInteger, min: 0, description: "Only events with seq greater than this."},
			argSpec{name: "event_type", kind: argString, description: "Only events of this type, e.g. action_dispatched, route_change, state_snapshot."},
		),
		outputSchema: `{"type":"object","properties":{"events":{"type":"array","items":{"type":"object"}},"hasMore":{"type":"boolean"},"oldestSeq":{"type":"integer"},"latestSeq":{"type":"integer"}},"required":["events","hasMore","oldestSeq","latestSeq"]}`,
		run:          queryEvents,
	},
	{
		name:  "debug_get_state_path",
		title: "Read a Redux state path",
		description: "Returns the value at one path of the current Redux state, e.g. auth.user.role or cart.items.0. " +
			"\"\" is the root. If the path is missing, the error names the deepest part that exists and its keys.",
		args: withSession(
			argSpec{name: "path", kind: argString, required: true, description: "Dot path; array indexes as .0; odd keys as [\"a.b\"]. \"\" for the root."},
		),
		outputSchema: `{"type":"object","properties":{"path":{"type":"string"},"value":{}},"required":["path","value"]}`,
		run:          getStatePath,
	},
	{
		name:  "debug_diff_snapshots",
		title: "Diff two snapshots",
		description: "Lists what changed between two snapshot events of a stream: each path added, removed or changed " +
			"with old and new values (first 500). Find snapshot seqs with debug_query_events (event_type " +
			"state_snapshot, navigation_snapshot or mmkv_snapshot).",
		args: withSession(
			argSpec{name: "stream", kind: argString, required: true, description: "Stream name, e.g. redux."},
			argSpec{name: "base_seq", kind: argInteger, required: true, min: 1, description: "Seq of the earlier snapshot event."},
			argSpec{name: "target_seq", kind: argInteger, required: true, min: 1, description: "Seq of the later snapshot event."},
		),
		outputSchema: `{"type":"object","properties":{"changes":{"type":"array"},"baseSeq":{"type":"integer"},"targetSeq":{"type":"integer"},"totalChanges":{"type":"integer"},"truncated":{"type":"boolean"}},"required":["changes","baseSeq","targetSeq"]}`,
		run:          diffSnapshots,
	},
}

// timeFormat is RFC 3339 with milliseconds, as the wire protocol's timestamps.
const timeFormat = "2006-01-02T15:04:05.000Z07:00"

// maxDiffChanges is how many changes one diff result lists.
const maxDiffChanges = 500

// healthStreamsTimeout bounds the live streams.list of a health check.
const healthStreamsTimeout = time.Second

// healthOutput is debug_health_check's result. Structs, not maps: this is
// the most called tool, and maps cost a sort and an allocation per key.
type healthOutput struct {
	Adapter       *healthAdapter  `json:"adapter"`
	Connected     bool            `json:"connected"`
	Server        healthServer    `json:"server"`
	Sessions      []healthSession `json:"sessions"`
	Stale         bool            `json:"stale,omitempty"`
	Streams       []healthStream  `json:"streams"`
	StreamsTotal  int             `json:"streamsTotal,omitempty"`  // set when streams lists only the first ones
	SessionsTotal int             `json:"sessionsTotal,omitempty"` // set when sessions lists only the first ones
}

// maxHealthStreams bounds the streams a health check lists in full, per
// session: the health check never fails, not even for PAYLOAD_TOO_LARGE.
const maxHealthStreams = 100

type healthAdapter struct {
	AdapterVersion string `json:"adapterVersion"`
	ConnectedAt    string `json:"connectedAt"`
	SessionID      string `json:"sessionId"`
	Uptime         int64  `json:"uptime"`
}

type healthServer struct {
	ListenError string          `json:"listenError,omitempty"`
	Listening   bool            `json:"listening"`
	Reactotron  *healthListener `json:"reactotron,omitempty"`
	Redaction   string          `json:"redaction"` // "on" or "off" (REDACT)
	Version     string          `json:"version"`
	WSURL       string          `json:"wsUrl"`
}

// healthListener is the state of the Reactotron bridge's listener.
type healthListener struct {
	ListenError string `json:"listenError,omitempty"`
	Listening   bool   `json:"listening"`
	URL         any    `json:"url"` // null when the bridge is off
}

type healthSession struct {
	App            any             `json:"app"`
	Connected      bool            `json:"connected"`
	ConnectedAt    string          `json:"connectedAt"`
	Device         json.RawMessage `json:"device"`
	DisconnectedAt *string         `json:"disconnectedAt,omitempty"`
	ID             string          `json:"id"`
	Streams        []string        `json:"streams"`
	StreamsTotal   int             `json:"streamsTotal,omitempty"`
	Via            string          `json:"via"`
}

type healthStream struct {
	Active      bool    `json:"active"`
	EventCount  int64   `json:"eventCount"`
	LastEventAt *string `json:"lastEventAt"`
	Name        string  `json:"name"`
}

func healthCheck(ctx context.Context, ts *toolSet, a toolArgs) (*toolResult, error) {
	st := ts.link.status()
	out := healthOutput{
		Server:   healthServer{ListenError: st.ListenError, Listening: st.Listening, Redaction: ts.redact.Mode(), Version: version, WSURL: st.WSURL},
		Streams:  []healthStream{},
		Sessions: []healthSession{},
	}
	if ts.reactotronStatus != nil {
		out.Server.Reactotron = ts.reactotronStatus()
	}
	for _, s := range ts.sessions.list() {
		out.Sessions = append(out.Sessions, describeSession(s.view()))
	}
	if a.session == nil || !a.session.isLive() {
		return ts.healthResult(out)
	}
	v := a.session.view()
	info := v.Info
	out.Connected = true
	out.Adapter = &healthAdapter{AdapterVersion: info.AdapterVersion, ConnectedAt: info.ConnectedAt.UTC().Format(timeFormat),
		SessionID: info.SessionID, Uptime: uptime(info)}
	ctx, cancel := context.WithTimeout(ctx, min(ts.cfg.RequestTimeout, healthStreamsTimeout))
	defer cancel()
	if live, err := ts.fetchStreams(ctx, a.session); err == nil {
		for _, s := range live {
			out.Streams = append(out.Streams, healthStream{Active: s.Active, EventCount: s.EventCount, LastEventAt: s.LastEventAt, Name: s.Name})
		}
	} else {
		// The app is slow or misbehaving: report what the handshake and
		// pushes said, marked stale, rather than fail or wait.
		for _, s := range info.Streams {
			out.Streams = append(out.Streams, healthStream{Active: s.Active, EventCount: s.EventCount, LastEventAt: formatTime(s.LastEventAt), Name: s.Name})
		}
		out.Stale = true
	}
	if len(out.Streams) > maxHealthStreams {
		out.StreamsTotal = len(out.Streams)
		out.Streams = out.Streams[:maxHealthStreams]
	}
	return ts.healthResult(out)
}

// firstSessions keeps the first n sessions, recording how many there were.
func firstSessions(all []healthSession, total, n int) ([]healthSession, int) {
	if len(all) <= n {
		return all, total
	}
	return all[:n], max(total, len(all))
}

// healthResult encodes a health check within the result budget: the health
// check never fails, so beyond the budget it summarises, each step saying
// what it left out — first the sessions' stream names, then all but the
// first streams, then all but the first sessions.
func (ts *toolSet) healthResult(out healthOutput) (*toolResult, error) {
	budget := ts.cfg.MaxResultBytes - 256 // room for the session and redaction marks
	steps := []func(){
		func() {
			for i := range out.Sessions {
				if n := len(out.Sessions[i].Streams); n > 0 {
					out.Sessions[i].StreamsTotal = max(out.Sessions[i].StreamsTotal, n)
					out.Sessions[i].Streams = []string{}
				}
			}
		},
		func() {
			if len(out.Streams) > 5 {
				out.StreamsTotal = max(out.StreamsTotal, len(out.Streams))
				out.Streams = out.Streams[:5]
			}
		},
		func() { out.Sessions, out.SessionsTotal = firstSessions(out.Sessions, out.SessionsTotal, 3) },
		func() { out.Sessions, out.SessionsTotal = firstSessions(out.Sessions, out.SessionsTotal, 1) },
		func() {
			out.StreamsTotal = max(out.StreamsTotal, len(out.Streams))
			out.Streams = []healthStream{}
		},
	}
	res, err := encodeResult(out)
	for _, step := range steps {
		if err != nil || len(res.body) <= budget {
			break
		}
		step()
		res, err = encodeResult(out)
	}
	return res, err
}

// describeSession is a session's entry in debug_health_check and
// debug://sessions.
func describeSession(v sessionView) healthSession {
	h := healthSession{ID: v.ID, App: nullable(v.AppName()), Via: v.Via, Connected: v.Connected,
		ConnectedAt: v.Info.ConnectedAt.UTC().Format(timeFormat), Device: rawOrNull(v.Info.Device), Streams: []string{}}
	if !v.Connected {
		h.DisconnectedAt = formatTime(v.DisconnectedAt)
	}
	for i, st := range v.Info.Streams {
		if i == maxHealthStreams {
			h.StreamsTotal = len(v.Info.Streams)
			break
		}
		h.Streams = append(h.Streams, st.Name)
	}
	return h
}

// uptime is how long the adapter has run in whole seconds: since the
// handshake's startedAt, else since it connected.
func uptime(a *adapterInfo) int64 {
	since := a.ConnectedAt
	if !a.StartedAt.IsZero() {
		since = a.StartedAt
	}
	return max(0, int64(time.Since(since)/time.Second))
}

// formatTime formats t for a JSON answer; the zero time is null.
func formatTime(t time.Time) *string {
	if t.IsZero() {
		return nil
	}
	s := t.UTC().Format(timeFormat)
	return &s
}

func listStreams(ctx context.Context, ts *toolSet, a toolArgs) (*toolResult, error) {
	streams, err := ts.fetchStreams(ctx, a.session)
	if err != nil {
		return nil, err
	}
	out := make([]map[string]any, len(streams))
	for i, s := range streams {
		m := map[string]any{"name": s.Name, "active": s.Active, "eventCount": s.EventCount,
			"latestSeq": s.LatestSeq, "oldestSeq": s.OldestSeq, "hasSnapshot": s.HasSnapshot}
		if s.Instances != nil {
			m["instances"] = *s.Instances
		}
		out[i] = m
	}
	return encodeResult(map[string]any{"streams": out})
}

func getSnapshot(ctx context.Context, ts *toolSet, a toolArgs) (*toolResult, error) {
	stream, _ := a.str("stream")
	scope, hasScope := a.str("scope")
	segs, err := parsePathArg("scope", scope)
	if err != nil {
		return nil, err
	}
	snap, value, err := ts.stateAt(ctx, a.session, stream, scope, segs, codeScopeNotFound)
	if err != nil {
		return nil, err
	}
	var o jsonObject
	o.value("stream", stream)
	o.raw("seq", snap.seq)
	o.raw("timestamp", snap.timestamp)
	if hasScope {
		o.value("scope", scope)
	}
	o.raw("state", value)
	return &toolResult{body: o.close(), focus: value, focusPath: segs,
		narrow: "Call debug_get_snapshot again with `scope` set to one of the outline's paths."}, nil
}

func getStatePath(ctx context.Context, ts *toolSet, a toolArgs) (*toolResult, error) {
	path, _ := a.str("path")
	segs, err := parsePathArg("path", path)
	if err != nil {
		return nil, err
	}
	_, value, err := ts.stateAt(ctx, a.session, "redux", path, segs, codePathNotFound)
	if err != nil {
		return nil, err
	}
	var o jsonObject
	o.value("path", path)
	o.raw("value", value)
	return &toolResult{body: o.close(), focus: value, focusPath: segs,
		narrow: "Call debug_get_state_path again with one of the outline's paths."}, nil
}

func queryEvents(ctx context.Context, ts *toolSet, a toolArgs) (*toolResult, error) {
	stream, _ := a.str("stream")
	if err := ts.checkStream(a.session, stream); err != nil {
		return nil, err
	}
	limit, _ := a.int("limit")
	params := eventsParams{Stream: stream, Limit: limit}
	if since, ok := a.int("since_seq"); ok {
		params.SinceSeq = &since
	}
	params.EventType, _ = a.str("event_type")
	raw, err := a.session.request(ctx, "events.query", params)
	if err != nil {
		return nil, err
	}
	events, hasMore, oldest, latest, err := splitEventsAnswer(raw)
	if err != nil {
		return nil, err
	}
	var o jsonObject
	o.raw("events", compactJSON(events))
	o.raw("hasMore", hasMore)
	o.raw("oldestSeq", oldest)
	o.raw("latestSeq", latest)
	return &toolResult{body: o.close(),
		narrow: "Ask for fewer events with a smaller `limit`, or filter with `event_type`."}, nil
}

func diffSnapshots(ctx context.Context, ts *toolSet, a toolArgs) (*toolResult, error) {
	stream, _ := a.str("stream")
	baseSeq, _ := a.int("base_seq")
	targetSeq, _ := a.int("target_seq")
	if err := ts.checkStream(a.session, stream); err != nil {
		return nil, err
	}
	var wg sync.WaitGroup
	var base, target snapshot
	var baseErr, targetErr error
	wg.Go(func() { base, baseErr = ts.fetchSnapshot(ctx, a.session, stream, baseSeq) })
	target, targetErr = ts.fetchSnapshot(ctx, a.session, stream, targetSeq)
	wg.Wait()
	var missing []string
	for _, e := range []struct {
		name string
		err  error
	}{{"base_seq", baseErr}, {"target_seq", targetErr}} {
		if te := asToolError(e.err); te != nil && te.Code == codeSnapshotNotFound {
			missing = append(missing, e.name)
		} else if e.err != nil {
			return nil, e.err
		}
	}
	if len(missing) > 0 {
		return nil, newToolError(codeSnapshotNotFound, map[string]any{"missing": missing},
			"no snapshot event with %s in stream %q", describeMissing(missing, baseSeq, targetSeq), stream)
	}
	baseState, err1 := decodeState(base.state)
	targetState, err2 := decodeState(target.state)
	if err1 != nil || err2 != nil {
		return nil, malformedAnswer("snapshot.get", "state is not valid JSON")
	}
	changes, total := diffValues(baseState, targetState, maxDiffChanges)
	ts.redact.Changes(changes) // on the unredacted diff, so a changed token still shows
	if changes == nil {
		changes = []change{}
	}
	body, err := json.Marshal(map[string]any{"changes": changes, "baseSeq": baseSeq, "targetSeq": targetSeq,
		"totalChanges": total, "truncated": total > len(changes)})
	if err != nil {
		return nil, err
	}
	return &toolResult{body: body,
		narrow: "The changed values are large: read them with debug_get_snapshot and a `scope` from the changes' paths."}, nil
}

func describeMissing(missing []string, baseSeq, targetSeq int64) string {
	var parts []string
	for _, m := range missing {
		if m == "base_seq" {
			parts = append(parts, fmt.Sprintf("base_seq %d", baseSeq))
		} else {
			parts = append(parts, fmt.Sprintf("target_seq %d", targetSeq))
		}
	}
	return strings.Join(parts, " or ")
}

// decodeState decodes a state for diffing; numbers stay exact as json.Number.
func decodeState(data []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if dec.More() {
		return nil, errors.New("trailing data after the JSON value")
	}
	return v, nil
}

func encodeResult(v any) (*toolResult, error) {
	body, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return &toolResult{body: body}, nil
}

// jsonObject builds a JSON object by appending members, so that large raw
// values are copied once instead of re-encoded.
type jsonObject struct{ buf []byte }

func (o *jsonObject) key(name string) {
	if len(o.buf) == 0 {
		o.buf = append(o.buf, '{')
	} else {
		o.buf = append(o.buf, ',')
	}
	o.buf = appendJSONString(o.buf, name, false)
	o.buf = append(o.buf, ':')
}

// raw adds a member whose value is already JSON.
func (o *jsonObject) raw(name string, value []byte) {
	o.key(name)
	o.buf = append(o.buf, value...)
}

// value adds a member encoded with encoding/json.
func (o *jsonObject) value(name string, v any) {
	data, err := json.Marshal(v)
	if err != nil {
		data = []byte("null")
	}
	o.raw(name, data)
}

func (o *jsonObject) close() []byte {
	if len(o.buf) == 0 {
		return []byte("{}")
	}
	return append(o.buf, '}')
}
