package main

// Pings both ways: the app's ping, and the server's that tell a frozen app
// from a live one.

import (
	"context"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/google/go-cmp/cmp"
)

func TestAppPing(t *testing.T) {
	t.Parallel()
	h := startLinkHarness(t, nil, nil)
	a := h.connect(t, "s")
	a.sendText(`{"type":"ping","extra":true}`)
	if diff := cmp.Diff(a.recv(), map[string]any{"type": "pong"}); diff != "" {
		t.Errorf("pong mismatch (-got +want):\n%s", diff)
	}
}

func TestPingTimeout(t *testing.T) {
	t.Parallel()
	h := startLinkHarness(t, nil, func(l *adapterLink) {
		l.pingInterval = 10 * time.Millisecond
		l.pongTimeout = 30 * time.Millisecond
	})
	// A coder/websocket client answers pings only while it reads; this one
	// does not read after the ack, like a frozen app.
	a := h.dial(t, nil)
	a.send(testHandshake("frozen"))
	if got := a.recv(); got["type"] != "handshake_ack" {
		t.Fatalf("got %v, want the ack", got)
	}
	h.events.waitFor(t, []linkEvent{
		{Kind: linkConnected, SessionID: "frozen"},
		{Kind: linkDisconnected, SessionID: "frozen", Reason: "ping timeout"},
	})
	if s := h.link.status(); s.Connected || s.Reason != linkReasonDisconnected {
		t.Errorf("status = %+v, want disconnected", s)
	}
}

func TestPingsKeepAdapterAlive(t *testing.T) {
	t.Parallel()
	h := startLinkHarness(t, nil, func(l *adapterLink) {
		l.pingInterval = 5 * time.Millisecond
		l.pongTimeout = 5 * time.Second
	})
	pings := make(chan struct{}, 100)
	a := h.dial(t, &websocket.DialOptions{OnPingReceived: func(context.Context, []byte) bool {
		select {
		case pings <- struct{}{}:
		default:
		}
		return true
	}})
	a.send(testHandshake("alive"))
	readDone := make(chan error, 1)
	go func() {
		for {
			if _, err := a.read(); err != nil {
				readDone <- err
				return
			}
		}
	}()
	for range 5 {
		select {
		case <-pings:
		case err := <-readDone:
			t.Fatalf("connection ended: %v", err)
		case <-time.After(linkWaitLimit):
			t.Fatal("no ping")
		}
	}
	if s := h.link.status(); !s.Connected || s.Adapter.SessionID != "alive" {
		t.Errorf("status = %+v, want alive connected", s)
	}
	a.ws.CloseNow()
	<-readDone
}
