package main

import (
	"fmt"

	"github.com/coder/websocket"
)

// wire.go holds Wire Protocol v1's message shapes as the server reads
// them, its version and close codes, and the helpers that read raw wire
// values.

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
// without decoding or copying any value.
func (m *wireMessage) parse(data []byte) error {
	*m = wireMessage{}
	return scanObject(data, func(key, value []byte) error {
		var slot *[]byte
		switch string(key) {
		case "type":
			slot = &m.Type
		case "id":
			slot = &m.ID
		case "result":
			slot = &m.Result
		case "error":
			slot = &m.Error
		case "event":
			slot = &m.Event
		case "streams":
			slot = &m.Streams
		case "protocolVersion":
			slot = &m.ProtocolVersion
		case "sessionId":
			slot = &m.SessionID
		case "adapterVersion":
			slot = &m.AdapterVersion
		case "startedAt":
			slot = &m.StartedAt
		case "app":
			slot = &m.App
		case "device":
			slot = &m.Device
		case "token":
			slot = &m.Token
		case "deviceId":
			slot = &m.DeviceID
		case "capabilities":
			slot = &m.Capabilities
		default:
			return nil
		}
		if *slot != nil {
			return &wireDuplicateError{member: string(key)}
		}
		*slot = value
		return nil
	})
}

// wireDuplicateError reports a member the server reads that appears twice.
type wireDuplicateError struct{ member string }

func (e *wireDuplicateError) Error() string { return fmt.Sprintf("duplicate member %q", e.member) }

// wireAbsent reports whether an optional member is missing or null.
func wireAbsent(raw []byte) bool {
	return raw == nil || string(raw) == "null"
}
