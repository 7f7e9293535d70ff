package main

// wire_dial.go is the one HTTP client of the links, and the one way a link
// dials a WebSocket out (the Metro link to a page, the Reactotron relay to
// the desktop app): straight to the address it was given, never through a
// proxy the environment names and never to wherever a redirect points,
// either of which would take the server past the loopback-or-allowed rule
// of METRO_URL and REACTOTRON_DESKTOP.

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/coder/websocket"
)

// errDialRedirect: the dialled address answered the upgrade with a
// redirect, which is not followed.
var errDialRedirect = errors.New("the WebSocket upgrade was answered with a redirect, which is not followed")

// directTransport reaches the address of each request itself: no proxy from
// the environment, HTTP/1.1 only, a few idle connections kept a while.
// Callers may tune its limits and dialer.
func directTransport() *http.Transport {
	return &http.Transport{Proxy: nil, ForceAttemptHTTP2: false, MaxIdleConns: 4, IdleConnTimeout: 30 * time.Second}
}

// directClient is the client, over t (a directTransport), that reaches Metro,
// the Reactotron desktop app and the pages' sockets. A redirect is the
// answer: the caller sees its status, and refuses it.
func directClient(t *http.Transport) *http.Client {
	return &http.Client{Transport: t, CheckRedirect: func(*http.Request, []*http.Request) error {
		return http.ErrUseLastResponse
	}}
}

// dialSocket opens a WebSocket to url with header, and gives it the life
// of an accepted one: wg is the owner's, which must already count the
// caller (goTracked's rule), and opts its bounds. ctx bounds the dial only.
// The caller ends the socket with closeWith or dropSocket, then finish.
func dialSocket(ctx context.Context, url string, header http.Header, wg *sync.WaitGroup, opts socketOptions) (*wireSocket, error) {
	// A transport of its own: its one connection is the socket, whose
	// net.Conn bounds the close handshake as an accepted socket's does.
	var mu sync.Mutex
	var raw net.Conn
	transport := directTransport()
	var dialer net.Dialer
	transport.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := dialer.DialContext(ctx, network, addr)
		if err == nil {
			mu.Lock()
			raw = c
			mu.Unlock()
		}
		return c, err
	}
	client := directClient(transport)
	ws, resp, err := websocket.Dial(ctx, url, &websocket.DialOptions{HTTPHeader: header, HTTPClient: client})
	transport.CloseIdleConnections()
	if err != nil && resp != nil && resp.StatusCode >= 300 && resp.StatusCode < 400 {
		return nil, fmt.Errorf("%w (HTTP %d)", errDialRedirect, resp.StatusCode)
	}
	if err != nil {
		return nil, err
	}
	mu.Lock()
	defer mu.Unlock()
	remote := url
	if raw != nil {
		remote = raw.RemoteAddr().String()
	}
	return newWireSocket(ws, raw, remote, wg, opts), nil
}
