package main

// tool_wait.go is debug_wait_for: from an action to its outcome in one call.
// It answers with the next events of a stream that pass the same filters
// debug_get_logs and debug_get_network take (tool_filter.go), waiting for
// them. The wait costs nothing while nothing happens: it is woken by the
// events the session records (session_watch.go), never by polling, and its
// tool is marked `waits` (tool_table.go says what that does).

import (
	"cmp"
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

// waitSlotsFullKey is withoutWaitSlot's context key; its value is the
// connection's bound on waiting calls (maxWaiting, rpc_conn.go).
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
	w := &waitState{start: time.Now()}
	stream, _ := a.str("stream")
	eventType, _ := a.str("event_type")
	eventType = cmp.Or(eventType, map[string]string{consoleStream: logEventType, networkStream: requestEvent}[stream])
	var err error
	if w.sc, err = ts.filteredScan(a, stream, eventType); err != nil {
		return nil, err
	}
	s := a.session
	if ts.waiting.Add(1) > maxWaits {
		ts.waiting.Add(-1)
		return nil, tooManyWaits(maxWaits, false)
	}
	defer ts.waiting.Add(-1)

	w.count, _ = a.int("count")
	timeoutMs, _ := a.int("timeout_ms")
	var given bool
	w.cursor, given = a.int("since_seq")
	// Without since_seq only what happens next counts; with it, what the
	// app already holds after it is read first, from the app itself (it may
	// hold more than the server kept), and what follows from the server's
	// buffers, which every pushed event reaches before it wakes the wait.
	if !given {
		w.cursor = s.latestSeq(stream)
	}
	w.sc.local = !given

	deadline := time.NewTimer(time.Duration(timeoutMs) * time.Millisecond)
	defer deadline.Stop()
	var tick <-chan time.Time
	report := progressFrom(ctx)
	if report != nil {
		t := time.NewTicker(ts.waitProgress)
		defer t.Stop()
		tick = t.C
	}
	for {
		changed := s.changes() // before reading: an event recorded meanwhile still wakes the wait
		live := s.isLive()
		more, err := w.read(ctx, ts, s)
		switch {
		case err != nil && ctx.Err() != nil:
			return w.answer(ctx, ts, waitCancelled)
		case err != nil:
			return nil, err
		case int64(len(w.matches)) >= w.count:
			return w.answer(ctx, ts, waitMatched)
		case more:
			continue // more events wait to be read (an answer that says so but holds none is not believed)
		case !live:
			return w.answer(ctx, ts, waitDisconnected)
		}
		for woken := false; !woken; {
			select {
			case <-changed:
				woken = true
			case <-deadline.C:
				return w.answer(ctx, ts, waitTimedOut)
			case <-ctx.Done():
				return w.answer(ctx, ts, waitCancelled)
			case <-tick:
				report(float64(time.Since(w.start).Milliseconds()), float64(timeoutMs),
					fmt.Sprintf("waited %s: %d %s events seen, %d of %d matched", time.Since(w.start).Round(time.Second), w.seen, stream, len(w.matches), w.count))
			}
		}
	}
}

// waitState is where a wait stands between reads of its stream.
type waitState struct {
	sc      eventScan
	count   int64
	start   time.Time
	matches [][]byte
	seen    int
	cursor  int64
	note    string // says so when since_seq was past the stream's latest seq
}

// read scans the stream once after the cursor and keeps what matches; more
// reports that more events wait to be read at once.
func (w *waitState) read(ctx context.Context, ts *toolSet, s *session) (more bool, err error) {
	w.sc.since, w.sc.limit = &w.cursor, w.count-int64(len(w.matches))
	res, err := ts.scanEvents(ctx, s, w.sc)
	if err != nil {
		return false, err
	}
	first := !w.sc.local
	w.sc.local = true
	w.matches = append(w.matches, res.events...)
	w.seen += res.scanned
	w.cursor = max(w.cursor, res.cursor)
	if first && res.latestSeq < w.cursor {
		// A seq from before a restart of the app or the server: waiting
		// after it would miss everything that comes, and the answer
		// would hand the agent a seq that does not exist.
		w.note = fmt.Sprintf("since_seq %d is past the stream's latest seq %d: waited for what came after %d", w.cursor, res.latestSeq, res.latestSeq)
		w.cursor = res.latestSeq
	}
	return res.hasMore && res.scanned > 0, nil
}

func (w *waitState) answer(ctx context.Context, ts *toolSet, ended string) (*toolResult, error) {
	stream := w.sc.stream
	events := make([]json.RawMessage, len(w.matches))
	for i, ev := range w.matches {
		events[i] = shapeEvent(stream, ev)
	}
	out := map[string]any{"stream": stream, "matched": len(w.matches), "events": events,
		"seen": w.seen, "latestSeq": w.cursor, "waitedMs": time.Since(w.start).Milliseconds(), "ended": ended}
	if note := ts.mapWaitStacks(ctx, stream, w.matches, events); note != nil {
		out["symbolication"] = note
	}
	if w.note != "" {
		out["note"] = w.note
	}
	return encodeResult(out, "Wait for fewer events with a smaller `count`, or narrow the filters.")
}

// mapWaitStacks maps the stacks of the log entries among events (shaped from
// matches) to source as debug_get_logs does, and returns the answer's note.
func (ts *toolSet) mapWaitStacks(ctx context.Context, stream string, matches [][]byte, events []json.RawMessage) *stackNote {
	var logs [][]byte
	var entries []logEntry
	var at []int
	for i, ev := range matches {
		if typ, _ := wireString(rawMember(ev, "type")); stream == consoleStream && typ == logEventType {
			logs, entries, at = append(logs, ev), append(entries, readLogEntry(ev)), append(at, i)
		}
	}
	note := ts.mapLogStacks(ctx, logs, entries)
	for i, e := range entries {
		if data, err := json.Marshal(e); err == nil {
			events[at[i]] = data
		}
	}
	return note
}
