package main

// The legacy half of Streamable HTTP (2025-03-26 to 2025-11-25): sessions
// opened by initialize and named by MCP-Session-Id, each one client of the
// shared server, with a GET stream for its notifications and DELETE to end
// it. 2026-07-28 has none of this (rpc_http.go).

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/http"
	"slices"
	"strings"
	"sync/atomic"
	"time"
)

// httpSession is one legacy session: a client of the shared server.
type httpSession struct {
	id       string
	client   *client
	ctx      context.Context // ends with the session: its requests stop
	cancel   context.CancelFunc
	lastUsed atomic.Int64             // unix nanoseconds
	queue    atomic.Pointer[sseQueue] // the GET stream's, nil when none is open
	calls    inFlightCalls
}

func (s *httpSession) notify(method string, params any) {
	if q := s.queue.Load(); q != nil {
		q.send(method, params)
	}
}

// end stops the session's requests and releases its client.
func (s *httpSession) end() {
	s.cancel()
	s.client.srv.removeClient(s.client)
}

// sessionFor finds the session a request names. With no MCP-Session-Id it
// returns 400; with an unknown one, 404.
func (t *httpTransport) sessionFor(r *http.Request) (*httpSession, int, *rpcError) {
	id := r.Header.Get("MCP-Session-Id")
	if id == "" {
		return nil, http.StatusBadRequest, rpcErrorf(errInvalidRequest, nil,
			"bad request: MCP-Session-Id header is required; initialize first, or stamp requests with the 2026-07-28 _meta")
	}
	t.mu.Lock()
	s := t.sessions[id]
	t.mu.Unlock()
	if s == nil {
		return nil, http.StatusNotFound, rpcErrorf(errInvalidRequest, nil, "session not found: %q has ended or never existed; initialize again", id)
	}
	s.lastUsed.Store(time.Now().UnixNano())
	return s, 0, nil
}

// newSession opens a session, dropping idle ones when maxHTTPSessions are open.
func (t *httpTransport) newSession() (*httpSession, *rpcError) {
	var buf [16]byte
	_, _ = rand.Read(buf[:])
	ctx, cancel := context.WithCancel(context.Background())
	s := &httpSession{id: hex.EncodeToString(buf[:]), ctx: ctx, cancel: cancel}
	s.lastUsed.Store(time.Now().UnixNano())
	s.client = newClient(t.srv, "http session "+s.id[:8], s.notify, ctx.Done())
	var idle []*httpSession
	t.mu.Lock()
	if isClosed(t.stopping) {
		t.mu.Unlock()
		cancel()
		return nil, rpcErrorf(errInternal, nil, "internal error: the server is stopping")
	}
	if len(t.sessions) >= maxHTTPSessions {
		cutoff := time.Now().Add(-sessionIdleTimeout).UnixNano()
		for id, old := range t.sessions {
			if old.lastUsed.Load() < cutoff {
				delete(t.sessions, id)
				idle = append(idle, old)
			}
		}
	}
	full := len(t.sessions) >= maxHTTPSessions
	if !full {
		t.sessions[s.id] = s
	}
	t.mu.Unlock()
	for _, old := range idle {
		old.end()
	}
	if full {
		cancel()
		return nil, rpcErrorf(errInvalidRequest, map[string]int{"limit": maxHTTPSessions},
			"service unavailable: %d sessions are open, the limit (maxHTTPSessions); DELETE one or retry later", maxHTTPSessions)
	}
	t.srv.addClient(s.client)
	return s, nil
}

func (t *httpTransport) dropSession(s *httpSession) {
	t.mu.Lock()
	_, ok := t.sessions[s.id]
	delete(t.sessions, s.id)
	t.mu.Unlock()
	if ok {
		s.end()
	}
}

// postLegacy serves a message of a legacy session; initialize without a
// session opens one.
func (t *httpTransport) postLegacy(w http.ResponseWriter, r *http.Request, req *request, s *httpSession) {
	if v := r.Header.Get("MCP-Protocol-Version"); v != "" && !slices.Contains(protocolVersions, v) && s != nil {
		writeRPCError(w, http.StatusBadRequest, req.ID, rpcErrorf(errInvalidRequest, map[string]any{"supported": protocolVersions},
			"bad request: MCP-Protocol-Version %q is not one this session speaks (%s)", v, strings.Join(protocolVersions, ", ")))
		return
	}
	opened := false
	if s == nil {
		if req.isNotification() {
			writeRPCError(w, http.StatusBadRequest, nil, rpcErrorf(errInvalidRequest, nil, "bad request: initialize must be a request"))
			return
		}
		var err *rpcError
		if s, err = t.newSession(); err != nil {
			writeRPCError(w, http.StatusServiceUnavailable, req.ID, err)
			return
		}
		opened = true
	}
	c := s.client
	if req.isNotification() {
		if req.Method == "notifications/cancelled" {
			s.calls.cancel(req.Params)
		} else if c.admit(req) == nil {
			_, _ = callSafely(s.ctx, c.handle, t.logger, req)
		}
		w.WriteHeader(http.StatusAccepted)
		return
	}
	var out []byte
	if err := c.admit(req); err != nil {
		out = encodeReply(req.ID, nil, asRPCError(err))
	} else {
		// A dropped connection is not a cancellation in this era; the
		// request ends with its session or notifications/cancelled.
		ctx, cancel := context.WithCancel(s.ctx)
		if t.srv.waits(req) {
			// A call that waits answers nobody once its client has
			// gone: it ends then, rather than wait out its timeout.
			stop := context.AfterFunc(r.Context(), cancel)
			defer stop()
		}
		s.calls.track(req.ID, cancel)
		out = reply(ctx, c.handle, t.logger, req)
		s.calls.finish(req.ID)
		cancel()
	}
	if opened {
		if !c.initialized.Load() {
			t.dropSession(s)
		} else {
			w.Header().Set("MCP-Session-Id", s.id)
		}
	}
	writeJSON(w, http.StatusOK, out)
}

// refuseModern answers 405 to a 2026-07-28 request for what only legacy
// sessions have, saying why, and reports whether it did.
func refuseModern(w http.ResponseWriter, r *http.Request, why string) bool {
	if !slices.Contains(modernVersions, r.Header.Get("MCP-Protocol-Version")) {
		return false
	}
	w.Header().Set("Allow", "POST")
	writeRPCError(w, http.StatusMethodNotAllowed, nil, rpcErrorf(errInvalidRequest, nil, "method not allowed: %s", why))
	return true
}

// get opens a legacy session's notification stream. 2026-07-28 removed it.
func (t *httpTransport) get(w http.ResponseWriter, r *http.Request) {
	if refuseModern(w, r, "2026-07-28 has no GET stream; POST subscriptions/listen") {
		return
	}
	if !accepts(r, "text/event-stream") {
		writeRPCError(w, http.StatusNotAcceptable, nil, rpcErrorf(errInvalidRequest, nil, "not acceptable: Accept must list text/event-stream"))
		return
	}
	s, status, err := t.sessionFor(r)
	if err != nil {
		writeRPCError(w, status, nil, err)
		return
	}
	q := make(sseQueue, sseQueueLen)
	if !s.queue.CompareAndSwap(nil, &q) {
		writeRPCError(w, http.StatusConflict, nil, rpcErrorf(errInvalidRequest, map[string]int{"limit": 1},
			"conflict: this session already has its GET stream open (one per session)"))
		return
	}
	defer s.queue.CompareAndSwap(&q, nil)
	t.stream(w, q, func(func(string, any)) []byte {
		select {
		case <-r.Context().Done():
		case <-s.ctx.Done():
		case <-t.stopping:
		}
		return nil
	})
}

func (t *httpTransport) delete(w http.ResponseWriter, r *http.Request) {
	if refuseModern(w, r, "2026-07-28 has no sessions to delete") {
		return
	}
	s, status, err := t.sessionFor(r)
	if err != nil {
		writeRPCError(w, status, nil, err)
		return
	}
	t.dropSession(s)
	w.WriteHeader(http.StatusNoContent)
}
