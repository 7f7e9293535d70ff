package main

// tool_wait.go is debug_wait_for: from an action to its outcome in one call.
// It answers with the next events of a stream that pass the same filters
// debug_get_logs and debug_get_network take (tool_filter.go), waiting for
// them. The wait costs nothing while nothing happens: it is woken by the
// events the session records (session_watch.go), never by polling, and its
// tool is marked `waits` so that transports run it outside the pool of
// workers that serves every other request.

import (
	"context"
	"encoding/json"
	"fmt"
	"time"
)

const (
	// maxWaits bounds the debug_wait_for calls waiting at once, across
	// every client; the error past it names it.
	maxWaits = 256
	// waitProgressEvery is how often a wait whose request carries a
	// progressToken reports how long it has waited and what it has seen.
	waitProgressEvery = 3 * time.Second
)

// waitSlotsFullKey marks the context of a call that waits whose transport
// connection already holds as many waiting calls as it lets wait
// (maxWaiting, rpc_waiting.go); its value is that bound.
type waitSlotsFullKey struct{}

// withoutWaitSlot marks ctx as the context of a wait its connection has no
// room for: the call is refused at once with BUSY (toolSet.call).
func withoutWaitSlot(ctx context.Context, limit int) context.Context {
	return context.WithValue(ctx, waitSlotsFullKey{}, limit)
}

// noWaitSlot reports the bound of a call marked by withoutWaitSlot.
func noWaitSlot(ctx context.Context) (limit int, full bool) {
	limit, full = ctx.Value(waitSlotsFullKey{}).(int)
	return limit, full
}

var waitTool = &tool{
	name:  "debug_wait_for",
	title: "Wait for the app's next events",
	description: "Waits for a stream's next matching events and answers with them, instead of polling. Filters as in " +
		"debug_get_logs/debug_get_network; since_seq from an earlier answer misses nothing.",
	// The filters take no words here: the description points to the tools
	// that say what they mean, which is what they mean here too.
	args: withSession(
		argSpec{name: "stream", kind: argString, required: true, description: "e.g. network, console."},
		argSpec{name: "event_type", kind: argString},
		argSpec{name: "contains", kind: argString},
		argSpec{name: "level", kind: argString},
		argSpec{name: "status", kind: argString},
		argSpec{name: "method", kind: argString},
		argSpec{name: "url_contains", kind: argString},
		argSpec{name: "since_seq", kind: argInteger, min: 0},
		// Out of range is refused, naming the range (tool_call.go): a wait
		// quietly shorter or longer than asked would mislead.
		argSpec{name: "count", kind: argInteger, min: 1, max: 50, def: 1},
		argSpec{name: "timeout_ms", kind: argInteger, min: 1, max: 60000, def: 10000},
	),
	outputSchema: `{"type":"object","properties":{"stream":{"type":"string"},"matched":{"type":"integer"},"events":{"type":"array","items":{"type":"object"}},"seen":{"type":"integer"},"latestSeq":{"type":"integer"},"waitedMs":{"type":"integer"},"ended":{"type":"string"},"symbolication":{"type":"object"},"note":{"type":"string"},` + whoAnswered + `},"required":["stream","matched","events","seen","latestSeq","waitedMs","ended"]}`,
	run:          waitFor,
	waits:        true,
}

// How a wait ended, as its answer's `ended` says.
const (
	waitMatched      = "matched"      // count events matched
	waitTimedOut     = "timeout"      // timeout_ms passed first
	waitDisconnected = "disconnected" // the app is gone: it left before or during the wait
	waitCancelled    = "cancelled"    // the client cancelled the call, went away, or the server is stopping
)

func waitFor(ctx context.Context, ts *toolSet, a toolArgs) (*toolResult, error) {
	start := time.Now()
	stream, _ := a.str("stream")
	keep, err := ts.eventFilter(stream, a)
	if err != nil {
		return nil, err
	}
	s := a.session
	if err := ts.checkStream(s, stream); err != nil {
		return nil, consoleMissing(err, stream, s)
	}
	if ts.waiting.Add(1) > maxWaits {
		ts.waiting.Add(-1)
		return nil, tooManyWaits(maxWaits)
	}
	defer ts.waiting.Add(-1)

	count, _ := a.int("count")
	timeoutMs, _ := a.int("timeout_ms")
	sc := eventScan{stream: stream, keep: keep}
	sc.eventType, _ = a.str("event_type")
	if sc.eventType == "" {
		sc.eventType = map[string]string{consoleStream: logEventType, networkStream: requestEvent}[stream]
	}
	cursor, given := a.int("since_seq")
	// Without since_seq only what happens next counts; with it, what the
	// app already holds after it is read first, from the app itself (it may
	// hold more than the server kept), and what follows from the server's
	// buffers, which every pushed event reaches before it wakes the wait.
	if !given {
		cursor = s.latestSeq(stream)
	}
	sc.local = !given
	var note string // says so when since_seq was past the stream's latest seq

	deadline := time.NewTimer(time.Duration(timeoutMs) * time.Millisecond)
	defer deadline.Stop()
	var tick <-chan time.Time
	report := progressFrom(ctx)
	if report != nil {
		t := time.NewTicker(ts.waitProgress)
		defer t.Stop()
		tick = t.C
	}
	var matches [][]byte
	seen := 0
	answer := func(ended string) (*toolResult, error) {
		events := make([]json.RawMessage, len(matches))
		for i, ev := range matches {
			events[i] = shapeEvent(stream, ev)
		}
		out := map[string]any{"stream": stream, "matched": len(matches), "events": events,
			"seen": seen, "latestSeq": cursor, "waitedMs": time.Since(start).Milliseconds(), "ended": ended}
		if note := ts.mapWaitStacks(ctx, stream, matches, events); note != nil {
			out["symbolication"] = note
		}
		if note != "" {
			out["note"] = note
		}
		body, err := json.Marshal(out)
		if err != nil {
			return nil, err
		}
		return &toolResult{body: body, narrow: "Wait for fewer events with a smaller `count`, or narrow the filters."}, nil
	}
	for {
		changed := s.changes() // before reading: an event recorded meanwhile still wakes the wait
		live := s.isLive()
		sc.since, sc.limit = &cursor, count-int64(len(matches))
		res, err := ts.scanEvents(ctx, s, sc)
		if err != nil {
			if ctx.Err() != nil {
				return answer(waitCancelled)
			}
			return nil, err
		}
		first := !sc.local
		sc.local = true
		matches = append(matches, res.events...)
		seen += res.scanned
		cursor = max(cursor, res.cursor)
		if first && res.latestSeq < cursor {
			// A seq from before a restart of the app or the server: waiting
			// after it would miss everything that comes, and the answer
			// would hand the agent a seq that does not exist.
			note = fmt.Sprintf("since_seq %d is past the stream's latest seq %d: waited for what came after %d", cursor, res.latestSeq, res.latestSeq)
			cursor = res.latestSeq
		}
		switch {
		case int64(len(matches)) >= count:
			return answer(waitMatched)
		case res.hasMore && res.scanned > 0:
			continue // more events wait to be read (an answer that says so but holds none is not believed)
		case !live:
			return answer(waitDisconnected)
		}
		for woken := false; !woken; {
			select {
			case <-changed:
				woken = true
			case <-deadline.C:
				return answer(waitTimedOut)
			case <-ctx.Done():
				return answer(waitCancelled)
			case <-tick:
				report(float64(time.Since(start).Milliseconds()), float64(timeoutMs),
					fmt.Sprintf("waited %s: %d %s events seen, %d of %d matched", time.Since(start).Round(time.Second), seen, stream, len(matches), count))
			}
		}
	}
}

// mapWaitStacks maps the stacks of the console log entries among events
// (shaped from matches) to source, as debug_get_logs does, rewriting those
// entries, and returns the note for the answer, if any.
func (ts *toolSet) mapWaitStacks(ctx context.Context, stream string, matches [][]byte, events []json.RawMessage) *stackNote {
	var logs [][]byte
	var at []int
	for i, ev := range matches {
		if typ, _ := wireString(rawMember(ev, "type")); stream == consoleStream && typ == logEventType {
			logs, at = append(logs, ev), append(at, i)
		}
	}
	if len(logs) == 0 {
		return nil
	}
	entries := make([]logEntry, len(logs))
	for i, ev := range logs {
		entries[i] = readLogEntry(ev)
	}
	note := ts.mapLogStacks(ctx, logs, entries)
	for i, e := range entries {
		if data, err := json.Marshal(e); err == nil {
			events[at[i]] = data
		}
	}
	return note
}
