package main

// sessions.go is the session registry. A session is one app, connected now
// or until recently, whichever way it came in: a Wire Protocol adapter
// (conn.go) or a Reactotron client through the bridge. Tools and resources
// ask a session; they never see how it is fed.
//
// The seam speaks the wire protocol's request vocabulary (streams.list,
// events.query, snapshot.get, …). A live session hands a request to its
// feed: a wire adapter answers it itself, the Reactotron bridge answers what
// it can by asking the app in Reactotron's terms. Everything a feed does not
// answer, and everything asked of a disconnected session, is answered from
// what the server holds: per stream, a bounded ring of the events it
// received and the last snapshot it fetched.
//
// Lock order: sessionRegistry.mu, then session.mu. Neither is held while
// waiting for an app.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"
)

// Session transports, as debug_health_check names them.
const (
	sessionViaWire       = "wire"
	sessionViaReactotron = "reactotron"
)

const (
	// sessionPostMortemTTL is how long a disconnected session stays listed
	// and queryable, unless the same device connects again first.
	sessionPostMortemTTL = 30 * time.Minute
	// sessionBufferBytes bounds the events and snapshots one session holds.
	sessionBufferBytes = 32 << 20
	// maxSessions bounds the sessions kept at once; beyond it the oldest
	// disconnected sessions are forgotten first.
	maxSessions = 64
	// defaultEventBuffer is EVENT_BUFFER's default: events kept per stream.
	defaultEventBuffer = 1000
)

// sessionFeed is how a live session reaches its app. request asks the app
// in the wire protocol's vocabulary and returns the answer's result, or
// errAnswerLocally when the session should answer from its buffers; its
// errors are tool errors. replaced ends the feed because a newer connection
// of the same app or device took its session; it must not block.
type sessionFeed interface {
	request(ctx context.Context, method string, params any) (json.RawMessage, error)
	replaced()
}

// errAnswerLocally is what a feed returns for a request the session answers
// from the server's own buffers.
var errAnswerLocally = errors.New("answered from the session's buffers")

// sessionRegistry holds every session: the live ones and, for
// sessionPostMortemTTL after they disconnect, the ones that left. Its
// methods are safe for concurrent use.
type sessionRegistry struct {
	logger      *slog.Logger
	events      *linkEventQueue
	eventBuffer int           // events kept per stream (EVENT_BUFFER)
	bufferBytes int64         // bytes kept per session
	ttl         time.Duration // post-mortem lifetime

	mu            sync.Mutex
	sessions      []*session // in order of connection, the newest last
	everConnected bool
}

func newSessionRegistry(cfg config, logger *slog.Logger, events *linkEventQueue) *sessionRegistry {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	n := cfg.EventBuffer
	if n <= 0 {
		n = defaultEventBuffer
	}
	return &sessionRegistry{logger: logger, events: events, eventBuffer: n, bufferBytes: sessionBufferBytes, ttl: sessionPostMortemTTL}
}

// session is one app. id, via and deviceID never change; the rest is
// guarded by mu.
type session struct {
	reg      *sessionRegistry
	id       string
	via      string
	deviceID string // "" when the app gave none

	mu             sync.Mutex
	info           *adapterInfo // handshake or intro; stream figures kept up to date
	streamIndex    map[string]int
	feed           sessionFeed // nil once disconnected
	disconnectedAt time.Time
	rings          map[string]*eventRing
	bytes          int64 // held by rings and snapshots
	commands       []json.RawMessage
	// mmkvObserved is what the Reactotron bridge saw of MMKV: instance →
	// key → value, the only MMKV state a Reactotron app tells.
	mmkvObserved map[string]map[string]json.RawMessage
}

// sessionView is a copy of what a session says about itself.
type sessionView struct {
	ID, Via, DeviceID string
	Connected         bool
	DisconnectedAt    time.Time
	Info              *adapterInfo
}

// AppName is the app's name as the session's handshake or intro gave it.
func (v sessionView) AppName() string {
	if v.Info == nil || len(v.Info.App) == 0 {
		return ""
	}
	var app struct {
		Name string `json:"name"`
	}
	if json.Unmarshal(v.Info.App, &app) != nil {
		return ""
	}
	return app.Name
}

// attach makes feed the live feed of the session id of transport via,
// creating the session or reconnecting a known one (its buffers kept). A new
// wire session replaces every session of the same device: a live one's
// feed is returned in displaced, for the caller to end outside any lock.
func (r *sessionRegistry) attach(via, id, deviceID string, info *adapterInfo, feed sessionFeed) (s *session, displaced []sessionFeed) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.pruneLocked(time.Now())
	r.everConnected = true
	idx := slices.IndexFunc(r.sessions, func(s *session) bool { return s.via == via && s.id == id })
	if idx >= 0 {
		s = r.sessions[idx]
		r.sessions = slices.Delete(r.sessions, idx, idx+1)
	}
	var replaced []string
	// Sessions of the same device (for wire adapters without a deviceId: of
	// every adapter without one) give way to the newcomer.
	r.sessions = slices.DeleteFunc(r.sessions, func(old *session) bool {
		if via != sessionViaWire || old.via != sessionViaWire || old.deviceID != deviceID {
			return false
		}
		old.mu.Lock()
		if old.feed != nil {
			displaced = append(displaced, old.feed)
			replaced = append(replaced, old.id)
			old.feed = nil
			old.disconnectedAt = time.Now()
		}
		old.mu.Unlock()
		return true
	})
	if s == nil {
		s = &session{reg: r, id: id, via: via, deviceID: deviceID, rings: make(map[string]*eventRing)}
	}
	s.mu.Lock()
	if s.feed != nil && s.feed != feed {
		displaced = append(displaced, s.feed)
		replaced = append(replaced, s.id)
	}
	s.feed = feed
	s.disconnectedAt = time.Time{}
	s.setInfoLocked(info)
	s.mu.Unlock()
	r.sessions = append(r.sessions, s)
	r.boundLocked()
	for _, old := range replaced {
		r.events.push(linkEvent{Kind: linkDisconnected, SessionID: old, Reason: "replaced"})
	}
	ev := linkEvent{Kind: linkConnected, SessionID: id}
	if len(replaced) > 0 {
		ev.Replaced = replaced[0]
	}
	r.events.push(ev)
	return s, displaced
}

// detach records that feed of s went away for reason. It reports whether
// feed was still s's live feed (a replaced feed is already detached).
func (r *sessionRegistry) detach(s *session, feed sessionFeed, reason string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	s.mu.Lock()
	wasLive := s.feed == feed && feed != nil
	if wasLive {
		s.feed = nil
		s.disconnectedAt = time.Now()
	}
	s.mu.Unlock()
	if wasLive {
		r.events.push(linkEvent{Kind: linkDisconnected, SessionID: s.id, Reason: reason})
	}
	return wasLive
}

// boundLocked forgets the oldest disconnected sessions beyond maxSessions.
func (r *sessionRegistry) boundLocked() {
	for len(r.sessions) > maxSessions {
		i := slices.IndexFunc(r.sessions, func(s *session) bool { return !s.isLive() })
		if i < 0 {
			return // every session is live: they are bounded by connections
		}
		r.sessions = slices.Delete(r.sessions, i, i+1)
	}
}

// pruneLocked forgets sessions disconnected longer than the TTL ago.
func (r *sessionRegistry) pruneLocked(now time.Time) {
	r.sessions = slices.DeleteFunc(r.sessions, func(s *session) bool {
		s.mu.Lock()
		defer s.mu.Unlock()
		expired := s.feed == nil && now.Sub(s.disconnectedAt) >= r.ttl
		if expired {
			r.events.push(linkEvent{Kind: linkSessionExpired, SessionID: s.id})
		}
		return expired
	})
}

// prune forgets expired sessions now; the link calls it periodically so
// that clients hear of expiries.
func (r *sessionRegistry) prune() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.pruneLocked(time.Now())
}

// list returns every session, the most recently connected first.
func (r *sessionRegistry) list() []*session {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.pruneLocked(time.Now())
	out := slices.Clone(r.sessions)
	slices.Reverse(out)
	return out
}

// current is the default session: the most recently connected live one,
// else the most recently disconnected one; nil when there is none.
func (r *sessionRegistry) current() *session {
	all := r.list()
	for _, s := range all {
		if s.isLive() {
			return s
		}
	}
	var newest *session
	var at time.Time
	for _, s := range all {
		if v := s.view(); newest == nil || v.DisconnectedAt.After(at) {
			newest, at = s, v.DisconnectedAt
		}
	}
	return newest
}

// currentLive is the most recently connected live session of transport via
// ("" for any), or nil.
func (r *sessionRegistry) currentLive(via string) *session {
	for _, s := range r.list() {
		if s.isLive() && (via == "" || s.via == via) {
			return s
		}
	}
	return nil
}

// find resolves a session argument: a session id, else an app name
// (case-insensitive). "" is the default session.
func (r *sessionRegistry) find(ref string) (*session, error) {
	if ref == "" {
		return r.current(), nil
	}
	all := r.list()
	for _, s := range all {
		if s.id == ref {
			return s, nil
		}
	}
	var byApp []*session
	for _, s := range all {
		if strings.EqualFold(s.view().AppName(), ref) {
			byApp = append(byApp, s)
		}
	}
	switch len(byApp) {
	case 1:
		return byApp[0], nil
	case 0:
		return nil, sessionArgError(all, fmt.Sprintf("no session has the id or app name %q", ref))
	}
	return nil, sessionArgError(all, fmt.Sprintf("%d sessions have the app name %q; pass a session id", len(byApp), ref))
}

// sessionArgError is the INVALID_PARAMS error of a session argument that
// names no session, or several, listing the sessions there are.
func sessionArgError(all []*session, problem string) *toolError {
	list := make([]map[string]any, 0, len(all))
	for _, s := range all {
		v := s.view()
		list = append(list, map[string]any{"id": v.ID, "app": nullable(v.AppName()), "connected": v.Connected})
	}
	e := invalidParams("session", problem)
	e.Details = map[string]any{"argument": "session", "problem": problem, "sessions": list}
	e.Suggestion = "Pass one of the listed session ids as `session`, or call debug_health_check to see the sessions."
	return e
}

// nullable is s, or nil (JSON null) when s is empty.
func nullable(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// hasConnected reports whether any app has connected since the start.
func (r *sessionRegistry) hasConnected() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.everConnected
}

// count is how many sessions the registry holds.
func (r *sessionRegistry) count() int {
	return len(r.list())
}

func (s *session) isLive() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.feed != nil
}

func (s *session) view() sessionView {
	s.mu.Lock()
	defer s.mu.Unlock()
	return sessionView{ID: s.id, Via: s.via, DeviceID: s.deviceID, Connected: s.feed != nil,
		DisconnectedAt: s.disconnectedAt, Info: s.info.clone()}
}

// setInfoLocked installs a handshake's or intro's description, keeping the
// figures of streams that stay.
func (s *session) setInfoLocked(info *adapterInfo) {
	if s.info != nil {
		s.mergeStreamsLocked(info.Streams)
		streams := s.info.Streams
		s.info = info
		s.info.Streams = streams
		return
	}
	s.info = info
	s.indexStreamsLocked()
}

// setStreams installs a pushed stream list, keeping the figures of streams
// that stay. Linear in the number of streams.
func (s *session) setStreams(from sessionFeed, streams []streamState) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.feed != from {
		return // a replaced connection
	}
	s.mergeStreamsLocked(streams)
	s.reg.events.push(linkEvent{Kind: linkStreamsChanged, SessionID: s.id})
}

func (s *session) mergeStreamsLocked(streams []streamState) {
	for i := range streams {
		if j, ok := s.streamIndex[streams[i].Name]; ok {
			old := s.info.Streams[j]
			streams[i].EventCount, streams[i].LatestSeq, streams[i].LastEventAt = old.EventCount, old.LatestSeq, old.LastEventAt
		}
	}
	s.info.Streams = streams
	s.indexStreamsLocked()
}

func (s *session) indexStreamsLocked() {
	s.streamIndex = make(map[string]int, len(s.info.Streams))
	for i, st := range s.info.Streams {
		s.streamIndex[st.Name] = i
	}
}

// addStream advertises stream as active if it is not yet; the Reactotron
// bridge learns its streams from the messages it receives.
func (s *session) addStream(name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.streamIndex[name]; ok {
		return
	}
	s.info.Streams = append(s.info.Streams, streamState{Name: name, Active: true})
	s.streamIndex[name] = len(s.info.Streams) - 1
	if s.feed != nil {
		s.reg.events.push(linkEvent{Kind: linkStreamsChanged, SessionID: s.id})
	}
}

// record keeps event (a whole event object as JSON, which record owns) of
// stream with its seq and type, and updates the stream's figures. An event
// of a stream the session does not advertise counts nowhere and is not
// kept, but is still reported: the server treats every stream alike.
func (s *session) record(from sessionFeed, stream string, seq int64, typ string, at time.Time, event []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.feed != from {
		return // a replaced connection
	}
	s.recordLocked(stream, seq, typ, at, event)
}

func (s *session) recordLocked(stream string, seq int64, typ string, at time.Time, event []byte) {
	if i, ok := s.streamIndex[stream]; ok {
		st := &s.info.Streams[i]
		if seq <= st.LatestSeq {
			return // seqs only increase: a replayed or stale event changes nothing
		}
		st.EventCount++
		st.LatestSeq = max(st.LatestSeq, seq)
		st.LastEventAt = at
		s.ringLocked(stream).add(s, bufferedEvent{seq: seq, typ: typ, at: at, raw: event})
	}
	s.reg.events.push(linkEvent{Kind: linkEventPushed, SessionID: s.id, Stream: stream})
}

func (s *session) ringLocked(stream string) *eventRing {
	r := s.rings[stream]
	if r == nil {
		r = &eventRing{}
		s.rings[stream] = r
	}
	return r
}

// request asks the session: its feed while live, else (and for what the
// feed leaves to it) its buffers.
func (s *session) request(ctx context.Context, method string, params any) (json.RawMessage, error) {
	s.mu.Lock()
	feed := s.feed
	s.mu.Unlock()
	if feed != nil {
		raw, err := feed.request(ctx, method, params)
		if !errors.Is(err, errAnswerLocally) {
			if err == nil {
				s.keepSnapshot(method, params, raw)
				s.keepCommands(method, raw)
			}
			return raw, err
		}
	}
	return s.answerLocally(method, params)
}

// keepSnapshot holds the newest current-state snapshot fetched per stream,
// for answers after the app has gone.
func (s *session) keepSnapshot(method string, params any, raw json.RawMessage) {
	p, ok := params.(snapshotParams)
	if method != "snapshot.get" || !ok || p.Seq != 0 || p.Path != nil {
		return
	}
	seq, _ := wireInt(rawMember(raw, "seq"))
	if seq < 1 || int64(len(raw)) > s.reg.bufferBytes/2 {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.streamIndex[p.Stream]; !ok {
		return
	}
	r := s.ringLocked(p.Stream)
	if r.snapshot != nil && r.snapshotSeq > seq {
		return
	}
	s.bytes -= int64(len(r.snapshot))
	r.snapshot, r.snapshotSeq = bytes.Clone(raw), seq
	s.bytes += int64(len(raw))
	s.evictLocked()
}

// rawMember returns the value of member name of a JSON object, or nil.
func rawMember(obj []byte, name string) []byte {
	var v []byte
	_ = eachMember(obj, func(n string, value []byte) bool {
		if n == name {
			v = value
			return false
		}
		return true
	})
	return v
}

// Params of the requests sessions answer from their buffers. They encode
// as the wire protocol's params.
type (
	eventsParams struct {
		Stream    string `json:"stream"`
		Limit     int64  `json:"limit"`
		SinceSeq  *int64 `json:"since_seq,omitempty"`
		EventType string `json:"event_type,omitempty"`
	}
	// snapshotParams asks for a snapshot, or with Path for the value at a
	// path in it (wire protocol "Paths in requests"). Path holds one
	// segment per parsed pathSegment, built by wirePath: a string for an
	// object key, an int64 for a bare index, which on an object names the
	// key of its decimal spelling; nil is the whole state. Only sessions
	// whose app offers capSnapshotPath are asked with a Path; a feed that
	// leaves such a request to the session gets it answered from the
	// snapshot the server holds.
	snapshotParams struct {
		Stream string `json:"stream"`
		Seq    int64  `json:"seq,omitempty"`
		Path   []any  `json:"path,omitempty"`
	}
	// The optional requests that act on the app (capabilities
	// state.dispatch and commands).
	dispatchParams struct {
		Action json.RawMessage `json:"action"`
	}
	listCommandsParams struct{}
	runCommandParams   struct {
		Command string          `json:"command"`
		Args    json.RawMessage `json:"args"`
	}
)

// offers reports whether the session's app named capability in its
// handshake's capabilities.
func (s *session) offers(capability string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.info != nil && slices.Contains(s.info.Capabilities, capability)
}

// answerLocally answers from the server's buffers.
func (s *session) answerLocally(method string, params any) (json.RawMessage, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch p := params.(type) {
	case eventsParams:
		return s.eventsLocked(p), nil
	case snapshotParams:
		if p.Path == nil {
			return s.snapshotLocked(p)
		}
		return s.snapshotAtLocked(p)
	case listCommandsParams:
		if s.commands != nil || s.via == sessionViaReactotron {
			return s.commandsLocked(), nil
		}
	default:
		if method == "streams.list" {
			return s.streamsLocked(), nil
		}
	}
	return nil, s.goneErrorLocked(method)
}

// goneErrorLocked says that what was asked needs the app, which has left.
func (s *session) goneErrorLocked(method string) *toolError {
	if s.feed != nil {
		return newToolError(codeAdapterError, map[string]string{"adapterMessage": method + " is not offered by this app"},
			"the app's %s session does not offer %s", s.via, method)
	}
	e := linkNotConnectedError(linkReasonDisconnected, "", "")
	e.Message = fmt.Sprintf("the app of session %s disconnected at %s, and %s needs the app", s.id, s.disconnectedAt.UTC().Format(timeFormat), method)
	return e
}

func (s *session) streamsLocked() json.RawMessage {
	var o jsonObject
	o.key("streams")
	o.buf = append(o.buf, '[')
	for i, st := range s.info.Streams {
		if i > 0 {
			o.buf = append(o.buf, ',')
		}
		r := s.rings[st.Name]
		var oldest, latest int64
		hasSnapshot := false
		if r != nil {
			oldest, latest = r.seqRange()
			hasSnapshot = r.snapshot != nil || r.newestSnapshot() != nil
		}
		entry := map[string]any{"name": st.Name, "active": st.Active, "eventCount": st.EventCount,
			"oldestSeq": oldest, "latestSeq": max(latest, st.LatestSeq), "hasSnapshot": hasSnapshot,
			"lastEventAt": formatTime(st.LastEventAt)}
		if st.Instances != nil {
			entry["instances"] = st.Instances
		}
		b, _ := json.Marshal(entry)
		o.buf = append(o.buf, b...)
	}
	o.buf = append(o.buf, ']')
	return o.close()
}

// eventsLocked answers events.query with the semantics of wire protocol §4.
func (s *session) eventsLocked(p eventsParams) json.RawMessage {
	r := s.rings[p.Stream]
	var matched []bufferedEvent
	hasMore := false
	var oldest, latest int64
	if r != nil {
		oldest, latest = r.seqRange()
		live := r.events[r.start:]
		match := func(e bufferedEvent) bool { return p.EventType == "" || e.typ == p.EventType }
		if p.SinceSeq != nil {
			for _, e := range live {
				if e.seq <= *p.SinceSeq || !match(e) {
					continue
				}
				if int64(len(matched)) == p.Limit {
					hasMore = true
					break
				}
				matched = append(matched, e)
			}
		} else {
			for i := len(live) - 1; i >= 0; i-- {
				if !match(live[i]) {
					continue
				}
				if int64(len(matched)) == p.Limit {
					hasMore = true
					break
				}
				matched = append(matched, live[i])
			}
			slices.Reverse(matched)
		}
	}
	buf := append([]byte(nil), `{"events":[`...)
	for i, e := range matched {
		if i > 0 {
			buf = append(buf, ',')
		}
		buf = append(buf, e.raw...)
	}
	buf = fmt.Appendf(buf, `],"hasMore":%t,"oldestSeq":%d,"latestSeq":%d}`, hasMore, oldest, latest)
	return buf
}

// snapshotLocked answers snapshot.get from the snapshot events held and the
// last snapshot fetched.
func (s *session) snapshotLocked(p snapshotParams) (json.RawMessage, error) {
	r := s.rings[p.Stream]
	if r != nil {
		if p.Seq == 0 {
			ev := r.newestSnapshot()
			if r.snapshot != nil && (ev == nil || r.snapshotSeq >= ev.seq) {
				return bytes.Clone(r.snapshot), nil
			}
			if ev != nil {
				return snapshotAnswer(ev.raw), nil
			}
		} else {
			if r.snapshot != nil && r.snapshotSeq == p.Seq {
				return bytes.Clone(r.snapshot), nil
			}
			for _, e := range r.events[r.start:] {
				if e.seq == p.Seq && isSnapshotEvent(e.raw) {
					return snapshotAnswer(e.raw), nil
				}
			}
		}
	}
	if p.Seq == 0 && s.feed == nil {
		// The current state needs the app: there is no seq to look for.
		return nil, s.goneErrorLocked(fmt.Sprintf("the current state of stream %q", p.Stream))
	}
	what := "no snapshot"
	if p.Seq != 0 {
		what = fmt.Sprintf("no snapshot event with seq %d", p.Seq)
	}
	state := "holds"
	if s.feed == nil {
		state = "kept"
	}
	return nil, newToolError(codeSnapshotNotFound, nil, "the server %s %s of stream %q for session %s", state, what, p.Stream, s.id)
}

// isSnapshotEvent reports whether an event's payload carries a state.
func isSnapshotEvent(event []byte) bool {
	payload := rawMember(event, "payload")
	return rawKind(payload) == "object" && rawMember(payload, "state") != nil
}

// snapshotAnswer builds snapshot.get's answer from a snapshot event.
func snapshotAnswer(event []byte) json.RawMessage {
	var o jsonObject
	o.raw("seq", rawMember(event, "seq"))
	ts := rawMember(event, "timestamp")
	if ts == nil {
		ts = []byte("null")
	}
	o.raw("timestamp", ts)
	o.raw("state", rawMember(rawMember(event, "payload"), "state"))
	return o.close()
}

// eventRing is one stream's buffered events, oldest first, and the last
// current-state snapshot fetched.
type eventRing struct {
	events      []bufferedEvent
	start       int // events before start have been evicted
	bytes       int64
	snapshot    json.RawMessage // a snapshot.get answer
	snapshotSeq int64
}

type bufferedEvent struct {
	seq int64
	typ string
	at  time.Time
	raw []byte
}

// add appends e, evicting the oldest events beyond the count bound and, for
// the whole session, beyond the byte bound.
func (r *eventRing) add(s *session, e bufferedEvent) {
	r.events = append(r.events, e)
	r.bytes += int64(len(e.raw))
	s.bytes += int64(len(e.raw))
	for len(r.events)-r.start > s.reg.eventBuffer {
		s.bytes -= r.evictOldest()
	}
	s.evictLocked()
}

// evictOldest drops the oldest event and returns its size. The slice is
// compacted when half of it is dead, so eviction is amortised O(1).
func (r *eventRing) evictOldest() int64 {
	n := int64(len(r.events[r.start].raw))
	r.events[r.start] = bufferedEvent{}
	r.start++
	r.bytes -= n
	if r.start > len(r.events)/2 {
		r.events = slices.Clone(r.events[r.start:])
		r.start = 0
	}
	return n
}

func (r *eventRing) seqRange() (oldest, latest int64) {
	if len(r.events) == r.start {
		return 0, 0
	}
	return r.events[r.start].seq, r.events[len(r.events)-1].seq
}

func (r *eventRing) newestSnapshot() *bufferedEvent {
	for i := len(r.events) - 1; i >= r.start; i-- {
		if strings.HasSuffix(r.events[i].typ, "_snapshot") && isSnapshotEvent(r.events[i].raw) {
			return &r.events[i]
		}
	}
	return nil
}

// evictLocked drops the oldest events of the largest rings, then the
// largest snapshots, until the session is within its byte bound.
func (s *session) evictLocked() {
	for s.bytes > s.reg.bufferBytes {
		var largest *eventRing
		for _, r := range s.rings {
			if len(r.events) > r.start && (largest == nil || r.bytes > largest.bytes) {
				largest = r
			}
		}
		if largest != nil {
			s.bytes -= largest.evictOldest()
			continue
		}
		for _, r := range s.rings {
			s.bytes -= int64(len(r.snapshot))
			r.snapshot, r.snapshotSeq = nil, 0
		}
		return
	}
}

// commandsLocked answers commands.list from the commands recorded.
func (s *session) commandsLocked() json.RawMessage {
	buf := append([]byte(nil), `{"commands":[`...)
	for i, c := range s.commands {
		if i > 0 {
			buf = append(buf, ',')
		}
		buf = append(buf, c...)
	}
	return append(buf, "]}"...)
}

// keepCommands records a live app's commands.list answer, for answers
// after the app has gone.
func (s *session) keepCommands(method string, raw json.RawMessage) {
	if method != "commands.list" {
		return
	}
	var res struct {
		Commands []json.RawMessage `json:"commands"`
	}
	if json.Unmarshal(raw, &res) != nil || res.Commands == nil {
		return
	}
	s.setCommands(res.Commands)
}

// setCommands records the commands the app registered.
func (s *session) setCommands(commands []json.RawMessage) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.commands = commands
}

// appendEvent records an event that the server itself numbers (the
// Reactotron bridge: Reactotron messages carry no seq): the next seq of the
// stream, which is advertised if it was not yet. payload must be JSON. It
// returns the event as recorded, or nil when from is no longer s's feed.
func (s *session) appendEvent(from sessionFeed, stream, typ string, at time.Time, payload []byte) []byte {
	s.mu.Lock()
	if s.feed != from {
		s.mu.Unlock()
		return nil
	}
	i, ok := s.streamIndex[stream]
	if !ok {
		s.info.Streams = append(s.info.Streams, streamState{Name: stream, Active: true})
		i = len(s.info.Streams) - 1
		s.streamIndex[stream] = i
		s.reg.events.push(linkEvent{Kind: linkStreamsChanged, SessionID: s.id})
	}
	seq := s.info.Streams[i].LatestSeq + 1
	var o jsonObject
	o.value("stream", stream)
	o.value("seq", seq)
	o.value("type", typ)
	o.value("timestamp", at.UTC().Format(timeFormat))
	o.raw("payload", payload)
	event := o.close()
	s.recordLocked(stream, seq, typ, at, event)
	s.mu.Unlock()
	return event
}

// latestSeq is the newest seq of stream, 0 when it has none.
func (s *session) latestSeq(stream string) int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	if i, ok := s.streamIndex[stream]; ok {
		return s.info.Streams[i].LatestSeq
	}
	return 0
}
