package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"math/rand/v2"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/coder/websocket"
)

// This file is the simulated app behind -demo and the adapter side of the
// tests: a small shop whose Redux store, React Navigation tree and two MMKV
// instances change one user action at a time, recorded into per-stream ring
// buffers and served over Wire Protocol v1 exactly as a real debug adapter
// would serve them.

const (
	demoAdapterVersion = "1.0.0-demo"
	demoProtocol       = 1

	demoDefaultBuffer    = 1000
	demoSnapshotEvery    = 5        // steps between periodic snapshots of every stream
	demoReadLimit        = 64 << 20 // requests are small; generous so a chatty server is never cut off
	demoMaxLimit         = 200      // events.query limit bound (spec §4)
	demoHandshakeTimeout = 10 * time.Second
	demoWriteTimeout     = 10 * time.Second
	demoMaxInFlight      = 32       // requests served at once; the reader waits beyond that
	demoPushQueue        = 1024     // pushes waiting for the socket; step drops beyond that
	demoKeepBuffer       = 16 << 20 // frame buffers up to this size are kept for the next frame
	demoMinBackoff       = 250 * time.Millisecond
	demoMaxBackoff       = 2 * time.Second
)

// Adapter error codes of spec §4.
const (
	demoCodeStreamUnavailable = "STREAM_UNAVAILABLE"
	demoCodeSnapshotNotFound  = "SNAPSHOT_NOT_FOUND"
	demoCodeInvalidParams     = "INVALID_PARAMS"
	demoCodePayloadTooLarge   = "PAYLOAD_TOO_LARGE"
	demoCodeUnknownMethod     = "UNKNOWN_METHOD"
)

// errDemoNotConnected is returned by pushEvents when no connection is live.
var errDemoNotConnected = errors.New("not connected")

// wireError is the error object of an adapter response (spec §4).
type wireError struct {
	Code    string `json:"code"`
	Message string `json:"message"`
	Details any    `json:"details,omitempty"`
}

func (e *wireError) Error() string { return e.Code + ": " + e.Message }

func demoInvalidParams(method, param, problem string) *wireError {
	return &wireError{
		Code:    demoCodeInvalidParams,
		Message: method + ": " + param + ": " + problem,
		Details: map[string]string{"param": param, "problem": problem},
	}
}

// demoHandshakeError is a refusal (handshake_error) by the server.
type demoHandshakeError struct{ Code, Message string }

func (e *demoHandshakeError) Error() string {
	return "handshake refused: " + e.Code + ": " + e.Message
}

// demoOptions configures newDemoApp. The zero value is usable.
type demoOptions struct {
	Seed       int64            // deterministic content
	Now        func() time.Time // injected clock; nil = time.Now
	BufferSize int              // events per stream ring; 0 = 1000
	SessionID  string           // "" = derived from Seed
	Token      string           // sent in handshake when non-empty

	// SendOversized sends responses and pushes even when they exceed the
	// maxPayload announced in handshake_ack, instead of answering
	// PAYLOAD_TOO_LARGE and skipping the push; for tests of the server's
	// own handling of oversized frames (spec §7).
	SendOversized bool

	// WithoutPathRequests leaves snapshot.path and snapshot.keys out of the
	// handshake's capabilities, as an app that predates them would.
	WithoutPathRequests bool
}

// demoApp is a simulated shop app with a debug adapter. All its methods are
// safe for concurrent use: step, setReduxState and pushEvents may run while
// connect serves requests. One connection at a time receives pushes; a
// second concurrent connect takes them over.
type demoApp struct {
	opts      demoOptions
	now       func() time.Time
	sessionID string
	startedAt string

	// The three streams of the shop, set once by newDemoApp; their contents
	// are guarded by mu.
	reduxStream, navStream, mmkvStream *demoStream

	// pushMu orders event recording with enqueueing pushes, so pushes leave
	// in seq order even when pushEvents waits for room in the queue. It is
	// taken before mu.
	pushMu sync.Mutex

	mu       sync.Mutex // guards everything below
	rng      *rand.Rand
	steps    int
	streams  []*demoStream
	outbox   []*demoEvent // recorded since the last mutate, to push
	link     *demoLink    // the live connection, nil when none
	toastID  int
	redux    demoReduxState
	override json.RawMessage // setReduxState's state; freezes the reported Redux state
	nav      demoNavState    // the root stack
	mmkv     map[string]map[string]any
	traffic  demoTraffic // console and network (demo_streams.go)

	paths demoTrees // decoded snapshots for path requests (demo_paths.go)
}

// newDemoApp returns an app that has recorded its start: an initial snapshot
// of every stream and the first route_change (from null to Home).
func newDemoApp(opts demoOptions) *demoApp {
	if opts.BufferSize <= 0 {
		opts.BufferSize = demoDefaultBuffer
	}
	a := &demoApp{
		opts:      opts,
		now:       opts.Now,
		sessionID: opts.SessionID,
		rng:       rand.New(rand.NewPCG(uint64(opts.Seed), 0x5b0c_a9e1)),
	}
	if a.now == nil {
		a.now = time.Now
	}
	if a.sessionID == "" {
		a.sessionID = demoSessionID(opts.Seed)
	}
	a.startedAt = demoTimestamp(a.now())
	a.reduxStream = a.addStream("redux", "state_snapshot", nil, a.encodeRedux)
	a.navStream = a.addStream("navigation", "navigation_snapshot", nil, func() json.RawMessage { return demoMarshal(a.nav) })
	a.mmkvStream = a.addStream("mmkv", "mmkv_snapshot", demoMMKVInstances, a.encodeMMKV)

	a.mutate(func() {
		a.initModelLocked()
		a.snapshotLocked(a.reduxStream)
		a.recordLocked(a.navStream, "route_change", demoRouteChange{To: a.focusedRouteLocked()})
		a.snapshotLocked(a.navStream)
		a.snapshotLocked(a.mmkvStream)
	})
	a.startTraffic()
	return a
}

// demoSessionID derives a UUID-shaped session id from seed.
func demoSessionID(seed int64) string {
	r := rand.New(rand.NewPCG(uint64(seed), 0x5e55_10de))
	return fmt.Sprintf("%08x-%04x-4%03x-%04x-%012x",
		r.Uint32(), r.Uint32()&0xffff, r.Uint32()&0xfff, 0x8000|r.Uint32()&0x3fff, r.Uint64()&0xffff_ffff_ffff)
}

// demoTimestamp formats t as RFC 3339 UTC with milliseconds.
func demoTimestamp(t time.Time) string {
	return t.UTC().Format("2006-01-02T15:04:05.000Z07:00")
}

// mutate runs f with the state locked, then offers the events f recorded to
// the live connection in seq order. Offers never block: when the push queue
// is full the push is dropped (pushes are optional, spec §5).
func (a *demoApp) mutate(f func()) {
	a.pushMu.Lock()
	defer a.pushMu.Unlock()
	a.mu.Lock()
	f()
	events, link := a.takeOutboxLocked()
	a.mu.Unlock()
	if link != nil {
		for _, ev := range events {
			link.offer(ev)
		}
	}
}

func (a *demoApp) takeOutboxLocked() ([]*demoEvent, *demoLink) {
	events := a.outbox
	a.outbox = nil
	if a.link == nil {
		return nil, nil
	}
	return events, a.link
}

// step performs one deterministic user action: one or more Redux actions,
// and with some of them a navigation change or MMKV writes; every fifth step
// also records a snapshot of every stream. The events are pushed when
// connected.
func (a *demoApp) step() {
	a.mutate(func() {
		a.steps++
		n := len(a.outbox)
		a.userActionLocked()
		a.trafficLocked(a.outbox[n:])
		if a.steps%demoSnapshotEvery == 0 {
			for _, s := range a.streams {
				if s.encode != nil {
					a.snapshotLocked(s)
				}
			}
		}
	})
}

// setReduxState replaces the reported Redux state by state, which must be
// valid JSON, and records a state_snapshot of it. Later actions are still
// recorded but leave the reported state alone, so benchmarks keep their big
// state. It panics on invalid JSON, a caller's bug.
func (a *demoApp) setReduxState(state json.RawMessage) {
	if !json.Valid(state) {
		panic("demoApp.setReduxState: state is not valid JSON")
	}
	owned := bytes.Clone(state)
	// A real app holds its store as objects: decode the state now, so
	// that path requests do not pay for it (demo_paths.go).
	a.paths.tree(a.reduxStream.name, owned)
	a.mutate(func() {
		a.override = owned
		a.reduxStream.state = owned
		a.snapshotLocked(a.reduxStream)
	})
}

// pushEvents records n Redux actions (ui/hideToast of the oldest toast, or
// ui/showToast when none is shown) and pushes them as fast as the socket takes them, returning
// once all are written. It fails when not connected, when the connection
// ends or when ctx is done.
func (a *demoApp) pushEvents(ctx context.Context, n int) error {
	a.mu.Lock()
	link := a.link
	a.mu.Unlock()
	if link == nil {
		return fmt.Errorf("demo app: push events: %w", errDemoNotConnected)
	}
	for range n {
		if err := a.pushOne(ctx, link); err != nil {
			return fmt.Errorf("demo app: push events: %w", err)
		}
	}
	if err := link.flush(ctx); err != nil {
		return fmt.Errorf("demo app: push events: %w", err)
	}
	return nil
}

func (a *demoApp) pushOne(ctx context.Context, link *demoLink) error {
	a.pushMu.Lock()
	defer a.pushMu.Unlock()
	a.mu.Lock()
	a.toastCycleLocked()
	events, live := a.takeOutboxLocked()
	a.mu.Unlock()
	if live != link {
		return errDemoNotConnected
	}
	for _, ev := range events {
		if err := link.enqueue(ctx, demoPush{event: ev}); err != nil {
			return err
		}
	}
	return nil
}

// ---------------------------------------------------------------------------
// Streams, events and ring buffers.

// demoEvent is one recorded debug event, encoded once when recorded and
// never changed afterwards, so it may be read without locks. A snapshot
// event's encoding is head + state + "}}", with state shared between
// snapshots of an unchanged state; any other event's encoding is head.
type demoEvent struct {
	seq       int64
	typ       string
	timestamp string
	head      []byte
	state     json.RawMessage // snapshot events only
}

func (e *demoEvent) isSnapshot() bool { return e.state != nil }

func (e *demoEvent) appendJSON(dst []byte) []byte {
	dst = append(dst, e.head...)
	if e.isSnapshot() {
		dst = append(dst, e.state...)
		dst = append(dst, "}}"...)
	}
	return dst
}

func (e *demoEvent) encodedSize() int {
	if e.isSnapshot() {
		return len(e.head) + len(e.state) + 2
	}
	return len(e.head)
}

// demoStream is one stream: its ring and what it needs to snapshot itself.
type demoStream struct {
	name         string
	snapshotType string // "" when the stream has no snapshots
	instances    []string
	encode       func() json.RawMessage // the current state; nil when no snapshots

	ring         demoRing
	seq          int64           // latest seq given out
	state        json.RawMessage // encoded current state, nil after a change
	changed      bool            // the state changed since lastSnapshot
	lastSnapshot *demoEvent
}

// addStream registers a stream; encode may be nil for a stream without
// snapshots.
func (a *demoApp) addStream(name, snapshotType string, instances []string, encode func() json.RawMessage) *demoStream {
	a.mu.Lock()
	defer a.mu.Unlock()
	s := &demoStream{name: name, snapshotType: snapshotType, instances: instances, encode: encode,
		ring: demoRing{events: make([]*demoEvent, a.opts.BufferSize)}, changed: true}
	a.streams = append(a.streams, s)
	return s
}

func (s *demoStream) markChanged() {
	s.state = nil
	s.changed = true
}

func (a *demoApp) streamLocked(method, name string) (*demoStream, *wireError) {
	active := make([]string, 0, len(a.streams))
	for _, s := range a.streams {
		if s.name == name {
			return s, nil
		}
		active = append(active, s.name)
	}
	return nil, &wireError{
		Code:    demoCodeStreamUnavailable,
		Message: fmt.Sprintf("%s: stream %q is not offered by this app", method, name),
		Details: map[string]any{"stream": name, "activeStreams": active},
	}
}

// appendEventHead appends an event envelope up to and including `"payload":`.
func appendEventHead(dst []byte, stream string, seq int64, typ, timestamp string) []byte {
	dst = append(dst, `{"stream":`...)
	dst = demoAppendString(dst, stream)
	dst = append(dst, `,"seq":`...)
	dst = strconv.AppendInt(dst, seq, 10)
	dst = append(dst, `,"type":`...)
	dst = demoAppendString(dst, typ)
	dst = append(dst, `,"timestamp":`...)
	dst = demoAppendString(dst, timestamp)
	return append(dst, `,"payload":`...)
}

// recordLocked records a non-snapshot event.
func (a *demoApp) recordLocked(s *demoStream, typ string, payload any) *demoEvent {
	p := demoMarshal(payload)
	s.seq++
	ev := &demoEvent{seq: s.seq, typ: typ, timestamp: demoTimestamp(a.now())}
	ev.head = appendEventHead(make([]byte, 0, 96+len(p)), s.name, ev.seq, typ, ev.timestamp)
	ev.head = append(append(ev.head, p...), '}')
	a.keepLocked(s, ev)
	return ev
}

// snapshotLocked records a snapshot event of the stream's current state.
func (a *demoApp) snapshotLocked(s *demoStream) *demoEvent {
	if s.state == nil {
		s.state = s.encode()
	}
	s.seq++
	ev := &demoEvent{seq: s.seq, typ: s.snapshotType, timestamp: demoTimestamp(a.now()), state: s.state}
	ev.head = append(appendEventHead(nil, s.name, ev.seq, ev.typ, ev.timestamp), `{"state":`...)
	s.changed = false
	s.lastSnapshot = ev
	a.keepLocked(s, ev)
	return ev
}

func (a *demoApp) keepLocked(s *demoStream, ev *demoEvent) {
	s.ring.push(ev)
	a.outbox = append(a.outbox, ev)
}

// demoRing is a bounded FIFO of events with consecutive seqs.
type demoRing struct {
	events []*demoEvent // circular; len is the capacity
	start  int          // index of the oldest event
	n      int
}

func (r *demoRing) push(ev *demoEvent) {
	if r.n < len(r.events) {
		r.events[(r.start+r.n)%len(r.events)] = ev
		r.n++
		return
	}
	r.events[r.start] = ev
	r.start = (r.start + 1) % len(r.events)
}

// at returns the i-th oldest event.
func (r *demoRing) at(i int) *demoEvent { return r.events[(r.start+i)%len(r.events)] }

func (r *demoRing) oldestSeq() int64 {
	if r.n == 0 {
		return 0
	}
	return r.at(0).seq
}

func (r *demoRing) latestSeq() int64 {
	if r.n == 0 {
		return 0
	}
	return r.at(r.n - 1).seq
}

// find returns the event with seq, or nil. Seqs in a ring are consecutive.
func (r *demoRing) find(seq int64) *demoEvent {
	if r.n == 0 || seq < r.oldestSeq() || seq > r.latestSeq() {
		return nil
	}
	return r.at(int(seq - r.oldestSeq()))
}

// ---------------------------------------------------------------------------
// Requests (spec §4).

// handle answers one request. It is safe for concurrent use; results are
// immutable once returned and marshal to the spec's result objects.
func (a *demoApp) handle(method string, params json.RawMessage) (result any, err *wireError) {
	switch method {
	case "streams.list":
		return a.listStreams(), nil
	case "events.query":
		// Results are returned through explicit nils: a nil *demoEventsResult
		// in an interface would not be a nil result.
		res, werr := a.queryEvents(params)
		if werr != nil {
			return nil, werr
		}
		return res, nil
	case "snapshot.get":
		get := a.getSnapshot
		if demoAsksPath(params) {
			get = a.getSnapshotAt // demo_paths.go
		}
		res, werr := get(params)
		if werr != nil {
			return nil, werr
		}
		return res, nil
	case "snapshot.keys":
		res, werr := a.snapshotKeys(params)
		if werr != nil {
			return nil, werr
		}
		return res, nil
	}
	if res, werr, ok := a.handleAction(method, params); ok {
		return res, werr
	}
	return nil, &wireError{
		Code:    demoCodeUnknownMethod,
		Message: fmt.Sprintf("unknown method %q; this adapter answers streams.list, events.query, snapshot.get and snapshot.keys", method),
		Details: map[string]string{"method": method},
	}
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

func (r *demoStreamsResult) appendJSON(dst []byte) []byte { return append(dst, demoMarshal(r)...) }
func (r *demoStreamsResult) encodedSize() int             { return len(demoMarshal(r)) }

func (a *demoApp) listStreams() *demoStreamsResult {
	a.mu.Lock()
	defer a.mu.Unlock()
	res := &demoStreamsResult{Streams: make([]demoStreamInfo, 0, len(a.streams))}
	for _, s := range a.streams {
		info := demoStreamInfo{Name: s.name, Active: true, EventCount: s.ring.n,
			OldestSeq: s.ring.oldestSeq(), LatestSeq: s.ring.latestSeq(), Instances: s.instances}
		if s.ring.n > 0 {
			at := s.ring.at(s.ring.n - 1).timestamp
			info.LastEventAt = &at
		}
		for i := range s.ring.n {
			if s.ring.at(i).isSnapshot() {
				info.HasSnapshot = true
				break
			}
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

func (r *demoEventsResult) appendTail(dst []byte) []byte {
	dst = append(dst, `],"hasMore":`...)
	dst = strconv.AppendBool(dst, r.hasMore)
	dst = append(dst, `,"oldestSeq":`...)
	dst = strconv.AppendInt(dst, r.oldestSeq, 10)
	dst = append(dst, `,"latestSeq":`...)
	dst = strconv.AppendInt(dst, r.latestSeq, 10)
	return append(dst, '}')
}

func (r *demoEventsResult) appendJSON(dst []byte) []byte {
	dst = append(dst, `{"events":[`...)
	for i, ev := range r.events {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = ev.appendJSON(dst)
	}
	return r.appendTail(dst)
}

func (r *demoEventsResult) encodedSize() int {
	var tail [80]byte
	n := len(`{"events":[`) + len(r.appendTail(tail[:0]))
	for i, ev := range r.events {
		if i > 0 {
			n++
		}
		n += ev.encodedSize()
	}
	return n
}

func (r *demoEventsResult) MarshalJSON() ([]byte, error) { return r.appendJSON(nil), nil }

func (a *demoApp) queryEvents(raw json.RawMessage) (*demoEventsResult, *wireError) {
	const method = "events.query"
	p, werr := demoParseParams(method, raw)
	if werr != nil {
		return nil, werr
	}
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
	s, werr := a.streamLocked(method, name)
	if werr != nil {
		return nil, werr
	}
	r := &s.ring
	res := &demoEventsResult{events: []*demoEvent{}, oldestSeq: r.oldestSeq(), latestSeq: r.latestSeq()}
	matches := func(ev *demoEvent) bool { return !hasType || ev.typ == eventType }
	if hasSince {
		first := 0
		if r.n > 0 && since >= r.oldestSeq() {
			first = int(min(since-r.oldestSeq()+1, int64(r.n)))
		}
		for i := first; i < r.n; i++ {
			if ev := r.at(i); matches(ev) {
				if len(res.events) == int(limit) {
					res.hasMore = true
					break
				}
				res.events = append(res.events, ev)
			}
		}
		return res, nil
	}
	for i := r.n - 1; i >= 0; i-- {
		if ev := r.at(i); matches(ev) {
			if len(res.events) == int(limit) {
				res.hasMore = true
				break
			}
			res.events = append(res.events, ev)
		}
	}
	for i, j := 0, len(res.events)-1; i < j; i, j = i+1, j-1 {
		res.events[i], res.events[j] = res.events[j], res.events[i]
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

func (r *demoSnapshotResult) appendHead(dst []byte) []byte {
	dst = append(dst, `{"seq":`...)
	dst = strconv.AppendInt(dst, r.seq, 10)
	dst = append(dst, `,"timestamp":`...)
	dst = demoAppendString(dst, r.timestamp)
	return append(dst, `,"state":`...)
}

func (r *demoSnapshotResult) appendJSON(dst []byte) []byte {
	return append(append(r.appendHead(dst), r.state...), '}')
}

func (r *demoSnapshotResult) encodedSize() int {
	var head [96]byte
	return len(r.appendHead(head[:0])) + len(r.state) + 1
}

func (r *demoSnapshotResult) MarshalJSON() ([]byte, error) { return r.appendJSON(nil), nil }

// getSnapshot answers snapshot.get. Without seq it returns the current
// state: the latest snapshot event when the state has not changed since
// (and that event is still buffered), else a fresh snapshot event recorded
// now. Either way the returned seq can be asked for again with seq.
func (a *demoApp) getSnapshot(raw json.RawMessage) (*demoSnapshotResult, *wireError) {
	const method = "snapshot.get"
	p, werr := demoParseParams(method, raw)
	if werr != nil {
		return nil, werr
	}
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

// get returns the member name; null counts as absent.
func (p demoParams) get(name string) (json.RawMessage, bool) {
	v, ok := p.fields[name]
	if !ok || string(v) == "null" {
		return nil, false
	}
	return v, true
}

func (p demoParams) str(name string, required bool) (string, bool, *wireError) {
	v, ok := p.get(name)
	if !ok {
		if required {
			return "", false, demoInvalidParams(p.method, name, "required")
		}
		return "", false, nil
	}
	var s string
	if err := json.Unmarshal(v, &s); err != nil || s == "" {
		return "", false, demoInvalidParams(p.method, name, "must be a non-empty string")
	}
	return s, true, nil
}

func (p demoParams) int(name string, required bool, lo, hi int64) (int64, bool, *wireError) {
	v, ok := p.get(name)
	if !ok {
		if required {
			return 0, false, demoInvalidParams(p.method, name, "required")
		}
		return 0, false, nil
	}
	problem := fmt.Sprintf("must be an integer from %d to %d", lo, hi)
	if hi == math.MaxInt64 {
		problem = fmt.Sprintf("must be an integer of at least %d", lo)
	}
	var num json.Number
	if err := json.Unmarshal(v, &num); err != nil || len(v) == 0 || v[0] == '"' {
		return 0, false, demoInvalidParams(p.method, name, problem)
	}
	n, err := num.Int64()
	if err != nil {
		// Accept integral numbers written with a fraction or exponent (50.0, 5e1).
		f, ferr := num.Float64()
		if ferr != nil || f != math.Trunc(f) || f < float64(math.MinInt64) || f >= float64(math.MaxInt64) {
			return 0, false, demoInvalidParams(p.method, name, problem)
		}
		n = int64(f)
	}
	if n < lo || n > hi {
		return 0, false, demoInvalidParams(p.method, name, problem)
	}
	return n, true, nil
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

func demoString(v json.RawMessage) (string, bool) {
	var s string
	if len(v) == 0 || v[0] != '"' || json.Unmarshal(v, &s) != nil {
		return "", false
	}
	return s, true
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

// ---------------------------------------------------------------------------
// The connection.

// connect dials url, performs the handshake and serves requests and pushes
// until ctx is done (then it closes with 1000, after answering the requests
// in flight) or the connection ends. It returns after all its goroutines
// have exited: nil when ctx ended it, a *demoHandshakeError (wrapped) when
// the server refused the handshake, else the error that ended it.
func (a *demoApp) connect(ctx context.Context, wsURL string) error {
	return a.connectLogged(ctx, wsURL, slog.New(slog.DiscardHandler), nil)
}

// connectLogged is connect with a logger and a callback run once the
// connection is live.
func (a *demoApp) connectLogged(ctx context.Context, wsURL string, logger *slog.Logger, onLive func()) error {
	opts := &websocket.DialOptions{HTTPHeader: http.Header{}}
	if u, err := url.Parse(wsURL); err == nil {
		// React Native sends an Origin naming the host it dials; so do we,
		// so the server's origin check sees what a real app sends.
		scheme := "http"
		if u.Scheme == "wss" {
			scheme = "https"
		}
		opts.HTTPHeader.Set("Origin", scheme+"://"+u.Host)
	}
	conn, _, err := websocket.Dial(ctx, wsURL, opts)
	if err != nil {
		if ctx.Err() != nil {
			return nil
		}
		return fmt.Errorf("demo app: dial %s: %w", wsURL, err)
	}
	defer conn.CloseNow()
	conn.SetReadLimit(demoReadLimit)

	maxPayload, err := a.handshake(ctx, conn)
	if err != nil {
		if ctx.Err() != nil {
			return nil
		}
		return fmt.Errorf("demo app: %s: %w", wsURL, err)
	}
	link := &demoLink{
		conn:          conn,
		maxPayload:    maxPayload,
		sendOversized: a.opts.SendOversized,
		writeLock:     make(chan struct{}, 1),
		slots:         make(chan struct{}, demoMaxInFlight),
		pushes:        make(chan demoPush, demoPushQueue),
		done:          make(chan struct{}),
		inflight:      map[string]*demoInflight{},
		logger:        logger,
	}
	a.mu.Lock()
	a.link = link
	a.mu.Unlock()
	if onLive != nil {
		onLive()
	}
	err = a.serve(ctx, link)
	if ctx.Err() != nil {
		return nil
	}
	return fmt.Errorf("demo app: connection to %s ended: %w", wsURL, err)
}

func (a *demoApp) handshakeMessage() []byte {
	type stream struct {
		Name      string   `json:"name"`
		Active    bool     `json:"active"`
		Instances []string `json:"instances,omitempty"`
	}
	msg := struct {
		Type            string            `json:"type"`
		ProtocolVersion int               `json:"protocolVersion"`
		SessionID       string            `json:"sessionId"`
		AdapterVersion  string            `json:"adapterVersion"`
		StartedAt       string            `json:"startedAt"`
		App             map[string]string `json:"app"`
		Device          map[string]any    `json:"device"`
		Streams         []stream          `json:"streams"`
		Capabilities    []string          `json:"capabilities"`
		Token           string            `json:"token,omitempty"`
	}{
		Type:            "handshake",
		ProtocolVersion: demoProtocol,
		SessionID:       a.sessionID,
		AdapterVersion:  demoAdapterVersion,
		StartedAt:       a.startedAt,
		App:             map[string]string{"name": "ShopApp", "version": "2.4.0", "bundleId": "com.example.shop"},
		Device:          map[string]any{"platform": "ios", "osVersion": "18.1", "model": "iPhone 16", "isEmulator": true},
		Capabilities:    demoCapabilities,
		Token:           a.opts.Token,
	}
	if !a.opts.WithoutPathRequests {
		msg.Capabilities = append(slices.Clone(demoCapabilities), demoPathCapabilities...)
	}
	a.mu.Lock()
	for _, s := range a.streams {
		msg.Streams = append(msg.Streams, stream{Name: s.name, Active: true, Instances: s.instances})
	}
	a.mu.Unlock()
	return demoMarshal(msg)
}

// handshake sends the handshake and waits for the answer, returning the
// announced maxPayload (0 when absent: no limit).
func (a *demoApp) handshake(ctx context.Context, conn *websocket.Conn) (int, error) {
	ctx, cancel := context.WithTimeout(ctx, demoHandshakeTimeout)
	defer cancel()
	if err := conn.Write(ctx, websocket.MessageText, a.handshakeMessage()); err != nil {
		return 0, fmt.Errorf("sending handshake: %w", err)
	}
	for {
		typ, data, err := conn.Read(ctx)
		if err != nil {
			return 0, fmt.Errorf("waiting for handshake_ack: %w", err)
		}
		if typ != websocket.MessageText {
			continue
		}
		fields, err := demoObject(data)
		if err != nil {
			continue
		}
		switch t, _ := demoString(fields["type"]); t {
		case "handshake_ack":
			var maxPayload int
			if json.Unmarshal(fields["maxPayload"], &maxPayload) != nil || maxPayload < 0 {
				maxPayload = 0
			}
			return maxPayload, nil
		case "handshake_error":
			code, _ := demoString(fields["code"])
			message, _ := demoString(fields["message"])
			return 0, &demoHandshakeError{Code: code, Message: message}
		}
	}
}

// demoLink is one live connection.
type demoLink struct {
	conn          *websocket.Conn
	maxPayload    int // 0: no limit
	sendOversized bool
	logger        *slog.Logger

	// writeLock admits one writer at a time; waiting for it gives up when
	// the writer's context ends. Its holder owns buf.
	writeLock chan struct{}
	buf       []byte

	slots  chan struct{} // one per request in flight
	pushes chan demoPush
	done   chan struct{} // closed when the connection stopped reading

	mu       sync.Mutex // guards closing, inflight and handlers.Add
	closing  bool       // no new requests are started
	inflight map[string]*demoInflight
	handlers sync.WaitGroup
}

type demoInflight struct{ cancel context.CancelFunc }

// demoPush is a queued push: an event, or (flushed set) a marker closed
// when every push before it has been written.
type demoPush struct {
	event   *demoEvent
	flushed chan struct{}
}

// serve reads messages until the connection ends or ctx is done. Shutdown:
// stop intake, let the requests in flight answer, close with 1000.
func (a *demoApp) serve(ctx context.Context, l *demoLink) error {
	// The reader's context is not ctx: a cancelled read context makes the
	// websocket library drop the connection without a close handshake.
	serveCtx, stop := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { l.pushLoop(serveCtx) })
	wg.Go(func() {
		select {
		case <-ctx.Done():
			l.stopIntake()
			l.handlers.Wait()
			l.conn.Close(websocket.StatusNormalClosure, "app stopped")
		case <-serveCtx.Done():
		}
	})

	err := a.readLoop(serveCtx, l)
	close(l.done)
	a.mu.Lock()
	if a.link == l {
		a.link = nil
	}
	a.mu.Unlock()
	l.stopIntake()
	stop() // cancels the requests in flight: there is no one left to answer
	l.handlers.Wait()
	wg.Wait()
	return err
}

func (a *demoApp) readLoop(ctx context.Context, l *demoLink) error {
	for {
		typ, data, err := l.conn.Read(ctx)
		if err != nil {
			return err
		}
		if typ != websocket.MessageText {
			continue
		}
		fields, err := demoObject(data)
		if err != nil {
			l.logger.Debug("ignoring malformed message", "err", err)
			continue
		}
		switch t, _ := demoString(fields["type"]); t {
		case "request":
			id, ok := demoString(fields["id"])
			if !ok {
				l.logger.Debug("ignoring request without a string id")
				continue
			}
			method, _ := demoString(fields["method"])
			params := fields["params"]
			select {
			case l.slots <- struct{}{}:
			case <-ctx.Done():
				return ctx.Err()
			}
			l.start(ctx, id, func(reqCtx context.Context) { a.serveRequest(reqCtx, l, id, method, params) })
		case "cancel":
			if id, ok := demoString(fields["id"]); ok {
				l.cancel(id)
			}
		}
		// pong, and types this adapter does not know, are ignored (spec §1).
	}
}

// start runs serve in its own goroutine with a context that a cancel
// message for id ends, unless intake has stopped. The caller holds a slot.
func (l *demoLink) start(ctx context.Context, id string, serve func(context.Context)) {
	l.mu.Lock()
	if l.closing {
		l.mu.Unlock()
		<-l.slots
		return
	}
	reqCtx, cancel := context.WithCancel(ctx)
	entry := &demoInflight{cancel: cancel}
	l.inflight[id] = entry
	l.handlers.Add(1)
	l.mu.Unlock()
	go func() {
		defer l.handlers.Done()
		defer func() { <-l.slots }()
		defer cancel()
		serve(reqCtx)
		l.mu.Lock()
		if l.inflight[id] == entry {
			delete(l.inflight, id)
		}
		l.mu.Unlock()
	}()
}

// cancel drops the request id: the server gave up on it (spec §4).
func (l *demoLink) cancel(id string) {
	l.mu.Lock()
	entry := l.inflight[id]
	delete(l.inflight, id)
	l.mu.Unlock()
	if entry != nil {
		entry.cancel()
	}
}

func (l *demoLink) stopIntake() {
	l.mu.Lock()
	l.closing = true
	l.mu.Unlock()
}

func (a *demoApp) serveRequest(ctx context.Context, l *demoLink, id, method string, params json.RawMessage) {
	result, werr := a.handle(method, params)
	if ctx.Err() != nil {
		return // cancelled: the server no longer waits for the answer
	}
	quotedID := demoAppendString(nil, id)
	if werr == nil && l.maxPayload > 0 && !l.sendOversized {
		if size := demoResponseSize(quotedID, result); size > l.maxPayload {
			result, werr = nil, &wireError{
				Code:    demoCodePayloadTooLarge,
				Message: fmt.Sprintf("%s: the response is %d bytes, over the server's maxPayload of %d", method, size, l.maxPayload),
				Details: map[string]int{"bytes": size, "maxPayload": l.maxPayload},
			}
		}
	}
	err := l.write(ctx, func(dst []byte) []byte { return demoAppendResponse(dst, quotedID, result, werr) })
	if err != nil && ctx.Err() == nil {
		l.logger.Debug("writing response failed", "id", id, "method", method, "err", err)
	}
}

// demoEncoded is a result that encodes itself by appending, so pre-encoded
// states are copied once into the frame rather than re-marshalled.
type demoEncoded interface {
	appendJSON(dst []byte) []byte
	encodedSize() int
}

const (
	demoResponseHead = `{"type":"response","id":`
	demoResultKey    = `,"result":`
)

func demoResponseSize(quotedID []byte, result any) int {
	n := len(demoResponseHead) + len(quotedID) + len(demoResultKey) + 1
	if enc, ok := result.(demoEncoded); ok {
		return n + enc.encodedSize()
	}
	return n + len(demoMarshal(result))
}

func demoAppendResponse(dst, quotedID []byte, result any, werr *wireError) []byte {
	dst = append(dst, demoResponseHead...)
	dst = append(dst, quotedID...)
	switch enc, ok := result.(demoEncoded); {
	case werr != nil:
		dst = append(dst, `,"error":`...)
		dst = append(dst, demoMarshal(werr)...)
	case ok:
		dst = append(dst, demoResultKey...)
		dst = enc.appendJSON(dst)
	default:
		dst = append(dst, demoResultKey...)
		dst = append(dst, demoMarshal(result)...)
	}
	return append(dst, '}')
}

const demoPushHead = `{"type":"event","event":`

func (l *demoLink) fits(ev *demoEvent) bool {
	return l.maxPayload == 0 || l.sendOversized || len(demoPushHead)+ev.encodedSize()+1 <= l.maxPayload
}

// offer queues a push without waiting; it drops the push when the queue is
// full or the frame would exceed maxPayload.
func (l *demoLink) offer(ev *demoEvent) {
	if !l.fits(ev) {
		return
	}
	select {
	case l.pushes <- demoPush{event: ev}:
	default:
		l.logger.Debug("push queue full; dropping push", "seq", ev.seq)
	}
}

// enqueue queues a push, waiting for room.
func (l *demoLink) enqueue(ctx context.Context, p demoPush) error {
	if p.event != nil && !l.fits(p.event) {
		return nil
	}
	select {
	case l.pushes <- p:
		return nil
	case <-l.done:
		return errors.New("connection ended")
	case <-ctx.Done():
		return ctx.Err()
	}
}

// flush waits until every push queued before it has been written.
func (l *demoLink) flush(ctx context.Context) error {
	flushed := make(chan struct{})
	if err := l.enqueue(ctx, demoPush{flushed: flushed}); err != nil {
		return err
	}
	select {
	case <-flushed:
		return nil
	case <-l.done:
		return errors.New("connection ended")
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (l *demoLink) pushLoop(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case p := <-l.pushes:
			if p.flushed != nil {
				close(p.flushed)
				continue
			}
			err := l.write(ctx, func(dst []byte) []byte {
				return append(p.event.appendJSON(append(dst, demoPushHead...)), '}')
			})
			if err != nil {
				l.logger.Debug("push failed", "err", err)
				return
			}
		}
	}
}

// write sends the frame build appends to its argument, as one text frame,
// holding the writer lock. ctx bounds the wait for the lock only: once a
// frame is started it is finished (or the write times out), since an
// abandoned frame would break the connection.
func (l *demoLink) write(ctx context.Context, build func(dst []byte) []byte) error {
	select {
	case l.writeLock <- struct{}{}:
	case <-ctx.Done():
		return ctx.Err()
	}
	defer func() { <-l.writeLock }()
	l.buf = build(l.buf[:0])
	wctx, cancel := context.WithTimeout(context.Background(), demoWriteTimeout)
	defer cancel()
	err := l.conn.Write(wctx, websocket.MessageText, l.buf)
	if cap(l.buf) > demoKeepBuffer {
		l.buf = nil
	}
	return err
}

// run is the -demo loop: it steps every interval (never when interval <= 0)
// and keeps connecting to wsURL, backing off briefly between attempts, until
// ctx is done. It returns after its goroutines have exited.
func (a *demoApp) run(ctx context.Context, wsURL string, interval time.Duration, logger *slog.Logger) {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	var wg sync.WaitGroup
	defer wg.Wait()
	if interval > 0 {
		wg.Go(func() {
			ticker := time.NewTicker(interval)
			defer ticker.Stop()
			for {
				select {
				case <-ctx.Done():
					return
				case <-ticker.C:
					a.step()
				}
			}
		})
	}

	backoff := demoMinBackoff
	for ctx.Err() == nil {
		live := false
		err := a.connectLogged(ctx, wsURL, logger, func() {
			live = true
			logger.Info("demo app connected", "url", wsURL, "sessionId", a.sessionID)
		})
		if ctx.Err() != nil {
			return
		}
		var refused *demoHandshakeError
		switch {
		case errors.As(err, &refused):
			logger.Warn("demo app: handshake refused; retrying", "code", refused.Code, "message", refused.Message, "in", backoff)
		case live:
			logger.Info("demo app disconnected; reconnecting", "err", err)
		default:
			logger.Debug("demo app could not connect; retrying", "err", err, "in", backoff)
		}
		if live {
			backoff = demoMinBackoff
		}
		timer := time.NewTimer(backoff)
		select {
		case <-ctx.Done():
			timer.Stop()
			return
		case <-timer.C:
		}
		if !live {
			backoff = min(2*backoff, demoMaxBackoff)
		}
	}
}

// ---------------------------------------------------------------------------
// The shop: Redux store, navigation tree, MMKV instances and user actions.

type demoUser struct {
	ID    string `json:"id"`
	Name  string `json:"name"`
	Email string `json:"email"`
	Role  string `json:"role"`
}

type demoAuthState struct {
	User   *demoUser `json:"user"`
	Token  *string   `json:"token"`
	Status string    `json:"status"`
	// RememberedLogin is what a "remember me" box keeps: a password in the
	// store, which redaction must keep from agents.
	RememberedLogin *demoLogin `json:"rememberedLogin,omitempty"`
}

type demoLogin struct {
	Email    string `json:"email"`
	Password string `json:"password"`
}

// demoPassword is the demo user's password, remembered in the auth state.
const demoPassword = "Ada-Lovelace-1815"

type demoCartItem struct {
	SKU   string  `json:"sku"`
	Name  string  `json:"name"`
	Qty   int     `json:"qty"`
	Price float64 `json:"price"`
}

type demoCartState struct {
	Items    []demoCartItem `json:"items"`
	Total    float64        `json:"total"`
	Currency string         `json:"currency"`
}

type demoProduct struct {
	SKU      string  `json:"sku"`
	Name     string  `json:"name"`
	Price    float64 `json:"price"`
	Category string  `json:"category"`
}

type demoCatalogState struct {
	ByID           map[string]demoProduct `json:"byId"`
	Categories     []string               `json:"categories"`
	Loading        bool                   `json:"loading"`
	RecentlyViewed []string               `json:"recentlyViewed"`
}

type demoToast struct {
	ID      int    `json:"id"`
	Message string `json:"message"`
	Kind    string `json:"kind"`
}

type demoUIState struct {
	Theme         string      `json:"theme"`
	Toasts        []demoToast `json:"toasts"`
	Modal         *string     `json:"modal"`
	CurrentScreen string      `json:"currentScreen"`
}

type demoReduxState struct {
	Auth    demoAuthState    `json:"auth"`
	Cart    demoCartState    `json:"cart"`
	Catalog demoCatalogState `json:"catalog"`
	UI      demoUIState      `json:"ui"`
}

type demoAction struct {
	Type    string `json:"type"`
	Payload any    `json:"payload,omitempty"`
}

type demoActionDispatched struct {
	Action     demoAction `json:"action"`
	DurationMs float64    `json:"durationMs"`
}

// demoNavState is a React Navigation state; nested navigators sit in
// routes[i].state.
type demoNavState struct {
	Stale      bool        `json:"stale"`
	Type       string      `json:"type"`
	Key        string      `json:"key"`
	Index      int         `json:"index"`
	RouteNames []string    `json:"routeNames"`
	Routes     []demoRoute `json:"routes"`
}

type demoRoute struct {
	Key    string            `json:"key"`
	Name   string            `json:"name"`
	Params map[string]string `json:"params,omitempty"`
	State  *demoNavState     `json:"state,omitempty"`
}

type demoRouteRef struct {
	Name   string            `json:"name"`
	Params map[string]string `json:"params,omitempty"`
}

type demoNavAction struct {
	Type    string        `json:"type"`
	Payload *demoRouteRef `json:"payload,omitempty"`
}

type demoRouteChange struct {
	From   *demoRouteRef  `json:"from"`
	To     demoRouteRef   `json:"to"`
	Action *demoNavAction `json:"action,omitempty"`
}

type demoMMKVMutation struct {
	Instance string `json:"instance"`
	Key      string `json:"key"` // "" for clear
	Op       string `json:"op"`
	Value    any    `json:"value,omitempty"`
}

type demoMMKVSnapshot struct {
	Keys      map[string]any `json:"keys"`
	TotalSize int            `json:"totalSize"`
}

var (
	demoMMKVInstances = []string{"default", "auth"}
	demoTabs          = []string{"Home", "Catalog", "Cart", "Profile"}
	demoRootRoutes    = []string{"Main", "ProductDetail", "Checkout"}
	demoCategories    = []string{"shoes", "shirts", "bags"}
	demoProductNames  = [][]string{
		{"Trail Runner", "City Sneaker", "Canvas Low", "Hiking Boot", "Slip-On", "Court Classic"},
		{"Oxford Shirt", "Linen Tee", "Piqué Polo", "Flannel Shirt", "Henley", "Rugby Shirt"},
		{"Market Tote", "Day Backpack", "Gym Duffel", "Sling Bag", "Messenger", "Weekender"},
	}
	demoToastMessages = []string{"Added to cart", "Saved for later", "Network is slow", "Order synced", "Coupon applied"}
	demoAdmin         = demoUser{ID: "u_1042", Name: "Ada Lovelace", Email: "ada@example.com", Role: "admin"}
)

// demoProducts is the whole catalog; SKUs are "A-1" to "C-6".
var demoProducts = demoCatalog()

func demoCatalog() []demoProduct {
	var products []demoProduct
	for c, category := range demoCategories {
		for i, name := range demoProductNames[c] {
			cents := 1999 + 1000*i + 500*c
			products = append(products, demoProduct{
				SKU: fmt.Sprintf("%c-%d", 'A'+c, i+1), Name: name, Price: float64(cents) / 100, Category: category})
		}
	}
	return products
}

func (a *demoApp) initModelLocked() {
	token := a.tokenLocked()
	user := demoAdmin
	a.redux = demoReduxState{
		Auth:    demoAuthState{User: &user, Token: &token, Status: "authenticated", RememberedLogin: &demoLogin{Email: user.Email, Password: demoPassword}},
		Cart:    demoCartState{Items: []demoCartItem{}, Currency: "EUR"},
		Catalog: demoCatalogState{ByID: map[string]demoProduct{}, Categories: demoCategories, RecentlyViewed: []string{}},
		UI:      demoUIState{Theme: "light", Toasts: []demoToast{}, CurrentScreen: "Home"},
	}
	tabs := &demoNavState{Type: "tab", Key: a.keyLocked("tab"), RouteNames: demoTabs}
	for _, name := range demoTabs {
		tabs.Routes = append(tabs.Routes, demoRoute{Key: a.keyLocked(name), Name: name})
	}
	a.nav = demoNavState{Type: "stack", Key: a.keyLocked("stack"), RouteNames: demoRootRoutes,
		Routes: []demoRoute{{Key: a.keyLocked("Main"), Name: "Main", State: tabs}}}
	a.mmkv = map[string]map[string]any{
		"default": {"theme": "light", "launchCount": 1 + a.rng.IntN(40), "onboarding.done": true, "lastSeenVersion": "2.4.0"},
		"auth":    {"token": token, "userId": demoAdmin.ID},
	}
}

func (a *demoApp) encodeRedux() json.RawMessage {
	if a.override != nil {
		return a.override
	}
	return demoMarshal(a.redux)
}

func (a *demoApp) encodeMMKV() json.RawMessage {
	snap := map[string]demoMMKVSnapshot{}
	for _, instance := range demoMMKVInstances {
		keys := a.mmkv[instance]
		size := 0
		for k, v := range keys {
			size += len(k) + len(demoMarshal(v))
		}
		snap[instance] = demoMMKVSnapshot{Keys: keys, TotalSize: size}
	}
	return demoMarshal(snap)
}

const demoKeyAlphabet = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz_-"

// keyLocked returns a React Navigation style route key, "Home-xK3f…".
func (a *demoApp) keyLocked(name string) string {
	b := []byte(name + "-")
	for range 10 {
		b = append(b, demoKeyAlphabet[a.rng.IntN(len(demoKeyAlphabet))])
	}
	return string(b)
}

func (a *demoApp) tokenLocked() string {
	b := []byte("eyJhbGciOiJIUzI1NiJ9.")
	for range 32 {
		b = append(b, demoKeyAlphabet[a.rng.IntN(len(demoKeyAlphabet))])
	}
	return string(b)
}

// dispatchLocked records a Redux action after applying reduce to the store.
func (a *demoApp) dispatchLocked(actionType string, payload any, reduce func(*demoReduxState)) {
	if reduce != nil {
		reduce(&a.redux)
		if a.override == nil {
			a.reduxStream.markChanged()
		}
	}
	a.recordLocked(a.reduxStream, "action_dispatched", demoActionDispatched{
		Action:     demoAction{Type: actionType, Payload: payload},
		DurationMs: float64(1+a.rng.IntN(30)) / 10,
	})
}

func (a *demoApp) mmkvLocked(instance, op, key string, value any) {
	keys := a.mmkv[instance]
	switch op {
	case "set":
		keys[key] = value
	case "delete":
		delete(keys, key)
	case "clear":
		clear(keys)
	}
	a.mmkvStream.markChanged()
	a.recordLocked(a.mmkvStream, "mmkv_mutation", demoMMKVMutation{Instance: instance, Key: key, Op: op, Value: value})
}

func (a *demoApp) userActionLocked() {
	switch n := a.rng.IntN(100); {
	case n < 22:
		a.addToCartLocked()
	case n < 30:
		a.removeFromCartLocked()
	case n < 34:
		a.checkoutLocked()
	case n < 48:
		a.browseCategoryLocked()
	case n < 64:
		a.openProductLocked()
	case n < 74:
		a.switchTabLocked()
	case n < 82:
		a.showToastLocked()
	case n < 88:
		a.refreshTokenLocked()
	case n < 93:
		a.toggleThemeLocked()
	case n < 97:
		a.toggleModalLocked()
	default:
		a.reloginLocked()
	}
}

func (a *demoApp) randomProductLocked() demoProduct {
	return demoProducts[a.rng.IntN(len(demoProducts))]
}

func (a *demoApp) persistCartLocked() {
	if len(a.redux.Cart.Items) == 0 {
		if _, ok := a.mmkv["default"]["cart"]; ok {
			a.mmkvLocked("default", "delete", "cart", nil)
		}
		return
	}
	a.mmkvLocked("default", "set", "cart", string(demoMarshal(a.redux.Cart.Items)))
}

func demoCartTotal(items []demoCartItem) float64 {
	cents := 0
	for _, it := range items {
		cents += int(math.Round(it.Price*100)) * it.Qty
	}
	return float64(cents) / 100
}

func (a *demoApp) addToCartLocked() {
	p := a.randomProductLocked()
	item := demoCartItem{SKU: p.SKU, Name: p.Name, Qty: 1 + a.rng.IntN(2), Price: p.Price}
	a.dispatchLocked("cart/addItem", item, func(s *demoReduxState) {
		items := s.Cart.Items
		found := false
		for i := range items {
			if items[i].SKU == item.SKU {
				items[i].Qty += item.Qty
				found = true
			}
		}
		if !found {
			items = append(items, item)
		}
		s.Cart.Items = items
		s.Cart.Total = demoCartTotal(items)
	})
	a.persistCartLocked()
}

func (a *demoApp) removeFromCartLocked() {
	if len(a.redux.Cart.Items) == 0 {
		a.addToCartLocked()
		return
	}
	sku := a.redux.Cart.Items[a.rng.IntN(len(a.redux.Cart.Items))].SKU
	a.dispatchLocked("cart/removeItem", map[string]string{"sku": sku}, func(s *demoReduxState) {
		items := make([]demoCartItem, 0, len(s.Cart.Items))
		for _, it := range s.Cart.Items {
			if it.SKU != sku {
				items = append(items, it)
			}
		}
		s.Cart.Items = items
		s.Cart.Total = demoCartTotal(items)
	})
	a.persistCartLocked()
}

// checkoutLocked opens Checkout and places the order, which empties the
// cart (and deletes its persisted copy).
func (a *demoApp) checkoutLocked() {
	if len(a.redux.Cart.Items) == 0 || len(a.nav.Routes) >= 3 {
		a.addToCartLocked()
		return
	}
	a.navigateLocked(demoNavAction{Type: "NAVIGATE", Payload: &demoRouteRef{Name: "Checkout"}}, func() {
		a.nav.Routes = append(a.nav.Routes, demoRoute{Key: a.keyLocked("Checkout"), Name: "Checkout"})
		a.nav.Index = len(a.nav.Routes) - 1
	})
	total := a.redux.Cart.Total
	a.dispatchLocked("cart/checkoutStarted", map[string]float64{"total": total}, nil)
	if a.checkoutFailsLocked() {
		a.dispatchLocked("cart/checkoutFailed", map[string]string{"error": "Request failed with status code 500"}, nil)
		return
	}
	orderID := fmt.Sprintf("o_%06d", a.rng.IntN(1_000_000))
	a.dispatchLocked("cart/checkoutSucceeded", map[string]any{"orderId": orderID, "total": total}, func(s *demoReduxState) {
		s.Cart.Items = []demoCartItem{}
		s.Cart.Total = 0
	})
	a.persistCartLocked()
}

func (a *demoApp) browseCategoryLocked() {
	if a.focusedRouteLocked().Name != "Catalog" {
		a.navigateToTabLocked("Catalog")
	}
	category := demoCategories[a.rng.IntN(len(demoCategories))]
	a.dispatchLocked("catalog/fetchStarted", map[string]string{"category": category}, func(s *demoReduxState) {
		s.Catalog.Loading = true
	})
	var products []demoProduct
	for _, p := range demoProducts {
		if p.Category == category {
			products = append(products, p)
		}
	}
	a.dispatchLocked("catalog/fetchSucceeded", map[string]any{"category": category, "products": products}, func(s *demoReduxState) {
		for _, p := range products {
			s.Catalog.ByID[p.SKU] = p
		}
		s.Catalog.Loading = false
	})
}

func (a *demoApp) focusedRouteLocked() demoRouteRef {
	r := a.nav.Routes[a.nav.Index]
	if r.State != nil {
		r = r.State.Routes[r.State.Index]
	}
	return demoRouteRef{Name: r.Name, Params: r.Params}
}

// navigateLocked changes the navigation state with apply and records the
// route_change and the ui/screenChanged action that follows it.
func (a *demoApp) navigateLocked(action demoNavAction, apply func()) {
	from := a.focusedRouteLocked()
	apply()
	to := a.focusedRouteLocked()
	a.navStream.markChanged()
	a.recordLocked(a.navStream, "route_change", demoRouteChange{From: &from, To: to, Action: &action})
	a.dispatchLocked("ui/screenChanged", map[string]string{"name": to.Name}, func(s *demoReduxState) {
		s.UI.CurrentScreen = to.Name
	})
}

func (a *demoApp) navigateToTabLocked(tab string) {
	a.navigateLocked(demoNavAction{Type: "NAVIGATE", Payload: &demoRouteRef{Name: tab}}, func() {
		a.nav.Routes = a.nav.Routes[:1]
		a.nav.Index = 0
		for i, name := range demoTabs {
			if name == tab {
				a.nav.Routes[0].State.Index = i
			}
		}
	})
}

func (a *demoApp) switchTabLocked() {
	current := a.focusedRouteLocked().Name
	var choices []string
	for _, tab := range demoTabs {
		if tab != current {
			choices = append(choices, tab)
		}
	}
	a.navigateToTabLocked(choices[a.rng.IntN(len(choices))])
}

func (a *demoApp) openProductLocked() {
	if len(a.nav.Routes) >= 3 {
		a.navigateLocked(demoNavAction{Type: "GO_BACK"}, func() {
			a.nav.Routes = a.nav.Routes[:len(a.nav.Routes)-1]
			a.nav.Index = len(a.nav.Routes) - 1
		})
		return
	}
	p := a.randomProductLocked()
	params := map[string]string{"sku": p.SKU}
	a.navigateLocked(demoNavAction{Type: "PUSH", Payload: &demoRouteRef{Name: "ProductDetail", Params: params}}, func() {
		a.nav.Routes = append(a.nav.Routes, demoRoute{Key: a.keyLocked("ProductDetail"), Name: "ProductDetail", Params: params})
		a.nav.Index = len(a.nav.Routes) - 1
	})
	a.dispatchLocked("catalog/productViewed", params, func(s *demoReduxState) {
		viewed := append([]string{p.SKU}, s.Catalog.RecentlyViewed...)
		s.Catalog.RecentlyViewed = viewed[:min(len(viewed), 5)]
	})
}

func (a *demoApp) showToastLocked() {
	a.toastID++
	toast := demoToast{ID: a.toastID, Message: demoToastMessages[a.rng.IntN(len(demoToastMessages))], Kind: "info"}
	a.dispatchLocked("ui/showToast", toast, func(s *demoReduxState) {
		toasts := append(s.UI.Toasts, toast)
		s.UI.Toasts = toasts[max(0, len(toasts)-3):]
	})
}

// toastCycleLocked is pushEvents' action: show a toast, or hide the oldest.
func (a *demoApp) toastCycleLocked() {
	if len(a.redux.UI.Toasts) == 0 {
		a.showToastLocked()
		return
	}
	id := a.redux.UI.Toasts[0].ID
	a.dispatchLocked("ui/hideToast", map[string]int{"id": id}, func(s *demoReduxState) {
		s.UI.Toasts = s.UI.Toasts[1:]
	})
}

func (a *demoApp) refreshTokenLocked() {
	token := a.tokenLocked()
	a.dispatchLocked("auth/refreshToken", map[string]string{"token": token}, func(s *demoReduxState) {
		s.Auth.Token = &token
	})
	a.mmkvLocked("auth", "set", "token", token)
}

func (a *demoApp) toggleThemeLocked() {
	theme := "dark"
	if a.redux.UI.Theme == "dark" {
		theme = "light"
	}
	a.dispatchLocked("ui/setTheme", map[string]string{"theme": theme}, func(s *demoReduxState) {
		s.UI.Theme = theme
	})
	a.mmkvLocked("default", "set", "theme", theme)
}

func (a *demoApp) toggleModalLocked() {
	if a.redux.UI.Modal != nil {
		a.dispatchLocked("ui/closeModal", nil, func(s *demoReduxState) { s.UI.Modal = nil })
		return
	}
	modal := "promo"
	a.dispatchLocked("ui/openModal", map[string]string{"name": modal}, func(s *demoReduxState) { s.UI.Modal = &modal })
}

func (a *demoApp) reloginLocked() {
	a.dispatchLocked("auth/logout", nil, func(s *demoReduxState) {
		s.Auth = demoAuthState{Status: "anonymous"}
	})
	a.mmkvLocked("auth", "clear", "", nil)
	token := a.tokenLocked()
	user := demoAdmin
	a.dispatchLocked("auth/loginSucceeded", map[string]any{"user": user, "token": token}, func(s *demoReduxState) {
		s.Auth = demoAuthState{User: &user, Token: &token, Status: "authenticated", RememberedLogin: &demoLogin{Email: user.Email, Password: demoPassword}}
	})
	a.mmkvLocked("auth", "set", "token", token)
	a.mmkvLocked("auth", "set", "userId", user.ID)
}
