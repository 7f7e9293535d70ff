package main

// wire_errors.go holds what goes wrong between the server and an app, as
// the links see it: typed errors that say what happened and carry the
// figures. They hold no advice for agents; errors.go turns them into codes,
// messages and suggestions.

import (
	"encoding/json"
	"fmt"
	"strconv"
	"time"
)

// Error codes of wire protocol §4, as an app answers them: the links and
// sessions tell them apart in an app's own error answers, and
// check-adapter expects them of an adapter.
const (
	wireCodeStreamUnavailable = "STREAM_UNAVAILABLE"
	wireCodeSnapshotNotFound  = "SNAPSHOT_NOT_FOUND"
	wireCodePayloadTooLarge   = "PAYLOAD_TOO_LARGE"
	wireCodePathNotFound      = "PATH_NOT_FOUND"
	wireCodeInvalidParams     = "INVALID_PARAMS"
	wireCodeUnknownMethod     = "UNKNOWN_METHOD"
)

// errNotConnected: there is no app to ask, or the connection went away
// before it answered. Reason is one of the linkReason constants; WSURL and
// ListenError describe the listener when the link knows them.
type errNotConnected struct {
	Reason      string
	WSURL       string
	ListenError string
}

func (e *errNotConnected) Error() string { return "not connected: " + e.Reason }

// errTooManyPending: an app has Limit requests unanswered already. Via
// says how the app is connected (sessionViaReactotron; anything else is a
// wire protocol adapter).
type errTooManyPending struct {
	Via   string
	Limit int
}

func (e *errTooManyPending) Error() string {
	return fmt.Sprintf("too many requests pending on %s (limit %d)", appNamed(e.Via), e.Limit)
}

// errAdapterTimeout: the app did not answer Method within After. Via says
// how the app is connected, as in errTooManyPending.
type errAdapterTimeout struct {
	Via    string
	Method string
	After  time.Duration
}

func (e *errAdapterTimeout) Error() string {
	return fmt.Sprintf("%s did not answer %s within %d ms", appNamed(e.Via), e.Method, e.After.Milliseconds())
}

// appNamed names the app connected via, for the errors' own text.
func appNamed(via string) string {
	if via == sessionViaReactotron {
		return "the Reactotron app"
	}
	return "the app adapter"
}

// errFrameTooLarge: the adapter's answer to Method was a frame of Size
// bytes, over the Limit (MAX_PAYLOAD_SIZE); it was discarded unread.
type errFrameTooLarge struct {
	Method      string
	Size, Limit int64
}

func (e *errFrameTooLarge) Error() string {
	return fmt.Sprintf("the app adapter's answer to %s is %d bytes, over MAX_PAYLOAD_SIZE (%d bytes)", e.Method, e.Size, e.Limit)
}

// errAdapterAnswered: the adapter answered Method with an error of its own
// (wire protocol §4). Details is the answer's details member, nil when absent.
type errAdapterAnswered struct {
	Method, Code, Message string
	Details               json.RawMessage
}

func (e *errAdapterAnswered) Error() string {
	return fmt.Sprintf("the app adapter answered %s with %s: %s", e.Method, e.Code, e.Message)
}

// The errors below are found both by the links (the Reactotron bridge
// answers from a whole state) and by the sessions.

// errAnswerMalformed: an answer to Method, whoever gave it, is not in the
// wire protocol's shape; Problem says what was wanted. Envelope is set when
// the adapter's response itself broke the protocol (neither result nor
// error, or an error member not in §4's shape), rather than its result.
type errAnswerMalformed struct {
	Method, Problem string
	Envelope        bool
}

func (e *errAnswerMalformed) Error() string {
	if e.Envelope {
		return fmt.Sprintf("the app adapter's answer to %s is malformed: %s", e.Method, e.Problem)
	}
	return fmt.Sprintf("the adapter's %s answer is malformed: %s", e.Method, e.Problem)
}

func malformedAnswer(method, problem string) error {
	return &errAnswerMalformed{Method: method, Problem: problem}
}

// errPathNotFound: nothing is at Path; Miss says how far it resolved and
// what is there instead.
type errPathNotFound struct {
	Path string
	Miss *pathMiss
}

func (e *errPathNotFound) Error() string {
	return strconv.Quote(e.Path) + " does not exist"
}

func notFound(path string, miss *pathMiss) error {
	return &errPathNotFound{Path: path, Miss: miss}
}
