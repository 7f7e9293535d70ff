package main

// native_verdict.go reads Android's own verdicts about an app's process,
// which system_server (tag ActivityManager) and the low-memory killer
// (lowmemorykiller, lmkd) write under their own pids, not the app's:
//
//	ANR in com.example.shop (com.example.shop/.MainActivity)     E, then on
//	PID: 5400 / Reason: Input dispatching timed out (…) / …      lines of the same prefix
//	Process com.example.shop (pid 5400) has died: fg  TOP
//	Killing 5400:com.example.shop/u0a190 (adj 900): excessive cpu
//	Force stopping com.example.shop appid=10190 user=0: from pid 1234
//	Kill 'com.example.shop' (5400), uid 10190, oom_score_adj 900 to free 81234kB rss, 12345kB swap; reason: low watermark is breached
//
// Each is attributed by the package (and pid) it names, exactly as a
// tombstone is by its `>>> package <<<` line, and becomes one entry of
// that app with End set, at once; another package's is left alone. An
// ANR's lines (one message, one prefix) are one `error` entry, emitted
// when its writer's next line comes or nativeIdleFlush has passed.

import (
	"cmp"
	"strconv"
	"strings"
	"sync"
	"time"
)

// How Android says an app's process ended (nativeEntry.End); a crash of
// the app is nativeEndCrash.
const (
	nativeEndCrash     = "crashed"
	nativeEndANR       = "anr"
	nativeEndLowMemory = "killed_low_memory"
	nativeEndKilled    = "killed"
	nativeEndStopped   = "stopped"
	nativeEndDied      = "died"
)

// androidVerdict is one verdict's first line, read.
type androidVerdict struct {
	End string
	Pkg string // the app's package, its `:process` suffix left out
	PID int    // 0 when the line names none (a force stop; an ANR names it on its next line)
}

// parseAndroidVerdict reads a verdict's first line; ok is false for any other.
func parseAndroidVerdict(tag, msg string) (v androidVerdict, ok bool) {
	switch tag {
	case "ActivityManager":
		v, ok = parseActivityVerdict(msg)
	case "lowmemorykiller", "lmkd":
		// `Kill 'pkg' (5400), uid …`; older ones `Killing 'pkg' (5400), adj …`.
		verb, rest, found := strings.Cut(msg, " '")
		found = found && (verb == "Kill" || verb == "Killing")
		pkg, rest, quoted := strings.Cut(rest, "' (")
		num, _, closed := strings.Cut(rest, ")")
		pid, err := strconv.Atoi(num)
		v, ok = androidVerdict{End: nativeEndLowMemory, Pkg: pkg, PID: pid}, found && quoted && closed && err == nil && pid > 0
	}
	v.Pkg, _, _ = strings.Cut(v.Pkg, ":")
	return v, ok && validNativeAppID(v.Pkg)
}

// activityEnds are the ActivityManager lines that name the app in the
// word after their prefix.
var activityEnds = []struct{ prefix, end string }{{"ANR in ", nativeEndANR}, {"Force stopping ", nativeEndStopped}}

func parseActivityVerdict(msg string) (androidVerdict, bool) {
	for _, a := range activityEnds {
		if rest, ok := strings.CutPrefix(msg, a.prefix); ok {
			pkg, _, _ := strings.Cut(rest, " ")
			return androidVerdict{End: a.end, Pkg: pkg}, true
		}
	}
	if rest, ok := strings.CutPrefix(msg, "Process "); ok {
		pkg, rest, found := strings.Cut(rest, " (pid ")
		num, rest, closed := strings.Cut(rest, ")")
		pid, err := strconv.Atoi(num)
		return androidVerdict{End: nativeEndDied, Pkg: pkg, PID: pid},
			found && closed && err == nil && pid > 0 && strings.HasPrefix(rest, " has died")
	}
	if rest, ok := strings.CutPrefix(msg, "Killing "); ok {
		num, rest, found := strings.Cut(rest, ":")
		pid, err := strconv.Atoi(num)
		pkg, _, slash := strings.Cut(rest, "/")
		return androidVerdict{End: nativeEndKilled, Pkg: pkg, PID: pid}, found && slash && err == nil && pid > 0
	}
	return androidVerdict{}, false
}

func verdictLevel(end string, level byte) string {
	switch end {
	case nativeEndANR:
		return "error"
	case nativeEndLowMemory, nativeEndKilled:
		return "warn"
	}
	return logcatLevel(level)
}

// addVerdict takes a line of a verdict about a followed app (its first, or
// a further line of an ANR's message), reporting false for any other line.
func (a *logcatAssembler) addVerdict(l logcatLine, now time.Time) bool {
	k := groupKey{roleVerdict, l.PID}
	if g := a.groups[k]; g != nil && g.entry.End == nativeEndANR && g.key == logcatKey(l) {
		if num, ok := strings.CutPrefix(l.Message, "PID: "); ok && g.entry.PID == 0 {
			g.entry.PID, _ = strconv.Atoi(strings.TrimSpace(num))
		}
		g.add(l.Message, now)
		return true
	}
	a.finishKey(k)
	v, ok := parseAndroidVerdict(l.Tag, l.Message)
	// Any process may use the tags: an app's own line is no verdict.
	if !ok || !a.follows(v.Pkg) || a.appOf(l.PID) != "" {
		return false
	}
	g := a.newGroup(l, v.Pkg, now, "")
	g.key = logcatKey(l)
	g.entry.PID, g.entry.End, g.entry.Level = v.PID, v.End, verdictLevel(v.End, l.Level)
	if v.End == nativeEndANR {
		a.groups[k] = g // its PID, Reason and the rest follow
		return true
	}
	for _, role := range []groupRole{roleJava, roleNative} {
		if crash := a.groups[groupKey{role, v.PID}]; v.PID > 0 && crash != nil && crash.app == v.Pkg {
			a.finishKey(groupKey{role, v.PID}) // the process is gone: its crash is whole, and goes first
		}
	}
	a.finish(g)
	return true
}

// nativeEndStatus is how an app last ended, for the health check.
type nativeEndStatus struct {
	App, Device string
	DeviceID    string // the serial or udid: ends are merged per app and device
	How         string // a nativeEnd… value
	Kind        string // the crash's kind, when it crashed
	PID         int    // 0 when unknown
	At          time.Time
	Reason      string // the crash's headline, the ANR's Reason, the verdict's line
}

// endVerdictSpan is how long after an app's end (a crash, an ANR) the kill
// and the death that follow are taken as the same end, not a new one.
const endVerdictSpan = 10 * time.Second

// appEnds keeps the last end of an app. Safe for concurrent use.
type appEnds struct {
	mu  sync.Mutex
	end *nativeEndStatus
}

// note takes an entry that says the app ended: a crash, or a verdict.
func (r *appEnds) note(app nativeApp, e nativeEntry) {
	lines := splitLines(e.Message, maxEntryLines)
	end := &nativeEndStatus{App: app.AppID, Device: cmp.Or(app.DeviceName, app.DeviceID), DeviceID: app.DeviceID, How: e.End,
		PID: e.PID, At: e.At, Reason: strings.TrimSpace(lines[0])}
	if e.Crash != "" {
		end.How, end.Kind, end.Reason = nativeEndCrash, e.Crash, crashHeadline(e.Crash, lines)
	}
	for _, l := range lines {
		if reason, ok := strings.CutPrefix(l, "Reason: "); ok && e.End == nativeEndANR {
			end.Reason = reason
		}
	}
	end.Reason = clipText(end.Reason, 300)
	r.mu.Lock()
	defer r.mu.Unlock()
	if prev := r.end; prev != nil && prev.App == end.App && prev.DeviceID == end.DeviceID && (end.How == nativeEndDied || end.How == nativeEndKilled) &&
		prev.How != nativeEndDied && prev.How != nativeEndKilled && end.At.Sub(prev.At) < endVerdictSpan && !end.At.Before(prev.At) {
		return // the death or kill that follows a crash, an ANR, a stop, a low-memory kill
	}
	r.end = end
}

// last is the last end noted (nil for none), which note replaces, never
// changes, so what it returns is safe to read without the lock.
func (r *appEnds) last() *nativeEndStatus {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.end
}
