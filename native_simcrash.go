package main

// native_simcrash.go is the iOS simulator's side of native_crash.go.

import (
	"cmp"
	"maps"
	"path"
	"slices"
	"strings"
	"time"
)

// simAssembler groups one simulator's events: each event is one entry,
// except an uncaught exception's, which gathers what its process logs
// after it until nativeIdleFlush passes. Not safe for concurrent use.
type simAssembler struct {
	emit  func(app string, e nativeEntry)
	crash map[int]*entryGroup // by pid
	// jsError is an `Unhandled JS Exception` console event, held for the
	// RCTFatalException that may follow to fold it in.
	jsError *entryGroup
	waits   flushWaits
}

func newSimAssembler(emit func(string, nativeEntry)) *simAssembler {
	return &simAssembler{emit: emit, crash: map[int]*entryGroup{}, waits: nativeFlushWaits(0)}
}

// add takes one event of app (the follower attributed it), arrived at now.
func (a *simAssembler) add(l simLogLine, app string, now time.Time) {
	pid := int(l.PID)
	g, open := a.crash[pid]
	if !open {
		tag := cmp.Or(l.Subsystem, path.Base(l.ImagePath)) // else the executable's name (…/Shop.app/Shop → Shop)
		g = &entryGroup{app: app, entry: nativeEntry{At: simTime(l.Timestamp, now), Level: simLevel(l.MessageType), Tag: tag,
			PID: pid, TID: int(l.TID), JSConsole: l.Subsystem == "com.facebook.react.log"}}
	}
	for line := range strings.SplitSeq(l.Message, "\n") {
		g.add(line, now)
	}
	if open {
		return
	}
	if strings.Contains(l.Message, "*** Terminating app due to uncaught exception") {
		g.entry.Level, g.entry.Crash = "error", nativeCrashObjC
		if isRCTFatal(l.Message) {
			g.entry.Crash = nativeCrashJS
			if g.foldIn(a.jsError, g.lines[0]) {
				a.jsError = nil
			}
		}
		a.emitJSError(app)
		a.crash[pid] = g
		return
	}
	a.emitJSError(app)
	if g.entry.JSConsole && strings.HasPrefix(l.Message, "Unhandled JS Exception: ") {
		a.jsError = g
		return
	}
	a.emit(app, g.finish())
}

// emitJSError emits the held console error when it is app's ("" for any).
func (a *simAssembler) emitJSError(app string) {
	if g := a.jsError; g != nil && (app == "" || g.app == app) {
		a.jsError = nil
		a.emit(g.app, g.finish())
	}
}

// flush emits every crash due at now; with all, every crash.
func (a *simAssembler) flush(now time.Time, all bool) {
	if a.jsError != nil && (all || !now.Before(a.jsError.due(a.waits))) {
		a.emitJSError("")
	}
	for pid, g := range a.crash {
		if all || !now.Before(g.due(a.waits)) {
			a.emit(g.app, g.finish())
			delete(a.crash, pid)
		}
	}
}

func (a *simAssembler) nextFlush() (at time.Time, ok bool) {
	return earliestDue(a.waits, append([]*entryGroup{a.jsError}, slices.Collect(maps.Values(a.crash))...))
}
