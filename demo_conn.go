package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"sync"
	"time"

	"github.com/coder/websocket"
)

// demo_conn.go is the simulated app's side of the connection: dialing,
// the handshake, reading requests, writing responses and pushed events
// with backpressure, and reconnecting.

// connectLogged is connect with a logger and a callback run once the
// connection is live.
func (a *demoApp) connectLogged(ctx context.Context, wsURL string, logger *slog.Logger, onLive func()) (err error) {
	defer func() {
		if ctx.Err() != nil {
			err = nil // stopped, not failed
		}
	}()
	opts := &websocket.DialOptions{HTTPHeader: http.Header{}}
	if u, err := url.Parse(wsURL); err == nil {
		// React Native sends an Origin naming the host it dials; so do we,
		// so the server's origin check sees what a real app sends.
		scheme := "http"
		if u.Scheme == "wss" {
			scheme = "https"
		}
		opts.HTTPHeader.Set("Origin", scheme+"://"+u.Host)
	}
	conn, _, err := websocket.Dial(ctx, wsURL, opts)
	if err != nil {
		return fmt.Errorf("demo app: dial %s: %w", wsURL, err)
	}
	defer conn.CloseNow()
	conn.SetReadLimit(demoReadLimit)

	maxPayload, err := a.handshake(ctx, conn)
	if err != nil {
		return fmt.Errorf("demo app: %s: %w", wsURL, err)
	}
	link := &demoLink{
		conn:          conn,
		maxPayload:    maxPayload,
		sendOversized: a.opts.SendOversized,
		writeLock:     make(chan struct{}, 1),
		slots:         make(chan struct{}, demoMaxInFlight),
		pushes:        make(chan demoPush, demoPushQueue),
		done:          make(chan struct{}),
		inflight:      map[string]*demoInflight{},
		logger:        logger,
	}
	a.mu.Lock()
	a.link = link
	a.mu.Unlock()
	if onLive != nil {
		onLive()
	}
	return fmt.Errorf("demo app: connection to %s ended: %w", wsURL, a.serve(ctx, link))
}

func (a *demoApp) handshakeMessage() []byte {
	type stream struct {
		Name      string   `json:"name"`
		Active    bool     `json:"active"`
		Instances []string `json:"instances,omitempty"`
	}
	msg := struct {
		Type            string            `json:"type"`
		ProtocolVersion int               `json:"protocolVersion"`
		SessionID       string            `json:"sessionId"`
		AdapterVersion  string            `json:"adapterVersion"`
		StartedAt       string            `json:"startedAt"`
		App             map[string]string `json:"app"`
		Device          map[string]any    `json:"device"`
		Streams         []stream          `json:"streams"`
		Capabilities    []string          `json:"capabilities"`
		Token           string            `json:"token,omitempty"`
	}{
		Type:            "handshake",
		ProtocolVersion: demoProtocol,
		SessionID:       a.sessionID,
		AdapterVersion:  demoAdapterVersion,
		StartedAt:       a.startedAt,
		App:             map[string]string{"name": "ShopApp", "version": "2.4.0", "bundleId": "com.example.shop"},
		Device:          map[string]any{"platform": "ios", "osVersion": "18.1", "model": "iPhone 16", "isEmulator": true},
		Capabilities:    []string{demoCapStateDispatch, demoCapCommands}, // demo_actions.go
		Token:           a.opts.Token,
	}
	if !a.opts.WithoutPathRequests {
		msg.Capabilities = append(msg.Capabilities, demoCapSnapshotPath, demoCapSnapshotKeys)
	}
	a.mu.Lock()
	for _, s := range a.streams {
		msg.Streams = append(msg.Streams, stream{Name: s.name, Active: true, Instances: s.instances})
	}
	a.mu.Unlock()
	return demoMarshal(msg)
}

// handshake sends the handshake and waits for the answer, returning the
// announced maxPayload (0 when absent: no limit).
func (a *demoApp) handshake(ctx context.Context, conn *websocket.Conn) (int, error) {
	ctx, cancel := context.WithTimeout(ctx, demoHandshakeTimeout)
	defer cancel()
	if err := conn.Write(ctx, websocket.MessageText, a.handshakeMessage()); err != nil {
		return 0, fmt.Errorf("sending handshake: %w", err)
	}
	for {
		typ, data, err := conn.Read(ctx)
		if err != nil {
			return 0, fmt.Errorf("waiting for handshake_ack: %w", err)
		}
		if typ != websocket.MessageText {
			continue
		}
		fields, err := demoObject(data)
		if err != nil {
			continue
		}
		switch t, _ := wireString(fields["type"]); t {
		case "handshake_ack":
			var maxPayload int
			if json.Unmarshal(fields["maxPayload"], &maxPayload) != nil || maxPayload < 0 {
				maxPayload = 0
			}
			return maxPayload, nil
		case "handshake_error":
			code, _ := wireString(fields["code"])
			message, _ := wireString(fields["message"])
			return 0, &demoHandshakeError{Code: code, Message: message}
		}
	}
}

// demoLink is one live connection.
type demoLink struct {
	conn          *websocket.Conn
	maxPayload    int // 0: no limit
	sendOversized bool
	logger        *slog.Logger

	// writeLock admits one writer at a time; waiting for it gives up when
	// the writer's context ends. Its holder owns buf.
	writeLock chan struct{}
	buf       []byte

	slots  chan struct{} // one per request in flight
	pushes chan demoPush
	done   chan struct{} // closed when the connection stopped reading

	mu       sync.Mutex // guards closing, inflight and handlers.Add
	closing  bool       // no new requests are started
	inflight map[string]*demoInflight
	handlers sync.WaitGroup
}

type demoInflight struct{ cancel context.CancelFunc }

// demoPush is a queued push: an event, or (flushed set) a marker closed
// when every push before it has been written.
type demoPush struct {
	event   *demoEvent
	flushed chan struct{}
}

// serve reads messages until the connection ends or ctx is done. Shutdown:
// stop intake, let the requests in flight answer, close with 1000.
func (a *demoApp) serve(ctx context.Context, l *demoLink) error {
	// The reader's context is not ctx: a cancelled read context makes the
	// websocket library drop the connection without a close handshake.
	serveCtx, stop := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { l.pushLoop(serveCtx) })
	wg.Go(func() {
		select {
		case <-ctx.Done():
			l.stopIntake()
			l.handlers.Wait()
			l.conn.Close(websocket.StatusNormalClosure, "app stopped")
		case <-serveCtx.Done():
		}
	})

	err := a.readLoop(serveCtx, l)
	close(l.done)
	a.mu.Lock()
	if a.link == l {
		a.link = nil
	}
	a.mu.Unlock()
	l.stopIntake()
	stop() // cancels the requests in flight: there is no one left to answer
	l.handlers.Wait()
	wg.Wait()
	return err
}

func (a *demoApp) readLoop(ctx context.Context, l *demoLink) error {
	for {
		typ, data, err := l.conn.Read(ctx)
		if err != nil {
			return err
		}
		if typ != websocket.MessageText {
			continue
		}
		fields, err := demoObject(data)
		if err != nil {
			l.logger.Debug("ignoring malformed message", "err", err)
			continue
		}
		switch t, _ := wireString(fields["type"]); t {
		case "request":
			id, ok := wireString(fields["id"])
			if !ok {
				l.logger.Debug("ignoring request without a string id")
				continue
			}
			method, _ := wireString(fields["method"])
			params := fields["params"]
			select {
			case l.slots <- struct{}{}:
			case <-ctx.Done():
				return ctx.Err()
			}
			l.start(ctx, id, func(reqCtx context.Context) { a.serveRequest(reqCtx, l, id, method, params) })
		case "cancel":
			if id, ok := wireString(fields["id"]); ok {
				l.cancel(id)
			}
		}
		// pong, and types this adapter does not know, are ignored (spec §1).
	}
}

// start runs serve in its own goroutine with a context that a cancel
// message for id ends, unless intake has stopped. The caller holds a slot.
func (l *demoLink) start(ctx context.Context, id string, serve func(context.Context)) {
	l.mu.Lock()
	if l.closing {
		l.mu.Unlock()
		<-l.slots
		return
	}
	reqCtx, cancel := context.WithCancel(ctx)
	entry := &demoInflight{cancel: cancel}
	l.inflight[id] = entry
	l.handlers.Go(func() {
		defer func() { <-l.slots }()
		defer cancel()
		serve(reqCtx)
		l.mu.Lock()
		if l.inflight[id] == entry {
			delete(l.inflight, id)
		}
		l.mu.Unlock()
	})
	l.mu.Unlock()
}

// cancel drops the request id: the server gave up on it (spec §4).
func (l *demoLink) cancel(id string) {
	l.mu.Lock()
	entry := l.inflight[id]
	delete(l.inflight, id)
	l.mu.Unlock()
	if entry != nil {
		entry.cancel()
	}
}

func (l *demoLink) stopIntake() {
	l.mu.Lock()
	l.closing = true
	l.mu.Unlock()
}

func (a *demoApp) serveRequest(ctx context.Context, l *demoLink, id, method string, params json.RawMessage) {
	result, werr := a.handle(method, params)
	if ctx.Err() != nil {
		return // cancelled: the server no longer waits for the answer
	}
	quotedID := demoAppendString(nil, id)
	err := l.write(ctx, func(dst []byte) []byte {
		frame := demoAppendResponse(dst, quotedID, result, werr)
		if size := len(frame); werr == nil && l.maxPayload > 0 && !l.sendOversized && size > l.maxPayload {
			return demoAppendResponse(frame[:0], quotedID, nil, &wireError{
				Code:    demoCodePayloadTooLarge,
				Message: fmt.Sprintf("%s: the response is %d bytes, over the server's maxPayload of %d", method, size, l.maxPayload),
				Details: map[string]int{"bytes": size, "maxPayload": l.maxPayload},
			})
		}
		return frame
	})
	if err != nil && ctx.Err() == nil {
		l.logger.Debug("writing response failed", "id", id, "method", method, "err", err)
	}
}

// demoEncoded is a result that encodes itself by appending, so pre-encoded
// states are copied once into the frame rather than re-marshalled.
type demoEncoded interface {
	appendJSON(dst []byte) []byte
}

func demoAppendResponse(dst, quotedID []byte, result any, werr *wireError) []byte {
	dst = append(dst, `{"type":"response","id":`...)
	dst = append(dst, quotedID...)
	switch enc, ok := result.(demoEncoded); {
	case werr != nil:
		dst = append(dst, `,"error":`...)
		dst = append(dst, demoMarshal(werr)...)
	case ok:
		dst = append(dst, `,"result":`...)
		dst = enc.appendJSON(dst)
	default:
		dst = append(dst, `,"result":`...)
		dst = append(dst, demoMarshal(result)...)
	}
	return append(dst, '}')
}

const demoPushHead = `{"type":"event","event":`

func (l *demoLink) fits(ev *demoEvent) bool {
	return l.maxPayload == 0 || l.sendOversized || len(demoPushHead)+ev.encodedSize()+1 <= l.maxPayload
}

// offer queues a push without waiting; it drops the push when the queue is
// full or the frame would exceed maxPayload.
func (l *demoLink) offer(ev *demoEvent) {
	if !l.fits(ev) {
		return
	}
	select {
	case l.pushes <- demoPush{event: ev}:
	default:
		l.logger.Debug("push queue full; dropping push", "seq", ev.seq)
	}
}

func (l *demoLink) pushLoop(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case p := <-l.pushes:
			if p.flushed != nil {
				close(p.flushed)
				continue
			}
			err := l.write(ctx, func(dst []byte) []byte {
				return append(p.event.appendJSON(append(dst, demoPushHead...)), '}')
			})
			if err != nil {
				l.logger.Debug("push failed", "err", err)
				return
			}
		}
	}
}

// write sends the frame build appends to its argument, as one text frame,
// holding the writer lock. ctx bounds the wait for the lock only: once a
// frame is started it is finished (or the write times out), since an
// abandoned frame would break the connection.
func (l *demoLink) write(ctx context.Context, build func(dst []byte) []byte) error {
	select {
	case l.writeLock <- struct{}{}:
	case <-ctx.Done():
		return ctx.Err()
	}
	defer func() { <-l.writeLock }()
	l.buf = build(l.buf[:0])
	wctx, cancel := context.WithTimeout(context.Background(), demoWriteTimeout)
	defer cancel()
	err := l.conn.Write(wctx, websocket.MessageText, l.buf)
	if cap(l.buf) > demoKeepBuffer {
		l.buf = nil
	}
	return err
}

// run is the -demo loop: it steps every interval (never when interval <= 0)
// and keeps connecting to wsURL, backing off briefly between attempts, until
// ctx is done. It returns after its goroutines have exited.
func (a *demoApp) run(ctx context.Context, wsURL string, interval time.Duration, logger *slog.Logger) {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	var wg sync.WaitGroup
	defer wg.Wait()
	if interval > 0 {
		wg.Go(func() { every(ctx, interval, func() bool { a.step(); return true }) })
	}

	retry := newBackoff(demoMinBackoff, demoMaxBackoff)
	for ctx.Err() == nil {
		live := false
		err := a.connectLogged(ctx, wsURL, logger, func() {
			live = true
			logger.Info("demo app connected", "url", wsURL, "sessionId", a.sessionID)
		})
		if ctx.Err() != nil {
			return
		}
		if live {
			retry.reset()
		}
		delay := retry.next()
		var refused *demoHandshakeError
		switch {
		case errors.As(err, &refused):
			logger.Warn("demo app: handshake refused; retrying", "code", refused.Code, "message", refused.Message, "in", delay)
		case live:
			logger.Info("demo app disconnected; reconnecting", "err", err)
		default:
			logger.Debug("demo app could not connect; retrying", "err", err, "in", delay)
		}
		if !sleepCtx(ctx, delay) {
			return
		}
	}
}
