package main

// metro_conn.go is the Metro link's connection to one React Native page:
// dialled through Metro's inspector proxy with the dev server's own Origin, it
// enables what metro_cdp.go allows, turns the page's events into its
// session's console and network events, and keeps the proxy from dropping
// it as idle. It is its session's feed (request).

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"maps"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/coder/websocket"
)

// metroSession is what the Metro link needs of its session, beyond the
// appSession every link reports to. The registry's sessions implement it.
type metroSession interface {
	appSession
	// appendEvent records an event that the server numbers (CDP events
	// carry no seq) and returns it as kept, or nil when from is no longer
	// the session's feed.
	appendEvent(from sessionFeed, stream, typ string, at time.Time, payload []byte) []byte
}

// metroSink is where the Metro link reports its apps.
type metroSink interface {
	// connectMetro makes feed the live feed of the Metro session id.
	connectMetro(id string, info *adapterInfo, feed sessionFeed) (metroSession, []sessionFeed)
}

// maxMetroSent bounds the requests remembered while their answer is awaited.
const maxMetroSent = 64

// metroConn is one page, from its dial until its connection ends. Its
// methods are safe for concurrent use.
type metroConn struct {
	link      *metroLink
	page      metroPageInfo
	sessionID string

	// ctx is the connection's, from the dial on: stop cancels it, which
	// ends a dial in flight.
	ctx      context.Context
	cancel   context.CancelFunc
	linkDone context.Context // the link's own: it ends when the server stops
	// origin is the Origin the dial sent, for the health check when the
	// page refuses it; dial sets it and ended reads it, both on the
	// connection's goroutine.
	origin metroOrigin

	mu       sync.Mutex
	sock     *wireSocket // nil until the dial returns
	stopping bool        // stop was called: a socket the dial returns is closed at once
	stopped  string      // why the link ended the connection; "" while it runs or when it ended by itself
	nextID   int64
	sent     map[int64]string // request id → method, until answered
	// session is the session the page feeds while it is attached, and nil
	// before and after: the one record of whether it is.
	session metroSession
	network metroNetwork // the reader's
}

// metroConnEnd is how a connection ended: the close frame's reason when the
// proxy sent one, and when it attached (zero if it never did).
type metroConnEnd struct {
	err         error
	closeReason string
	attachedAt  time.Time
	lived       time.Duration
	stopped     string // set when the link ended it
}

// serve dials the page, attaches the session, and reads until the
// connection ends or its context does.
func (c *metroConn) serve() metroConnEnd {
	defer c.cancel()
	m := c.link
	sock, err := c.dial()
	if err != nil {
		return metroConnEnd{err: err, stopped: c.stopReason()}
	}
	defer sock.finish()
	c.mu.Lock()
	c.sock = sock
	stopping := c.stopping
	c.mu.Unlock()
	if stopping {
		sock.closeWith(websocket.StatusGoingAway, "")
		return metroConnEnd{err: context.Canceled, stopped: c.stopReason()}
	}
	stopOnCancel := context.AfterFunc(c.ctx, func() { c.stop("shutdown") })
	defer stopOnCancel()

	start := time.Now()
	session, displaced := m.sink.connectMetro(c.sessionID, m.sessionInfo(c.page, start), c)
	c.mu.Lock()
	c.session = session
	c.mu.Unlock()
	for _, old := range displaced {
		old.replaced()
	}
	m.logger.Info("attached to a React Native page through Metro", "session", c.sessionID, "page", c.page.ID,
		"app", c.page.AppID, "device", c.page.DeviceName)

	// The CDP keepalive keeps the proxy from dropping an idle page; the
	// pings find a proxy or device that stopped answering.
	var tasks sync.WaitGroup
	tasks.Go(func() {
		every(c.ctx, m.keepalive, func() bool { return c.send(metroKeepaliveMethod) == nil })
	})
	tasks.Go(func() {
		if sock.pingUntil(c.ctx.Done(), m.keepalive, m.pongTimeout) {
			m.logger.Info("a Metro page did not answer a ping; dropping it", "page", c.page.ID, "session", c.sessionID)
			c.end("ping timeout", (*wireSocket).dropSocket) // a page that does not pong would not answer a close either
		}
	})
	for _, method := range []string{"Runtime.enable", "Network.enable", "ReactNativeApplication.enable"} {
		if err := c.send(method); err != nil {
			break // the read below sees the connection end
		}
	}
	readErr := c.readFrames(sock)
	c.stop("")
	tasks.Wait()
	return c.detach(session, readErr, start)
}

// readFrames hands the page's frames to handle until the connection ends,
// and returns why it ended.
func (c *metroConn) readFrames(sock *wireSocket) error {
	m := c.link
	for {
		data, size, err := sock.readText() // handle keeps nothing of a frame
		if err != nil {
			return err
		}
		if data == nil {
			m.count(func(d *metroCounters) { d.OversizedFrames++ })
			m.logger.Debug("dropped an oversized frame of a Metro page", "page", c.page.ID, "size", size, "limit", m.cfg.MaxPayloadSize)
			continue
		}
		c.handle(data)
	}
}

// detach leaves the session the page fed since start, once the connection
// ended with readErr, and says how it ended.
func (c *metroConn) detach(session metroSession, readErr error, start time.Time) metroConnEnd {
	end := metroConnEnd{err: readErr, attachedAt: start, lived: time.Since(start)}
	var ce websocket.CloseError
	if errors.As(readErr, &ce) {
		end.closeReason = ce.Reason
	}
	c.mu.Lock()
	c.session = nil
	end.stopped = c.stopped
	c.mu.Unlock()
	reason := cmp.Or(end.stopped, "disconnected")
	if session.leave(c, reason) {
		c.link.logger.Info("a React Native page left Metro's link", "session", c.sessionID, "page", c.page.ID, "reason", reason, "closeReason", end.closeReason)
	}
	return end
}

// dial opens the page's socket through the proxy.
func (c *metroConn) dial() (*wireSocket, error) {
	m := c.link
	c.origin = m.debuggerOrigin(c.page)
	dialURL, err := metroDialURL(c.page.DebuggerURL, m.cfg.MetroURL)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(c.ctx, m.dialTimeout)
	defer cancel()
	// The dev server's own Origin: metro_origin.go says who refuses others.
	// Oversized frames (a backlog replayed at once) are read through and
	// counted, not refused with 1009, which would make the proxy close the
	// page and the link attach again in a loop.
	return dialSocket(ctx, dialURL, http.Header{"Origin": []string{c.origin.Origin}}, &m.wg,
		socketOptions{limit: m.cfg.MaxPayloadSize, closeTimeout: linkCloseTimeout, writeTimeout: linkWriteTimeout})
}

// stop ends the connection for reason ("" when it ended by itself): a dial
// in flight is abandoned, a socket is closed with a bounded handshake.
// Only the first call has an effect; it does not block.
func (c *metroConn) stop(reason string) {
	c.end(reason, func(sock *wireSocket) { sock.closeWith(websocket.StatusNormalClosure, "") })
}

// end is stop with close as the way the socket ends.
func (c *metroConn) end(reason string, close func(*wireSocket)) {
	c.mu.Lock()
	first := !c.stopping
	if first {
		c.stopping, c.stopped = true, reason
	}
	sock := c.sock
	c.mu.Unlock()
	c.cancel()
	if first && sock != nil {
		close(sock)
	}
}

// stopReason is why the link ended the connection, "shutdown" when the
// link's own context ended first.
func (c *metroConn) stopReason() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.stopped == "" && c.linkDone.Err() != nil {
		return "shutdown"
	}
	return c.stopped
}

func (c *metroConn) isAttached() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.session != nil
}

// send writes a request for method, one of metroSentMethods.
func (c *metroConn) send(method string) error {
	c.mu.Lock()
	c.nextID++
	id := c.nextID
	frame, err := metroRequestFrame(id, method)
	if err != nil {
		c.mu.Unlock()
		return err
	}
	if len(c.sent) >= maxMetroSent {
		delete(c.sent, slices.Min(slices.Collect(maps.Keys(c.sent)))) // the oldest: its answer is not coming
	}
	c.sent[id] = method
	sock := c.sock
	c.mu.Unlock()
	return sock.writeFrame(c.ctx, frame)
}

func (c *metroConn) handle(data []byte) {
	m := c.link
	f, err := parseCDPFrame(data)
	if err != nil {
		m.count(func(d *metroCounters) { d.MalformedFrames++ })
		m.logger.Debug("ignoring a malformed frame of a Metro page", "page", c.page.ID, "err", err)
		return
	}
	if f.ID != 0 {
		c.mu.Lock()
		method, known := c.sent[f.ID]
		delete(c.sent, f.ID)
		c.mu.Unlock()
		if !known {
			m.count(func(d *metroCounters) { d.UnknownAnswers++ })
		} else if f.Error != nil && method != metroKeepaliveMethod {
			m.logger.Debug("a Metro page refused a request", "page", c.page.ID, "method", method, "error", string(f.Error))
		}
		return
	}
	now := time.Now()
	var ev metroEvent
	ok := true
	switch {
	case f.Method == "Runtime.consoleAPICalled":
		ev, err = metroConsoleEvent(f.Params, now)
	case f.Method == "Runtime.exceptionThrown":
		ev, err = metroExceptionEvent(f.Params, now)
	case strings.HasPrefix(f.Method, "Network."):
		shared := m.networkShared(c.page.ID, data) // before c.mu: it takes the link's lock
		c.mu.Lock()
		ev, ok, err = c.network.handle(f.Method, f.Params, now, shared)
		evicted := c.network.takeEvicted()
		c.mu.Unlock()
		if evicted > 0 { // counted as they go, for the health check
			m.count(func(d *metroCounters) { d.UnfinishedRequests += evicted })
		}
	default:
		return // the page's other events say nothing the link keeps
	}
	if err != nil {
		m.count(func(d *metroCounters) { d.MalformedFrames++ })
		m.logger.Debug("ignoring an unreadable event of a Metro page", "page", c.page.ID, "method", f.Method, "err", err)
		return
	}
	c.mu.Lock()
	s := c.session
	c.mu.Unlock()
	if ok && s != nil {
		s.appendEvent(c, ev.Stream, ev.Type, ev.Time, ev.Payload)
	}
}

// request answers what the session asks: events and streams from the
// session's buffers, anything else refused, since Metro carries none of an
// app's state (sessionFeed).
func (c *metroConn) request(_ context.Context, method string, params any) (json.RawMessage, error) {
	if p, ok := params.(snapshotParams); ok {
		return nil, &errMetroNoState{Stream: p.Stream, Method: method}
	}
	if _, ok := params.(eventsParams); ok || method == "streams.list" {
		return nil, errAnswerLocally
	}
	return nil, &errMetroNoState{Method: method}
}

// replaced ends the connection: a newer page of the same app took its
// session (sessionFeed).
func (c *metroConn) replaced() { c.stop("replaced") }
