package main

import (
	"context"
	"encoding/json"
	"log/slog"
)

// request asks the most recently connected live adapter through its
// session, as a tool would; with none, it is *errNotConnected saying why.
func (l *adapterLink) request(ctx context.Context, method string, params any) (json.RawMessage, error) {
	s := registryOf(l).currentLive(sessionViaWire)
	if s == nil {
		st := l.status()
		return nil, &errNotConnected{Reason: st.Reason, WSURL: st.WSURL, ListenError: st.ListenError}
	}
	return s.request(ctx, method, params)
}

// newTestLink is a link with a session registry of its own, wired as serve
// wires them.
func newTestLink(cfg config, logger *slog.Logger, notify func(linkEvent)) *adapterLink {
	l := newAdapterLink(cfg, logger, notify)
	l.sessions = newSessionRegistry(cfg, logger, l.events)
	return l
}

// registryOf is the session registry of a link made by newTestLink; nil for nil.
func registryOf(l *adapterLink) *sessionRegistry {
	if l == nil {
		return nil
	}
	return l.sessions.(*sessionRegistry)
}

// newTestToolSet is the tool set serve would build over l (nil for none).
func newTestToolSet(cfg config, l *adapterLink) *toolSet {
	return newToolSet(adapterQueries{cfg: cfg, link: l, sessions: registryOf(l)}, newRedactor(cfg))
}

// newTestResourceHub is the resource hub serve would build over l.
func newTestResourceHub(cfg config, l *adapterLink, notify func(string, any)) *resourceHub {
	return newResourceHub(adapterQueries{cfg: cfg, link: l, sessions: registryOf(l)}, newRedactor(cfg), notify)
}
