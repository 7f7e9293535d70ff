package main

// Streamable HTTP: the MCP endpoint /mcp, for both eras. A POST whose body
// carries a 2026-07-28 _meta is served statelessly, its headers checked
// against the body, with subscriptions/listen as a long-lived SSE response.
// Anything else is the legacy transport, with sessions (rpc_http_session.go).
// The transport only moves JSON-RPC messages: decoding is rpc_message.go's,
// dispatch the MCP core's.

import (
	"bytes"
	"context"
	"crypto/subtle"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"
)

// Bounds of the HTTP transport; each is named in the error that enforces it.
const (
	maxHTTPBodyBytes   = maxLineBytes     // one JSON-RPC message, as on stdio
	maxHTTPSessions    = 64               // legacy sessions at once
	maxHTTPStreams     = 32               // SSE streams open at once (GET and subscriptions/listen)
	sessionIdleTimeout = 30 * time.Minute // an idle session may be dropped to make room for a new one
	sseKeepAlive       = 15 * time.Second // comment line on quiet streams, so intermediaries keep them
	sseQueueLen        = 256              // notifications waiting for a slow stream; more are dropped
	// httpShutdownWait bounds the wait for requests being served when the
	// transport stops: half of the process's shutdown grace (main.go).
	httpShutdownWait = 450 * time.Millisecond
)

const mcpPath = "/mcp"

// httpTransport serves MCP over Streamable HTTP; it is an http.Handler.
type httpTransport struct {
	srv       *mcpServer
	cfg       config
	checkHost func(*http.Request) string // why a request's Host or Origin is refused, or ""
	logger    *slog.Logger

	stopping  chan struct{} // closed by close: streams end, listen requests answer
	closeOnce sync.Once
	streams   chan struct{} // one token per open SSE stream, cap maxHTTPStreams
	requests  chan struct{} // one token per POST being served, cap maxInFlight
	waiting   chan struct{} // one token per call that waits for the app, cap maxWaiting

	mu       sync.Mutex
	sessions map[string]*httpSession
}

func newHTTPTransport(srv *mcpServer, cfg config, checkHost func(*http.Request) string, logger *slog.Logger) *httpTransport {
	return &httpTransport{srv: srv, cfg: cfg, checkHost: checkHost, logger: logger, stopping: make(chan struct{}),
		streams: make(chan struct{}, maxHTTPStreams), requests: make(chan struct{}, maxInFlight), waiting: make(chan struct{}, maxWaiting),
		sessions: make(map[string]*httpSession)}
}

// close ends every stream and session. Safe to call twice.
func (t *httpTransport) close() {
	t.closeOnce.Do(func() {
		close(t.stopping)
		t.mu.Lock()
		sessions := t.sessions
		t.sessions = map[string]*httpSession{}
		t.mu.Unlock()
		for _, s := range sessions {
			s.end()
		}
	})
}

// serveHTTP runs the HTTP transport on cfg.HTTPAddr until ctx ends. Stdin
// is not read: the process serves until SIGINT or SIGTERM.
func serveHTTP(ctx context.Context, srv *mcpServer, cfg config, checkHost func(*http.Request) string, logger *slog.Logger) error {
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", cfg.HTTPAddr)
	if err != nil {
		return fmt.Errorf("MCP HTTP listener on %s (MCP_HTTP_ADDR): %w", cfg.HTTPAddr, err)
	}
	t := newHTTPTransport(srv, cfg, checkHost, logger)
	hs := &http.Server{
		Handler:           t,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       60 * time.Second, // bodies are bounded; a slow sender is cut off
		// No WriteTimeout: SSE streams (GET, subscriptions/listen) are long-lived
		// by design; each ends with its client, its session or the server.
		IdleTimeout:    2 * time.Minute,
		MaxHeaderBytes: 64 << 10,
		ErrorLog:       slog.NewLogLogger(logger.Handler(), slog.LevelDebug),
	}
	auth := "none (loopback only)"
	if cfg.HTTPToken != "" {
		auth = "bearer token (MCP_HTTP_TOKEN)"
	}
	logger.Info("MCP over Streamable HTTP", "url", "http://"+ln.Addr().String()+mcpPath, "auth", auth)
	served := make(chan error, 1)
	go func() { served <- hs.Serve(ln) }()
	select {
	case err = <-served:
	case <-ctx.Done():
	}
	t.close()
	shutdownCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), httpShutdownWait)
	defer cancel()
	if hs.Shutdown(shutdownCtx) != nil {
		hs.Close()
	}
	if err == nil {
		err = <-served
	}
	if errors.Is(err, http.ErrServerClosed) {
		err = nil
	}
	return err
}

// ServeHTTP applies the checks every request to /mcp passes — path, Host
// and Origin against DNS rebinding, the bearer token — then serves it.
func (t *httpTransport) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != mcpPath {
		http.Error(w, "not found: the MCP endpoint is "+mcpPath, http.StatusNotFound)
		return
	}
	// The adapter port's rebinding rules (checkUpgrade, wire_handshake.go).
	if reason := t.checkHost(r); reason != "" {
		t.logger.Warn("refused an MCP HTTP request", "reason", reason, "remote", r.RemoteAddr)
		writeRPCError(w, http.StatusForbidden, nil, rpcErrorf(errInvalidRequest, nil, "forbidden: %s", reason))
		return
	}
	if t.cfg.HTTPToken != "" && !bearerMatches(r.Header.Get("Authorization"), t.cfg.HTTPToken) {
		w.Header().Set("WWW-Authenticate", `Bearer realm="devtools-mcp"`)
		writeRPCError(w, http.StatusUnauthorized, nil, rpcErrorf(errInvalidRequest, nil,
			"unauthorized: send Authorization: Bearer <MCP_HTTP_TOKEN>"))
		return
	}
	switch r.Method {
	case http.MethodPost:
		t.post(w, r)
	case http.MethodGet:
		t.get(w, r)
	case http.MethodDelete:
		t.delete(w, r)
	default:
		w.Header().Set("Allow", "GET, POST, DELETE")
		writeRPCError(w, http.StatusMethodNotAllowed, nil, rpcErrorf(errInvalidRequest, nil,
			"method not allowed: %s; the MCP endpoint takes POST (and GET, DELETE for legacy sessions)", r.Method))
	}
}

// parseHTTPMessage decodes one POST body as strictly as stdio does
// (decodeMessage). A body is one message: batches were removed from MCP in
// 2025-06-18. isResponse marks a client's JSON-RPC response, which the
// server has no use for.
func parseHTTPMessage(body []byte) (req request, isResponse bool, err *rpcError) {
	body = bytes.TrimSpace(body)
	switch {
	case len(body) == 0:
		return req, false, rpcErrorf(errInvalidRequest, nil, "invalid request: empty body; send one JSON-RPC message")
	case nestingExceeds(body, maxNestingDepth):
		return req, false, rpcErrorf(errInvalidRequest, map[string]int{"limit": maxNestingDepth},
			"invalid request: nesting deeper than %d levels", maxNestingDepth)
	case !json.Valid(body):
		return req, false, rpcErrorf(errParse, nil, "parse error: %s", syntaxError(body))
	case body[0] == '[':
		return req, false, rpcErrorf(errInvalidRequest, nil, "invalid request: batches are not accepted over HTTP; POST one message at a time")
	}
	req, e := decodeMessage(body)
	if e != nil && !errors.Is(e, errClientResponse) {
		return req, false, asRPCError(e)
	}
	return req, e != nil, nil
}

// post serves one JSON-RPC message, at most maxInFlight (as on stdio) at once.
func (t *httpTransport) post(w http.ResponseWriter, r *http.Request) {
	// A request holds a token while it is served; one that waits for the
	// app trades it for one of the waiting ones once it is read, so that
	// waits do not crowd out every other request.
	release := func() { <-t.requests }
	select {
	case t.requests <- struct{}{}:
		defer func() { release() }()
	default:
		writeRPCError(w, http.StatusServiceUnavailable, nil, rpcErrorf(errInvalidRequest, map[string]int{"limit": cap(t.requests)},
			"service unavailable: %d requests are being served, the limit; retry when one has been answered", cap(t.requests)))
		return
	}
	if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mt != "application/json" {
		writeRPCError(w, http.StatusUnsupportedMediaType, nil, rpcErrorf(errInvalidRequest, nil,
			"invalid request: Content-Type must be application/json, not %q", r.Header.Get("Content-Type")))
		return
	}
	if !accepts(r, "application/json") || !accepts(r, "text/event-stream") {
		writeRPCError(w, http.StatusNotAcceptable, nil, rpcErrorf(errInvalidRequest, nil,
			"not acceptable: Accept must list both application/json and text/event-stream"))
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxHTTPBodyBytes))
	if err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			writeRPCError(w, http.StatusRequestEntityTooLarge, nil, rpcErrorf(errInvalidRequest, map[string]int64{"limit": maxHTTPBodyBytes},
				"invalid request: body exceeds the %d-byte (16 MiB) limit", int64(maxHTTPBodyBytes)))
			return
		}
		writeRPCError(w, http.StatusBadRequest, nil, rpcErrorf(errInvalidRequest, nil, "invalid request: reading the body: %v", err))
		return
	}
	req, isResponse, rerr := parseHTTPMessage(body)
	switch {
	case isResponse:
		w.WriteHeader(http.StatusAccepted)
		return
	case rerr != nil:
		writeRPCError(w, http.StatusBadRequest, req.ID, rerr)
		return
	}
	if t.srv.waits(&req) {
		select {
		case t.waiting <- struct{}{}:
			<-t.requests
			release = func() { <-t.waiting }
		default: // past maxWaiting: served like any request, the tool's own bound refuses it
		}
	}
	session, status, serr := t.sessionFor(r)
	initialized := session != nil && session.client.initialized.Load()
	meta, merr := readRequestMeta(req.Params, initialized)
	if merr != nil {
		writeRPCError(w, http.StatusBadRequest, req.ID, asRPCError(merr))
		return
	}
	if meta != nil {
		t.postModern(w, r, &req, meta)
		return
	}
	if v := r.Header.Get("MCP-Protocol-Version"); slices.Contains(modernVersions, v) && session == nil && req.Method != "initialize" {
		// A 2026-07-28 request whose body lacks the version: malformed, not legacy.
		writeRPCError(w, http.StatusBadRequest, req.ID, rpcErrorf(errInvalidParams, nil,
			"invalid params: _meta %q is required (MCP-Protocol-Version is %s)", metaProtocolVersion, v))
		return
	}
	if serr != nil && !(status == http.StatusBadRequest && req.Method == "initialize") {
		writeRPCError(w, status, req.ID, serr)
		return
	}
	t.postLegacy(w, r, &req, session)
}

// postModern serves a 2026-07-28 request: headers checked against the
// body, no session, a JSON reply or, for subscriptions/listen, a stream.
func (t *httpTransport) postModern(w http.ResponseWriter, r *http.Request, req *request, meta *requestMeta) {
	if err := checkModernHeaders(r.Header, req, meta); err != nil {
		writeRPCError(w, http.StatusBadRequest, req.ID, err)
		return
	}
	if req.isNotification() {
		// Closing a response stream is how HTTP cancels: no notification
		// of this revision needs an answer or an effect.
		w.WriteHeader(http.StatusAccepted)
		return
	}
	if m, ok := methods[req.Method]; !ok || m.legacyOnly {
		writeRPCError(w, http.StatusNotFound, req.ID, asRPCError(modernMethodNotFound(req.Method)))
		return
	}
	req.Info = meta
	call := &callInfo{id: req.ID, meta: meta, stopped: t.stopping}
	handle := func(ctx context.Context, req *request) (any, error) { return t.srv.dispatch(ctx, call, req) }
	// A call that asked for progress gets this revision's way to see it:
	// the notifications on the request's own stream, then the reply.
	if req.Method == "subscriptions/listen" || asksProgress(req) {
		t.stream(w, make(sseQueue, sseQueueLen), func(send func(string, any)) []byte {
			call.send = send
			return reply(r.Context(), handle, t.logger, req)
		})
		return
	}
	writeJSON(w, http.StatusOK, reply(r.Context(), handle, t.logger, req))
}

// stream answers with an SSE stream: run gets a send function for the
// request's notifications and returns the final reply. The stream ends
// when run returns; run's context ends when the client goes.
func (t *httpTransport) stream(w http.ResponseWriter, q sseQueue, run func(send func(string, any)) []byte) {
	select {
	case t.streams <- struct{}{}:
		defer func() { <-t.streams }()
	default:
		writeRPCError(w, http.StatusServiceUnavailable, nil, rpcErrorf(errInvalidRequest, map[string]int{"limit": maxHTTPStreams},
			"service unavailable: %d streams are open, the limit (maxHTTPStreams); close one first", maxHTTPStreams))
		return
	}
	final := make(chan []byte, 1)
	go func() { final <- run(q.send) }()
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no") // proxies must not hold events back
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)
	_ = rc.Flush()
	event := func(data []byte) {
		fmt.Fprintf(w, "event: message\ndata: %s\n\n", bytes.ToValidUTF8(data, []byte("\uFFFD")))
		_ = rc.Flush()
	}
	tick := time.NewTicker(sseKeepAlive)
	defer tick.Stop()
	for {
		select {
		case ev := <-q:
			event(ev)
		case msg := <-final:
			for len(q) > 0 { // this loop alone receives from q
				event(<-q)
			}
			if msg != nil {
				event(msg)
			}
			return
		case <-tick.C:
			_, _ = io.WriteString(w, ":\n\n") // a comment line
			_ = rc.Flush()
		}
	}
}

// sseQueue holds notifications for one stream. send never blocks: a
// stream that does not keep up loses notifications, not the server.
type sseQueue chan []byte

func (q sseQueue) send(method string, params any) {
	data, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "method": method, "params": params})
	if err != nil {
		return
	}
	select {
	case q <- data:
	default:
	}
}

func writeJSON(w http.ResponseWriter, status int, body []byte) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(bytes.ToValidUTF8(body, []byte("\uFFFD")))
}

// writeRPCError answers with a JSON-RPC error; id is nil when unknown.
func writeRPCError(w http.ResponseWriter, status int, id json.RawMessage, err *rpcError) {
	writeJSON(w, status, encodeReply(id, nil, err))
}

// The headers of Streamable HTTP requests: the bearer token, Accept, and
// 2026-07-28's request metadata headers checked against the body.

func bearerMatches(header, token string) bool {
	scheme, value, ok := strings.Cut(header, " ")
	return ok && strings.EqualFold(scheme, "Bearer") &&
		subtle.ConstantTimeCompare([]byte(strings.TrimSpace(value)), []byte(token)) == 1
}

// accepts reports whether the Accept header lists mediaType (or a wildcard
// covering it).
func accepts(r *http.Request, mediaType string) bool {
	major, _, _ := strings.Cut(mediaType, "/")
	for _, v := range r.Header.Values("Accept") {
		for item := range strings.SplitSeq(v, ",") {
			mt, _, err := mime.ParseMediaType(strings.TrimSpace(item))
			if err == nil && (mt == mediaType || mt == "*/*" || mt == major+"/*") {
				return true
			}
		}
	}
	return false
}

// checkModernHeaders applies the transport's request metadata rules:
// MCP-Protocol-Version, Mcp-Method and, for the named methods, Mcp-Name
// must be present and equal the body's values.
func checkModernHeaders(h http.Header, req *request, meta *requestMeta) *rpcError {
	check := func(name, body string) *rpcError {
		values := h.Values(name)
		switch {
		case len(values) == 0:
			return rpcErrorf(errHeaderMismatch, nil, "Header mismatch: required header %s is missing", name)
		case len(values) > 1:
			return rpcErrorf(errHeaderMismatch, nil, "Header mismatch: header %s appears %d times", name, len(values))
		}
		value := values[0]
		if strings.ContainsFunc(value, func(r rune) bool { return (r < 0x20 || r > 0x7e) && r != '\t' }) {
			return rpcErrorf(errHeaderMismatch, nil, "Header mismatch: %s holds a character outside visible ASCII", name)
		}
		if name == "Mcp-Name" {
			decoded, ok := decodeHeaderValue(value)
			if !ok {
				return rpcErrorf(errHeaderMismatch, nil, "Header mismatch: %s holds invalid =?base64?…?= encoding", name)
			}
			value = decoded
		}
		if value != body {
			return rpcErrorf(errHeaderMismatch, nil, "Header mismatch: %s header value %q does not match body value %q", name, value, body)
		}
		return nil
	}
	if err := check("MCP-Protocol-Version", meta.version); err != nil {
		return err
	}
	if err := check("Mcp-Method", req.Method); err != nil {
		return err
	}
	member := nameMembers[req.Method]
	if member == "" {
		return nil
	}
	value, ok := wireString(rawMember(req.Params, member))
	if !ok {
		// The body is wrong, not the headers: the handler names the param.
		return nil
	}
	return check("Mcp-Name", value)
}

// nameMembers are the params members that 2026-07-28's Mcp-Name header
// repeats, by method.
var nameMembers = map[string]string{"tools/call": "name", "prompts/get": "name", "resources/read": "uri"}

// decodeHeaderValue undoes the =?base64?…?= sentinel encoding of Mcp-Name
// and Mcp-Param-* values; other values are returned as they are.
func decodeHeaderValue(v string) (string, bool) {
	inner, prefixed := strings.CutPrefix(v, "=?base64?")
	inner, suffixed := strings.CutSuffix(inner, "?=")
	if !prefixed || !suffixed {
		return v, true
	}
	data, err := base64.StdEncoding.DecodeString(inner)
	if err != nil || !utf8.Valid(data) {
		return "", false
	}
	return string(data), true
}
