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
			b.mu.Lock()
			b.stopping = true
			b.mu.Unlock()
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
		b.wg.Wait()
	}()
	select {
	case <-served:
	case <-ctx.Done():
		t.Fatal("the bridge still serves the connection it closed")
	}
	b.mu.Lock()
	left := len(b.conns)
	b.mu.Unlock()
	if left != 0 {
		t.Errorf("%d connections still held", left)
	}
}
