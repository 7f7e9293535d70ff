package main

// tool_app.go holds the tools of what the app logged (`console`) and
// fetched (`network`), and those that act on the app to reproduce a bug
// through the optional requests state.dispatch and commands.* (wire
// protocol, "Acting on the app"), offered only by apps that advertise them.

import (
	"context"
	"encoding/json"
	"slices"
	"time"
)

const (
	// maxScanEvents bounds how far back a filtered logs or network query
	// looks: the newest this many events of the stream.
	maxScanEvents = 5000
	// scanPage is the events.query limit of each page of a filtered query.
	scanPage = 200
	// maxStackFrames is how many lines of a stack a log entry keeps.
	maxStackFrames = 8
	// maxLogMessage is how many characters of a log message an entry keeps.
	maxLogMessage = 2000
	// maxSummaryURL is how many characters of a URL a network summary keeps.
	maxSummaryURL = 300
	// maxDispatchChanges is how many changed paths a dispatch result lists.
	maxDispatchChanges = 100
	// commandSettle is how long debug_run_command collects the events that
	// follow a command an app does not answer (Reactotron).
	commandSettle = time.Second
	// maxFollowedEvents is how many followed events per stream it returns.
	maxFollowedEvents = 50
	// budgetMargin leaves room in the result budget for what toolSet.call
	// adds to a result (the answering session).
	budgetMargin = 512
)

// Event types of the console and network streams (wire protocol §3).
const (
	consoleStream   = "console"
	networkStream   = "network"
	logEventType    = "log"
	requestEvent    = "http_request"
	dispatchedEvent = "action_dispatched"
)

// The paging arguments of debug_get_logs and debug_get_network.
var (
	sinceSeqArg    = argSpec{name: "since_seq", kind: argInteger, min: 0, description: "Only after this seq."}
	newestLimitArg = argSpec{name: "limit", kind: argInteger, min: 1, max: 200, def: 50, clamp: true, description: "1-200; the newest unless since_seq."}
)

var appTools = []*tool{
	{
		name:  "debug_get_logs",
		title: "Get console logs",
		description: "The app's console logs, oldest first, stacks cut short. Start here when something failed " +
			"(level error), then debug_get_network. Poll with since_seq = latestSeq.",
		args: withSession(
			levelArg, containsArg, sinceSeqArg, newestLimitArg,
		),
		outputSchema: `{"type":"object","properties":{"entries":{"type":"array","items":{"type":"object","properties":{"seq":{"type":"integer"},"timestamp":{},"level":{"type":"string"},"message":{"type":"string"},"stack":{},"moreFrames":{"type":"integer"},"hiddenFrames":{"type":"integer"},"symbolicated":{"type":"boolean"}}}},"hasMore":{"type":"boolean"},"latestSeq":{"type":"integer"},"symbolication":{"type":"object","properties":{"status":{"type":"string"},"reason":{"type":"string"},"hint":{"type":"string"}},"required":["status","reason"]},` + whoAnswered + `},"required":["entries","hasMore","latestSeq"]}`,
		run:          getLogs,
		stream:       consoleStream,
	},
	{
		name:  "debug_get_network",
		title: "Get network requests",
		description: "The app's HTTP requests as one-line summaries, oldest first; status null: no response. " +
			"Then pass a summary's seq for that exchange in full: headers, params, bodies.",
		args: withSession(
			statusArg, methodArg, urlContainsArg, sinceSeqArg, newestLimitArg,
			argSpec{name: "seq", kind: argInteger, min: 1, description: "One request in full."},
		),
		// Two shapes: the summaries, or with seq one exchange (the app's event payload, as sent).
		outputSchema: `{"type":"object","properties":{"requests":{"type":"array","items":{"type":"object","properties":{"seq":{"type":"integer"},"timestamp":{},"method":{"type":"string"},"url":{"type":"string"},"status":{},"durationMs":{},"responseBytes":{"type":"integer"},"error":{"type":"string"}}}},"hasMore":{"type":"boolean"},"latestSeq":{"type":"integer"},"seq":{"type":"integer"},"timestamp":{},"method":{},"url":{},"status":{},"durationMs":{},"request":{},"response":{},"error":{},` + whoAnswered + `}}`,
		run:          getNetwork,
		stream:       networkStream,
	},
	{
		name:  "debug_dispatch_action",
		title: "Dispatch an action",
		description: "Dispatches an action into the app's Redux or MobX-State-Tree store, to reproduce a bug or try a fix. " +
			"Answers with the action_dispatched event and the state paths it changed; then debug_wait_for(since_seq=event.seq).",
		args: withSession(
			argSpec{name: "action", kind: argObject, required: true, description: "{\"type\":\"cart/clear\"}, or for MST {\"name\":\"toggle\",\"path\":\"/todos/0\"}"},
		),
		outputSchema: `{"type":"object","properties":{"event":{"type":"object","properties":{"stream":{"type":"string"},"seq":{"type":"integer"},"type":{"type":"string"},"timestamp":{},"payload":{}}},"changes":{"type":"array","items":{"type":"object","properties":{"path":{"type":"string"},"type":{"type":"string"},"oldValue":{},"newValue":{}}}},"totalChanges":{"type":"integer"},"truncated":{"type":"boolean"},"changesFrom":{"type":"string"},"valuesOmitted":{"type":"boolean"},` + whoAnswered + `},"required":["event","changes"]}`,
		run:          dispatchAction,
		stream:       "redux",
		hints:        &toolHints{Destructive: true},
	},
	{
		name:         "debug_list_commands",
		title:        "List app commands",
		description:  "The commands the app registered (e.g. clearCart) and their args, for debug_run_command.",
		args:         withSession(),
		outputSchema: `{"type":"object","properties":{"commands":{"type":"array","items":{"type":"object","properties":{"command":{"type":"string"},"title":{"type":"string"},"description":{"type":"string"},"args":{}}}},` + whoAnswered + `},"required":["commands"]}`,
		run:          listCommands,
	},
	{
		name:  "debug_run_command",
		title: "Run an app command",
		description: "Runs one of debug_list_commands' commands. Answers with the app's result and latestSeqs, the since_seq " +
			"for debug_wait_for, or, for apps that do not answer (Reactotron), the events of every stream in the second after.",
		args: withSession(
			argSpec{name: "command", kind: argString, required: true, description: "Command name."},
			argSpec{name: "args", kind: argObject, description: "Arguments by name."},
		),
		outputSchema: `{"type":"object","properties":{"command":{"type":"string"},"result":{},"latestSeqs":{"type":"object"},"streams":{"type":"array","items":{"type":"object","properties":{"stream":{"type":"string"},"events":{"type":"array"},"hasMore":{"type":"boolean"}}}},` + whoAnswered + `},"required":["command"]}`,
		run:          runCommand,
		hints:        &toolHints{Destructive: true, OpenWorld: true},
	},
}

// readOnlyError refuses a tool that changes the app under READ_ONLY.
func readOnlyError(name string) *toolError {
	e := newToolError(codeNotSupported, map[string]any{"tool": name, "readOnly": true},
		"%s changes the app, and this server runs read-only (READ_ONLY)", name)
	e.Suggestion = "Use the read-only tools, or restart the server without READ_ONLY / -read-only."
	return e
}

// requireCapability is NOT_SUPPORTED, naming what the app would need, when
// the session does not offer capability.
func (q *adapterQueries) requireCapability(s *session, capability, what string) error {
	if err := q.present(s); err != nil {
		return err
	}
	if s.offers(capability) {
		return nil
	}
	if s.via == sessionViaMetro {
		return &errMetroNoState{Method: what}
	}
	v := s.view()
	caps := []string{}
	if v.Info != nil && v.Info.Capabilities != nil {
		caps = v.Info.Capabilities
	}
	e := newToolError(codeNotSupported, map[string]any{"capability": capability, "capabilities": caps},
		"the app of session %s does not offer %s: its debug adapter would need to list %q in its handshake's capabilities and answer %s (docs/protocol.md, \"Acting on the app\")",
		v.ID, what, capability, capabilityRequests[capability])
	e.Suggestion = "Add the capability to the app's debug adapter, or use the read-only tools."
	return e
}

// capabilityRequests names the requests each capability promises.
var capabilityRequests = map[string]string{
	capStateDispatch: "state.dispatch",
	capCommands:      "commands.list and commands.run",
}

// ---------------------------------------------------------------------------
// debug_dispatch_action

func dispatchAction(ctx context.Context, ts *toolSet, a toolArgs) (*toolResult, error) {
	action, _ := a.object("action")
	s := a.session
	if typ, ok := wireString(rawMember(action, "type")); (!ok || typ == "") && !namedAction(s, action) {
		return nil, invalidParams("action", "must have a non-empty string `type` (a MobX-State-Tree app takes {name, path, args})")
	}
	if err := ts.requireCapability(s, capStateDispatch, "state.dispatch"); err != nil {
		return nil, err
	}
	if err := ts.checkStream(s, "redux"); err != nil {
		return nil, err
	}
	before, err := ts.fetchSnapshot(ctx, s, "redux", 0)
	if err != nil {
		return nil, err
	}
	// An app that does not answer (Reactotron) records the action a moment
	// later: only events after this one can be it.
	fireAndForget := !s.answersActions()
	var after int64
	if fireAndForget {
		page, err := ts.fetchEvents(ctx, s, eventsParams{Stream: "redux", Limit: 1})
		if err != nil {
			return nil, err
		}
		after = page.latestSeq
	}
	raw, err := s.request(ctx, "state.dispatch", dispatchParams{Action: action})
	if err != nil {
		return nil, err
	}
	if _, ok := wireInt(rawMember(raw, "seq")); !ok && fireAndForget {
		if err := ts.settle(ctx); err != nil {
			return nil, err
		}
	}
	event, err := ts.dispatchedEvent(ctx, s, raw, action, after)
	if err != nil {
		return nil, err
	}
	changes, total, from, err := ts.dispatchChanges(ctx, s, event, before)
	if err != nil {
		return nil, err
	}
	out := map[string]any{"event": json.RawMessage(compactJSON(event)), "changes": changes,
		"totalChanges": total, "truncated": total > len(changes), "changesFrom": from}
	body, err := json.Marshal(out)
	if err == nil && len(body) > ts.cfg.MaxResultBytes-budgetMargin {
		// Values too large to show: the paths alone, to read one by one.
		type pathOnly struct {
			Path string `json:"path"`
			Type string `json:"type"`
		}
		paths := make([]pathOnly, len(changes))
		for i, c := range changes {
			paths[i] = pathOnly{c.Path, c.Type}
		}
		out["changes"], out["valuesOmitted"] = paths, true
		body, err = json.Marshal(out)
	}
	if err != nil {
		return nil, err
	}
	return &toolResult{body: body, narrow: "Read the changed paths with debug_get_state_path."}, nil
}

// dispatchChanges is what a dispatched action changed, at most
// maxDispatchChanges of total, and where that was read from. The app's own
// diff in its event is exact; a diff of the state before and after also
// holds what other actions did in between.
func (ts *toolSet) dispatchChanges(ctx context.Context, s *session, event []byte, before snapshot) (changes []change, total int, from string, err error) {
	if diff := rawMember(rawMember(event, "payload"), "diff"); rawKind(diff) == "array" {
		changes = readChanges(diff)
		return changes[:min(len(changes), maxDispatchChanges)], len(changes), "event", nil
	}
	after, err := ts.fetchSnapshot(ctx, s, "redux", 0)
	if err != nil {
		return nil, 0, "", err
	}
	changes, total, err = diffStates(before, after, maxDispatchChanges)
	return changes, total, "snapshots", err
}

// diffStates is at most limit of the total changes from base's state to
// target's (never nil, so that an answer lists none as []).
func diffStates(base, target snapshot, limit int) ([]change, int, error) {
	b, err1 := decodeState(base.state)
	t, err2 := decodeState(target.state)
	if err1 != nil || err2 != nil {
		return nil, 0, malformedAnswer("snapshot.get", "state is not valid JSON")
	}
	changes, total := diffValues(b, t, limit)
	if changes == nil {
		changes = []change{}
	}
	return changes, total, nil
}

// readChanges reads a diff an app sent in debug_diff_snapshots' shape.
func readChanges(diff []byte) []change {
	out := []change{}
	_ = eachElement(diff, func(_ int, v []byte) bool {
		var c struct {
			Path     string          `json:"path"`
			Type     string          `json:"type"`
			OldValue json.RawMessage `json:"oldValue"`
			NewValue json.RawMessage `json:"newValue"`
		}
		if json.Unmarshal(v, &c) != nil || c.Path == "" && c.Type == "" {
			return true
		}
		out = append(out, change{Path: c.Path, Type: c.Type, OldValue: c.OldValue, NewValue: c.NewValue}) // nil encodes as null
		return true
	})
	return out
}

// dispatchedEvent finds the action_dispatched event of a dispatch: the one
// with the seq the app answered, else the newest of the action's type
// after seq after.
func (ts *toolSet) dispatchedEvent(ctx context.Context, s *session, answer json.RawMessage, action []byte, after int64) ([]byte, error) {
	if seq, ok := wireInt(rawMember(answer, "seq")); ok && seq >= 1 {
		since := seq - 1
		page, err := ts.fetchEvents(ctx, s, eventsParams{Stream: "redux", Limit: 1, SinceSeq: &since})
		if err != nil {
			return nil, err
		}
		if len(page.events) == 1 && page.seqs[0] == seq {
			return page.events[0], nil
		}
	}
	typ, _ := wireString(rawMember(action, "type"))
	page, err := ts.fetchEvents(ctx, s, eventsParams{Stream: "redux", Limit: 20, EventType: dispatchedEvent})
	if err != nil {
		return nil, err
	}
	for i := len(page.events) - 1; i >= 0 && page.seqs[i] > after; i-- {
		if sameAction(rawMember(rawMember(page.events[i], "payload"), "action"), action) {
			return page.events[i], nil
		}
	}
	if typ == "" {
		return nil, newToolError(codeAdapterError, map[string]any{"answer": json.RawMessage(orNull(answer))},
			"the app took the dispatch but recorded no %s event of action %s at path %q (MobX-State-Tree ignores an action its tree does not have)",
			dispatchedEvent, clipJSON(rawMember(action, "name")), namedActionPath(action))
	}
	return nil, newToolError(codeAdapterError, map[string]any{"answer": json.RawMessage(orNull(answer))},
		"the app took the dispatch but recorded no %s event of type %q", dispatchedEvent, typ)
}

// ---------------------------------------------------------------------------
// debug_list_commands and debug_run_command

// appCommand is one entry of a commands.list answer.
type appCommand struct {
	Command     string          `json:"command"`
	Title       string          `json:"title,omitempty"`
	Description string          `json:"description,omitempty"`
	Args        json.RawMessage `json:"args,omitempty"`
}

func listCommands(ctx context.Context, ts *toolSet, a toolArgs) (*toolResult, error) {
	if err := ts.requireCapability(a.session, capCommands, "commands"); err != nil {
		return nil, err
	}
	raw, err := a.session.request(ctx, "commands.list", listCommandsParams{})
	if err != nil {
		return nil, err
	}
	var res struct {
		Commands *[]appCommand `json:"commands"`
	}
	if json.Unmarshal(raw, &res) != nil || res.Commands == nil {
		return nil, malformedAnswer("commands.list", "want {commands: [{command, title?, description?, args?}]}")
	}
	if slices.ContainsFunc(*res.Commands, func(c appCommand) bool { return c.Command == "" }) {
		return nil, malformedAnswer("commands.list", "every command needs a non-empty `command`")
	}
	return encodeResult(map[string]any{"commands": *res.Commands}, "")
}

func runCommand(ctx context.Context, ts *toolSet, a toolArgs) (*toolResult, error) {
	command, _ := a.str("command")
	args, ok := a.object("args")
	if !ok {
		args = json.RawMessage("{}")
	}
	s := a.session
	if err := ts.requireCapability(s, capCommands, "commands"); err != nil {
		return nil, err
	}
	params := runCommandParams{Command: command, Args: args}
	if s.answersActions() {
		return ts.runAnsweredCommand(ctx, s, params)
	}
	return ts.runCommandFollowed(ctx, s, params)
}

// runAnsweredCommand runs a command in an app that answers it, with each
// stream's newest seq before it as the app counts them (unpushed events
// included; else as the server holds them): debug_wait_for's since_seq for
// what the command causes, however soon it comes.
func (ts *toolSet) runAnsweredCommand(ctx context.Context, s *session, params runCommandParams) (*toolResult, error) {
	latest := map[string]int64{}
	if streams, err := ts.fetchStreams(ctx, s); err == nil {
		for _, st := range streams {
			latest[st.Name] = st.LatestSeq
		}
	} else if v := s.view(); v.Info != nil {
		for _, st := range v.Info.Streams {
			latest[st.Name] = st.LatestSeq
		}
	}
	raw, err := s.request(ctx, "commands.run", params)
	if te := toolErrorOf(err); te != nil && te.Code == codeAdapterError {
		// Most often a misspelt command or a wrong argument.
		e := *te
		e.Suggestion = "Check the command and its args with debug_list_commands; the message is the app's."
		return nil, &e
	}
	if err != nil {
		return nil, err
	}
	var o jsonObject
	o.value("command", params.Command)
	o.raw("result", orNull(rawMember(raw, "result")))
	o.value("latestSeqs", latest)
	return &toolResult{body: o.close(), narrow: "The command's answer is too large; read its effects with the other tools."}, nil
}

// runCommandFollowed runs a command in an app that does not answer (fire
// and forget): what the command did is what followed it.
func (ts *toolSet) runCommandFollowed(ctx context.Context, s *session, params runCommandParams) (*toolResult, error) {
	before, err := ts.fetchStreams(ctx, s)
	if err != nil {
		return nil, err
	}
	if _, err := s.request(ctx, "commands.run", params); err != nil {
		return nil, err
	}
	if err := ts.settle(ctx); err != nil {
		return nil, err
	}
	after, err := ts.fetchStreams(ctx, s)
	if err != nil {
		return nil, err
	}
	type followed struct {
		Stream  string            `json:"stream"`
		Events  []json.RawMessage `json:"events"`
		HasMore bool              `json:"hasMore"`
	}
	sinceOf := map[string]int64{}
	for _, b := range before {
		sinceOf[b.Name] = b.LatestSeq
	}
	streams := []followed{}
	for _, st := range after {
		since := sinceOf[st.Name]
		if st.LatestSeq <= since {
			continue
		}
		page, err := ts.fetchEvents(ctx, s, eventsParams{Stream: st.Name, Limit: maxFollowedEvents, SinceSeq: &since})
		if err != nil {
			return nil, err
		}
		f := followed{Stream: st.Name, HasMore: page.hasMore, Events: []json.RawMessage{}}
		for _, ev := range page.events {
			f.Events = append(f.Events, compactJSON(ev))
		}
		if len(f.Events) > 0 {
			streams = append(streams, f)
		}
	}
	return encodeResult(map[string]any{"command": params.Command, "result": nil, "streams": streams},
		"Many events followed the command: page through them with debug_query_events and since_seq.")
}

// settle waits for the events that follow a command nobody answers. Tests
// run it in a testing/synctest bubble, where the wait costs no time.
func (ts *toolSet) settle(ctx context.Context) error {
	if !sleepCtx(ctx, commandSettle) {
		return ctx.Err()
	}
	return nil
}
