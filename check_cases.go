package main

// check_cases.go lists check-adapter's checks, in the order they run, and
// holds those of the handshake, streams.list, ids, cancel and forward
// compatibility; check_events.go holds events.query, check_snapshot.go
// snapshot.get, check_paths.go the path requests, and check_live.go
// pushes, actions, liveness and frame sizes.

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

// checkCase is one check: what it is called, the docs/protocol.md section that
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
		"capabilities names only requests docs/protocol.md defines", checkCapabilities},
	{"streams.list", "§4 streams.list", true, "",
		"streams.list lists every advertised stream with its figures", checkStreamsList},
	{"events.query", "§4 events.query", true, "",
		"events are well formed, in ascending seq order with no duplicates, within oldestSeq..latestSeq", checkEventsOrder},
	{"events.query.limit", "§4 events.query", true, "",
		"without since_seq, the newest `limit` matching events; hasMore when older ones exist", checkEventsLimit},
	{"events.query.since_seq", "§4 events.query", true, "",
		"with since_seq, the oldest `limit` matching events with seq > since_seq; hasMore when newer ones exist", checkEventsSince},
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

// checkKnownCapabilities are the capabilities docs/protocol.md defines.
var checkKnownCapabilities = []string{capSnapshotPath, capSnapshotKeys, capStateDispatch, capCommands}

func checkCapabilities(_ context.Context, k *checkKit) *checkOutcome {
	for _, c := range k.info.Capabilities {
		if !slices.Contains(checkKnownCapabilities, c) {
			return checkFailed("(the handshake)", "capability %q, which docs/protocol.md does not define (the server ignores it)", c)
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
	if out := k.answerShape(sent, a, err); out != nil {
		return nil, out
	}
	if a.err != nil {
		return nil, checkFailed(sent, "error %s: %s", a.err.Code, a.err.Message)
	}
	return a.result, nil
}

// expectError sends a request that must be answered with error code.
func (k *checkKit) expectError(ctx context.Context, method string, params any, code string) *checkOutcome {
	a, err := k.conn.request(ctx, method, params)
	sent := checkSent(method, params)
	switch out := k.answerShape(sent, a, err); {
	case out != nil:
		return out
	case a.err == nil:
		return checkFailed(sent, "a result, %s, not error %s", clipJSON(a.result), code)
	case a.err.Code != code:
		return checkFailed(sent, "error %s (%s), not %s", a.err.Code, a.err.Message, code)
	}
	return nil
}

// answerShape fails an answer that did not come, is over maxPayload or is
// malformed.
func (k *checkKit) answerShape(sent string, a checkAnswer, err error) *checkOutcome {
	switch {
	case err != nil:
		return checkFailed(sent, "%v", err)
	case a.oversized > 0:
		return checkFailed(sent, "a response of %d bytes, over maxPayload %d", a.oversized, k.conn.maxPayload)
	case a.malformed != "":
		return checkFailed(sent, "a malformed response: %s", a.malformed)
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
	if k.listed != nil {
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
	k.listed = *res.Streams // never nil: json decodes [] to an empty slice
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

func checkUnknownMethod(ctx context.Context, k *checkKit) *checkOutcome {
	return k.expectError(ctx, "check-adapter.noSuchMethod", nil, wireCodeUnknownMethod)
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
	c.mu.Lock()
	stray := c.stray
	c.stray = nil // reported here, not again by the frames check
	c.mu.Unlock()
	if len(stray) > 0 {
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
