package main

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"slices"
	"strings"
	"sync/atomic"
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

// mcpServer is the MCP side of the program: lifecycle, dispatch to the tool
// and resource registries, and server-to-client notifications. Its methods
// are safe for concurrent use.
type mcpServer struct {
	cfg       config
	logger    *slog.Logger
	link      *adapterLink
	tools     *toolSet
	resources *resourceHub
	rpc       *rpcConn

	initialized atomic.Bool  // initialize answered: other requests are admitted
	clientReady atomic.Bool  // notifications/initialized received: notifications may go out
	clientLevel atomic.Int32 // index into logLevels; -1 until logging/setLevel

	closed atomic.Bool // set when serving ends: no more notifications
}

// method describes one MCP request or notification the server understands.
type method struct {
	handle     func(s *mcpServer, ctx context.Context, params json.RawMessage) (any, error)
	beforeInit bool // may be called before initialize
	inline     bool // cheap, or ordered with later lines: run on the reading goroutine
}

var methods = map[string]method{
	"initialize":                {handle: (*mcpServer).initialize, beforeInit: true, inline: true},
	"ping":                      {handle: (*mcpServer).ping, beforeInit: true, inline: true},
	"notifications/initialized": {handle: (*mcpServer).clientInitialized, beforeInit: true, inline: true},
	"logging/setLevel":          {handle: (*mcpServer).setLevel, inline: true},
	"tools/list":                {handle: (*mcpServer).listTools, inline: true},
	"tools/call":                {handle: (*mcpServer).callTool},
	"resources/list":            {handle: (*mcpServer).listResources, inline: true},
	"resources/templates/list":  {handle: (*mcpServer).listResourceTemplates, inline: true},
	"resources/read":            {handle: (*mcpServer).readResource},
	"resources/subscribe":       {handle: (*mcpServer).subscribe, inline: true},
	"resources/unsubscribe":     {handle: (*mcpServer).unsubscribe, inline: true},
	"completion/complete":       {handle: (*mcpServer).complete}, // a path completion asks the adapter
	"prompts/list":              {handle: (*mcpServer).listPrompts, inline: true},
	"prompts/get":               {handle: (*mcpServer).getPrompt, inline: true},
}

func newMCPServer(cfg config, logger *slog.Logger, stdout io.Writer) *mcpServer {
	s := &mcpServer{cfg: cfg, logger: logger}
	s.clientLevel.Store(-1)
	s.rpc = newRPCConn(stdout, s.handle, isInline, s.admit, logger)
	return s
}

func isInline(name string) bool { return methods[name].inline }

// serve answers MCP on stdin until EOF or ctx ends; every reply to a request
// already read is written before it returns.
func (s *mcpServer) serve(ctx context.Context, stdin io.Reader) error {
	err := s.rpc.serve(ctx, stdin)
	s.closed.Store(true)
	return err
}

// admit refuses unknown methods and, until initialize has been answered,
// everything but initialize and ping. It runs in arrival order.
func (s *mcpServer) admit(req *request) error {
	m, ok := methods[req.Method]
	if !ok {
		if req.Method == "server/discover" {
			return rpcErrorf(errMethodNotFound, nil, "method not found: server/discover is not supported yet; use initialize")
		}
		return rpcErrorf(errMethodNotFound, nil, "method not found: %q", req.Method)
	}
	if !m.beforeInit && !s.initialized.Load() {
		return rpcErrorf(errInvalidRequest, nil, "server not initialized: send initialize first")
	}
	return nil
}

func (s *mcpServer) handle(ctx context.Context, req *request) (any, error) {
	return methods[req.Method].handle(s, ctx, req.Params)
}

func (s *mcpServer) initialize(_ context.Context, params json.RawMessage) (any, error) {
	var p struct {
		ProtocolVersion *string `json:"protocolVersion"`
	}
	if err := decodeParams(params, &p); err != nil {
		return nil, err
	}
	if p.ProtocolVersion == nil {
		return nil, rpcErrorf(errInvalidParams, nil, `invalid params: "protocolVersion" is required`)
	}
	negotiated := protocolVersions[len(protocolVersions)-1]
	if slices.Contains(protocolVersions, *p.ProtocolVersion) {
		negotiated = *p.ProtocolVersion
	}
	s.initialized.Store(true)
	return map[string]any{
		"protocolVersion": negotiated,
		"capabilities": map[string]any{
			"tools":       map[string]any{},
			"resources":   map[string]bool{"subscribe": true, "listChanged": true},
			"logging":     map[string]any{},
			"completions": map[string]any{},
			"prompts":     map[string]bool{"listChanged": false},
		},
		"serverInfo": map[string]string{
			"name":    "devtools-mcp",
			"title":   "App DevTools (Redux, navigation, MMKV)",
			"version": version,
		},
		"instructions": serverInstructions,
	}, nil
}

func (s *mcpServer) ping(context.Context, json.RawMessage) (any, error) { return struct{}{}, nil }

// clientInitialized opens the way for notifications. Waiting for it, rather
// than sending once initialize is answered, also guarantees that no
// notification can overtake the initialize reply on stdout.
func (s *mcpServer) clientInitialized(context.Context, json.RawMessage) (any, error) {
	if s.initialized.Load() {
		s.clientReady.Store(true)
	}
	return nil, nil
}

func (s *mcpServer) setLevel(_ context.Context, params json.RawMessage) (any, error) {
	var p struct {
		Level *string `json:"level"`
	}
	if err := decodeParams(params, &p); err != nil {
		return nil, err
	}
	if p.Level == nil {
		return nil, rpcErrorf(errInvalidParams, nil, `invalid params: "level" is required`)
	}
	i := slices.Index(logLevels, *p.Level)
	if i < 0 {
		return nil, rpcErrorf(errInvalidParams, nil, "invalid params: level %q is not one of %s", *p.Level, strings.Join(logLevels, ", "))
	}
	s.clientLevel.Store(int32(i))
	return struct{}{}, nil
}

// logToClient sends notifications/message when the client asked for
// messages at level or above. It never blocks on the client for long: the
// write shares the reply lock.
func (s *mcpServer) logToClient(level string, data any) {
	want := s.clientLevel.Load()
	if want < 0 || !s.clientReady.Load() || s.closed.Load() || int32(slices.Index(logLevels, level)) < want {
		return
	}
	s.rpc.notify("notifications/message", map[string]any{"level": level, "logger": "devtools-mcp", "data": data})
}

// notifyClient sends a notification once the client has initialized.
func (s *mcpServer) notifyClient(method string, params any) {
	if !s.clientReady.Load() || s.closed.Load() {
		return
	}
	s.rpc.notify(method, params)
}

func (s *mcpServer) listTools(_ context.Context, params json.RawMessage) (any, error) {
	if err := refuseCursor(params); err != nil {
		return nil, err
	}
	return s.tools.listJSON, nil
}

// callTool reads its params by walking the bytes rather than with
// json.Unmarshal: tools/call is the hot path, and reflection's deep stacks
// made every request goroutine grow its stack (41% of CPU in a profile of
// 1 000 pipelined calls). Names match as encoding/json matches them.
func (s *mcpServer) callTool(ctx context.Context, params json.RawMessage) (any, error) {
	var name, args []byte
	if params != nil {
		if err := eachMember(params, func(member string, value []byte) bool {
			switch {
			case strings.EqualFold(member, "name"):
				name = value
			case strings.EqualFold(member, "arguments"):
				args = value
			}
			return true
		}); err != nil {
			return nil, rpcErrorf(errInvalidParams, nil, "invalid params: %v", err)
		}
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
	return s.tools.call(ctx, t, args), nil
}

func (s *mcpServer) listResources(_ context.Context, params json.RawMessage) (any, error) {
	if err := refuseCursor(params); err != nil {
		return nil, err
	}
	return map[string]any{"resources": s.resources.list()}, nil
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

func (s *mcpServer) subscribe(_ context.Context, params json.RawMessage) (any, error) {
	uri, err := uriParam(params)
	if err != nil {
		return nil, err
	}
	return struct{}{}, s.resources.subscribe(uri)
}

func (s *mcpServer) unsubscribe(_ context.Context, params json.RawMessage) (any, error) {
	uri, err := uriParam(params)
	if err != nil {
		return nil, err
	}
	s.resources.unsubscribe(uri)
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
		values, err = s.completePromptArgument(ctx, p.Ref.Name, p.Argument.Name, p.Argument.Value, p.Context.Arguments)
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

// decodeParams decodes method params into dst; absent params decode as {}.
// Member names of method params are matched as encoding/json does; tool
// arguments, where a misspelt name must be reported, are decoded strictly in
// tools.go.
func decodeParams(params json.RawMessage, dst any) error {
	if params == nil {
		return nil
	}
	if err := json.Unmarshal(params, dst); err != nil {
		return rpcErrorf(errInvalidParams, nil, "invalid params: %v", describeJSONError(err))
	}
	return nil
}

func describeJSONError(err error) string {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) && te.Field != "" {
		value := te.Value
		if value == "bool" {
			value = "boolean"
		}
		return "\"" + te.Field + "\" must be " + jsonTypeName(te.Type.Kind().String()) + ", not " + article(value)
	}
	return err.Error()
}

func jsonTypeName(kind string) string {
	switch kind {
	case "string":
		return "a string"
	case "struct", "map", "ptr":
		return "an object"
	case "slice", "array":
		return "an array"
	case "bool":
		return "a boolean"
	}
	return "a number"
}

func uriParam(params json.RawMessage) (string, error) {
	var p struct {
		URI *string `json:"uri"`
	}
	if err := decodeParams(params, &p); err != nil {
		return "", err
	}
	if p.URI == nil {
		return "", rpcErrorf(errInvalidParams, nil, `invalid params: "uri" is required`)
	}
	return *p.URI, nil
}

// refuseCursor rejects a pagination cursor: every list fits one page, so
// the server never hands out cursors and any cursor is invalid.
func refuseCursor(params json.RawMessage) error {
	var p struct {
		Cursor *string `json:"cursor"`
	}
	if err := decodeParams(params, &p); err != nil {
		return err
	}
	if p.Cursor != nil {
		return rpcErrorf(errInvalidParams, nil, "invalid params: unknown cursor %q; this list has a single page", *p.Cursor)
	}
	return nil
}

// onLinkEvent turns adapter link events into client notifications. It is
// called from the link's goroutines and never blocks for long.
func (s *mcpServer) onLinkEvent(ev linkEvent) {
	switch ev.Kind {
	case linkConnected:
		if ev.Replaced != "" {
			s.logToClient("notice", map[string]string{"event": "adapter replaced", "sessionId": ev.SessionID, "replaced": ev.Replaced})
		} else {
			s.logToClient("info", map[string]string{"event": "adapter connected", "sessionId": ev.SessionID})
		}
		s.notifyClient("notifications/resources/list_changed", struct{}{})
		s.resources.adapterChanged()
	case linkDisconnected:
		if ev.Reason != "replaced" {
			s.logToClient("warning", map[string]string{"event": "adapter disconnected", "sessionId": ev.SessionID, "reason": ev.Reason})
			s.notifyClient("notifications/resources/list_changed", struct{}{})
			s.resources.adapterChanged()
		}
	case linkStreamsChanged:
		s.logToClient("info", map[string]string{"event": "streams changed", "sessionId": ev.SessionID})
		s.notifyClient("notifications/resources/list_changed", struct{}{})
		s.resources.adapterChanged()
	case linkEventPushed:
		s.resources.eventPushed(ev.Stream)
	case linkNotice:
		s.logToClient(ev.Level, map[string]string{"event": ev.Notice, "sessionId": ev.SessionID, "detail": ev.Detail})
	case linkSessionExpired:
		s.logToClient("info", map[string]string{"event": "session expired", "sessionId": ev.SessionID})
		s.notifyClient("notifications/resources/list_changed", struct{}{})
		s.resources.adapterChanged()
	}
}
