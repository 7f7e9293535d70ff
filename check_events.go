package main

// check_events.go holds check-adapter's checks of events.query (docs/protocol.md
// §3 and §4 "events.query"): every answer is read with the server's own
// reader, and only checkEventsOrder judges the events themselves, so that
// a defect there fails that check alone.

import (
	"context"
	"fmt"
	"slices"
	"strconv"
)

// checkEvent is an event of an events.query answer.
type checkEvent struct {
	raw  []byte
	head wireEventHead
}

// checkEventsAnswer is an events.query answer, read with the server's reader.
type checkEventsAnswer struct {
	events            []checkEvent
	hasMore           bool
	oldestSeq, latest int64
}

// query sends events.query and reads the answer's shape.
func (k *checkKit) query(ctx context.Context, params map[string]any) (checkEventsAnswer, *checkOutcome) {
	var ans checkEventsAnswer
	raw, fail := k.call(ctx, "events.query", params)
	if fail != nil {
		return ans, fail
	}
	events, hasMore, oldest, latest, ok := splitWireEventsAnswer(raw)
	if !ok {
		return ans, checkFailed(checkSent("events.query", params), "%s, not {events: [...], hasMore, oldestSeq, latestSeq}", clipJSON(raw))
	}
	ans.hasMore = string(hasMore) == "true"
	ans.oldestSeq, _ = wireInt(oldest)
	ans.latest, _ = wireInt(latest)
	_ = scanArray(events, func(i int, v []byte) error {
		head, _ := parseWireEvent(v)
		ans.events = append(ans.events, checkEvent{raw: v, head: head})
		return nil
	})
	return ans, nil
}

// eventsProblem says what is wrong with the events of an answer to params:
// an event badly formed or of another stream or type, seq not ascending or
// repeated, outside oldestSeq..latestSeq, or more events than the limit.
func eventsProblem(params map[string]any, ans checkEventsAnswer) string {
	for i, e := range ans.events {
		head, err := parseWireEvent(e.raw)
		switch {
		case err != nil:
			return fmt.Sprintf("events[%d]: %v", i, err)
		case checkEventShape(e.raw) != "":
			return fmt.Sprintf("events[%d]: %s", i, checkEventShape(e.raw))
		case head.Stream != params["stream"]:
			return fmt.Sprintf("events[%d] is of stream %q", i, head.Stream)
		case params["event_type"] != nil && head.Type != params["event_type"]:
			return fmt.Sprintf("events[%d] (seq %d) has type %q", i, head.Seq, head.Type)
		case i > 0 && head.Seq == ans.events[i-1].head.Seq:
			return fmt.Sprintf("seq %d appears twice (events[%d] and events[%d])", head.Seq, i-1, i)
		case i > 0 && head.Seq < ans.events[i-1].head.Seq:
			return fmt.Sprintf("seq goes back: events[%d] has seq %d after seq %d", i, head.Seq, ans.events[i-1].head.Seq)
		case head.Seq < ans.oldestSeq || head.Seq > ans.latest:
			return fmt.Sprintf("events[%d] has seq %d, outside oldestSeq %d..latestSeq %d", i, head.Seq, ans.oldestSeq, ans.latest)
		}
	}
	if l, ok := params["limit"].(int); ok && len(ans.events) > l {
		return fmt.Sprintf("%d events, over limit %d", len(ans.events), l)
	}
	return ""
}

// eachStream runs f for every listed stream with events.
func (k *checkKit) eachStream(ctx context.Context, f func(s checkStream) *checkOutcome) *checkOutcome {
	list, fail := k.streams(ctx)
	if fail != nil {
		return fail
	}
	if !slices.ContainsFunc(list, func(s checkStream) bool { return *s.EventCount > 0 }) {
		return checkSkip("no stream has events")
	}
	for _, s := range list {
		if *s.EventCount == 0 {
			continue
		}
		if out := f(s); out != nil {
			return out
		}
	}
	return nil
}

func checkEventsOrder(ctx context.Context, k *checkKit) *checkOutcome {
	return k.eachStream(ctx, func(s checkStream) *checkOutcome {
		params := map[string]any{"stream": *s.Name, "limit": checkMaxLimit}
		ans, fail := k.query(ctx, params)
		if fail != nil {
			return fail
		}
		if problem := eventsProblem(params, ans); problem != "" {
			return checkFailed(checkSent("events.query", params), "%s", problem)
		}
		// The buffer only grows or drops its oldest: what streams.list counted
		// is still there, up to the limit.
		if want := min(int64(checkMaxLimit), *s.EventCount); int64(len(ans.events)) < want {
			return checkFailed(checkSent("events.query", params), "%d events, though streams.list counts %d in the buffer", len(ans.events), *s.EventCount)
		}
		if older := ans.events[0].head.Seq > ans.oldestSeq; ans.hasMore != older {
			return checkFailed(checkSent("events.query", params), "hasMore %v, though the first event has seq %d and oldestSeq is %d", ans.hasMore, ans.events[0].head.Seq, ans.oldestSeq)
		}
		return nil
	})
}

func checkEventsLimit(ctx context.Context, k *checkKit) *checkOutcome {
	return k.eachStream(ctx, func(s checkStream) *checkOutcome {
		for _, limit := range []int{1, 2} {
			params := map[string]any{"stream": *s.Name, "limit": limit}
			ans, fail := k.query(ctx, params)
			if fail != nil {
				return fail
			}
			want := min(limit, int(ans.latest-ans.oldestSeq+1))
			if len(ans.events) < want && int64(len(ans.events)) < *s.EventCount {
				return checkFailed(checkSent("events.query", params), "%d events, want %d", len(ans.events), want)
			}
			if n := len(ans.events); n > 0 && ans.events[n-1].head.Seq != ans.latest {
				return checkFailed(checkSent("events.query", params), "the last event has seq %d, not latestSeq %d: not the newest", ans.events[n-1].head.Seq, ans.latest)
			}
			if len(ans.events) == 0 {
				if ans.hasMore {
					return checkFailed(checkSent("events.query", params), "hasMore true with no events")
				}
				continue
			}
			if older := ans.events[0].head.Seq > ans.oldestSeq; ans.hasMore != older {
				return checkFailed(checkSent("events.query", params), "hasMore %v, though the first event has seq %d and oldestSeq is %d", ans.hasMore, ans.events[0].head.Seq, ans.oldestSeq)
			}
		}
		return nil
	})
}

func checkEventsSince(ctx context.Context, k *checkKit) *checkOutcome {
	return k.eachStream(ctx, func(s checkStream) *checkOutcome {
		all, fail := k.query(ctx, map[string]any{"stream": *s.Name, "limit": checkMaxLimit})
		if fail != nil || len(all.events) < 2 {
			return fail
		}
		since := all.events[0].head.Seq // the next one up is in all
		params := map[string]any{"stream": *s.Name, "limit": 1, "since_seq": since}
		ans, fail := k.query(ctx, params)
		if fail != nil {
			return fail
		}
		want := all.events[1].head.Seq
		if len(ans.events) != 1 || ans.events[0].head.Seq != want {
			got := "no event"
			if len(ans.events) > 0 {
				got = "seq " + strconv.FormatInt(ans.events[0].head.Seq, 10)
			}
			return checkFailed(checkSent("events.query", params), "%s, want the oldest after %d: seq %d", got, since, want)
		}
		if !ans.hasMore && len(all.events) > 2 {
			return checkFailed(checkSent("events.query", params), "hasMore false, though newer events exist")
		}
		params = map[string]any{"stream": *s.Name, "limit": checkMaxLimit, "since_seq": all.latest + 1_000_000}
		if ans, fail = k.query(ctx, params); fail != nil {
			return fail
		}
		if len(ans.events) > 0 || ans.hasMore {
			return checkFailed(checkSent("events.query", params), "%d events and hasMore %v, want none", len(ans.events), ans.hasMore)
		}
		return nil
	})
}

func checkEventsType(ctx context.Context, k *checkKit) *checkOutcome {
	return k.eachStream(ctx, func(s checkStream) *checkOutcome {
		all, fail := k.query(ctx, map[string]any{"stream": *s.Name, "limit": checkMaxLimit})
		if fail != nil || len(all.events) == 0 {
			return fail
		}
		typ := all.events[0].head.Type
		var want []int64
		for _, e := range all.events {
			if e.head.Type == typ {
				want = append(want, e.head.Seq)
			}
		}
		params := map[string]any{"stream": *s.Name, "limit": checkMaxLimit, "event_type": typ}
		ans, fail := k.query(ctx, params)
		if fail != nil {
			return fail
		}
		for _, e := range ans.events {
			if e.head.Type != typ {
				return checkFailed(checkSent("events.query", params), "an event of type %q (seq %d)", e.head.Type, e.head.Seq)
			}
		}
		// Events recorded meanwhile may come on top; those seen before must be there.
		for _, seq := range want {
			if !slices.ContainsFunc(ans.events, func(e checkEvent) bool { return e.head.Seq == seq }) {
				return checkFailed(checkSent("events.query", params), "no event with seq %d, which is of type %q", seq, typ)
			}
		}
		params = map[string]any{"stream": *s.Name, "limit": checkMaxLimit, "event_type": "check-adapter.no-such-type"}
		if ans, fail = k.query(ctx, params); fail != nil {
			return fail
		}
		if len(ans.events) > 0 {
			return checkFailed(checkSent("events.query", params), "%d events of a type nobody records", len(ans.events))
		}
		return nil
	})
}

func checkEventsParams(ctx context.Context, k *checkKit) *checkOutcome {
	list, fail := k.streams(ctx)
	if fail != nil {
		return fail
	}
	if len(list) > 0 {
		for _, limit := range []int{0, checkMaxLimit + 1} {
			if out := k.expectError(ctx, "events.query", map[string]any{"stream": *list[0].Name, "limit": limit}, wireCodeInvalidParams); out != nil {
				return out
			}
		}
	}
	return k.expectError(ctx, "events.query", map[string]any{"stream": "check-adapter.no-such-stream", "limit": 1}, wireCodeStreamUnavailable)
}

// checkMaxLimit is the largest events.query limit (§4).
const checkMaxLimit = 200
