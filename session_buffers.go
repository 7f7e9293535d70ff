package main

// session_buffers.go is what a session answers from the server's own
// buffers: the wire protocol's requests (streams.list, events.query,
// snapshot.get, commands.list) answered from per-stream rings of received
// events, the last snapshot fetched per stream and the commands recorded,
// with the bounds that keep those buffers small.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"
)

// offers reports whether the session's app offers capability: it named it
// in its handshake, or it is an action Reactotron's client takes without
// saying so (dispatches and custom commands).
func (s *session) offers(capability string) bool {
	if s.via == sessionViaReactotron && (capability == capStateDispatch || capability == capCommands) {
		return true
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.info != nil && slices.Contains(s.info.Capabilities, capability)
}

// answersActions reports whether the app answers the actions it takes
// (state.dispatch, commands.run). A Reactotron app does not: what an action
// did is known only from the events that follow it.
func (s *session) answersActions() bool {
	return s.via != sessionViaReactotron
}

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
func (s *session) goneErrorLocked(method string) error {
	if s.feed != nil {
		return &errNotOffered{Via: s.via, Method: method}
	}
	return &errSessionGone{ID: s.id, At: s.disconnectedAt, What: method}
}

func (s *session) streamsLocked() json.RawMessage {
	streams := make([]map[string]any, len(s.info.Streams))
	for i, st := range s.info.Streams {
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
		streams[i] = entry
	}
	b, _ := json.Marshal(map[string]any{"streams": streams})
	return b
}

// eventsLocked answers events.query with the semantics of wire protocol §4.
func (s *session) eventsLocked(p eventsParams) json.RawMessage {
	r := s.rings[p.Stream]
	var matched []bufferedEvent
	hasMore := false
	var oldest, latest int64
	if r != nil {
		oldest, latest = r.seqRange()
		// With since, the oldest matches after it; without, the newest.
		n := r.events.len()
		for k := range n {
			i := k
			if p.SinceSeq == nil {
				i = n - 1 - k
			}
			e := *r.events.at(i)
			if p.SinceSeq != nil && e.seq <= *p.SinceSeq || p.EventType != "" && e.typ != p.EventType {
				continue
			}
			if int64(len(matched)) == p.Limit {
				hasMore = true
				break
			}
			matched = append(matched, e)
		}
		if p.SinceSeq == nil {
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
	switch r := s.rings[p.Stream]; {
	case r == nil:
	case p.Seq == 0:
		ev := r.newestSnapshot()
		if r.snapshot != nil && (ev == nil || r.snapshotSeq >= ev.seq) {
			return bytes.Clone(r.snapshot), nil
		}
		if ev != nil {
			return snapshotAnswer(ev.raw), nil
		}
	case r.snapshot != nil && r.snapshotSeq == p.Seq:
		return bytes.Clone(r.snapshot), nil
	default:
		for i := range r.events.len() {
			if e := r.events.at(i); e.seq == p.Seq && isSnapshotEvent(e.raw) {
				return snapshotAnswer(e.raw), nil
			}
		}
	}
	if p.Seq == 0 && s.feed == nil {
		// The current state needs the app: there is no seq to look for.
		return nil, s.goneErrorLocked(fmt.Sprintf("the current state of stream %q", p.Stream))
	}
	return nil, &errSnapshotNotFound{Session: s.id, Stream: p.Stream, Seq: p.Seq, Gone: s.feed == nil}
}

// isSnapshotEvent reports whether an event's payload carries a state.
func isSnapshotEvent(event []byte) bool {
	payload := rawMember(event, "payload")
	return rawKind(payload) == "object" && rawMember(payload, "state") != nil
}

// eventRing is one stream's buffered events, oldest first, and the last
// current-state snapshot fetched.
type eventRing struct {
	events      queue[bufferedEvent] // within EVENT_BUFFER; each dropped leaves the session's bytes
	snapshot    json.RawMessage      // a snapshot.get answer
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
	s.bytes += int64(len(e.raw))
	r.events.push(e)
	s.evictLocked()
}

func (r *eventRing) seqRange() (oldest, latest int64) {
	if r.events.len() == 0 {
		return 0, 0
	}
	return r.events.at(0).seq, r.events.at(r.events.len() - 1).seq
}

func (r *eventRing) newestSnapshot() *bufferedEvent {
	for i := r.events.len() - 1; i >= 0; i-- {
		if e := r.events.at(i); strings.HasSuffix(e.typ, "_snapshot") && isSnapshotEvent(e.raw) {
			return e
		}
	}
	return nil
}

// evictLocked drops the oldest events of the largest rings until the
// session is within its byte bound, then, if it still is not, every snapshot.
func (s *session) evictLocked() {
	for s.bytes > s.reg.bufferBytes {
		var largest *eventRing
		for _, r := range s.rings {
			if r.events.len() > 0 && (largest == nil || r.events.bytes > largest.events.bytes) {
				largest = r
			}
		}
		if largest != nil {
			largest.events.dropOldest()
			continue
		}
		for _, r := range s.rings {
			s.bytes -= int64(len(r.snapshot))
			r.snapshot, r.snapshotSeq = nil, 0
		}
		return
	}
}

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
	s.mu.Lock()
	defer s.mu.Unlock()
	s.commands = res.Commands
}
