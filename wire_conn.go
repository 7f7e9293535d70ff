package main

import (
	"bytes"
	"cmp"
	"fmt"
	"sync"
	"time"

	"github.com/coder/websocket"
)

// wire_conn.go is the Wire Protocol over one adapter's WebSocket connection
// (whose life is wire_socket.go's): its handshake phase, keepalive, reading,
// and the messages a live adapter pushes.

// notice tells the MCP clients (at the level they asked for) about something
// that went wrong with c's app.
func (c *adapterConn) notice(level, what, detail string) {
	c.link.events.push(linkEvent{Kind: linkNotice, SessionID: c.sessionID, Level: level, Notice: what, Detail: detail})
}

// replaced ends c because a newer connection took its session or device.
func (c *adapterConn) replaced() {
	pending := c.leave(linkReasonReplaced)
	c.link.logger.Info("adapter replaced by a newer connection", "session", c.sessionID, "failedRequests", len(pending))
	failAdapterPending(pending, linkReasonReplaced)
	c.closeWith(wireCloseReplaced, "replaced")
}

// attached is the session c was attached to, or nil before its handshake.
func (c *adapterConn) attached() appSession {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.session
}

// adapterConnPhase is where a connection is in the handshake.
type adapterConnPhase int

const (
	phaseAwaiting adapterConnPhase = iota // upgraded, no handshake yet
	phaseAccepted                         // handshake accepted (the connection may since have been replaced)
	phaseRefused                          // handshake refused or timed out; the close is under way
)

// adapterConn is one adapter's upgraded WebSocket connection.
type adapterConn struct {
	*wireSocket
	link *adapterLink

	messageLen int // length of the message being handled; owned by the read loop

	handshaken chan struct{} // closed once the handshake is accepted
	readEnded  chan struct{} // closed when the read loop has ended
	sessionID  string        // set before handshaken is closed, then immutable

	mu         sync.Mutex
	phase      adapterConnPhase
	pending    map[string]*adapterPending
	gone       string // once set, the NOT_CONNECTED reason for new requests
	dropReason string // why the connection is being dropped, if we drop it

	session appSession // set by install
}

// serve runs the connection until it ends, then tears it down.
func (c *adapterConn) serve() {
	keepaliveDone := make(chan struct{})
	c.goTracked(func() {
		defer close(keepaliveDone)
		c.keepalive()
	})
	err := c.readLoop()
	// Stop the keepalive and wait for it, so that a ping timeout it detected
	// is the reason given. CloseNow fails a Ping in flight at once; it waits
	// for a close handshake under way, which the end of reading ends too.
	close(c.readEnded)
	c.ws.CloseNow()
	<-keepaliveDone
	c.mu.Lock()
	reason := cmp.Or(c.dropReason, linkReasonDisconnected)
	c.mu.Unlock()
	c.link.connEnded(c, reason, err)
	c.finish()
}

// leave marks c as no longer live and returns its pending requests, which
// the caller fails with reason. Later addPending calls fail with reason.
func (c *adapterConn) leave(reason string) map[string]*adapterPending {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.gone = cmp.Or(c.gone, reason)
	pending := c.pending
	c.pending = nil
	return pending
}

func (c *adapterConn) addPending(id string, p *adapterPending) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.gone != "" {
		return &errNotConnected{Reason: c.gone}
	}
	if len(c.pending) >= c.link.maxPending {
		return &errTooManyPending{Via: sessionViaWire, Limit: c.link.maxPending}
	}
	c.pending[id] = p
	return nil
}

func (c *adapterConn) takePending(id string) *adapterPending {
	c.mu.Lock()
	defer c.mu.Unlock()
	p := c.pending[id]
	delete(c.pending, id)
	return p
}

func (c *adapterConn) setPhase(from, to adapterConnPhase) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.phase != from {
		return false
	}
	c.phase = to
	return true
}

func (c *adapterConn) currentPhase() adapterConnPhase {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.phase
}

// drop ends the connection at once, without a close handshake.
func (c *adapterConn) drop(reason string) {
	c.mu.Lock()
	c.dropReason = cmp.Or(c.dropReason, reason)
	c.mu.Unlock()
	c.dropSocket()
}

// keepalive closes the connection with 4004 when no handshake arrives in
// time, then pings the live adapter and drops it when a pong is late.
func (c *adapterConn) keepalive() {
	l := c.link
	timer := time.NewTimer(l.handshakeTimeout)
	defer timer.Stop()
	expired := timer.C
	if l.handshakeClock != nil {
		expired = l.handshakeClock(c.remote)
	}
	select {
	case <-c.readEnded:
		return
	case <-c.handshaken:
	case <-expired:
		if c.setPhase(phaseAwaiting, phaseRefused) {
			l.logger.Warn("adapter sent no handshake in time", "remote", c.remote, "timeout", l.handshakeTimeout)
			c.closeWith(wireCloseHandshakeTimeout, "no handshake in time")
		}
		return
	}
	if c.pingUntil(c.readEnded, l.pingInterval, l.pongTimeout) {
		l.logger.Warn("app adapter did not answer a ping; dropping it", "session", c.sessionID)
		c.drop("ping timeout")
	}
}

// sendCancel tells the adapter, without waiting, that request id was given up.
func (c *adapterConn) sendCancel(id string) {
	c.goTracked(func() {
		if err := c.writeSoon(map[string]string{"type": "cancel", "id": id}); err != nil {
			c.link.logger.Debug("could not send cancel to the app adapter", "id", id, "err", err)
		}
	})
}

// readLoop reads and handles messages until the connection fails or closes.
// Reads end when the socket closes, which every path that ends a
// connection (close handshake, deadline, drop) makes happen.
func (c *adapterConn) readLoop() error {
	l := c.link
	for {
		typ, data, size, err := c.readMessage()
		if err != nil {
			return err
		}
		phase := c.currentPhase()
		switch {
		case typ != websocket.MessageText:
			l.logger.Debug("ignoring binary frame from app adapter", "remote", c.remote, "size", size)
		case phase == phaseRefused:
			l.logger.Debug("ignoring message on a refused connection", "remote", c.remote)
		case size > l.cfg.MaxPayloadSize:
			c.handleOversized(data, size)
		case phase == phaseAwaiting:
			c.handleHandshake(data)
		default:
			c.messageLen = len(data)
			c.handleMessage(data)
		}
	}
}

// handleOversized handles a text frame over MAX_PAYLOAD_SIZE, of which only
// prefix was kept: a response naming its type and id there fails its request.
func (c *adapterConn) handleOversized(prefix []byte, size int64) {
	l := c.link
	var typ, id []byte
	// The prefix is cut mid-frame, so the scan ends in an error; members it
	// completed before that are all that counts.
	_ = scanObject(prefix, func(key, value []byte) error {
		switch string(key) {
		case "type":
			if typ == nil {
				typ = value
			}
		case "id":
			if id == nil {
				id = value
			}
		}
		return nil
	})
	t, _ := wireString(typ)
	ids, idOK := wireString(id)
	l.logger.Warn("discarded an app adapter message over MAX_PAYLOAD_SIZE",
		"remote", c.remote, "size", size, "limit", l.cfg.MaxPayloadSize, "type", t, "id", ids)
	if c.currentPhase() != phaseAccepted {
		return
	}
	c.notice("warning", "oversized message dropped", fmt.Sprintf("a %q message of %d bytes, over MAX_PAYLOAD_SIZE (%d)", t, size, l.cfg.MaxPayloadSize))
	if t != "response" || !idOK {
		return
	}
	if p := c.takePending(ids); p != nil {
		p.done <- adapterOutcome{err: &errFrameTooLarge{Method: p.method, Size: size, Limit: l.cfg.MaxPayloadSize}}
	}
}

// handleMessage handles a message from a live adapter. Anything malformed or
// unknown is logged and ignored (wire protocol §1, §7).
func (c *adapterConn) handleMessage(data []byte) {
	l := c.link
	var m wireMessage
	if err := m.parse(data); err != nil {
		l.logger.Warn("ignoring malformed message from app adapter", "session", c.sessionID, "err", err)
		return
	}
	typ, ok := wireString(m.Type)
	if !ok {
		l.logger.Warn("ignoring app adapter message without a string type", "session", c.sessionID, "type", clipJSON(m.Type))
		return
	}
	switch typ {
	case "response":
		c.handleResponse(&m)
	case "event":
		c.handleEvent(&m)
	case "streams":
		if m.Streams == nil {
			l.logger.Warn("ignoring streams message without streams", "session", c.sessionID)
			return
		}
		streams, err := parseWireStreams(m.Streams)
		if err != nil {
			l.logger.Warn("ignoring invalid streams message", "session", c.sessionID, "err", "streams"+err.Error())
			return
		}
		if s := c.attached(); s != nil {
			s.setStreams(c, streams)
		}
	case "ping":
		if err := c.writeSoon(map[string]string{"type": "pong"}); err != nil {
			l.logger.Debug("could not answer app adapter ping", "session", c.sessionID, "err", err)
		}
	default:
		l.logger.Debug("ignoring app adapter message of unknown type", "session", c.sessionID, "type", typ)
	}
}

// handleEvent records a pushed event (wire protocol §5).
func (c *adapterConn) handleEvent(m *wireMessage) {
	l := c.link
	if wireAbsent(m.Event) || m.Event[0] != '{' {
		l.logger.Warn("ignoring event message without an event object", "session", c.sessionID)
		return
	}
	head, err := parseWireEvent(m.Event)
	if err != nil {
		l.logger.Warn("ignoring event without a stream name and a seq >= 1", "session", c.sessionID, "err", err)
		return
	}
	at := head.At
	if at.IsZero() {
		at = time.Now()
	}
	if s := c.attached(); s != nil {
		s.record(c, head.Stream, head.Seq, head.Type, at, bytes.Clone(m.Event))
	}
}

// wireEventHead is what the server reads of a DebugEvent (wire protocol §3).
type wireEventHead struct {
	Stream string
	Seq    int64
	Type   string    // "" when absent or not a string
	At     time.Time // zero when the timestamp is absent or not RFC 3339
}

// parseWireEvent reads a DebugEvent: an object with a stream name and a seq
// >= 1, else an error naming what is missing. check-adapter vets events
// with it too.
func parseWireEvent(raw []byte) (wireEventHead, error) {
	var head wireEventHead
	if len(raw) == 0 || wireAbsent(raw) || raw[0] != '{' {
		return head, fmt.Errorf("the event is not an object: %s", clipJSON(raw))
	}
	var stream, seq, typ, timestamp []byte
	_ = scanFields(raw, map[string]*[]byte{"stream": &stream, "seq": &seq, "type": &typ, "timestamp": &timestamp})
	name, ok := wireString(stream)
	n, seqOK := wireInt(seq)
	if !ok || name == "" || !seqOK || n < 1 {
		return head, fmt.Errorf("the event needs a stream name and a seq >= 1, got stream %s and seq %s", clipJSON(stream), clipJSON(seq))
	}
	head.Stream, head.Seq = name, n
	head.Type, _ = wireString(typ)
	if ts, ok := wireString(timestamp); ok {
		if t, err := time.Parse(time.RFC3339Nano, ts); err == nil {
			head.At = t
		}
	}
	return head, nil
}
