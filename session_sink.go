package main

// session_sink.go is the registry and its sessions as the links see them:
// the appSink and appSession of wire_sink.go, and the reactotronSession of
// rtron_session.go.

// connect attaches a link's connection (appSink).
func (r *sessionRegistry) connect(via, id, deviceID string, info *adapterInfo, feed sessionFeed) (appSession, []sessionFeed) {
	return r.attach(via, id, deviceID, info, feed)
}

// connectReactotron attaches a Reactotron client's connection (appSink).
func (r *sessionRegistry) connectReactotron(clientID string, info *adapterInfo, feed sessionFeed) (reactotronSession, []sessionFeed) {
	return r.attach(sessionViaReactotron, clientID, "", info, feed)
}

// liveInfo describes the most recently connected live session of via.
func (r *sessionRegistry) liveInfo(via string) *adapterInfo {
	if s := r.currentLive(via); s != nil {
		return s.view().Info
	}
	return nil
}

// sessionID is s's id (reactotronSession).
func (s *session) sessionID() string { return s.id }

// connectMetro attaches a Metro page's connection (metroSink).
func (r *sessionRegistry) connectMetro(id string, info *adapterInfo, feed sessionFeed) (metroSession, []sessionFeed) {
	return r.attach(sessionViaMetro, id, "", info, feed)
}
