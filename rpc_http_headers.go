package main

import (
	"crypto/subtle"
	"encoding/base64"
	"mime"
	"net/http"
	"strings"
	"unicode/utf8"
)

// The headers of Streamable HTTP requests: the bearer token, Accept, and
// 2026-07-28's request metadata headers checked against the body.

func bearerMatches(header, token string) bool {
	scheme, value, ok := strings.Cut(header, " ")
	return ok && strings.EqualFold(scheme, "Bearer") &&
		subtle.ConstantTimeCompare([]byte(strings.TrimSpace(value)), []byte(token)) == 1
}

// accepts reports whether the Accept header lists mediaType (or a wildcard
// covering it).
func accepts(r *http.Request, mediaType string) bool {
	major, _, _ := strings.Cut(mediaType, "/")
	for _, v := range r.Header.Values("Accept") {
		for item := range strings.SplitSeq(v, ",") {
			mt, _, err := mime.ParseMediaType(strings.TrimSpace(item))
			if err == nil && (mt == mediaType || mt == "*/*" || mt == major+"/*") {
				return true
			}
		}
	}
	return false
}

// checkModernHeaders applies the transport's request metadata rules:
// MCP-Protocol-Version, Mcp-Method and, for the named methods, Mcp-Name
// must be present and equal the body's values.
func checkModernHeaders(h http.Header, req *request, meta *requestMeta) *rpcError {
	check := func(name, body string) *rpcError {
		values := h.Values(name)
		switch {
		case len(values) == 0:
			return rpcErrorf(errHeaderMismatch, nil, "Header mismatch: required header %s is missing", name)
		case len(values) > 1:
			return rpcErrorf(errHeaderMismatch, nil, "Header mismatch: header %s appears %d times", name, len(values))
		}
		value := values[0]
		if strings.ContainsFunc(value, func(r rune) bool { return (r < 0x20 || r > 0x7e) && r != '\t' }) {
			return rpcErrorf(errHeaderMismatch, nil, "Header mismatch: %s holds a character outside visible ASCII", name)
		}
		if name == "Mcp-Name" {
			decoded, ok := decodeHeaderValue(value)
			if !ok {
				return rpcErrorf(errHeaderMismatch, nil, "Header mismatch: %s holds invalid =?base64?…?= encoding", name)
			}
			value = decoded
		}
		if value != body {
			return rpcErrorf(errHeaderMismatch, nil, "Header mismatch: %s header value %q does not match body value %q", name, value, body)
		}
		return nil
	}
	if err := check("MCP-Protocol-Version", meta.version); err != nil {
		return err
	}
	if err := check("Mcp-Method", req.Method); err != nil {
		return err
	}
	member := nameMembers[req.Method]
	if member == "" {
		return nil
	}
	value, ok := wireString(rawMember(req.Params, member))
	if !ok {
		// The body is wrong, not the headers: the handler names the param.
		return nil
	}
	return check("Mcp-Name", value)
}

// nameMembers are the params members that 2026-07-28's Mcp-Name header
// repeats, by method.
var nameMembers = map[string]string{"tools/call": "name", "prompts/get": "name", "resources/read": "uri"}

// decodeHeaderValue undoes the =?base64?…?= sentinel encoding of Mcp-Name
// and Mcp-Param-* values; other values are returned as they are.
func decodeHeaderValue(v string) (string, bool) {
	inner, prefixed := strings.CutPrefix(v, "=?base64?")
	inner, suffixed := strings.CutSuffix(inner, "?=")
	if !prefixed || !suffixed {
		return v, true
	}
	data, err := base64.StdEncoding.DecodeString(inner)
	if err != nil || !utf8.Valid(data) {
		return "", false
	}
	return string(data), true
}
