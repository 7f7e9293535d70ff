package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
)

// waitHarness is a tool set over one live session fed by the test: events
// are recorded as pushed events are, and queries are answered from what the
// session holds unless feed.answer says otherwise.
type waitHarness struct {
	ts   *toolSet
	reg  *sessionRegistry
	s    *session
	feed *testFeed
}

func newWaitHarness(t *testing.T, feed *testFeed) *waitHarness {
	t.Helper()
	cfg := linkTestConfig()
	cfg.Redact = true
	link := newTestLink(cfg, nil, func(linkEvent) {})
	reg := registryOf(link)
	s, _ := reg.attach(sessionViaWire, "s1", "", testInfo("s1", "", "shop", "network", "console", "redux"), feed)
	return &waitHarness{ts: newTestToolSet(cfg, link), reg: reg, s: s, feed: feed}
}

// push records the stream's next event.
func (h *waitHarness) push(stream, typ, payload string) int64 {
	seq := h.s.latestSeq(stream) + 1
	recordTestEvent(h.s, h.feed, stream, seq, typ, payload)
	return seq
}

// waitOut is debug_wait_for's answer, events reduced to their seqs.
type waitOut struct {
	Stream  string `json:"stream"`
	Matched int    `json:"matched"`
	Events  []struct {
		Seq int64 `json:"seq"`
	} `json:"events"`
	Seen      int    `json:"seen"`
	LatestSeq int64  `json:"latestSeq"`
	WaitedMs  int64  `json:"waitedMs"`
	Ended     string `json:"ended"`
	Live      *bool  `json:"live"`
}

func (w waitOut) seqs() []int64 {
	out := []int64{}
	for _, e := range w.Events {
		out = append(out, e.Seq)
	}
	return out
}

func (h *waitHarness) wait(t *testing.T, ctx context.Context, args map[string]any) (waitOut, json.RawMessage, bool) {
	t.Helper()
	raw, _ := json.Marshal(args)
	out := h.ts.call(ctx, waitTool, raw)
	var res struct {
		Content           []struct{ Text string } `json:"content"`
		StructuredContent json.RawMessage         `json:"structuredContent"`
		IsError           bool                    `json:"isError"`
	}
	if err := json.Unmarshal(out, &res); err != nil || len(res.Content) != 1 {
		t.Fatalf("malformed result %s", out)
	}
	if res.IsError {
		return waitOut{}, json.RawMessage(res.Content[0].Text), true
	}
	var w waitOut
	if err := json.Unmarshal(res.StructuredContent, &w); err != nil {
		t.Fatal(err)
	}
	return w, res.StructuredContent, false
}

// waitAsync starts a wait and returns where its answer will come.
func (h *waitHarness) waitAsync(t *testing.T, ctx context.Context, args map[string]any) <-chan waitOut {
	t.Helper()
	done := make(chan waitOut, 1)
	go func() {
		w, raw, isError := h.wait(t, ctx, args)
		if isError {
			t.Errorf("wait %v failed: %s", args, raw)
		}
		done <- w
	}()
	return done
}

func stillWaiting(t *testing.T, done <-chan waitOut) {
	t.Helper()
	synctest.Wait()
	select {
	case w := <-done:
		t.Fatalf("the wait answered early: %+v", w)
	default:
	}
}

// pushShop records the events the filter table looks through.
func (h *waitHarness) pushShop() {
	h.push("network", "http_request", `{"method":"GET","url":"https://api.example.com/v1/products","status":200}`)
	h.push("network", "http_request", `{"method":"POST","url":"https://api.example.com/v1/orders","status":500}`)
	h.push("network", "http_request", `{"method":"GET","url":"https://api.example.com/v1/me?token=s3cr3tvalue99","status":null,"error":"Network request failed"}`)
	h.push("network", "http_request", `{"method":"DELETE","url":"https://api.example.com/v1/cart/1","status":404}`)
	h.push("console", "log", `{"level":"info","message":"catalog loaded"}`)
	h.push("console", "log", `{"level":"warn","message":"slow render"}`)
	h.push("console", "log", `{"level":"error","message":"checkout failed","stack":"Error\n    at placeOrder (orders.ts:4:2)"}`)
	h.push("redux", "action_dispatched", `{"action":{"type":"cart/add"}}`)
	h.push("redux", "state_snapshot", `{"state":{"cart":[]}}`)
	h.push("redux", "action_dispatched", `{"action":{"type":"cart/clear"}}`)
}

// TestWaitForFilters: every filter means what it means in debug_get_logs
// and debug_get_network, and contains reads the event as the answer shows
// it, redacted.
func TestWaitForFilters(t *testing.T) {
	for _, tc := range []struct {
		name string
		args map[string]any
		want []int64
	}{
		{"status failed", map[string]any{"stream": "network", "status": "failed"}, []int64{3}},
		{"status class", map[string]any{"stream": "network", "status": "5xx"}, []int64{2}},
		{"status code", map[string]any{"stream": "network", "status": "404"}, []int64{4}},
		{"method any case", map[string]any{"stream": "network", "method": "post"}, []int64{2}},
		{"url_contains any case", map[string]any{"stream": "network", "url_contains": "/V1/CART"}, []int64{4}},
		{"contains in the summary", map[string]any{"stream": "network", "contains": "ORDERS"}, []int64{2}},
		{"contains finds no redacted secret", map[string]any{"stream": "network", "contains": "s3cr3t"}, nil},
		{"level minimum", map[string]any{"stream": "console", "level": "warn", "count": 2}, []int64{2, 3}},
		{"contains in a stack", map[string]any{"stream": "console", "contains": "PLACEORDER"}, []int64{3}},
		{"contains reads the text, not the level", map[string]any{"stream": "console", "contains": "warn"}, nil},
		{"contains reads the text, not the seq or status", map[string]any{"stream": "network", "contains": "404"}, nil},
		{"event_type", map[string]any{"stream": "redux", "event_type": "action_dispatched", "count": 2}, []int64{1, 3}},
		{"contains in a raw event", map[string]any{"stream": "redux", "contains": "cart/clear"}, []int64{3}},
		{"filters together", map[string]any{"stream": "network", "method": "GET", "status": "2xx"}, []int64{1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				h := newWaitHarness(t, &testFeed{})
				h.pushShop()
				args := map[string]any{"since_seq": 0, "timeout_ms": 1000}
				for k, v := range tc.args {
					args[k] = v
				}
				w, raw, isError := h.wait(t, t.Context(), args)
				if isError {
					t.Fatalf("failed: %s", raw)
				}
				want := tc.want
				if want == nil {
					want = []int64{}
				}
				if diff := cmp.Diff(want, w.seqs()); diff != "" {
					t.Errorf("matched seqs (-want +got):\n%s\n%s", diff, raw)
				}
				wantEnded := waitMatched // every case with matches waits for as many
				if len(tc.want) == 0 {
					wantEnded = waitTimedOut
				}
				if w.Matched != len(tc.want) || w.Ended != wantEnded || w.LatestSeq < slices.Max(append(want, 1)) {
					t.Errorf("matched %d, ended %q, latestSeq %d; want %d, %q", w.Matched, w.Ended, w.LatestSeq, len(tc.want), wantEnded)
				}
				held := map[string]int{"network": 4, "console": 3, "redux": 3}[tc.args["stream"].(string)] // as pushShop pushes them
				if len(tc.want) == 0 && (w.Seen != held || w.LatestSeq != int64(held) || w.WaitedMs != 1000) {
					t.Errorf("no match: seen %d, latestSeq %d, waitedMs %d; want %d, %d, 1000", w.Seen, w.LatestSeq, w.WaitedMs, held, held)
				}
			})
		})
	}
}

// TestWaitForRefuses: filters of another stream, a bad status, a stream the
// session lacks, and the bound on waits at once.
func TestWaitForRefuses(t *testing.T) {
	h := newWaitHarness(t, &testFeed{})
	for _, tc := range []struct {
		args       map[string]any
		code, want string
	}{
		{map[string]any{"stream": "network", "level": "error"}, codeInvalidParams, `"argument":"level"`},
		{map[string]any{"stream": "console", "status": "500"}, codeInvalidParams, `"argument":"status"`},
		{map[string]any{"stream": "redux", "url_contains": "x"}, codeInvalidParams, `"argument":"url_contains"`},
		{map[string]any{"stream": "network", "status": "teapot"}, codeInvalidParams, `teapot`},
		{map[string]any{"stream": "console", "level": "loud"}, codeInvalidParams, `loud`},
		{map[string]any{"stream": "mmkv"}, codeStreamUnavailable, `"activeStreams"`},
		{map[string]any{"stream": "network", "since_seq": -1}, codeInvalidParams, `since_seq`},
	} {
		_, raw, isError := h.wait(t, t.Context(), tc.args)
		if !isError || !strings.Contains(string(raw), `"code":"`+tc.code+`"`) || !strings.Contains(string(raw), tc.want) {
			t.Errorf("%v: %s, want %s naming %s", tc.args, raw, tc.code, tc.want)
		}
	}
	h.ts.waiting.Store(maxWaits)
	_, raw, isError := h.wait(t, t.Context(), map[string]any{"stream": "network"})
	if !isError || !strings.Contains(string(raw), `"code":"BUSY"`) || !strings.Contains(string(raw), `"limit":256`) || !strings.Contains(string(raw), "256 debug_wait_for calls are already waiting") {
		t.Errorf("past the bound: %s, want BUSY saying how many wait at once", raw)
	}
	if n := h.ts.waiting.Load(); n != maxWaits {
		t.Errorf("a refused wait left %d waiting, want %d", n, maxWaits)
	}
}

// TestWaitForWakesOnEvents: without since_seq only what comes next counts;
// the wait is woken by each recorded event, keeps waiting until count
// events match, and answers the moment the last one is recorded.
func TestWaitForWakesOnEvents(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newWaitHarness(t, &testFeed{})
		h.push("network", "http_request", `{"method":"GET","url":"/before","status":null}`) // before the call: not counted
		done := h.waitAsync(t, t.Context(), map[string]any{"stream": "network", "status": "failed", "count": 2})
		stillWaiting(t, done)
		h.push("network", "http_request", `{"method":"GET","url":"/ok","status":200}`)
		stillWaiting(t, done)
		h.push("console", "log", `{"level":"error","message":"another stream"}`)
		stillWaiting(t, done)
		h.push("network", "http_request", `{"method":"GET","url":"/a","status":null}`)
		stillWaiting(t, done)
		time.Sleep(2 * time.Second) // in the bubble: the fake clock moves on
		h.push("network", "http_request", `{"method":"GET","url":"/b","status":null}`)
		w := <-done
		if diff := cmp.Diff([]int64{3, 4}, w.seqs()); diff != "" || w.Ended != waitMatched || w.Seen != 3 || w.LatestSeq != 4 || w.WaitedMs != 2000 {
			t.Errorf("%+v: want seqs 3 and 4 matched after 2000 ms, 3 seen, latestSeq 4 (%s)", w, diff)
		}
	})
}

// TestWaitForSinceSeq: events recorded between an action and the wait are
// not lost, and what the app holds beyond the server's buffers is read from
// the app.
func TestWaitForSinceSeq(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newWaitHarness(t, &testFeed{})
		h.push("redux", "action_dispatched", `{"action":{"type":"cart/add"}}`)
		h.push("console", "log", `{"level":"error","message":"logged right after the action"}`)
		w, raw, _ := h.wait(t, t.Context(), map[string]any{"stream": "console", "level": "error", "since_seq": 0})
		if diff := cmp.Diff([]int64{1}, w.seqs()); diff != "" || w.WaitedMs != 0 {
			t.Errorf("an event logged before the wait: %s (%s)", raw, diff)
		}
		w, raw, _ = h.wait(t, t.Context(), map[string]any{"stream": "console", "level": "error", "since_seq": 1, "timeout_ms": 50})
		if w.Matched != 0 || w.Ended != waitTimedOut || w.LatestSeq != 1 {
			t.Errorf("nothing after since_seq: %s", raw)
		}
		// A seq past the stream's latest (from before a restart) waits for
		// what comes after the latest, and says so.
		done := make(chan struct{})
		go func() {
			defer close(done)
			w, raw, _ := h.wait(t, t.Context(), map[string]any{"stream": "console", "since_seq": 5000, "timeout_ms": 1000})
			var note struct{ Note string }
			_ = json.Unmarshal(raw, &note)
			if diff := cmp.Diff([]int64{2}, w.seqs()); diff != "" || w.LatestSeq != 2 || !strings.Contains(note.Note, "since_seq 5000 is past the stream's latest seq 1") {
				t.Errorf("since_seq past the latest: %s (%s)", raw, diff)
			}
		}()
		synctest.Wait()
		h.push("console", "log", `{"level":"info","message":"after the wait began"}`)
		<-done
	})
	synctest.Test(t, func(t *testing.T) {
		var adapterEvents []map[string]any
		for seq := int64(1); seq <= 5; seq++ {
			status := any(200)
			if seq >= 4 {
				status = nil
			}
			adapterEvents = append(adapterEvents, map[string]any{"stream": "network", "seq": seq, "type": "http_request",
				"payload": map[string]any{"method": "GET", "url": fmt.Sprintf("/r%d", seq), "status": status}})
		}
		feed := &testFeed{answer: func(method string, params any) (json.RawMessage, error) {
			if method != "events.query" {
				return nil, errAnswerLocally
			}
			p, _ := json.Marshal(params)
			return json.Marshal(wireEvents(adapterEvents, p))
		}}
		h := newWaitHarness(t, feed) // the server holds none of the adapter's events
		w, raw, _ := h.wait(t, t.Context(), map[string]any{"stream": "network", "status": "failed", "since_seq": 2, "count": 2})
		if diff := cmp.Diff([]int64{4, 5}, w.seqs()); diff != "" || w.Seen != 3 || w.Ended != waitMatched {
			t.Errorf("events the adapter holds after since_seq: %s (%s)", raw, diff)
		}
	})
}

// TestWaitForEnds: at the timeout with matched 0, at once when the app
// disconnects, at once for a post-mortem session, and when cancelled.
func TestWaitForEnds(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newWaitHarness(t, &testFeed{})
		done := h.waitAsync(t, t.Context(), map[string]any{"stream": "network", "status": "5xx"}) // default timeout
		stillWaiting(t, done)
		h.push("network", "http_request", `{"method":"GET","url":"/ok","status":200}`)
		w := <-done
		if w.Matched != 0 || w.Ended != waitTimedOut || w.WaitedMs != 10000 || w.Seen != 1 || w.LatestSeq != 1 {
			t.Errorf("timeout: %+v, want matched 0 after 10000 ms with 1 seen", w)
		}
	})
	synctest.Test(t, func(t *testing.T) {
		h := newWaitHarness(t, &testFeed{})
		done := h.waitAsync(t, t.Context(), map[string]any{"stream": "console", "timeout_ms": 60000})
		stillWaiting(t, done)
		h.reg.detach(h.s, h.feed, "closed")
		w := <-done
		if w.Ended != waitDisconnected || w.WaitedMs != 0 || w.Live == nil || *w.Live {
			t.Errorf("disconnect: %+v, want disconnected at once, live false", w)
		}
	})
	synctest.Test(t, func(t *testing.T) {
		h := newWaitHarness(t, &testFeed{})
		h.push("console", "log", `{"level":"error","message":"last words"}`)
		h.reg.detach(h.s, h.feed, "closed")
		w, raw, _ := h.wait(t, t.Context(), map[string]any{"stream": "console", "since_seq": 0, "count": 2, "timeout_ms": 60000})
		if w.Ended != waitDisconnected || w.WaitedMs != 0 || w.Matched != 1 {
			t.Errorf("post-mortem: %s, want what it kept at once, ended disconnected", raw)
		}
	})
	synctest.Test(t, func(t *testing.T) {
		h := newWaitHarness(t, &testFeed{})
		ctx, cancel := context.WithCancel(t.Context())
		done := h.waitAsync(t, ctx, map[string]any{"stream": "console", "timeout_ms": 60000})
		stillWaiting(t, done)
		cancel()
		if w := <-done; w.Ended != waitCancelled || w.WaitedMs != 0 {
			t.Errorf("cancelled: %+v", w)
		}
		if n := h.ts.waiting.Load(); n != 0 {
			t.Errorf("%d waits left counted", n)
		}
	})
}

// TestWaitForProgress: with a progress reporter (a request's
// progressToken), the wait reports every waitProgressEvery how long it has
// waited, out of its timeout, and what it has seen; progress only grows.
func TestWaitForProgress(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newWaitHarness(t, &testFeed{})
		type report struct {
			progress, total float64
			message         string
		}
		var mu sync.Mutex
		var got []report
		ctx := withProgress(t.Context(), func(progress, total float64, message string) {
			mu.Lock()
			defer mu.Unlock()
			got = append(got, report{progress, total, message})
		})
		done := h.waitAsync(t, ctx, map[string]any{"stream": "network", "status": "failed"})
		stillWaiting(t, done)
		time.Sleep(4 * time.Second)
		h.push("network", "http_request", `{"method":"GET","url":"/ok","status":200}`)
		w := <-done
		mu.Lock()
		defer mu.Unlock()
		want := []report{
			{3000, 10000, "waited 3s: 0 network events seen, 0 of 1 matched"},
			{6000, 10000, "waited 6s: 1 network events seen, 0 of 1 matched"},
			{9000, 10000, "waited 9s: 1 network events seen, 0 of 1 matched"},
		}
		if diff := cmp.Diff(want, got, cmp.AllowUnexported(report{})); diff != "" || w.Ended != waitTimedOut {
			t.Errorf("progress reports (-want +got):\n%s", diff)
		}
	})
}

// FuzzTextContains: textContains finds a text exactly when one of the
// value's strings or numbers, decoded, holds it in lower case.
func FuzzTextContains(f *testing.F) {
	for _, seed := range [][2]string{
		{`{"message":"Checkout \\u0046ailed","n":[1,{"x":"deep"}]}`, "failed"},
		{`{"url":"/v1/orders","status":500}`, "500"},
		{`"plain"`, "ain"}, {`[1,2,3]`, "4"}, {`{"key":"v"}`, "key"}, {`{`, "x"},
	} {
		f.Add([]byte(seed[0]), seed[1])
	}
	f.Fuzz(func(t *testing.T, doc []byte, text string) {
		lower := strings.ToLower(text)
		if lower == "" || !json.Valid(doc) {
			return
		}
		dec := json.NewDecoder(bytes.NewReader(doc))
		dec.UseNumber()
		var v any
		if dec.Decode(&v) != nil {
			return
		}
		var want func(v any) bool
		want = func(v any) bool {
			switch x := v.(type) {
			case string:
				return strings.Contains(strings.ToLower(x), lower)
			case json.Number:
				return strings.Contains(x.String(), lower)
			case map[string]any:
				for _, m := range x {
					if want(m) {
						return true
					}
				}
			case []any:
				for _, e := range x {
					if want(e) {
						return true
					}
				}
			}
			return false
		}
		// Re-encoded: a duplicate member, which the decoder merges, appears once.
		canonical, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		if got := textContains(canonical, lower); got != want(v) {
			t.Fatalf("textContains(%s, %q) = %t, want %t", doc, lower, got, !got)
		}
	})
}

// TestWaitForReactotron: a Reactotron app's events, numbered by the server
// as they come, wake a wait the same way: the next error log is answered
// the moment it is logged.
func TestWaitForReactotron(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cfg := linkTestConfig()
		link := newTestLink(cfg, nil, func(linkEvent) {})
		feed := &testFeed{}
		info := &adapterInfo{SessionID: "rt", AdapterVersion: "reactotron", ConnectedAt: time.Now(),
			Streams: []streamState{{Name: "console", Active: true}}}
		s, _ := registryOf(link).attach(sessionViaReactotron, "rt", "", info, feed)
		s.appendEvent(feed, "console", "log", time.Now(), []byte(`{"level":"error","message":"an old error"}`))
		h := &waitHarness{ts: newTestToolSet(cfg, link), reg: registryOf(link), s: s, feed: feed}
		done := h.waitAsync(t, t.Context(), map[string]any{"stream": "console", "level": "error"})
		stillWaiting(t, done)
		s.appendEvent(feed, "console", "log", time.Now(), []byte(`{"level":"info","message":"fine"}`))
		stillWaiting(t, done)
		s.appendEvent(feed, "console", "log", time.Now(), []byte(`{"level":"error","message":"boom"}`))
		w := <-done
		if diff := cmp.Diff([]int64{3}, w.seqs()); diff != "" || w.Ended != waitMatched || w.WaitedMs != 0 {
			t.Errorf("%+v: want the error logged while waiting, at once (%s)", w, diff)
		}
	})
}

// TestWaitForRefusesOutOfRange: count and timeout_ms out of range are
// refused with INVALID_PARAMS naming the range, never clamped to a wait
// other than the one asked for.
func TestWaitForRefusesOutOfRange(t *testing.T) {
	h := newWaitHarness(t, &testFeed{})
	for _, c := range []struct {
		arg     string
		value   any
		problem string
	}{
		{"count", 0, "must be from 1 to 50"},
		{"count", 51, "must be from 1 to 50"},
		{"count", 1e30, "must be from 1 to 50"},
		{"timeout_ms", 0, "must be from 1 to 60000"},
		{"timeout_ms", 999999, "must be from 1 to 60000"},
		{"timeout_ms", -5, "must be from 1 to 60000"},
	} {
		_, raw, isError := h.wait(t, t.Context(), map[string]any{"stream": "console", c.arg: c.value})
		var e struct {
			Code    string            `json:"code"`
			Details map[string]string `json:"details"`
		}
		json.Unmarshal(raw, &e)
		if !isError || e.Code != codeInvalidParams || e.Details["argument"] != c.arg || e.Details["problem"] != c.problem {
			t.Errorf("%s %v = %s, want INVALID_PARAMS: %s", c.arg, c.value, raw, c.problem)
		}
	}
	// The schema says the range too.
	props := inputSchema(waitTool.args)["properties"].(map[string]schemaProperty)
	for arg, max := range map[string]int64{"count": 50, "timeout_ms": 60000} {
		p := props[arg]
		if p.Minimum == nil || *p.Minimum != 1 || p.Maximum != max {
			t.Errorf("schema of %s = %v, want minimum 1 and maximum %d", arg, p, max)
		}
	}
}

// TestWaitForWithoutASlot: a wait its connection has no room for is BUSY
// at once, naming the connection's bound, and counts for nothing.
func TestWaitForWithoutASlot(t *testing.T) {
	h := newWaitHarness(t, &testFeed{})
	_, raw, isError := h.wait(t, withoutWaitSlot(t.Context(), maxWaiting), map[string]any{"stream": "network"})
	if !isError || !strings.Contains(string(raw), `"code":"BUSY"`) || !strings.Contains(string(raw), `"limit":256`) ||
		!strings.Contains(string(raw), "as many as one connection may hold") {
		t.Errorf("a wait without a slot: %s, want BUSY naming the connection's bound", raw)
	}
	if n := h.ts.waiting.Load(); n != 0 {
		t.Errorf("a refused wait left %d waiting, want 0", n)
	}
}
