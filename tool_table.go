package main

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// tool is one MCP tool: its description for clients and the function that
// answers a call with parsed arguments.
type tool struct {
	name, title, description string
	args                     []argSpec
	outputSchema             string
	run                      func(ctx context.Context, ts *toolSet, a toolArgs) (*toolResult, error)
	hints                    *toolHints // nil: reads only (readOnlyHints)
	// urgent: the call promises an answer within its own bound whatever
	// else runs, so transports serve it ahead of queued calls, and it keeps
	// to the result budget by summarising, so the budget does not apply.
	urgent bool
	// waits: the call may wait for events up to its timeout, holding nothing,
	// so transports run it outside the pool of workers that serves the rest.
	waits bool
	// aboutServer: the answer is about the server and every session: it names
	// no answering session, and one relayed from the port's holder says so.
	aboutServer bool
	// stream is the stream the tool reads when it has no `stream`
	// argument: with no `session`, the call goes to the session of the
	// default app that has it (session_sameapp.go).
	stream string
}

// changesApp reports whether the tool acts on the app rather than reading
// it; READ_ONLY withholds such tools.
func (t *tool) changesApp() bool { return t.hints != nil && !t.hints.ReadOnly }

// toolSet is the registry of tools, with their tools/list reply encoded once.
type toolSet struct {
	adapterQueries
	redact           *redactor                      // nil when REDACT=off
	reactotronStatus func() listenerStatus          // nil: no bridge
	desktopStatus    func() map[string]*relayStatus // by session id; nil: no relay to the Reactotron desktop app
	desktopAddr      string                         // REACTOTRON_DESKTOP
	metroStatus      func() metroStatus             // nil: the Metro link is off
	nativeStatus     func() nativeStatus            // nil: NATIVE_LOGS=off
	healthStreams    time.Duration                  // the health check's wait for streams.list
	waiting          atomic.Int64                   // debug_wait_for calls waiting now (maxWaits)
	waitProgress     time.Duration                  // between a wait's progress notifications
	byName           map[string]*tool
	names            []string
	listJSON         json.RawMessage
}

func newToolSet(q adapterQueries, redact *redactor) *toolSet {
	ts := &toolSet{adapterQueries: q, redact: redact, byName: make(map[string]*tool), healthStreams: healthStreamsTimeout,
		waitProgress: waitProgressEvery}
	var list []map[string]any
	for _, t := range allTools {
		ts.byName[t.name] = t
		if q.cfg.ReadOnly && t.changesApp() {
			continue // listed nowhere; a call is refused (toolSet.call)
		}
		ts.names = append(ts.names, t.name)
		list = append(list, map[string]any{
			"name":         t.name,
			"title":        t.title,
			"description":  t.description,
			"inputSchema":  inputSchema(t.args),
			"outputSchema": json.RawMessage(t.outputSchema),
			"annotations":  *cmp.Or(t.hints, &readOnlyHints),
		})
	}
	data, err := json.Marshal(map[string]any{"tools": list})
	if err != nil {
		panic(fmt.Sprintf("encode tools/list: %v", err)) // static data: a bug, caught by every test
	}
	ts.listJSON = data
	return ts
}

// allTools is every tool in tools/list order: those that read the app's
// state and events, then logs, network and acting on it (tool_app.go).
var allTools = slices.Concat(stateTools, appTools, []*tool{waitTool})

// stateTools read the app's state and events. Descriptions are written for
// an agent: what the tool answers, when to use it, what to call next.
// Names, descriptions and input schemas of tools/list stay within 7 000
// bytes (TestToolListModelSize).
var stateTools = []*tool{
	{
		name:  "debug_health_check",
		title: "Health check",
		description: "Call first. Says whether the app's debug adapter is connected, the app sessions " +
			"(any tool's `session` takes an id or app name) and which streams (redux, navigation, mmkv, …) each " +
			"offers with event counts. Never fails; if not connected, the app must be started with its adapter enabled.",
		outputSchema: `{"type":"object","properties":{"connected":{"type":"boolean"},"adapter":{"type":["object","null"]},"streams":{"type":"array"},"sessions":{"type":"array"},"server":{"type":"object"},"stale":{"type":"boolean"},"streamsTotal":{"type":"integer"},"sessionsTotal":{"type":"integer"}},"required":["connected","adapter","streams","sessions","server"]}`,
		args:         withSession(),
		run:          healthCheck,
		urgent:       true,
		aboutServer:  true,
	},
	{
		name:  "debug_list_streams",
		title: "List streams",
		description: "Lists the app's event streams with event counts, the seq range held (oldestSeq–latestSeq) " +
			"and whether a snapshot exists. Use before debug_query_events or debug_diff_snapshots to pick seqs.",
		outputSchema: `{"type":"object","properties":{"streams":{"type":"array"},` + whoAnswered + `},"required":["streams"]}`,
		args:         withSession(),
		run:          listStreams,
	},
	{
		name:  "debug_get_snapshot",
		title: "Get current state of a stream",
		description: "A stream's current state: the Redux or MobX-State-Tree store, the navigation tree (focused screen = " +
			"routes[index], recursively through nested `state`), MMKV by instance, stores (Zustand) or react_query " +
			"(TanStack Query). Pass `scope` for part of it; " +
			"if too large, the error outlines the biggest children to scope to.",
		args: withSession(
			argSpec{name: "stream", kind: argString, required: true, description: "Stream name, e.g. redux, navigation, mmkv."},
			argSpec{name: "scope", kind: argString, description: "Path inside the state, e.g. cart.items.0 or, for mmkv, auth.keys.session. Keys with dots or digits only: settings[\"theme.dark\"]."},
		),
		outputSchema: `{"type":"object","properties":{"stream":{"type":"string"},"seq":{"type":"integer"},"timestamp":{"type":"string"},"scope":{"type":"string"},"state":{},` + whoAnswered + `},"required":["stream","seq","timestamp","state"]}`,
		run:          getSnapshot,
	},
	{
		name:  "debug_query_events",
		title: "Query events",
		description: "A stream's recent events (Redux actions, route changes, MMKV mutations, snapshots), " +
			"ascending. Without since_seq: the newest `limit`; with it: the oldest `limit` after it. " +
			"Snapshot events' seqs feed debug_diff_snapshots.",
		args: withSession(
			argSpec{name: "stream", kind: argString, required: true, description: "Stream name, e.g. redux."},
			argSpec{name: "limit", kind: argInteger, min: 1, max: 200, def: 50, clamp: true, description: "How many events, 1-200 (default 50)."},
			argSpec{name: "since_seq", kind: argInteger, min: 0, description: "Only events with seq greater than this."},
			argSpec{name: "event_type", kind: argString, description: "Only events of this type, e.g. action_dispatched, route_change, state_snapshot."},
		),
		outputSchema: `{"type":"object","properties":{"events":{"type":"array","items":{"type":"object"}},"hasMore":{"type":"boolean"},"oldestSeq":{"type":"integer"},"latestSeq":{"type":"integer"},` + whoAnswered + `},"required":["events","hasMore","oldestSeq","latestSeq"]}`,
		run:          queryEvents,
	},
	{
		name:  "debug_get_state_path",
		title: "Read a state path",
		description: "The value at one path of the current Redux or MobX-State-Tree state, e.g. auth.user.role or cart.items.0. " +
			"\"\" is the root. If the path is missing, the error names the deepest part that exists and its keys.",
		args: withSession(
			argSpec{name: "path", kind: argString, required: true, description: "Dot path; array indexes as .0; odd keys as [\"a.b\"]. \"\" for the root."},
		),
		outputSchema: `{"type":"object","properties":{"path":{"type":"string"},"value":{},` + whoAnswered + `},"required":["path","value"]}`,
		run:          getStatePath,
		stream:       "redux",
	},
	{
		name:  "debug_diff_snapshots",
		title: "Diff two snapshots",
		description: "Lists what changed between two snapshot events of a stream: each path added, removed or changed " +
			"with old and new values (first 500). Without seqs: the last two snapshots.",
		args: withSession(
			argSpec{name: "stream", kind: argString, required: true, description: "Stream name, e.g. redux."},
			argSpec{name: "base_seq", kind: argInteger, min: 1, description: "Earlier snapshot's seq; default: the one before target_seq."},
			argSpec{name: "target_seq", kind: argInteger, min: 1, description: "Later snapshot's seq; default: the newest."},
		),
		outputSchema: `{"type":"object","properties":{"changes":{"type":"array"},"baseSeq":{"type":"integer"},"targetSeq":{"type":"integer"},"totalChanges":{"type":"integer"},"truncated":{"type":"boolean"},` + whoAnswered + `},"required":["changes","baseSeq","targetSeq"]}`,
		run:          diffSnapshots,
	},
}

// maxDiffChanges is how many changes one diff result lists.
const maxDiffChanges = 500

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
	return encodeResult(map[string]any{"streams": out}, "")
}

func getSnapshot(ctx context.Context, ts *toolSet, a toolArgs) (*toolResult, error) {
	stream, _ := a.str("stream")
	scope, hasScope := a.str("scope")
	segs, err := parsePathArg("scope", scope)
	if err != nil {
		return nil, err
	}
	snap, value, err := ts.stateAt(ctx, a.session, stream, scope, segs)
	if err != nil {
		return nil, scopeError(err)
	}
	value = ts.redact.At(segs, value)
	var o jsonObject
	o.value("stream", stream)
	o.raw("seq", snap.seq)
	o.raw("timestamp", snap.timestamp)
	if hasScope {
		o.value("scope", scope)
	}
	return focusedResult(&o, "state", value, segs, "Call debug_get_snapshot again with `scope` set to one of the outline's paths."), nil
}

func getStatePath(ctx context.Context, ts *toolSet, a toolArgs) (*toolResult, error) {
	path, _ := a.str("path")
	segs, err := parsePathArg("path", path)
	if err != nil {
		return nil, err
	}
	_, value, err := ts.stateAt(ctx, a.session, "redux", path, segs)
	if err != nil {
		return nil, err
	}
	value = ts.redact.At(segs, value)
	var o jsonObject
	o.value("path", path)
	return focusedResult(&o, "value", value, segs, "Call debug_get_state_path again with one of the outline's paths."), nil
}

// focusedResult closes o with value, the state at segs, as its member key:
// an answer over the budget is outlined around value, and narrow says how
// to ask for less.
func focusedResult(o *jsonObject, key string, value json.RawMessage, segs []pathSegment, narrow string) *toolResult {
	o.raw(key, value)
	return &toolResult{body: o.close(), focus: value, focusPath: segs, narrow: narrow}
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
	baseSeq, hasBase := a.int("base_seq")
	targetSeq, hasTarget := a.int("target_seq")
	if err := ts.checkStream(a.session, stream); err != nil {
		return nil, err
	}
	if !hasBase || !hasTarget {
		var err error
		if baseSeq, targetSeq, err = ts.pickSnapshots(ctx, a.session, stream, baseSeq, hasBase, targetSeq, hasTarget); err != nil {
			return nil, err
		}
	}
	var wg sync.WaitGroup
	var base, target snapshot
	var baseErr, targetErr error
	wg.Go(func() { base, baseErr = ts.fetchSnapshot(ctx, a.session, stream, baseSeq) })
	target, targetErr = ts.fetchSnapshot(ctx, a.session, stream, targetSeq)
	wg.Wait()
	var missing, named []string // named: each missing argument with its value
	for _, e := range []struct {
		name string
		seq  int64
		err  error
	}{{"base_seq", baseSeq, baseErr}, {"target_seq", targetSeq, targetErr}} {
		if te := toolErrorOf(e.err); te != nil && te.Code == codeSnapshotNotFound {
			missing = append(missing, e.name)
			named = append(named, fmt.Sprintf("%s %d", e.name, e.seq))
		} else if e.err != nil {
			return nil, e.err
		}
	}
	if len(missing) > 0 {
		return nil, newToolError(codeSnapshotNotFound, map[string]any{"missing": missing},
			"no snapshot event with %s in stream %q", strings.Join(named, " or "), stream)
	}
	changes, total, err := diffStates(base, target, maxDiffChanges)
	if err != nil {
		return nil, err
	}
	ts.redact.Changes(changes) // on the unredacted diff, so a changed token still shows
	return encodeResult(map[string]any{"changes": changes, "baseSeq": baseSeq, "targetSeq": targetSeq,
		"totalChanges": total, "truncated": total > len(changes)},
		"The changed values are large: read them with debug_get_snapshot and a `scope` from the changes' paths.")
}

// pickSnapshots fills in the seqs left out of a diff from the stream's
// snapshot events: with neither, the last two; with only target_seq, the
// snapshot before it; with only base_seq, the newest after it.
func (ts *toolSet) pickSnapshots(ctx context.Context, s *session, stream string, baseSeq int64, hasBase bool, targetSeq int64, hasTarget bool) (base, target int64, err error) {
	want := int64(2)
	if hasBase || hasTarget {
		want = 1
	}
	res, err := ts.scanEvents(ctx, s, eventScan{stream: stream, limit: want, keep: func(ev []byte) bool {
		seq, _ := wireInt(rawMember(ev, "seq"))
		return isSnapshotEvent(ev) && (!hasTarget || seq < targetSeq) && (!hasBase || seq > baseSeq)
	}})
	if err != nil {
		return 0, 0, err
	}
	seqs := make([]int64, len(res.events))
	for i, ev := range res.events {
		seqs[i], _ = wireInt(rawMember(ev, "seq"))
	}
	switch found := int64(len(seqs)) == want; {
	case found && hasTarget:
		return seqs[0], targetSeq, nil
	case found && hasBase:
		return baseSeq, seqs[0], nil
	case found:
		return seqs[0], seqs[1], nil
	case hasTarget:
		return 0, 0, newToolError(codeSnapshotNotFound, map[string]any{"missing": []string{"base_seq"}},
			"stream %q has no snapshot event before target_seq %d to diff it with", stream, targetSeq)
	case hasBase:
		return 0, 0, newToolError(codeSnapshotNotFound, map[string]any{"missing": []string{"target_seq"}},
			"stream %q has no snapshot event after base_seq %d to diff it with", stream, baseSeq)
	}
	return 0, 0, newToolError(codeSnapshotNotFound, map[string]any{"missing": []string{"base_seq", "target_seq"}},
		"stream %q holds %d snapshot event(s) within reach; a diff needs two", stream, len(seqs))
}

// whoAnswered is the output-schema properties of what sayWhoAnswered adds
// to every answer but the health check's.
const whoAnswered = `"session":{"type":"object","properties":{"id":{"type":"string"},"app":{"type":["string","null"]}}},"live":{"type":"boolean"}`
