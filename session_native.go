package main

// session_native.go files the native side's entries (native_follow.go)
// under the app's session, as the registry's nativeSink:
//
//   - The app's session is a session of another link that is the same app
//     on the same device (sameApp: Metro's app id and device name, an
//     adapter's app.bundleId, Reactotron's app name). Entries go into its
//     console stream when the server numbers that stream (Metro,
//     Reactotron), live or not: a crash is kept after the app has gone.
//   - Otherwise (no such session yet: the app crashed before its
//     JavaScript connected, a release build without Metro; or a debug
//     adapter, which numbers its own console) they go to the app's native
//     session, "native:<package or bundle id>@<serial or udid>", live while
//     the app runs: the native side ends it (nativeAppEnded) when pidof
//     (launchctl on a simulator) finds no process of it, and when its
//     device is no longer followed (gone, a simulator shut down, the
//     server stopping). When a Metro or Reactotron session of the app
//     appears, the native session ends (reason "joined") and keeps what it
//     holds, listed with that session in the health check; later entries
//     go to the new session.
//   - React Native's JavaScript console (ReactNativeJS, com.facebook.react.log)
//     is dropped while the app has a live session of another link with an
//     active console stream, which carries the same lines; without one
//     (none, or only ended ones), these lines are the app's console.

import (
	"context"
	"encoding/json"
	"slices"
	"time"
)

// sessionViaNative names the native side as a session's link.
const sessionViaNative = "native"

// nativeSessionID is the id of app's native session.
func nativeSessionID(app nativeApp) string {
	return "native:" + app.AppID + "@" + app.DeviceID
}

// nativeFeed is a native session's feed: everything it has is in the
// session's buffers.
type nativeFeed struct{}

func (nativeFeed) request(context.Context, string, any) (json.RawMessage, error) {
	return nil, errAnswerLocally
}
func (nativeFeed) replaced() {}

// nativeAppIDs lists the package and bundle ids the sessions name.
func (r *sessionRegistry) nativeAppIDs() []string {
	var ids []string
	seen := map[string]bool{}
	for _, s := range r.list() {
		if s.via == sessionViaNative {
			continue
		}
		if id := describeApp(s.view()).bundleID; id != "" && !seen[id] {
			seen[id] = true
			ids = append(ids, id)
		}
	}
	return ids
}

// nativeInfo describes app as a session describes an app.
func nativeInfo(app nativeApp, now time.Time) *adapterInfo {
	appJSON, _ := json.Marshal(map[string]any{"name": app.AppID, "bundleId": app.AppID})
	dev := map[string]any{"name": nullable(app.DeviceName), "id": app.DeviceID, "platform": app.Platform}
	if len(app.SameNameAs) > 0 {
		dev["sameNameAs"] = app.SameNameAs // never joined to a Metro page, which could be theirs
	}
	device, _ := json.Marshal(dev)
	return &adapterInfo{SessionID: nativeSessionID(app), AdapterVersion: sessionViaNative, ConnectedAt: now, App: appJSON,
		Device: device, DeviceID: app.DeviceID, Streams: []streamState{{Name: nativeStream, Active: true}}}
}

// nativeTarget finds where app's entries go: a Metro or Reactotron session
// of the app (nil when none), and whether a live session of another link
// carries its JavaScript console now (see the header; a Metro page left to
// another debugger or not yet re-attached after a relaunch does not).
func (r *sessionRegistry) nativeTarget(app nativeApp) (target *session, jsConsole bool) {
	self := sessionView{Via: sessionViaNative, Info: nativeInfo(app, time.Time{})}
	target = r.sameAppSession(self, func(s *session) bool { return s.via == sessionViaMetro || s.via == sessionViaReactotron })
	return target, r.sameAppSession(self, func(s *session) bool { found, _ := s.streamActive(nativeStream); return found && s.isLive() }) != nil
}

// nativeSession is app's native session, attached (live) again when it
// is not.
func (r *sessionRegistry) nativeSession(app nativeApp) *session {
	if s := r.heldNativeSession(app); s != nil && s.isLive() {
		return s
	}
	s, _ := r.attach(sessionViaNative, nativeSessionID(app), "", nativeInfo(app, time.Now()), nativeFeed{})
	return s
}

// heldNativeSession is app's native session, live or not, or nil: attach
// keeps one session per link and id.
func (r *sessionRegistry) heldNativeSession(app nativeApp) *session {
	all := r.list()
	if i := slices.IndexFunc(all, func(s *session) bool { return s.via == sessionViaNative && s.id == nativeSessionID(app) }); i >= 0 {
		return all[i]
	}
	return nil
}

// deliverNative files entries of app (nativeSink).
func (r *sessionRegistry) deliverNative(app nativeApp, entries []nativeEntry) {
	target, jsConsole := r.nativeTarget(app)
	if target == nil {
		target = r.nativeSession(app)
	} else {
		r.endNativeSession(app, "joined")
	}
	for _, e := range entries {
		if e.JSConsole && jsConsole {
			continue // the same line came through the JavaScript link
		}
		target.appendServerEvent(nativeStream, nativeEventType, e.At, nativeLogPayload(app, e))
	}
}

// nativeAppEnded ends app's native session: its process is gone (nativeSink).
func (r *sessionRegistry) nativeAppEnded(app nativeApp) {
	r.endNativeSession(app, "app_ended")
}

func (r *sessionRegistry) endNativeSession(app nativeApp, reason string) {
	if s := r.heldNativeSession(app); s != nil {
		s.mu.Lock()
		feed := s.feed
		s.mu.Unlock()
		s.leave(feed, reason) // nothing when feed is nil: the session has ended already
	}
}

// appendServerEvent records an event the server gathered about the app
// itself (its native log), whether the session is live or not.
func (s *session) appendServerEvent(stream, typ string, at time.Time, payload []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.appendEventLocked(stream, typ, at, payload)
}

// nativeLogPayload is a console log event's payload for a native entry:
// {level, message, native: true, platform, tag, pid, tid, crash?, fatal?,
// ended?}: crash is the kind (java, javascript, native, objc), every crash
// being fatal; ended is how Android says the app's process ended (anr,
// killed_low_memory, killed, stopped, died), pid then being the app's
// process that the verdict names, absent when it names none.
func nativeLogPayload(app nativeApp, e nativeEntry) []byte {
	var o jsonObject
	o.value("level", e.Level)
	o.value("message", e.Message)
	o.value("native", true)
	o.value("platform", app.Platform)
	o.value("tag", e.Tag)
	if e.PID != 0 || e.End == "" {
		o.value("pid", e.PID)
	}
	o.value("tid", e.TID)
	if e.Crash != "" {
		o.value("crash", e.Crash)
		o.value("fatal", true)
	}
	if e.End != "" {
		o.value("ended", e.End)
	}
	return o.close()
}
