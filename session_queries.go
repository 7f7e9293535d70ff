package main

// session_queries.go holds what tools and resources ask a session: which session a
// `session` argument names, stream checks, stream lists, snapshots and the
// value at a path. Answers come back in the wire protocol's shapes, whoever
// produced them (an adapter, the Reactotron bridge, the server's buffers).

import (
	"context"
	"encoding/json"
	"slices"
)

// adapterQueries are the session calls that tools and resources share.
type adapterQueries struct {
	cfg      config
	link     *adapterLink
	sessions *sessionRegistry
	stacks   stackMapper // nil: METRO_URL is off
}

// sessionFor resolves a `session` argument ("" for the default session) for
// a read of stream ("" for none) as sessionRegistry.findFor does, or says
// why there is none (present).
func (q *adapterQueries) sessionFor(ref, stream string) (*session, error) {
	s, err := q.sessions.findFor(ref, stream)
	if err != nil {
		return nil, err
	}
	return s, q.present(s)
}

// present is NOT_CONNECTED, saying why, when there is no session to ask.
func (q *adapterQueries) present(s *session) error {
	if s == nil {
		st := q.link.status()
		return &errNotConnected{Reason: st.Reason, WSURL: st.WSURL, ListenError: st.ListenError}
	}
	return nil
}

// liveStream is one entry of a streams.list answer.
type liveStream struct {
	Name        string    `json:"name"`
	Active      bool      `json:"active"`
	EventCount  int64     `json:"eventCount"`
	LatestSeq   int64     `json:"latestSeq"`
	OldestSeq   int64     `json:"oldestSeq"`
	HasSnapshot bool      `json:"hasSnapshot"`
	LastEventAt *string   `json:"lastEventAt"`
	Instances   *[]string `json:"instances,omitempty"`
}

func (q *adapterQueries) fetchStreams(ctx context.Context, s *session) ([]liveStream, error) {
	if err := q.present(s); err != nil {
		return nil, err
	}
	raw, err := s.request(ctx, "streams.list", struct{}{})
	if err != nil {
		return nil, err
	}
	var res struct {
		Streams *[]liveStream `json:"streams"`
	}
	if err := json.Unmarshal(raw, &res); err != nil || res.Streams == nil {
		return nil, malformedAnswer("streams.list", "want {streams: [...]}")
	}
	return *res.Streams, nil
}

// checkStream makes sure the session advertises stream as active.
func (q *adapterQueries) checkStream(s *session, stream string) error {
	if err := q.present(s); err != nil {
		return err
	}
	found, active := s.streamActive(stream)
	if !found && s.via == sessionViaMetro && !slices.Contains(metroStreams, stream) {
		// Metro carries an app's console and network only: say so at once
		// rather than list what the session happens to have.
		return &errMetroNoState{Stream: stream}
	}
	if !found {
		return &errStreamUnavailable{Stream: stream, Active: active}
	}
	return nil
}

// streamActive reports whether the session advertises stream as active, and
// the active streams when it does not.
func (s *session) streamActive(stream string) (bool, []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if i, ok := s.streamIndex[stream]; ok && s.info.Streams[i].Active {
		return true, nil
	}
	active := []string{}
	for _, st := range s.info.Streams {
		if st.Active {
			active = append(active, st.Name)
		}
	}
	return false, active
}

// snapshot is a snapshot.get answer with the state left as JSON.
type snapshot struct {
	seq       []byte
	timestamp []byte
	state     []byte
}

func (q *adapterQueries) fetchSnapshot(ctx context.Context, s *session, stream string, seq int64) (snapshot, error) {
	return q.fetchSnapshotWith(ctx, s, snapshotParams{Stream: stream, Seq: seq})
}

// fetchSnapshotWith asks snapshot.get with params; with a Path, the answer's
// state is the value there (session_pushdown.go).
func (q *adapterQueries) fetchSnapshotWith(ctx context.Context, s *session, params snapshotParams) (snapshot, error) {
	if err := q.present(s); err != nil {
		return snapshot{}, err
	}
	raw, err := s.request(ctx, "snapshot.get", params)
	if answered, ok := err.(*errAdapterAnswered); ok && answered.Code == wireCodePathNotFound && params.Path == nil {
		return snapshot{}, malformedAnswer("snapshot.get", "PATH_NOT_FOUND without a path")
	}
	if err != nil {
		return snapshot{}, err
	}
	var snap snapshot
	err = scanFields(raw, map[string]*[]byte{"seq": &snap.seq, "timestamp": &snap.timestamp, "state": &snap.state})
	if err != nil || snap.timestamp == nil || snap.state == nil || rawKind(snap.seq) != "number" {
		return snapshot{}, malformedAnswer("snapshot.get", "want {seq, timestamp, state}")
	}
	return snap, nil
}

// stateAt fetches the current snapshot of stream and slices out the value
// at path without decoding the state, unredacted (or asks the app for the
// value alone: session_pushdown.go); a miss is an *errPathNotFound.
func (q *adapterQueries) stateAt(ctx context.Context, s *session, stream, path string, segs []pathSegment) (snapshot, []byte, error) {
	if err := q.checkStream(s, stream); err != nil {
		return snapshot{}, nil, err
	}
	if s.offers(capSnapshotPath) {
		return q.stateAtPushed(ctx, s, stream, path, segs)
	}
	snap, err := q.fetchSnapshot(ctx, s, stream, 0)
	if err != nil {
		return snapshot{}, nil, err
	}
	value, miss, err := resolveRaw(snap.state, segs)
	if err != nil {
		return snapshot{}, nil, malformedAnswer("snapshot.get", "state is not valid JSON")
	}
	if miss != nil {
		return snapshot{}, nil, notFound(path, miss)
	}
	return snap, compactJSON(value), nil
}

// splitEventsAnswer is splitWireEventsAnswer, a wrong shape as an error.
func splitEventsAnswer(raw []byte) (events, hasMore, oldest, latest []byte, err error) {
	events, hasMore, oldest, latest, ok := splitWireEventsAnswer(raw)
	if !ok {
		return nil, nil, nil, nil, malformedAnswer("events.query", "want {events: [...], hasMore, oldestSeq, latestSeq}")
	}
	return events, hasMore, oldest, latest, nil
}
