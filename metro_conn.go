package main

// metro_conn.go is the Metro link's connection to one React Native page:
// dialled through Metro's inspector proxy with the dev server's own Origin, it
// enables what metro_cdp.go allows, turns the page's events into its
// session's console and network events, and keeps the proxy from dropping
// it as idle. It is its session's feed: events and streams are answered
// from the session's buffers, and anything about state is refused at once
// (errMetroNoState): Metro carries no state.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
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

// metroConn is one attached page. Its methods are safe for concurrent use.
type metroConn struct {
	link      *metroLink
	page      metroPageInfo
	sessionID string
	ws        *websocket.Conn

	writeMu sync.Mutex
	nextID  int64

	mu      sync.Mutex
	sent    map[int64]string // request id → method, until answered
	session metroSession
	network metroNetwork // the reader's
	stopped string       // why the link ended the connection; "" while it runs

	attached atomic.Bool // the session is attached: the health check says so
	stopOnce sync.Once
	done     chan struct{} // closed by stop
}

// metroConnEnd is how a connection ended: the close frame's reason when the
// proxy sent one, and how long it was attached.
type metroConnEnd struct {
	err         error
	closeReason string
	attached    bool
	lived       time.Duration
	stopped     string // set when the link ended it
}

// serve dials the page, attaches the session, and reads until the
// connection ends or ctx does.
func (c *metroConn) serve(ctx context.Context) metroConnEnd {
	m := c.link
	dialURL, err := metroDialURL(c.page.DebuggerURL, m.cfg.MetroURL)
	if err != nil {
		return metroConnEnd{err: err}
	}
	dialCtx, cancel := context.WithTimeout(ctx, m.dialTimeout)
	// React Native 0.85 and later, and Expo, refuse a debugger without the
	// dev server's own origin (metro_origin.go).
	ws, _, err := websocket.Dial(dialCtx, dialURL, &websocket.DialOptions{
		HTTPHeader: http.Header{"Origin": []string{m.debuggerOrigin(c.page).Origin}}, HTTPClient: m.client})
	cancel()
	if err != nil {
		return metroConnEnd{err: err}
	}
	// Oversized frames (a backlog replayed at once) are read through and
	// counted by readBounded, not refused with 1009, which would make the
	// proxy close the page and the link attach again in a loop.
	ws.SetReadLimit(-1)
	c.ws = ws
	start := time.Now()
	stopOnCancel := context.AfterFunc(ctx, func() { c.stop("shutdown") })
	defer stopOnCancel()

	session, displaced := m.sink.connectMetro(c.sessionID, m.sessionInfo(c.page, start), c)
	c.mu.Lock()
	c.session = session
	c.mu.Unlock()
	c.attached.Store(true)
	for _, old := range displaced {
		old.replaced()
	}
	m.logger.Info("attached to a React Native page through Metro", "session", c.sessionID, "page", c.page.ID,
		"app", c.page.AppID, "device", c.page.DeviceName)

	keepalive := make(chan struct{})
	go func() {
		defer close(keepalive)
		c.keepAlive(ctx)
	}()
	for _, method := range []string{"Runtime.enable", "Network.enable", "ReactNativeApplication.enable"} {
		if err := c.send(ctx, method); err != nil {
			break // the read below sees the connection end
		}
	}
	var readErr error
	var buf bytes.Buffer // reused: handle keeps nothing of a frame
	for {
		if buf.Cap() > 256<<10 {
			buf = bytes.Buffer{} // do not keep a rare large frame's buffer
		}
		data, size, err := readBoundedInto(ws, m.cfg.MaxPayloadSize, &buf)
		if err != nil {
			readErr = err
			break
		}
		if data == nil {
			m.count(func(d *metroCounters) { d.OversizedFrames++ })
			m.logger.Debug("dropped an oversized frame of a Metro page", "page", c.page.ID, "size", size, "limit", m.cfg.MaxPayloadSize)
			continue
		}
		c.handle(data)
	}
	c.stop("")
	c.attached.Store(false)
	<-keepalive
	end := metroConnEnd{err: readErr, attached: true, lived: time.Since(start)}
	var ce websocket.CloseError
	if errors.As(readErr, &ce) {
		end.closeReason = ce.Reason
	}
	c.mu.Lock()
	end.stopped = c.stopped
	evicted := c.network.evicted
	c.mu.Unlock()
	m.count(func(d *metroCounters) { d.UnfinishedRequests += evicted })
	reason := "disconnected"
	if end.stopped != "" {
		reason = end.stopped
	}
	if session.leave(c, reason) {
		m.logger.Info("a React Native page left Metro's link", "session", c.sessionID, "page", c.page.ID, "reason", reason, "closeReason", end.closeReason)
	}
	return end
}

// stop ends the connection for reason ("" when it ended by itself); only
// the first call has an effect. It does not block.
func (c *metroConn) stop(reason string) {
	c.stopOnce.Do(func() {
		c.mu.Lock()
		c.stopped = reason
		c.mu.Unlock()
		close(c.done)
		if c.ws != nil {
			c.ws.CloseNow()
		}
	})
}

// keepAlive sends metroKeepaliveMethod every keepalive interval until the
// connection or ctx ends.
func (c *metroConn) keepAlive(ctx context.Context) {
	ticker := time.NewTicker(c.link.keepalive)
	defer ticker.Stop()
	for {
		select {
		case <-c.done:
			return
		case <-ctx.Done():
			return
		case <-ticker.C:
			if c.send(ctx, metroKeepaliveMethod) != nil {
				return
			}
		}
	}
}

// send writes a request for method, one of metroSentMethods.
func (c *metroConn) send(ctx context.Context, method string) error {
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	c.nextID++
	frame, err := metroRequestFrame(c.nextID, method)
	if err != nil {
		return err
	}
	c.mu.Lock()
	if len(c.sent) >= maxMetroSent {
		delete(c.sent, slices.Min(mapKeys(c.sent))) // the oldest: its answer is not coming
	}
	if c.sent == nil {
		c.sent = make(map[int64]string)
	}
	c.sent[c.nextID] = method
	c.mu.Unlock()
	ctx, cancel := context.WithTimeout(ctx, linkWriteTimeout)
	defer cancel()
	return c.ws.Write(ctx, websocket.MessageText, frame)
}

func mapKeys(m map[int64]string) []int64 {
	keys := make([]int64, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	return keys
}

// handle reads one frame of the page.
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
	if ok {
		c.mu.Lock()
		s := c.session
		c.mu.Unlock()
		s.appendEvent(c, ev.Stream, ev.Type, ev.Time, ev.Payload)
	}
}

// request answers what the session asks: events and streams from the
// session's buffers, anything else refused, since Metro carries none of an
// app's state (sessionFeed).
func (c *metroConn) request(_ context.Context, method string, params any) (json.RawMessage, error) {
	switch p := params.(type) {
	case eventsParams:
		return nil, errAnswerLocally
	case snapshotParams:
		return nil, &errMetroNoState{Stream: p.Stream, Method: method}
	}
	if method == "streams.list" {
		return nil, errAnswerLocally
	}
	return nil, &errMetroNoState{Method: method}
}

// replaced ends the connection: a newer page of the same app took its
// session (sessionFeed).
func (c *metroConn) replaced() { c.stop("replaced") }
