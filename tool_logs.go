package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// tools_logs.go reads the console and network streams for
// debug_get_logs and debug_get_network: paging and filtering events on the
// server, one-line summaries, and one exchange in full.

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
	raw, err := s.request(ctx, "events.query", p)
	if err != nil {
		return eventPage{}, err
	}
	var page eventPage
	events, hasMore, oldest, latest, err := splitEventsAnswer(raw)
	if err != nil {
		return eventPage{}, err
	}
	page.oldestSeq, _ = wireInt(oldest)
	page.latestSeq, _ = wireInt(latest)
	page.hasMore = string(hasMore) == "true"
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
}

// scanResult holds at most limit matching events, ascending.
type scanResult struct {
	events    [][]byte
	hasMore   bool
	latestSeq int64
}

// scanEvents answers a filtered query the adapter cannot filter itself,
// with events.query semantics: with since, the oldest limit matches after
// it; without, the newest limit matches. It pages through at most
// maxScanEvents events; hasMore is also true when older events lie beyond
// that bound unscanned.
func (q *adapterQueries) scanEvents(ctx context.Context, s *session, sc eventScan) (scanResult, error) {
	if sc.keep == nil {
		page, err := q.fetchEvents(ctx, s, eventsParams{Stream: sc.stream, Limit: sc.limit, SinceSeq: sc.since, EventType: sc.eventType})
		return scanResult{events: page.events, hasMore: page.hasMore, latestSeq: page.latestSeq}, err
	}
	var matches [][]byte
	if sc.since != nil {
		cursor := *sc.since
		var latest int64
		for scanned := 0; scanned < maxScanEvents; scanned += scanPage {
			page, err := q.fetchEvents(ctx, s, eventsParams{Stream: sc.stream, Limit: scanPage, SinceSeq: &cursor, EventType: sc.eventType})
			if err != nil {
				return scanResult{}, err
			}
			latest = page.latestSeq
			for i, ev := range page.events {
				if sc.keep(ev) {
					if int64(len(matches)) == sc.limit {
						return scanResult{events: matches, hasMore: true, latestSeq: latest}, nil
					}
					matches = append(matches, ev)
				}
				cursor = page.seqs[i]
			}
			if !page.hasMore || len(page.events) == 0 {
				return scanResult{events: matches, latestSeq: latest}, nil
			}
		}
		return scanResult{events: matches, hasMore: true, latestSeq: latest}, nil
	}

	// Newest first: one page answers most queries; older pages are read
	// forward from the start of a bounded window.
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
}

// readLogEntry reads a console `log` event.
func readLogEntry(event []byte) logEntry {
	e := logEntry{Timestamp: rawMember(event, "timestamp")}
	e.Seq, _ = wireInt(rawMember(event, "seq"))
	if e.Timestamp == nil {
		e.Timestamp = json.RawMessage("null")
	}
	payload := rawMember(event, "payload")
	level, _ := wireString(rawMember(payload, "level"))
	e.Level = appLogLevels[logLevelRank(level)]
	msg := rawMember(payload, "message")
	if s, ok := wireString(msg); ok {
		e.Message = s
	} else if msg != nil {
		e.Message = string(compactJSON(msg)) // apps log objects too
	}
	e.Message = clipText(e.Message, maxLogMessage)
	e.Stack, e.MoreFrames = cutStack(rawMember(payload, "stack"))
	return e
}

// clipText cuts s to max characters, saying how many were left out.
func clipText(s string, max int) string {
	if utf8.RuneCountInString(s) <= max {
		return s
	}
	r := []rune(s)
	return string(r[:max]) + fmt.Sprintf("… (%d more characters)", len(r)-max)
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
	minRank := 0
	if level, ok := a.str("level"); ok {
		minRank = slices.Index(appLogLevels, strings.ToLower(level))
		if minRank < 0 {
			return nil, invalidParams("level", fmt.Sprintf("%q is not one of debug, info, warn, error", level))
		}
	}
	contains, _ := a.str("contains")
	contains = strings.ToLower(contains)
	if err := ts.checkStream(a.session, consoleStream); err != nil {
		return nil, consoleMissing(err, consoleStream)
	}
	sc := eventScan{stream: consoleStream, eventType: logEventType}
	sc.limit, _ = a.int("limit")
	if since, ok := a.int("since_seq"); ok {
		sc.since = &since
	}
	if minRank > 0 || contains != "" {
		sc.keep = func(ev []byte) bool {
			payload := rawMember(ev, "payload")
			level, _ := wireString(rawMember(payload, "level"))
			if logLevelRank(level) < minRank {
				return false
			}
			return contains == "" || containsFold(rawMember(payload, "message"), contains) ||
				containsFold(rawMember(payload, "stack"), contains)
		}
	}
	res, err := ts.scanEvents(ctx, a.session, sc)
	if err != nil {
		return nil, err
	}
	entries := make([]logEntry, len(res.events))
	for i, ev := range res.events {
		entries[i] = readLogEntry(ev)
	}
	body, err := json.Marshal(struct {
		Entries   []logEntry `json:"entries"`
		HasMore   bool       `json:"hasMore"`
		LatestSeq int64      `json:"latestSeq"`
	}{entries, res.hasMore, res.latestSeq})
	if err != nil {
		return nil, err
	}
	return &toolResult{body: body, narrow: "Ask for fewer entries with a smaller `limit`, or filter with `level` or `contains`."}, nil
}

// containsFold reports whether a JSON value's text holds lower (lower-case).
func containsFold(v []byte, lower string) bool {
	if v == nil {
		return false
	}
	if s, ok := wireString(v); ok {
		return strings.Contains(strings.ToLower(s), lower)
	}
	return strings.Contains(strings.ToLower(string(v)), lower)
}

// consoleMissing explains a missing console or network stream in the terms
// of what the app would need.
func consoleMissing(err error, stream string) error {
	te := asToolError(err)
	if te == nil || te.Code != codeStreamUnavailable {
		return err
	}
	e := *te
	e.Message += fmt.Sprintf("; the app's debug adapter would need to record a %q stream (PROTOCOL.md §3)", stream)
	return &e
}

// requestSummary is one line of debug_get_network's list.
type requestSummary struct {
	Seq           int64           `json:"seq"`
	Timestamp     json.RawMessage `json:"timestamp"`
	Method        string          `json:"method"`
	URL           string          `json:"url"`
	Status        json.RawMessage `json:"status"`
	DurationMs    json.RawMessage `json:"durationMs"`
	ResponseBytes int             `json:"responseBytes"`
	Error         string          `json:"error,omitempty"`
}

func orNull(v []byte) json.RawMessage {
	if v == nil {
		return json.RawMessage("null")
	}
	return compactJSON(v)
}

func summarizeRequest(event []byte) requestSummary {
	payload := rawMember(event, "payload")
	r := requestSummary{Timestamp: orNull(rawMember(event, "timestamp")),
		Status: orNull(rawMember(payload, "status")), DurationMs: orNull(rawMember(payload, "durationMs"))}
	r.Seq, _ = wireInt(rawMember(event, "seq"))
	r.Method, _ = wireString(rawMember(payload, "method"))
	url, _ := wireString(rawMember(payload, "url"))
	r.URL = clipText(url, maxSummaryURL)
	r.Error, _ = wireString(rawMember(payload, "error"))
	body := rawMember(rawMember(payload, "response"), "body")
	if s, ok := wireString(body); ok {
		r.ResponseBytes = len(s)
	} else if body != nil && rawKind(body) != "null" {
		r.ResponseBytes = len(compactJSON(body))
	}
	return r
}

// statusFilter turns a status argument into a test of an event's status.
func statusFilter(arg string) (func(status []byte) bool, error) {
	arg = strings.ToLower(strings.TrimSpace(arg))
	if arg == "failed" {
		return func(status []byte) bool { return status == nil || rawKind(status) == "null" }, nil
	}
	if len(arg) == 3 && arg[0] >= '1' && arg[0] <= '5' && arg[1:] == "xx" {
		lo := int64(arg[0]-'0') * 100
		return func(status []byte) bool { n, ok := wireInt(status); return ok && n >= lo && n < lo+100 }, nil
	}
	code, inRange, ok := decimalInteger([]byte(arg))
	if !ok || !inRange || code < 100 || code > 599 {
		return nil, invalidParams("status", fmt.Sprintf("%q is not 2xx, 3xx, 4xx, 5xx, failed or a status code", arg))
	}
	return func(status []byte) bool { n, ok := wireInt(status); return ok && n == code }, nil
}

func getNetwork(ctx context.Context, ts *toolSet, a toolArgs) (*toolResult, error) {
	var keeps []func(payload []byte) bool
	if arg, ok := a.str("status"); ok {
		match, err := statusFilter(arg)
		if err != nil {
			return nil, err
		}
		keeps = append(keeps, func(p []byte) bool { return match(rawMember(p, "status")) })
	}
	if method, ok := a.str("method"); ok {
		keeps = append(keeps, func(p []byte) bool {
			m, _ := wireString(rawMember(p, "method"))
			return strings.EqualFold(m, method)
		})
	}
	if part, ok := a.str("url_contains"); ok {
		part = strings.ToLower(part)
		keeps = append(keeps, func(p []byte) bool { return containsFold(rawMember(p, "url"), part) })
	}
	if err := ts.checkStream(a.session, networkStream); err != nil {
		return nil, consoleMissing(err, networkStream)
	}
	if seq, ok := a.int("seq"); ok {
		return ts.requestDetail(ctx, a.session, seq)
	}
	sc := eventScan{stream: networkStream, eventType: requestEvent}
	sc.limit, _ = a.int("limit")
	if since, ok := a.int("since_seq"); ok {
		sc.since = &since
	}
	if len(keeps) > 0 {
		sc.keep = func(ev []byte) bool {
			p := rawMember(ev, "payload")
			for _, keep := range keeps {
				if !keep(p) {
					return false
				}
			}
			return true
		}
	}
	res, err := ts.scanEvents(ctx, a.session, sc)
	if err != nil {
		return nil, err
	}
	requests := make([]requestSummary, len(res.events))
	for i, ev := range res.events {
		requests[i] = summarizeRequest(ev)
	}
	body, err := json.Marshal(struct {
		Requests  []requestSummary `json:"requests"`
		HasMore   bool             `json:"hasMore"`
		LatestSeq int64            `json:"latestSeq"`
	}{requests, res.hasMore, res.latestSeq})
	if err != nil {
		return nil, err
	}
	return &toolResult{body: body, narrow: "Ask for fewer requests with a smaller `limit`, or filter with `status`, `method` or `url_contains`."}, nil
}

// requestDetail is one exchange in full: the event's payload with its seq
// and timestamp. Bodies that do not fit the result budget are replaced by
// their size and an outline of their largest members, the largest first.
func (ts *toolSet) requestDetail(ctx context.Context, s *session, seq int64) (*toolResult, error) {
	since := seq - 1
	page, err := ts.fetchEvents(ctx, s, eventsParams{Stream: networkStream, Limit: 1, SinceSeq: &since, EventType: requestEvent})
	if err != nil {
		return nil, err
	}
	if len(page.events) == 0 || page.seqs[0] != seq {
		return nil, newToolError(codeEventNotFound, map[string]any{"stream": networkStream, "seq": seq, "oldestSeq": page.oldestSeq, "latestSeq": page.latestSeq},
			"no %s event with seq %d in the network stream (it holds %d-%d)", requestEvent, seq, page.oldestSeq, page.latestSeq)
	}
	event := page.events[0]
	payload := rawMember(event, "payload")
	type part struct{ side, name string }
	bodies := map[part][]byte{}
	build := func() []byte {
		var o jsonObject
		o.raw("seq", strconv.AppendInt(nil, seq, 10))
		o.raw("timestamp", orNull(rawMember(event, "timestamp")))
		_ = eachMember(payload, func(name string, v []byte) bool {
			if name != "request" && name != "response" || rawKind(v) != "object" {
				o.raw(name, compactJSON(v))
				return true
			}
			var side jsonObject
			_ = eachMember(v, func(field string, fv []byte) bool {
				if cut, ok := bodies[part{name, field}]; ok {
					side.raw(field, cut)
				} else {
					side.raw(field, compactJSON(fv))
				}
				return true
			})
			o.raw(name, side.close())
			return true
		})
		return o.close()
	}
	body := build()
	budget := ts.cfg.MaxResultBytes - budgetMargin
	if len(body) > budget {
		var parts []part
		sizes := map[part][]byte{}
		for _, side := range []string{"response", "request"} {
			_ = eachMember(rawMember(payload, side), func(field string, fv []byte) bool {
				p := part{side, field}
				parts, sizes[p] = append(parts, p), fv
				return true
			})
		}
		slices.SortStableFunc(parts, func(x, y part) int { return len(sizes[y]) - len(sizes[x]) })
		for _, p := range parts {
			if len(body) <= budget {
				break
			}
			bodies[p] = cutValue(sizes[p])
			body = build()
		}
	}
	return &toolResult{body: body, narrow: "The exchange's headers are too large to show; read the app's own logs for it."}, nil
}

// cutValue stands in for a value too large to show: its size and, for an
// object or array, its largest members.
func cutValue(v []byte) []byte {
	out := map[string]any{"omitted": true, "bytes": len(v), "type": rawKind(v)}
	if outline, err := rawOutline(v, nil); err == nil && len(outline) > 0 {
		out["outline"] = outline[:min(len(outline), 10)]
	}
	data, _ := json.Marshal(out)
	return data
}
