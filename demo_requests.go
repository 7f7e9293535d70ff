package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
)

// demo_requests.go answers the server's requests as an adapter does:
// streams.list, events.query and snapshot.get over the app's ring buffers,
// with strict params and results encoded once.

// handle answers one request. It is safe for concurrent use; results are
// immutable once returned and marshal to the spec's result objects.
func (a *demoApp) handle(method string, raw json.RawMessage) (result any, err *wireError) {
	switch method {
	case "streams.list":
		return a.listStreams(), nil
	case "commands.list":
		return map[string]any{"commands": demoCommands}, nil
	case "events.query", "snapshot.get", "snapshot.keys", "state.dispatch", "commands.run":
		// answered below, once their params parse
	default:
		return nil, &wireError{
			Code:    demoCodeUnknownMethod,
			Message: fmt.Sprintf("unknown method %q; this adapter answers streams.list, events.query, snapshot.get and snapshot.keys", method),
			Details: map[string]string{"method": method},
		}
	}
	p, werr := demoParseParams(method, raw)
	if werr != nil {
		return nil, werr
	}
	switch method {
	case "events.query":
		return demoResult(a.queryEvents(p))
	case "snapshot.get":
		if path, _ := p.get("path", false); path != nil {
			return demoResult(a.getSnapshotAt(p)) // demo_paths.go
		}
		return demoResult(a.getSnapshot(p))
	case "snapshot.keys":
		return demoResult(a.snapshotKeys(p))
	case "state.dispatch": // this and commands.run: demo_actions.go
		return a.dispatchRequest(p)
	}
	return a.runCommandRequest(p) // commands.run, the last method the first switch lets through
}

// demoResult is res, or werr when there is one: a nil *T in an interface
// would not be a nil result.
func demoResult[T any](res *T, werr *wireError) (any, *wireError) {
	if werr != nil {
		return nil, werr
	}
	return res, nil
}

type demoStreamInfo struct {
	Name        string   `json:"name"`
	Active      bool     `json:"active"`
	EventCount  int      `json:"eventCount"`
	OldestSeq   int64    `json:"oldestSeq"`
	LatestSeq   int64    `json:"latestSeq"`
	HasSnapshot bool     `json:"hasSnapshot"`
	LastEventAt *string  `json:"lastEventAt"`
	Instances   []string `json:"instances,omitempty"`
}

type demoStreamsResult struct {
	Streams []demoStreamInfo `json:"streams"`
}

func (a *demoApp) listStreams() *demoStreamsResult {
	a.mu.Lock()
	defer a.mu.Unlock()
	res := &demoStreamsResult{Streams: make([]demoStreamInfo, 0, len(a.streams))}
	for _, s := range a.streams {
		// The ring drops its oldest first: when the latest snapshot is gone, all are.
		info := demoStreamInfo{Name: s.name, Active: true, EventCount: s.ring.len(),
			OldestSeq: s.ring.oldestSeq(), LatestSeq: s.ring.latestSeq(), Instances: s.instances,
			HasSnapshot: s.lastSnapshot != nil && s.ring.find(s.lastSnapshot.seq) == s.lastSnapshot}
		if s.ring.len() > 0 {
			at := s.ring.at(s.ring.len() - 1).timestamp
			info.LastEventAt = &at
		}
		res.Streams = append(res.Streams, info)
	}
	return res
}

// demoEventsResult is the result of events.query. It encodes itself by
// copying the events' encodings.
type demoEventsResult struct {
	events               []*demoEvent
	hasMore              bool
	oldestSeq, latestSeq int64
}

func (r *demoEventsResult) appendJSON(dst []byte) []byte {
	dst = append(dst, `{"events":[`...)
	for i, ev := range r.events {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = ev.appendJSON(dst)
	}
	dst = append(dst, `],"hasMore":`...)
	dst = strconv.AppendBool(dst, r.hasMore)
	dst = append(dst, `,"oldestSeq":`...)
	dst = strconv.AppendInt(dst, r.oldestSeq, 10)
	dst = append(dst, `,"latestSeq":`...)
	dst = strconv.AppendInt(dst, r.latestSeq, 10)
	return append(dst, '}')
}

func (a *demoApp) queryEvents(p demoParams) (*demoEventsResult, *wireError) {
	name, _, werr := p.str("stream", true)
	if werr != nil {
		return nil, werr
	}
	limit, _, werr := p.int("limit", true, 1, demoMaxLimit)
	if werr != nil {
		return nil, werr
	}
	since, hasSince, werr := p.int("since_seq", false, 0, math.MaxInt64)
	if werr != nil {
		return nil, werr
	}
	eventType, hasType, werr := p.str("event_type", false)
	if werr != nil {
		return nil, werr
	}

	a.mu.Lock()
	defer a.mu.Unlock()
	s, werr := a.streamLocked(p.method, name)
	if werr != nil {
		return nil, werr
	}
	r := &s.ring
	res := &demoEventsResult{events: []*demoEvent{}, oldestSeq: r.oldestSeq(), latestSeq: r.latestSeq()}
	// Without since_seq the newest matches are wanted: the walk goes
	// backwards, and the events are put back in order after it.
	first, step := r.len()-1, -1
	if hasSince {
		first, step = 0, 1
		if r.len() > 0 && since >= r.oldestSeq() {
			first = int(min(since-r.oldestSeq()+1, int64(r.len())))
		}
	}
	for i := first; i >= 0 && i < r.len(); i += step {
		if ev := r.at(i); !hasType || ev.typ == eventType {
			if len(res.events) == int(limit) {
				res.hasMore = true
				break
			}
			res.events = append(res.events, ev)
		}
	}
	if !hasSince {
		slices.Reverse(res.events)
	}
	return res, nil
}

// demoSnapshotResult is the result of snapshot.get. It encodes itself by
// copying the snapshot's pre-encoded state.
type demoSnapshotResult struct {
	seq       int64
	timestamp string
	state     json.RawMessage
}

func (r *demoSnapshotResult) appendJSON(dst []byte) []byte {
	dst = append(dst, `{"seq":`...)
	dst = strconv.AppendInt(dst, r.seq, 10)
	dst = append(dst, `,"timestamp":`...)
	dst = demoAppendString(dst, r.timestamp)
	dst = append(dst, `,"state":`...)
	return append(append(dst, r.state...), '}')
}

// getSnapshot answers snapshot.get. Without seq it returns the current
// state: the latest snapshot event when the state has not changed since
// (and that event is still buffered), else a fresh snapshot event recorded
// now. Either way the returned seq can be asked for again with seq.
func (a *demoApp) getSnapshot(p demoParams) (*demoSnapshotResult, *wireError) {
	const method = "snapshot.get"
	p.method = method // also when snapshot.keys asks: its errors name snapshot.get
	name, _, werr := p.str("stream", true)
	if werr != nil {
		return nil, werr
	}
	seq, hasSeq, werr := p.int("seq", false, 1, math.MaxInt64)
	if werr != nil {
		return nil, werr
	}

	var ev *demoEvent
	a.mutate(func() {
		var s *demoStream
		if s, werr = a.streamLocked(method, name); werr != nil {
			return
		}
		notFound := func(why string) *wireError {
			details := map[string]any{"stream": name, "oldestSeq": s.ring.oldestSeq(), "latestSeq": s.ring.latestSeq()}
			if hasSeq {
				details["seq"] = seq
			}
			return &wireError{Code: demoCodeSnapshotNotFound, Message: fmt.Sprintf("%s %s: %s", method, name, why), Details: details}
		}
		switch {
		case hasSeq:
			ev = s.ring.find(seq)
			switch {
			case ev == nil:
				werr = notFound(fmt.Sprintf("no event with seq %d in the buffer (it holds %d to %d)", seq, s.ring.oldestSeq(), s.ring.latestSeq()))
			case !ev.isSnapshot():
				werr = notFound(fmt.Sprintf("event %d is a %s, not a snapshot", seq, ev.typ))
				ev = nil
			}
		case s.encode == nil:
			werr = notFound("the stream has no snapshots")
		case !s.changed && s.lastSnapshot != nil && s.ring.find(s.lastSnapshot.seq) == s.lastSnapshot:
			ev = s.lastSnapshot
		default:
			ev = a.snapshotLocked(s)
		}
	})
	if werr != nil {
		return nil, werr
	}
	return &demoSnapshotResult{seq: ev.seq, timestamp: ev.timestamp, state: ev.state}, nil
}

// demoParams are a request's params, matched by exact member name: unlike
// encoding/json's struct decoding, "Stream" is not "stream".
type demoParams struct {
	method string
	fields map[string]json.RawMessage
}

func demoParseParams(method string, raw json.RawMessage) (demoParams, *wireError) {
	p := demoParams{method: method}
	if len(bytes.TrimSpace(raw)) == 0 || string(bytes.TrimSpace(raw)) == "null" {
		return p, nil
	}
	fields, err := demoObject(raw)
	if err != nil {
		return p, demoInvalidParams(method, "params", "must be a JSON object")
	}
	p.fields = fields
	return p, nil
}

// get returns the member name; null counts as absent, which is an error
// when the member is required.
func (p demoParams) get(name string, required bool) (json.RawMessage, *wireError) {
	v := p.fields[name]
	if v == nil || string(v) == "null" {
		if required {
			return nil, demoInvalidParams(p.method, name, "required")
		}
		return nil, nil
	}
	return v, nil
}

func (p demoParams) str(name string, required bool) (string, bool, *wireError) {
	v, werr := p.get(name, required)
	if v == nil {
		return "", false, werr
	}
	var s string
	if err := json.Unmarshal(v, &s); err != nil || s == "" {
		return "", false, demoInvalidParams(p.method, name, "must be a non-empty string")
	}
	return s, true, nil
}

func (p demoParams) int(name string, required bool, lo, hi int64) (int64, bool, *wireError) {
	v, werr := p.get(name, required)
	if v == nil {
		return 0, false, werr
	}
	problem := fmt.Sprintf("must be an integer from %d to %d", lo, hi)
	if hi == math.MaxInt64 {
		problem = fmt.Sprintf("must be an integer of at least %d", lo)
	}
	if n, ok := wireInt(v); ok && n >= lo && n <= hi {
		return n, true, nil
	}
	return 0, false, demoInvalidParams(p.method, name, problem)
}

// demoObject splits a JSON object into its members (the last of duplicates
// wins). It fails on anything but an object.
func demoObject(data []byte) (map[string]json.RawMessage, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, err
	}
	if m == nil {
		return nil, errors.New("not a JSON object")
	}
	return m, nil
}

func demoMarshal(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("demo app: encoding %T: %v", v, err)) // only our own types get here
	}
	return b
}

func demoAppendString(dst []byte, s string) []byte {
	return append(dst, demoMarshal(s)...)
}
