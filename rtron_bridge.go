package main

// rtron_bridge.go is the Reactotron bridge's listener and connections: apps built
// with Reactotron's client (reactotron-react-native, reactotron-redux, …)
// dial it unchanged, and each becomes a session. rtron_protocol.go knows the
// messages; this file moves them, and answers for the session: events from
// the server's buffers, state through Reactotron's own requests.

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/coder/websocket"
)

// reactotronStreams are advertised for every Reactotron session from the
// start; others (mmkv, async_storage, …) appear with their first message.
var reactotronStreams = []string{"redux", "console", "network", "timeline"}

// reactotronBridge listens on REACTOTRON_PORT (same host, upgrade checks and
// frame limit as the adapter listener) and attaches each Reactotron client
// to a session of the registry, one per clientId.
//
// run must be called once; status may be called at any time.
type reactotronBridge struct {
	cfg       config
	logger    *slog.Logger
	link      *adapterLink // upgrade checks, and the registry
	bindRetry time.Duration
	desktop   *reactotronDesktopOptions // nil: apps are not relayed to the desktop app
	// pingInterval and pongTimeout: each app is pinged this often, and
	// dropped when its pong is later than this.
	pingInterval, pongTimeout time.Duration

	mu        sync.Mutex
	listening bool
	boundAddr string
	listenErr string

	host socketHost[*reactotronConn] // the connections, and every goroutine they run
}

func newReactotronBridge(cfg config, logger *slog.Logger, link *adapterLink) *reactotronBridge {
	return &reactotronBridge{cfg: cfg, logger: logger.With("component", "reactotron"), link: link,
		bindRetry: linkBindRetry, pingInterval: linkPingInterval, pongTimeout: linkPongTimeout}
}

// run serves Reactotron clients until ctx ends, then closes them with 1001
// and returns once every goroutine it started has stopped.
func (b *reactotronBridge) run(ctx context.Context) {
	if !isLoopbackHost(b.cfg.WSHost) {
		b.logger.Warn("the Reactotron bridge listens beyond loopback and Reactotron clients cannot send a token: "+
			"any device that can reach the port can send data as an app", "host", b.cfg.WSHost, "port", b.cfg.ReactotronPort)
	}
	srv := newSocketServer(b.serveUpgrade, b.logger)
	hostPort := net.JoinHostPort(b.cfg.WSHost, strconv.Itoa(b.cfg.ReactotronPort))
	stop := bindAndServe(ctx, hostPort, b.bindRetry, srv, func(addr string, err error) {
		if errors.Is(err, syscall.EADDRINUSE) {
			err = &reactotronPortHeldError{Port: b.cfg.ReactotronPort, Err: err}
		}
		b.mu.Lock()
		repeated := err != nil && b.listenErr == err.Error()
		if err != nil {
			b.listening, b.listenErr = false, err.Error()
		} else {
			b.listening, b.boundAddr, b.listenErr = true, addr, ""
		}
		b.mu.Unlock()
		switch {
		case err == nil:
			b.logger.Info("listening for Reactotron apps", "url", b.status().URL)
		case !repeated:
			b.logger.Warn("cannot listen for Reactotron apps; retrying", "addr", hostPort, "err", err, "every", b.bindRetry)
		default:
			b.logger.Debug("still cannot listen for Reactotron apps", "addr", hostPort, "err", err)
		}
	})
	for _, c := range b.host.stop() {
		c.end("shutdown", websocket.StatusGoingAway, "server shutting down")
	}
	stop()
	b.host.wait()
	b.mu.Lock()
	b.listening, b.listenErr = false, ""
	b.mu.Unlock()
}

// listenerStatus is a listener's state, as debug_health_check reports it.
type listenerStatus struct {
	URL         string
	Listening   bool
	ListenError string
}

func (b *reactotronBridge) status() listenerStatus {
	b.mu.Lock()
	defer b.mu.Unlock()
	port := strconv.Itoa(b.cfg.ReactotronPort)
	if b.boundAddr != "" {
		if _, p, err := net.SplitHostPort(b.boundAddr); err == nil {
			port = p
		}
	}
	return listenerStatus{Listening: b.listening, ListenError: b.listenErr,
		URL: "ws://" + net.JoinHostPort(b.cfg.WSHost, port) + "/"}
}

func (b *reactotronBridge) serveUpgrade(w http.ResponseWriter, r *http.Request) {
	if !b.link.admitUpgrade(w, r, b.logger, "Reactotron") {
		return
	}
	opts := socketOptions{limit: b.cfg.MaxPayloadSize, closeTimeout: linkCloseTimeout, writeTimeout: linkWriteTimeout}
	b.host.upgrade(w, r, b.logger, "Reactotron", opts, func(sock *wireSocket) *reactotronConn {
		return &reactotronConn{bridge: b, sock: sock, remote: sock.remote, waiters: make(map[string][]chan reactotronAnswer),
			done: make(chan struct{}), storeShown: make(chan struct{})}
	}, (*reactotronConn).serve)
}

// reactotronConn is one Reactotron client connection. It is its session's
// feed once the client has introduced itself.
type reactotronConn struct {
	bridge *reactotronBridge
	sock   *wireSocket // its life: goroutines, close, pings
	remote string

	writeMu sync.Mutex // held around each write: frames and their waiters in one order
	endOnce sync.Once
	done    chan struct{} // closed when the connection ends

	mu       sync.Mutex
	session  reactotronSession
	clientID string                             // the client's id, given or assigned
	reason   string                             // why the connection ended, once it has
	waiters  map[string][]chan reactotronAnswer // by answer key, oldest first
	relay    *desktopRelay                      // to the desktop app, once introduced
	// subscribed are the store names the app was last asked to report
	// changes of (rtron_state.go).
	subscribed []string
	// storeShown is closed once the app has shown a store
	// (rtron_storeprobe.go); closed by noteReduxStore under mu.
	storeShown chan struct{}
}

// serve reads messages until the connection ends.
func (c *reactotronConn) serve() {
	b := c.bridge
	pinged := make(chan struct{})
	go func() {
		defer close(pinged)
		if c.sock.pingUntil(c.done, b.pingInterval, b.pongTimeout) {
			c.end("ping timeout", websocket.StatusPolicyViolation, "ping timeout")
		}
	}()
	var err error
	for {
		var data []byte
		var size int64
		data, size, err = c.sock.readTextOwned() // handle keeps what it is given
		if err != nil {
			break
		}
		if data == nil {
			b.logger.Warn("dropped an oversized Reactotron message", "remote", c.remote, "size", size, "limit", b.cfg.MaxPayloadSize)
			continue
		}
		c.handle(data)
	}
	c.end("disconnected", websocket.StatusNormalClosure, "")
	<-pinged
	c.sock.finish()
	b.logger.Debug("Reactotron connection ended", "remote", c.remote, "err", err)
}

// end detaches the session and closes the connection; only the first call
// has an effect.
func (c *reactotronConn) end(reason string, code websocket.StatusCode, text string) {
	c.endOnce.Do(func() {
		c.mu.Lock()
		c.reason = reason
		s, relay := c.session, c.relay
		waiters := c.waiters
		c.waiters = map[string][]chan reactotronAnswer{}
		c.mu.Unlock()
		close(c.done)
		if relay != nil {
			relay.cancel()
		}
		for _, list := range waiters {
			for _, w := range list {
				close(w)
			}
		}
		if s != nil && s.leave(c, reason) {
			c.bridge.logger.Info("Reactotron app disconnected", "session", s.sessionID(), "reason", reason)
		}
		// The close handshake gets linkCloseTimeout; then the socket is
		// dropped, so shutdown stays within its second.
		c.sock.closeWith(code, text)
	})
}

func (c *reactotronConn) send(ctx context.Context, frame []byte) error {
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	return c.sock.writeFrame(ctx, frame)
}

func (c *reactotronConn) handle(data []byte) {
	b := c.bridge
	f, err := parseReactotronFrame(data)
	if err != nil {
		c.relayFromApp(reactotronFrame{}, data)
		b.logger.Warn("ignoring malformed Reactotron message", "remote", c.remote, "err", err)
		return
	}
	if f.Type == "client.intro" {
		c.introduce(f)
		c.startRelay(f, data)
		return
	}
	s := c.attached()
	if s == nil {
		b.logger.Debug("ignoring Reactotron message before client.intro", "remote", c.remote, "type", f.Type)
		return
	}
	if !c.relayFromApp(f, data) {
		return // the answer to one of the desktop app's requests
	}
	if c.handleState(s, f) {
		return
	}
	switch f.Type {
	case "state.values.response", "state.keys.response":
		var key string
		var a reactotronAnswer
		if key, a, err = reactotronAnswerOf(f); err == nil {
			c.deliver(key, a)
		}
	case "customCommand.register", "customCommand.unregister":
		var cmd reactotronCommand
		if cmd, err = parseReactotronCommand(f.Payload); err == nil {
			s.registerCommand(cmd, f.Type == "customCommand.register")
		}
	default:
		var ev bridgedEvent
		var ok bool
		if ev, ok, err = translateReactotron(f); ok {
			if ev.Stream == "mmkv" {
				s.observeMMKV(ev.Payload)
			}
			s.appendEvent(c, ev.Stream, ev.Type, cmpTime(ev.Time), ev.Payload)
		}
	}
	if err != nil {
		b.logger.Warn("ignoring unreadable Reactotron message", "session", s.sessionID(), "type", f.Type, "err", err)
	}
}

// introduce attaches the connection to the session of the client's
// clientId, assigning one to a client that has none.
func (c *reactotronConn) introduce(f reactotronFrame) {
	b := c.bridge
	if c.attached() != nil {
		b.logger.Debug("ignoring a second client.intro", "remote", c.remote)
		return
	}
	intro, err := parseReactotronIntro(f.Payload)
	if err != nil {
		b.logger.Warn("ignoring invalid client.intro", "remote", c.remote, "err", err)
		return
	}
	if n := len([]rune(intro.ClientID)); n > 128 || strings.ContainsFunc(intro.ClientID, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
		b.logger.Warn("ignoring client.intro with an unusable clientId", "remote", c.remote, "length", n)
		return
	}
	if intro.ClientID == "" {
		intro.ClientID = newClientID()
		if err := c.send(context.Background(), reactotronSetClientID(intro.ClientID)); err != nil {
			b.logger.Debug("could not send setClientId", "remote", c.remote, "err", err)
			return
		}
	}
	// The probe is answered only once this returns: messages are handled in order.
	if err := c.sendProbe(context.Background(), true); err != nil {
		b.logger.Debug("could not send the store probe", "remote", c.remote, "err", err)
	}
	// Logged before the registry announces the connect, as for a wire
	// adapter: a Reactotron session's id is the client's id.
	b.logger.Info("Reactotron app connected", "session", intro.ClientID, "app", intro.Name, "remote", c.remote)
	s, displaced := b.link.sessions.connectReactotron(intro.ClientID, reactotronInfo(intro, time.Now()), c)
	c.mu.Lock()
	c.session, c.clientID = s, intro.ClientID
	c.mu.Unlock()
	for _, old := range displaced {
		old.replaced()
	}
}

// reactotronInfo describes a Reactotron client as a session describes an app.
func reactotronInfo(intro reactotronIntro, now time.Time) *adapterInfo {
	app, _ := json.Marshal(map[string]any{"name": intro.Name, "environment": nullable(intro.Environment),
		"library": nullable(strings.TrimSpace(intro.LibraryName + " " + intro.LibraryVersion))})
	device, _ := json.Marshal(map[string]any{"platform": nullable(intro.Platform), "osVersion": nullable(cmp.Or(intro.PlatformVersion, intro.OSRelease)),
		"model": nullable(intro.Model), "systemName": nullable(intro.SystemName)})
	version := intro.CoreClientVersion
	if strings.HasPrefix(version, "REACTOTRON_") {
		version = "" // a build placeholder some reactotron-core-client builds send as is
	}
	info := &adapterInfo{SessionID: intro.ClientID, AdapterVersion: cmp.Or(version, intro.LibraryVersion, "reactotron"),
		ConnectedAt: now, App: app, Device: device, Capabilities: []string{capSnapshotPath, capStateDispatch, capCommands}}
	for _, name := range reactotronStreams {
		info.Streams = append(info.Streams, streamState{Name: name, Active: true})
	}
	return info
}

func newClientID() string {
	var b [16]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// replaced ends c because the same client connected again.
func (c *reactotronConn) replaced() {
	c.end("replaced", wireCloseReplaced, "replaced")
}

// attached is the session c was attached to, or nil before client.intro.
func (c *reactotronConn) attached() reactotronSession {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.session
}
