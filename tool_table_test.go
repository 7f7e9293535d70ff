package main

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/google/go-cmp/cmp"
)

// fakeClock returns a new instant one second later on every call, so the
// simulated app's timestamps depend only on what it did.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(time.Second)
	return c.now
}

// e2e is the whole program, driven through stdio pipes, with the simulated
// app connected over a real loopback WebSocket.
type e2e struct {
	*testServer
	app    *demoApp
	nextID int
}

// startE2E starts the server, finds its WebSocket URL as a user would (from
// debug_health_check), and connects a simulated app that has taken steps
// steps from a fixed seed and clock.
func startE2E(t *testing.T, cfg config, steps int) *e2e {
	t.Helper()
	ts := startServer(t, cfg)
	ts.initialize()
	e := &e2e{testServer: ts, nextID: 100}
	e.app = newDemoApp(demoOptions{Seed: 7, Now: (&fakeClock{now: time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)}).Now})
	for range steps {
		e.app.step()
	}
	connectDemoApp(t, e, e.app)
	return e
}

type healthOut struct {
	Connected bool `json:"connected"`
	Server    struct {
		Listening bool   `json:"listening"`
		WSURL     string `json:"wsUrl"`
	} `json:"server"`
}

// waitHealth polls debug_health_check until ok holds, with a deadline.
func (e *e2e) waitHealth(ok func(healthOut) bool) healthOut {
	e.t.Helper()
	for deadline := time.Now().Add(10 * time.Second); ; {
		var h healthOut
		res, isError := e.callTool("debug_health_check", nil)
		if isError {
			e.t.Fatalf("health check failed: %s", res)
		}
		if err := json.Unmarshal(res, &h); err != nil {
			e.t.Fatal(err)
		}
		if ok(h) {
			return h
		}
		if time.Now().After(deadline) {
			e.t.Fatalf("health never reached the wanted state: %s", res)
		}
		time.Sleep(5 * time.Millisecond) // polling with a deadline
	}
}

// callTool calls a tool and returns its structuredContent on success or the
// error object from its text item on failure, checking the result's shape.
func (e *e2e) callTool(name string, args map[string]any) (json.RawMessage, bool) {
	e.t.Helper()
	e.nextID++
	params := map[string]any{"name": name}
	if args != nil {
		params["arguments"] = args
	}
	reply := e.call(e.nextID, "tools/call", params)
	raw, _ := json.Marshal(reply["result"])
	var res struct {
		Content []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		} `json:"content"`
		StructuredContent json.RawMessage `json:"structuredContent"`
		IsError           bool            `json:"isError"`
	}
	if err := json.Unmarshal(raw, &res); err != nil || len(res.Content) != 1 || res.Content[0].Type != "text" {
		e.t.Fatalf("%s: malformed tool result %v", name, reply)
	}
	if res.IsError {
		if res.StructuredContent != nil {
			e.t.Errorf("%s: an error result carries structuredContent", name)
		}
		return json.RawMessage(res.Content[0].Text), true
	}
	if diff := cmp.Diff(normaliseJSON(e.t, string(res.StructuredContent)), normaliseJSON(e.t, res.Content[0].Text)); diff != "" {
		e.t.Errorf("%s: text and structuredContent differ:\n%s", name, diff)
	}
	return res.StructuredContent, false
}

// toolError decodes a failed call's error object.
func decodeToolError(t *testing.T, raw json.RawMessage) (code string, details map[string]any, suggestion string) {
	t.Helper()
	var e struct {
		Error      bool           `json:"error"`
		Code       string         `json:"code"`
		Message    string         `json:"message"`
		Details    map[string]any `json:"details"`
		Suggestion string         `json:"suggestion"`
	}
	if err := json.Unmarshal(raw, &e); err != nil || !e.Error || e.Message == "" {
		t.Fatalf("malformed tool error %s", raw)
	}
	return e.Code, e.Details, e.Suggestion
}

// checkGolden compares got, normalised, with testdata/tools/name.json.
func checkGolden(t *testing.T, name string, got json.RawMessage) {
	t.Helper()
	file := filepath.Join("testdata", "tools", name+".json")
	norm := normaliseJSON(t, string(got))
	var pretty strings.Builder
	var v any
	_ = json.Unmarshal([]byte(norm), &v)
	enc := json.NewEncoder(&pretty)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
	if *update {
		if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(file, []byte(pretty.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(file)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if diff := cmp.Diff(normaliseJSON(t, string(want)), norm); diff != "" {
		t.Errorf("%s differs from %s (-want +got):\n%s", name, file, diff)
	}
}

func TestToolsGolden(t *testing.T) {
	e := startE2E(t, testConfig(t), 12)
	// Snapshot seqs for the diff come from the events, as an agent finds them.
	res, _ := e.callTool("debug_query_events", map[string]any{"stream": "redux", "event_type": "state_snapshot"})
	var snaps struct {
		Events []struct {
			Seq int64 `json:"seq"`
		} `json:"events"`
	}
	if err := json.Unmarshal(res, &snaps); err != nil || len(snaps.Events) < 2 {
		t.Fatalf("want at least two state snapshots: %s", res)
	}
	base, target := snaps.Events[0].Seq, snaps.Events[len(snaps.Events)-1].Seq

	for _, tc := range []struct {
		name    string
		tool    string
		args    map[string]any
		isError bool
	}{
		{"health", "debug_health_check", nil, false},
		{"list_streams", "debug_list_streams", map[string]any{}, false},
		{"snapshot_navigation", "debug_get_snapshot", map[string]any{"stream": "navigation"}, false},
		{"snapshot_redux_scope", "debug_get_snapshot", map[string]any{"stream": "redux", "scope": "auth.user"}, false},
		{"snapshot_mmkv_auth", "debug_get_snapshot", map[string]any{"stream": "mmkv", "scope": "auth"}, false},
		{"state_path_role", "debug_get_state_path", map[string]any{"path": "auth.user.role"}, false},
		{"state_path_cart_item", "debug_get_state_path", map[string]any{"path": "cart.items.0"}, false},
		{"events_redux_last5", "debug_query_events", map[string]any{"stream": "redux", "limit": 5}, false},
		{"events_nav_since", "debug_query_events", map[string]any{"stream": "navigation", "since_seq": 2, "limit": 3}, false},
		{"diff_redux", "debug_diff_snapshots", map[string]any{"stream": "redux", "base_seq": base, "target_seq": target}, false},
		{"error_stream_unavailable", "debug_query_events", map[string]any{"stream": "sensors"}, true},
		{"error_scope_not_found", "debug_get_snapshot", map[string]any{"stream": "redux", "scope": "auth.nope"}, true},
		{"error_path_not_found", "debug_get_state_path", map[string]any{"path": "cart.items.99.name"}, true},
		{"error_snapshot_not_found", "debug_diff_snapshots", map[string]any{"stream": "redux", "base_seq": 999998, "target_seq": 999999}, true},
		{"error_snapshot_not_found_target", "debug_diff_snapshots", map[string]any{"stream": "redux", "base_seq": base, "target_seq": 999999}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, isError := e.callTool(tc.tool, tc.args)
			if isError != tc.isError {
				t.Fatalf("isError = %v, want %v: %s", isError, tc.isError, got)
			}
			checkGolden(t, tc.name, got)
		})
	}
}

// TestDoneWhenQuestions asks what the tools issue promises an agent can
// answer in one or two calls against the simulated app.
func TestDoneWhenQuestions(t *testing.T) {
	e := startE2E(t, testConfig(t), 30)

	res, isError := e.callTool("debug_get_state_path", map[string]any{"path": "auth.user.role"})
	var role struct{ Value string }
	if isError || json.Unmarshal(res, &role) != nil || role.Value == "" {
		t.Errorf("current user's role: %s", res)
	}

	res, isError = e.callTool("debug_query_events", map[string]any{"stream": "redux", "event_type": "action_dispatched", "limit": 200})
	var actions struct {
		Events []struct {
			Type    string `json:"type"`
			Payload struct {
				Action struct{ Type string } `json:"action"`
			} `json:"payload"`
		} `json:"events"`
	}
	if isError || json.Unmarshal(res, &actions) != nil || len(actions.Events) == 0 || actions.Events[0].Payload.Action.Type == "" {
		t.Errorf("actions that ran: %s", res)
	}

	// What changed in the cart between the last two snapshots: one call.
	res, isError = e.callTool("debug_diff_snapshots", map[string]any{"stream": "redux"})
	var diff struct {
		Changes []struct{ Path string } `json:"changes"`
	}
	if isError || json.Unmarshal(res, &diff) != nil || !slicesContainsPrefix(diff.Changes, "cart.") {
		t.Errorf("what changed in the cart: %s", res)
	}

	res, isError = e.callTool("debug_get_snapshot", map[string]any{"stream": "navigation"})
	var nav struct {
		State struct {
			Index  int `json:"index"`
			Routes []struct {
				Name string `json:"name"`
			} `json:"routes"`
		} `json:"state"`
	}
	if isError || json.Unmarshal(res, &nav) != nil || nav.State.Index >= len(nav.State.Routes) || nav.State.Routes[nav.State.Index].Name == "" {
		t.Errorf("focused screen: %s", res)
	}

	res, isError = e.callTool("debug_get_snapshot", map[string]any{"stream": "mmkv", "scope": "auth"})
	var mmkv struct {
		State struct {
			Keys      map[string]any `json:"keys"`
			TotalSize *int           `json:"totalSize"`
		} `json:"state"`
	}
	if isError || json.Unmarshal(res, &mmkv) != nil || len(mmkv.State.Keys) == 0 || mmkv.State.TotalSize == nil {
		t.Errorf("what MMKV holds for auth: %s", res)
	}
}

func slicesContainsPrefix(changes []struct{ Path string }, prefix string) bool {
	for _, c := range changes {
		if strings.HasPrefix(c.Path, prefix) {
			return true
		}
	}
	return false
}

func TestQueryEventsClampsLimit(t *testing.T) {
	t.Parallel()
	cfg := testConfig(t)
	cfg.MaxResultBytes = int(cfg.MaxPayloadSize) // 200 events with snapshots exceed the default budget
	e := startE2E(t, cfg, 300)
	for _, tc := range []struct {
		limit any
		want  int
	}{{0, 1}, {-5, 1}, {1000, 200}, {1e30, 200}, {7.0, 7}} {
		res, isError := e.callTool("debug_query_events", map[string]any{"stream": "redux", "limit": tc.limit})
		var out struct {
			Events  []json.RawMessage `json:"events"`
			HasMore bool              `json:"hasMore"`
		}
		if isError || json.Unmarshal(res, &out) != nil {
			t.Fatalf("limit %v: %s", tc.limit, res)
		}
		if len(out.Events) != tc.want || !out.HasMore {
			t.Errorf("limit %v: %d events (hasMore %v), want %d and hasMore", tc.limit, len(out.Events), out.HasMore, tc.want)
		}
	}
}

func TestResultBudgetOutlines(t *testing.T) {
	cfg := testConfig(t)
	cfg.MaxResultBytes = 1024
	e := startE2E(t, cfg, 12)
	// The whole state is over budget; its outline's paths each narrow the
	// request in one more call, whether or not that one fits.
	res, isError := e.callTool("debug_get_snapshot", map[string]any{"stream": "redux"})
	outline := checkOverBudget(t, res, isError, "")
	prev := 1e18
	for _, o := range outline {
		entry := o.(map[string]any)
		size := entry["size"].(float64)
		if size > prev {
			t.Errorf("outline not largest first: %v", outline)
		}
		prev = size
		path := entry["path"].(string)
		res, isError := e.callTool("debug_get_snapshot", map[string]any{"stream": "redux", "scope": path})
		if isError {
			if code, _, _ := decodeToolError(t, res); code != codePayloadTooLarge {
				t.Errorf("outline path %q does not resolve: %s", path, res)
			}
		}
		res, isError = e.callTool("debug_get_state_path", map[string]any{"path": path})
		if isError && size > 1024 {
			checkOverBudget(t, res, isError, path)
		} else if isError {
			t.Errorf("%q (%v bytes) refused: %s", path, size, res)
		}
	}
	// A small answer still fits.
	if res, isError := e.callTool("debug_get_state_path", map[string]any{"path": "auth.user.role"}); isError {
		t.Errorf("small result refused: %s", res)
	}
}

// checkOverBudget checks a PAYLOAD_TOO_LARGE failure for the value at path
// and returns its outline.
func checkOverBudget(t *testing.T, res json.RawMessage, isError bool, path string) []any {
	t.Helper()
	if !isError {
		t.Fatalf("want PAYLOAD_TOO_LARGE for %q, got a %d-byte result", path, len(res))
	}
	code, details, suggestion := decodeToolError(t, res)
	if code != codePayloadTooLarge || details["limit"] != float64(1024) || details["size"].(float64) <= 1024 || details["path"] != path {
		t.Fatalf("want PAYLOAD_TOO_LARGE for %q with size, limit and path: %s", path, res)
	}
	outline, _ := details["outline"].([]any)
	if len(outline) == 0 || len(outline) > 30 || suggestion == "" {
		t.Fatalf("want an outline of 1-30 children and a suggestion: %s", res)
	}
	return outline
}

// scriptedAdapter handshakes like an app adapter and answers each request
// with whatever answer returns (nil: no answer at all).
func scriptedAdapter(t *testing.T, wsURL string, answer func(id, method string) []byte) {
	t.Helper()
	hs := `{"type":"handshake","protocolVersion":1,"sessionId":"scripted","adapterVersion":"0.0.1",` +
		`"streams":[{"name":"redux","active":true},{"name":"mmkv","active":true,"instances":["auth"]}]}`
	answeringAdapter(t, wsURL, hs, func(id, method string, _ json.RawMessage) []byte { return answer(id, method) })
}

// answeringAdapter connects an app adapter with the handshake hs to wsURL
// and answers each request with whatever answer returns (nil: no answer at
// all). stop closes it and waits for its reader; the test's cleanup calls
// it too.
func answeringAdapter(t *testing.T, wsURL, hs string, answer func(id, method string, params json.RawMessage) []byte) (stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	c, _, err := websocket.Dial(ctx, wsURL, nil)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	c.SetReadLimit(-1)
	if err := c.Write(ctx, websocket.MessageText, []byte(hs)); err != nil {
		cancel()
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			_, data, err := c.Read(ctx)
			if err != nil {
				return
			}
			var msg struct {
				Type, ID, Method string
				Params           json.RawMessage
			}
			if json.Unmarshal(data, &msg) != nil || msg.Type != "request" || answer == nil {
				continue
			}
			if reply := answer(msg.ID, msg.Method, msg.Params); reply != nil {
				_ = c.Write(ctx, websocket.MessageText, reply)
			}
		}
	}()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			c.Close(websocket.StatusNormalClosure, "")
			cancel()
			<-done
		})
	}
	t.Cleanup(stop)
	return stop
}

func TestAdapterFailuresBecomeToolErrors(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		answer func(id, method string) []byte
		code   string
	}{
		{"silent", func(id, method string) []byte { return nil }, codeTimeout},
		{"no result", func(id, method string) []byte {
			return fmt.Appendf(nil, `{"type":"response","id":%q}`, id)
		}, codeAdapterError},
		{"wrong shape", func(id, method string) []byte {
			return fmt.Appendf(nil, `{"type":"response","id":%q,"result":{"state":1}}`, id)
		}, codeAdapterError},
		{"adapter INTERNAL", func(id, method string) []byte {
			return fmt.Appendf(nil, `{"type":"response","id":%q,"error":{"code":"INTERNAL","message":"boom"}}`, id)
		}, codeAdapterError},
		{"adapter STREAM_UNAVAILABLE", func(id, method string) []byte {
			return fmt.Appendf(nil, `{"type":"response","id":%q,"error":{"code":"STREAM_UNAVAILABLE","message":"gone"}}`, id)
		}, codeStreamUnavailable},
		{"state a string", func(id, method string) []byte {
			return fmt.Appendf(nil, `{"type":"response","id":%q,"result":{"seq":1,"timestamp":"t","state":"x"}}`, id)
		}, codePathNotFound},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel() // each case has a server and an adapter of its own
			cfg := testConfig(t)
			// Only the silent adapter is to time out, and soon; an adapter
			// that answers must never lose the race to a loaded machine.
			cfg.RequestTimeout = time.Minute
			if tc.code == codeTimeout {
				cfg.RequestTimeout = 50 * time.Millisecond
			}
			cfg.Tune.HealthStreams = 20 * time.Millisecond // health checks need not wait for a silent adapter
			ts := startServer(t, cfg)
			ts.initialize()
			e := &e2e{testServer: ts}
			url := e.waitHealth(func(h healthOut) bool { return h.Server.Listening }).Server.WSURL
			scriptedAdapter(t, url, tc.answer)
			e.waitHealth(func(h healthOut) bool { return h.Connected })
			res, isError := e.callTool("debug_get_state_path", map[string]any{"path": "auth.user"})
			if !isError {
				t.Fatalf("want %s, got success %s", tc.code, res)
			}
			if code, _, suggestion := decodeToolError(t, res); code != tc.code || suggestion == "" {
				t.Errorf("got %s, want %s with a suggestion", res, tc.code)
			}
			// The health check stays fast and truthful while the adapter misbehaves.
			res, isError = e.callTool("debug_health_check", nil)
			if isError || !strings.Contains(string(res), `"connected":true`) {
				t.Errorf("health check: %s", res)
			}
		})
	}
}

func TestPortInUseStillServesMCP(t *testing.T) {
	holder, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Close()
	cfg := testConfig(t)
	cfg.WSPort = holder.Addr().(*net.TCPAddr).Port
	// The holder never answers: each probe of it ends at this deadline
	// (TestHolderCheck holds when probes happen).
	cfg.Tune.RelayProbe = 20 * time.Millisecond
	ts := startServer(t, cfg)
	ts.initialize()
	e := &e2e{testServer: ts}

	res, isError := e.callTool("debug_health_check", nil)
	var health struct {
		Connected bool `json:"connected"`
		Server    struct {
			Listening   bool   `json:"listening"`
			ListenError string `json:"listenError"`
		} `json:"server"`
	}
	if isError || json.Unmarshal(res, &health) != nil || health.Connected || health.Server.Listening ||
		!strings.Contains(health.Server.ListenError, "address already in use") {
		t.Errorf("health with the port taken: %s", res)
	}
	for range 3 {
		res, isError = e.callTool("debug_get_state_path", map[string]any{"path": ""})
		code, details, _ := decodeToolError(t, res)
		if !isError || code != codeNotConnected || details["reason"] != "not_listening" || details["listenError"] == "" {
			t.Errorf("tool with the port taken: %s", res)
		}
		if res, isError = e.callTool("debug_health_check", nil); isError || !strings.Contains(string(res), "address already in use") {
			t.Errorf("health with the port taken: %s", res)
		}
	}
}

// TestToolListContract pins what every tool must declare, and the size of
// the whole tools/list reply. The part a model reads (names, descriptions,
// input schemas) has its own, tighter bound in TestToolListModelSize; the
// output schemas, complete since they name every member of an answer, make
// up the rest.
func TestToolListContract(t *testing.T) {
	ts := newTestToolSet(testConfig(t), nil)
	reply := encodeReply(json.RawMessage("1"), ts.listJSON, nil)
	if len(reply) >= 13500 {
		t.Errorf("tools/list reply is %d bytes, want under 13 500", len(reply))
	}
	var list struct {
		Tools []struct {
			Name         string
			Title        string
			Description  string
			InputSchema  map[string]any
			OutputSchema map[string]any
			Annotations  map[string]bool
		}
	}
	if err := json.Unmarshal(ts.listJSON, &list); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range list.Tools {
		names = append(names, tool.Name)
		if tool.InputSchema["type"] != "object" || tool.InputSchema["additionalProperties"] != false {
			t.Errorf("%s: inputSchema %v lacks type object or additionalProperties false", tool.Name, tool.InputSchema)
		}
		if tool.OutputSchema["type"] != "object" {
			t.Errorf("%s: outputSchema %v is not an object schema", tool.Name, tool.OutputSchema)
		}
		changes := tool.Name == "debug_dispatch_action" || tool.Name == "debug_run_command"
		if tool.Annotations["readOnlyHint"] == changes || tool.Title == "" || len(tool.Description) < 80 {
			t.Errorf("%s: wants readOnlyHint %t, a title and a description an agent can act on", tool.Name, !changes)
		}
		if _, ok := tool.Annotations["destructiveHint"]; changes && (!ok || tool.Annotations["idempotentHint"]) {
			t.Errorf("%s: changes the app but its annotations %v do not say how", tool.Name, tool.Annotations)
		}
	}
	want := []string{"debug_health_check", "debug_list_streams", "debug_get_snapshot", "debug_query_events", "debug_get_state_path", "debug_diff_snapshots",
		"debug_get_logs", "debug_get_network", "debug_dispatch_action", "debug_list_commands", "debug_run_command", "debug_wait_for"}
	if diff := cmp.Diff(want, names); diff != "" {
		t.Errorf("tool names (-want +got):\n%s", diff)
	}
}

func TestParseIntegerEdges(t *testing.T) {
	since := argSpec{name: "since_seq", kind: argInteger, min: 0}
	limit := argSpec{name: "limit", kind: argInteger, min: 1, max: 200, clamp: true}
	for _, tc := range []struct {
		spec    argSpec
		in      string
		want    int64
		problem string
	}{
		{since, "9007199254740993", 9007199254740993, ""}, // beyond 2^53, exact
		{since, "1e19", math.MaxInt64, ""},                // saturates: after everything
		{since, "1e400", math.MaxInt64, ""},
		{since, "5.0", 5, ""},
		{since, "5e1", 50, ""},
		{since, "1e-400", 0, "must be an integer, not 1e-400"},
		{since, "2.5", 0, "must be an integer, not 2.5"},
		{since, "-1", 0, "must be at least 0"},
		{since, "-1e30", 0, "must be at least 0"},
		{limit, "1e30", 200, ""},
		{limit, "-1e30", 1, ""},
		{limit, "0", 1, ""},
	} {
		got, err := parseInteger([]byte(tc.in), tc.spec)
		problem := ""
		if te := toolErrorOf(err); te != nil {
			problem = te.Details.(map[string]string)["problem"]
		}
		if got != tc.want || problem != tc.problem {
			t.Errorf("%s %s: got %d, %q; want %d, %q", tc.spec.name, tc.in, got, problem, tc.want, tc.problem)
		}
	}
}

// TestParseArgsRefusesExplicitNull pins the decision for `null` arguments:
// the input schemas say string or integer and none allows null, so an
// explicit null is an INVALID_PARAMS error naming the argument, for
// optional arguments as much as for required ones (issue 11: {"scope": null}
// and {"limit": null} passed as if absent). Rows pin the message of every
// argument of every tool; an argument without a row is checked by its kind.
func TestParseArgsRefusesExplicitNull(t *testing.T) {
	const notString, notInteger = "must be a string, not null", "must be an integer, not null"
	want := map[[2]string]string{
		{"debug_get_snapshot", "stream"}:       notString,
		{"debug_get_snapshot", "scope"}:        notString,
		{"debug_query_events", "stream"}:       notString,
		{"debug_query_events", "limit"}:        notInteger,
		{"debug_query_events", "since_seq"}:    notInteger,
		{"debug_query_events", "event_type"}:   notString,
		{"debug_get_state_path", "path"}:       notString,
		{"debug_diff_snapshots", "stream"}:     notString,
		{"debug_diff_snapshots", "base_seq"}:   notInteger,
		{"debug_diff_snapshots", "target_seq"}: notInteger,
	}
	byKind := map[argKind]string{argString: notString, argInteger: notInteger, argObject: "must be an object, not null"}
	checked := 0
	for _, tl := range allTools {
		for _, arg := range tl.args {
			t.Run(tl.name+"/"+arg.name, func(t *testing.T) {
				problem, ok := want[[2]string{tl.name, arg.name}]
				if !ok {
					if problem, ok = byKind[arg.kind]; !ok {
						t.Fatalf("no expectation for argument kind %v", arg.kind)
					}
				}
				// Every other required argument is valid, so only the
				// null one can be refused.
				args := map[string]any{}
				for _, other := range tl.args {
					switch {
					case other.name == arg.name:
						args[other.name] = nil
					case other.required && other.kind == argString:
						args[other.name] = "redux"
					case other.required && other.kind == argObject:
						args[other.name] = map[string]any{"type": "a"}
					case other.required:
						args[other.name] = other.min + 1
					}
				}
				raw, _ := json.Marshal(args)
				_, err := parseArgs(tl.args, raw)
				te := toolErrorOf(err)
				if te == nil {
					t.Fatalf("parseArgs(%s) = %v, want INVALID_PARAMS", raw, err)
				}
				got := map[string]any{"code": te.Code, "details": te.Details}
				wantErr := map[string]any{"code": codeInvalidParams, "details": map[string]string{"argument": arg.name, "problem": problem}}
				if diff := cmp.Diff(wantErr, got); diff != "" {
					t.Errorf("parseArgs(%s) (-want +got):\n%s", raw, diff)
				}
			})
			checked++
		}
	}
	if checked < len(want) {
		t.Errorf("checked %d arguments, fewer than the %d rows: a tool lost an argument", checked, len(want))
	}

	// Absent optional arguments still take their defaults; null is not absent.
	for _, tl := range allTools {
		if tl.name != "debug_query_events" {
			continue
		}
		args, err := parseArgs(tl.args, json.RawMessage(`{"stream":"redux"}`))
		if err != nil {
			t.Fatal(err)
		}
		if limit, _ := args.int("limit"); limit != 50 {
			t.Errorf("absent limit = %d, want the default 50", limit)
		}
		if _, ok := args.str("event_type"); ok {
			t.Error("absent event_type reads as given")
		}
	}
}

// TestDiffDefaultsToTheLastTwoSnapshots: "what changed in the cart between
// the last two snapshots?" is one call; the seqs it picked are in the answer,
// and a seq given alone is paired with its neighbour.
func TestDiffDefaultsToTheLastTwoSnapshots(t *testing.T) {
	t.Parallel()
	e := startE2E(t, testConfig(t), 30)
	res, _ := e.callTool("debug_query_events", map[string]any{"stream": "redux", "event_type": "state_snapshot", "limit": 200})
	var snaps struct {
		Events []struct{ Seq int64 } `json:"events"`
	}
	if err := json.Unmarshal(res, &snaps); err != nil || len(snaps.Events) < 3 {
		t.Fatalf("want three snapshots, got %s", res)
	}
	n := len(snaps.Events)
	last, before, third := snaps.Events[n-1].Seq, snaps.Events[n-2].Seq, snaps.Events[n-3].Seq
	for _, tc := range []struct {
		name         string
		args         map[string]any
		base, target int64
	}{
		{"neither", map[string]any{}, before, last},
		{"only target_seq", map[string]any{"target_seq": before}, third, before},
		{"only base_seq", map[string]any{"base_seq": third}, third, last},
		{"both", map[string]any{"base_seq": third, "target_seq": last}, third, last},
	} {
		tc.args["stream"] = "redux"
		res, isError := e.callTool("debug_diff_snapshots", tc.args)
		var diff struct {
			BaseSeq, TargetSeq int64
			Changes            []struct{ Path string }
		}
		if isError || json.Unmarshal(res, &diff) != nil {
			t.Errorf("%s: %s", tc.name, res)
			continue
		}
		if diff.BaseSeq != tc.base || diff.TargetSeq != tc.target {
			t.Errorf("%s: diffed %d..%d, want %d..%d", tc.name, diff.BaseSeq, diff.TargetSeq, tc.base, tc.target)
		}
	}
	first := snaps.Events[0].Seq
	for _, tc := range []struct {
		name    string
		args    map[string]any
		missing []any
	}{
		{"nothing before the first", map[string]any{"stream": "redux", "target_seq": first}, []any{"base_seq"}},
		{"nothing after the last", map[string]any{"stream": "redux", "base_seq": last}, []any{"target_seq"}},
	} {
		res, isError := e.callTool("debug_diff_snapshots", tc.args)
		code, details, _ := decodeToolError(t, res)
		if !isError || code != codeSnapshotNotFound || cmp.Diff(tc.missing, details["missing"]) != "" {
			t.Errorf("%s: %s, want SNAPSHOT_NOT_FOUND missing %v", tc.name, res, tc.missing)
		}
	}
}
