package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coder/websocket"
)

// adapterconn.go is one adapter's WebSocket connection: its handshake
// phase, reading (frames over MAX_PAYLOAD_SIZE streamed and discarded),
// writing under one lock, keepalive, closing, and the messages a live
// adapter pushes.

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
func (c *adapterConn) attached() *session {
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

// adapterConn is one upgraded WebSocket connection.
type adapterConn struct {
	link   *adapterLink
	ws     *websocket.Conn
	raw    net.Conn // the socket under ws; nil only if the server did not provide it
	remote string

	// writeSem is the connection's one writer lock; it is a channel so that
	// waiting for it gives up with the write's context. It guards writeBuf.
	writeSem chan struct{}
	writeBuf bytes.Buffer

	// Owned by the read loop.
	readBuf []byte
	probe   [1]byte
	// lastHandoff is the size of the last message whose buffer went with its
	// result: the next buffer that must grow past wireReadBufferMin grows
	// straight to about that size, since snapshots tend to repeat their size.
	lastHandoff int
	messageLen  int // length of the message being handled

	handshaken chan struct{} // closed once the handshake is accepted
	readEnded  chan struct{} // closed when the read loop has ended
	done       chan struct{} // closed when the connection is torn down
	closeOnce  sync.Once
	closing    atomic.Bool
	sessionID  string // set before handshaken is closed, then immutable

	mu         sync.Mutex
	phase      adapterConnPhase
	pending    map[string]*adapterPending
	gone       string // once set, the NOT_CONNECTED reason for new requests
	dropReason string // why the connection is being dropped, if we drop it
	finished   bool   // serve has returned: no new goroutines for this connection

	session *session // set by install
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
	reason := c.dropReason
	c.mu.Unlock()
	if reason == "" {
		reason = linkReasonDisconnected
	}
	c.link.connEnded(c, reason, err)
	close(c.done)
	c.mu.Lock()
	c.finished = true
	c.mu.Unlock()
}

// goTracked runs f in a goroutine that run waits for, unless the connection
// has already been torn down.
func (c *adapterConn) goTracked(f func()) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.finished {
		return false
	}
	// Counted: serve's own count is still held, so wg is above zero.
	c.link.wg.Add(1)
	go func() {
		defer c.link.wg.Done()
		f()
	}()
	return true
}

// leave marks c as no longer live and returns its pending requests, which
// the caller fails with reason. Later addPending calls fail with reason.
func (c *adapterConn) leave(reason string) map[string]*adapterPending {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.gone == "" {
		c.gone = reason
	}
	pending := c.pending
	c.pending = nil
	return pending
}

func (c *adapterConn) addPending(id string, p *adapterPending) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.gone != "" {
		return linkNotConnectedError(c.gone, "", "")
	}
	if len(c.pending) >= c.link.maxPending {
		return newToolError(codeAdapterError, nil,
			"too many requests pending on the app adapter (limit %d); it is not answering", c.link.maxPending)
	}
	c.pending[id] = p
	return nil
}

// takePending removes and returns the pending request id, or nil.
func (c *adapterConn) takePending(id string) *adapterPending {
	c.mu.Lock()
	defer c.mu.Unlock()
	p := c.pending[id]
	if p != nil {
		delete(c.pending, id)
	}
	return p
}

// setPhase moves the handshake phase from `from` to `to` and reports
// whether it was at `from`.
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

// closeWith starts the close handshake with code, without waiting for it;
// the socket is dropped if the handshake has not finished closeTimeout after
// it began. Only the first call has an effect.
func (c *adapterConn) closeWith(code websocket.StatusCode, reason string) {
	c.closeOnce.Do(func() {
		c.closing.Store(true)
		c.goTracked(func() {
			// The clock starts here, next to the close frame's write, so
			// that a slow start of this goroutine does not eat the time the
			// adapter has to answer.
			closed := make(chan struct{})
			c.goTracked(func() {
				timer := time.NewTimer(c.link.closeTimeout)
				defer timer.Stop()
				select {
				case <-closed:
				case <-timer.C:
					if c.raw != nil {
						c.raw.SetDeadline(time.Now())
					}
				}
			})
			c.ws.Close(code, reason)
			close(closed)
		})
	})
}

// drop ends the connection at once, without a close handshake.
func (c *adapterConn) drop(reason string) {
	c.mu.Lock()
	if c.dropReason == "" {
		c.dropReason = reason
	}
	c.mu.Unlock()
	if c.raw != nil {
		c.raw.Close()
		return
	}
	c.goTracked(func() { c.ws.CloseNow() })
}

// keepalive closes the connection with 4004 when no handshake arrives in
// time, then pings the live adapter and drops it when a pong is late.
func (c *adapterConn) keepalive() {
	l := c.link
	timer := time.NewTimer(l.handshakeTimeout)
	select {
	case <-c.readEnded:
		timer.Stop()
		return
	case <-c.handshaken:
		timer.Stop()
	case <-timer.C:
		if c.setPhase(phaseAwaiting, phaseRefused) {
			l.logger.Warn("adapter sent no handshake in time", "remote", c.remote, "timeout", l.handshakeTimeout)
			c.closeWith(wireCloseHandshakeTimeout, "no handshake in time")
		}
		return
	}
	ticker := time.NewTicker(l.pingInterval)
	defer ticker.Stop()
	for {
		select {
		case <-c.readEnded:
			return
		case <-ticker.C:
		}
		ctx, cancel := context.WithTimeout(context.Background(), l.pongTimeout)
		err := c.ws.Ping(ctx)
		// The pong deadline passing is a ping timeout even when it also
		// closed the connection (it does when it expires mid-write).
		timedOut := ctx.Err() != nil
		cancel()
		if err == nil {
			continue
		}
		if !timedOut || c.closing.Load() {
			return // the connection ended for another reason
		}
		l.logger.Warn("app adapter did not answer a ping; dropping it", "session", c.sessionID, "err", err)
		c.drop("ping timeout")
		return
	}
}

// writeJSON encodes v and writes it as one text frame, holding the writer
// lock. ctx bounds both the wait for the lock and the write; when it ends
// mid-write the connection is closed (coder/websocket has no other way to
// abandon a partly written frame). A receive from abort (nil for none) gives
// up the wait for the lock only.
func (c *adapterConn) writeJSON(ctx context.Context, abort <-chan struct{}, v any) error {
	select {
	case c.writeSem <- struct{}{}:
	case <-ctx.Done():
		return ctx.Err()
	case <-abort:
		return context.Canceled
	case <-c.done:
		return net.ErrClosed
	}
	defer func() { <-c.writeSem }()
	c.writeBuf.Reset()
	enc := json.NewEncoder(&c.writeBuf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return err
	}
	frame := bytes.TrimSuffix(c.writeBuf.Bytes(), []byte("\n"))
	err := c.ws.Write(ctx, websocket.MessageText, frame)
	if c.writeBuf.Cap() > 64<<10 {
		c.writeBuf = bytes.Buffer{} // do not keep a rare large request's buffer
	}
	return err
}

// writeSoon writes v bounded by writeTimeout.
func (c *adapterConn) writeSoon(v any) error {
	ctx, cancel := context.WithTimeout(context.Background(), c.link.writeTimeout)
	defer cancel()
	return c.writeJSON(ctx, nil, v)
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
// Reads use no context: they end when the socket closes, which every path
// that ends a connection (close handshake, deadline, drop) makes happen.
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

// readMessage reads the next data message. A text message within
// MAX_PAYLOAD_SIZE is returned whole, in c.readBuf (valid until the next
// call unless handed off). A larger one is read and discarded without
// holding more than MAX_PAYLOAD_SIZE bytes of it (plus a one-byte probe);
// its first wirePrefixLen bytes are returned with its full size. Binary
// messages are discarded; only their size is returned.
func (c *adapterConn) readMessage() (websocket.MessageType, []byte, int64, error) {
	typ, r, err := c.ws.Reader(context.Background())
	if err != nil {
		return 0, nil, 0, err
	}
	limit := int(c.link.cfg.MaxPayloadSize)
	buf := c.readBuf[:0]
	if cap(buf) == 0 {
		buf = make([]byte, 0, min(wireReadBufferMin, limit))
		c.readBuf = buf
	}
	if typ != websocket.MessageText {
		n, err := discardMessage(r, buf[:cap(buf)])
		return typ, nil, n, err
	}
	// Every buffer is at most limit bytes long.
	for {
		if len(buf) == cap(buf) {
			if len(buf) >= limit {
				break
			}
			size := 2 * cap(buf)
			if c.lastHandoff > size {
				size = c.lastHandoff + c.lastHandoff/8
			}
			grown := make([]byte, len(buf), min(size, limit))
			copy(grown, buf)
			buf = grown
			c.readBuf = buf[:0]
		}
		n, err := r.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if err == io.EOF {
			return typ, buf, int64(len(buf)), nil
		}
		if err != nil {
			return 0, nil, 0, err
		}
	}
	// The buffer is full at the limit: one more byte makes the frame oversized.
	var n int
	for n == 0 && err == nil {
		n, err = r.Read(c.probe[:])
	}
	if err != nil && err != io.EOF {
		return 0, nil, 0, err
	}
	if n == 0 {
		return typ, buf, int64(len(buf)), nil // exactly at the limit
	}
	size := int64(len(buf) + n)
	prefix := buf[:min(wirePrefixLen, len(buf))]
	if err == nil {
		scratch := buf[len(prefix):cap(buf)]
		if len(scratch) == 0 {
			scratch = c.probe[:]
		}
		rest, err := discardMessage(r, scratch)
		if err != nil {
			return 0, nil, 0, err
		}
		size += rest
	}
	return typ, prefix, size, nil
}

// discardMessage reads r to its end through scratch and returns how many bytes it read.
func discardMessage(r io.Reader, scratch []byte) (int64, error) {
	var total int64
	for {
		n, err := r.Read(scratch)
		total += int64(n)
		if err == io.EOF {
			return total, nil
		}
		if err != nil {
			return total, err
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
		e := newToolError(codePayloadTooLarge,
			linkPayloadDetails{Size: size, Limit: l.cfg.MaxPayloadSize},
			"the app adapter's answer to %s is %d bytes, over MAX_PAYLOAD_SIZE (%d bytes)", p.method, size, l.cfg.MaxPayloadSize)
		// A scope cannot help here: it is applied after the whole answer arrives.
		e.Suggestion = "The app's whole answer is over MAX_PAYLOAD_SIZE: restart the server with a larger MAX_PAYLOAD_SIZE (up to 67108864)."
		p.done <- adapterOutcome{err: e}
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
	_ = scanObject(raw, func(key, value []byte) error {
		switch string(key) {
		case "stream":
			stream = value
		case "seq":
			seq = value
		case "type":
			typ = value
		case "timestamp":
			timestamp = value
		}
		return nil
	})
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
