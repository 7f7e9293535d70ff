package main

import (
	"cmp"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
)

// Error codes of tool failures (spec §4).
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
	codeBusy              = "BUSY" // a bound on calls at once is reached
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
	codeBusy:              "Wait until one of the calls already waiting has answered, or cancel one, then call again.",
}

// toolError is a tool failure as an agent reads it: tools/call turns it
// into a result with isError set. Details is encoded as JSON and uses the
// field names of spec §2. toolErrorOf makes one from a lower layer's error.
type toolError struct {
	Code       string
	Message    string
	Details    any
	Suggestion string // empty means suggestions[Code]
}

func (e *toolError) Error() string { return e.Code + ": " + e.Message }

func newToolError(code string, details any, format string, args ...any) *toolError {
	return &toolError{Code: code, Message: fmt.Sprintf(format, args...), Details: details}
}

// invalidParams reports a bad tool argument with the details of spec §2.
func invalidParams(argument, problem string) *toolError {
	return newToolError(codeInvalidParams, map[string]string{"argument": argument, "problem": problem},
		"argument %q: %s", argument, problem)
}

// tooManyWaits refuses a debug_wait_for call beyond a bound on calls
// waiting at once: the server's, or with perConnection one connection's.
func tooManyWaits(limit int, perConnection bool) *toolError {
	if perConnection {
		return newToolError(codeBusy, map[string]any{"limit": limit, "per": "connection"},
			"%d debug_wait_for calls of this connection are already waiting, as many as one connection may hold", limit)
	}
	return newToolError(codeBusy, map[string]int{"limit": limit},
		"%d debug_wait_for calls are already waiting, as many as the server lets wait at once", limit)
}

// toolErrorOf is the one place where what went wrong below becomes what an
// agent reads; a *toolError passes through. It returns nil for an error no
// layer typed (a context's end, an encoding failure): the caller decides.
func toolErrorOf(err error) *toolError {
	for e := err; e != nil; e = errors.Unwrap(e) {
		if te := typedToolError(e); te != nil {
			return te
		}
	}
	return nil
}

func typedToolError(err error) *toolError {
	switch e := err.(type) {
	case *toolError:
		return e

	// The links (wire_errors.go).
	case *errNotConnected:
		return notConnectedError(e.Reason, e.WSURL, e.ListenError)
	case *errTooManyPending:
		format := "too many requests pending on the app adapter (limit %d); it is not answering"
		if e.Via == sessionViaReactotron {
			format = "too many requests waiting on the Reactotron app (limit %d); it is not answering"
		}
		return newToolError(codeAdapterError, nil, format, e.Limit)
	case *errAdapterTimeout:
		format := "the app adapter did not answer %s within %d ms"
		if e.Via == sessionViaReactotron {
			format = "the Reactotron app did not answer %s within %d ms (is reactotron-redux set up in it?)"
		}
		ms := e.After.Milliseconds()
		return newToolError(codeTimeout, linkTimeoutDetails{Method: e.Method, TimeoutMs: ms}, format, e.Method, ms)
	case *errFrameTooLarge:
		te := newToolError(codePayloadTooLarge, linkPayloadDetails{Size: e.Size, Limit: e.Limit},
			"the app adapter's answer to %s is %d bytes, over MAX_PAYLOAD_SIZE (%d bytes)", e.Method, e.Size, e.Limit)
		// A scope cannot help here: it is applied after the whole answer arrives.
		te.Suggestion = "The app's whole answer is over MAX_PAYLOAD_SIZE: restart the server with a larger MAX_PAYLOAD_SIZE (up to 67108864)."
		return te
	case *errAdapterAnswered:
		return adapterAnsweredError(e)
	case *reactotronBadActionError:
		return invalidParams(e.Argument, e.Problem)
	case *errMetroNoState:
		return metroNoStateError(e)

	// The sessions (session_errors.go).
	case *errUnknownSession:
		return unknownSessionError(e)
	case *errSessionGone:
		return newToolError(codeNotConnected, linkNotConnectedDetails{Reason: linkReasonDisconnected},
			"the app of session %s disconnected at %s, and %s needs the app", e.ID, e.At.UTC().Format(timeFormat), e.What)
	case *errNotOffered:
		return newToolError(codeAdapterError, map[string]string{"adapterMessage": e.Method + " is not offered by this app"},
			"the app's %s session does not offer %s", e.Via, e.Method)
	case *errSnapshotNotFound:
		what := "no snapshot"
		if e.Seq != 0 {
			what = fmt.Sprintf("no snapshot event with seq %d", e.Seq)
		}
		state := "holds"
		if e.Gone {
			state = "kept"
		}
		return newToolError(codeSnapshotNotFound, nil, "the server %s %s of stream %q for session %s", state, what, e.Stream, e.Session)
	case *errStreamUnavailable:
		return newToolError(codeStreamUnavailable, map[string]any{"stream": e.Stream, "activeStreams": e.Active},
			"stream %q is not active; active streams: %s", e.Stream, strings.Join(e.Active, ", "))
	case *errAnswerMalformed:
		if e.Envelope {
			return newToolError(codeAdapterError, nil, "the app adapter's answer to %s is malformed: %s", e.Method, e.Problem)
		}
		return newToolError(codeAdapterError, map[string]string{"adapterMessage": e.Problem},
			"the adapter's %s answer is malformed: %s", e.Method, e.Problem)
	case *errPathNotFound:
		return pathNotFoundError(codePathNotFound, e)
	case *errNoStatePlugin:
		return noStatePluginError(e)
	case *errNoStore:
		return noStoreError(e)
	case *errValueTooLarge:
		details := map[string]any{"size": e.Size, "limit": e.Limit, "path": e.Path, "outline": e.Outline}
		at := "the whole state"
		if e.Path != "" {
			at = strconv.Quote(e.Path)
		}
		return newToolError(codePayloadTooLarge, details, "%s of stream %q is %d bytes, over MAX_PAYLOAD_SIZE (%d bytes)",
			at, e.Stream, e.Size, e.Limit)
	}
	return nil
}

// metroNoStateError: a session seen only through Metro was asked for state.
func metroNoStateError(e *errMetroNoState) *toolError {
	what := e.Method
	details := map[string]any{"via": "metro"}
	if e.Stream != "" {
		what = fmt.Sprintf("stream %q", e.Stream)
		details["stream"] = e.Stream
	} else {
		details["method"] = e.Method
	}
	te := newToolError(codeNotSupported, details,
		"%s is not reachable through Metro: this app is seen through Metro's debugger proxy, which carries its console and network only", what)
	te.Suggestion = "Read the app's logs and requests with debug_get_logs and debug_get_network; for its state, add Reactotron's client " +
		"(reactotron-react-native with reactotron-redux) or a debug adapter (docs/protocol.md) to the app, and the same app's session will answer."
	return te
}

// scopeError is err, except that a path miss is a miss of a `scope`
// argument (SCOPE_NOT_FOUND).
func scopeError(err error) error {
	var miss *errPathNotFound
	if errors.As(err, &miss) {
		return pathNotFoundError(codeScopeNotFound, miss)
	}
	return err
}

// linkNotConnectedDetails are the details of a NOT_CONNECTED error (spec §2).
type linkNotConnectedDetails struct {
	Reason      string `json:"reason"`
	ListenError string `json:"listenError,omitempty"`
}

// notConnectedError says why there is no app to ask (spec §2).
func notConnectedError(reason, wsURL, listenErr string) *toolError {
	details := linkNotConnectedDetails{Reason: reason}
	var msg string
	switch reason {
	case linkReasonNeverConnected:
		msg = "no app adapter has connected since the server started"
	case linkReasonReplaced:
		msg = "the app adapter was replaced by a newer connection before it answered"
	case linkReasonNotListening:
		details.ListenError = listenErr
		msg = "the server is not listening for app adapters on " + wsURL
		if listenErr != "" {
			msg += ": " + listenErr + "; another devtools-mcp may hold the port, and the bind is retried until it is free"
		}
	default:
		msg = "the app adapter disconnected"
	}
	e := newToolError(codeNotConnected, details, "%s", msg)
	port := ""
	if u, err := url.Parse(wsURL); err == nil {
		port = u.Port()
	}
	switch {
	case reason == linkReasonNotListening:
		e.Suggestion = "Another process (likely another devtools-mcp) holds " + wsURL + ": stop it, or give this server another WS_PORT and point the app's adapter at it; the bind is retried every 2 s."
	case port != "" && port != "19850":
		e.Suggestion = "Start the app's dev build with the debug adapter enabled and pointed at port " + port +
			" (on Android also run `adb reverse tcp:" + port + " tcp:" + port + "`), then call debug_health_check."
	}
	return e
}

// linkPayloadDetails are the details of a PAYLOAD_TOO_LARGE error for a
// frame over MAX_PAYLOAD_SIZE (spec §2).
type linkPayloadDetails struct {
	Size  int64 `json:"size"`
	Limit int64 `json:"limit"`
}

// linkAdapterErrorDetails are the details of an ADAPTER_ERROR (spec §2).
type linkAdapterErrorDetails struct {
	AdapterCode    string `json:"adapterCode,omitempty"`
	AdapterMessage string `json:"adapterMessage,omitempty"`
}

// adapterAnsweredError passes an app's own STREAM_UNAVAILABLE,
// SNAPSHOT_NOT_FOUND and PAYLOAD_TOO_LARGE (and PATH_NOT_FOUND of a snapshot
// request) on as they are; any other code is an ADAPTER_ERROR (spec §4).
func adapterAnsweredError(e *errAdapterAnswered) *toolError {
	answered := fmt.Sprintf("the app adapter answered %s with %s", e.Method, e.Code)
	pathMiss := e.Code == codePathNotFound && (e.Method == "snapshot.get" || e.Method == "snapshot.keys")
	switch {
	case e.Code == codeStreamUnavailable, e.Code == codeSnapshotNotFound, e.Code == codePayloadTooLarge, pathMiss:
		var d any // a nil interface, not a nil json.RawMessage, when the app gave no details
		if e.Details != nil {
			d = e.Details
		}
		return &toolError{Code: e.Code, Message: cmp.Or(e.Message, answered), Details: d}
	}
	if e.Message != "" {
		answered += ": " + e.Message
	}
	return newToolError(codeAdapterError, linkAdapterErrorDetails{AdapterCode: e.Code, AdapterMessage: e.Message}, "%s", answered)
}

// unknownSessionError is the INVALID_PARAMS error of a session argument
// that names no session, or several, listing the sessions there are.
func unknownSessionError(e *errUnknownSession) *toolError {
	problem := fmt.Sprintf("no session has the id or app name %q", e.Ref)
	if e.Matches > 1 {
		problem = fmt.Sprintf("%d sessions have the app name %q; pass a session id", e.Matches, e.Ref)
	}
	list := make([]map[string]any, 0, len(e.Sessions))
	for _, v := range e.Sessions {
		list = append(list, map[string]any{"id": v.ID, "app": nullable(v.AppName()), "connected": v.Connected})
	}
	te := invalidParams("session", problem)
	te.Details = map[string]any{"argument": "session", "problem": problem, "sessions": list}
	te.Suggestion = "Pass one of the listed session ids as `session`, or call debug_health_check to see the sessions."
	return te
}

// pathNotFoundError is the code error of a path that resolves to nothing.
func pathNotFoundError(code string, e *errPathNotFound) *toolError {
	miss := e.Miss
	details := map[string]any{"path": e.Path, "resolvedPrefix": miss.ResolvedPrefix, "available": miss.Available}
	if miss.Available == nil {
		details["available"] = []string{}
	}
	if keys, ok := miss.Available.([]string); ok && miss.AvailableTotal > len(keys) {
		details["availableTotal"] = miss.AvailableTotal
	}
	at := cmp.Or(miss.ResolvedPrefix, "the root")
	return newToolError(code, details, "%s does not exist: %s has no %s", strconv.Quote(e.Path), at, miss.Segment)
}

// Err returns err with its message and details redacted: an error that
// toolErrorOf knows becomes a *toolError, anything else a plain error with
// the redacted text.
func (r *redactor) Err(err error) error {
	if r == nil || err == nil {
		return err
	}
	te := toolErrorOf(err)
	if te == nil {
		return errors.New(r.Text(err.Error()))
	}
	out := &toolError{Code: te.Code, Message: r.Text(te.Message), Suggestion: r.Text(te.Suggestion)}
	if te.Details != nil {
		out.Details = r.Value(te.Details)
	}
	return out
}
