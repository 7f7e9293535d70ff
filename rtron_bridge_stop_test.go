package main

import (
	"bufio"
	"context"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
)

// hijackHook runs before when the WebSocket upgrade takes the connection
// over: after the bridge admitted the upgrade, before it holds the
// connection.
type hijackHook struct {
	http.ResponseWriter
	before func()
}

func (h hijackHook) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	h.before()
	return http.NewResponseController(h.ResponseWriter).Hijack()
}

// TestBridgeClosesConnectionAcceptedWhileStopping: a client whose upgrade
// was admitted just before the bridge began to stop is missed by run's
// round of closes, so the bridge closes it itself with 1001 instead of
// serving it until the client leaves.
func TestBridgeClosesConnectionAcceptedWhileStopping(t *testing.T) {
	cfg := testConfig(t)
	b := newReactotronBridge(cfg, slog.New(slog.DiscardHandler), newTestLink(cfg, nil, nil))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b.serveUpgrade(hijackHook{ResponseWriter: w, before: func() {
			b.host.stop()
		}}, r)
	}))
	defer srv.Close()

	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	ws, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(srv.URL, "http"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ws.CloseNow()
	_, _, err = ws.Read(ctx)
	if got := websocket.CloseStatus(err); got != websocket.StatusGoingAway {
		t.Fatalf("read ended with %v (status %d), want a close with 1001", err, got)
	}
	served := make(chan struct{})
	go func() {
		defer close(served)
		b.host.wait()
	}()
	select {
	case <-served:
	case <-ctx.Done():
		t.Fatal("the bridge still serves the connection it closed")
	}
	if left := len(b.host.open()); left != 0 {
		t.Errorf("%d connections still held", left)
	}
}

// TestBridgeShutdownClosesClients: when its context ends, the bridge closes
// every client with 1001, detaches its session, and run returns once all it
// started has stopped.
func TestBridgeShutdownClosesClients(t *testing.T) {
	cfg := testConfig(t)
	cfg.Reactotron, cfg.ReactotronPort = true, 0 // any free port
	link := newTestLink(cfg, nil, nil)
	b := newReactotronBridge(cfg, slog.New(slog.DiscardHandler), link)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan struct{})
	go func() {
		defer close(done)
		b.run(ctx)
	}()
	dctx, dcancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer dcancel()
	ws := dialIntroduced(t, dctx, b)
	linkWaitFor(t, "the session", func() bool { return link.sessions.liveInfo(sessionViaReactotron) != nil })

	read := make(chan error, 1)
	go func() {
		for {
			if _, _, err := ws.Read(dctx); err != nil {
				read <- err
				return
			}
		}
	}()
	cancel()
	select {
	case <-done:
	case <-dctx.Done():
		t.Fatal("run did not return after its context ended")
	}
	if err := <-read; websocket.CloseStatus(err) != websocket.StatusGoingAway {
		t.Errorf("the client's read ended with %v, want a close with 1001", err)
	}
	if link.sessions.liveInfo(sessionViaReactotron) != nil {
		t.Error("the session is still live after shutdown")
	}
	if n := len(b.host.open()); n != 0 {
		t.Errorf("%d connections still held after run returned", n)
	}
}

// TestReactotronConnectLoggedBeforeAnnounced: whoever hears that a
// Reactotron app connected (the MCP side, through the link's events) finds
// the "Reactotron app connected" line already written, as for an adapter.
func TestReactotronConnectLoggedBeforeAnnounced(t *testing.T) {
	t.Parallel()
	cfg := testConfig(t)
	cfg.Reactotron, cfg.ReactotronPort = true, 0 // any free port
	var logs lockedBuffer
	link := newTestLink(cfg, nil, nil)
	b := newReactotronBridge(cfg, slog.New(slog.NewTextHandler(&logs, nil)), link)
	logged := make(chan bool, 1)
	events := make(chan struct{})
	go func() {
		defer close(events)
		link.events.run(func(ev linkEvent) {
			if ev.Kind == linkConnected && ev.SessionID == "c1" {
				_, rest, found := strings.Cut(logs.String(), `msg="Reactotron app connected"`)
				rest, _, _ = strings.Cut(rest, "\n")
				logged <- found && strings.Contains(rest, " session=c1 ")
			}
		})
	}()
	defer func() { link.events.close(); <-events }()
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() {
		defer close(done)
		b.run(ctx)
	}()
	defer func() { cancel(); <-done }()
	dctx, dcancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer dcancel()
	dialIntroduced(t, dctx, b)
	select {
	case ok := <-logged:
		if !ok {
			t.Errorf("the connect was announced before it was logged; the log so far:\n%s", logs.String())
		}
	case <-dctx.Done():
		t.Fatal("the connect was never announced")
	}
}

// dialIntroduced connects to the running bridge b as a Reactotron app
// with clientId c1, and introduces it.
func dialIntroduced(t *testing.T, ctx context.Context, b *reactotronBridge) *websocket.Conn {
	t.Helper()
	addr, err := b.addr(ctx)
	if err != nil {
		t.Fatal(err)
	}
	ws, _, err := websocket.Dial(ctx, "ws://"+addr+"/", nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ws.CloseNow() })
	if err := ws.Write(ctx, websocket.MessageText, []byte(`{"type":"client.intro","payload":{"name":"ShopApp","clientId":"c1"}}`)); err != nil {
		t.Fatal(err)
	}
	return ws
}

// TestBridgeDropsAppThatNeverPongs: an app that answers no ping, like a
// frozen one, is closed with 1008 "ping timeout" once its pong is late.
func TestBridgeDropsAppThatNeverPongs(t *testing.T) {
	t.Parallel()
	// The pong deadline also bounds the ping's write, and a write it cuts
	// ends the connection without a close frame: 250 ms leaves a loaded
	// machine time to write the ping, so the close the test reads is 1008.
	_, _, url := startBridgeTuned(t, 5*time.Second, nil, func(b *reactotronBridge) {
		b.pingInterval, b.pongTimeout = 5*time.Millisecond, 250*time.Millisecond
	})
	ctx, cancel := context.WithTimeout(t.Context(), linkWaitLimit)
	defer cancel()
	pinged := false
	ws, _, err := websocket.Dial(ctx, url, &websocket.DialOptions{OnPingReceived: func(context.Context, []byte) bool {
		pinged = true // on the reading goroutine, this one
		return false  // no pong
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer ws.CloseNow()
	for {
		if _, _, err = ws.Read(ctx); err != nil {
			break
		}
	}
	if code := websocket.CloseStatus(err); !pinged || code != websocket.StatusPolicyViolation || !strings.Contains(err.Error(), "ping timeout") {
		t.Fatalf("read ended with %v (pinged: %v), want a close with 1008 ping timeout after a ping", err, pinged)
	}
}
