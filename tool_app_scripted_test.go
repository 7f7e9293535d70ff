package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/coder/websocket"
	"github.com/google/go-cmp/cmp"
)

// The app tools against a scripted app: exact answers, capabilities, and
// fire-and-forget actions.

// scriptedApp answers a wire connection's requests from a table of
// handlers, until the test ends.
func scriptedApp(t *testing.T, a *wireTestAdapter, answer func(method string, params json.RawMessage) (result any, errObj map[string]any)) {
	t.Helper()
	var wg sync.WaitGroup
	t.Cleanup(wg.Wait)
	t.Cleanup(func() { a.ws.CloseNow() })
	wg.Go(func() {
		for {
			b, err := a.read()
			if err != nil {
				return
			}
			var r wireTestRequest
			if json.Unmarshal(b, &r) != nil || r.Type != "request" {
				continue
			}
			result, errObj := answer(r.Method, r.Params)
			msg := map[string]any{"type": "response", "id": r.ID}
			if errObj != nil {
				msg["error"] = errObj
			} else {
				msg["result"] = result
			}
			data, _ := json.Marshal(msg)
			ctx, cancel := context.WithTimeout(context.Background(), linkWaitLimit)
			err = a.ws.Write(ctx, websocket.MessageText, data)
			cancel()
			if err != nil {
				return
			}
		}
	})
}

// callToolDirect calls a tool of ts and returns its result object (or the
// error object) and whether it failed.
func callToolDirect(t *testing.T, ts *toolSet, name string, args map[string]any) (json.RawMessage, bool) {
	t.Helper()
	raw, _ := json.Marshal(args)
	out := ts.call(t.Context(), ts.byName[name], raw)
	var res struct {
		Content           []struct{ Text string } `json:"content"`
		StructuredContent json.RawMessage         `json:"structuredContent"`
		IsError           bool                    `json:"isError"`
	}
	if err := json.Unmarshal(out, &res); err != nil || len(res.Content) != 1 {
		t.Fatalf("%s: malformed result %s", name, out)
	}
	if res.IsError {
		return json.RawMessage(res.Content[0].Text), true
	}
	return res.StructuredContent, false
}

// wireEvents serves events.query over a list of events as an adapter must.
func wireEvents(events []map[string]any, params json.RawMessage) any {
	var p struct {
		Limit     int    `json:"limit"`
		SinceSeq  *int64 `json:"since_seq"`
		EventType string `json:"event_type"`
	}
	_ = json.Unmarshal(params, &p)
	var matched []map[string]any
	hasMore := false
	match := func(ev map[string]any) bool { return p.EventType == "" || ev["type"] == p.EventType }
	if p.SinceSeq != nil {
		for _, ev := range events {
			if ev["seq"].(int64) > *p.SinceSeq && match(ev) {
				if len(matched) == p.Limit {
					hasMore = true
					break
				}
				matched = append(matched, ev)
			}
		}
	} else {
		for i := len(events) - 1; i >= 0; i-- {
			if match(events[i]) {
				if len(matched) == p.Limit {
					hasMore = true
					break
				}
				matched = append([]map[string]any{events[i]}, matched...)
			}
		}
	}
	if matched == nil {
		matched = []map[string]any{}
	}
	return map[string]any{"events": matched, "hasMore": hasMore, "oldestSeq": events[0]["seq"], "latestSeq": events[len(events)-1]["seq"]}
}

func withAppStreams(m map[string]any) {
	m["streams"] = []any{
		map[string]any{"name": "redux", "active": true},
		map[string]any{"name": "console", "active": true},
		map[string]any{"name": "network", "active": true},
	}
}

// TestAppToolsScripted drives the tools against a scripted adapter: a
// console of 1 000 entries (an error every 97th, beyond the first page),
// a network stream with a request whose bodies exceed the result budget, a
// dispatch whose event carries the app's own diff, and commands.
func TestAppToolsScripted(t *testing.T) {
	h := startLinkHarness(t, nil, nil)
	a := connectWith(t, h, "scripted", withAppStreams, hsWith("capabilities", []any{"state.dispatch", "commands"}))
	var console, network []map[string]any
	for seq := int64(1); seq <= 1000; seq++ {
		p := map[string]any{"level": "info", "message": fmt.Sprintf("line %d", seq)}
		if seq%97 == 0 {
			p = map[string]any{"level": "error", "message": fmt.Sprintf("boom %d", seq), "stack": []any{"a", "b", "c", "d", "e", "f", "g", "h", "i", "j"}}
		}
		console = append(console, map[string]any{"stream": "console", "seq": seq, "type": "log", "timestamp": "2026-11-21T10:00:00.000Z", "payload": p})
	}
	big := strings.Repeat("x", 3000)
	network = append(network, map[string]any{"stream": "network", "seq": int64(1), "type": "http_request", "timestamp": "2026-11-21T10:00:00.000Z",
		"payload": map[string]any{"method": "GET", "url": "https://x.test/big", "status": 200, "durationMs": 12,
			"request":  map[string]any{"headers": map[string]any{"Accept": "*/*"}, "params": map[string]any{}, "body": nil},
			"response": map[string]any{"headers": map[string]any{"Content-Type": "application/json"}, "body": map[string]any{"a": big, "b": big, "c": "small"}}}})
	var mu sync.Mutex
	var methods []string
	scriptedApp(t, a, func(method string, params json.RawMessage) (any, map[string]any) {
		mu.Lock()
		methods = append(methods, method)
		mu.Unlock()
		var p struct{ Stream string }
		_ = json.Unmarshal(params, &p)
		switch {
		case method == "events.query" && p.Stream == "console":
			return wireEvents(console, params), nil
		case method == "events.query" && p.Stream == "network":
			return wireEvents(network, params), nil
		case method == "events.query" && p.Stream == "redux":
			return wireEvents([]map[string]any{{"stream": "redux", "seq": int64(8), "type": "action_dispatched", "timestamp": "2026-11-21T10:00:00.000Z",
				"payload": map[string]any{"action": map[string]any{"type": "x/y"}, "diff": []any{map[string]any{"path": "x", "type": "changed", "oldValue": 1, "newValue": 2}}}}}, params), nil
		case method == "snapshot.get":
			return map[string]any{"seq": 7, "timestamp": "2026-11-21T10:00:00.000Z", "state": map[string]any{"x": 1}}, nil
		case method == "state.dispatch":
			return map[string]any{"seq": 8}, nil
		case method == "commands.list":
			return map[string]any{"commands": []any{map[string]any{"command": "reset", "args": []any{map[string]any{"name": "hard", "type": "boolean"}}}}}, nil
		case method == "commands.run":
			var run struct {
				Command string
				Args    map[string]any
			}
			_ = json.Unmarshal(params, &run)
			return map[string]any{"result": map[string]any{"ran": run.Command, "args": run.Args}}, nil
		}
		return nil, map[string]any{"code": "UNKNOWN_METHOD", "message": method}
	})
	cfg := linkTestConfig()
	cfg.MaxResultBytes = 4096
	ts := newTestToolSet(cfg, h.link)

	// Errors every 97th entry: the newest 3 lie in the first page, the
	// oldest only further back.
	res, _ := callToolDirect(t, ts, "debug_get_logs", map[string]any{"level": "error", "limit": 3})
	var logs logsOut
	_ = json.Unmarshal(res, &logs)
	if len(logs.Entries) != 3 || logs.Entries[0].Seq != 776 || !logs.HasMore || logs.LatestSeq != 1000 {
		t.Errorf("newest 3 errors: %s", res)
	}
	if logs.Entries[0].MoreFrames != 10-maxStackFrames {
		t.Errorf("stack of 10 frames: moreFrames %d, want %d", logs.Entries[0].MoreFrames, 10-maxStackFrames)
	}
	res, _ = callToolDirect(t, ts, "debug_get_logs", map[string]any{"level": "error", "limit": 200})
	_ = json.Unmarshal(res, &logs)
	if len(logs.Entries) != 10 || logs.Entries[0].Seq != 97 || logs.HasMore {
		t.Errorf("all errors: %s", res)
	}
	res, _ = callToolDirect(t, ts, "debug_get_logs", map[string]any{"contains": "BOOM", "since_seq": 100, "limit": 2})
	_ = json.Unmarshal(res, &logs)
	if len(logs.Entries) != 2 || logs.Entries[0].Seq != 194 || logs.Entries[1].Seq != 291 || !logs.HasMore {
		t.Errorf("errors after 100: %s", res)
	}

	// The detail fits the budget by leaving out the largest bodies.
	res, isError := callToolDirect(t, ts, "debug_get_network", map[string]any{"seq": 1})
	var detail struct {
		Response struct {
			Body struct {
				Omitted bool `json:"omitted"`
				Bytes   int  `json:"bytes"`
			} `json:"body"`
			Headers map[string]string `json:"headers"`
		} `json:"response"`
	}
	if isError || json.Unmarshal(res, &detail) != nil || !detail.Response.Body.Omitted || detail.Response.Body.Bytes < 6000 ||
		detail.Response.Headers["Content-Type"] == "" || len(res) > cfg.MaxResultBytes {
		t.Errorf("detail over budget: %s", res)
	}

	res, isError = callToolDirect(t, ts, "debug_dispatch_action", map[string]any{"action": map[string]any{"type": "x/y"}})
	var dispatched struct {
		ChangesFrom string           `json:"changesFrom"`
		Changes     []map[string]any `json:"changes"`
		Event       struct {
			Seq int64 `json:"seq"`
		} `json:"event"`
	}
	if isError || json.Unmarshal(res, &dispatched) != nil || dispatched.ChangesFrom != "event" || len(dispatched.Changes) != 1 || dispatched.Event.Seq != 8 {
		t.Errorf("dispatch with the app's diff: %s", res)
	}

	res, isError = callToolDirect(t, ts, "debug_run_command", map[string]any{"command": "reset", "args": map[string]any{"hard": true}})
	if want := `{"command":"reset","result":{"args":{"hard":true},"ran":"reset"},"latestSeqs":{"console":0,"network":0,"redux":0}}`; isError || normaliseJSON(t, string(res)) != normaliseJSON(t, want) {
		t.Errorf("run: %s, want %s", res, want)
	}
	res, isError = callToolDirect(t, ts, "debug_list_commands", nil)
	if isError || !strings.Contains(string(res), `"reset"`) {
		t.Errorf("list: %s", res)
	}

	// Gone: the commands listed are still known; running one needs the app.
	a.ws.CloseNow()
	linkWaitFor(t, "the adapter to leave", func() bool { return !h.link.status().Connected })
	res, isError = callToolDirect(t, ts, "debug_list_commands", nil)
	if isError || !strings.Contains(string(res), `"reset"`) || !strings.Contains(string(res), `"live":false`) {
		t.Errorf("list after disconnect: %s", res)
	}
	res, isError = callToolDirect(t, ts, "debug_run_command", map[string]any{"command": "reset"})
	if code, _, _ := decodeToolError(t, res); !isError || code != codeNotConnected {
		t.Errorf("run after disconnect: %s", res)
	}
}

// TestAppToolsCapabilities: an app that does not offer what a tool needs
// gets an error naming what it lacks, at once, without a request.
func TestAppToolsCapabilities(t *testing.T) {
	h := startLinkHarness(t, nil, nil)
	a := h.connect(t, "plain")
	scriptedApp(t, a, func(method string, _ json.RawMessage) (any, map[string]any) {
		t.Errorf("the server asked %s of an app that does not offer it", method)
		return nil, map[string]any{"code": "UNKNOWN_METHOD", "message": method}
	})
	ts := newTestToolSet(linkTestConfig(), h.link)
	for _, tc := range []struct {
		tool       string
		args       map[string]any
		capability string
	}{
		{"debug_dispatch_action", map[string]any{"action": map[string]any{"type": "a"}}, capStateDispatch},
		{"debug_list_commands", nil, capCommands},
		{"debug_run_command", map[string]any{"command": "a"}, capCommands},
	} {
		res, isError := callToolDirect(t, ts, tc.tool, tc.args)
		code, details, _ := decodeToolError(t, res)
		if !isError || code != codeNotSupported || details["capability"] != tc.capability ||
			!strings.Contains(string(res), "capabilities") {
			t.Errorf("%s: %s, want NOT_SUPPORTED naming %s", tc.tool, res, tc.capability)
		}
	}
	for _, tc := range []struct{ tool, stream string }{{"debug_get_logs", "console"}, {"debug_get_network", "network"}} {
		res, isError := callToolDirect(t, ts, tc.tool, nil)
		code, _, _ := decodeToolError(t, res)
		if !isError || code != codeStreamUnavailable || !strings.Contains(string(res), `would need to record a \"`+tc.stream+`\" stream`) {
			t.Errorf("%s: %s, want STREAM_UNAVAILABLE naming the %s stream", tc.tool, res, tc.stream)
		}
	}
}

// fireAndForgetFeed is a Reactotron-like feed: it answers nothing itself,
// and a command's effects arrive as events afterwards. It answers
// snapshot.get from state, as the bridge asks the app for its state.
type fireAndForgetFeed struct {
	s     *session
	ran   chan runCommandParams
	mu    sync.Mutex
	state string
	wg    sync.WaitGroup
}

func (f *fireAndForgetFeed) request(ctx context.Context, method string, params any) (json.RawMessage, error) {
	switch p := params.(type) {
	case runCommandParams:
		f.s.appendEvent(f, "redux", "action_dispatched", time.Now(), []byte(`{"action":{"type":"cart/clear"}}`))
		f.ran <- p
		return json.RawMessage(`{}`), nil
	case snapshotParams:
		f.mu.Lock()
		defer f.mu.Unlock()
		return json.RawMessage(`{"seq":1,"timestamp":"2026-11-21T10:00:00.000Z","state":` + f.state + `}`), nil
	case dispatchParams:
		// The app dispatches a moment later and reports the action.
		f.wg.Go(func() {
			time.Sleep(200 * time.Millisecond)
			f.mu.Lock()
			f.state = `{"cart":{"items":[]}}`
			f.mu.Unlock()
			f.s.appendEvent(f, "redux", "action_dispatched", time.Now(), []byte(`{"action":`+string(p.Action)+`}`))
		})
		return json.RawMessage(`{}`), nil
	}
	return nil, errAnswerLocally
}

func (f *fireAndForgetFeed) replaced() {}

// TestRunCommandFireAndForget: for an app that does not answer commands,
// the result holds the events of every stream within the second after, and
// none of later ones.
func TestRunCommandFireAndForget(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cfg := linkTestConfig()
		link := newTestLink(cfg, nil, func(linkEvent) {})
		feed := &fireAndForgetFeed{ran: make(chan runCommandParams, 1)}
		info := &adapterInfo{SessionID: "rt", AdapterVersion: "reactotron", ConnectedAt: time.Now(),
			Streams: []streamState{{Name: "redux", Active: true}, {Name: "console", Active: true}}}
		s, _ := registryOf(link).attach(sessionViaReactotron, "rt", "", info, feed)
		feed.s = s
		s.appendEvent(feed, "console", "log", time.Now(), []byte(`{"level":"info","message":"before"}`))
		s.registerCommand(reactotronCommand{Command: "clearCart", Title: "Clear cart"}, true)
		ts := newTestToolSet(cfg, link)

		res, isError := callToolDirect(t, ts, "debug_list_commands", nil)
		if isError || normaliseJSON(t, string(res)) != normaliseJSON(t, `{"commands":[{"command":"clearCart","title":"Clear cart"}]}`) {
			t.Errorf("commands of a Reactotron session: %s", res)
		}

		done := make(chan json.RawMessage)
		go func() {
			res, _ := callToolDirect(t, ts, "debug_run_command", map[string]any{"command": "clearCart", "args": map[string]any{"all": true}})
			done <- res
		}()
		p := <-feed.ran
		if p.Command != "clearCart" || string(p.Args) != `{"all":true}` {
			t.Errorf("the feed got %+v", p)
		}
		time.Sleep(500 * time.Millisecond)
		s.appendEvent(feed, "console", "log", time.Now(), []byte(`{"level":"info","message":"cart cleared"}`))
		res = <-done
		s.appendEvent(feed, "console", "log", time.Now(), []byte(`{"level":"info","message":"too late"}`))

		var got struct {
			Command string
			Result  any
			Streams []struct {
				Stream string
				Events []struct {
					Seq     int64
					Payload map[string]any
				}
			}
		}
		if err := json.Unmarshal(res, &got); err != nil {
			t.Fatalf("%v: %s", err, res)
		}
		var summary []string
		for _, st := range got.Streams {
			for _, ev := range st.Events {
				summary = append(summary, fmt.Sprintf("%s %d", st.Stream, ev.Seq))
			}
		}
		if diff := cmp.Diff([]string{"redux 1", "console 2"}, summary); diff != "" || got.Command != "clearCart" || got.Result != nil {
			t.Errorf("run on a fire-and-forget app: %s\n(-want +got):\n%s", res, diff)
		}
	})
}

// TestDispatchFireAndForget: on an app that does not answer a dispatch, the
// tool waits for the action to be reported and diffs the state around it.
func TestDispatchFireAndForget(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cfg := linkTestConfig()
		link := newTestLink(cfg, nil, func(linkEvent) {})
		feed := &fireAndForgetFeed{state: `{"cart":{"items":[1]}}`}
		info := &adapterInfo{SessionID: "rt", AdapterVersion: "reactotron", ConnectedAt: time.Now(),
			Streams: []streamState{{Name: "redux", Active: true}}}
		s, _ := registryOf(link).attach(sessionViaReactotron, "rt", "", info, feed)
		feed.s = s
		s.appendEvent(feed, "redux", "action_dispatched", time.Now(), []byte(`{"action":{"type":"cart/clear"}}`))
		ts := newTestToolSet(cfg, link)
		res, isError := callToolDirect(t, ts, "debug_dispatch_action", map[string]any{"action": map[string]any{"type": "cart/clear"}})
		feed.wg.Wait()
		want := `{"changes":[{"path":"cart.items.0","type":"removed","oldValue":1}],"changesFrom":"snapshots","totalChanges":1,"truncated":false,
			"event":{"stream":"redux","seq":2,"type":"action_dispatched","timestamp":"2000-01-01T00:00:00.200Z","payload":{"action":{"type":"cart/clear"}}}}`
		if isError || normaliseJSON(t, string(res)) != normaliseJSON(t, want) {
			t.Errorf("dispatch on a fire-and-forget app:\n got %s\nwant %s", res, want)
		}
	})
}
