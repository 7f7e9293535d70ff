package main

// rtron_session.go is what the Reactotron bridge needs of the session a
// client is attached to, beyond the appSession every link reports to. The
// session registry's sessions implement it (session_reactotron.go); the
// bridge knows no more of sessions than this.

import (
	"encoding/json"
	"time"
)

// reactotronSession is the session of one Reactotron client. Reports from a
// connection that is no longer the session's feed change nothing.
type reactotronSession interface {
	appSession
	reactotronStateSink
	sessionID() string
	// appendEvent records an event of stream from feed and returns the
	// whole event as kept, or nil when feed is no longer the session's.
	appendEvent(from sessionFeed, stream, typ string, at time.Time, payload []byte) []byte
	// latestSeq is the seq of stream's newest event, 0 when none.
	latestSeq(stream string) int64
	// observeMMKV remembers an MMKV mutation event's effect on the keys.
	observeMMKV(payload json.RawMessage)
	// observedMMKV is the MMKV snapshot built from the keys observed.
	observedMMKV() json.RawMessage
	// registerCommand records a custom command the app announced, or
	// forgets one it withdrew.
	registerCommand(cmd reactotronCommand, register bool)
}
