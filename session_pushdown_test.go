package main

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestWirePath(t *testing.T) {
	for _, tc := range []struct {
		path string
		want string // the wire path as JSON; "null" is left out of params
		back string // formatPath of the segments read back, when not path's
	}{
		{"", `null`, ""},
		{"auth.user.role", `["auth","user","role"]`, ""},
		{"routes.0.name", `["routes",0,"name"]`, ""},
		{`byId["42"].name`, `["byId","42","name"]`, ""},
		{"byId.007", `["byId","007"]`, ""},
		// Too long to index any array: only a key can match, on the app too.
		{"big.12345678901", `["big","12345678901"]`, `big["12345678901"]`},
		{`settings["theme.dark"]`, `["settings","theme.dark"]`, ""},
		{`a[""]`, `["a",""]`, ""},
	} {
		segs, err := parsePath(tc.path)
		if err != nil {
			t.Fatal(err)
		}
		wire := wirePath(segs)
		got, _ := json.Marshal(wire)
		if string(got) != tc.want {
			t.Errorf("wirePath(%q) = %s, want %s", tc.path, got, tc.want)
		}
		// Both ways back give the segments again, so the app resolves what
		// the agent named.
		wantBack := formatPath(segs)
		if tc.back != "" {
			wantBack = tc.back
		}
		if back := formatPath(pathFromWire(wire)); back != wantBack {
			t.Errorf("pathFromWire(%s) = %q, want %q", got, back, wantBack)
		}
		parsed, err := parseWirePath(got)
		if tc.want == "null" {
			if err == nil {
				t.Errorf("parseWirePath(null) accepted")
			}
			continue
		}
		if err != nil || formatPath(parsed) != wantBack {
			t.Errorf("parseWirePath(%s) = %q, %v; want %q", got, formatPath(parsed), err, wantBack)
		}
	}
	for _, bad := range []string{`{}`, `[true]`, `[-1]`, `[1.5]`, `[null]`, `["a",`} {
		if _, err := parseWirePath([]byte(bad)); err == nil {
			t.Errorf("parseWirePath(%s) accepted", bad)
		}
	}
}

// pathTestAdapter is a scripted app adapter that advertises capabilities
// and records every request it gets.
type pathTestAdapter struct {
	mu       sync.Mutex
	requests []pathTestRequest
	close    func()
}

type pathTestRequest struct {
	Method string
	Params map[string]json.RawMessage
}

// startPathAdapter connects an adapter offering caps to the server behind e
// that answers with answer (nil: no answer) and waits until it is live.
func startPathAdapter(t *testing.T, e *e2e, caps []string, answer func(id, method string, params map[string]json.RawMessage) []byte) *pathTestAdapter {
	t.Helper()
	url := e.waitHealth(func(h healthOut) bool { return h.Server.Listening }).Server.WSURL
	capsJSON, _ := json.Marshal(caps)
	hs := `{"type":"handshake","protocolVersion":1,"sessionId":"paths","adapterVersion":"0.0.1",` +
		`"streams":[{"name":"redux","active":true}],"capabilities":` + string(capsJSON) + `}`
	a := &pathTestAdapter{}
	a.close = answeringAdapter(t, url, hs, func(id, method string, raw json.RawMessage) []byte {
		var params map[string]json.RawMessage
		_ = json.Unmarshal(raw, &params)
		a.mu.Lock()
		a.requests = append(a.requests, pathTestRequest{method, params})
		a.mu.Unlock()
		return answer(id, method, params)
	})
	e.waitHealth(func(h healthOut) bool { return h.Connected })
	return a
}

// take returns the requests of method received since the last take.
func (a *pathTestAdapter) take(method string) []pathTestRequest {
	a.mu.Lock()
	defer a.mu.Unlock()
	var out []pathTestRequest
	for _, r := range a.requests {
		if r.Method == method {
			out = append(out, r)
		}
	}
	a.requests = nil
	return out
}

func startPathServer(t *testing.T) *e2e {
	t.Helper()
	ts := startServer(t, testConfig(t))
	ts.initialize()
	return &e2e{testServer: ts, nextID: 100}
}

func pathTestResult(id string, result string) []byte {
	return fmt.Appendf(nil, `{"type":"response","id":%q,"result":%s}`, id, result)
}

func pathTestError(id, code, details string) []byte {
	return fmt.Appendf(nil, `{"type":"response","id":%q,"error":{"code":%q,"message":"m","details":%s}}`, id, code, details)
}

// wholeTestState is what an adapter without snapshot.path sends.
const wholeTestState = `{"auth":{"user":{"role":"admin"}},"routes":[{"name":"Home"}],"byId":{"42":{"name":"x"}}}`

func TestPathPushedDownWhenOffered(t *testing.T) {
	e := startPathServer(t)
	// The scripted app answers each path with a value naming it, so the
	// result shows which path the app resolved.
	app := startPathAdapter(t, e, []string{capSnapshotPath}, func(id, method string, params map[string]json.RawMessage) []byte {
		if method != "snapshot.get" {
			return pathTestResult(id, `{"streams":[]}`)
		}
		state := wholeTestState
		if p, ok := params["path"]; ok {
			state = fmt.Sprintf(`{"resolved":%q}`, p)
		}
		return pathTestResult(id, `{"seq":3,"timestamp":"2026-11-21T10:00:00.000Z","state":`+state+`}`)
	})
	for _, tc := range []struct {
		tool     string
		args     map[string]any
		wirePath string // "" when no path must be sent
		want     string
	}{
		{"debug_get_state_path", map[string]any{"path": "auth.user.role"}, `["auth","user","role"]`,
			`{"path":"auth.user.role","value":{"resolved":"[\"auth\",\"user\",\"role\"]"}}`},
		{"debug_get_state_path", map[string]any{"path": "routes.0.name"}, `["routes",0,"name"]`,
			`{"path":"routes.0.name","value":{"resolved":"[\"routes\",0,\"name\"]"}}`},
		{"debug_get_state_path", map[string]any{"path": `byId["42"].name`}, `["byId","42","name"]`,
			`{"path":"byId[\"42\"].name","value":{"resolved":"[\"byId\",\"42\",\"name\"]"}}`},
		{"debug_get_snapshot", map[string]any{"stream": "redux", "scope": "auth"}, `["auth"]`,
			`{"stream":"redux","seq":3,"timestamp":"2026-11-21T10:00:00.000Z","scope":"auth","state":{"resolved":"[\"auth\"]"}}`},
		{"debug_get_state_path", map[string]any{"path": ""}, "", `{"path":"","value":` + wholeTestState + `}`},
	} {
		res, isError := e.callTool(tc.tool, tc.args)
		if isError {
			t.Errorf("%s %v: %s", tc.tool, tc.args, res)
			continue
		}
		if diff := cmp.Diff(normaliseJSON(t, tc.want), normaliseJSON(t, string(res))); diff != "" {
			t.Errorf("%s %v (-want +got):\n%s", tc.tool, tc.args, diff)
		}
		reqs := app.take("snapshot.get")
		if len(reqs) != 1 {
			t.Fatalf("%s %v: the app got %d snapshot.get requests, want 1", tc.tool, tc.args, len(reqs))
		}
		if got := string(reqs[0].Params["path"]); got != tc.wirePath {
			t.Errorf("%s %v: the app got path %s, want %s", tc.tool, tc.args, got, tc.wirePath)
		}
	}
}

func TestPathNotPushedDownWhenNotOffered(t *testing.T) {
	e := startPathServer(t)
	app := startPathAdapter(t, e, []string{"state.dispatch"}, func(id, method string, params map[string]json.RawMessage) []byte {
		return pathTestResult(id, `{"seq":3,"timestamp":"2026-11-21T10:00:00.000Z","state":`+wholeTestState+`}`)
	})
	for path, want := range map[string]string{"auth.user.role": `"admin"`, "routes.0.name": `"Home"`, `byId["42"]`: `{"name":"x"}`} {
		res, isError := e.callTool("debug_get_state_path", map[string]any{"path": path})
		if isError || !strings.Contains(string(res), `"value":`+want) {
			t.Errorf("%s: got %s, want the value %s", path, res, want)
		}
		for _, r := range app.take("snapshot.get") {
			if _, ok := r.Params["path"]; ok {
				t.Errorf("%s: the app was sent a path it does not offer: %v", path, r.Params)
			}
		}
	}
}

func TestPathNotFoundFromApp(t *testing.T) {
	t.Parallel()
	manyKeys := make([]string, 150)
	for i := range manyKeys {
		manyKeys[i] = fmt.Sprintf("k%03d", 149-i)
	}
	many, _ := json.Marshal(manyKeys)
	for _, tc := range []struct {
		name     string
		tool     string
		args     map[string]any
		details  string // the app's PATH_NOT_FOUND details
		code     string
		want     map[string]any // the tool's details; nil: only the code is checked
		wantPath string         // the path the app was sent
	}{
		{
			name: "object", tool: "debug_get_state_path", args: map[string]any{"path": "users.byId.9999.email"},
			details: `{"resolvedPrefix":["users","byId"],"available":["1001","1000"]}`, code: codePathNotFound,
			want:     map[string]any{"path": "users.byId.9999.email", "resolvedPrefix": "users.byId", "available": []any{"1000", "1001"}},
			wantPath: `["users","byId",9999,"email"]`,
		},
		{
			name: "scope", tool: "debug_get_snapshot", args: map[string]any{"stream": "redux", "scope": "cart.coupon.code"},
			details: `{"resolvedPrefix":["cart","coupon"],"available":null}`, code: codeScopeNotFound,
			want:     map[string]any{"path": "cart.coupon.code", "resolvedPrefix": "cart.coupon", "available": []any{}},
			wantPath: `["cart","coupon","code"]`,
		},
		{
			name: "array", tool: "debug_get_state_path", args: map[string]any{"path": "routes.5.name"},
			details: `{"resolvedPrefix":["routes"],"available":{"length":2}}`, code: codePathNotFound,
			want:     map[string]any{"path": "routes.5.name", "resolvedPrefix": "routes", "available": map[string]any{"length": 2.0}},
			wantPath: `["routes",5,"name"]`,
		},
		{
			name: "a digit that named a key", tool: "debug_get_state_path", args: map[string]any{"path": "byId.42.nope"},
			details: `{"resolvedPrefix":["byId","42"],"available":["name"]}`, code: codePathNotFound,
			want:     map[string]any{"path": "byId.42.nope", "resolvedPrefix": `byId["42"]`, "available": []any{"name"}},
			wantPath: `["byId",42,"nope"]`,
		},
		{
			name: "at the root", tool: "debug_get_state_path", args: map[string]any{"path": "nope"},
			details: `{"resolvedPrefix":[],"available":["auth"]}`, code: codePathNotFound,
			want:     map[string]any{"path": "nope", "resolvedPrefix": "", "available": []any{"auth"}},
			wantPath: `["nope"]`,
		},
		{
			name: "many keys", tool: "debug_get_state_path", args: map[string]any{"path": "big.x"},
			details: `{"resolvedPrefix":["big"],"available":` + string(many) + `}`, code: codePathNotFound,
			wantPath: `["big","x"]`,
		},
		{
			name: "to a whole-state read", tool: "debug_get_state_path", args: map[string]any{"path": ""},
			details: `{"resolvedPrefix":[],"available":[]}`, code: codeAdapterError,
		},
		{
			name: "resolvedPrefix as a string", tool: "debug_get_state_path", args: map[string]any{"path": "a.b"},
			details: `{"resolvedPrefix":"a","available":[]}`, code: codeAdapterError, wantPath: `["a","b"]`,
		},
		{
			name: "resolvedPrefix as long as the path", tool: "debug_get_state_path", args: map[string]any{"path": "a.b"},
			details: `{"resolvedPrefix":["a","b"],"available":[]}`, code: codeAdapterError, wantPath: `["a","b"]`,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := startPathServer(t)
			app := startPathAdapter(t, e, []string{capSnapshotPath, capSnapshotKeys}, func(id, method string, params map[string]json.RawMessage) []byte {
				return pathTestError(id, codePathNotFound, tc.details)
			})
			res, isError := e.callTool(tc.tool, tc.args)
			if !isError {
				t.Fatalf("want %s, got %s", tc.code, res)
			}
			code, details, _ := decodeToolError(t, res)
			if code != tc.code {
				t.Fatalf("got %s, want %s", res, tc.code)
			}
			if tc.want != nil {
				if diff := cmp.Diff(tc.want, details); diff != "" {
					t.Errorf("details (-want +got):\n%s", diff)
				}
			}
			if tc.name == "many keys" {
				if got := details["available"].([]any); len(got) != maxAvailableKeys || got[0] != "k000" || details["availableTotal"] != 150.0 {
					t.Errorf("want the first %d of 150 keys in order and availableTotal 150: %v", maxAvailableKeys, details)
				}
			}
			reqs := app.take("snapshot.get")
			if len(reqs) != 1 || string(reqs[0].Params["path"]) != tc.wantPath {
				t.Errorf("the app got %v, want one snapshot.get of path %s", reqs, tc.wantPath)
			}
		})
	}
}

func TestOversizedValueOutlinedFromKeys(t *testing.T) {
	tooLarge := `{"bytes":5300000,"maxPayload":524288}`
	keysAnswer := `{"seq":9,"timestamp":"2026-11-21T10:00:00.000Z","type":"object","size":5300000,"total":4,"children":[` +
		`{"key":"ui","type":"object","size":900},{"key":"catalog","type":"object","size":5000000},` +
		`{"key":"42","type":"object","size":1200},{"index":3,"type":"array","size":298000,"length":1000}]}`
	for _, tc := range []struct {
		name        string
		caps        []string
		keys        func(id string) []byte
		path        string
		wantOutline []any // nil: the app's PAYLOAD_TOO_LARGE as it was, with no outline
		wantKeys    string
	}{
		{
			name: "whole state", caps: []string{capSnapshotPath, capSnapshotKeys},
			keys: func(id string) []byte { return pathTestResult(id, keysAnswer) },
			wantOutline: []any{
				map[string]any{"path": "catalog", "type": "object", "size": 5000000.0},
				map[string]any{"path": "3", "type": "array", "size": 298000.0},
				map[string]any{"path": `["42"]`, "type": "object", "size": 1200.0},
				map[string]any{"path": "ui", "type": "object", "size": 900.0},
			},
			wantKeys: `{"limit":30,"path":[],"stream":"redux"}`,
		},
		{
			name: "a path", caps: []string{capSnapshotPath, capSnapshotKeys}, path: "catalog.byId",
			keys: func(id string) []byte { return pathTestResult(id, keysAnswer) },
			wantOutline: []any{
				map[string]any{"path": "catalog.byId.catalog", "type": "object", "size": 5000000.0},
				map[string]any{"path": "catalog.byId.3", "type": "array", "size": 298000.0},
				map[string]any{"path": `catalog.byId["42"]`, "type": "object", "size": 1200.0},
				map[string]any{"path": "catalog.byId.ui", "type": "object", "size": 900.0},
			},
			wantKeys: `{"limit":30,"path":["catalog","byId"],"stream":"redux"}`,
		},
		{
			name: "keys not offered", caps: []string{capSnapshotPath},
			keys: func(id string) []byte { return pathTestResult(id, keysAnswer) },
		},
		{
			name: "keys failing", caps: []string{capSnapshotPath, capSnapshotKeys},
			keys:     func(id string) []byte { return pathTestError(id, "INTERNAL", `{}`) },
			wantKeys: `{"limit":30,"path":[],"stream":"redux"}`,
		},
		{
			name: "keys malformed", caps: []string{capSnapshotPath, capSnapshotKeys},
			keys: func(id string) []byte {
				return pathTestResult(id, `{"size":5,"children":[{"type":"object","size":1}]}`)
			},
			wantKeys: `{"limit":30,"path":[],"stream":"redux"}`,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := startPathServer(t)
			app := startPathAdapter(t, e, tc.caps, func(id, method string, params map[string]json.RawMessage) []byte {
				if method == "snapshot.keys" {
					return tc.keys(id)
				}
				return pathTestError(id, codePayloadTooLarge, tooLarge)
			})
			args := map[string]any{"stream": "redux"}
			if tc.path != "" {
				args["scope"] = tc.path
			}
			res, isError := e.callTool("debug_get_snapshot", args)
			if !isError {
				t.Fatalf("want PAYLOAD_TOO_LARGE, got %s", res)
			}
			code, details, suggestion := decodeToolError(t, res)
			if code != codePayloadTooLarge || suggestion == "" {
				t.Fatalf("want PAYLOAD_TOO_LARGE with a suggestion, got %s", res)
			}
			if tc.wantOutline == nil {
				if diff := cmp.Diff(map[string]any{"bytes": 5300000.0, "maxPayload": 524288.0}, details); diff != "" {
					t.Errorf("want the app's details as they were (-want +got):\n%s", diff)
				}
			} else {
				want := map[string]any{"size": 5300000.0, "limit": 524288.0, "path": tc.path, "outline": tc.wantOutline}
				if diff := cmp.Diff(want, details); diff != "" {
					t.Errorf("details (-want +got):\n%s", diff)
				}
			}
			keys := app.take("snapshot.keys")
			if tc.wantKeys == "" {
				if len(keys) != 0 {
					t.Errorf("snapshot.keys asked of an app that does not offer it: %v", keys)
				}
				return
			}
			if len(keys) != 1 {
				t.Fatalf("the app got %d snapshot.keys requests, want 1", len(keys))
			}
			got, _ := json.Marshal(keys[0].Params)
			if string(got) != tc.wantKeys {
				t.Errorf("snapshot.keys params %s, want %s", got, tc.wantKeys)
			}
		})
	}
}

// After the app has left, path reads are answered from the last whole
// snapshot the server kept, with the same misses an app would answer.
func TestPathReadsAfterTheAppLeft(t *testing.T) {
	e := startPathServer(t)
	app := startPathAdapter(t, e, []string{capSnapshotPath}, func(id, method string, params map[string]json.RawMessage) []byte {
		if _, ok := params["path"]; ok {
			return pathTestResult(id, `{"seq":3,"timestamp":"2026-11-21T10:00:00.000Z","state":"from the app"}`)
		}
		return pathTestResult(id, `{"seq":3,"timestamp":"2026-11-21T10:00:00.000Z","state":`+wholeTestState+`}`)
	})
	if res, isError := e.callTool("debug_get_snapshot", map[string]any{"stream": "redux"}); isError {
		t.Fatal(string(res))
	}
	app.close()
	e.waitHealth(func(h healthOut) bool { return !h.Connected })

	res, isError := e.callTool("debug_get_state_path", map[string]any{"path": "routes.0.name"})
	if isError || !strings.Contains(string(res), `"value":"Home"`) || !strings.Contains(string(res), `"live":false`) {
		t.Errorf("want Home from the kept snapshot, marked live: false; got %s", res)
	}
	res, isError = e.callTool("debug_get_state_path", map[string]any{"path": "auth.user.name"})
	if !isError {
		t.Fatalf("want PATH_NOT_FOUND, got %s", res)
	}
	code, details, _ := decodeToolError(t, res)
	want := map[string]any{"path": "auth.user.name", "resolvedPrefix": "auth.user", "available": []any{"role"}}
	if diff := cmp.Diff(want, details); code != codePathNotFound || diff != "" {
		t.Errorf("got %s %v, want PATH_NOT_FOUND (-want +got):\n%s", code, details, diff)
	}
}

// With default settings (MAX_PAYLOAD_SIZE 512 KB) and a 5 MB Redux state,
// the simulated app answers path reads and scoped snapshots, and a whole
// state read is refused with an outline whose paths narrow it.
func TestFiveMegabyteStateWithDefaultSettings(t *testing.T) {
	t.Parallel()
	// The generated state holds only decoded types (TestLargeReduxState):
	// it is what decoding its JSON gives, without a 5 MB decoding.
	decoded := largeReduxState(5<<20, 1)
	state := mustMarshalState(decoded)
	for _, withPaths := range []bool{true, false} {
		t.Run(fmt.Sprintf("paths offered %t", withPaths), func(t *testing.T) {
			// The default sizes, not the default time: reading 5 MB under
			// -race on a loaded two-core machine can take longer than the
			// 5 s an app is given, and no answer here is meant to time out.
			cfg := testConfig(t)
			cfg.RequestTimeout = time.Minute
			ts := startServer(t, cfg)
			ts.initialize()
			e := &e2e{testServer: ts, nextID: 100}
			e.app = newDemoApp(demoOptions{Seed: 7, WithoutPathRequests: !withPaths})
			e.app.setReduxStateDecoded(state, decoded)
			connectDemoApp(t, e, e.app)

			res, isError := e.callTool("debug_get_state_path", map[string]any{"path": `users.byId["1000"].email`})
			if !withPaths {
				// The whole state cannot cross the wire: nothing to narrow.
				if code, _, _ := decodeToolError(t, res); !isError || code != codePayloadTooLarge {
					t.Fatalf("without snapshot.path: got %s, want PAYLOAD_TOO_LARGE", res)
				}
				return
			}
			want, _ := resolvePath(decoded, mustParsePath(t, `users.byId["1000"].email`))
			if isError || !strings.Contains(string(res), fmt.Sprintf(`"value":%q`, want)) {
				t.Fatalf("path read: got %s, want the value %q", res, want)
			}
			res, isError = e.callTool("debug_get_snapshot", map[string]any{"stream": "redux", "scope": "cart.totals"})
			var scoped struct {
				Scope string
				State map[string]any
			}
			if err := json.Unmarshal(res, &scoped); isError || err != nil || scoped.Scope != "cart.totals" || scoped.State["currency"] != "EUR" {
				t.Fatalf("scoped snapshot: %s", res)
			}

			// Each outline narrows in one call: follow the largest child
			// until a value fits.
			scope := ""
			for range 6 {
				args := map[string]any{"stream": "redux"}
				if scope != "" {
					args["scope"] = scope
				}
				res, isError = toolText(e, "debug_get_snapshot", args)
				if !isError {
					break
				}
				code, details, _ := decodeToolError(t, res)
				outline, _ := details["outline"].([]any)
				if code != codePayloadTooLarge || details["path"] != scope || len(outline) == 0 {
					t.Fatalf("scope %q: want PAYLOAD_TOO_LARGE with an outline, got %s", scope, res)
				}
				scope = outline[0].(map[string]any)["path"].(string)
			}
			if isError {
				t.Fatalf("six narrowings did not reach a value that fits: %s", res)
			}
		})
	}
}

func mustParsePath(t *testing.T, path string) []pathSegment {
	t.Helper()
	segs, err := parsePath(path)
	if err != nil {
		t.Fatal(err)
	}
	return segs
}

// toolText calls a tool and returns its text item. Unlike callTool it does
// not compare the text with structuredContent, which the test client
// decodes into float64s: a number such as 301.70 would differ in spelling.
func toolText(e *e2e, name string, args map[string]any) (json.RawMessage, bool) {
	e.t.Helper()
	e.nextID++
	reply := e.call(e.nextID, "tools/call", map[string]any{"name": name, "arguments": args})
	var res struct {
		Content []struct{ Text string }
		IsError bool
	}
	raw, _ := json.Marshal(reply["result"])
	if err := json.Unmarshal(raw, &res); err != nil || len(res.Content) != 1 {
		e.t.Fatalf("%s: malformed tool result %v", name, reply)
	}
	return json.RawMessage(res.Content[0].Text), res.IsError
}

// PATH_NOT_FOUND is an answer to path requests only: to anything else it
// is a misbehaving app.
func TestPathNotFoundOnlyForPathRequests(t *testing.T) {
	e := startPathServer(t)
	startPathAdapter(t, e, []string{capSnapshotPath}, func(id, method string, params map[string]json.RawMessage) []byte {
		return pathTestError(id, codePathNotFound, `{"resolvedPrefix":[],"available":[]}`)
	})
	res, isError := e.callTool("debug_query_events", map[string]any{"stream": "redux"})
	if code, _, _ := decodeToolError(t, res); !isError || code != codeAdapterError {
		t.Errorf("events.query answered PATH_NOT_FOUND: got %s, want ADAPTER_ERROR", res)
	}
}

// An app that sends an oversized answer anyway has it dropped by the
// server (wire protocol §7); the outline still comes from snapshot.keys.
func TestOversizedFrameOutlinedFromKeys(t *testing.T) {
	cfg := testConfig(t)
	cfg.MaxPayloadSize = 64 << 10
	cfg.MaxResultBytes = 32 << 10
	ts := startServer(t, cfg)
	ts.initialize()
	e := &e2e{testServer: ts, nextID: 100}
	e.app = newDemoApp(demoOptions{Seed: 7, SendOversized: true})
	e.app.setReduxState(mustMarshalState(largeReduxState(256<<10, 1)))
	connectDemoApp(t, e, e.app)

	res, isError := e.callTool("debug_get_snapshot", map[string]any{"stream": "redux", "scope": "catalog"})
	code, details, _ := decodeToolError(t, res)
	outline, _ := details["outline"].([]any)
	if !isError || code != codePayloadTooLarge || details["path"] != "catalog" || len(outline) == 0 ||
		details["limit"] != float64(64<<10) || details["size"].(float64) <= 64<<10 {
		t.Fatalf("want PAYLOAD_TOO_LARGE for catalog with an outline, got %s", res)
	}
	if first := outline[0].(map[string]any)["path"]; first != "catalog.byId" {
		t.Errorf("largest child of catalog: %v, want catalog.byId", first)
	}
}

// The simulated app's path answers agree with the server's own slicing of
// the whole state, hits and misses alike: an agent gets the same answer
// whether or not its app offers snapshot.path.
func TestPushedAnswersMatchLocalSlicing(t *testing.T) {
	state := mustMarshalState(largeReduxState(64<<10, 3))
	app := newDemoTestApp(1, 10)
	app.setReduxState(state)
	var paths [][]pathSegment
	var walk func(v any, prefix []pathSegment, depth int)
	walk = func(v any, prefix []pathSegment, depth int) {
		paths = append(paths, prefix,
			append(slices.Clip(prefix), pathSegment{Key: "nope"}),
			append(slices.Clip(prefix), pathSegment{Key: "99999"}))
		if depth == 4 {
			return
		}
		switch v := v.(type) {
		case map[string]any:
			keys := slices.Sorted(maps.Keys(v))
			for _, k := range keys[:min(len(keys), 4)] {
				walk(v[k], append(slices.Clip(prefix), pathSegment{Key: k, Quoted: isCanonicalDecimal(k)}), depth+1)
			}
		case []any:
			for i := range min(len(v), 3) {
				walk(v[i], append(slices.Clip(prefix), pathSegment{Key: strconv.Itoa(i)}), depth+1)
			}
		}
	}
	walk(decodeStateJSON(t, string(state)), nil, 0)

	for _, segs := range paths {
		path := formatPath(segs)
		wire, _ := json.Marshal(wirePath(segs))
		if len(segs) == 0 {
			wire = []byte(`[]`)
		}
		local, miss, err := resolveRaw(state, segs)
		if err != nil {
			t.Fatal(err)
		}
		got, werr := demoCall(t, app, "snapshot.get", `{"stream":"redux","path":`+string(wire)+`}`)
		switch {
		case miss == nil && werr == nil:
			var answer struct{ State json.RawMessage }
			if err := json.Unmarshal(got, &answer); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(normaliseJSON(t, string(local)), normaliseJSON(t, string(answer.State))); diff != "" {
				t.Errorf("%s: pushed answer differs from the local slice (-local +pushed):\n%s", path, diff)
			}
		case miss != nil && werr != nil && werr.Code == codePathNotFound:
			details, _ := json.Marshal(werr.Details)
			pushed, err := pathMissFromAnswer(json.RawMessage(details), segs)
			if err != nil {
				t.Fatalf("%s: %v in %s", path, err, details)
			}
			if diff := cmp.Diff(miss, pushed); diff != "" {
				t.Errorf("%s: pushed miss differs from the local one (-local +pushed):\n%s", path, diff)
			}
		default:
			t.Errorf("%s: local miss %v, pushed error %v", path, miss, werr)
		}
	}
	if len(paths) < 100 {
		t.Errorf("only %d paths compared", len(paths))
	}
}

// A value the app resolved itself is redacted as a slice of the whole
// state would be: its path names the sensitive key, its text no longer.
func TestPushedValuesRedacted(t *testing.T) {
	e := startPathServer(t)
	startPathAdapter(t, e, []string{capSnapshotPath}, func(id, method string, params map[string]json.RawMessage) []byte {
		return pathTestResult(id, `{"seq":3,"timestamp":"2026-11-21T10:00:00.000Z","state":"hunter2"}`)
	})
	res, isError := e.callTool("debug_get_state_path", map[string]any{"path": "auth.password"})
	if isError || strings.Contains(string(res), "hunter2") {
		t.Errorf("a pushed-down read of auth.password: %s, want it redacted", res)
	}
}
