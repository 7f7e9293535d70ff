package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"unicode/utf8"
)

// One JSON-RPC message on the wire: decoded strictly from the bytes a
// client sent (decodeMessage), and a reply encoded in one allocation.

// idKey identifies a request id for cancellation: "s:" plus the decoded
// string, or "n:" plus the number's text.
func idKey(id json.RawMessage) string {
	if s, ok := wireString(id); ok {
		return "s:" + s
	}
	return "n:" + string(id)
}

// decodeMessage decodes one JSON value read from the wire into a request.
// JSON-RPC member names are matched exactly: encoding/json would accept
// "METHOD" for "method" and silently keep the last of duplicate members,
// so the envelope is split by hand and duplicates are refused. On failure it
// returns the id when one could be read, so the error can echo it.
func decodeMessage(data []byte) (req request, err error) {
	if kind := rawKind(data); kind != "object" {
		return req, rpcErrorf(errInvalidRequest, nil, "invalid request: message must be a JSON object, not %s", jsonKind(data))
	}
	var id, version, method, params, result, errorMember []byte
	var others map[string]*[]byte // members a request does not use: refused twice all the same
	err = scanMembers(data, func(name []byte) *[]byte {
		switch string(name) {
		case "id":
			return &id
		case "jsonrpc":
			return &version
		case "method":
			return &method
		case "params":
			return &params
		case "result":
			return &result
		case "error":
			return &errorMember
		}
		if others == nil {
			others = make(map[string]*[]byte)
		}
		p, ok := others[string(name)]
		if !ok {
			p = new([]byte)
			others[string(name)] = p
		}
		return p
	})
	var dup *duplicateMemberError
	switch {
	case errors.As(err, &dup):
		return req, rpcErrorf(errInvalidRequest, nil, "invalid request: member %q appears twice", dup.member)
	case err != nil:
		return req, rpcErrorf(errParse, nil, "parse error: %v", err)
	}
	if id != nil {
		if !validID(id) {
			return req, rpcErrorf(errInvalidRequest, nil, "invalid request: id must be a string or a number, not %s", jsonKind(id))
		}
		req.ID = canonicalID(id)
	}
	if version == nil || string(version) != `"2.0"` {
		return req, rpcErrorf(errInvalidRequest, nil, `invalid request: "jsonrpc" must be "2.0"`)
	}
	if method == nil {
		if result != nil || errorMember != nil {
			return req, errClientResponse
		}
		return req, rpcErrorf(errInvalidRequest, nil, `invalid request: missing "method"`)
	}
	if method[0] != '"' || json.Unmarshal(method, &req.Method) != nil {
		return req, rpcErrorf(errInvalidRequest, nil, `invalid request: "method" must be a string`)
	}
	if params != nil && string(params) != "null" {
		if params[0] != '{' {
			return req, rpcErrorf(errInvalidRequest, nil, `invalid request: "params" must be an object, not %s`, jsonKind(params))
		}
		req.Params = params
	}
	return req, nil
}

// errClientResponse marks a response sent by the client. The server sends
// no requests to clients, so such messages are dropped.
var errClientResponse = errors.New("response from client")

func validID(id json.RawMessage) bool {
	return len(id) > 0 && (id[0] == '"' || id[0] == '-' || (id[0] >= '0' && id[0] <= '9'))
}

// canonicalID keeps the id byte for byte unless it is a string holding
// invalid UTF-8, which would make the reply invalid; that one is re-encoded.
func canonicalID(id json.RawMessage) json.RawMessage {
	if utf8.Valid(id) {
		return id
	}
	var s string
	_ = json.Unmarshal(id, &s) // valid JSON already; invalid bytes become U+FFFD
	out, _ := json.Marshal(s)
	return out
}

// splitArray returns the elements of one valid JSON array.
func splitArray(data []byte) []json.RawMessage {
	var elems []json.RawMessage
	_ = eachElement(data, func(_ int, value []byte) bool {
		elems = append(elems, value)
		return true
	})
	return elems
}

// encodeReply builds a response line. The id is written as received; it is
// omitted when unknown, as the MCP schema allows for errors.
func encodeReply(id json.RawMessage, result any, rerr *rpcError) []byte {
	member, data, err := "result", []byte("{}"), error(nil)
	switch r := result.(type) {
	case nil:
	case json.RawMessage:
		data = r
	default:
		if data, err = json.Marshal(result); err != nil {
			rerr = rpcErrorf(errInternal, nil, "internal error: encode result: %v", err)
		}
	}
	if rerr != nil {
		member = "error"
		if data, err = json.Marshal(rerr); err != nil {
			data = []byte(`{"code":-32603,"message":"internal error: unencodable error"}`)
		}
	}
	// Sized once: a result can be megabytes, and regrowing copies it again.
	buf := make([]byte, 0, len(`{"jsonrpc":"2.0","id":,"result":}`)+len(id)+len(data))
	buf = append(buf, `{"jsonrpc":"2.0"`...)
	if id != nil {
		buf = append(buf, `,"id":`...)
		buf = append(buf, id...)
	}
	buf = append(buf, `,"`...)
	buf = append(buf, member...)
	buf = append(buf, `":`...)
	buf = append(buf, data...)
	return append(buf, '}')
}

// syntaxError describes why data is not JSON, with the byte offset.
func syntaxError(data []byte) string {
	var v any
	err := json.Unmarshal(data, &v)
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return fmt.Sprintf("%s at byte %d", se.Error(), se.Offset)
	}
	if err != nil {
		return err.Error()
	}
	return "invalid JSON"
}
