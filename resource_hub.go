package main

import (
	"context"
	"encoding/json"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"
)

const (
	uriSession    = "debug://session/current"
	uriSessions   = "debug://sessions"
	uriRedux      = "debug://redux/state"
	uriNavigation = "debug://navigation/state"
	uriMMKVPrefix = "debug://mmkv/"
	mimeJSON      = "application/json"
)

// updateInterval is the least time between two resources/updated
// notifications for one URI (at most 4 per second).
const updateInterval = 250 * time.Millisecond

var staticResources = []map[string]string{
	{"uri": uriSession, "name": "session", "title": "App session",
		"description": "The default app session (the app connected last): ids, uptime, device info and streams.", "mimeType": mimeJSON},
	{"uri": uriSessions, "name": "sessions", "title": "All app sessions",
		"description": "Every app session: connected ones, and for 30 minutes the ones that left. Add ?session=<id or app> to any other URI to read that app.", "mimeType": mimeJSON},
	{"uri": uriRedux, "name": "redux-state", "title": "Redux state",
		"description": "The app's current Redux store state.", "mimeType": mimeJSON},
	{"uri": uriNavigation, "name": "navigation-state", "title": "Navigation state",
		"description": "The app's current React Navigation state tree.", "mimeType": mimeJSON},
}

var resourceTemplates = []map[string]string{
	{"uriTemplate": uriMMKVPrefix + "{instance}", "name": "mmkv-instance", "title": "MMKV instance",
		"description": "Keys, values and total size of one MMKV storage instance.", "mimeType": mimeJSON},
}

// resourceHub serves the resources and tracks subscriptions. Updates are
// coalesced per URI by the goroutine in run: a burst of pushed events yields
// one notification at once and one trailing notification per interval.
type resourceHub struct {
	adapterQueries
	redact *redactor // nil when REDACT=off
	notify func(method string, params any)
	lists  *listAnnouncer // notifications/resources/list_changed (resource_listchanged.go)

	mu   sync.Mutex
	subs map[string]*subscription // by URI, at most maxSubscriptions
	wake chan struct{}            // cap 1: something became dirty
}

// maxSubscriptions bounds the subscriptions one client may hold (mcp_client.go)
// and the URIs watched here for all of them; each MMKV instance name is a
// URI of its own.
const maxSubscriptions = 256

type subscription struct {
	dirty    bool
	lastSent time.Time
	holders  int // clients watching the URI
}

func newResourceHub(q adapterQueries, redact *redactor, notify func(string, any)) *resourceHub {
	h := &resourceHub{adapterQueries: q, redact: redact, notify: notify, subs: make(map[string]*subscription),
		wake: make(chan struct{}, 1)}
	h.lists = newListAnnouncer(h.listingKey, func(params any) { notify("notifications/resources/list_changed", params) }, listChangedInterval)
	return h
}

func mmkvURI(instance string) string { return uriMMKVPrefix + url.PathEscape(instance) }

// mmkvInstances lists the instances the default session advertises.
func (h *resourceHub) mmkvInstances() []string {
	if h.sessions == nil {
		return nil
	}
	return mmkvInstancesOf(h.sessions.current())
}

// mmkvInstancesOf lists the MMKV instances session s advertises.
func mmkvInstancesOf(s *session) []string {
	if s == nil {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if i, ok := s.streamIndex["mmkv"]; ok {
		return slices.Clone(s.info.Streams[i].Instances)
	}
	return nil
}

// parseURI splits a URI of ours into its kind and, for MMKV, the instance.
// A `?session=` query, which names the session to read, is allowed on any
// of them and ignored here (see sessionRefOf).
func parseURI(uri string) (kind, instance string, ok bool) {
	uri, _, ok = splitSessionQuery(uri)
	if !ok {
		return "", "", false
	}
	switch uri {
	case uriSession, uriSessions, uriRedux, uriNavigation:
		return uri, "", true
	}
	rest, found := strings.CutPrefix(uri, uriMMKVPrefix)
	if !found || rest == "" || strings.Contains(rest, "/") {
		return "", "", false
	}
	name, err := url.PathUnescape(rest)
	if err != nil || name == "" {
		return "", "", false
	}
	return uriMMKVPrefix, name, true
}

// splitSessionQuery splits off a URI's query, which may hold only one
// non-empty `session`.
func splitSessionQuery(uri string) (base, sessionRef string, ok bool) {
	base, query, found := strings.Cut(uri, "?")
	if !found {
		return uri, "", true
	}
	values, err := url.ParseQuery(query)
	if err != nil || len(values) != 1 || len(values["session"]) != 1 || values["session"][0] == "" {
		return "", "", false
	}
	return base, values["session"][0], true
}

func resourceNotFound(uri string) *rpcError {
	return rpcErrorf(errResourceNotFound, map[string]string{"uri": uri}, "resource not found: %s", uri)
}

// readError turns a tool error into a resources/read error: -32002 when the
// URI names nothing that exists, -32603 for adapter conditions.
func readError(uri string, err error) *rpcError {
	te := toolErrorOf(err)
	if te == nil {
		return rpcErrorf(errInternal, map[string]string{"uri": uri}, "read %s: %v", uri, err)
	}
	data := map[string]any{"uri": uri, "code": te.Code}
	if te.Details != nil {
		data["details"] = te.Details
	}
	switch te.Code {
	case codeScopeNotFound:
		return rpcErrorf(errResourceNotFound, data, "resource not found: %s: %s", uri, te.Message)
	case codeInvalidParams:
		return rpcErrorf(errInvalidParams, data, "invalid params: %s: %s", uri, te.Message)
	}
	return rpcErrorf(errInternal, data, "cannot read %s: %s", uri, te.Message)
}

func (h *resourceHub) read(ctx context.Context, uri string) (any, error) {
	kind, instance, ok := parseURI(uri)
	if !ok {
		return nil, resourceNotFound(uri)
	}
	var body []byte
	var err error
	_, ref, _ := splitSessionQuery(uri)
	if kind == uriSessions {
		body, err = h.sessionList()
	} else if s, serr := h.sessionFor(ref, resourceStreams[kind]); serr != nil {
		err = serr
	} else {
		switch kind {
		case uriSession:
			body, err = describeSessionResource(s)
		case uriRedux, uriNavigation:
			body, err = h.currentState(ctx, s, resourceStreams[kind])
		default:
			body, err = h.mmkv(ctx, s, instance)
		}
	}
	if err != nil {
		return nil, readError(uri, h.redact.Err(err))
	}
	body = h.redact.JSON(body)
	if int64(len(body)) > h.cfg.MaxPayloadSize {
		return nil, readError(uri, newToolError(codePayloadTooLarge, map[string]any{"size": len(body), "limit": h.cfg.MaxPayloadSize},
			"the resource is %d bytes, over MAX_PAYLOAD_SIZE (%d)", len(body), h.cfg.MaxPayloadSize))
	}
	out := make([]byte, 0, len(body)+len(uri)+64)
	out = append(out, `{"contents":[{"uri":`...)
	out = appendJSONString(out, uri, false)
	out = append(out, `,"mimeType":"application/json","text":`...)
	out = appendJSONString(out, body, false)
	return json.RawMessage(append(out, "}]}"...)), nil
}

// resourceStreams is the stream a resource of each kind reads; none for
// the session kinds.
var resourceStreams = map[string]string{uriRedux: "redux", uriNavigation: "navigation", uriMMKVPrefix: "mmkv"}

// sessionList is debug://sessions: every session, the newest first.
func (h *resourceHub) sessionList() ([]byte, error) {
	out := []healthSession{}
	for _, s := range h.sessions.list() {
		out = append(out, describeSession(s.view()))
	}
	return json.Marshal(map[string]any{"sessions": out})
}

// describeSessionResource is debug://session/current for session s.
func describeSessionResource(s *session) ([]byte, error) {
	v := s.view()
	a := v.Info
	shown := a.Streams[:min(len(a.Streams), maxHealthStreams)]
	streams := make([]map[string]any, len(shown))
	for i, s := range shown {
		m := map[string]any{"name": s.Name, "active": s.Active, "eventCount": s.EventCount, "latestSeq": s.LatestSeq, "lastEventAt": formatTime(s.LastEventAt)}
		if s.Instances != nil {
			m["instances"] = s.Instances
		}
		streams[i] = m
	}
	out := map[string]any{
		"via":            v.Via,
		"connected":      v.Connected,
		"sessionId":      a.SessionID,
		"adapterVersion": a.AdapterVersion,
		"uptime":         uptime(a),
		"deviceInfo":     map[string]json.RawMessage{"app": orNull(a.App), "device": orNull(a.Device)},
		"connectedAt":    a.ConnectedAt.UTC().Format(timeFormat),
		"streams":        streams,
	}
	if len(a.Streams) > maxHealthStreams {
		out["streamsTotal"] = len(a.Streams)
	}
	if !v.Connected {
		out["disconnectedAt"] = formatTime(v.DisconnectedAt)
	}
	return json.Marshal(out)
}

// currentState reads a stream's state with the same checks and errors as the tools.
func (h *resourceHub) currentState(ctx context.Context, s *session, stream string) ([]byte, error) {
	if err := h.checkStream(s, stream); err != nil {
		return nil, err
	}
	snap, err := h.fetchSnapshot(ctx, s, stream, 0)
	if err != nil {
		return nil, err
	}
	return compactJSON(snap.state), nil
}

// checkInstance returns nil when session s advertises the MMKV instance,
// else SCOPE_NOT_FOUND listing the ones it does.
func checkInstance(s *session, instance string) error {
	if instances := mmkvInstancesOf(s); !slices.Contains(instances, instance) {
		return newToolError(codeScopeNotFound, map[string]any{"path": formatPath([]pathSegment{{Key: instance}}),
			"resolvedPrefix": "", "available": instances},
			"the app advertises no MMKV instance %q", instance)
	}
	return nil
}

func (h *resourceHub) mmkv(ctx context.Context, s *session, instance string) ([]byte, error) {
	if err := checkInstance(s, instance); err != nil {
		return nil, err
	}
	state, err := h.currentState(ctx, s, "mmkv")
	if err != nil {
		return nil, err
	}
	value, found, err := member(state, instance)
	if err != nil {
		return nil, malformedAnswer("snapshot.get", "mmkv state is not valid JSON")
	}
	if !found {
		return nil, newToolError(codeScopeNotFound, map[string]any{"path": formatPath([]pathSegment{{Key: instance}}),
			"resolvedPrefix": "", "available": []string{}},
			"the MMKV snapshot has no instance %q", instance)
	}
	keys, _, err1 := member(value, "keys")
	size, _, err2 := member(value, "totalSize")
	if err1 != nil || err2 != nil {
		return nil, malformedAnswer("snapshot.get", "an mmkv instance must be {keys, totalSize}")
	}
	var o jsonObject
	o.value("instance", instance)
	o.raw("keys", orNull(keys))
	o.raw("totalSize", orNull(size))
	return o.close(), nil
}

// subscribe refuses what a read refuses as not found: a URI not of ours,
// and an MMKV instance the connected app does not advertise. With no app
// connected, an instance may yet come, so the subscription is held.
func (h *resourceHub) subscribe(uri string) error {
	kind, instance, ok := parseURI(uri)
	if !ok {
		return resourceNotFound(uri)
	}
	if kind == uriMMKVPrefix && h.sessions != nil {
		_, ref, _ := splitSessionQuery(uri)
		if s, err := h.sessions.find(ref); err == nil && s != nil && s.isLive() {
			if err := checkInstance(s, instance); err != nil {
				return readError(uri, err)
			}
		}
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.subs[uri] == nil {
		if len(h.subs) >= maxSubscriptions {
			return rpcErrorf(errInvalidParams, map[string]int{"limit": maxSubscriptions},
				"invalid params: already %d subscriptions; unsubscribe from one first", maxSubscriptions)
		}
		h.subs[uri] = &subscription{}
	}
	h.subs[uri].holders++
	return nil
}

// unsubscribe drops one holder of uri; the URI stops being watched when its
// last holder goes. Each MCP client calls subscribe once per URI it holds
// and unsubscribe once when it lets go (mcp_server.go keeps the per-client sets).
func (h *resourceHub) unsubscribe(uri string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if sub := h.subs[uri]; sub != nil {
		if sub.holders--; sub.holders <= 0 {
			delete(h.subs, uri)
		}
	}
}

// eventPushed marks the subscribed URIs that a pushed event of stream may
// have changed: the stream's own resources, and the session, whose stream
// figures move with every event.
func (h *resourceHub) eventPushed(stream string) {
	h.markDirty(func(kind string) bool {
		return kind == "debug://"+stream+"/state" || kind == uriSession || (stream == "mmkv" && kind == uriMMKVPrefix)
	})
}

// adapterChanged marks every subscribed resource after a connect,
// disconnect or stream-list change: each may now read differently.
func (h *resourceHub) adapterChanged() {
	h.markDirty(func(string) bool { return true })
}

func (h *resourceHub) markDirty(affected func(kind string) bool) {
	h.mu.Lock()
	marked := false
	for uri, sub := range h.subs {
		if kind, _, _ := parseURI(uri); affected(kind) {
			sub.dirty, marked = true, true
		}
	}
	h.mu.Unlock()
	if marked {
		wake(h.wake)
	}
}

// run sends due notifications until ctx ends. It is the only goroutine
// that sends resources/updated, so the per-URI interval holds.
func (h *resourceHub) run(ctx context.Context) {
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-h.wake:
		case <-timer.C:
		}
		due, next := h.takeDue(time.Now())
		for _, uri := range due {
			h.notify("notifications/resources/updated", map[string]string{"uri": uri})
		}
		if next > 0 {
			timer.Reset(next)
		}
	}
}

// takeDue returns the dirty URIs that may be notified now, marking them
// sent, and how long until the next dirty one may be (0: none waiting).
func (h *resourceHub) takeDue(now time.Time) (due []string, next time.Duration) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for uri, sub := range h.subs {
		if !sub.dirty {
			continue
		}
		if wait := sub.lastSent.Add(updateInterval).Sub(now); wait > 0 {
			if next == 0 || wait < next {
				next = wait
			}
			continue
		}
		sub.dirty, sub.lastSent = false, now
		due = append(due, uri)
	}
	slices.Sort(due)
	return due, next
}

// complete offers the advertised MMKV instance names for the template's
// instance argument.
func (h *resourceHub) complete(refType, refURI, argument, prefix string) ([]string, error) {
	if refType != "ref/resource" || refURI != uriMMKVPrefix+"{instance}" || argument != "instance" {
		return nil, rpcErrorf(errInvalidParams, nil,
			"invalid params: completion is offered for argument \"instance\" of ref/resource %s{instance} only", uriMMKVPrefix)
	}
	values := slices.DeleteFunc(h.mmkvInstances(), func(name string) bool { return !strings.HasPrefix(name, prefix) })
	return append([]string{}, values...), nil // [], not null, when none match
}
