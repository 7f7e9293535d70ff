package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
)

// tool_logs.go reads the console stream for debug_get_logs, and pages and
// filters a stream's events on the server for it and for debug_get_network
// (tool_network.go).

// The log levels, lowest first; a level filter is a minimum.
var appLogLevels = []string{"debug", "info", "warn", "error"}

// logLevelRank places a level an app reports on appLogLevels, reading common
// other spellings (console.log is info, console.trace debug).
func logLevelRank(level string) int {
	switch strings.ToLower(level) {
	case "debug", "trace", "verbose":
		return 0
	case "warn", "warning":
		return 2
	case "error", "fatal", "critical":
		return 3
	}
	return 1
}

// eventPage is one events.query answer with its events split out.
type eventPage struct {
	events               [][]byte
	seqs                 []int64
	hasMore              bool
	oldestSeq, latestSeq int64
}

func (q *adapterQueries) fetchEvents(ctx context.Context, s *session, p eventsParams) (eventPage, error) {
	return q.fetchEventsFrom(ctx, s, p, false)
}

// fetchEventsFrom is fetchEvents, asking the server's own buffers rather
// than the app when local is set: they hold every event the app pushed.
func (q *adapterQueries) fetchEventsFrom(ctx context.Context, s *session, p eventsParams, local bool) (eventPage, error) {
	var raw json.RawMessage
	var err error
	if local {
		raw, err = s.answerLocally("events.query", p)
	} else {
		raw, err = s.request(ctx, "events.query", p)
	}
	if err != nil {
		return eventPage{}, err
	}
	events, hasMore, oldest, latest, err := splitEventsAnswer(raw)
	if err != nil {
		return eventPage{}, err
	}
	page := eventPage{hasMore: string(hasMore) == "true"}
	page.oldestSeq, _ = wireInt(oldest)
	page.latestSeq, _ = wireInt(latest)
	bad := false
	_ = eachElement(events, func(_ int, ev []byte) bool {
		seq, ok := wireInt(rawMember(ev, "seq"))
		if rawKind(ev) != "object" || !ok {
			bad = true
			return false
		}
		page.events = append(page.events, ev)
		page.seqs = append(page.seqs, seq)
		return true
	})
	if bad {
		return eventPage{}, malformedAnswer("events.query", "every event needs a numeric seq")
	}
	return page, nil
}

// eventScan asks for the events of one type of a stream that keep accepts.
type eventScan struct {
	stream, eventType string
	keep              func(event []byte) bool // nil: every event
	limit             int64
	since             *int64
	local             bool // read the server's buffers, not the app (fetchEventsFrom)
}

// scanResult holds at most limit matching events, ascending. With since,
// scanned counts the events looked at (of eventType) and cursor is the seq
// of the last of them: every event after it is still unread.
type scanResult struct {
	events    [][]byte
	hasMore   bool
	latestSeq int64
	scanned   int
	cursor    int64
}

// scanEvents answers a filtered query the adapter cannot filter itself,
// with events.query semantics: with since, the oldest limit matches after
// it; without, the newest limit matches. It pages through at most
// maxScanEvents events; hasMore is also true when older events lie beyond
// that bound unscanned.
func (q *adapterQueries) scanEvents(ctx context.Context, s *session, sc eventScan) (scanResult, error) {
	if sc.keep == nil {
		page, err := q.fetchEventsFrom(ctx, s, eventsParams{Stream: sc.stream, Limit: sc.limit, SinceSeq: sc.since, EventType: sc.eventType}, sc.local)
		res := scanResult{events: page.events, hasMore: page.hasMore, latestSeq: page.latestSeq, scanned: len(page.events)}
		if sc.since != nil {
			res.cursor = *sc.since
		}
		if n := len(page.seqs); n > 0 {
			res.cursor = page.seqs[n-1]
		}
		return res, err
	}
	if sc.since != nil {
		return q.scanAfter(ctx, s, sc)
	}
	return q.scanNewest(ctx, s, sc)
}

// scanAfter is scanEvents with since: it pages forward from since until a
// match past limit, the stream's end or the bound.
func (q *adapterQueries) scanAfter(ctx context.Context, s *session, sc eventScan) (scanResult, error) {
	res := scanResult{cursor: *sc.since}
	for pages := 0; pages < maxScanEvents/scanPage; pages++ {
		cursor := res.cursor
		page, err := q.fetchEventsFrom(ctx, s, eventsParams{Stream: sc.stream, Limit: scanPage, SinceSeq: &cursor, EventType: sc.eventType}, sc.local)
		if err != nil {
			return scanResult{}, err
		}
		res.latestSeq = page.latestSeq
		for i, ev := range page.events {
			if sc.keep(ev) {
				if int64(len(res.events)) == sc.limit {
					res.hasMore = true
					return res, nil
				}
				res.events = append(res.events, ev)
			}
			res.cursor = page.seqs[i]
			res.scanned++
		}
		if !page.hasMore || len(page.events) == 0 {
			return res, nil
		}
	}
	res.hasMore = true
	return res, nil
}

// scanNewest is scanEvents without since, newest first: one page answers
// most queries; older pages are read forward from the start of a bounded
// window.
func (q *adapterQueries) scanNewest(ctx context.Context, s *session, sc eventScan) (scanResult, error) {
	var matches [][]byte
	newest, err := q.fetchEvents(ctx, s, eventsParams{Stream: sc.stream, Limit: scanPage, EventType: sc.eventType})
	if err != nil {
		return scanResult{}, err
	}
	for _, ev := range newest.events {
		if sc.keep(ev) {
			matches = append(matches, ev)
		}
	}
	res := scanResult{latestSeq: newest.latestSeq}
	if int64(len(matches)) > sc.limit || !newest.hasMore || len(newest.events) == 0 {
		res.hasMore = int64(len(matches)) > sc.limit
		res.events = matches[max(0, int64(len(matches))-sc.limit):]
		return res, nil
	}
	stop := newest.seqs[0]
	cursor := max(newest.oldestSeq-1, stop-1-(maxScanEvents-scanPage), 0)
	unscanned := cursor > newest.oldestSeq-1
	var older [][]byte
scan:
	for pages := 0; cursor < stop-1 && pages < maxScanEvents/scanPage; pages++ {
		page, err := q.fetchEvents(ctx, s, eventsParams{Stream: sc.stream, Limit: scanPage, SinceSeq: &cursor, EventType: sc.eventType})
		if err != nil {
			return scanResult{}, err
		}
		for i, ev := range page.events {
			if page.seqs[i] >= stop {
				break scan
			}
			cursor = page.seqs[i]
			if sc.keep(ev) {
				older = append(older, ev)
				if int64(len(older)) > sc.limit { // keep the newest limit+1
					older = older[1:]
				}
			}
		}
		if !page.hasMore || len(page.events) == 0 {
			break
		}
	}
	all := append(older, matches...)
	res.hasMore = unscanned || int64(len(all)) > sc.limit
	res.events = all[max(0, int64(len(all))-sc.limit):]
	return res, nil
}

// logEntry is one console event as debug_get_logs returns it.
type logEntry struct {
	Seq        int64           `json:"seq"`
	Timestamp  json.RawMessage `json:"timestamp"`
	Level      string          `json:"level"`
	Message    string          `json:"message"`
	Stack      json.RawMessage `json:"stack,omitempty"`
	MoreFrames int             `json:"moreFrames,omitempty"`
	// HiddenFrames counts the framework frames of a stack mapped to source
	// (tool_stacks.go); Symbolicated marks such a stack.
	HiddenFrames int  `json:"hiddenFrames,omitempty"`
	Symbolicated bool `json:"symbolicated,omitempty"`
	// Native marks a line of the app's native log (session_native.go),
	// with its tag, pid and tid; Crash names a crash's kind, Ended the
	// verdict of an entry in which Android ended the app (native_verdict.go).
	Native bool   `json:"native,omitempty"`
	Tag    string `json:"tag,omitempty"`
	PID    int64  `json:"pid,omitempty"`
	TID    int64  `json:"tid,omitempty"`
	Crash  string `json:"crash,omitempty"`
	Ended  string `json:"ended,omitempty"`
}

// maxCrashMessage bounds a crash's text, which is kept whole up to it: the
// stack is the point of a crash entry.
const maxCrashMessage = 32000

func readLogEntry(event []byte) logEntry {
	e := logEntry{Timestamp: orNull(rawMember(event, "timestamp"))}
	e.Seq, _ = wireInt(rawMember(event, "seq"))
	payload := rawMember(event, "payload")
	level, _ := wireString(rawMember(payload, "level"))
	e.Level = appLogLevels[logLevelRank(level)]
	msg := rawMember(payload, "message")
	if s, ok := wireString(msg); ok {
		e.Message = s
	} else if msg != nil {
		e.Message = string(compactJSON(msg)) // apps log objects too
	}
	if string(rawMember(payload, "native")) == "true" {
		e.Native = true
		e.Tag, _ = wireString(rawMember(payload, "tag"))
		e.PID, _ = wireInt(rawMember(payload, "pid"))
		e.TID, _ = wireInt(rawMember(payload, "tid"))
		e.Crash, _ = wireString(rawMember(payload, "crash"))
		e.Ended, _ = wireString(rawMember(payload, "ended"))
	}
	if e.Crash != "" {
		e.Message = clipText(e.Message, maxCrashMessage)
	} else {
		e.Message = clipText(e.Message, maxLogMessage)
	}
	e.Stack, e.MoreFrames = cutStack(rawMember(payload, "stack"))
	return e
}

// cutStack keeps the first maxStackFrames lines of a stack given as text, or
// elements of one given as an array, and counts the rest.
func cutStack(stack []byte) (json.RawMessage, int) {
	switch rawKind(stack) {
	case "string":
		s, _ := wireString(stack)
		lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
		if len(lines) <= maxStackFrames+1 { // the first line is often the error itself
			return compactJSON(stack), 0
		}
		kept, _ := json.Marshal(strings.Join(lines[:maxStackFrames+1], "\n"))
		return kept, len(lines) - maxStackFrames - 1
	case "array":
		var frames [][]byte
		n := 0
		_ = eachElement(stack, func(i int, v []byte) bool {
			n++
			if i < maxStackFrames {
				frames = append(frames, compactJSON(v))
			}
			return true
		})
		if n <= maxStackFrames {
			return compactJSON(stack), 0
		}
		return append(append([]byte{'['}, bytes.Join(frames, []byte(","))...), ']'), n - maxStackFrames
	case "nothing", "null":
		return nil, 0
	}
	return compactJSON(stack), 0
}

func getLogs(ctx context.Context, ts *toolSet, a toolArgs) (*toolResult, error) {
	sc, err := ts.filteredScan(a, consoleStream, logEventType)
	if err != nil {
		return nil, err
	}
	res, err := ts.scanEvents(ctx, a.session, sc)
	if err != nil {
		return nil, err
	}
	entries := make([]logEntry, len(res.events))
	for i, ev := range res.events {
		entries[i] = readLogEntry(ev)
	}
	note := ts.mapLogStacks(ctx, res.events, entries)
	return encodeResult(struct {
		Entries       []logEntry `json:"entries"`
		HasMore       bool       `json:"hasMore"`
		LatestSeq     int64      `json:"latestSeq"`
		Symbolication *stackNote `json:"symbolication,omitempty"`
	}{entries, res.hasMore, res.latestSeq, note}, "Ask for fewer entries with a smaller `limit`, or filter with `level` or `contains`.")
}

// consoleMissing explains a missing console or network stream in the terms
// of what the app would need.
func consoleMissing(err error, stream string, s *session) error {
	te := toolErrorOf(err)
	if te == nil || te.Code != codeStreamUnavailable {
		return err
	}
	e := *te
	if s != nil && s.via == sessionViaMetro {
		e.Message += "; through Metro, requests appear only from apps whose React Native reports them " +
			"(network inspection, React Native 0.83 and later, Metro's enableNetworkInspector experiment); none has come from this app yet"
		e.Suggestion = "Make a request in the app, or turn on network inspection in Metro's config; Reactotron's client or a debug adapter also report requests."
		return &e
	}
	e.Message += fmt.Sprintf("; the app's debug adapter would need to record a %q stream (docs/protocol.md §3)", stream)
	return &e
}
