package main

// session_registry.go is the session registry, which serve creates and
// hands to the links (as an appSink, wire_sink.go) and to the answers. A
// session is one app, connected now or until recently, whichever way it
// came in: a Wire Protocol adapter or a Reactotron client through the
// bridge. Tools and resources ask a session; they never see how it is fed.
//
// The seam speaks the wire protocol's request vocabulary (streams.list,
// events.query, snapshot.get, …). A live session hands a request to its
// feed: a wire adapter answers it itself, the Reactotron bridge answers what
// it can by asking the app in Reactotron's terms. Everything a feed does not
// answer, and everything asked of a disconnected session, is answered from
// the server's own buffers (session_buffers.go).
//
// Lock order: sessionRegistry.mu, then session.mu. Neither is held while
// waiting for an app.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"
)

const (
	// sessionPostMortemTTL is how long a disconnected session stays listed
	// and queryable, unless the same device connects again first.
	sessionPostMortemTTL = 30 * time.Minute
	// sessionPruneInterval is how often run looks for expired sessions.
	sessionPruneInterval = time.Minute
	// sessionBufferBytes bounds the events and snapshots one session holds.
	sessionBufferBytes = 32 << 20
	// maxSessions bounds the sessions kept at once (boundLocked).
	maxSessions = 64
	// defaultEventBuffer is EVENT_BUFFER's default: events kept per stream.
	defaultEventBuffer = 1000
)

// sessionRegistry holds every session: the live ones and, for
// sessionPostMortemTTL after they disconnect, the ones that left. Its
// methods are safe for concurrent use.
type sessionRegistry struct {
	logger      *slog.Logger
	events      *linkEventQueue
	eventBuffer int           // events kept per stream (EVENT_BUFFER)
	bufferBytes int64         // bytes kept per session
	ttl         time.Duration // post-mortem lifetime
	pruneEvery  time.Duration // between looks for expired sessions (run)

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
	return &sessionRegistry{logger: logger, events: events, eventBuffer: n, bufferBytes: sessionBufferBytes,
		ttl: sessionPostMortemTTL, pruneEvery: sessionPruneInterval}
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
	// mmkvObserved: instance → key → value (session_reactotron.go).
	mmkvObserved map[string]map[string]json.RawMessage
	// kept is what the session keeps of the app's state plugins
	// (session_statekeep.go); nil until one speaks.
	kept *keptState
	// changed: see session_watch.go.
	changed chan struct{}
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
	// Without a deviceId, "the same device" is every adapter without one.
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
			old.wakeLocked()
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
	s.kept = nil // a new connection is a new run of the app: its plugins' caches start empty
	s.disconnectedAt = time.Time{}
	s.setInfoLocked(info)
	s.wakeLocked()
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

// leave is appSession.leave; a replaced feed has already left.
func (s *session) leave(feed sessionFeed, reason string) bool {
	s.reg.mu.Lock()
	defer s.reg.mu.Unlock()
	s.mu.Lock()
	defer s.mu.Unlock()
	wasLive := s.feed == feed && feed != nil
	if wasLive {
		s.feed = nil
		s.disconnectedAt = time.Now()
		s.wakeLocked()
		s.reg.events.push(linkEvent{Kind: linkDisconnected, SessionID: s.id, Reason: reason})
	}
	return wasLive
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
	if s := r.currentLive(""); s != nil {
		return s
	}
	all := r.list()
	if len(all) == 0 {
		return nil
	}
	return slices.MaxFunc(all, func(a, b *session) int {
		return a.view().DisconnectedAt.Compare(b.view().DisconnectedAt)
	})
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
	if i := slices.IndexFunc(all, func(s *session) bool { return s.id == ref }); i >= 0 {
		return all[i], nil
	}
	var byApp []*session
	views := make([]sessionView, len(all))
	for i, s := range all {
		views[i] = s.view()
		if strings.EqualFold(views[i].AppName(), ref) {
			byApp = append(byApp, s)
		}
	}
	if len(byApp) == 1 {
		return byApp[0], nil
	}
	return nil, &errUnknownSession{Ref: ref, Matches: len(byApp), Sessions: views}
}

func (r *sessionRegistry) hasConnected() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.everConnected
}

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
		info.Streams = s.info.Streams
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

// A wire adapter numbers its own events and its list is what it says. A
// Metro page or Reactotron client announces only some of its streams, and
// the server numbers the others from their figures (appendEvent): a stream
// the new list omits is kept as it was when it holds events, so that its
// seqs go on after a reload, a relaunch or a re-attach instead of starting
// at 1 again, and its events stay readable.
func (s *session) mergeStreamsLocked(streams []streamState) {
	listed := make(map[string]bool, len(streams))
	for i := range streams {
		listed[streams[i].Name] = true
		if j, ok := s.streamIndex[streams[i].Name]; ok {
			old := s.info.Streams[j]
			streams[i].EventCount, streams[i].LatestSeq, streams[i].LastEventAt = old.EventCount, old.LatestSeq, old.LastEventAt
		}
	}
	for _, old := range s.info.Streams {
		if s.via != sessionViaWire && !listed[old.Name] && old.LatestSeq > 0 {
			streams = append(streams, old)
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
		s.wakeLocked()
	}
	s.reg.events.push(linkEvent{Kind: linkEventPushed, SessionID: s.id, Stream: stream})
}

func (s *session) ringLocked(stream string) *eventRing {
	r := s.rings[stream]
	if r == nil {
		r = &eventRing{events: newQueue(s.reg.eventBuffer, 0, func(e bufferedEvent) int64 { return int64(len(e.raw)) })}
		r.events.onDrop = func(e bufferedEvent) { s.bytes -= int64(len(e.raw)) }
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

// appendEvent records an event that the server itself numbers (the
// Reactotron bridge: Reactotron messages carry no seq): the next seq of the
// stream, which is advertised if it was not yet. payload must be JSON. It
// returns the event as recorded, or nil when from is no longer s's feed.
func (s *session) appendEvent(from sessionFeed, stream, typ string, at time.Time, payload []byte) []byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.feed != from {
		return nil
	}
	return s.appendEventLocked(stream, typ, at, payload)
}

// appendEventLocked numbers and records an event of stream; s.mu is held.
func (s *session) appendEventLocked(stream, typ string, at time.Time, payload []byte) []byte {
	i, ok := s.streamIndex[stream]
	if !ok {
		s.info.Streams = append(s.info.Streams, streamState{Name: stream, Active: true})
		i = len(s.info.Streams) - 1
		s.streamIndex[stream] = i
		s.reg.events.push(linkEvent{Kind: linkStreamsChanged, SessionID: s.id})
	}
	seq := s.info.Streams[i].LatestSeq + 1
	o := jsonObject{buf: make([]byte, 0, len(payload)+len(stream)+len(typ)+96)}
	o.value("stream", stream)
	o.value("seq", seq)
	o.value("type", typ)
	o.value("timestamp", at.UTC().Format(timeFormat))
	o.raw("payload", payload)
	event := o.close()
	s.recordLocked(stream, seq, typ, at, event)
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
