package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coder/websocket"
)

// checkTestOptions are check-adapter's settings for tests: any free port,
// and timeouts that no healthy exchange comes near, even on a loaded
// machine. A test that wants a timeout sets a short one, or gives up a
// request it dropped (checkGiveUps).
func checkTestOptions() checkOptions {
	return checkOptions{
		Host:             "127.0.0.1",
		MaxPayload:       524288,
		SmallPayload:     checkSmallPayload,
		RequestTimeout:   linkWaitLimit,
		HandshakeTimeout: linkWaitLimit,
		WaitTimeout:      linkWaitLimit,
		ReconnectTimeout: linkWaitLimit,
		PongTimeout:      linkWaitLimit,
		JSON:             true,
		AllowActions:     true,
	}
}

type checkTestReport struct {
	Passed bool          `json:"passed"`
	Checks []checkResult `json:"checks"`
}

// runCheckTest runs the kit; start is given the kit's address and starts
// the adapter under test, whose goroutines must end with ctx. app (if not
// nil) pushes three events once connected, so that pushes are checked.
func runCheckTest(t *testing.T, opts checkOptions, app *demoApp, start func(ctx context.Context, addr string)) (checkTestReport, string, error) {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	var wg sync.WaitGroup
	defer wg.Wait()
	defer cancel()
	opts.Listening = func(addr string) { wg.Go(func() { start(ctx, addr) }) }
	if app != nil {
		opts.Connected = func() {
			// The app takes its connection as live once it has read the ack.
			deadline := time.Now().Add(linkWaitLimit)
			for time.Now().Before(deadline) {
				app.mu.Lock()
				live := app.link != nil
				app.mu.Unlock()
				if live {
					if err := app.pushEvents(ctx, 3); err != nil {
						t.Errorf("pushEvents: %v", err)
					}
					return
				}
				time.Sleep(time.Millisecond)
			}
			t.Error("the demo app did not take its connection as live")
		}
	}
	var stdout, stderr bytes.Buffer
	err := runCheckAdapter(ctx, opts, &stdout, &stderr)
	var report checkTestReport
	if stdout.Len() > 0 {
		if jerr := json.Unmarshal(stdout.Bytes(), &report); jerr != nil {
			t.Fatalf("the report is not JSON: %v\n%s", jerr, stdout.String())
		}
	}
	return report, stderr.String(), err
}

func TestCheckAdapterPassesTheDemo(t *testing.T) {
	t.Parallel()
	app := newDemoApp(demoOptions{Seed: 7})
	app.untilCheckoutFailed(500)
	report, progress, err := runCheckTest(t, checkTestOptions(), app, func(ctx context.Context, addr string) {
		app.run(ctx, "ws://"+addr+"/", 0, nil)
	})
	if err != nil {
		t.Fatalf("check-adapter: %v\nprogress:\n%s", err, progress)
	}
	if !report.Passed || len(report.Checks) != len(checkCases) {
		t.Errorf("passed %v with %d checks, want true with %d", report.Passed, len(report.Checks), len(checkCases))
	}
	// The demo pushes no stream lists: that check has nothing to judge.
	for _, r := range report.Checks {
		if r.Result != checkPass && !(r.Name == "push.streams" && r.Result == checkSkipped) {
			t.Errorf("%s: %s (%s%s; sent %s)", r.Name, r.Result, r.Note, r.Got, r.Sent)
		}
	}
	if !strings.Contains(progress, "[1/") || !strings.Contains(progress, "waiting up to") {
		t.Errorf("progress on stderr lacks the count or what it waits for:\n%s", progress)
	}
}

// checkRelayConn is one adapter connection through checkRelay: the
// requests the kit has sent on it that are not yet answered or cancelled.
type checkRelayConn struct {
	n       int // 1 for the first connection
	giveUps *checkGiveUps
	frames  int // frames from the app so far
	passed  int // frames passed on to the kit so far
	mu      sync.Mutex
	pending []string // ids, oldest first
	methods map[string]string
	asked   map[string]string // request frames by id
}

// checkGiveUps end the kit's waits for answers the relay dropped
// (checkOptions.GiveUp), by request id, on the connection the kit talks
// to: the wait ends as the request timeout passing would, with no clock.
type checkGiveUps struct {
	mu sync.Mutex
	ch map[string]chan int
}

// of is the channel that gives up the wait for id.
func (g *checkGiveUps) of(id string) <-chan int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.ofLocked(id)
}

func (g *checkGiveUps) ofLocked(id string) chan int {
	if g.ch == nil {
		g.ch = map[string]chan int{}
	}
	c, ok := g.ch[id]
	if !ok {
		c = make(chan int, 1)
		g.ch[id] = c
	}
	return c
}

// giveUp ends the kit's wait for id's answer, now or once it starts, after
// the kit has handled the first frames the relay passed it.
func (g *checkGiveUps) giveUp(id string, frames int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	select {
	case g.ofLocked(id) <- frames:
	default: // given up already
	}
}

// reset forgets every id: a new connection numbers its requests afresh.
func (g *checkGiveUps) reset() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.ch = nil
}

// checkRelay stands between the demo app and the kit, passing frames on
// after its hooks have had their way with them: each hook returns the frame
// to pass on, or nil to drop it.
type checkRelay struct {
	kitURL          string
	toApp, toKit    func(rc *checkRelayConn, frame []byte) []byte
	refuseReconnect bool
	origin          string // sent to the kit when not ""
	giveUps         checkGiveUps
	conns           atomic.Int32
	wg              sync.WaitGroup
}

func (r *checkRelay) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	app, err := websocket.Accept(w, req, &websocket.AcceptOptions{InsecureSkipVerify: true})
	if err != nil {
		return
	}
	app.SetReadLimit(-1)
	rc := &checkRelayConn{n: int(r.conns.Add(1)), giveUps: &r.giveUps, methods: map[string]string{}, asked: map[string]string{}}
	if rc.n > 1 {
		r.giveUps.reset()
	}
	if r.refuseReconnect && rc.n > 1 {
		app.Close(websocket.StatusTryAgainLater, "relay: no second connection")
		return
	}
	dial := &websocket.DialOptions{HTTPHeader: http.Header{}}
	if r.origin != "" {
		dial.HTTPHeader.Set("Origin", r.origin)
	}
	kit, _, err := websocket.Dial(req.Context(), r.kitURL, dial)
	if err != nil {
		app.Close(websocket.StatusTryAgainLater, "relay: kit unreachable")
		return
	}
	kit.SetReadLimit(-1)
	var wg sync.WaitGroup
	wg.Go(func() { r.pump(rc, app, kit, r.toKit, false) })
	r.pump(rc, kit, app, r.toApp, true)
	wg.Wait()
}

// pump copies frames from src to dst until src ends, then closes dst with
// src's close code, so that a close by the kit reaches the app as sent.
func (r *checkRelay) pump(rc *checkRelayConn, src, dst *websocket.Conn, hook func(*checkRelayConn, []byte) []byte, fromKit bool) {
	ctx := context.Background()
	for {
		typ, data, err := src.Read(ctx)
		if err != nil {
			code := websocket.CloseStatus(err)
			if code == -1 {
				code = websocket.StatusNormalClosure
			}
			dst.Close(code, "relay")
			return
		}
		if typ == websocket.MessageText {
			if fromKit {
				rc.track(data)
			} else {
				rc.mu.Lock()
				rc.frames++
				rc.mu.Unlock()
			}
			if hook != nil {
				data = hook(rc, data)
			}
			if !fromKit {
				rc.answered(data)
			}
			if data == nil {
				continue
			}
		}
		if err := dst.Write(ctx, typ, data); err != nil {
			src.CloseNow()
			return
		}
		if !fromKit {
			rc.mu.Lock()
			rc.passed++
			rc.mu.Unlock()
		}
	}
}

func (rc *checkRelayConn) track(frame []byte) {
	var m struct{ Type, ID, Method string }
	if json.Unmarshal(frame, &m) != nil {
		return
	}
	rc.mu.Lock()
	defer rc.mu.Unlock()
	switch m.Type {
	case "request":
		rc.pending = append(rc.pending, m.ID)
		rc.methods[m.ID] = m.Method
		rc.asked[m.ID] = string(frame)
	case "cancel":
		rc.forget(m.ID)
	}
}

func (rc *checkRelayConn) answered(frame []byte) {
	var m struct{ Type, ID string }
	if frame != nil && json.Unmarshal(frame, &m) == nil && m.Type == "response" {
		rc.mu.Lock()
		rc.forget(m.ID)
		rc.mu.Unlock()
	}
}

func (rc *checkRelayConn) forget(id string) {
	for i, p := range rc.pending {
		if p == id {
			rc.pending = append(rc.pending[:i], rc.pending[i+1:]...)
			return
		}
	}
}

// method is the method of the request a response answers.
func (rc *checkRelayConn) method(frame []byte) string {
	var m struct{ Type, ID string }
	if json.Unmarshal(frame, &m) != nil || m.Type != "response" {
		return ""
	}
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return rc.methods[m.ID]
}

// burstOf reports whether request id is the one sent n-1 requests before
// the request asking for 8 events (the kit's ids count up: "ck-N").
func (rc *checkRelayConn) burstOf(id string, n int) bool {
	for other, req := range rc.asked {
		if strings.Contains(req, `"limit":8,`) {
			var a, b int
			if _, err := fmt.Sscanf(id, "ck-%d", &a); err != nil {
				return false
			}
			if _, err := fmt.Sscanf(other, "ck-%d", &b); err != nil {
				return false
			}
			return b-a == 8-n
		}
	}
	return false
}

// idOf is the id of a response frame.
func (rc *checkRelayConn) idOf(frame []byte) string {
	var m struct{ ID string }
	_ = json.Unmarshal(frame, &m)
	return m.ID
}

// editJSON decodes frame, lets edit change it, and encodes it again.
func editJSON(frame []byte, edit func(m map[string]any)) []byte {
	var m map[string]any
	dec := json.NewDecoder(bytes.NewReader(frame))
	dec.UseNumber()
	if dec.Decode(&m) != nil {
		return frame
	}
	edit(m)
	out, _ := json.Marshal(m)
	return out
}

func asMap(v any) map[string]any { m, _ := v.(map[string]any); return m }

func TestCheckAdapterNamesEachPlantedDefect(t *testing.T) {
	t.Parallel()
	isRequest := func(frame []byte, method string) bool {
		var m struct{ Type, Method string }
		return json.Unmarshal(frame, &m) == nil && m.Type == "request" && m.Method == method
	}
	var emptyAnswered atomic.Bool // the first events.query with limit 1 gets an impossible empty answer
	tests := []struct {
		name     string
		check    string // the check that must fail, alone
		want     string // in what it got
		advisory bool   // the check is a SHOULD: the run still passes
		origin   string
		app      demoOptions
		opts     func(o *checkOptions)
		toApp    func(rc *checkRelayConn, frame []byte) []byte
		toKit    func(rc *checkRelayConn, frame []byte) []byte
		refuse   bool
	}{{
		name: "handshake without adapterVersion", check: "handshake", want: "adapterVersion: required",
		toKit: func(rc *checkRelayConn, f []byte) []byte {
			if rc.frames == 1 {
				return editJSON(f, func(m map[string]any) { delete(m, "adapterVersion") })
			}
			return f
		},
	}, {
		name: "no handshake at all", check: "handshake", want: "no handshake within",
		opts: func(o *checkOptions) { o.HandshakeTimeout = 100 * time.Millisecond },
		toKit: func(rc *checkRelayConn, f []byte) []byte {
			if rc.frames == 1 {
				return nil
			}
			return f
		},
	}, {
		name: "streams.list leaves out a stream", check: "streams.list", want: `no stream "mmkv"`,
		toKit: func(rc *checkRelayConn, f []byte) []byte {
			if rc.method(f) != "streams.list" {
				return f
			}
			return editJSON(f, func(m map[string]any) {
				res := asMap(m["result"])
				streams, _ := res["streams"].([]any)
				var kept []any
				for _, s := range streams {
					if asMap(s)["name"] != "mmkv" {
						kept = append(kept, s)
					}
				}
				res["streams"] = kept
			})
		},
	}, {
		name: "events.query seq goes back", check: "events.query", want: "seq goes back",
		toKit: func(rc *checkRelayConn, f []byte) []byte {
			if rc.method(f) != "events.query" {
				return f
			}
			return editJSON(f, func(m map[string]any) {
				res := asMap(m["result"])
				if events, _ := res["events"].([]any); len(events) >= 3 {
					n := len(events)
					events[n-1], events[n-2] = events[n-2], events[n-1]
				}
			})
		},
	}, {
		name: "event_type ignored", check: "events.query.event_type", want: "an event of type",
		toApp: func(rc *checkRelayConn, f []byte) []byte {
			if !isRequest(f, "events.query") {
				return f
			}
			return editJSON(f, func(m map[string]any) { delete(asMap(m["params"]), "event_type") })
		},
	}, {
		name: "snapshot.path answers the whole state", check: "snapshot.path", want: "the whole state",
		toApp: func(rc *checkRelayConn, f []byte) []byte {
			if !isRequest(f, "snapshot.get") {
				return f
			}
			return editJSON(f, func(m map[string]any) { delete(asMap(m["params"]), "path") })
		},
	}, {
		name: "PATH_NOT_FOUND without details", check: "snapshot.path", want: "without details.resolvedPrefix",
		toKit: func(rc *checkRelayConn, f []byte) []byte {
			if rc.method(f) != "snapshot.get" {
				return f
			}
			return editJSON(f, func(m map[string]any) {
				if e := asMap(m["error"]); e != nil {
					delete(e, "details")
				}
			})
		},
	}, {
		name: "snapshot.keys smallest first", check: "snapshot.keys", want: "not largest first",
		toKit: func(rc *checkRelayConn, f []byte) []byte {
			if rc.method(f) != "snapshot.keys" {
				return f
			}
			return editJSON(f, func(m map[string]any) {
				res := asMap(m["result"])
				children, _ := res["children"].([]any)
				for i, j := 0, len(children)-1; i < j; i, j = i+1, j-1 {
					children[i], children[j] = children[j], children[i]
				}
			})
		},
	}, {
		name: "an unknown method never answered", check: "unknown-method", want: "no response within",
		toApp: func(rc *checkRelayConn, f []byte) []byte {
			if isRequest(f, "check-adapter.noSuchMethod") {
				rc.giveUps.giveUp(rc.idOf(f), 0)
				return nil
			}
			return f
		},
	}, {
		// response.id alone asks for 8 events, last of its 8 requests in flight.
		// The request is given up once the kit has handled the answer under
		// the wrong id, the next frame passed on: else the frames check
		// would report that answer as well.
		name: "answers under the id of another request in flight", check: "response.id", want: "events.query limit 8: no response within",
		toKit: func(rc *checkRelayConn, f []byte) []byte {
			rc.mu.Lock()
			defer rc.mu.Unlock()
			var first, eighth string
			for id, req := range rc.asked {
				switch {
				case strings.Contains(req, `"limit":1,`) && rc.burstOf(id, 1):
					first = id
				case strings.Contains(req, `"limit":8,`):
					eighth = id
				}
			}
			if eighth == "" || rc.idOf(f) != eighth {
				return f
			}
			rc.giveUps.giveUp(eighth, rc.passed+1)
			return editJSON(f, func(m map[string]any) { m["id"] = first })
		},
	}, {
		name: "a request with an unknown member is dropped", check: "forward-compat", want: "no response within",
		toApp: func(rc *checkRelayConn, f []byte) []byte {
			if bytes.Contains(f, []byte(`"check":{`)) {
				rc.giveUps.giveUp(rc.idOf(f), 0)
				return nil
			}
			return f
		},
	}, {
		name: "pushed seq goes back", check: "push.event", want: "pushed seq 1 after seq 1",
		toKit: func(rc *checkRelayConn, f []byte) []byte {
			return editJSON(f, func(m map[string]any) {
				if m["type"] == "event" {
					asMap(m["event"])["seq"] = 1
				}
			})
		},
	}, {
		// Found by the kit in a first-try adapter written in JavaScript.
		name: "hasMore false after since_seq though newer events exist", check: "events.query.since_seq", want: "hasMore false",
		toKit: func(rc *checkRelayConn, f []byte) []byte {
			rc.mu.Lock()
			asked := rc.asked[rc.idOf(f)]
			rc.mu.Unlock()
			if rc.method(f) != "events.query" || !strings.Contains(asked, "since_seq") {
				return f
			}
			return editJSON(f, func(m map[string]any) {
				if res := asMap(m["result"]); res != nil {
					res["hasMore"] = false
				}
			})
		},
	}, {
		// An answer like this once made the kit index an empty events list.
		name: "no events, hasMore, and latestSeq below oldestSeq", check: "events.query.limit", want: "hasMore true",
		toKit: func(rc *checkRelayConn, f []byte) []byte {
			rc.mu.Lock()
			asked := rc.asked[rc.idOf(f)]
			rc.mu.Unlock()
			if rc.method(f) != "events.query" || !strings.Contains(asked, `"limit":1,`) || strings.Contains(asked, "since_seq") ||
				!emptyAnswered.CompareAndSwap(false, true) {
				return f
			}
			return editJSON(f, func(m map[string]any) {
				m["result"] = map[string]any{"events": []any{}, "hasMore": true, "oldestSeq": 5, "latestSeq": 3}
			})
		},
	}, {
		name: "an oversized answer instead of PAYLOAD_TOO_LARGE", check: "max-payload", want: "over maxPayload 1024",
		app: demoOptions{SendOversized: true},
	}, {
		name: "no reconnect", check: "liveness.reconnect", want: "no adapter connected within",
		opts:   func(o *checkOptions) { o.ReconnectTimeout = 200 * time.Millisecond },
		refuse: true,
	}, {
		name: "a new sessionId on reconnect", check: "handshake.session-id", want: "the first handshake's was",
		toKit: func(rc *checkRelayConn, f []byte) []byte {
			if rc.n == 2 && rc.frames == 1 {
				return editJSON(f, func(m map[string]any) { m["sessionId"] = "another-launch" })
			}
			return f
		},
	}, {
		name: "an Origin naming another port", check: "upgrade", want: "does not match Host",
		origin: "http://127.0.0.1:1",
	}, {
		name: "a frame that is not JSON", check: "frames", want: "not a JSON object",
		toKit: func(rc *checkRelayConn, f []byte) []byte {
			if bytes.HasPrefix(f, []byte(`{"type":"event"`)) && rc.frames == 3 {
				return []byte(`{"type":"event",`)
			}
			return f
		},
	}, {
		name: "a capability docs/protocol.md does not define", check: "handshake.capabilities", want: `capability "teleport"`, advisory: true,
		toKit: func(rc *checkRelayConn, f []byte) []byte {
			if rc.frames == 1 {
				return editJSON(f, func(m map[string]any) { m["capabilities"] = append(m["capabilities"].([]any), "teleport") })
			}
			return f
		},
	}, {
		name: "a limit over 200 answered", check: "events.query.params", want: "not error INVALID_PARAMS", advisory: true,
		toKit: func(rc *checkRelayConn, f []byte) []byte {
			if rc.method(f) != "events.query" || !bytes.Contains(f, []byte("INVALID_PARAMS")) {
				return f
			}
			return editJSON(f, func(m map[string]any) {
				delete(m, "error")
				m["result"] = map[string]any{"events": []any{}, "hasMore": false, "oldestSeq": 0, "latestSeq": 0}
			})
		},
	}, {
		name: "snapshot.get with seq answers another state", check: "snapshot.get", want: "a state different",
		toKit: func(rc *checkRelayConn, f []byte) []byte {
			if rc.method(f) != "snapshot.get" {
				return f
			}
			rc.mu.Lock()
			asked := rc.asked[rc.idOf(f)]
			rc.mu.Unlock()
			if !strings.Contains(asked, `"seq"`) || strings.Contains(asked, `"path"`) {
				return f
			}
			return editJSON(f, func(m map[string]any) {
				if res := asMap(m["result"]); res != nil {
					res["state"] = map[string]any{"other": true}
				}
			})
		},
	}, {
		name: "a streams push with a bad stream name", check: "push.streams", want: "must match",
		toKit: func(rc *checkRelayConn, f []byte) []byte {
			if bytes.HasPrefix(f, []byte(`{"type":"event"`)) && rc.frames == 3 {
				return []byte(`{"type":"streams","streams":[{"name":"Bad Name","active":true}]}`)
			}
			return f
		},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			opts := checkTestOptions()
			if tt.opts != nil {
				tt.opts(&opts)
			}
			appOpts := tt.app
			appOpts.Seed = 11
			app := newDemoApp(appOpts)
			app.untilCheckoutFailed(500)
			relay := &checkRelay{toApp: tt.toApp, toKit: tt.toKit, refuseReconnect: tt.refuse, origin: tt.origin}
			opts.GiveUp = relay.giveUps.of
			report, progress, err := runCheckTest(t, opts, app, func(ctx context.Context, addr string) {
				relay.kitURL = "ws://" + addr + "/"
				srv := httptest.NewServer(relay)
				defer srv.Close()
				app.run(ctx, "ws"+strings.TrimPrefix(srv.URL, "http")+"/", 0, nil)
			})
			if tt.advisory && err != nil {
				t.Fatalf("check-adapter returned %v for a SHOULD not met, want success\nprogress:\n%s", err, progress)
			}
			if !tt.advisory && !errors.Is(err, errChecksFailed) {
				t.Fatalf("check-adapter returned %v, want errChecksFailed\nprogress:\n%s", err, progress)
			}
			found := false
			for _, r := range report.Checks {
				switch {
				case r.Name == tt.check:
					found = true
					if r.Result != checkFail || !strings.Contains(r.Got, tt.want) {
						t.Errorf("%s: %s, got %q; want a failure naming %q", r.Name, r.Result, r.Got, tt.want)
					}
					if r.Sent == "" || r.Requires == "" {
						t.Errorf("%s: the failure does not say what was sent (%q) and what is required (%q)", r.Name, r.Sent, r.Requires)
					}
				case r.Result == checkFail:
					t.Errorf("%s failed too: sent %s, got %s", r.Name, r.Sent, r.Got)
				}
			}
			if !found {
				t.Errorf("no result for %s", tt.check)
			}
		})
	}
}

// TestCheckAdapterAgainstDemoAdapterOnly runs the kit against the program
// started as `devtools-mcp -demo-adapter-only`, as .ci/run and a user do.
func TestCheckAdapterAgainstDemoAdapterOnly(t *testing.T) {
	t.Parallel()
	opts := checkTestOptions()
	opts.AllowActions = false
	report, progress, err := runCheckTest(t, opts, nil, func(ctx context.Context, addr string) {
		_, port, _ := strings.Cut(addr, ":")
		var stderr bytes.Buffer
		if err := run(ctx, []string{"-demo-adapter-only", "-ws-port", port, "-log-level", "error"}, strings.NewReader(""), &stderr, &stderr); err != nil {
			t.Errorf("-demo-adapter-only: %v\n%s", err, stderr.String())
		}
	})
	if err != nil || !report.Passed {
		t.Fatalf("check-adapter: %v, passed %v\nprogress:\n%s", err, report.Passed, progress)
	}
	for _, r := range report.Checks {
		if r.Result == checkFail || r.Result == checkNotRun {
			t.Errorf("%s: %s (%s)", r.Name, r.Result, r.Got)
		}
	}
}
