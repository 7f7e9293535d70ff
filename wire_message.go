package main

import (
	"github.com/coder/websocket"
)

// wire_message.go holds Wire Protocol v1's message shapes as the server reads
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
