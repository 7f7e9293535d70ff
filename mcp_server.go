package main

import (
	"context"
	"encoding/json"
	"log/slog"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Protocol versions this server speaks; the last is the newest and the answer
// to any version it does not know.
var protocolVersions = []string{"2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"}

const serverInstructions = "Inspect a running app in development: its Redux store, navigation state, " +
	"MMKV storage and the events that changed them. Start with debug_health_check to see whether the app " +
	"is connected and which streams it offers; then debug_get_state_path or debug_get_snapshot for current " +
	"state, debug_query_events for what happened, and debug_diff_snapshots for what changed between two snapshots."

// Client log levels of MCP logging, least severe first.
var logLevels = []string{"debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"}

// mcpServer is the MCP side of the program: one server — tools, resources,
// the adapter link — shared by every client (mcp_client.go) and by the
// stateless requests of the 2026-07-28 revision (mcp_era.go), whatever the
// transport. It dispatches to the tool and resource registries and fans
// server-to-client notifications out to whoever asked for them. Its
// methods are safe for concurrent use.
type mcpServer struct {
	cfg       config
	logger    *slog.Logger
	link      *adapterLink
	tools     *toolSet
	resources *resourceHub
	relay     forwarder // to the process holding the adapter port; nil: never relay
	redact    *redactor // nil when REDACT=off

	mu        sync.Mutex
	clients   map[*client]struct{}
	listeners map[*listener]struct{} // open 2026-07-28 subscriptions/listen requests

	subsChanged chan struct{} // cap 1: some client's resource subscriptions changed (rpc_relay.go)
}

// forwarder hands a request to another process that serves it; relay.forward
// (rpc_relay.go) says what ok and note mean.
type forwarder interface {
	forward(ctx context.Context, call *callInfo, req *request, urgent time.Duration) (result any, err error, note map[string]any, ok bool)
}

// method describes one MCP request or notification the server understands.
// Entries serve both eras unless marked.
type method struct {
	handle     func(s *mcpServer, ctx context.Context, params json.RawMessage) (any, error)
	beforeInit bool // may be called before initialize
	inline     bool // cheap, or ordered with later lines: run on the reading goroutine
	legacyOnly bool // removed in 2026-07-28: answered only without a modern _meta
	modernOnly bool // new in 2026-07-28: answered only with a modern _meta
}

var methods = map[string]method{
	"initialize":                {handle: (*mcpServer).initialize, beforeInit: true, inline: true, legacyOnly: true},
	"ping":                      {handle: (*mcpServer).ping, beforeInit: true, inline: true, legacyOnly: true},
	"notifications/initialized": {handle: (*mcpServer).clientInitialized, beforeInit: true, inline: true, legacyOnly: true},
	"logging/setLevel":          {handle: (*mcpServer).setLevel, inline: true, legacyOnly: true},
	"tools/list":                {handle: (*mcpServer).listTools, inline: true},
	"tools/call":                {handle: (*mcpServer).callTool},
	"resources/list":            {handle: (*mcpServer).listResources}, // a page may be 256 KiB: not on the reading path
	"resources/templates/list":  {handle: (*mcpServer).listResourceTemplates, inline: true},
	"resources/read":            {handle: (*mcpServer).readResource},
	"resources/subscribe":       {handle: (*mcpServer).subscribe, inline: true, legacyOnly: true},
	"resources/unsubscribe":     {handle: (*mcpServer).unsubscribe, inline: true, legacyOnly: true},
	"completion/complete":       {handle: (*mcpServer).complete}, // a path completion asks the adapter
	"prompts/list":              {handle: (*mcpServer).listPrompts, inline: true},
	"prompts/get":               {handle: (*mcpServer).getPrompt, inline: true},
	"server/discover":           {handle: (*mcpServer).discover, inline: true, modernOnly: true},
	"subscriptions/listen":      {handle: (*mcpServer).listen, modernOnly: true},
}

func newMCPServer(cfg config, logger *slog.Logger) *mcpServer {
	return &mcpServer{cfg: cfg, logger: logger, redact: newRedactor(cfg), clients: make(map[*client]struct{}),
		listeners: make(map[*listener]struct{}), subsChanged: make(chan struct{}, 1)}
}

func (s *mcpServer) subscriptionsChanged() {
	wake(s.subsChanged)
}

// heldURIs returns every resource URI some client or listen stream holds, sorted.
func (s *mcpServer) heldURIs() []string {
	var uris []string
	for _, c := range s.clientList() {
		uris = append(uris, c.subs.list()...)
	}
	for _, l := range s.listenerList() {
		uris = append(uris, l.subs.list()...)
	}
	slices.Sort(uris)
	return slices.Compact(uris)
}

func isInline(name string) bool { return methods[name].inline }

// isUrgent picks the requests for a transport's urgent lane (rpc_pool.go):
// calls of tools the tool table marks urgent.
func (s *mcpServer) isUrgent(req *request) bool {
	t := s.calledTool(req)
	return t != nil && t.urgent
}

// urgentBound is how long an urgent request's own answer may take (the
// health check's bound on its streams.list), or 0 for any other request.
func (s *mcpServer) urgentBound(req *request) time.Duration {
	if !s.isUrgent(req) {
		return 0
	}
	return s.tools.healthStreams
}

// calledTool is the tool a tools/call request names, read as callTool reads
// it, or nil.
func (s *mcpServer) calledTool(req *request) *tool {
	if req.Method != "tools/call" {
		return nil
	}
	name, _, err := toolCallParams(req.Params)
	if n, ok := wireString(name); ok && err == nil {
		return s.tools.byName[n]
	}
	return nil
}

// toolCallParams reads the name and arguments of tools/call params by
// walking the bytes rather than with json.Unmarshal: tools/call is the hot
// path, and reflection's deep stacks made every request goroutine grow its
// stack (41% of CPU in a profile of 1 000 pipelined calls). Names match as
// encoding/json matches them.
func toolCallParams(params json.RawMessage) (name, args []byte, err error) {
	if params == nil {
		return nil, nil, nil
	}
	err = eachMember(params, func(member string, value []byte) bool {
		switch {
		case strings.EqualFold(member, "name"):
			name = value
		case strings.EqualFold(member, "arguments"):
			args = value
		}
		return true
	})
	return name, args, err
}

func (s *mcpServer) addClient(c *client) {
	s.mu.Lock()
	s.clients[c] = struct{}{}
	s.mu.Unlock()
}

func (s *mcpServer) removeClient(c *client) {
	s.mu.Lock()
	delete(s.clients, c)
	s.mu.Unlock()
	c.close()
}

// dispatch runs one admitted request's handler, or relays it to the
// process holding the adapter port (rpc_relay.go). Results of 2026-07-28
// requests get that revision's shape (mcp_era.go).
func (s *mcpServer) dispatch(ctx context.Context, call *callInfo, req *request) (any, error) {
	if s.relay != nil {
		if result, err, note, ok := s.relay.forward(ctx, call, req, s.urgentBound(req)); ok {
			if raw, isRaw := result.(json.RawMessage); isRaw && err == nil {
				if t := s.calledTool(req); t != nil && t.aboutServer {
					result = json.RawMessage(addRelayNote(raw, note))
				}
			}
			return result, err
		}
	}
	result, err := methods[req.Method].handle(s, withCall(ctx, call), req.Params)
	if call.meta == nil {
		return result, err
	}
	return modernResult(req.Method, result, err)
}

func (s *mcpServer) initialize(ctx context.Context, params json.RawMessage) (any, error) {
	var p struct {
		ProtocolVersion *string `json:"protocolVersion"`
	}
	if err := decodeRequired(params, &p, "protocolVersion", &p.ProtocolVersion); err != nil {
		return nil, err
	}
	negotiated := protocolVersions[len(protocolVersions)-1]
	if slices.Contains(protocolVersions, *p.ProtocolVersion) {
		negotiated = *p.ProtocolVersion
	}
	if c := callFrom(ctx).client; c != nil {
		c.initialized.Store(true)
	}
	caps := serverCapabilities()
	caps["logging"] = map[string]any{}
	return map[string]any{
		"protocolVersion": negotiated,
		"capabilities":    caps,
		"serverInfo":      json.RawMessage(serverInfoJSON),
		"instructions":    serverInstructions,
	}, nil
}

// serverCapabilities are the capabilities both eras announce; the legacy
// era adds logging, which 2026-07-28 replaced by a per-request log level.
func serverCapabilities() map[string]any {
	return map[string]any{
		"tools":       map[string]any{},
		"resources":   map[string]bool{"subscribe": true, "listChanged": true},
		"completions": map[string]any{},
		"prompts":     map[string]bool{"listChanged": false},
	}
}

func (s *mcpServer) ping(context.Context, json.RawMessage) (any, error) { return struct{}{}, nil }

// clientInitialized opens the way for notifications. Waiting for it, rather
// than sending once initialize is answered, also guarantees that no
// notification can overtake the initialize reply on stdout.
func (s *mcpServer) clientInitialized(ctx context.Context, _ json.RawMessage) (any, error) {
	if c := callFrom(ctx).client; c != nil && c.initialized.Load() {
		c.ready.Store(true)
	}
	return nil, nil
}

func (s *mcpServer) setLevel(ctx context.Context, params json.RawMessage) (any, error) {
	var p struct {
		Level *string `json:"level"`
	}
	if err := decodeRequired(params, &p, "level", &p.Level); err != nil {
		return nil, err
	}
	i := slices.Index(logLevels, *p.Level)
	if i < 0 {
		return nil, rpcErrorf(errInvalidParams, nil, "invalid params: level %q is not one of %s", *p.Level, strings.Join(logLevels, ", "))
	}
	if c := callFrom(ctx).client; c != nil {
		c.level.Store(int32(i))
	}
	return struct{}{}, nil
}

// logToClient sends notifications/message to every legacy client that asked
// for messages at level or above. 2026-07-28 requests get none: their
// messages are request-scoped and this server's are not (mcp_era.go).
func (s *mcpServer) logToClient(level string, data any) {
	data = s.redact.Value(data)
	for _, c := range s.clientList() {
		c.log(level, data)
	}
}

// notifyClient sends a notification to every initialized legacy client and,
// for list changes, to every subscriptions/listen stream that opted in.
func (s *mcpServer) notifyClient(method string, params any) {
	if method == "notifications/resources/updated" {
		s.resourceUpdated(params)
		return
	}
	params, local := unwrapClientsOnly(params)
	for _, c := range s.clientList() {
		c.send(method, params)
	}
	if method == "notifications/resources/list_changed" && !local {
		for _, l := range s.listenerList() {
			if l.listChanged {
				l.deliver(method, map[string]any{})
			}
		}
	}
}

// resourceUpdated routes the hub's notifications/resources/updated to the
// clients and listen streams holding the URI.
func (s *mcpServer) resourceUpdated(params any) {
	params, local := unwrapClientsOnly(params)
	p, _ := params.(map[string]string)
	uri := p["uri"]
	for _, c := range s.clientList() {
		if c.subs.has(uri) {
			c.send("notifications/resources/updated", params)
		}
	}
	if local {
		return
	}
	for _, l := range s.listenerList() {
		if l.subs.has(uri) {
			l.deliver("notifications/resources/updated", map[string]any{"uri": uri})
		}
	}
}

func (s *mcpServer) clientList() []*client { return lockedKeys(&s.mu, &s.clients) }

func (s *mcpServer) listenerList() []*listener { return lockedKeys(&s.mu, &s.listeners) }

// lockedKeys returns the keys of *m, reading the field itself with mu
// held too: a map made on first use, or dropped, is written under mu.
func lockedKeys[K comparable, V any](mu *sync.Mutex, m *map[K]V) []K {
	mu.Lock()
	defer mu.Unlock()
	return slices.Collect(maps.Keys(*m))
}

func (s *mcpServer) listTools(_ context.Context, params json.RawMessage) (any, error) {
	if err := refuseCursor(params); err != nil {
		return nil, err
	}
	return s.tools.listJSON, nil
}

func (s *mcpServer) callTool(ctx context.Context, params json.RawMessage) (any, error) {
	name, args, err := toolCallParams(params)
	if err != nil {
		return nil, rpcErrorf(errInvalidParams, nil, "invalid params: %v", err)
	}
	if name == nil || string(name) == "null" {
		return nil, rpcErrorf(errInvalidParams, nil, `invalid params: "name" is required`)
	}
	toolName, ok := wireString(name)
	if !ok {
		return nil, rpcErrorf(errInvalidParams, nil, `invalid params: "name" must be a string, not %s`, jsonKind(name))
	}
	t := s.tools.byName[toolName]
	if t == nil {
		return nil, rpcErrorf(errInvalidParams, map[string]any{"tool": toolName, "available": s.tools.names},
			"invalid params: unknown tool %q", toolName)
	}
	ctx, done := callContext(ctx, t, params)
	defer done()
	return s.tools.call(ctx, t, args), nil
}

// listResources answers one page of the listing; an adapter may advertise
// any number of MMKV instances (see resourceHub.listPage).
func (s *mcpServer) listResources(_ context.Context, params json.RawMessage) (any, error) {
	var p struct {
		Cursor *string `json:"cursor"`
	}
	if err := decodeParams(params, &p); err != nil {
		return nil, err
	}
	start := 0
	if p.Cursor != nil {
		pos, ok := parseListCursor(*p.Cursor)
		if !ok {
			// Clipped: an error must not echo a megabyte of the client's input.
			return nil, rpcErrorf(errInvalidParams, nil,
				"invalid params: cursor %s was not issued by this server; pass a nextCursor back unchanged, or none for the first page",
				strconv.Quote(clipText(*p.Cursor, 64)))
		}
		start = pos
	}
	return s.resources.listPage(start), nil
}

func (s *mcpServer) listResourceTemplates(_ context.Context, params json.RawMessage) (any, error) {
	if err := refuseCursor(params); err != nil {
		return nil, err
	}
	return map[string]any{"resourceTemplates": resourceTemplates}, nil
}

func (s *mcpServer) readResource(ctx context.Context, params json.RawMessage) (any, error) {
	uri, err := uriParam(params)
	if err != nil {
		return nil, err
	}
	return s.resources.read(ctx, uri)
}

func (s *mcpServer) subscribe(ctx context.Context, params json.RawMessage) (any, error) {
	uri, err := uriParam(params)
	if err != nil {
		return nil, err
	}
	if _, _, ok := parseURI(uri); !ok {
		return nil, resourceNotFound(uri)
	}
	c := callFrom(ctx).client
	if c == nil {
		return struct{}{}, nil
	}
	return struct{}{}, c.subs.add(s.resources, uri)
}

func (s *mcpServer) unsubscribe(ctx context.Context, params json.RawMessage) (any, error) {
	uri, err := uriParam(params)
	if err != nil {
		return nil, err
	}
	if c := callFrom(ctx).client; c != nil {
		c.subs.remove(s.resources, uri)
	}
	return struct{}{}, nil
}

func (s *mcpServer) complete(ctx context.Context, params json.RawMessage) (any, error) {
	var p struct {
		Ref *struct {
			Type string `json:"type"`
			URI  string `json:"uri"`
			Name string `json:"name"`
		} `json:"ref"`
		Argument *struct {
			Name  string `json:"name"`
			Value string `json:"value"`
		} `json:"argument"`
		Context struct {
			Arguments map[string]string `json:"arguments"`
		} `json:"context"`
	}
	if err := decodeParams(params, &p); err != nil {
		return nil, err
	}
	if p.Ref == nil || p.Argument == nil {
		return nil, rpcErrorf(errInvalidParams, nil, `invalid params: "ref" and "argument" are required`)
	}
	var values []string
	var err error
	if p.Ref.Type == "ref/prompt" {
		values, err = completePrompt(ctx, serverLookups{s}, p.Ref.Name, p.Argument.Name, p.Argument.Value, p.Context.Arguments)
	} else {
		values, err = s.resources.complete(p.Ref.Type, p.Ref.URI, p.Argument.Name, p.Argument.Value)
	}
	if err != nil {
		return nil, err
	}
	const maxValues = 100 // the protocol's cap per reply
	total := len(values)
	values = values[:min(total, maxValues)]
	return map[string]any{"completion": map[string]any{"values": values, "total": total, "hasMore": total > maxValues}}, nil
}

// onLinkEvent turns adapter link events into client notifications. It is
// called from the link's goroutines and never blocks for long.
func (s *mcpServer) onLinkEvent(ev linkEvent) {
	switch {
	case ev.Kind == linkEventPushed:
		s.resources.eventPushed(ev.Stream)
		return
	case ev.Kind == linkNotice:
		s.logToClient(ev.Level, map[string]string{"event": ev.Notice, "sessionId": ev.SessionID, "detail": ev.Detail})
		return
	case ev.Kind == linkConnected && ev.Replaced != "":
		s.logToClient("notice", map[string]string{"event": "adapter replaced", "sessionId": ev.SessionID, "replaced": ev.Replaced})
	case ev.Kind == linkConnected:
		s.logToClient("info", map[string]string{"event": "adapter connected", "sessionId": ev.SessionID})
	case ev.Kind == linkDisconnected && ev.Reason != "replaced":
		s.logToClient("warning", map[string]string{"event": "adapter disconnected", "sessionId": ev.SessionID, "reason": ev.Reason})
	case ev.Kind == linkStreamsChanged:
		s.logToClient("info", map[string]string{"event": "streams changed", "sessionId": ev.SessionID})
	case ev.Kind == linkSessionExpired:
		s.logToClient("info", map[string]string{"event": "session expired", "sessionId": ev.SessionID})
	default:
		return // a replaced adapter's end: its successor's connect says it all
	}
	// Each of these may change the listing and what every resource reads.
	s.resources.listMayHaveChanged()
	s.resources.adapterChanged()
}
