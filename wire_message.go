package main

import (
	"encoding/json"

	"github.com/coder/websocket"
)

// wire_message.go holds Wire Protocol v1's message shapes as the server reads
// them, its version and close codes, the helpers that read raw wire values,
// and its requests' params, in which the sessions ask and the links (an
// adapter connection, the Reactotron bridge) answer.

// wireProtocolVersion is the only wire protocol version this server speaks.
const wireProtocolVersion = 1

// Close codes of wire protocol §8.
const (
	wireCloseReplaced            websocket.StatusCode = 4000
	wireCloseInvalidHandshake    websocket.StatusCode = 4001
	wireCloseUnsupportedProtocol websocket.StatusCode = 4002
	wireCloseUnauthorized        websocket.StatusCode = 4003
	wireCloseHandshakeTimeout    websocket.StatusCode = 4004
)

// wireMessage holds the raw JSON values of the top-level members of a wire
// message that the server reads; nil when absent. Keys match exactly (not
// case-insensitively as encoding/json would), and a repeated member is an
// error rather than silently merged. Values alias the parsed bytes.
type wireMessage struct {
	Type, ID, Result, Error, Event, Streams               []byte
	ProtocolVersion, SessionID, AdapterVersion, StartedAt []byte
	App, Device, Token, DeviceID, Capabilities            []byte
}

// parse validates data as one JSON object and fills m in a single pass,
// without decoding or copying any value. A member m holds that appears
// twice is a *duplicateMemberError.
func (m *wireMessage) parse(data []byte) error {
	*m = wireMessage{}
	return scanMembers(data, func(key []byte) *[]byte {
		switch string(key) {
		case "type":
			return &m.Type
		case "id":
			return &m.ID
		case "result":
			return &m.Result
		case "error":
			return &m.Error
		case "event":
			return &m.Event
		case "streams":
			return &m.Streams
		case "protocolVersion":
			return &m.ProtocolVersion
		case "sessionId":
			return &m.SessionID
		case "adapterVersion":
			return &m.AdapterVersion
		case "startedAt":
			return &m.StartedAt
		case "app":
			return &m.App
		case "device":
			return &m.Device
		case "token":
			return &m.Token
		case "deviceId":
			return &m.DeviceID
		case "capabilities":
			return &m.Capabilities
		}
		return nil
	})
}

// wireAbsent reports whether an optional member is missing or null.
func wireAbsent(raw []byte) bool {
	return raw == nil || string(raw) == "null"
}

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
	// key of its decimal spelling; nil is the whole state. Only apps that
	// offer capSnapshotPath are asked with a Path (session_pushdown.go).
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
