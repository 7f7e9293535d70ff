package main

import (
	"errors"
	"fmt"
)

// Error codes of tool failures (spec §4). They travel to the agent inside a
// tool result with isError set, never as JSON-RPC errors.
const (
	codeNotConnected      = "NOT_CONNECTED"
	codeStreamUnavailable = "STREAM_UNAVAILABLE"
	codeTimeout           = "TIMEOUT"
	codePayloadTooLarge   = "PAYLOAD_TOO_LARGE"
	codePathNotFound      = "PATH_NOT_FOUND"
	codeScopeNotFound     = "SCOPE_NOT_FOUND"
	codeSnapshotNotFound  = "SNAPSHOT_NOT_FOUND"
	codeInvalidParams     = "INVALID_PARAMS"
	codeAdapterError      = "ADAPTER_ERROR"
	codeNotSupported      = "NOT_SUPPORTED" // the app does not offer it, or READ_ONLY withholds it
	codeEventNotFound     = "EVENT_NOT_FOUND"
)

// suggestions holds the one sentence an agent can act on for each code.
var suggestions = map[string]string{
	codeNotConnected:      "Start the app's dev build with the debug adapter enabled (on Android also run `adb reverse tcp:19850 tcp:19850`), then call debug_health_check.",
	codeStreamUnavailable: "Call debug_list_streams and use one of the active streams.",
	codeTimeout:           "The app may be paused in a debugger or busy; check it is running and retry, or raise REQUEST_TIMEOUT_MS.",
	codePayloadTooLarge:   "Narrow the request: pass a deeper `scope` or `path`, using the outline's largest children.",
	codePathNotFound:      "Pick one of the available keys at the resolved prefix, or call debug_get_state_path with path \"\" to see the top level.",
	codeScopeNotFound:     "Pick one of the available keys at the resolved prefix, or omit `scope` to get the whole snapshot.",
	codeSnapshotNotFound:  "Call debug_query_events with event_type set to the stream's snapshot type to find seqs that exist.",
	codeInvalidParams:     "Fix the named argument to match the tool's inputSchema and call again.",
	codeAdapterError:      "The app's debug adapter misbehaved; check the app's logs, update the adapter, or retry.",
	codeNotSupported:      "Use the read-only tools instead, or give the app (or the server) what the message says is missing.",
	codeEventNotFound:     "List the events held first (debug_get_network without `seq`, or debug_query_events) and pass one of their seqs.",
}

// toolError is a tool failure. adapterrequest.go returns it for adapter conditions,
// tools.go for argument and lookup problems; tools/call turns it into a
// result with isError set. Details is encoded as JSON and uses the field
// names of spec §2.
type toolError struct {
	Code       string
	Message    string
	Details    any
	Suggestion string // empty means suggestions[Code]
}

func (e *toolError) Error() string { return e.Code + ": " + e.Message }

// newToolError builds a toolError with a formatted message.
func newToolError(code string, details any, format string, args ...any) *toolError {
	return &toolError{Code: code, Message: fmt.Sprintf(format, args...), Details: details}
}

// asToolError returns err as a *toolError, or nil. The links' typed errors
// are worded here.
func asToolError(err error) *toolError {
	var te *toolError
	if errors.As(err, &te) {
		return te
	}
	return linkToolError(err)
}

// linkToolError words the typed errors of the Reactotron bridge's requests
// (rtron_asks.go), or is nil.
func linkToolError(err error) *toolError {
	var (
		busy    *reactotronBusyError
		timeout *reactotronTimeoutError
		miss    *reactotronPathMissError
	)
	switch {
	case errors.Is(err, errReactotronGone):
		return linkNotConnectedError(linkReasonDisconnected, "", "")
	case errors.As(err, &busy):
		return newToolError(codeAdapterError, nil, "too many requests waiting on the Reactotron app (limit %d); it is not answering", busy.Limit)
	case errors.As(err, &timeout):
		ms := timeout.Timeout.Milliseconds()
		return newToolError(codeTimeout, linkTimeoutDetails{Method: timeout.Method, TimeoutMs: ms},
			"the Reactotron app did not answer %s within %d ms (is reactotron-redux set up in it?)", timeout.Method, ms)
	case errors.As(err, &miss):
		return notFound(codePathNotFound, miss.Path, miss.Miss)
	}
	return nil
}

// invalidParams reports a bad tool argument with the details of spec §2.
func invalidParams(argument, problem string) *toolError {
	return newToolError(codeInvalidParams, map[string]string{"argument": argument, "problem": problem},
		"argument %q: %s", argument, problem)
}
