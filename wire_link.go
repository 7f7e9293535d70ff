package main

// wire_link.go is the server side of Wire Protocol v1's transport: the
// listener that app debug adapters dial (bound and retried by bindAndServe,
// which the Reactotron listener shares), its status, and the upgrade of a
// connection (wire_socket.go), which wire_conn.go then serves and reports to
// the session registry (wire_sink.go).

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coder/websocket"
)

// Defaults of the adapterLink tunables (wire protocol §2, §6; spec §6).
const (
	linkHandshakeTimeout = 10 * time.Second
	linkPingInterval     = 15 * time.Second
	linkPongTimeout      = 10 * time.Second
	linkBindRetry        = 2 * time.Second
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
	// wireHandoffMin: a response result at least this large takes the read
	// buffer with it instead of being copied (wireSocket.keep).
	wireHandoffMin = 32 << 10
	// maxQueuedLinkEvents bounds every event waiting for notify.
	maxQueuedLinkEvents = 4096
	// maxQueuedPushEvents bounds the linkEventPushed notifications waiting
	// for notify; further ones are dropped (connection and stream-list
	// events never are).
	maxQueuedPushEvents = 1024
)

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
// (install); the session forwards requests to it.
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
	closeTimeout     time.Duration // close handshake, then the socket is dropped
	writeTimeout     time.Duration // one frame write
	maxPending       int           // requests pending on one connection
	mcp              http.Handler  // serves mcpPath on this port (rpc_relay.go); nil: none. Set before run.
	mcpPath          string

	// handshakeClock, when set (a test hook, before run), is a
	// connection's handshake deadline in place of a timer of
	// handshakeTimeout: it is asked once per upgraded connection, by the
	// connection's remote address; a nil channel never expires.
	handshakeClock func(remote string) <-chan time.Time

	allowedHosts   map[string]bool // WS_ALLOWED_HOSTS
	allowedOrigins map[string]bool // WS_ALLOWED_ORIGINS, normalised by normalizeWireOrigin
	nextID         atomic.Uint64   // request ids, unique for the link's lifetime
	bound          chan struct{}   // closed once the first bind succeeded
	bindTried      chan struct{}   // closed once the first bind was attempted, failed or not
	events         *linkEventQueue // the sessions report into it too
	// sessions hears of connections that handshake; set by serve before run.
	sessions appSink
	// sockets are the upgraded connections and every goroutine they run.
	sockets socketHost[*adapterConn]

	started atomic.Bool // run was called

	mu        sync.Mutex
	listening bool
	boundAddr string // listener address once bound
	listenErr string
}

// newAdapterLink returns a link configured by cfg that logs to logger (nil
// discards) and reports connection changes and pushes to notify (nil for
// none). Call run to start listening. A zero RequestTimeout or
// MaxPayloadSize takes the spec's default.
//
// notify is called from one goroutine of the link, one event at a time, in
// the order the changes happened, and never while the link holds a lock. It
// must not block: the link queues events for it (maxQueuedPushEvents). It
// may call status, but must not wait for request.
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
		closeTimeout:     linkCloseTimeout,
		writeTimeout:     linkWriteTimeout,
		maxPending:       linkMaxPending,
		allowedHosts:     make(map[string]bool),
		allowedOrigins:   make(map[string]bool),
		bound:            make(chan struct{}),
		bindTried:        make(chan struct{}),
		events:           &linkEventQueue{wake: make(chan struct{}, 1)},
	}
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

// run binds WS_HOST:WS_PORT (bindAndServe) and serves adapter upgrades
// until ctx is done. Then it stops intake, closes adapter connections with
// 1001 (each close handshake bounded by closeTimeout), closes the listener,
// and returns nil only after every goroutine it started has exited and
// every event has been passed to notify.
func (l *adapterLink) run(ctx context.Context) error {
	if !l.started.CompareAndSwap(false, true) {
		return errors.New("adapterLink.run called twice")
	}

	if !isLoopbackHost(l.cfg.WSHost) && l.cfg.WSToken == "" {
		l.logger.Warn("WS_HOST is not a loopback address and WS_TOKEN is empty: any device that can reach this port can read the app's state",
			"host", l.cfg.WSHost)
	}

	var dispatch sync.WaitGroup
	dispatch.Go(func() { l.events.run(l.notify) })

	srv := newSocketServer(l.serveUpgrade, l.logger)
	hostPort := net.JoinHostPort(l.cfg.WSHost, strconv.Itoa(l.cfg.WSPort))
	tried, bound := sync.OnceFunc(func() { close(l.bindTried) }), sync.OnceFunc(func() { close(l.bound) })
	defer tried()
	stopServing := bindAndServe(ctx, hostPort, l.bindRetry, srv, func(addr string, err error) {
		if err != nil {
			l.setListenError(hostPort, err)
		} else {
			l.setListening(addr)
			bound()
		}
		tried()
	})

	// Pending requests fail as NOT_CONNECTED "disconnected" (the reasons a
	// tool result may carry); the events say "shutdown".
	for _, c := range l.sockets.stop() {
		if s := c.attached(); s != nil && s.leave(c, "shutdown") {
			pending := c.leave(linkReasonDisconnected)
			l.logger.Info("adapter disconnected", "session", c.sessionID, "reason", "shutdown", "failedRequests", len(pending))
			failAdapterPending(pending, linkReasonDisconnected)
		}
		c.closeWith(websocket.StatusGoingAway, "server shutting down")
	}
	stopServing() // the listener and any connection not yet upgraded
	l.sockets.wait()
	l.mu.Lock()
	l.listening, l.listenErr = false, ""
	l.mu.Unlock()
	l.events.close()
	dispatch.Wait()
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
				sleepCtx(ctx, retry)
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
	live := l.sessions.liveInfo(sessionViaWire)
	l.mu.Lock()
	defer l.mu.Unlock()
	port := strconv.Itoa(l.cfg.WSPort)
	if _, p, err := net.SplitHostPort(l.boundAddr); err == nil { // "" until bound
		port = p
	}
	s := linkStatus{WSURL: "ws://" + net.JoinHostPort(l.cfg.WSHost, port) + "/", Listening: l.listening,
		ListenError: l.listenErr, Connected: live != nil, Adapter: live}
	switch {
	case live != nil:
	case !l.listening:
		s.Reason = linkReasonNotListening
	case l.sessions.hasConnected():
		s.Reason = linkReasonDisconnected
	default:
		s.Reason = linkReasonNeverConnected
	}
	return s
}

// serveUpgrade is the HTTP handler: mcpPath goes to the MCP endpoint when
// one is set; any other path is an adapter upgrade (adapters dial "/").
func (l *adapterLink) serveUpgrade(w http.ResponseWriter, r *http.Request) {
	if l.mcp != nil && r.URL.Path == l.mcpPath {
		l.mcp.ServeHTTP(w, r)
		return
	}
	if !l.admitUpgrade(w, r, l.logger, "adapter") {
		return
	}
	opts := socketOptions{limit: l.cfg.MaxPayloadSize, closeTimeout: l.closeTimeout, writeTimeout: l.writeTimeout}
	l.sockets.upgrade(w, r, l.logger, "adapter", opts, func(sock *wireSocket) *adapterConn {
		return &adapterConn{
			wireSocket: sock,
			link:       l,
			handshaken: make(chan struct{}),
			readEnded:  make(chan struct{}),
			pending:    make(map[string]*adapterPending),
		}
	}, (*adapterConn).serve)
}

// install attaches c, which has just acknowledged a valid handshake, to its
// session. The live connection of the same device (or, without a deviceId,
// of the adapter without one) is replaced: its pending requests fail at once
// and it is closed with 4000.
func (l *adapterLink) install(c *adapterConn, info *adapterInfo) {
	var displaced []sessionFeed
	// Attached under the host's lock, so that run's shutdown sees the
	// session; once run is closing every connection (c among them), not at all.
	if !l.sockets.whileRunning(func() {
		// Logged before the registry announces the connect (linkConnected),
		// so that whoever hears of it finds the log line already written.
		l.logger.Info("adapter connected", "session", info.SessionID, "adapterVersion", info.AdapterVersion,
			"device", info.DeviceID, "remote", c.remote, "streams", len(info.Streams))
		var s appSession
		s, displaced = l.sessions.connect(sessionViaWire, info.SessionID, info.DeviceID, info, c)
		c.mu.Lock()
		c.session = s
		c.mu.Unlock()
	}) {
		return
	}
	for _, old := range displaced {
		old.replaced()
	}
}

// connEnded is called once per connection when its read loop has ended.
func (l *adapterLink) connEnded(c *adapterConn, reason string, readErr error) {
	wasLive := false
	if s := c.attached(); s != nil {
		wasLive = s.leave(c, reason)
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
