package main

import (
	"cmp"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strconv"
	"sync"
	"time"
)

// demo.go is the simulated app behind -demo and the adapter side of the
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
	demoCodePathNotFound      = "PATH_NOT_FOUND"
)

// Capabilities of spec §2 the simulated app may advertise. The app speaks
// the wire protocol as any app does, so it spells the protocol's names
// itself rather than borrow the server's.
const (
	demoCapSnapshotPath  = "snapshot.path"
	demoCapSnapshotKeys  = "snapshot.keys"
	demoCapStateDispatch = "state.dispatch"
	demoCapCommands      = "commands"
)

// wireError is the error object of an adapter response (spec §4).
type wireError struct {
	Code    string `json:"code"`
	Message string `json:"message"`
	Details any    `json:"details,omitempty"`
}

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

	// QueryCache offers the react_query stream of a TanStack-Query-like
	// cache (demo_query.go).
	QueryCache bool
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

	queries demoQueryCache // react_query (demo_query.go)
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
		sessionID: cmp.Or(opts.SessionID, demoSessionID(opts.Seed)),
		rng:       rand.New(rand.NewPCG(uint64(opts.Seed), 0x5b0c_a9e1)),
		paths:     demoTrees{streams: map[string]demoTree{}},
	}
	if a.now == nil {
		a.now = time.Now
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
	a.startQueries()
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
// the live connection in seq order (pushes are optional, spec §5).
func (a *demoApp) mutate(f func()) {
	a.pushMu.Lock()
	defer a.pushMu.Unlock()
	a.mu.Lock()
	f()
	events, link := a.takeOutboxLocked() // no events without a link
	a.mu.Unlock()
	for _, ev := range events {
		link.offer(ev)
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
// also records a snapshot of every stream.
func (a *demoApp) step() {
	a.mutate(func() {
		a.steps++
		n := len(a.outbox)
		a.userActionLocked()
		a.trafficLocked(a.outbox[n:])
		a.queriesStepLocked()
		if a.steps%demoSnapshotEvery == 0 {
			for _, s := range a.streams {
				if s.encode != nil {
					a.snapshotLocked(s)
				}
			}
		}
	})
}

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

func (a *demoApp) addStream(name, snapshotType string, instances []string, encode func() json.RawMessage) *demoStream {
	a.mu.Lock()
	defer a.mu.Unlock()
	s := &demoStream{name: name, snapshotType: snapshotType, instances: instances, encode: encode,
		ring: demoRing{newQueue[*demoEvent](a.opts.BufferSize, 0, nil)}, changed: true}
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

// recordLocked records a non-snapshot event, timestamped now.
func (a *demoApp) recordLocked(s *demoStream, typ string, payload any) {
	a.recordAtLocked(s, typ, demoTimestamp(a.now()), payload)
}

func (a *demoApp) recordAtLocked(s *demoStream, typ, timestamp string, payload any) {
	p := demoMarshal(payload)
	s.seq++
	ev := &demoEvent{seq: s.seq, typ: typ, timestamp: timestamp}
	ev.head = appendEventHead(make([]byte, 0, 96+len(p)), s.name, ev.seq, typ, ev.timestamp)
	ev.head = append(append(ev.head, p...), '}')
	a.keepLocked(s, ev)
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
type demoRing struct{ queue[*demoEvent] } // bounded by the buffer size

// at returns the i-th oldest event.
func (r *demoRing) at(i int) *demoEvent { return *r.queue.at(i) }

func (r *demoRing) oldestSeq() int64 {
	if r.len() == 0 {
		return 0
	}
	return r.at(0).seq
}

func (r *demoRing) latestSeq() int64 {
	if r.len() == 0 {
		return 0
	}
	return r.at(r.len() - 1).seq
}

// find returns the event with seq, or nil. Seqs in a ring are consecutive.
func (r *demoRing) find(seq int64) *demoEvent {
	if r.len() == 0 || seq < r.oldestSeq() || seq > r.latestSeq() {
		return nil
	}
	return r.at(int(seq - r.oldestSeq()))
}
