package main

// native_stderr.go is what the native side's children say besides their
// output: the last few lines each writes on its standard error (adb's
// "error: device unauthorized.", "adb server version (41) doesn't match
// this client (39); killing...", "no permissions (…)"), kept bounded and
// carried by the command's error, so that the health check can say why;
// and the environment the children run in, without ANDROID_LOG_TAGS.

import (
	"bytes"
	"cmp"
	"errors"
	"slices"
	"strings"
	"sync"
	"time"
)

const (
	// maxStderrLines is how many of a child's last stderr lines are kept.
	maxStderrLines = 4
	// maxStderrLine bounds each kept line, in bytes.
	maxStderrLine = 240
)

// nativeLogTagsEnv is the variable adb hands to the device's logcat as its
// filter (`export ANDROID_LOG_TAGS=…; exec logcat`): a developer's `*:S`
// for their own terminal would silence the whole capture.
const nativeLogTagsEnv = "ANDROID_LOG_TAGS"

// childEnv is env without ANDROID_LOG_TAGS, and the value it had ("" for none).
func childEnv(env []string) (kept []string, logTags string) {
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, nativeLogTagsEnv+"="); ok {
			logTags = v
			continue
		}
		kept = append(kept, kv)
	}
	return kept, logTags
}

// stderrTail is a child's standard error: it keeps the last maxStderrLines
// lines, each cut at maxStderrLine, and tells seen each line as it ends.
// Safe for concurrent use.
type stderrTail struct {
	seen func(line string)

	mu    sync.Mutex
	lines []string
	part  []byte // the line being written, at most 2*maxStderrLine bytes
}

func (t *stderrTail) Write(p []byte) (int, error) {
	n := len(p)
	t.mu.Lock()
	var ended []string
	for len(p) > 0 {
		chunk, rest, found := bytes.Cut(p, []byte("\n"))
		if room := 2*maxStderrLine - len(t.part); room > 0 {
			t.part = append(t.part, chunk[:min(room, len(chunk))]...)
		}
		if !found {
			break
		}
		if line := t.endLineLocked(); line != "" {
			ended = append(ended, line)
		}
		p = rest
	}
	t.mu.Unlock()
	for _, line := range ended {
		if t.seen != nil {
			t.seen(line)
		}
	}
	return n, nil
}

// endLineLocked keeps the line being written; the caller holds mu.
func (t *stderrTail) endLineLocked() string {
	line := clipText(strings.TrimSpace(cleanLogText(string(t.part))), maxStderrLine)
	t.part = t.part[:0]
	if line == "" {
		return ""
	}
	if len(t.lines) == maxStderrLines {
		t.lines = slices.Delete(t.lines, 0, 1)
	}
	t.lines = append(t.lines, line)
	return line
}

// kept is the lines kept, oldest first, with a last line not yet ended.
func (t *stderrTail) kept() []string {
	if t == nil {
		return nil
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	lines := append([]string(nil), t.lines...)
	if part := clipText(strings.TrimSpace(cleanLogText(string(t.part))), maxStderrLine); part != "" {
		lines = append(lines[max(0, len(lines)-maxStderrLines+1):], part)
	}
	return lines
}

// nativeCommandError is a command that failed, with its last stderr lines.
type nativeCommandError struct {
	Command string
	Err     error
	Stderr  []string
}

func (e *nativeCommandError) Error() string {
	if said := e.Said(); said != "" {
		return e.Command + ": " + e.Err.Error() + ": " + said
	}
	return e.Command + ": " + e.Err.Error()
}

func (e *nativeCommandError) Unwrap() error { return e.Err }

// Said is the stderr line that says why: the first that names an error,
// else the last that is not one of adb's `* daemon …` notes; "" when the
// command said nothing.
func (e *nativeCommandError) Said() string {
	said := ""
	for _, l := range e.Stderr {
		if strings.Contains(strings.ToLower(l), "error") || strings.Contains(l, "doesn't match") {
			return l
		}
		if !strings.HasPrefix(l, "* ") {
			said = l
		}
	}
	return said
}

// saidOnStderr is what a command that failed with err said of why on
// stderr (adb's `error: …`); "" for a silent exit status, or another error.
func saidOnStderr(err error) string {
	var ce *nativeCommandError
	if errors.As(err, &ce) {
		return ce.Said()
	}
	return ""
}

// nativeServerStart is when an adb command last started the adb server,
// and what it said then (the version clash that made it, or that none ran).
type nativeServerStart struct {
	At   time.Time
	Said string
}

// adbServerLine notes, from a line adb wrote on stderr, that the adb
// server was started (again).
func (r *nativeRunner) adbServerLine(line string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	switch {
	case strings.Contains(line, "doesn't match this client"), strings.HasPrefix(line, "* daemon not running"):
		r.server = nativeServerStart{At: r.now(), Said: line}
	case strings.Contains(line, "daemon started successfully"):
		r.server.At = r.now()
		r.server.Said = cmp.Or(r.server.Said, line)
	}
}

func (r *nativeRunner) serverStart() nativeServerStart {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.server
}
