package main

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coder/websocket"
)

// silentPeer accepts WebSocket upgrades and then neither reads nor writes,
// as a peer that hangs does, until the test ends.
func silentPeer(t *testing.T) string {
	t.Helper()
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ws, err := websocket.Accept(w, r, nil)
		if err != nil {
			return
		}
		defer ws.CloseNow()
		<-release
	}))
	t.Cleanup(func() {
		close(release)
		srv.Close()
	})
	return "ws" + strings.TrimPrefix(srv.URL, "http")
}

// TestDialSocketLivesAsAccepted: a dialled socket is closed as an accepted
// one is: a peer that never answers the close handshake is dropped once
// the close timeout has passed (not after the library's own 5 s), asking
// twice is safe, and a pong that never comes is reported late.
func TestDialSocketLivesAsAccepted(t *testing.T) {
	t.Parallel()
	url := silentPeer(t)
	var wg sync.WaitGroup
	wg.Add(1) // the dialling link's own goroutine, as goTracked requires
	opts := socketOptions{limit: 1 << 20, closeTimeout: 20 * time.Millisecond, writeTimeout: time.Second}
	sock, err := dialSocket(t.Context(), url, nil, &wg, opts)
	if err != nil {
		t.Fatal(err)
	}
	if sock.raw == nil {
		t.Fatal("the dialled socket has no net.Conn: its close handshake cannot be bounded")
	}
	if !sock.pingUntil(nil, time.Millisecond, 20*time.Millisecond) {
		t.Error("pingUntil = false for a peer that never pongs, want a late pong")
	}
	sock.closeWith(websocket.StatusNormalClosure, "")
	sock.closeWith(websocket.StatusGoingAway, "again")
	sock.finish()
	wg.Done()
	closed := make(chan struct{})
	go func() {
		wg.Wait()
		close(closed)
	}()
	select {
	case <-closed:
	case <-time.After(4 * time.Second): // far above the 20 ms bound, below the library's own 5 s
		t.Fatal("the close handshake with a silent peer was not cut short")
	}
}

// TestDialSocketRefusesRedirect: an upgrade answered with a redirect fails
// with errDialRedirect instead of being followed.
func TestDialSocketRefusesRedirect(t *testing.T) {
	t.Parallel()
	target := silentPeer(t)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "http"+strings.TrimPrefix(target, "ws"), http.StatusFound)
	}))
	defer srv.Close()
	var wg sync.WaitGroup
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	_, err := dialSocket(ctx, "ws"+strings.TrimPrefix(srv.URL, "http"), nil, &wg, socketOptions{})
	if !errors.Is(err, errDialRedirect) {
		t.Fatalf("dial = %v, want %v", err, errDialRedirect)
	}
}

// TestDirectClientsFollowNoRedirect: every HTTP client of the links (the
// Metro link's, the symbolicator's) is directClient: it takes no proxy from
// the environment, and a redirect is its answer, never followed to the
// address it points to.
func TestDirectClientsFollowNoRedirect(t *testing.T) {
	var reached atomic.Int32
	target := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { reached.Add(1) }))
	defer target.Close()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, target.URL+"/elsewhere", http.StatusFound)
	}))
	defer srv.Close()
	sym := newSymbolicator(srv.URL)
	defer sym.close()
	for name, c := range map[string]*http.Client{"metro": newMetroLink(config{}, slog.New(slog.DiscardHandler), nil).client, "symbolicate": sym.client} {
		if p := c.Transport.(*http.Transport).Proxy; p != nil {
			t.Errorf("%s: the transport takes a proxy from the environment", name)
		}
		resp, err := c.Get(srv.URL + "/json/list")
		if err != nil {
			t.Errorf("%s: GET of a redirect = %v, want its answer", name, err)
			continue
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusFound {
			t.Errorf("%s: GET of a redirect answered %d, want the redirect itself", name, resp.StatusCode)
		}
	}
	if n := reached.Load(); n != 0 {
		t.Errorf("the redirect's target was asked %d times, want 0", n)
	}
}
