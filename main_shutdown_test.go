package main

// The program's end as its client sees it: stdin closes, and run returns
// within its second or two whatever the links are doing.

import (
	"context"
	"encoding/json"
	"io"
	"os"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/coder/websocket"
)

// TestRunExitsPromptlyWithAppsAttached drives the whole program as run
// does (the flags through loadConfig, then serve) with every kind of link
// busy: a Metro page attached, one that left Metro's list while it was
// being dialled (the proxy answers its upgrade afterwards), one whose dial
// is in flight, a Reactotron app relayed to a connected desktop app, and
// an adapter. The program returns soon after stdin closes
// (docs/protocol-decisions.md promises 2 s; the test fails only far above
// that).
func TestRunExitsPromptlyWithAppsAttached(t *testing.T) {
	t.Parallel()
	m := startMetroStandIn(t)
	leaving, inFlight := make(chan struct{}), make(chan struct{})
	m.set(func(m *metroStandIn) { m.gates["2"], m.gates["3"] = leaving, inFlight })
	t.Cleanup(func() { close(inFlight) })
	page1 := standInPage("1", "com.example.shop", "Pixel 8", "dev-a", true)
	page2 := standInPage("2", "com.example.admin", "Pixel 8", "dev-a", true)
	page3 := standInPage("3", "com.example.kiosk", "Pixel 8", "dev-a", true)
	m.setPages(page1, page2)
	desktop := newFakeDesktop(t)
	desktop.start()

	wsPort, rtPort := strconv.Itoa(freePort(t)), strconv.Itoa(freePort(t))
	args := []string{"-ws-port", wsPort, "-reactotron-port", rtPort, "-metro-url", m.srv.URL,
		"-reactotron-desktop", desktop.addr, "-log-level", "debug"}
	cfg, err := loadConfig(args, os.Getenv)
	if err != nil {
		t.Fatal(err)
	}
	// Metro's list is read every few milliseconds rather than every second:
	// the test waits for two reads of it (page 3 found, then the read after
	// it), which are what it needs, not the time between them.
	cfg.Tune.MetroPoll = 5 * time.Millisecond
	stdin, closeStdin := io.Pipe()
	stderr := &lockedBuffer{}
	done := make(chan error, 1)
	go func() { done <- serve(context.Background(), cfg, stdin, io.Discard, stderr) }()
	t.Cleanup(func() {
		closeStdin.Close()
		if t.Failed() {
			// A socket the server never closed would hold its end, and
			// the test's, until Metro drops it: drop them all.
			m.mu.Lock()
			for _, list := range m.sockets {
				for _, ws := range list {
					ws.CloseNow()
				}
			}
			m.mu.Unlock()
		}
		<-done
	})

	// An adapter, live.
	adapter := dialWhenListening(t, "ws://127.0.0.1:"+wsPort+"/")
	hs, _ := json.Marshal(testHandshake("shutdown-adapter"))
	if err := adapter.Write(t.Context(), websocket.MessageText, hs); err != nil {
		t.Fatal(err)
	}
	_, ack, err := adapter.Read(t.Context())
	var msg map[string]any
	if err != nil || json.Unmarshal(ack, &msg) != nil || msg["type"] != "handshake_ack" {
		t.Fatalf("handshake answered %s (%v), want a handshake_ack", ack, err)
	}
	// A Reactotron app, relayed to the desktop app.
	dialWhenListening(t, "ws://127.0.0.1:"+rtPort+"/").CloseNow()
	app := dialReactotron(t, "ws://127.0.0.1:"+rtPort+"/", nil)
	app.send(recordedFrames(t, "app")[0])
	desktop.next()
	// Metro: page 1 attached, page 2 leaves the list while dialled, page 3
	// is being dialled.
	waitUntil(t, "page 1 attached", func() bool {
		return slices.Contains(m.sentMethods(), "ReactNativeApplication.enable")
	})
	if page := m.nextDialling(); page != "2" {
		t.Fatalf("dialling page %q, want 2", page)
	}
	m.setPages(page1, page3)
	if page := m.nextDialling(); page != "3" {
		t.Fatalf("dialling page %q, want 3", page)
	}
	m.waitPolls(1) // the list without page 2 has been read and acted on
	close(leaving)
	waitUntil(t, "page 2's upgrade answered", func() bool { return m.dialsOf("2") > 0 || m.endedOf("2") > 0 })

	start := time.Now()
	closeStdin.Close()
	select {
	case err := <-done:
		done <- err // for the cleanup
		if err != nil {
			t.Errorf("run = %v, want nil", err)
		}
		t.Logf("run returned %v after stdin closed", time.Since(start))
	case <-time.After(15 * time.Second):
		t.Fatal("run still running 15 s after stdin closed")
	}
}

// dialWhenListening dials url, again until the listener is up.
func dialWhenListening(t *testing.T, url string) *websocket.Conn {
	t.Helper()
	var ws *websocket.Conn
	waitUntil(t, "a listener at "+url, func() bool {
		ctx, cancel := context.WithTimeout(t.Context(), 2*time.Second)
		defer cancel()
		c, _, err := websocket.Dial(ctx, url, nil)
		ws = c
		return err == nil
	})
	t.Cleanup(func() { ws.CloseNow() })
	return ws
}
