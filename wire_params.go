package main

// wire_params.go is the wire protocol's request vocabulary: the params of
// the requests a session asks of its feed, and the shape of a snapshot.get
// answer. The sessions ask in it and the links (an adapter connection, the
// Reactotron bridge) answer in it.

import "encoding/json"

// Params of the wire protocol's requests, as the sessions ask them of a
// feed and answer them from their buffers. They encode as the wire
// protocol's params.
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
