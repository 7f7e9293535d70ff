package main

import (
	"context"
	"encoding/json"
)

// request asks the most recently connected live adapter through its
// session, as a tool would; with none, it is *errNotConnected saying why.
func (l *adapterLink) request(ctx context.Context, method string, params any) (json.RawMessage, error) {
	s := l.sessions.currentLive(sessionViaWire)
	if s == nil {
		st := l.status()
		return nil, &errNotConnected{Reason: st.Reason, WSURL: st.WSURL, ListenError: st.ListenError}
	}
	return s.request(ctx, method, params)
}
