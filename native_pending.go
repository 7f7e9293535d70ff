package main

// native_pending.go keeps, for a while, the logcat lines of processes no
// followed app owns yet. An app's first lines (its startup, a JavaScript
// error just before a crash) are often logged before its pid is known:
// before ActivityManager's `Start proc` line, or before the next `pidof`.
// Those lines wait here; once the pid is an app's, the assembler takes them
// back, in their order, before any newer line of that pid, and groups them
// as if the pid had been known all along. A crash that names its app (a
// Java crash's `Process:` line, libc's `Fatal signal … (package)`) makes
// its pid's lines the app's too, though no lookup ever saw that process.
// Lines of pids that never become an app's are forgotten as newer lines
// push them out.

import "time"

const (
	// maxPendingLines bounds the lines kept: a device logs a few hundred
	// lines a second at an app's launch, so this spans the second or two
	// before its pid is known, at a few hundred kilobytes at most.
	maxPendingLines = 1024
	// maxPendingBytes bounds their messages' bytes, so that a flood of long
	// lines (a logcat line holds up to about 4 KB) cannot hold megabytes.
	maxPendingBytes = 256 << 10
	// pendingLineAge is how much older than the newest kept line a line
	// may be: pidof runs every nativePollEvery (2 s) and takes a moment,
	// so an app's pid is known within about 3 s of its first line; the
	// rest is margin. Short, so that a pid the system soon gives to
	// another process does not bring an old process's lines with it.
	pendingLineAge = 5 * time.Second
)

type pendingLine struct {
	line logcatLine
	at   time.Time
}

// size is about the bytes the line holds: its text, less the pid, tid and
// level, which the struct holds in a few words.
func (p pendingLine) size() int { return len(p.line.Stamp) + len(p.line.Tag) + len(p.line.Message) }

// pendingLines holds lines of pids no followed app owns, oldest first,
// within maxPendingLines, maxPendingBytes and pendingLineAge. The zero
// value is empty and ready. Not safe for concurrent use.
type pendingLines struct {
	lines queue[pendingLine]
	byPID map[int]int // how many lines each pid has here
}

// add keeps l, arrived at now, forgetting the oldest lines past the bounds.
func (p *pendingLines) add(l logcatLine, now time.Time) {
	if p.byPID == nil {
		p.byPID = map[int]int{}
		p.lines = newQueue(maxPendingLines, maxPendingBytes, func(pl pendingLine) int64 { return int64(pl.size()) })
		p.lines.onDrop = p.forget
	}
	p.byPID[l.PID]++
	p.lines.push(pendingLine{line: l, at: now})
	for p.lines.len() > 0 && now.Sub(p.lines.at(0).at) > pendingLineAge {
		p.lines.dropOldest()
	}
}

// forget uncounts a line that left.
func (p *pendingLines) forget(pl pendingLine) {
	if p.byPID[pl.line.PID]--; p.byPID[pl.line.PID] == 0 {
		delete(p.byPID, pl.line.PID)
	}
}

func (p *pendingLines) has(pid int) bool { return p.byPID[pid] > 0 }

// take removes and returns, oldest first, the lines of the pids that
// known reports; nil when there are none.
func (p *pendingLines) take(known func(pid int) bool) []pendingLine {
	wanted := map[int]bool{}
	for pid := range p.byPID {
		if known(pid) {
			wanted[pid] = true
		}
	}
	if len(wanted) == 0 {
		return nil
	}
	var taken []pendingLine
	for range p.lines.len() {
		pl, _ := p.lines.pop()
		if wanted[pl.line.PID] {
			p.forget(pl)
			taken = append(taken, pl)
		} else {
			p.lines.push(pl) // kept, in its order: the queue had room for it
		}
	}
	return taken
}

// replayPending hands the assembler, in their order, the kept lines of the
// pids now an app's (of those match accepts; every pid for nil).
func (a *logcatAssembler) replayPending(match func(pid int) bool) {
	apps := map[int]string{}
	taken := a.pending.take(func(pid int) bool {
		if match != nil && !match(pid) {
			return false
		}
		apps[pid] = a.appOf(pid)
		return apps[pid] != ""
	})
	for _, pl := range taken {
		a.addMessage(pl.line, apps[pl.line.PID], pl.at)
	}
}

// replayBeforeCrash hands the assembler the kept lines of pid, whose app a
// crash has just named (see the top of the file): they go out before it.
func (a *logcatAssembler) replayBeforeCrash(pid int, app string) {
	taken := a.pending.take(func(p int) bool { return p == pid })
	for _, pl := range taken {
		a.addMessage(pl.line, app, pl.at)
	}
	if len(taken) > 0 {
		a.finish(a.message) // the last of them, which addMessage left open
		a.message = nil
	}
}
