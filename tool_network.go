package main

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// debug_get_network: the app's requests as one-line summaries, filtered by
// status and URL, and one request in detail with its bodies within the
// result budget.

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
	// Attribution "unknown": see unknownAttributionNote.
	Attribution string `json:"attribution,omitempty"`
}

// unknownAttributionNote explains requests marked attribution "unknown".
const unknownAttributionNote = `requests with attribution "unknown" may be another app's: Expo's dev server sends every app's ` +
	"network requests to every attached app, naming none (debug_health_check: server.metro.network)"

func summarizeRequest(event []byte) requestSummary {
	payload := rawMember(event, "payload")
	r := requestSummary{Timestamp: orNull(rawMember(event, "timestamp")),
		Status: orNull(rawMember(payload, "status")), DurationMs: orNull(rawMember(payload, "durationMs"))}
	r.Seq, _ = wireInt(rawMember(event, "seq"))
	r.Method, _ = wireString(rawMember(payload, "method"))
	url, _ := wireString(rawMember(payload, "url"))
	r.URL = clipText(url, maxSummaryURL)
	r.Error, _ = wireString(rawMember(payload, "error"))
	r.Attribution, _ = wireString(rawMember(payload, "attribution"))
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
	sc, err := ts.filteredScan(a, networkStream, requestEvent)
	if err != nil {
		return nil, err
	}
	if seq, ok := a.int("seq"); ok {
		return ts.requestDetail(ctx, a.session, seq)
	}
	res, err := ts.scanEvents(ctx, a.session, sc)
	if err != nil {
		return nil, err
	}
	requests := make([]requestSummary, len(res.events))
	note := ""
	for i, ev := range res.events {
		requests[i] = summarizeRequest(ev)
		if requests[i].Attribution == "unknown" {
			note = unknownAttributionNote
		}
	}
	return encodeResult(struct {
		Requests    []requestSummary `json:"requests"`
		HasMore     bool             `json:"hasMore"`
		LatestSeq   int64            `json:"latestSeq"`
		Attribution string           `json:"attribution,omitempty"`
	}{requests, res.hasMore, res.latestSeq, note}, "Ask for fewer requests with a smaller `limit`, or filter with `status`, `method` or `url_contains`.")
}

// requestDetail is one exchange in full: the event's payload with its seq
// and timestamp, bodies that do not fit the result budget cut by cutValue.
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
