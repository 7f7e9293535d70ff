package main

// conn.go is the server side of Wire Protocol v1: the WebSocket listener that
// app debug adapters dial, the handshake, the one live adapter connection,
// requests to it and the messages it pushes. tools.go and mcp.go see it only
// through adapterLink: run, addr, request, status and the notify callback.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coder/websocket"
)

// wireProtocolVersion is the only wire protocol version this server speaks.
const wireProtocolVersion = 1

// Defaults of the adapterLink tunables (wire protocol §2, §6; spec §6).
const (
	linkHandshakeTimeout = 10 * time.Second
	linkPingInterval     = 15 * time.Second
	linkPongTimeout      = 10 * time.Second
	linkBindRetry        = 2 * time.Second
	// Disconnected sessions expire unasked: the link looks this often.
	linkPruneInterval = time.Minute
	// A close handshake gets this long before the socket is dropped, so
	// shutdown stays well inside the one second spec §6 allows even when an
	// adapter never answers the close frame.
	linkCloseTimeout = 500 * time.Millisecond
	// A single frame write (request, cancel, pong, handshake reply) that
	// takes longer means the adapter stopped reading; the connection is
	// dropped.
	linkWriteTimeout = 10 * time.Second
	linkMaxPending   = 1024
)

// Close codes of wire protocol §8.
const (
	wireCloseReplaced            websocket.StatusCode = 4000
	wireCloseInvalidHandshake    websocket.StatusCode = 4001
	wireCloseUnsupportedProtocol websocket.StatusCode = 4002
	wireCloseUnauthorized        websocket.StatusCode = 4003
	wireCloseHandshakeTimeout    websocket.StatusCode = 4004
)

// Reasons in NOT_CONNECTED details and linkStatus.Reason (spec §2).
const (
	linkReasonNeverConnected = "never_connected"
	linkReasonDisconnected   = "disconnected"
	linkReasonReplaced       = "replaced"
	linkReasonNotListening   = "not_listening"
)

const (
	// wirePrefixLen is how much of an oversized frame is kept to find the
	// "type" and "id" of a response (wire protocol §7).
	wirePrefixLen = 256
	// wireReadBufferMin is the first size of a connection's read buffer; it
	// doubles up to MAX_PAYLOAD_SIZE as larger messages arrive.
	wireReadBufferMin = 16 << 10
	// wireHandoffMin: a response result at least this large is handed to the
	// waiting request together with the read buffer it was read into, instead
	// of being copied out of it; the connection then starts a new buffer.
	// Smaller results are copied, which is cheaper than regrowing a buffer.
	wireHandoffMin = 32 << 10
	// maxQueuedLinkEvents bounds every event waiting for notify.
	maxQueuedLinkEvents = 4096
	// maxQueuedPushEvents bounds the linkEventPushed notifications waiting
	// for notify; further ones are dropped (connection and stream-list
	// events never are).
	maxQueuedPushEvents = 1024
)

// linkEventKind says what a linkEvent reports.
type linkEventKind int

const (
	linkConnected      linkEventKind = iota + 1 // an adapter completed its handshake
	linkDisconnected                            // the live adapter went away
	linkStreamsChanged                          // the live adapter pushed a new stream list
	linkEventPushed                             // the live adapter pushed an event
	linkSessionExpired                          // a disconnected session was forgotten
	linkNotice                                  // something an agent should hear of: Level, Notice, Detail
)

func (k linkEventKind) String() string {
	switch k {
	case linkConnected:
		return "connected"
	case linkDisconnected:
		return "disconnected"
	case linkStreamsChanged:
		return "streams_changed"
	case linkEventPushed:
		return "event_pushed"
	case linkSessionExpired:
		return "session_expired"
	case linkNotice:
		return "notice"
	}
	return "linkEventKind(" + strconv.Itoa(int(k)) + ")"
}

// linkEvent is what adapterLink reports to its notify callback. A
// replacement is reported as linkDisconnected (Reason "replaced") for the old
// session, then linkConnected (Replaced set) for the new one; events of a
// session that is no longer live are not reported.
type linkEvent struct {
	Kind      linkEventKind
	SessionID string
	Replaced  string // linkConnected: session id of the adapter it replaced, if any
	Reason    string // linkDisconnected: "disconnected", "replaced", "shutdown", "ping timeout"
	Stream    string // linkEventPushed
	Level     string // linkNotice: an MCP log level
	Notice    string // linkNotice: what happened, e.g. "request timed out"
	Detail    string // linkNotice: the particulars
}

// linkStatus is a snapshot of the link, returned by adapterLink.status.
type linkStatus struct {
	WSURL       string // "ws://127.0.0.1:19850/" (actual port once bound)
	Listening   bool
	ListenError string // why the bind fails, "" when listening
	Connected   bool
	Reason      string       // when !Connected: "never_connected", "disconnected" or "not_listening"
	Adapter     *adapterInfo // nil when !Connected; a copy, safe to keep
}

// adapterInfo describes a session's app: its handshake (or Reactotron
// intro), and stream figures kept up to date by its pushes.
type adapterInfo struct {
	SessionID, AdapterVersion string
	DeviceID                  string          // "" when the handshake had none
	Capabilities              []string        // optional requests the app offers
	StartedAt, ConnectedAt    time.Time       // StartedAt zero when the handshake had none
	App, Device               json.RawMessage // nil when absent
	Streams                   []streamState   // handshake order, updated by `streams` pushes
}

// streamState is one advertised stream and what its pushes told us.
type streamState struct {
	Name        string
	Active      bool
	Instances   []string
	EventCount  int64     // pushed events seen on this connection
	LatestSeq   int64     // highest pushed seq
	LastEventAt time.Time // zero when none; the event's timestamp, else when it arrived
}

func (a *adapterInfo) clone() *adapterInfo {
	if a == nil {
		return nil
	}
	c := *a
	c.Capabilities = slices.Clone(a.Capabilities)
	c.App = bytes.Clone(a.App)
	c.Device = bytes.Clone(a.Device)
	c.Streams = make([]streamState, len(a.Streams))
	for i, s := range a.Streams {
		s.Instances = append([]string(nil), s.Instances...)
		c.Streams[i] = s
	}
	return &c
}

// adapterLink is the server side of Wire Protocol v1. It listens for app
// adapters and attaches each that handshakes to a session of the registry
// (a newer valid handshake of the same device replaces the older
// connection); the session forwards requests to it.
//
// run must be called once; addr, request and status may be called from any
// goroutine at any time, before, during and after run. The duration fields
// and maxPending may be changed only before run starts; tests shorten them.
type adapterLink struct {
	cfg    config
	logger *slog.Logger
	notify func(linkEvent)

	handshakeTimeout time.Duration // upgrade to handshake (4004 after it)
	pingInterval     time.Duration // between WebSocket pings of a live adapter
	pongTimeout      time.Duration // a ping without pong for this long drops the adapter
	bindRetry        time.Duration // between attempts to bind WS_HOST:WS_PORT
	pruneInterval    time.Duration // between looks for expired sessions
	closeTimeout     time.Duration // close handshake, then the socket is dropped
	writeTimeout     time.Duration // one frame write
	maxPending       int           // requests pending on one connection
	mcp              http.Handler  // serves /mcp on this port (relay.go); nil: none. Set before run.

	allowedHosts   map[string]bool // WS_ALLOWED_HOSTS
	allowedOrigins map[string]bool // WS_ALLOWED_ORIGINS, normalised by normalizeWireOrigin
	nextID         atomic.Uint64   // request ids, unique for the link's lifetime
	bound          chan struct{}   // closed once the first bind succeeded
	bindTried      chan struct{}   // closed once the first bind was attempted
	events         linkEventQueue
	sessions       *sessionRegistry

	mu        sync.Mutex
	started   bool
	stopping  bool // run is shutting down: no new connections
	listening bool
	boundAddr string // listener address once bound
	listenErr string
	conns     map[*adapterConn]struct{} // every upgraded connection
	// wg counts every goroutine the link starts (connection handlers,
	// keepalives, closers, cancel senders); run waits for it. Add is called
	// either under mu while !stopping, or by a goroutine wg already counts.
	wg sync.WaitGroup
}

// newAdapterLink returns a link configured by cfg that logs to logger (nil
// discards) and reports connection changes and pushes to notify (nil for
// none). Call run to start listening. A zero RequestTimeout or
// MaxPayloadSize takes the spec's default.
//
// notify is called from one goroutine of the link, one event at a time, in
// the order the changes happened, and never while the link holds a lock. It
// must not block: the link queues events for it (dropping linkEventPushed
// beyond maxQueuedPushEvents). It may call status, but must not wait for
// request.
func newAdapterLink(cfg config, logger *slog.Logger, notify func(linkEvent)) *adapterLink {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	if cfg.RequestTimeout <= 0 {
		cfg.RequestTimeout = 5 * time.Second
	}
	if cfg.MaxPayloadSize <= 0 {
		cfg.MaxPayloadSize = 524288
	}
	l := &adapterLink{
		cfg:              cfg,
		logger:           logger,
		notify:           notify,
		handshakeTimeout: linkHandshakeTimeout,
		pingInterval:     linkPingInterval,
		pongTimeout:      linkPongTimeout,
		bindRetry:        linkBindRetry,
		pruneInterval:    linkPruneInterval,
		closeTimeout:     linkCloseTimeout,
		writeTimeout:     linkWriteTimeout,
		maxPending:       linkMaxPending,
		allowedHosts:     make(map[string]bool),
		allowedOrigins:   make(map[string]bool),
		bound:            make(chan struct{}),
		bindTried:        make(chan struct{}),
		conns:            make(map[*adapterConn]struct{}),
	}
	l.events.wake = make(chan struct{}, 1)
	l.sessions = newSessionRegistry(cfg, logger, &l.events)
	for _, h := range cfg.WSAllowedHosts {
		l.allowedHosts[strings.ToLower(h)] = true
	}
	for _, o := range cfg.WSAllowedOrigins {
		if n, ok := normalizeWireOrigin(o); ok {
			l.allowedOrigins[n] = true
		}
	}
	return l
}

// rawConnKey carries the accepted net.Conn in the request context, so that a
// close handshake can be bounded with a socket deadline and a dead adapter
// dropped at once.
type rawConnKey struct{}

// run binds WS_HOST:WS_PORT, retrying every bindRetry while the bind fails
// (e.g. another instance holds the port), and serves adapter upgrades until
// ctx is done. Then it stops intake, closes adapter connections with 1001
// (each close handshake bounded by closeTimeout), closes the listener, and
// returns nil only after every goroutine it started has exited and every
// event has been passed to notify.
func (l *adapterLink) run(ctx context.Context) error {
	l.mu.Lock()
	if l.started {
		l.mu.Unlock()
		return errors.New("adapterLink.run called twice")
	}
	l.started = true
	l.mu.Unlock()

	if !isLoopbackHost(l.cfg.WSHost) && l.cfg.WSToken == "" {
		l.logger.Warn("WS_HOST is not a loopback address and WS_TOKEN is empty: any device that can reach this port can read the app's state",
			"host", l.cfg.WSHost)
	}

	dispatched := make(chan struct{})
	go func() {
		defer close(dispatched)
		l.events.run(l.notify)
	}()

	srv := &http.Server{
		Handler:           http.HandlerFunc(l.serveUpgrade),
		ReadHeaderTimeout: 10 * time.Second,
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          slog.NewLogLogger(l.logger.Handler(), slog.LevelDebug),
		ConnContext: func(ctx context.Context, c net.Conn) context.Context {
			return context.WithValue(ctx, rawConnKey{}, c)
		},
	}
	hostPort := net.JoinHostPort(l.cfg.WSHost, strconv.Itoa(l.cfg.WSPort))
	defer l.markBindTried()
	// Forgotten post-mortem sessions are noticed (and clients told) even
	// when nobody asks for the session list.
	pruned := make(chan struct{})
	go func() {
		defer close(pruned)
		tick := time.NewTicker(l.pruneInterval)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
				l.sessions.prune()
			}
		}
	}()
	defer func() { <-pruned }()
	stopServing := bindAndServe(ctx, hostPort, l.bindRetry, srv, func(addr string, err error) {
		if err != nil {
			l.setListenError(hostPort, err)
		} else {
			l.setListening(addr)
		}
		l.markBindTried()
	})

	// Stop intake, detach the live adapters, then close every connection.
	// Pending requests fail as NOT_CONNECTED "disconnected" (the reasons a
	// tool result may carry); the events say "shutdown".
	l.mu.Lock()
	l.stopping = true
	conns := make([]*adapterConn, 0, len(l.conns))
	for c := range l.conns {
		conns = append(conns, c)
	}
	l.mu.Unlock()
	for _, c := range conns {
		if s := c.attached(); s != nil && l.sessions.detach(s, c, "shutdown") {
			pending := c.leave(linkReasonDisconnected)
			l.logger.Info("adapter disconnected", "session", c.sessionID, "reason", "shutdown", "failedRequests", len(pending))
			failAdapterPending(pending, linkReasonDisconnected)
		}
		c.closeWith(websocket.StatusGoingAway, "server shutting down")
	}
	stopServing() // the listener and any connection not yet upgraded
	l.wg.Wait()
	l.mu.Lock()
	l.listening = false
	l.listenErr = ""
	l.mu.Unlock()
	l.events.close()
	<-dispatched
	return nil
}

// bindAndServe binds hostPort and serves srv on it until ctx ends, binding
// again every retry while the bind fails (another process may hold the
// port) or the listener breaks. onBind hears of every attempt: the bound
// address, or why it failed. The returned stop closes srv (its listener and
// every connection it has not handed over) and waits until it has stopped.
func bindAndServe(ctx context.Context, hostPort string, retry time.Duration, srv *http.Server, onBind func(addr string, err error)) (stop func()) {
	serveDone := make(chan error, 1)
	serving := false
	for ctx.Err() == nil {
		if !serving {
			ln, err := net.Listen("tcp", hostPort)
			if err != nil {
				onBind("", err)
				select {
				case <-ctx.Done():
				case <-time.After(retry):
				}
				continue
			}
			onBind(ln.Addr().String(), nil)
			serving = true
			go func() { serveDone <- srv.Serve(ln) }()
		}
		select {
		case <-ctx.Done():
		case err := <-serveDone:
			// The listener broke (it does not on its own in practice).
			// Existing connections carry on; bind again.
			serving = false
			onBind("", err)
		}
	}
	return func() {
		srv.Close()
		if serving {
			<-serveDone
		}
	}
}

func (l *adapterLink) setListening(addr string) {
	l.mu.Lock()
	wasFailing := l.listenErr != ""
	l.listening, l.boundAddr, l.listenErr = true, addr, ""
	l.mu.Unlock()
	select {
	case <-l.bound:
	default:
		close(l.bound)
	}
	l.logger.Info("listening for app adapters", "url", l.status().WSURL, "afterRetry", wasFailing)
}

func (l *adapterLink) setListenError(hostPort string, err error) {
	msg := err.Error()
	l.mu.Lock()
	repeated := l.listenErr == msg
	l.listening, l.listenErr = false, msg
	l.mu.Unlock()
	if repeated {
		l.logger.Debug("still cannot listen for app adapters", "addr", hostPort, "err", msg)
		return
	}
	l.logger.Warn("cannot listen for app adapters; retrying", "addr", hostPort, "err", msg, "every", l.bindRetry)
}

func (l *adapterLink) markBindTried() {
	select {
	case <-l.bindTried:
	default:
		close(l.bindTried)
	}
}

// bindAttempted is closed once run has tried to bind the first time,
// whether or not it succeeded, so that status reflects the listener.
func (l *adapterLink) bindAttempted() <-chan struct{} { return l.bindTried }

// addr waits until the link is listening, or ctx is done, and returns the
// listener's host:port.
func (l *adapterLink) addr(ctx context.Context) (string, error) {
	select {
	case <-l.bound:
	case <-ctx.Done():
		return "", ctx.Err()
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.boundAddr, nil
}

// status reports the listener and the most recently connected live
// adapter. It never blocks on I/O.
func (l *adapterLink) status() linkStatus {
	live := l.sessions.currentLive(sessionViaWire)
	l.mu.Lock()
	defer l.mu.Unlock()
	s := linkStatus{WSURL: l.wsURLLocked(), Listening: l.listening, ListenError: l.listenErr}
	if live != nil {
		s.Connected = true
		s.Adapter = live.view().Info
	} else {
		s.Reason = l.reasonLocked()
	}
	return s
}

func (l *adapterLink) wsURLLocked() string {
	port := strconv.Itoa(l.cfg.WSPort)
	if l.boundAddr != "" {
		if _, p, err := net.SplitHostPort(l.boundAddr); err == nil {
			port = p
		}
	}
	return "ws://" + net.JoinHostPort(l.cfg.WSHost, port) + "/"
}

func (l *adapterLink) reasonLocked() string {
	switch {
	case !l.listening:
		return linkReasonNotListening
	case l.sessions.hasConnected():
		return linkReasonDisconnected
	}
	return linkReasonNeverConnected
}

// linkNotConnectedDetails are the details of a NOT_CONNECTED error (spec §2).
type linkNotConnectedDetails struct {
	Reason      string `json:"reason"`
	ListenError string `json:"listenError,omitempty"`
}

func linkNotConnectedError(reason, wsURL, listenErr string) *toolError {
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
	switch port := wsPort(wsURL); {
	case reason == linkReasonNotListening:
		e.Suggestion = "Another process (likely another devtools-mcp) holds " + wsURL + ": stop it, or give this server another WS_PORT and point the app's adapter at it; the bind is retried every 2 s."
	case port != "" && port != "19850":
		e.Suggestion = "Start the app's dev build with the debug adapter enabled and pointed at port " + port +
			" (on Android also run `adb reverse tcp:" + port + " tcp:" + port + "`), then call debug_health_check."
	}
	return e
}

// wsPort returns the port of a ws:// URL, or "".
func wsPort(wsURL string) string {
	u, err := url.Parse(wsURL)
	if err != nil {
		return ""
	}
	return u.Port()
}

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

// request sends method with params to the most recently connected live
// adapter; see adapterConn.request.
func (l *adapterLink) request(ctx context.Context, method string, params any) (json.RawMessage, error) {
	s := l.sessions.currentLive(sessionViaWire)
	if s == nil {
		l.mu.Lock()
		defer l.mu.Unlock()
		return nil, linkNotConnectedError(l.reasonLocked(), l.wsURLLocked(), l.listenErr)
	}
	return s.request(ctx, method, params)
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

// serveUpgrade is the HTTP handler: it vets the upgrade request, accepts the
// WebSocket and serves the connection until it ends. Any path is accepted:
// adapters dial "/", and nothing else is served here.
func (l *adapterLink) serveUpgrade(w http.ResponseWriter, r *http.Request) {
	if l.mcp != nil && r.URL.Path == mcpPath {
		l.mcp.ServeHTTP(w, r)
		return
	}
	if reason := l.checkUpgrade(r); reason != "" {
		l.logger.Warn("refused adapter upgrade", "remote", r.RemoteAddr, "host", r.Host,
			"origin", r.Header.Get("Origin"), "reason", reason)
		http.Error(w, "devtools-mcp: "+reason, http.StatusForbidden)
		return
	}
	l.mu.Lock()
	if l.stopping {
		l.mu.Unlock()
		http.Error(w, "devtools-mcp is shutting down", http.StatusServiceUnavailable)
		return
	}
	l.wg.Add(1)
	l.mu.Unlock()
	defer l.wg.Done()

	// Host and Origin were checked above, by the rules of wire protocol §7,
	// which differ from coder/websocket's own origin check.
	ws, err := websocket.Accept(w, r, &websocket.AcceptOptions{InsecureSkipVerify: true})
	if err != nil {
		l.logger.Debug("adapter upgrade failed", "remote", r.RemoteAddr, "err", err)
		return
	}
	// Frames over MAX_PAYLOAD_SIZE are streamed and discarded by readMessage
	// instead of closing the connection with 1009 as the stock limit does.
	ws.SetReadLimit(-1)
	raw, _ := r.Context().Value(rawConnKey{}).(net.Conn)
	c := &adapterConn{
		link:       l,
		ws:         ws,
		raw:        raw,
		remote:     r.RemoteAddr,
		writeSem:   make(chan struct{}, 1),
		handshaken: make(chan struct{}),
		readEnded:  make(chan struct{}),
		done:       make(chan struct{}),
		pending:    make(map[string]*adapterPending),
	}
	l.mu.Lock()
	l.conns[c] = struct{}{}
	stopping := l.stopping
	l.mu.Unlock()
	l.logger.Debug("adapter connection opened", "remote", c.remote)
	if stopping {
		c.closeWith(websocket.StatusGoingAway, "server shutting down")
	}
	c.serve()
}

// install attaches c, which has just acknowledged a valid handshake, to its
// session. The live connection of the same device (or, without a deviceId,
// of the adapter without one) is replaced: its pending requests fail at once
// and it is closed with 4000.
func (l *adapterLink) install(c *adapterConn, info *adapterInfo) {
	l.mu.Lock()
	if l.stopping {
		// run is closing every connection; c is among them.
		l.mu.Unlock()
		return
	}
	// Attached under l.mu, so that run's shutdown sees the session.
	s, displaced := l.sessions.attach(sessionViaWire, info.SessionID, info.DeviceID, info, c)
	c.mu.Lock()
	c.session = s
	c.mu.Unlock()
	l.mu.Unlock()

	l.logger.Info("adapter connected", "session", info.SessionID, "adapterVersion", info.AdapterVersion,
		"device", info.DeviceID, "remote", c.remote, "streams", len(info.Streams))
	for _, old := range displaced {
		old.replaced()
	}
}

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

// connEnded is called once per connection when its read loop has ended.
func (l *adapterLink) connEnded(c *adapterConn, reason string, readErr error) {
	l.mu.Lock()
	delete(l.conns, c)
	l.mu.Unlock()
	wasLive := false
	if s := c.attached(); s != nil {
		wasLive = l.sessions.detach(s, c, reason)
	}
	pending := c.leave(linkReasonDisconnected)
	// Logged before the waiting requests hear of it, so that whoever sees a
	// request fail finds the reason in the log.
	if wasLive {
		l.logger.Info("adapter disconnected", "session", c.sessionID, "reason", reason,
			"closeCode", int(websocket.CloseStatus(readErr)), "failedRequests", len(pending))
	} else {
		l.logger.Debug("adapter connection closed", "remote", c.remote, "session", c.sessionID,
			"closeCode", int(websocket.CloseStatus(readErr)))
	}
	failAdapterPending(pending, linkReasonDisconnected)
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

// handleEvent records a pushed event (wire protocol §5).
func (c *adapterConn) handleEvent(m *wireMessage) {
	l := c.link
	if wireAbsent(m.Event) || m.Event[0] != '{' {
		l.logger.Warn("ignoring event message without an event object", "session", c.sessionID)
		return
	}
	var stream, seq, timestamp []byte
	_ = scanObject(m.Event, func(key, value []byte) error {
		switch string(key) {
		case "stream":
			stream = value
		case "seq":
			seq = value
		case "timestamp":
			timestamp = value
		}
		return nil
	})
	name, ok := wireString(stream)
	n, seqOK := wireInt(seq)
	if !ok || name == "" || !seqOK || n < 1 {
		l.logger.Warn("ignoring event without a stream name and a seq >= 1", "session", c.sessionID,
			"stream", clipJSON(stream), "seq", clipJSON(seq))
		return
	}
	at := time.Now()
	if ts, ok := wireString(timestamp); ok {
		if t, err := time.Parse(time.RFC3339Nano, ts); err == nil {
			at = t
		}
	}
	typ, _ := wireString(rawMember(m.Event, "type"))
	if s := c.attached(); s != nil {
		s.record(c, name, n, typ, at, bytes.Clone(m.Event))
	}
}

// linkEventQueue hands events to notify from one goroutine, in order.
type linkEventQueue struct {
	mu     sync.Mutex
	items  []linkEvent
	pushed int // linkEventPushed items in items
	closed bool
	wake   chan struct{} // capacity 1
}

// push queues ev. It never blocks, so it may be called under other locks.
func (q *linkEventQueue) push(ev linkEvent) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.closed {
		return
	}
	switch {
	case ev.Kind == linkEventPushed:
		if q.pushed >= maxQueuedPushEvents {
			return
		}
		q.pushed++
	case ev.Kind == linkStreamsChanged && len(q.items) > 0 && q.items[len(q.items)-1] == ev:
		return // a repeated stream-list change says nothing new
	case len(q.items) >= maxQueuedLinkEvents:
		// Only a client that stopped reading stdout lets this many pile
		// up; an adapter reconnecting in a loop must not grow memory.
		return
	}
	q.items = append(q.items, ev)
	select {
	case q.wake <- struct{}{}:
	default:
	}
}

// run calls notify (if not nil) for each event until close, then drains.
func (q *linkEventQueue) run(notify func(linkEvent)) {
	for {
		<-q.wake
		q.mu.Lock()
		items, closed := q.items, q.closed
		q.items, q.pushed = nil, 0
		q.mu.Unlock()
		if notify != nil {
			for _, ev := range items {
				notify(ev)
			}
		}
		if closed {
			return
		}
	}
}

func (q *linkEventQueue) close() {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.closed = true
	select {
	case q.wake <- struct{}{}:
	default:
	}
}

// wireMessage holds the raw JSON values of the top-level members of a wire
// message that the server reads; nil when absent. Keys match exactly (not
// case-insensitively as encoding/json would), and a repeated member is an
// error rather than silently merged. Values alias the parsed bytes.
type wireMessage struct {
	Type, ID, Result, Error, Event, Streams               []byte
	ProtocolVersion, SessionID, AdapterVersion, StartedAt []byte
	App, Device, Token, DeviceID, Capabilities            []byte
}

// parse validates data as one JSON object and fills m in a single pass,
// without decoding or copying any value.
func (m *wireMessage) parse(data []byte) error {
	*m = wireMessage{}
	return scanObject(data, func(key, value []byte) error {
		var slot *[]byte
		switch string(key) {
		case "type":
			slot = &m.Type
		case "id":
			slot = &m.ID
		case "result":
			slot = &m.Result
		case "error":
			slot = &m.Error
		case "event":
			slot = &m.Event
		case "streams":
			slot = &m.Streams
		case "protocolVersion":
			slot = &m.ProtocolVersion
		case "sessionId":
			slot = &m.SessionID
		case "adapterVersion":
			slot = &m.AdapterVersion
		case "startedAt":
			slot = &m.StartedAt
		case "app":
			slot = &m.App
		case "device":
			slot = &m.Device
		case "token":
			slot = &m.Token
		case "deviceId":
			slot = &m.DeviceID
		case "capabilities":
			slot = &m.Capabilities
		default:
			return nil
		}
		if *slot != nil {
			return &wireDuplicateError{member: string(key)}
		}
		*slot = value
		return nil
	})
}

// wireDuplicateError reports a member the server reads that appears twice.
type wireDuplicateError struct{ member string }

func (e *wireDuplicateError) Error() string { return fmt.Sprintf("duplicate member %q", e.member) }

// wireAbsent reports whether an optional member is missing or null.
func wireAbsent(raw []byte) bool {
	return raw == nil || string(raw) == "null"
}

// wireInt decodes raw when it is a JSON number with an integer value that
// fits in an int64 (1 and 1.0 alike).
func wireInt(raw []byte) (int64, bool) {
	if len(raw) == 0 || raw[0] != '-' && (raw[0] < '0' || raw[0] > '9') {
		return 0, false
	}
	if n, err := strconv.ParseInt(string(raw), 10, 64); err == nil {
		return n, true
	}
	f, err := strconv.ParseFloat(string(raw), 64)
	if err != nil || f != math.Trunc(f) || f < math.MinInt64 || f >= math.MaxInt64 {
		return 0, false
	}
	return int64(f), true
}

// clipJSON quotes a raw JSON value for an error message, shortened.
func clipJSON(raw []byte) string {
	if raw == nil {
		return "nothing"
	}
	if len(raw) > 40 {
		return string(raw[:40]) + "…"
	}
	return string(raw)
}
