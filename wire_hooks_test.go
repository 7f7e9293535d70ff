package main

import (
	"context"
	"encoding/json"
)

// Wire link helpers only the tests use.

// request sends method with params to the most recently connected live
// adapter; see adapterConn.request.
func (l *adapterLink) request(ctx context.Context, method string, params any) (json.RawMessage, error) {
	s := l.sessions.currentLive(sessionViaWire)
	if s == nil {
		l.mu.Lock()
		defer l.mu.Unlock()
		return nil, linkNotConnectedError(l.reasonLocked(), l.wsURLLocked(), l.listenErr)
	}
	return s.request(ctx, method, params)
}
