package main

import (
	"context"
	"encoding/json"
	"slices"
	"sync"
	"sync/atomic"
)

// client is one MCP client of the shared server: the stdio peer, or one
// legacy Streamable HTTP session. It holds what the legacy era (2024-11-05
// to 2025-11-25) keeps per connection — the initialize handshake, the log
// level, resource subscriptions — and how to send that client
// notifications. Requests stamped with a 2026-07-28 _meta carry their own
// state and use none of it. Its methods are safe for concurrent use.
type client struct {
	srv  *mcpServer
	name string // for logs: "stdio" or "http session …"

	// notify sends one notification to the client, or drops it when the
	// client has no channel for it (an HTTP session without a GET stream).
	notify func(method string, params any)
	// stopped is closed when the transport stops taking requests from this
	// client; long-lived requests (subscriptions/listen) end on it.
	stopped <-chan struct{}

	initialized atomic.Bool  // initialize answered: other requests are admitted
	discovered  atomic.Bool  // a 2026-07-28 server/discover was answered: the peer speaks that revision
	ready       atomic.Bool  // notifications/initialized received: notifications may go out
	level       atomic.Int32 // index into logLevels; -1 until logging/setLevel
	closed      atomic.Bool  // the transport is gone: no more notifications

	subs subscriptionSet // legacy resources/subscribe
}

func newClient(srv *mcpServer, name string, notify func(string, any), stopped <-chan struct{}) *client {
	c := &client{srv: srv, name: name, notify: notify, stopped: stopped}
	c.level.Store(-1)
	c.subs.onChange = srv.subscriptionsChanged
	return c
}

// admit refuses unknown methods, methods of the other era and, for a legacy
// client that has not called initialize, everything but initialize and
// ping. A request whose _meta names a protocol version is judged by the
// 2026-07-28 rules (mcp_era.go) and gets its per-request state in req.Info.
func (c *client) admit(req *request) error {
	meta, err := readRequestMeta(req.Params, c.initialized.Load())
	if err != nil {
		return err
	}
	m, ok := methods[req.Method]
	if meta != nil {
		if !ok || m.legacyOnly {
			return modernMethodNotFound(req.Method)
		}
		if req.Method == "server/discover" {
			c.discovered.Store(true)
		}
		req.Info = meta
		return nil
	}
	// A peer that negotiated 2026-07-28 through server/discover and then
	// sends a removed method without _meta (the official Go SDK sends
	// logging/setLevel so) is told that revision's answer, not to
	// initialize. initialize itself stays open: a client may fall back to
	// an earlier revision after discovering.
	if c.discovered.Load() && !c.initialized.Load() && req.Method != "initialize" && (!ok || m.legacyOnly) {
		return modernMethodNotFound(req.Method)
	}
	if !ok || m.modernOnly {
		if req.Method == "server/discover" {
			return rpcErrorf(errMethodNotFound, nil, "method not found: server/discover is not supported yet; use initialize")
		}
		return rpcErrorf(errMethodNotFound, nil, "method not found: %q", req.Method)
	}
	if !m.beforeInit && !c.initialized.Load() {
		return rpcErrorf(errInvalidRequest, nil, "server not initialized: send initialize first")
	}
	return nil
}

// handle runs an admitted request. The handler finds the client, the
// request's id and its era through the context (callFrom).
func (c *client) handle(ctx context.Context, req *request) (any, error) {
	meta, _ := req.Info.(*requestMeta)
	call := &callInfo{client: c, id: req.ID, meta: meta, send: c.notify, stopped: c.stopped}
	return c.srv.dispatch(ctx, call, req)
}

// log sends notifications/message when the client asked for messages at
// level or above.
func (c *client) log(level string, data any) {
	want := c.level.Load()
	if want < 0 || int32(slices.Index(logLevels, level)) < want {
		return
	}
	c.send("notifications/message", map[string]any{"level": level, "logger": "devtools-mcp", "data": data})
}

// send sends a notification once the client has initialized.
func (c *client) send(method string, params any) {
	if !c.ready.Load() || c.closed.Load() || c.notify == nil {
		return
	}
	c.notify(method, params)
}

// close ends the client: no more notifications, and its resource
// subscriptions are released.
func (c *client) close() {
	c.closed.Store(true)
	c.subs.clear(c.srv.resources)
}

// callInfo is what a handler may need beyond its params; meta is nil for
// the legacy era.
type callInfo struct {
	client  *client // nil for a 2026-07-28 request over HTTP, which has no client state
	id      json.RawMessage
	meta    *requestMeta
	send    func(method string, params any)
	stopped <-chan struct{}
}

type callKey struct{}

func withCall(ctx context.Context, call *callInfo) context.Context {
	return context.WithValue(ctx, callKey{}, call)
}

// callFrom returns the request's callInfo; handlers run only through
// dispatch, which always sets one.
func callFrom(ctx context.Context) *callInfo {
	call, _ := ctx.Value(callKey{}).(*callInfo)
	if call == nil {
		return &callInfo{}
	}
	return call
}

// subscriptionSet is the resource URIs one subscriber holds. The hub counts
// holders per URI, so each URI is subscribed there once per set.
type subscriptionSet struct {
	mu       sync.Mutex
	uris     map[string]bool
	onChange func() // after a URI is added or removed; required
}

// add subscribes to uri, at most maxSubscriptions per set.
func (s *subscriptionSet) add(hub *resourceHub, uri string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.uris[uri] {
		return nil
	}
	if len(s.uris) >= maxSubscriptions {
		return rpcErrorf(errInvalidParams, map[string]int{"limit": maxSubscriptions},
			"invalid params: already %d subscriptions; unsubscribe from one first", maxSubscriptions)
	}
	if err := hub.subscribe(uri); err != nil {
		return err
	}
	if s.uris == nil {
		s.uris = make(map[string]bool)
	}
	s.uris[uri] = true
	s.onChange()
	return nil
}

func (s *subscriptionSet) list() []string { return lockedKeys(&s.mu, &s.uris) }

func (s *subscriptionSet) remove(hub *resourceHub, uri string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.uris[uri] {
		delete(s.uris, uri)
		hub.unsubscribe(uri)
		s.onChange()
	}
}

func (s *subscriptionSet) has(uri string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.uris[uri]
}

func (s *subscriptionSet) clear(hub *resourceHub) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for uri := range s.uris {
		hub.unsubscribe(uri)
	}
	if len(s.uris) > 0 {
		s.onChange()
	}
	s.uris = nil
}
