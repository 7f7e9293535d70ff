package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"
)

// wire_request.go matches requests to an adapter with its responses:
// pending requests, timeouts and cancels, and the reading of an adapter's
// error answers.

// linkTimeoutDetails are the details of a TIMEOUT error (spec §2).
type linkTimeoutDetails struct {
	Method    string `json:"method"`
	TimeoutMs int64  `json:"timeoutMs"`
}

// adapterPending is a request waiting for the adapter's response. done gets
// exactly one outcome, sent by whoever removed the request from its
// connection's pending map.
type adapterPending struct {
	method string
	done   chan adapterOutcome // capacity 1
}

type adapterOutcome struct {
	result json.RawMessage
	err    error
}

func failAdapterPending(pending map[string]*adapterPending, reason string) {
	for _, p := range pending {
		p.done <- adapterOutcome{err: &errNotConnected{Reason: reason}}
	}
}

// wireRequest is a request frame (wire protocol §4).
type wireRequest struct {
	Type   string          `json:"type"`
	ID     string          `json:"id"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
}

// request sends method with params (nil sends {}) to the adapter and
// returns the `result` of its response, which the caller owns. Errors are
// the typed errors of wire_errors.go (*errNotConnected, *errAdapterTimeout
// after cfg.RequestTimeout, *errFrameTooLarge, *errTooManyPending,
// *errAnswerMalformed with Envelope, *errAdapterAnswered), or ctx.Err() when ctx ends
// first. On timeout and on ctx's end the adapter is sent a cancel.
// Safe for concurrent use.
func (c *adapterConn) request(ctx context.Context, method string, params any) (json.RawMessage, error) {
	l := c.link
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	paramsJSON := json.RawMessage("{}")
	if params != nil {
		var b bytes.Buffer
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(false) // the adapter is no HTML page; keep "<" as is
		if err := enc.Encode(params); err != nil {
			return nil, fmt.Errorf("%s: encoding params: %w", method, err)
		}
		if raw := bytes.TrimSpace(b.Bytes()); string(raw) != "null" {
			paramsJSON = raw
		}
	}
	deadline := time.Now().Add(l.cfg.RequestTimeout)
	id := strconv.FormatUint(l.nextID.Add(1), 10)
	p := &adapterPending{method: method, done: make(chan adapterOutcome, 1)}
	// addPending fails once the connection has left (c.leave), which it
	// does before failing its pending requests: none is left behind.
	if err := c.addPending(id, p); err != nil {
		return nil, err
	}

	// settled waits for the outcome of a request someone else took from
	// the pending map: it was answered, or failed (replaced, disconnected).
	settled := func() (json.RawMessage, error) { out := <-p.done; return out.result, out.err }

	// The write is bounded by the request's deadline, not by ctx: coder/websocket
	// closes the connection when a write's context ends mid-frame, and a
	// caller giving up must not cost the other requests their adapter.
	writeCtx, cancelWrite := context.WithDeadline(context.Background(), deadline)
	err := c.writeJSON(writeCtx, ctx.Done(), wireRequest{Type: "request", ID: id, Method: method, Params: paramsJSON})
	cancelWrite()
	if err != nil {
		if c.takePending(id) == nil {
			return settled()
		}
		switch {
		case ctx.Err() != nil:
			return nil, ctx.Err()
		case errors.Is(err, context.DeadlineExceeded):
			// Stuck behind a write the adapter does not read; no cancel,
			// the request never went out whole.
			return nil, l.timeoutError(method)
		}
		l.logger.Debug("adapter request write failed", "method", method, "id", id, "err", err)
		return nil, &errNotConnected{Reason: linkReasonDisconnected}
	}

	timer := time.NewTimer(time.Until(deadline))
	defer timer.Stop()
	timedOut := false
	select {
	case out := <-p.done:
		return out.result, out.err
	case <-timer.C:
		timedOut = true
	case <-ctx.Done():
	}
	if c.takePending(id) == nil {
		return settled()
	}
	c.sendCancel(id)
	if !timedOut {
		return nil, ctx.Err()
	}
	l.logger.Debug("adapter request timed out", "method", method, "id", id)
	c.notice("warning", "request timed out", fmt.Sprintf("%s got no answer within %d ms", method, l.cfg.RequestTimeout.Milliseconds()))
	return nil, l.timeoutError(method)
}

func (l *adapterLink) timeoutError(method string) error {
	return &errAdapterTimeout{Via: sessionViaWire, Method: method, After: l.cfg.RequestTimeout}
}

// handleResponse completes the pending request a response answers.
func (c *adapterConn) handleResponse(m *wireMessage) {
	l := c.link
	id, ok := wireString(m.ID)
	if !ok {
		l.logger.Warn("ignoring app adapter response without a string id", "session", c.sessionID, "id", clipJSON(m.ID))
		return
	}
	p := c.takePending(id)
	if p == nil {
		l.logger.Debug("dropping late or unknown app adapter response", "session", c.sessionID, "id", id)
		return
	}
	var out adapterOutcome
	switch {
	case !wireAbsent(m.Error):
		out.err = adapterAnswerError(p.method, m.Error)
	case m.Result == nil:
		out.err = &errAnswerMalformed{Method: p.method, Problem: "it has neither result nor error", Envelope: true}
	default:
		out.result = c.keep(m.Result, c.messageLen)
	}
	if _, malformed := out.err.(*errAnswerMalformed); malformed {
		c.notice("warning", "malformed answer dropped", out.err.Error())
	}
	p.done <- out
}

// wireAnswerError is the error member of a response (wire protocol §4).
type wireAnswerError struct {
	Code    string // non-empty
	Message string // "" when absent
	Details []byte // raw JSON; nil when absent or null
}

// parseWireAnswerError reads a response's error member, or says what is
// malformed about it. check-adapter vets answers with it too.
func parseWireAnswerError(raw []byte) (wireAnswerError, error) {
	if len(raw) == 0 || raw[0] != '{' {
		return wireAnswerError{}, errors.New("error is not an object")
	}
	var code, message, details []byte
	if err := scanFields(raw, map[string]*[]byte{"code": &code, "message": &message, "details": &details}); err != nil {
		return wireAnswerError{}, err
	}
	codeStr, ok := wireString(code)
	if !ok || codeStr == "" {
		return wireAnswerError{}, errors.New("error.code is not a non-empty string")
	}
	msg, ok := wireString(message)
	if !ok && !wireAbsent(message) {
		return wireAnswerError{}, errors.New("error.message is not a string")
	}
	e := wireAnswerError{Code: codeStr, Message: msg}
	if !wireAbsent(details) {
		e.Details = details
	}
	return e, nil
}

// adapterAnswerError reads a response's error member (wire protocol §4):
// the adapter's own error, or *errAnswerMalformed (Envelope) when it breaks the
// protocol.
func adapterAnswerError(method string, raw []byte) error {
	ae, err := parseWireAnswerError(raw)
	if err != nil {
		return &errAnswerMalformed{Method: method, Problem: err.Error(), Envelope: true}
	}
	return &errAdapterAnswered{Method: method, Code: ae.Code, Message: ae.Message, Details: bytes.Clone(ae.Details)}
}

// splitWireEventsAnswer checks the shape of an events.query result (wire
// protocol §4) and returns its members as JSON: the events array, hasMore,
// oldestSeq and latestSeq; ok is false when one is missing or of the wrong
// type.
func splitWireEventsAnswer(raw []byte) (events, hasMore, oldest, latest []byte, ok bool) {
	// eachMember, not scanFields: the events were each read within the
	// depth bound, and the answer nests them one level deeper.
	err := eachMember(raw, func(name string, v []byte) bool {
		switch name {
		case "events":
			events = v
		case "hasMore":
			hasMore = v
		case "oldestSeq":
			oldest = v
		case "latestSeq":
			latest = v
		}
		return true
	})
	_, ok1 := wireInt(oldest)
	_, ok2 := wireInt(latest)
	if err != nil || rawKind(events) != "array" || rawKind(hasMore) != "boolean" || !ok1 || !ok2 {
		return nil, nil, nil, nil, false
	}
	return events, hasMore, oldest, latest, true
}
