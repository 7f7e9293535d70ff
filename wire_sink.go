package main

// wire_sink.go is what the links tell the layer above about the apps they
// serve, and what they offer it in return. serve creates the session
// registry and hands it to the links as an appSink; each connection is a
// sessionFeed of its session. The links know no more of sessions than
// these interfaces and, for a Reactotron client, reactotronSession
// (rtron_session.go).

import (
	"context"
	"encoding/json"
	"errors"
	"time"
)

// How an app is connected, as debug_health_check names it.
const (
	sessionViaWire       = "wire"
	sessionViaReactotron = "reactotron"
	sessionViaMetro      = "metro"
)

// sessionFeed is how a live session reaches its app: one connection.
// request asks the app in the wire protocol's vocabulary and returns the
// answer's result, errAnswerLocally, or a typed error of wire_errors.go.
// replaced ends the feed because a newer connection of the same app or
// device took its session; it must not block.
type sessionFeed interface {
	request(ctx context.Context, method string, params any) (json.RawMessage, error)
	replaced()
}

// errAnswerLocally is what a feed returns for a request the session answers
// from the server's own buffers.
var errAnswerLocally = errors.New("answered from the session's buffers")

// appSink is where the links report the apps they serve.
type appSink interface {
	// connect makes feed the live feed of app id of transport via (a
	// sessionVia constant). Feeds it displaced (the same app or device
	// connected again) are returned for the caller to end outside any lock.
	connect(via, id, deviceID string, info *adapterInfo, feed sessionFeed) (appSession, []sessionFeed)
	// connectReactotron is connect for the Reactotron client of clientID,
	// whose session the bridge needs more of (rtron_session.go).
	connectReactotron(clientID string, info *adapterInfo, feed sessionFeed) (reactotronSession, []sessionFeed)
	// liveInfo describes the most recently connected live app of transport
	// via, a copy; nil when none is connected.
	liveInfo(via string) *adapterInfo
	// hasConnected reports whether any app has connected since the start.
	hasConnected() bool
}

// appSession is one connected app, as its link reports to it. Reports from
// a feed that is no longer the session's live feed change nothing.
type appSession interface {
	// setStreams installs a pushed stream list.
	setStreams(from sessionFeed, streams []streamState)
	// record keeps a pushed event (a whole event object, which record owns).
	record(from sessionFeed, stream string, seq int64, typ string, at time.Time, event []byte)
	// leave reports that feed went away for reason, and whether it was
	// still the live feed.
	leave(feed sessionFeed, reason string) bool
}
