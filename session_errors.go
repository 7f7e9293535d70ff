package main

// session_errors.go holds what goes wrong when a session is asked, as
// typed errors that say what happened and carry the figures. The links'
// errors (wire_errors.go) pass through sessions unchanged; errors.go alone
// turns both into codes, messages and suggestions for agents.

import (
	"fmt"
	"time"
)

// errUnknownSession: a `session` argument names no session (Matches 0) or
// several (Matches > 1, by app name). Sessions are every session held.
type errUnknownSession struct {
	Ref      string
	Matches  int
	Sessions []sessionView
}

func (e *errUnknownSession) Error() string {
	return fmt.Sprintf("session %q matches %d sessions", e.Ref, e.Matches)
}

// errSessionGone: What needs the app of session ID, which left at At.
type errSessionGone struct {
	ID   string
	At   time.Time
	What string
}

func (e *errSessionGone) Error() string {
	return fmt.Sprintf("the app of session %s disconnected, and %s needs the app", e.ID, e.What)
}

// errNotOffered: a live session's feed (Via) does not answer Method.
type errNotOffered struct {
	Via, Method string
}

func (e *errNotOffered) Error() string {
	return fmt.Sprintf("the app's %s session does not offer %s", e.Via, e.Method)
}

// errSnapshotNotFound: session Session holds no snapshot of Stream (with
// seq Seq, when it is not 0); Gone when the app has left.
type errSnapshotNotFound struct {
	Session, Stream string
	Seq             int64
	Gone            bool
}

func (e *errSnapshotNotFound) Error() string {
	return fmt.Sprintf("no snapshot %d of stream %q in session %s", e.Seq, e.Stream, e.Session)
}

// errStreamUnavailable: the session does not advertise Stream as active;
// Active are the streams it does.
type errStreamUnavailable struct {
	Stream string
	Active []string
}

func (e *errStreamUnavailable) Error() string {
	return fmt.Sprintf("stream %q is not active", e.Stream)
}

// errValueTooLarge: the value at Path of Stream's state is Size bytes, over
// Limit (MAX_PAYLOAD_SIZE); Outline lists its children, largest first.
type errValueTooLarge struct {
	Stream, Path string
	Size, Limit  int64
	Outline      []outlineEntry
}

func (e *errValueTooLarge) Error() string {
	return fmt.Sprintf("%q of stream %q is %d bytes, over %d", e.Path, e.Stream, e.Size, e.Limit)
}
