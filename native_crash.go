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
//   - on iOS, `*** Terminating app due to uncaught exception …` and what the
//     process logs after it (the call stack).
//
// Ordinary lines of a pid that is no followed app's yet are kept a while
// (native_pending.go): once the pid is an app's, or a crash names the app
// of its pid, they are grouped before its newer lines, so an app's first
// lines are not lost.
//
// A group is emitted once nativeIdleFlush has passed since its last line
// (a native crash without its tombstone waits nativeTombstoneWait for it).
// The caller owns the clock: every method takes now, and nextFlush says
// when flush is due, so tests step time without sleeping.

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

const (
	// nativeIdleFlush is how long after its last line an entry or a crash
	// is emitted.
	nativeIdleFlush = 500 * time.Millisecond
	// nativeTombstoneWait is how long a native crash waits for its
	// tombstone after the signal line.
	nativeTombstoneWait = 2 * time.Second
	// maxEntryLines and maxEntryBytes bound one entry; the lines beyond are
	// counted in its last line.
	maxEntryLines = 400
	maxEntryBytes = 64 << 10
)

// The kinds of crash.
const (
	nativeCrashJava   = "java"
	nativeCrashNative = "native"
	nativeCrashObjC   = "objc"
)

// nativeEntry is one entry of an app's native log.
type nativeEntry struct {
	At       time.Time
	Level    string // debug, info, warn, error
	Tag      string // the logcat tag; on iOS the subsystem, else the process name
	PID, TID int
	Message  string
	Crash    string // "" or a nativeCrash… kind
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

func (g *entryGroup) due() time.Time {
	if g.entry.Crash == nativeCrashNative && !g.tombstone {
		return g.last.Add(nativeTombstoneWait)
	}
	return g.last.Add(nativeIdleFlush)
}

func (g *entryGroup) finish() nativeEntry {
	e := g.entry
	e.Message = strings.Join(g.lines, "\n")
	if g.omitted > 0 {
		e.Message += fmt.Sprintf("\n… (%d more lines)", g.omitted)
	}
	return e
}

// logcatAssembler groups one Android device's lines. appOf names the
// followed app a pid belongs to ("" for any other process); follows says
// whether a package is followed. Not safe for concurrent use.
type logcatAssembler struct {
	appOf   func(pid int) string
	follows func(pkg string) bool
	emit    func(app string, e nativeEntry)

	message *entryGroup         // the open multi-line message
	java    map[int]*entryGroup // by the app's pid
	native  map[int]*entryGroup // by the app's pid
	tombs   map[int]*entryGroup // by crash_dump's pid
	pending pendingLines        // lines of pids no app owns yet
	// pidGeneration, when set, changes whenever appOf learns a pid; flush
	// looks for kept lines of newly known pids only when it has.
	pidGeneration func() uint64
	seenPIDGen    uint64
}

func newLogcatAssembler(appOf func(int) string, follows func(string) bool, emit func(string, nativeEntry)) *logcatAssembler {
	return &logcatAssembler{appOf: appOf, follows: follows, emit: emit,
		java: map[int]*entryGroup{}, native: map[int]*entryGroup{}, tombs: map[int]*entryGroup{}}
}

// add takes one line, arrived at now.
func (a *logcatAssembler) add(l logcatLine, now time.Time) {
	if a.pending.has(l.PID) && a.appOf(l.PID) != "" {
		// The pid is now an app's: its earlier lines come first.
		a.replayPending(func(pid int) bool { return pid == l.PID })
	}
	switch {
	case l.Tag == "DEBUG" && a.addTombstone(l, now):
		return
	case l.Tag == "libc" && l.Level == 'F' && strings.HasPrefix(l.Message, "Fatal signal "):
		app := a.appOf(l.PID)
		if app == "" {
			app = fatalSignalProcess(l.Message)
		}
		if !a.follows(app) {
			return
		}
		a.flushPID(l.PID)
		a.replayBeforeCrash(l.PID, app)
		g := a.newGroup(l, app, now, nativeCrashNative)
		a.native[l.PID] = g
		return
	case l.Tag == "AndroidRuntime" && strings.HasPrefix(l.Message, "FATAL EXCEPTION"):
		a.flushPID(l.PID)
		a.java[l.PID] = a.newGroup(l, a.appOf(l.PID), now, nativeCrashJava)
		return
	case l.Tag == "AndroidRuntime" && a.java[l.PID] != nil:
		g := a.java[l.PID]
		if pkg, ok := strings.CutPrefix(l.Message, "Process: "); ok && g.app == "" {
			g.app, _, _ = strings.Cut(pkg, ",")
			if a.follows(g.app) {
				a.replayBeforeCrash(l.PID, g.app)
			}
		}
		g.add(l.Message, now)
		return
	}
	if g := a.java[l.PID]; g != nil {
		a.finish(g) // the app's next line after its stack: the crash is whole
		delete(a.java, l.PID)
	}
	app := a.appOf(l.PID)
	if app == "" {
		a.pending.add(l, now) // another process, or an app's before its pid is known
		return
	}
	a.addMessage(l, app, now)
}

// addMessage takes an ordinary line of app: the lines of one message (one
// prefix) are one entry.
func (a *logcatAssembler) addMessage(l logcatLine, app string, now time.Time) {
	key := l.Stamp + "|" + strconv.Itoa(l.PID) + "|" + strconv.Itoa(l.TID) + "|" + string(l.Level) + "|" + l.Tag
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
	g := a.tombs[l.PID]
	if g == nil {
		if !strings.HasPrefix(l.Message, "*** *** ***") {
			return false
		}
		g = &entryGroup{}
		a.tombs[l.PID] = g
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
	if crash := a.native[pid]; crash != nil {
		// The tombstone joins the signal line of its process.
		crash.tombstone = true
		for _, line := range g.lines {
			crash.add(line, now)
		}
		a.tombs[l.PID] = crash
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
	if g := a.java[pid]; g != nil {
		a.finish(g)
		delete(a.java, pid)
	}
	if g := a.native[pid]; g != nil {
		a.finish(g)
		delete(a.native, pid)
	}
}

func (a *logcatAssembler) finish(g *entryGroup) {
	if g.app != "" && a.follows(g.app) {
		a.emit(g.app, g.finish())
	}
}

// flush emits every group due at now; with all, every group. The kept
// lines of pids now known are taken first.
func (a *logcatAssembler) flush(now time.Time, all bool) {
	if a.pidGeneration == nil {
		a.replayPending(nil)
	} else if gen := a.pidGeneration(); gen != a.seenPIDGen { // read before the look, so a pid added during it is looked for next time
		a.seenPIDGen = gen
		a.replayPending(nil)
	}
	if a.message != nil && (all || !now.Before(a.message.due())) {
		a.finish(a.message)
		a.message = nil
	}
	for pid, g := range a.java {
		if all || !now.Before(g.due()) {
			a.finish(g)
			delete(a.java, pid)
		}
	}
	for pid, g := range a.native {
		if all || !now.Before(g.due()) {
			a.finish(g)
			delete(a.native, pid)
		}
	}
	for pid, g := range a.tombs {
		if all || !now.Before(g.due()) {
			// An unattributed tombstone is another process's; one joined
			// to its signal line is emitted with it.
			if g.tombstone && g.entry.Tag == "DEBUG" {
				a.finish(g)
			}
			delete(a.tombs, pid)
		}
	}
}

// nextFlush is when flush is next due; ok is false when nothing is open.
func (a *logcatAssembler) nextFlush() (at time.Time, ok bool) {
	consider := func(g *entryGroup) {
		if d := g.due(); !ok || d.Before(at) {
			at, ok = d, true
		}
	}
	if a.message != nil {
		consider(a.message)
	}
	for _, m := range []map[int]*entryGroup{a.java, a.native, a.tombs} {
		for _, g := range m {
			consider(g)
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
	_, name, ok := strings.Cut(msg[i:], "(")
	if !ok {
		return ""
	}
	name, _, _ = strings.Cut(name, ")")
	return name
}

// tombstoneProcess reads the tombstone's `pid: 4300, tid: 4321, name:
// mqt_js  >>> com.example.shop <<<`.
func tombstoneProcess(msg string) (pid int, pkg string, ok bool) {
	rest, found := strings.CutPrefix(msg, "pid: ")
	if !found {
		return 0, "", false
	}
	num, _, _ := strings.Cut(rest, ",")
	pid, err := strconv.Atoi(num)
	// The thread's name, which the app chooses, comes first: the last `>>> ` is the package's.
	i := strings.LastIndex(rest, ">>> ")
	if err != nil || pid <= 0 || i < 0 {
		return 0, "", false
	}
	pkg, _, found = strings.Cut(rest[i+len(">>> "):], " <<<")
	// A process of the app (com.example.shop:remote) is the app's.
	pkg, _, _ = strings.Cut(pkg, ":")
	return pid, pkg, found && pkg != ""
}

// activityStartProc reads ActivityManager's `Start proc 4300:com.example.shop/u0a123
// for activity …`: the pid of an app's new process, often before its first line.
func activityStartProc(msg string) (pid int, pkg string, ok bool) {
	_, rest, found := strings.Cut(msg, "Start proc ")
	if !found {
		return 0, "", false
	}
	num, rest, found := strings.Cut(rest, ":")
	if !found {
		return 0, "", false
	}
	pid, err := strconv.Atoi(num)
	pkg, _, _ = strings.Cut(rest, "/")
	pkg, _, _ = strings.Cut(pkg, " ")
	pkg, _, _ = strings.Cut(pkg, ":")
	return pid, pkg, err == nil && pid > 0 && validNativeAppID(pkg)
}

// simAssembler groups one simulator's events: each event is one entry,
// except an uncaught exception's, which gathers what its process logs
// after it until nativeIdleFlush passes. Not safe for concurrent use.
type simAssembler struct {
	emit  func(app string, e nativeEntry)
	crash map[int]*entryGroup // by pid
}

func newSimAssembler(emit func(string, nativeEntry)) *simAssembler {
	return &simAssembler{emit: emit, crash: map[int]*entryGroup{}}
}

// add takes one event of app (the follower attributed it), arrived at now.
func (a *simAssembler) add(l simLogLine, app string, now time.Time) {
	pid := int(l.PID)
	if g := a.crash[pid]; g != nil {
		for line := range strings.SplitSeq(l.Message, "\n") {
			g.add(line, now)
		}
		return
	}
	tag := l.Subsystem
	if tag == "" {
		tag = simProcessName(l.ImagePath)
	}
	e := nativeEntry{At: simTime(l.Timestamp, now), Level: simLevel(l.MessageType), Tag: tag, PID: pid, TID: int(l.TID),
		JSConsole: l.Subsystem == "com.facebook.react.log"}
	if strings.Contains(l.Message, "*** Terminating app due to uncaught exception") {
		e.Level, e.Crash = "error", nativeCrashObjC
		g := &entryGroup{app: app, entry: e}
		for line := range strings.SplitSeq(l.Message, "\n") {
			g.add(line, now)
		}
		a.crash[pid] = g
		return
	}
	g := entryGroup{entry: e}
	g.add(l.Message, now)
	a.emit(app, g.finish())
}

// flush emits every crash due at now; with all, every crash.
func (a *simAssembler) flush(now time.Time, all bool) {
	for pid, g := range a.crash {
		if all || !now.Before(g.due()) {
			a.emit(g.app, g.finish())
			delete(a.crash, pid)
		}
	}
}

// nextFlush is when flush is next due; ok is false when nothing is open.
func (a *simAssembler) nextFlush() (at time.Time, ok bool) {
	for _, g := range a.crash {
		if d := g.due(); !ok || d.Before(at) {
			at, ok = d, true
		}
	}
	return at, ok
}
