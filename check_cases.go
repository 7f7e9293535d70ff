package main

// check_cases.go lists check-adapter's checks, in the order they run, and
// holds those of the handshake, streams.list, events.query, snapshot.get,
// ids and forward compatibility; check_paths.go holds the path requests,
// check_live.go pushes, actions, liveness and frame sizes.

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
)

// checkCase is one check: what it is called, the PROTOCOL.md section that
// holds the rule, whether the rule is a MUST (required) or a SHOULD, the
// capability it needs (or checkNeedsActions), the rule in one line, and the
// code that drives the adapter.
type checkCase struct {
	name, section string
	required      bool
	needs         string
	requires      string
	run           func(ctx context.Context, k *checkKit) *checkOutcome
}

// checkCases is every check, in the order they run.
var checkCases = []checkCase{
	{"handshake", "§2 Handshake", true, "",
		"the first message is a valid handshake, sent within 10 s of the upgrade", checkHandshake},
	{"upgrade", "§7 Limits and hostile input", true, "",
		"the upgrade request's Host and Origin pass the server's checks", checkUpgrade},
	{"handshake.capabilities", "§2 Handshake", false, "",
		"capabilities names only requests PROTOCOL.md defines", checkCapabilities},
	{"streams.list", "§4 streams.list", true, "",
		"streams.list lists every advertised stream with its figures", checkStreamsList},
	{"events.query", "§4 events.query", true, "",
		"events are well formed, in ascending seq order with no duplicates, within oldestSeq..latestSeq", checkEventsOrder},
	{"events.query.limit", "§4 events.query", true, "",
		"without since_seq, the newest `limit` matching events", checkEventsLimit},
	{"events.query.since_seq", "§4 events.query", true, "",
		"with since_seq, the oldest `limit` matching events with seq > since_seq", checkEventsSince},
	{"events.query.event_type", "§4 events.query", true, "",
		"event_type restricts the match to that type", checkEventsType},
	{"events.query.params", "§4 Requests, responses and cancel", false, "",
		"limit outside 1-200 is INVALID_PARAMS, an unknown stream STREAM_UNAVAILABLE", checkEventsParams},
	{"snapshot.get", "§4 snapshot.get", true, "",
		"the current state, the same again with its seq, SNAPSHOT_NOT_FOUND for a seq that is no snapshot", checkSnapshotGet},
	{"snapshot.path", "§4 Paths in requests", true, capSnapshotPath,
		"snapshot.get with path answers the value at path in the whole state, PATH_NOT_FOUND when it does not resolve", checkSnapshotPath},
	{"snapshot.keys", "§4 Paths in requests", true, capSnapshotKeys,
		"snapshot.keys lists the children of the value at path, largest first", checkSnapshotKeys},
	{"unknown-method", "§4 Requests, responses and cancel", true, "",
		"a method the adapter does not implement is answered UNKNOWN_METHOD", checkUnknownMethod},
	{"response.id", "§4 Requests, responses and cancel", true, "",
		"every response carries its request's id, also for requests in flight together", checkResponseIDs},
	{"forward-compat", "§1 Transport", true, "",
		"unknown message types and fields are ignored", checkForwardCompat},
	{"cancel", "§4 Requests, responses and cancel", true, "",
		"a cancel, also for an unknown id, is harmless; the adapter keeps answering", checkCancel},
	{"push.event", "§5 Pushed messages", true, "",
		"pushed events are well formed, on advertised streams, in seq order, and queries find them", checkPushEvents},
	{"push.streams", "§5 Pushed messages", true, "",
		"pushed stream lists are valid and streams.list agrees with them", checkPushStreams},
	{"state.dispatch", "§4 Acting on the app", true, checkNeedsActions,
		"state.dispatch answers the seq of the action_dispatched event it recorded", checkDispatch},
	{"commands", "§4 Acting on the app", true, checkNeedsActions,
		"commands.list lists commands; commands.run of an unknown command is INVALID_PARAMS", checkCommands},
	{"liveness.ping", "§6 Liveness", true, "",
		"WebSocket pings are answered with pongs", checkPing},
	{"liveness.reconnect", "§6 Liveness", true, "",
		"after a close with 1001 the adapter connects again within 5 s", checkReconnect},
	{"handshake.session-id", "§2 Several apps at once", true, "",
		"a reconnect of the same app launch keeps its sessionId", checkSessionID},
	{"max-payload", "§7 Limits and hostile input", true, "",
		"no frame over maxPayload; an answer too large for it is refused with PAYLOAD_TOO_LARGE", checkMaxPayload},
	{"frames", "§1 Transport", true, "",
		"every frame is one JSON object with a string type; every response answers a pending request", checkFrames},
}

func checkHandshake(_ context.Context, k *checkKit) *checkOutcome {
	c := k.conn
	c.mu.Lock()
	defer c.mu.Unlock()
	const blocked = "no valid handshake"
	switch {
	case c.noHandshake:
		return &checkOutcome{sent: "(nothing: waited for the first message)", got: fmt.Sprintf("no handshake within %s; closed with 4004", k.opts.HandshakeTimeout), blocks: blocked}
	case c.refusal != nil:
		return &checkOutcome{sent: "(nothing: read the first message)",
			got:    fmt.Sprintf("%s; answered handshake_error %s: %s", clipJSON(c.firstFrame), c.refusal.code, c.refusal.message),
			blocks: blocked}
	case c.info == nil:
		return &checkOutcome{sent: "(nothing)", got: fmt.Sprintf("the connection ended before a handshake: %v", c.readErr), blocks: blocked}
	}
	return nil
}

func checkUpgrade(_ context.Context, k *checkKit) *checkOutcome {
	if k.conn.upgradeBad != "" {
		return checkFailed("(the upgrade request)", "the server would refuse it with 403: %s", k.conn.upgradeBad)
	}
	return nil
}

// checkKnownCapabilities are the capabilities PROTOCOL.md defines.
var checkKnownCapabilities = []string{capSnapshotPath, capSnapshotKeys, capStateDispatch, capCommands}

func checkCapabilities(_ context.Context, k *checkKit) *checkOutcome {
	for _, c := range k.info.Capabilities {
		if !slices.Contains(checkKnownCapabilities, c) {
			return checkFailed("(the handshake)", "capability %q, which PROTOCOL.md does not define (the server ignores it)", c)
		}
	}
	return nil
}

// checkStream is one entry of a streams.list answer.
type checkStream struct {
	Name        *string   `json:"name"`
	Active      *bool     `json:"active"`
	EventCount  *int64    `json:"eventCount"`
	OldestSeq   *int64    `json:"oldestSeq"`
	LatestSeq   *int64    `json:"latestSeq"`
	HasSnapshot *bool     `json:"hasSnapshot"`
	LastEventAt *string   `json:"lastEventAt"`
	Instances   *[]string `json:"instances"`
}

// call sends a request and turns a missing or malformed answer, or an
// error answer, into a failure naming what was sent.
func (k *checkKit) call(ctx context.Context, method string, params any) ([]byte, *checkOutcome) {
	a, err := k.conn.request(ctx, method, params)
	sent := checkSent(method, params)
	switch {
	case err != nil:
		return nil, checkFailed(sent, "%v", err)
	case a.oversized > 0:
		return nil, checkFailed(sent, "a response of %d bytes, over maxPayload %d", a.oversized, k.conn.maxPayload)
	case a.malformed != "":
		return nil, checkFailed(sent, "a malformed response: %s", a.malformed)
	case a.err != nil:
		return nil, checkFailed(sent, "error %s: %s", a.err.Code, a.err.Message)
	}
	return a.result, nil
}

// expectError sends a request that must be answered with error code.
func (k *checkKit) expectError(ctx context.Context, method string, params any, code string) *checkOutcome {
	a, err := k.conn.request(ctx, method, params)
	sent := checkSent(method, params)
	switch {
	case err != nil:
		return checkFailed(sent, "%v", err)
	case a.malformed != "":
		return checkFailed(sent, "a malformed response: %s", a.malformed)
	case a.err == nil:
		return checkFailed(sent, "a result, %s, not error %s", clipJSON(a.result), code)
	case a.err.Code != code:
		return checkFailed(sent, "error %s (%s), not %s", a.err.Code, a.err.Message, code)
	}
	return nil
}

// checkSent describes a request for the report.
func checkSent(method string, params any) string {
	p, _ := json.Marshal(params)
	if params == nil {
		p = []byte("{}")
	}
	return method + " " + string(p)
}

// streams returns the streams.list answer, asking for it once.
func (k *checkKit) streams(ctx context.Context) ([]checkStream, *checkOutcome) {
	if k.listOK {
		return k.listed, nil
	}
	raw, fail := k.call(ctx, "streams.list", nil)
	if fail != nil {
		return nil, fail
	}
	var res struct {
		Streams *[]checkStream `json:"streams"`
	}
	if err := json.Unmarshal(raw, &res); err != nil || res.Streams == nil {
		return nil, checkFailed("streams.list {}", "%s, not {streams: [...]}", clipJSON(raw))
	}
	for i, s := range *res.Streams {
		switch {
		case s.Name == nil || s.Active == nil || s.EventCount == nil || s.OldestSeq == nil || s.LatestSeq == nil || s.HasSnapshot == nil:
			return nil, checkFailed("streams.list {}", "streams[%d] lacks one of name, active, eventCount, oldestSeq, latestSeq, hasSnapshot", i)
		case *s.EventCount == 0 && (*s.OldestSeq != 0 || *s.LatestSeq != 0 || s.LastEventAt != nil):
			return nil, checkFailed("streams.list {}", "stream %q is empty but has oldestSeq %d, latestSeq %d, lastEventAt %v (want 0, 0, null)", *s.Name, *s.OldestSeq, *s.LatestSeq, s.LastEventAt)
		case *s.EventCount > 0 && (*s.OldestSeq < 1 || *s.LatestSeq < *s.OldestSeq || *s.EventCount > *s.LatestSeq-*s.OldestSeq+1):
			return nil, checkFailed("streams.list {}", "stream %q has eventCount %d, oldestSeq %d, latestSeq %d: they do not fit together", *s.Name, *s.EventCount, *s.OldestSeq, *s.LatestSeq)
		}
	}
	k.listed, k.listOK = *res.Streams, true
	return k.listed, nil
}

func checkStreamsList(ctx context.Context, k *checkKit) *checkOutcome {
	list, fail := k.streams(ctx)
	if fail != nil {
		return fail
	}
	for _, adv := range k.info.Streams {
		i := slices.IndexFunc(list, func(s checkStream) bool { return *s.Name == adv.Name })
		if i < 0 {
			return checkFailed("streams.list {}", "no stream %q, which the handshake advertised", adv.Name)
		}
		if *list[i].Active != adv.Active {
			return checkFailed("streams.list {}", "stream %q active %v, the handshake said %v", adv.Name, *list[i].Active, adv.Active)
		}
	}
	return nil
}

// checkEvent is an event of an events.query answer.
type checkEvent struct {
	raw  []byte
	head wireEventHead
}

// checkEventsAnswer is an events.query answer, read with the server's reader.
type checkEventsAnswer struct {
	events            []checkEvent
	hasMore           bool
	oldestSeq, latest int64
}

// query sends events.query and reads the answer's shape with the server's
// reader. Only checkEventsOrder judges the events themselves, so that a
// defect there fails that check alone.
func (k *checkKit) query(ctx context.Context, params map[string]any) (checkEventsAnswer, *checkOutcome) {
	var ans checkEventsAnswer
	raw, fail := k.call(ctx, "events.query", params)
	if fail != nil {
		return ans, fail
	}
	events, hasMore, oldest, latest, ok := splitWireEventsAnswer(raw)
	if !ok {
		return ans, checkFailed(checkSent("events.query", params), "%s, not {events: [...], hasMore, oldestSeq, latestSeq}", clipJSON(raw))
	}
	ans.hasMore = string(hasMore) == "true"
	ans.oldestSeq, _ = wireInt(oldest)
	ans.latest, _ = wireInt(latest)
	_ = scanArray(events, func(i int, v []byte) error {
		head, _ := parseWireEvent(v)
		ans.events = append(ans.events, checkEvent{raw: v, head: head})
		return nil
	})
	return ans, nil
}

// eventsProblem says what is wrong with the events of an answer to params:
// an event badly formed or of another stream or type, seq not ascending or
// repeated, outside oldestSeq..latestSeq, or more events than the limit.
func eventsProblem(params map[string]any, ans checkEventsAnswer) string {
	for i, e := range ans.events {
		head, err := parseWireEvent(e.raw)
		switch {
		case err != nil:
			return fmt.Sprintf("events[%d]: %v", i, err)
		case checkEventShape(e.raw) != "":
			return fmt.Sprintf("events[%d]: %s", i, checkEventShape(e.raw))
		case head.Stream != params["stream"]:
			return fmt.Sprintf("events[%d] is of stream %q", i, head.Stream)
		case params["event_type"] != nil && head.Type != params["event_type"]:
			return fmt.Sprintf("events[%d] (seq %d) has type %q", i, head.Seq, head.Type)
		case i > 0 && head.Seq == ans.events[i-1].head.Seq:
			return fmt.Sprintf("seq %d appears twice (events[%d] and events[%d])", head.Seq, i-1, i)
		case i > 0 && head.Seq < ans.events[i-1].head.Seq:
			return fmt.Sprintf("seq goes back: events[%d] has seq %d after seq %d", i, head.Seq, ans.events[i-1].head.Seq)
		case head.Seq < ans.oldestSeq || head.Seq > ans.latest:
			return fmt.Sprintf("events[%d] has seq %d, outside oldestSeq %d..latestSeq %d", i, head.Seq, ans.oldestSeq, ans.latest)
		}
	}
	if l, ok := params["limit"].(int); ok && len(ans.events) > l {
		return fmt.Sprintf("%d events, over limit %d", len(ans.events), l)
	}
	return ""
}

// eachStream runs f for every listed stream with events.
func (k *checkKit) eachStream(ctx context.Context, f func(s checkStream) *checkOutcome) *checkOutcome {
	list, fail := k.streams(ctx)
	if fail != nil {
		return fail
	}
	ran := false
	for _, s := range list {
		if *s.EventCount == 0 {
			continue
		}
		ran = true
		if out := f(s); out != nil {
			return out
		}
	}
	if !ran {
		return checkSkip("no stream has events")
	}
	return nil
}

func checkEventsOrder(ctx context.Context, k *checkKit) *checkOutcome {
	return k.eachStream(ctx, func(s checkStream) *checkOutcome {
		params := map[string]any{"stream": *s.Name, "limit": checkMaxLimit}
		ans, fail := k.query(ctx, params)
		if fail != nil {
			return fail
		}
		if problem := eventsProblem(params, ans); problem != "" {
			return checkFailed(checkSent("events.query", params), "%s", problem)
		}
		if len(ans.events) == 0 {
			return checkFailed(checkSent("events.query", params), "no events, though streams.list counts %d", *s.EventCount)
		}
		if older := ans.events[0].head.Seq > ans.oldestSeq; ans.hasMore != older {
			return checkFailed(checkSent("events.query", params), "hasMore %v, though the first event has seq %d and oldestSeq is %d", ans.hasMore, ans.events[0].head.Seq, ans.oldestSeq)
		}
		return nil
	})
}

func checkEventsLimit(ctx context.Context, k *checkKit) *checkOutcome {
	return k.eachStream(ctx, func(s checkStream) *checkOutcome {
		for _, limit := range []int{1, 2} {
			params := map[string]any{"stream": *s.Name, "limit": limit}
			ans, fail := k.query(ctx, params)
			if fail != nil {
				return fail
			}
			want := min(limit, int(ans.latest-ans.oldestSeq+1))
			if len(ans.events) < want && int64(len(ans.events)) < *s.EventCount {
				return checkFailed(checkSent("events.query", params), "%d events, want %d", len(ans.events), want)
			}
			if n := len(ans.events); n > 0 && ans.events[n-1].head.Seq != ans.latest {
				return checkFailed(checkSent("events.query", params), "the last event has seq %d, not latestSeq %d: not the newest", ans.events[n-1].head.Seq, ans.latest)
			}
		}
		return nil
	})
}

func checkEventsSince(ctx context.Context, k *checkKit) *checkOutcome {
	return k.eachStream(ctx, func(s checkStream) *checkOutcome {
		all, fail := k.query(ctx, map[string]any{"stream": *s.Name, "limit": checkMaxLimit})
		if fail != nil || len(all.events) < 2 {
			return fail
		}
		since := all.events[0].head.Seq // the next one up is in all
		params := map[string]any{"stream": *s.Name, "limit": 1, "since_seq": since}
		ans, fail := k.query(ctx, params)
		if fail != nil {
			return fail
		}
		want := all.events[1].head.Seq
		if len(ans.events) != 1 || ans.events[0].head.Seq != want {
			got := "no event"
			if len(ans.events) > 0 {
				got = "seq " + strconv.FormatInt(ans.events[0].head.Seq, 10)
			}
			return checkFailed(checkSent("events.query", params), "%s, want the oldest after %d: seq %d", got, since, want)
		}
		if !ans.hasMore && len(all.events) > 2 {
			return checkFailed(checkSent("events.query", params), "hasMore false, though newer events exist")
		}
		params = map[string]any{"stream": *s.Name, "limit": checkMaxLimit, "since_seq": all.latest + 1_000_000}
		if ans, fail = k.query(ctx, params); fail != nil {
			return fail
		}
		if len(ans.events) > 0 || ans.hasMore {
			return checkFailed(checkSent("events.query", params), "%d events and hasMore %v, want none", len(ans.events), ans.hasMore)
		}
		return nil
	})
}

func checkEventsType(ctx context.Context, k *checkKit) *checkOutcome {
	return k.eachStream(ctx, func(s checkStream) *checkOutcome {
		all, fail := k.query(ctx, map[string]any{"stream": *s.Name, "limit": checkMaxLimit})
		if fail != nil || len(all.events) == 0 {
			return fail
		}
		typ := all.events[0].head.Type
		var want []int64
		for _, e := range all.events {
			if e.head.Type == typ {
				want = append(want, e.head.Seq)
			}
		}
		params := map[string]any{"stream": *s.Name, "limit": checkMaxLimit, "event_type": typ}
		ans, fail := k.query(ctx, params)
		if fail != nil {
			return fail
		}
		for _, e := range ans.events {
			if e.head.Type != typ {
				return checkFailed(checkSent("events.query", params), "an event of type %q (seq %d)", e.head.Type, e.head.Seq)
			}
		}
		// Events recorded meanwhile may come on top; those seen before must be there.
		for _, seq := range want {
			if !slices.ContainsFunc(ans.events, func(e checkEvent) bool { return e.head.Seq == seq }) {
				return checkFailed(checkSent("events.query", params), "no event with seq %d, which is of type %q", seq, typ)
			}
		}
		params = map[string]any{"stream": *s.Name, "limit": checkMaxLimit, "event_type": "check-adapter.no-such-type"}
		if ans, fail = k.query(ctx, params); fail != nil {
			return fail
		}
		if len(ans.events) > 0 {
			return checkFailed(checkSent("events.query", params), "%d events of a type nobody records", len(ans.events))
		}
		return nil
	})
}

func checkEventsParams(ctx context.Context, k *checkKit) *checkOutcome {
	list, fail := k.streams(ctx)
	if fail != nil {
		return fail
	}
	if len(list) > 0 {
		for _, limit := range []int{0, checkMaxLimit + 1} {
			if out := k.expectError(ctx, "events.query", map[string]any{"stream": *list[0].Name, "limit": limit}, codeCheckInvalidParams); out != nil {
				return out
			}
		}
	}
	return k.expectError(ctx, "events.query", map[string]any{"stream": "check-adapter.no-such-stream", "limit": 1}, codeCheckStreamUnavailable)
}

// Adapter error codes of §4, as the kit expects them.
const (
	codeCheckInvalidParams     = "INVALID_PARAMS"
	codeCheckStreamUnavailable = "STREAM_UNAVAILABLE"
	codeCheckSnapshotNotFound  = "SNAPSHOT_NOT_FOUND"
	codeCheckPayloadTooLarge   = "PAYLOAD_TOO_LARGE"
	codeCheckPathNotFound      = "PATH_NOT_FOUND"
	codeCheckUnknownMethod     = "UNKNOWN_METHOD"
)

// checkSnapshot is a snapshot.get answer.
type checkSnapshot struct {
	Seq       *int64          `json:"seq"`
	Timestamp *string         `json:"timestamp"`
	State     json.RawMessage `json:"state"`
}

// snapshot asks snapshot.get and checks the answer's shape.
func (k *checkKit) snapshot(ctx context.Context, params map[string]any) (checkSnapshot, *checkOutcome) {
	var snap checkSnapshot
	raw, fail := k.call(ctx, "snapshot.get", params)
	if fail != nil {
		return snap, fail
	}
	err := json.Unmarshal(raw, &snap)
	switch {
	case err != nil || snap.Seq == nil || snap.Timestamp == nil || snap.State == nil:
		return snap, checkFailed(checkSent("snapshot.get", params), "%s, not {seq, timestamp, state}", clipJSON(raw))
	case *snap.Seq < 1:
		return snap, checkFailed(checkSent("snapshot.get", params), "seq %d, not >= 1", *snap.Seq)
	}
	if _, err := time.Parse(time.RFC3339Nano, *snap.Timestamp); err != nil {
		return snap, checkFailed(checkSent("snapshot.get", params), "timestamp %q, not RFC 3339", *snap.Timestamp)
	}
	return snap, nil
}

// snapshotStreams are the listed streams that have a snapshot.
func (k *checkKit) snapshotStreams(ctx context.Context) ([]string, *checkOutcome) {
	list, fail := k.streams(ctx)
	if fail != nil {
		return nil, fail
	}
	var names []string
	for _, s := range list {
		if *s.HasSnapshot {
			names = append(names, *s.Name)
		}
	}
	if len(names) == 0 {
		return nil, checkSkip("no stream has a snapshot")
	}
	return names, nil
}

func checkSnapshotGet(ctx context.Context, k *checkKit) *checkOutcome {
	names, out := k.snapshotStreams(ctx)
	if out != nil {
		return out
	}
	for _, name := range names {
		snap, fail := k.snapshot(ctx, map[string]any{"stream": name})
		if fail != nil {
			return fail
		}
		params := map[string]any{"stream": name, "seq": *snap.Seq}
		again, fail := k.snapshot(ctx, params)
		if fail != nil {
			return fail
		}
		if !checkSameJSON(snap.State, again.State) {
			return checkFailed(checkSent("snapshot.get", params), "a state different from the one answered with seq %d: %s", *snap.Seq, clipJSON(again.State))
		}
		if out := k.expectError(ctx, "snapshot.get", map[string]any{"stream": name, "seq": *snap.Seq + 1_000_000}, codeCheckSnapshotNotFound); out != nil {
			return out
		}
	}
	return nil
}

func checkUnknownMethod(ctx context.Context, k *checkKit) *checkOutcome {
	return k.expectError(ctx, "check-adapter.noSuchMethod", nil, codeCheckUnknownMethod)
}

// checkResponseIDs sends several events.query at once, each with a
// different limit, so that an answer under the wrong id shows as the
// wrong number of events.
func checkResponseIDs(ctx context.Context, k *checkKit) *checkOutcome {
	list, fail := k.streams(ctx)
	if fail != nil {
		return fail
	}
	var best checkStream
	for _, s := range list {
		if best.EventCount == nil || *s.EventCount > *best.EventCount {
			best = s
		}
	}
	if best.EventCount == nil || *best.EventCount < 2 {
		return checkSkip("no stream has two events to ask for")
	}
	n := int(min(*best.EventCount, 8))
	c := k.conn
	ids := make([]string, n)
	chans := make([]chan checkAnswer, n)
	for i := range n {
		ids[i], chans[i] = c.send("events.query", map[string]any{"stream": *best.Name, "limit": i + 1}, nil)
	}
	var problems []string
	for i := range n {
		a, err := c.wait(ctx, ids[i], chans[i])
		sent := fmt.Sprintf("id %q: events.query limit %d", ids[i], i+1)
		switch {
		case err != nil:
			problems = append(problems, fmt.Sprintf("%s: %v", sent, err))
		case a.result == nil:
			problems = append(problems, fmt.Sprintf("%s: no result", sent))
		default:
			events, _, _, _, _ := splitWireEventsAnswer(a.result)
			count := 0
			_ = scanArray(events, func(int, []byte) error { count++; return nil })
			if count != i+1 {
				problems = append(problems, fmt.Sprintf("%s: answered with %d events: the answer to another request", sent, count))
			}
		}
	}
	if stray := c.takeStray(); len(stray) > 0 {
		problems = append(problems, "responses to no pending request: "+strings.Join(stray, "; "))
	}
	if len(problems) > 0 {
		return checkFailed(fmt.Sprintf("%d events.query at once, ids %s..%s", n, ids[0], ids[n-1]), "%s", strings.Join(problems, "; "))
	}
	return nil
}

func checkForwardCompat(ctx context.Context, k *checkKit) *checkOutcome {
	c := k.conn
	c.write(map[string]any{"type": "check-adapter.unknownType", "id": "ck-unknown", "x": []int{1}})
	sent := `{"type":"check-adapter.unknownType"}, then streams.list with an unknown member "check" in the request and its params`
	id, ch := c.send("streams.list", map[string]any{"check": true}, map[string]any{"check": map[string]int{"a": 1}})
	a, err := c.wait(ctx, id, ch)
	switch {
	case err != nil:
		return checkFailed(sent, "%v", err)
	case a.result == nil:
		return checkFailed(sent, "no result: %s", clipJSON(a.frame))
	}
	list, fail := k.streams(ctx)
	if fail != nil || len(list) == 0 {
		return fail
	}
	params := map[string]any{"stream": *list[0].Name, "limit": 1, "check_unknown_param": []string{"x"}}
	_, fail = k.call(ctx, "events.query", params)
	return fail
}

func checkCancel(ctx context.Context, k *checkKit) *checkOutcome {
	c := k.conn
	id, _ := c.send("streams.list", nil, nil)
	c.mu.Lock()
	delete(c.pending, id)
	c.cancelled[id] = true // an answer may still come; it is not stray
	c.mu.Unlock()
	c.write(map[string]string{"type": "cancel", "id": id})
	c.write(map[string]string{"type": "cancel", "id": "check-adapter-never-sent"})
	if _, fail := k.call(ctx, "streams.list", nil); fail != nil {
		fail.sent = fmt.Sprintf("cancel %q right after its request, a cancel for an unknown id, then %s", id, fail.sent)
		return fail
	}
	return nil
}

// checkSameJSON reports whether a and b encode the same JSON value.
func checkSameJSON(a, b []byte) bool {
	va, errA := decodeCheckJSON(a)
	vb, errB := decodeCheckJSON(b)
	return errA == nil && errB == nil && checkEqualValues(va, vb)
}

func decodeCheckJSON(data []byte) (any, error) {
	dec := json.NewDecoder(strings.NewReader(string(data)))
	dec.UseNumber()
	var v any
	err := dec.Decode(&v)
	return v, err
}

// checkEqualValues compares decoded JSON; numbers by value.
func checkEqualValues(a, b any) bool {
	switch a := a.(type) {
	case map[string]any:
		b, ok := b.(map[string]any)
		if !ok || len(a) != len(b) {
			return false
		}
		for key, va := range a {
			vb, ok := b[key]
			if !ok || !checkEqualValues(va, vb) {
				return false
			}
		}
		return true
	case []any:
		b, ok := b.([]any)
		if !ok || len(a) != len(b) {
			return false
		}
		for i := range a {
			if !checkEqualValues(a[i], b[i]) {
				return false
			}
		}
		return true
	case json.Number:
		b, ok := b.(json.Number)
		if !ok {
			return false
		}
		if a == b {
			return true
		}
		fa, errA := a.Float64()
		fb, errB := b.Float64()
		return errA == nil && errB == nil && fa == fb
	}
	return a == b
}

// checkMaxLimit is the largest events.query limit (§4).
const checkMaxLimit = 200
