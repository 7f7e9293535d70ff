package main

// native_crash.go turns a device's parsed log lines into entries: the lines
// of one multi-line message back into one entry, and a crash, whatever
// number of lines it spans, into one `error` entry holding its whole text:
//
//   - a Java crash: AndroidRuntime's `FATAL EXCEPTION: …`, `Process: <package>,
//     PID: <n>`, the exception, its `at …` lines and every `Caused by:`,
//     all under the app's pid;
//   - a native crash: libc's `Fatal signal 11 (SIGSEGV) …` under the app's
//     pid, then the tombstone, which crash_dump writes under tag DEBUG with
//     its own pid: the tombstone is attributed by its `>>> package <<<` line
//     and joined to the signal line of that pid;
//   - a JavaScript crash (nativeCrashJS): React Native's uncaught error,
//     with the console report it logs just before folded in (native_jscrash.go);
//   - on iOS, `*** Terminating app due to uncaught exception …` and what the
//     process logs after it (the call stack) (native_simcrash.go).
//
// Android's own verdicts about an app (an ANR, a kill) are read in
// native_verdict.go; lines of pids no app owns yet wait in native_pending.go.
//
// A group is emitted once nativeIdleFlush has passed since its last line
// (a native crash without its tombstone waits nativeTombstoneWait for it).
// The caller owns the clock: every method takes now, and nextFlush says
// when flush is due, so tests step time without sleeping.

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"
)

const (
	nativeIdleFlush     = 500 * time.Millisecond
	nativeTombstoneWait = 2 * time.Second
	// maxEntryLines and maxEntryBytes bound one entry; the lines beyond are
	// counted in its last line.
	maxEntryLines = 400
	maxEntryBytes = 64 << 10
)

const (
	nativeCrashJava   = "java"
	nativeCrashNative = "native"
	nativeCrashObjC   = "objc"
	nativeCrashJS     = "javascript" // an uncaught JavaScript error, fatal
)

// nativeEntry is one entry of an app's native log.
type nativeEntry struct {
	At       time.Time
	Level    string // debug, info, warn, error
	Tag      string // the logcat tag; on iOS the subsystem, else the process name
	PID, TID int
	Message  string
	Crash    string // "" or a nativeCrash… kind
	End      string // "" or a nativeEnd… verdict: how Android says the app's process ended
	// JSConsole marks React Native's JavaScript console (tag ReactNativeJS,
	// subsystem com.facebook.react.log).
	JSConsole bool
}

// entryGroup is an entry being put together.
type entryGroup struct {
	entry     nativeEntry
	app       string // the package or bundle id; "" until known
	key       string // the prefix its lines share (multi-line messages)
	lines     []string
	bytes     int
	omitted   int
	last      time.Time // when its last line arrived
	tombstone bool      // a native crash whose tombstone has joined it
	folded    []string  // a JavaScript crash's console report's further lines, put after it
}

func (g *entryGroup) add(line string, now time.Time) {
	g.last = now
	if len(g.lines) >= maxEntryLines || g.bytes+len(line) > maxEntryBytes {
		g.omitted++
		return
	}
	g.lines = append(g.lines, line)
	g.bytes += len(line) + 1
}

// flushWaits are an assembler's nativeIdleFlush and nativeTombstoneWait.
type flushWaits struct{ idle, tombstone time.Duration }

// nativeFlushWaits are the waits for idle (the setting; zero: the
// defaults). A shorter idle shortens the tombstone's wait alike.
func nativeFlushWaits(idle time.Duration) flushWaits {
	if idle <= 0 {
		return flushWaits{nativeIdleFlush, nativeTombstoneWait}
	}
	return flushWaits{idle, idle * (nativeTombstoneWait / nativeIdleFlush)}
}

func (g *entryGroup) due(w flushWaits) time.Time {
	if g.waitsForTombstone() {
		return g.last.Add(w.tombstone)
	}
	return g.last.Add(w.idle)
}

func (g *entryGroup) finish() nativeEntry {
	if folded := dropKnown(g.folded, g.lines); len(folded) > 0 {
		g.folded = nil
		g.add(jsFoldedHeader, g.last)
		for _, line := range folded {
			g.add(line, g.last)
		}
	}
	e := g.entry
	e.Message = strings.Join(g.lines, "\n")
	if g.omitted > 0 {
		e.Message += fmt.Sprintf("\n… (%d more lines)", g.omitted)
	}
	return e
}

// groupRole says what an open group is, so that each map key tells it.
type groupRole uint8

const (
	roleJava      groupRole = iota // a Java (or JavaScript) crash, by the app's pid
	roleNative                     // a native crash, by the app's pid
	roleTombstone                  // a tombstone not joined to a signal line, by crash_dump's pid
	roleJoined                     // a tombstone joined to its signal line: crash_dump's pid → that crash
	roleVerdict                    // system_server's or lmkd's word about an app, by the writer's pid
)

type groupKey struct {
	role groupRole
	pid  int
}

// logcatAssembler groups one Android device's lines. appOf names the
// followed app a pid belongs to ("" for any other process); follows says
// whether a package is followed. Not safe for concurrent use.
type logcatAssembler struct {
	appOf   func(pid int) string
	follows func(pkg string) bool
	emit    func(app string, e nativeEntry)

	message *entryGroup // the open multi-line message
	// jsError is the held JavaScript console error (finish, foldJSReport).
	jsError *entryGroup
	groups  map[groupKey]*entryGroup
	pending pendingLines // lines of pids no app owns yet
	// pidGeneration, when set, changes whenever appOf learns a pid; flush
	// looks for kept lines of newly known pids only when it has.
	pidGeneration func() uint64
	seenPIDGen    uint64
	waits         flushWaits
}

func newLogcatAssembler(appOf func(int) string, follows func(string) bool, emit func(string, nativeEntry)) *logcatAssembler {
	return &logcatAssembler{appOf: appOf, follows: follows, emit: emit, groups: map[groupKey]*entryGroup{}, waits: nativeFlushWaits(0)}
}

func (a *logcatAssembler) add(l logcatLine, now time.Time) {
	if a.pending.has(l.PID) && a.appOf(l.PID) != "" {
		// The pid is now an app's: its earlier lines come first.
		a.replayPending(func(pid int) bool { return pid == l.PID })
	}
	if a.addVerdict(l, now) {
		return
	}
	java := a.groups[groupKey{roleJava, l.PID}]
	switch {
	case l.Tag == "DEBUG" && a.addTombstone(l, now):
		return
	case l.Tag == "libc" && l.Level == 'F' && strings.HasPrefix(l.Message, "Fatal signal "):
		app := cmp.Or(a.appOf(l.PID), fatalSignalProcess(l.Message))
		if !a.follows(app) {
			return
		}
		a.flushPID(l.PID)
		a.replayBeforeCrash(l.PID, app)
		a.groups[groupKey{roleNative, l.PID}] = a.newGroup(l, app, now, nativeCrashNative)
		return
	case l.Tag == "AndroidRuntime" && strings.HasPrefix(l.Message, "FATAL EXCEPTION"):
		a.flushPID(l.PID)
		a.groups[groupKey{roleJava, l.PID}] = a.newGroup(l, a.appOf(l.PID), now, nativeCrashJava)
		return
	case l.Tag == "AndroidRuntime" && java != nil:
		if pkg, ok := strings.CutPrefix(l.Message, "Process: "); ok && len(java.lines) == 1 {
			// The package the crash names is its app's, whatever app the
			// pid was last known as (a stale pid); one not followed drops it.
			pkg, _, _ = strings.Cut(pkg, ",")
			pkg, _, _ = strings.Cut(pkg, ":") // a process of the app (com.example.shop:remote) is the app's
			if pkg != java.app && a.follows(pkg) {
				a.replayBeforeCrash(l.PID, pkg)
			}
			java.app = pkg
		}
		if java.entry.Crash == nativeCrashJava && len(java.lines) <= 3 && isJSException(l.Message) {
			java.entry.Crash = nativeCrashJS
			a.foldJSReport(java, l.Message)
		}
		java.add(l.Message, now)
		return
	}
	a.finishKey(groupKey{roleJava, l.PID}) // the app's next line after its stack: the crash is whole
	app := a.appOf(l.PID)
	if app == "" {
		a.pending.add(l, now) // another process, or an app's before its pid is known
		return
	}
	a.addMessage(l, app, now)
}

// logcatKey is the prefix that the lines of one message share.
func logcatKey(l logcatLine) string {
	return l.Stamp + "|" + strconv.Itoa(l.PID) + "|" + strconv.Itoa(l.TID) + "|" + string(l.Level) + "|" + l.Tag
}

// addMessage takes an ordinary line of app: the lines of one message (one
// prefix) are one entry.
func (a *logcatAssembler) addMessage(l logcatLine, app string, now time.Time) {
	key := logcatKey(l)
	if a.message != nil && a.message.key == key {
		a.message.add(l.Message, now)
		return
	}
	if a.message != nil {
		a.finish(a.message)
	}
	a.message = a.newGroup(l, app, now, "")
	a.message.key = key
	a.message.entry.JSConsole = l.Tag == "ReactNativeJS"
}

// addTombstone takes a DEBUG line that belongs to a tombstone, reporting
// false for any other DEBUG line.
func (a *logcatAssembler) addTombstone(l logcatLine, now time.Time) bool {
	if crash := a.groups[groupKey{roleJoined, l.PID}]; crash != nil {
		crash.add(l.Message, now)
		return true
	}
	k := groupKey{roleTombstone, l.PID}
	g := a.groups[k]
	if g == nil {
		if !strings.HasPrefix(l.Message, "*** *** ***") {
			return false
		}
		g = &entryGroup{}
		a.groups[k] = g
	}
	g.add(l.Message, now)
	if g.app != "" {
		return true
	}
	pid, pkg, ok := tombstoneProcess(l.Message)
	if !ok {
		return true
	}
	g.app = pkg
	if crash := a.groups[groupKey{roleNative, pid}]; crash != nil {
		crash.tombstone = true
		for _, line := range g.lines {
			crash.add(line, now)
		}
		delete(a.groups, k)
		a.groups[groupKey{roleJoined, l.PID}] = crash
		return true
	}
	g.entry = nativeEntry{At: logcatTime(l.Stamp, now), Level: "error", Tag: "DEBUG", PID: pid, TID: l.TID, Crash: nativeCrashNative}
	g.tombstone = true
	return true
}

func (a *logcatAssembler) newGroup(l logcatLine, app string, now time.Time, crash string) *entryGroup {
	level := logcatLevel(l.Level)
	if crash != "" {
		level = "error"
	}
	g := &entryGroup{app: app, entry: nativeEntry{At: logcatTime(l.Stamp, now), Level: level, Tag: l.Tag,
		PID: l.PID, TID: l.TID, Crash: crash}}
	g.add(l.Message, now)
	return g
}

// flushPID emits the crashes open for pid: a new crash of the same
// process starts.
func (a *logcatAssembler) flushPID(pid int) {
	a.finishKey(groupKey{roleJava, pid})
	a.finishKey(groupKey{roleNative, pid})
}

func (a *logcatAssembler) finishKey(k groupKey) {
	if g := a.groups[k]; g != nil {
		a.finish(g)
		delete(a.groups, k)
	}
}

// finish emits g, a followed app's. The open message, when it is a
// JavaScript console error, is held instead (jsError); the held error
// goes out before any later entry of its app.
func (a *logcatAssembler) finish(g *entryGroup) {
	if g == a.message && g.entry.JSConsole && g.entry.Level == "error" && g.app != "" {
		a.emitJSError()
		a.jsError = g
		return
	}
	if m := a.message; m != nil && m != g && m.app == g.app && !m.entry.At.After(g.entry.At) {
		a.message = nil // begun before g: it goes first
		a.finish(m)
	}
	if a.jsError != nil && a.jsError != g && a.jsError.app == g.app {
		a.emitJSError()
	}
	if g.app != "" && a.follows(g.app) {
		a.emit(g.app, g.finish())
	}
}

func (a *logcatAssembler) emitJSError() {
	if g := a.jsError; g != nil {
		a.jsError = nil
		a.finish(g)
	}
}

func (g *entryGroup) waitsForTombstone() bool {
	return g.entry.Crash == nativeCrashNative && !g.tombstone
}

// tombstoneWaits lists, sorted, the apps whose native crash waits for its tombstone.
func (a *logcatAssembler) tombstoneWaits() []string {
	var apps []string
	for _, g := range a.groups {
		if g.waitsForTombstone() && g.app != "" && !slices.Contains(apps, g.app) {
			apps = append(apps, g.app)
		}
	}
	slices.Sort(apps)
	return apps
}

// flush emits every group due at now; with all, every group, but with
// hold a native crash that waits for its tombstone until it is due (its
// app's end waits for it). The kept lines of pids now known are taken first.
func (a *logcatAssembler) flush(now time.Time, all, hold bool) {
	if a.pidGeneration == nil {
		a.replayPending(nil)
	} else if gen := a.pidGeneration(); gen != a.seenPIDGen { // read before the look, so a pid added during it is looked for next time
		a.seenPIDGen = gen
		a.replayPending(nil)
	}
	if a.message != nil && (all || !now.Before(a.message.due(a.waits))) {
		a.finish(a.message)
		a.message = nil
	}
	if a.jsError != nil && (all || !now.Before(a.jsError.due(a.waits))) {
		a.emitJSError()
	}
	var due []groupKey
	for k, g := range a.groups {
		if (all && !(hold && g.waitsForTombstone())) || !now.Before(g.due(a.waits)) {
			due = append(due, k)
		}
	}
	// In the order their last lines came, so that an app's entries keep theirs.
	slices.SortFunc(due, func(x, y groupKey) int {
		return cmp.Or(a.groups[x].last.Compare(a.groups[y].last), cmp.Compare(x.role, y.role), cmp.Compare(x.pid, y.pid))
	})
	for _, k := range due {
		// A joined tombstone is emitted with its crash; one unattributed,
		// or another app's, is not emitted at all (finish).
		if k.role != roleJoined {
			a.finish(a.groups[k])
		}
		delete(a.groups, k)
	}
}

func (a *logcatAssembler) nextFlush() (at time.Time, ok bool) {
	return earliestDue(a.waits, append([]*entryGroup{a.message, a.jsError}, slices.Collect(maps.Values(a.groups))...))
}

// earliestDue is when the first of groups (nil ones aside) is due; ok is false for none.
func earliestDue(w flushWaits, groups []*entryGroup) (at time.Time, ok bool) {
	for _, g := range groups {
		if g != nil && (!ok || g.due(w).Before(at)) {
			at, ok = g.due(w), true
		}
	}
	return at, ok
}

// fatalSignalProcess reads the process name at the end of libc's
// `Fatal signal …, pid 4300 (com.example.shop)`.
func fatalSignalProcess(msg string) string {
	i := strings.LastIndex(msg, " pid ")
	if i < 0 {
		return ""
	}
	_, name, _ := strings.Cut(msg[i:], "(") // "" when there is none
	name, _, _ = strings.Cut(name, ")")
	return name
}

// tombstoneProcess reads the tombstone's `pid: 4300, tid: 4321, name:
// mqt_js  >>> com.example.shop <<<`.
func tombstoneProcess(msg string) (pid int, pkg string, ok bool) {
	rest, header := strings.CutPrefix(msg, "pid: ")
	num, _, _ := strings.Cut(rest, ",")
	pid, err := strconv.Atoi(num)
	// The thread's name, which the app chooses, comes first: the last `>>> ` is the package's.
	i := strings.LastIndex(rest, ">>> ")
	if !header || err != nil || pid <= 0 || i < 0 {
		return 0, "", false
	}
	pkg, _, found := strings.Cut(rest[i+len(">>> "):], " <<<")
	// A process of the app (com.example.shop:remote) is the app's.
	pkg, _, _ = strings.Cut(pkg, ":")
	return pid, pkg, found && pkg != ""
}

// activityStartProc reads ActivityManager's `Start proc 4300:com.example.shop/u0a123
// for activity …`: the pid of an app's new process, often before its first line.
func activityStartProc(msg string) (pid int, pkg string, ok bool) {
	// Without "Start proc ", num is left empty; without the colon after it, pkg is.
	_, rest, _ := strings.Cut(msg, "Start proc ")
	num, rest, _ := strings.Cut(rest, ":")
	pid, err := strconv.Atoi(num)
	pkg, _, _ = strings.Cut(rest, "/")
	pkg, _, _ = strings.Cut(pkg, " ")
	pkg, _, _ = strings.Cut(pkg, ":")
	return pid, pkg, err == nil && pid > 0 && validNativeAppID(pkg)
}
