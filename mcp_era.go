package main

// The 2026-07-28 revision of MCP next to the legacy one. A request whose
// _meta carries io.modelcontextprotocol/protocolVersion is served without
// initialize, statelessly: its version, capabilities and log level come with
// it. Its results carry resultType, the server's identity in _meta and, for
// lists and reads, ttlMs and cacheScope; a missing resource is -32602; ping,
// logging/setLevel and resources/(un)subscribe are gone, replaced by the
// per-request log level and subscriptions/listen, a request that stays open
// and carries the change notifications it opted in to.

import (
	"bytes"
	"context"
	"encoding/json"
	"slices"
	"strings"
	"sync"
)

// modernVersions are the per-request-metadata revisions this server speaks.
var modernVersions = []string{"2026-07-28"}

// supportedVersions lists every revision, newest first, as server/discover
// and UnsupportedProtocolVersion name them.
func supportedVersions() []string {
	out := slices.Concat(modernVersions, protocolVersions)
	slices.Reverse(out[len(modernVersions):])
	return out
}

// Reserved _meta keys of 2026-07-28 (basic/index, "Per-request protocol fields").
const (
	metaProtocolVersion    = "io.modelcontextprotocol/protocolVersion"
	metaClientCapabilities = "io.modelcontextprotocol/clientCapabilities"
	metaClientInfo         = "io.modelcontextprotocol/clientInfo"
	metaLogLevel           = "io.modelcontextprotocol/logLevel"
	metaServerInfo         = "io.modelcontextprotocol/serverInfo"
	metaSubscriptionID     = "io.modelcontextprotocol/subscriptionId"
)

// Error codes 2026-07-28 defines (basic/index, "Error Codes"). No method of
// this server needs a client capability, so -32021 (missing required client
// capability) is never sent.
var (
	errHeaderMismatch             = &rpcError{Code: -32020, Message: "header mismatch"}
	errUnsupportedProtocolVersion = &rpcError{Code: -32022, Message: "unsupported protocol version"}
)

// requestMeta is what a 2026-07-28 request says about itself.
type requestMeta struct {
	version  string
	logLevel int // index into logLevels; -1 when absent: no notifications/message
}

// readRequestMeta reads the per-request fields of params._meta. It returns
// nil for a legacy request: no protocol version in _meta, or a legacy
// version stamped by a client that has called initialize. Errors are the
// revision's: -32022 for a version this server does not speak, -32602 for a
// missing or malformed required field.
func readRequestMeta(params json.RawMessage, initialized bool) (*requestMeta, error) {
	var metaRaw, rawVersion, caps, info, rawLevel []byte
	_ = scanFields(params, map[string]*[]byte{"_meta": &metaRaw}) // the last, as encoding/json reads the rest of params
	if rawKind(metaRaw) != "object" {
		return nil, nil
	}
	_ = scanFields(metaRaw, map[string]*[]byte{metaProtocolVersion: &rawVersion, metaClientCapabilities: &caps,
		metaClientInfo: &info, metaLogLevel: &rawLevel})
	if rawVersion == nil {
		return nil, nil
	}
	v, ok := wireString(rawVersion)
	if !ok {
		return nil, rpcErrorf(errInvalidParams, nil, "invalid params: _meta %q must be a string, not %s", metaProtocolVersion, jsonKind(rawVersion))
	}
	if !slices.Contains(modernVersions, v) {
		if initialized && slices.Contains(protocolVersions, v) {
			return nil, nil
		}
		hint := ""
		if slices.Contains(protocolVersions, v) {
			hint = "; " + v + " is served after initialize"
		}
		return nil, rpcErrorf(errUnsupportedProtocolVersion, map[string]any{"supported": supportedVersions(), "requested": v},
			"Unsupported protocol version: %q; per-request _meta supports %s%s", v, strings.Join(modernVersions, ", "), hint)
	}
	meta := &requestMeta{version: v, logLevel: -1}
	if rawKind(caps) != "object" {
		what := "is required"
		if caps != nil {
			what = "must be an object, not " + jsonKind(caps)
		}
		return nil, rpcErrorf(errInvalidParams, nil, "invalid params: _meta %q %s", metaClientCapabilities, what)
	}
	if info != nil && rawKind(info) != "object" {
		return nil, rpcErrorf(errInvalidParams, nil, "invalid params: _meta %q must be an object, not %s", metaClientInfo, jsonKind(info))
	}
	if rawLevel != nil {
		level, isString := wireString(rawLevel)
		meta.logLevel = slices.Index(logLevels, level)
		if !isString || meta.logLevel < 0 {
			return nil, rpcErrorf(errInvalidParams, nil, "invalid params: _meta %q must be one of %s", metaLogLevel, strings.Join(logLevels, ", "))
		}
	}
	return meta, nil
}

// modernMethodNotFound answers a method that is not part of 2026-07-28,
// naming the removed ones' replacements.
func modernMethodNotFound(name string) error {
	switch name {
	case "logging/setLevel":
		return rpcErrorf(errMethodNotFound, nil, "method not found: %q was removed in 2026-07-28; set the log level of each request with %s in its _meta", name, metaLogLevel)
	case "initialize", "notifications/initialized":
		return rpcErrorf(errMethodNotFound, nil, "method not found: %q was removed in 2026-07-28; each request carries its version and capabilities in _meta (%s, %s)",
			name, metaProtocolVersion, metaClientCapabilities)
	case "ping":
		return rpcErrorf(errMethodNotFound, nil, "method not found: %q was removed in 2026-07-28 and has no replacement: any request shows the server answers", name)
	case "resources/subscribe", "resources/unsubscribe":
		return rpcErrorf(errMethodNotFound, nil, "method not found: %q was removed in 2026-07-28; use subscriptions/listen", name)
	}
	return rpcErrorf(errMethodNotFound, nil, "method not found: %q", name)
}

// cachePolicy is the ttlMs and cacheScope of each cacheable result. Tools
// and templates are fixed for the life of the process; the resource list
// and resources follow the live app, so they are stale at once, and they
// hold the app's data: private.
var cachePolicy = map[string]struct {
	ttlMs int
	scope string
}{
	"server/discover":          {60000, "public"},
	"tools/list":               {60000, "public"},
	"prompts/list":             {60000, "public"},
	"resources/templates/list": {60000, "public"},
	"resources/list":           {0, "private"},
	"resources/read":           {0, "private"},
}

var serverInfoJSON = func() []byte {
	data, _ := json.Marshal(map[string]string{"name": "devtools-mcp", "title": "App DevTools (Redux, navigation, MMKV)", "version": serverVersion})
	return data
}()

// serverInfoMeta is the _meta of every 2026-07-28 result: the server's identity.
var serverInfoMeta = []byte(`{"` + metaServerInfo + `":` + string(serverInfoJSON) + `}`)

// modernResult gives a handler's answer the 2026-07-28 shape the file's
// header describes, with ttlMs and cacheScope where cachePolicy says.
func modernResult(methodName string, result any, err error) (any, error) {
	if err != nil {
		re := asRPCError(err)
		if re.Code == errResourceNotFound.Code {
			re = &rpcError{Code: errInvalidParams.Code, Message: re.Message, Data: re.Data}
		}
		return nil, re
	}
	var data []byte
	switch r := result.(type) {
	case nil:
		data = []byte("{}")
	case json.RawMessage:
		data = r
	default:
		if data, err = json.Marshal(result); err != nil {
			return nil, rpcErrorf(errInternal, nil, "internal error: encode result: %v", err)
		}
	}
	if rawKind(data) != "object" {
		return json.RawMessage(data), nil
	}
	var meta, resultType []byte
	_ = scanFields(data, map[string]*[]byte{"_meta": &meta, "resultType": &resultType})
	var o jsonObject
	if resultType == nil {
		o.raw("resultType", []byte(`"complete"`))
	}
	if p, ok := cachePolicy[methodName]; ok {
		o.value("ttlMs", int64(p.ttlMs))
		o.value("cacheScope", p.scope)
	}
	if meta == nil {
		o.raw("_meta", serverInfoMeta)
	}
	switch rest := bytes.TrimLeft(data[1:], " \t\n\r"); {
	case len(o.buf) == 0:
		return json.RawMessage(append([]byte{'{'}, rest...)), nil
	case len(rest) == 0 || rest[0] == '}': // no members (a bare "{" never comes from json.Marshal)
		return json.RawMessage(o.close()), nil
	default:
		return json.RawMessage(append(append(o.buf, ','), rest...)), nil
	}
}

// discover answers server/discover: the versions, capabilities and
// instructions; the identity rides in _meta like every 2026-07-28 result.
func (s *mcpServer) discover(context.Context, json.RawMessage) (any, error) {
	return map[string]any{
		"supportedVersions": supportedVersions(),
		"capabilities":      serverCapabilities(),
		"instructions":      serverInstructions,
	}, nil
}

// maxListeners bounds the subscriptions/listen requests open at once over
// all transports; each holds a worker (stdio) or a stream (HTTP).
const maxListeners = 64

// listener is one open subscriptions/listen request.
type listener struct {
	id          json.RawMessage
	listChanged bool // resourcesListChanged acknowledged
	subs        subscriptionSet

	mu   sync.Mutex // orders the acknowledgement before every notification
	send func(method string, params any)
}

// deliver sends a notification tagged with the subscription's id.
func (l *listener) deliver(method string, params map[string]any) {
	params["_meta"] = map[string]any{metaSubscriptionID: l.id}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.send(method, params)
}

// listen serves subscriptions/listen: it acknowledges the notification types
// it will honour, then delivers them until the client cancels (stdio:
// notifications/cancelled; HTTP: closing the stream), which gets no reply,
// or the transport stops, which gets the graceful closing result.
func (s *mcpServer) listen(ctx context.Context, params json.RawMessage) (any, error) {
	call := callFrom(ctx)
	var p struct {
		Notifications *struct {
			ToolsListChanged      bool     `json:"toolsListChanged"`
			PromptsListChanged    bool     `json:"promptsListChanged"`
			ResourcesListChanged  bool     `json:"resourcesListChanged"`
			ResourceSubscriptions []string `json:"resourceSubscriptions"`
		} `json:"notifications"`
	}
	if err := decodeRequired(params, &p, "notifications", &p.Notifications); err != nil {
		return nil, err
	}
	if call.send == nil || call.id == nil {
		return nil, rpcErrorf(errInvalidRequest, nil, "invalid request: subscriptions/listen needs a request with an id on a transport that can stream")
	}
	l := &listener{id: call.id, send: call.send}
	l.subs.onChange = s.subscriptionsChanged
	defer l.subs.clear(s.resources)
	ack := map[string]any{}
	// Tools and prompts never change while the server runs: those types are
	// not acknowledged, as the revision asks for types a server lacks.
	if p.Notifications.ResourcesListChanged {
		l.listChanged = true
		ack["resourcesListChanged"] = true
	}
	var held []string
	for _, uri := range p.Notifications.ResourceSubscriptions {
		if _, _, ok := parseURI(uri); !ok || slices.Contains(held, uri) {
			continue
		}
		if err := l.subs.add(s.resources, uri); err != nil {
			return nil, err
		}
		held = append(held, uri)
	}
	if len(held) > 0 {
		ack["resourceSubscriptions"] = held
	}

	l.mu.Lock()
	s.mu.Lock()
	if len(s.listeners) >= maxListeners {
		s.mu.Unlock()
		l.mu.Unlock()
		return nil, rpcErrorf(errInvalidRequest, map[string]int{"limit": maxListeners},
			"invalid request: %d subscriptions/listen streams are open, the limit; close one first", maxListeners)
	}
	s.listeners[l] = struct{}{}
	s.mu.Unlock()
	l.send("notifications/subscriptions/acknowledged", map[string]any{
		"notifications": ack, "_meta": map[string]any{metaSubscriptionID: l.id}})
	l.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(s.listeners, l)
		s.mu.Unlock()
	}()

	select {
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-call.stopped:
	}
	return map[string]any{"_meta": map[string]any{metaSubscriptionID: l.id, metaServerInfo: json.RawMessage(serverInfoJSON)}}, nil
}
