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

// wireMessageMembers are the members the server reads, each with its field.
var wireMessageMembers = map[string]func(m *wireMessage) *[]byte{
	"type":            func(m *wireMessage) *[]byte { return &m.Type },
	"id":              func(m *wireMessage) *[]byte { return &m.ID },
	"result":          func(m *wireMessage) *[]byte { return &m.Result },
	"error":           func(m *wireMessage) *[]byte { return &m.Error },
	"event":           func(m *wireMessage) *[]byte { return &m.Event },
	"streams":         func(m *wireMessage) *[]byte { return &m.Streams },
	"protocolVersion": func(m *wireMessage) *[]byte { return &m.ProtocolVersion },
	"sessionId":       func(m *wireMessage) *[]byte { return &m.SessionID },
	"adapterVersion":  func(m *wireMessage) *[]byte { return &m.AdapterVersion },
	"startedAt":       func(m *wireMessage) *[]byte { return &m.StartedAt },
	"app":             func(m *wireMessage) *[]byte { return &m.App },
	"device":          func(m *wireMessage) *[]byte { return &m.Device },
	"token":           func(m *wireMessage) *[]byte { return &m.Token },
	"deviceId":        func(m *wireMessage) *[]byte { return &m.DeviceID },
	"capabilities":    func(m *wireMessage) *[]byte { return &m.Capabilities },
}

// parse validates data as one JSON object and fills m in a single pass,
// without decoding or copying any value. A member m holds that appears
// twice is a *duplicateMemberError.
func (m *wireMessage) parse(data []byte) error {
	*m = wireMessage{}
	return scanMembers(data, func(key []byte) *[]byte {
		if field := wireMessageMembers[string(key)]; field != nil {
			return field(m)
		}
		return nil
	})
}

// wireAbsent reports whether an optional member is missing or null.
func wireAbsent(raw []byte) bool {
	return raw == nil || string(raw) == "null"
}
