package main

// The JSON-RPC 2.0 vocabulary every layer may name: a request as the
// server sees it, the error object and its codes. Reading, writing and
// cancelling requests on a connection is the transports' (rpc_conn.go).

import (
	"encoding/json"
	"errors"
	"fmt"
)

// rpcError is a JSON-RPC error object. The sentinels below carry the codes;
// compare with errors.Is, which matches on the code alone.
type rpcError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
	Data    any    `json:"data,omitempty"`
}

var (
	errParse            = &rpcError{Code: -32700, Message: "parse error"}
	errInvalidRequest   = &rpcError{Code: -32600, Message: "invalid request"}
	errMethodNotFound   = &rpcError{Code: -32601, Message: "method not found"}
	errInvalidParams    = &rpcError{Code: -32602, Message: "invalid params"}
	errInternal         = &rpcError{Code: -32603, Message: "internal error"}
	errResourceNotFound = &rpcError{Code: -32002, Message: "resource not found"}
)

func (e *rpcError) Error() string { return fmt.Sprintf("jsonrpc %d: %s", e.Code, e.Message) }

func (e *rpcError) Is(target error) bool {
	t, ok := target.(*rpcError)
	return ok && t.Code == e.Code
}

// rpcErrorf returns an error with the code of sentinel and its own message.
func rpcErrorf(sentinel *rpcError, data any, format string, args ...any) *rpcError {
	return &rpcError{Code: sentinel.Code, Message: fmt.Sprintf(format, args...), Data: data}
}

// request is one decoded JSON-RPC request or notification.
type request struct {
	ID     json.RawMessage // the id exactly as the client wrote it; nil for a notification
	Method string
	Params json.RawMessage // nil when absent or null
	Info   any             // what admit learned for the handler (the MCP core's per-request era); nil by default
}

func (r *request) isNotification() bool { return r.ID == nil }

// asRPCError returns err as a JSON-RPC error: itself when it is one,
// else -32603 with its text.
func asRPCError(err error) *rpcError {
	var re *rpcError
	if errors.As(err, &re) {
		return re
	}
	return rpcErrorf(errInternal, nil, "internal error: %v", err)
}

// jsonKind names the JSON type of v with its article, for error messages.
func jsonKind(v []byte) string { return article(rawKind(v)) }

// article puts "a" or "an" before a JSON type name.
func article(jsonType string) string {
	switch jsonType {
	case "object", "array":
		return "an " + jsonType
	case "nothing", "null":
		return jsonType
	}
	return "a " + jsonType
}
