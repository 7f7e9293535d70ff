package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// adapterrequest.go matches requests to an adapter with its responses:
// pending requests, timeouts and cancels, and the mapping of adapter
// answers and errors to tool errors.

// linkTimeoutDetails are the details of a TIMEOUT error (spec §2).
type linkTimeoutDetails struct {
	Method    string `json:"method"`
	TimeoutMs int64  `json:"timeoutMs"`
}

// linkPayloadDetails are the details of a PAYLOAD_TOO_LARGE error raised
// here, for a frame over MAX_PAYLOAD_SIZE (spec §2).
type linkPayloadDetails struct {
	Size  int64 `json:"size"`
	Limit int64 `json:"limit"`
}

// linkAdapterErrorDetails are the details of an ADAPTER_ERROR (spec §2).
type linkAdapterErrorDetails struct {
	AdapterCode    string `json:"adapterCode,omitempty"`
	AdapterMessage string `json:"adapterMessage,omitempty"`
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
		p.done <- adapterOutcome{err: linkNotConnectedError(reason, "", "")}
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
// *toolError values (NOT_CONNECTED, TIMEOUT after cfg.RequestTimeout,
// PAYLOAD_TOO_LARGE, ADAPTER_ERROR, or the adapter's STREAM_UNAVAILABLE,
// SNAPSHOT_NOT_FOUND or PAYLOAD_TOO_LARGE passed through), or ctx.Err() when
// ctx ends first. On timeout and on ctx's end the adapter is sent a cancel.
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

	// The write is bounded by the request's deadline, not by ctx: coder/websocket
	// closes the connection when a write's context ends mid-frame, and a
	// caller giving up must not cost the other requests their adapter.
	writeCtx, cancelWrite := context.WithDeadline(context.Background(), deadline)
	err := c.writeJSON(writeCtx, ctx.Done(), wireRequest{Type: "request", ID: id, Method: method, Params: paramsJSON})
	cancelWrite()
	if err != nil {
		if c.takePending(id) == nil {
			// Already failed (replaced, disconnected) or answered.
			out := <-p.done
			return out.result, out.err
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
		return nil, linkNotConnectedError(linkReasonDisconnected, "", "")
	}

	timer := time.NewTimer(time.Until(deadline))
	defer timer.Stop()
	select {
	case out := <-p.done:
		return out.result, out.err
	case <-timer.C:
		if c.takePending(id) == nil {
			out := <-p.done
			return out.result, out.err
		}
		c.sendCancel(id)
		l.logger.Debug("adapter request timed out", "method", method, "id", id)
		c.notice("warning", "request timed out", fmt.Sprintf("%s got no answer within %d ms", method, l.cfg.RequestTimeout.Milliseconds()))
		return nil, l.timeoutError(method)
	case <-ctx.Done():
		if c.takePending(id) == nil {
			out := <-p.done
			return out.result, out.err
		}
		c.sendCancel(id)
		return nil, ctx.Err()
	}
}

func (l *adapterLink) timeoutError(method string) *toolError {
	ms := l.cfg.RequestTimeout.Milliseconds()
	return newToolError(codeTimeout, linkTimeoutDetails{Method: method, TimeoutMs: ms},
		"the app adapter did not answer %s within %d ms", method, ms)
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
	if !wireAbsent(m.Error) {
		te := adapterAnswerError(p.method, m.Error)
		if strings.Contains(te.Message, "is malformed") {
			c.notice("warning", "malformed answer dropped", te.Message)
		}
		p.done <- adapterOutcome{err: te}
		return
	}
	if m.Result == nil {
		te := newToolError(codeAdapterError, nil, "the app adapter's answer to %s is malformed: it has neither result nor error", p.method)
		c.notice("warning", "malformed answer dropped", te.Message)
		p.done <- adapterOutcome{err: te}
		return
	}
	result := m.Result
	if len(result) >= wireHandoffMin {
		// The waiter takes the read buffer with the result in it; the next
		// message is read into a new one.
		c.readBuf = nil
		c.lastHandoff = c.messageLen
	} else {
		result = bytes.Clone(result)
	}
	p.done <- adapterOutcome{result: result}
}

// adapterAnswerError turns a response's error member into a tool error (spec §4).
func adapterAnswerError(method string, raw []byte) *toolError {
	malformed := func(problem string) *toolError {
		return newToolError(codeAdapterError, nil, "the app adapter's answer to %s is malformed: %s", method, problem)
	}
	if raw[0] != '{' {
		return malformed("error is not an object")
	}
	var code, message, details []byte
	if err := scanObject(raw, func(key, value []byte) error {
		switch string(key) {
		case "code":
			code = value
		case "message":
			message = value
		case "details":
			details = value
		}
		return nil
	}); err != nil {
		return malformed(err.Error())
	}
	codeStr, ok := wireString(code)
	if !ok || codeStr == "" {
		return malformed("error.code is not a non-empty string")
	}
	msg, ok := wireString(message)
	if !ok && !wireAbsent(message) {
		return malformed("error.message is not a string")
	}
	pathMiss := codeStr == codePathNotFound && (method == "snapshot.get" || method == "snapshot.keys")
	switch {
	case codeStr == codeStreamUnavailable, codeStr == codeSnapshotNotFound, codeStr == codePayloadTooLarge, pathMiss:
		if msg == "" {
			msg = fmt.Sprintf("the app adapter answered %s with %s", method, codeStr)
		}
		var d any
		if !wireAbsent(details) {
			d = json.RawMessage(bytes.Clone(details))
		}
		return &toolError{Code: codeStr, Message: msg, Details: d}
	}
	text := fmt.Sprintf("the app adapter answered %s with %s", method, codeStr)
	if msg != "" {
		text += ": " + msg
	}
	return newToolError(codeAdapterError, linkAdapterErrorDetails{AdapterCode: codeStr, AdapterMessage: msg}, "%s", text)
}
