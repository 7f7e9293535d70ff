package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// fakeSource is where a bundle position maps, in Metro's terms: an
// absolute file, a 1-based line, a 0-based column.
type fakeSource struct {
	file         string
	line, column int
	method       string
	collapse     bool
}

type fakeBundlePos struct{ line, column int }

// fakeMetro implements Metro's /symbolicate and /status contract
// (metro.md §1): 0-based columns, other frame properties echoed, collapse,
// 400 for a bad frame, statuses to answer first, answers held back.
type fakeMetro struct {
	t      *testing.T
	srv    *httptest.Server
	root   string
	header string // the /status header naming root; "" serves no /status

	mu       sync.Mutex
	sources  map[fakeBundlePos]fakeSource
	statuses []int         // answered, in order, before any mapping
	hold     chan struct{} // when set, /symbolicate waits for it to close
	posts    [][]map[string]any
	statusN  int
	answer   string // when set, the raw body of every 200
	down     bool   // the transport fails as for a Metro not running
	redirect string // when set, /symbolicate redirects there
}

const fakeRoot = "/Users/ana/shop"

func startFakeMetro(t *testing.T) *fakeMetro {
	t.Helper()
	fm := &fakeMetro{t: t, root: fakeRoot, header: "X-React-Native-Project-Root", sources: map[fakeBundlePos]fakeSource{
		{48211, 16}: {fakeRoot + "/src/CartButton.tsx", 42, 8, "handleAdd", false},
		{48300, 4}:  {fakeRoot + "/node_modules/react-native/Libraries/Pressability/Pressability.js", 652, 4, "_performTransitionSideEffects", true},
		{48400, 0}:  {fakeRoot + "/src/App.tsx", 7, 0, "", false},
	}}
	fm.srv = httptest.NewServer(http.HandlerFunc(fm.serve))
	t.Cleanup(fm.srv.Close)
	return fm
}

func (fm *fakeMetro) serve(w http.ResponseWriter, r *http.Request) {
	switch r.URL.Path {
	case "/status":
		fm.mu.Lock()
		fm.statusN++
		root, header := fm.root, fm.header
		fm.mu.Unlock()
		if header == "" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set(header, root)
		io.WriteString(w, "packager-status:running")
	case "/symbolicate":
		if fm.redirect != "" {
			http.Redirect(w, r, fm.redirect, http.StatusTemporaryRedirect)
			return
		}
		fm.symbolicate(w, r)
	default:
		http.NotFound(w, r)
	}
}

func (fm *fakeMetro) symbolicate(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Stack []map[string]any `json:"stack"`
	}
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil || body.Stack == nil {
		w.WriteHeader(http.StatusBadRequest)
		fmt.Fprintf(w, `{"error":"bad body"}`)
		return
	}
	fm.mu.Lock()
	fm.posts = append(fm.posts, body.Stack)
	hold := fm.hold
	var status int
	if len(fm.statuses) > 0 {
		status, fm.statuses = fm.statuses[0], fm.statuses[1:]
	}
	answer := fm.answer
	fm.mu.Unlock()
	if hold != nil {
		<-hold
	}
	for i, f := range body.Stack {
		_, fileOK := f["file"].(string)
		_, lineOK := f["lineNumber"].(float64)
		_, colOK := f["column"].(float64)
		name, nameOK := f["methodName"]
		if _, isString := name.(string); nameOK && name != nil && !isString || !fileOK || !lineOK || !colOK {
			w.WriteHeader(http.StatusBadRequest)
			fmt.Fprintf(w, `{"error":"frame %d is not a valid frame"}`, i)
			return
		}
	}
	if status != 0 {
		w.WriteHeader(status)
		fmt.Fprintf(w, `{"error":"Unable to resolve module ./gone"}`)
		return
	}
	if answer != "" {
		io.WriteString(w, answer)
		return
	}
	out := make([]map[string]any, len(body.Stack))
	for i, f := range body.Stack {
		out[i] = f
		if !strings.HasPrefix(f["file"].(string), "http") {
			continue
		}
		fm.mu.Lock()
		src, ok := fm.sources[fakeBundlePos{int(f["lineNumber"].(float64)), int(f["column"].(float64))}]
		fm.mu.Unlock()
		if !ok {
			continue
		}
		g := map[string]any{}
		for k, v := range f {
			g[k] = v
		}
		g["file"], g["lineNumber"], g["column"], g["collapse"] = src.file, src.line, src.column, src.collapse
		if src.method != "" {
			g["methodName"] = src.method
		}
		out[i] = g
	}
	json.NewEncoder(w).Encode(map[string]any{"stack": out, "codeFrame": map[string]any{
		"content": "\x1b[31m> 42 | throw new Error()\x1b[39m", "location": map[string]any{"row": 42, "column": 8}, "fileName": fakeRoot + "/src/CartButton.tsx"}})
}

func (fm *fakeMetro) postCount() int {
	fm.mu.Lock()
	defer fm.mu.Unlock()
	return len(fm.posts)
}

// RoundTrip fails as a Metro that is not running does, or passes on.
func (fm *fakeMetro) RoundTrip(r *http.Request) (*http.Response, error) {
	fm.mu.Lock()
	down := fm.down
	fm.mu.Unlock()
	if down {
		return nil, errors.New("connect: connection refused")
	}
	return http.DefaultTransport.RoundTrip(r)
}

// testClock is a clock tests move by hand.
type testClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *testClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *testClock) add(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

// newTestSymbolicator is a client of fm with a hand-moved clock and a
// wait generous enough for a loaded machine; tests of the wait set their own.
func newTestSymbolicator(t *testing.T, fm *fakeMetro) (*symbolicator, *testClock) {
	t.Helper()
	m := newSymbolicator(fm.srv.URL)
	m.client = &http.Client{Transport: fm}
	clock := &testClock{now: time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)}
	m.now = clock.Now
	m.wait = 30 * time.Second
	m.port = "8081" // Metro's port as the device sees it (deviceBundle), not the test's
	t.Cleanup(m.close)
	return m, clock
}

// The frames of a device's stack name the device's view of Metro (here
// the Android emulator's 10.0.2.2), which is never dialled.
const deviceBundle = "http://10.0.2.2:8081/index.bundle?platform=android&dev=true&minify=false"

func testStack() jsStack { return testStackAt(deviceBundle) }

// testStackAt is a Hermes stack in bundle: one frame to map, one to
// collapse, one Metro cannot map, and two it is not asked about.
func testStackAt(bundle string) jsStack {
	return parseJSStack("Error: boom\n" +
		"    at onPress (" + bundle + ":48211:17)\n" +
		"    at _performTransitionSideEffects (" + bundle + ":48300:5)\n" +
		"    at forEach (native)\n" +
		"    at unknown (" + bundle + ":9:9)\n" +
		"    at anonymous (address at index.android.bundle:1:902133)")
}

// bundleOf is the bundle URL of fm as a device on the same port sees it.
func (fm *fakeMetro) bundleOf() string {
	return strings.Replace(deviceBundle, "10.0.2.2:8081", strings.TrimPrefix(fm.srv.URL, "http://"), 1)
}

func TestSymbolicateMapsFrames(t *testing.T) {
	fm := startFakeMetro(t)
	m, _ := newTestSymbolicator(t, fm)
	got, err := m.mapStacks(t.Context(), []jsStack{testStack()})
	if err != nil {
		t.Fatal(err)
	}
	want := [][]mappedFrame{{
		{jsFrame: jsFrame{Method: "handleAdd", File: "src/CartButton.tsx", Line: 42, Column: 9, Kind: framePath}, Mapped: true},
		{jsFrame: jsFrame{Method: "_performTransitionSideEffects", File: "node_modules/react-native/Libraries/Pressability/Pressability.js", Line: 652, Column: 5, Kind: framePath}, Collapse: true, Mapped: true},
		{jsFrame: jsFrame{Method: "forEach", Kind: frameNative}},
		{jsFrame: jsFrame{Method: "unknown", File: deviceBundle, Line: 9, Column: 9, Kind: frameURL}},
		{jsFrame: jsFrame{Method: "anonymous", File: "index.android.bundle", Line: 1, Column: 902133, Kind: frameBytecode}},
	}}
	if diff := cmp.Diff(want, got, cmp.AllowUnexported(mappedFrame{})); diff != "" {
		t.Errorf("mapStacks (-want +got):\n%s", diff)
	}
	// One request, with only the URL frames, 0-based columns, the frame's
	// own URL, and a tag per frame.
	if len(fm.posts) != 1 {
		t.Fatalf("%d requests, want 1", len(fm.posts))
	}
	sent := fm.posts[0]
	wantSent := []map[string]any{
		{"file": deviceBundle, "lineNumber": 48211.0, "column": 16.0, "methodName": "onPress", "devtoolsMcpFrame": 0.0},
		{"file": deviceBundle, "lineNumber": 48300.0, "column": 4.0, "methodName": "_performTransitionSideEffects", "devtoolsMcpFrame": 1.0},
		{"file": deviceBundle, "lineNumber": 9.0, "column": 8.0, "methodName": "unknown", "devtoolsMcpFrame": 2.0},
	}
	if diff := cmp.Diff(wantSent, sent); diff != "" {
		t.Errorf("frames sent (-want +got):\n%s", diff)
	}
}

func TestSymbolicateProjectRoot(t *testing.T) {
	for _, tc := range []struct {
		name, header, root, want string
	}{
		{"expo", "X-React-Native-Project-Root", fakeRoot, "src/CartButton.tsx"},
		{"community cli", "Project-Root", fakeRoot, "src/CartButton.tsx"},
		{"trailing slash", "Project-Root", fakeRoot + "/", "src/CartButton.tsx"},
		{"no /status (plain metro): absolute", "", fakeRoot, fakeRoot + "/src/CartButton.tsx"},
		{"another root: absolute", "Project-Root", "/Users/ana/other", fakeRoot + "/src/CartButton.tsx"},
		{"a root that is only a prefix of the name", "Project-Root", fakeRoot[:len(fakeRoot)-1], fakeRoot + "/src/CartButton.tsx"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fm := startFakeMetro(t)
			fm.header, fm.root = tc.header, tc.root
			m, _ := newTestSymbolicator(t, fm)
			got, err := m.mapStacks(t.Context(), []jsStack{testStack()})
			if err != nil {
				t.Fatal(err)
			}
			if got[0][0].File != tc.want {
				t.Errorf("file = %q, want %q", got[0][0].File, tc.want)
			}
		})
	}
}

// One request per stack, then none: the first answer is kept; a page of
// stacks is one request, each frame sent once.
func TestSymbolicateCaches(t *testing.T) {
	fm := startFakeMetro(t)
	m, _ := newTestSymbolicator(t, fm)
	st := testStack()
	for range 3 {
		if _, err := m.mapStacks(t.Context(), []jsStack{st}); err != nil {
			t.Fatal(err)
		}
	}
	if n := fm.postCount(); n != 1 {
		t.Errorf("three reads of one stack: %d requests, want 1", n)
	}
	other := parseJSStack("    at a (" + deviceBundle + ":48400:1)\n    at b (" + deviceBundle + ":48211:17)")
	third := parseJSStack("    at c (" + deviceBundle + ":48400:1)\n    at d (" + deviceBundle + ":5:5)")
	got, err := m.mapStacks(t.Context(), []jsStack{other, third, st})
	if err != nil {
		t.Fatal(err)
	}
	if n := fm.postCount(); n != 2 {
		t.Fatalf("a page of three stacks: %d requests in all, want 2", n)
	}
	if sent := fm.posts[1]; len(sent) != 2 || sent[0]["lineNumber"] != 48400.0 || sent[1]["lineNumber"] != 5.0 {
		t.Errorf("second request sent %v, want only the two new frames", sent)
	}
	if f := got[1][0]; !f.Mapped || f.File != "src/App.tsx" || f.Column != 1 || f.Method != "c" {
		t.Errorf("a frame Metro names no method keeps the app's: %+v", f)
	}
}

func TestSymbolicateRefusals(t *testing.T) {
	t.Run("500 once: asked again", func(t *testing.T) {
		fm := startFakeMetro(t)
		fm.statuses = []int{500}
		m, _ := newTestSymbolicator(t, fm)
		got, err := m.mapStacks(t.Context(), []jsStack{testStack()})
		if err != nil || !got[0][0].Mapped || fm.postCount() != 2 {
			t.Errorf("err %v, mapped %v, %d requests; want nil, true, 2", err, got[0][0].Mapped, fm.postCount())
		}
	})
	t.Run("500 twice: given up for this read, asked again by the next", func(t *testing.T) {
		fm := startFakeMetro(t)
		fm.statuses = []int{500, 500, 503}
		m, _ := newTestSymbolicator(t, fm)
		// A build error: the read gets Metro's error and raw frames, and
		// nothing of it is kept.
		for read, want := range []int{500, 503} {
			got, err := m.mapStacks(t.Context(), []jsStack{testStack()})
			var refused *errMetro
			if !isMetroErr(err, &refused, metroRefused) || refused.Status != want || !strings.Contains(refused.Message, "Unable to resolve") || got[0][0].Mapped {
				t.Errorf("read %d: err %v, mapped %v; want a %d refusal, raw frames", read, err, got[0][0].Mapped, want)
			}
		}
		if n := fm.postCount(); n != 3 {
			t.Errorf("two reads: %d requests, want 3 (a 500 asked once more, a 503 not)", n)
		}
		// The build is fixed: the next read maps, and the one after costs nothing.
		for range 2 {
			if got, err := m.mapStacks(t.Context(), []jsStack{testStack()}); err != nil || !got[0][0].Mapped {
				t.Errorf("once Metro builds again: err %v, mapped %v; want nil, true", err, got[0][0].Mapped)
			}
		}
		if n := fm.postCount(); n != 4 {
			t.Errorf("%d requests in all, want 4", n)
		}
	})
	t.Run("400: kept, not asked again", func(t *testing.T) {
		fm := startFakeMetro(t)
		fm.statuses = []int{400}
		m, _ := newTestSymbolicator(t, fm)
		for range 2 {
			_, err := m.mapStacks(t.Context(), []jsStack{testStack()})
			var refused *errMetro
			if !isMetroErr(err, &refused, metroRefused) || refused.Status != 400 {
				t.Errorf("err %v; want a 400 refusal", err)
			}
		}
		if n := fm.postCount(); n != 1 {
			t.Errorf("two reads: %d requests, want 1", n)
		}
	})
	for _, tc := range []struct{ name, answer string }{
		{"garbage", "<html>"},
		{"no stack", `{"codeFrame":null}`},
		{"too big", `{"stack":[],"x":"` + strings.Repeat("x", maxSymbolicateAnswer) + `"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fm := startFakeMetro(t)
			fm.answer = tc.answer
			m, _ := newTestSymbolicator(t, fm)
			got, err := m.mapStacks(t.Context(), []jsStack{testStack()})
			var refused *errMetro
			if !isMetroErr(err, &refused, metroRefused) || got[0][0].Mapped {
				t.Errorf("err %v, mapped %v; want a refusal and raw frames", err, got[0][0].Mapped)
			}
		})
	}
	t.Run("answers matched by tag, not order; strangers ignored", func(t *testing.T) {
		fm := startFakeMetro(t)
		fm.answer = `{"stack":[{"file":"/Users/ana/shop/src/b.ts","lineNumber":2,"column":0,"devtoolsMcpFrame":1},` +
			`{"file":"/Users/ana/shop/src/a.ts","lineNumber":1,"column":0,"devtoolsMcpFrame":0},` +
			`{"file":"/x","lineNumber":1,"column":0,"devtoolsMcpFrame":7},{"file":"/y","lineNumber":1,"column":0,"devtoolsMcpFrame":0.5}]}`
		m, _ := newTestSymbolicator(t, fm)
		got, err := m.mapStacks(t.Context(), []jsStack{parseJSStack("at a (" + deviceBundle + ":1:1)\nat b (" + deviceBundle + ":2:1)")})
		if err != nil || got[0][0].File != "src/a.ts" || got[0][1].File != "src/b.ts" {
			t.Errorf("err %v, frames %+v", err, got)
		}
	})
}

// A frame Metro cannot be asked about is not sent: no column, no URL, or
// a URL whose options JavaScriptCore stripped, unless another frame of the
// stack names the same bundle with them.
func TestSymbolicateSendsOnlyWhatMetroCanMap(t *testing.T) {
	fm := startFakeMetro(t)
	m, _ := newTestSymbolicator(t, fm)
	jsc := "http://localhost:8081/index.bundle"
	st := parseJSStack("onPress@" + jsc + ":48211:17\n" +
		"b@" + jsc + "//&platform=ios&dev=true:48300:5\n" +
		"c@http://localhost:8081/other.bundle:1:1\n" +
		"at d (" + deviceBundle + ":12)\n" +
		"at e (/Users/ana/shop/src/a.js:1:1)")
	got, err := m.mapStacks(t.Context(), []jsStack{st})
	if err != nil {
		t.Fatal(err)
	}
	if len(fm.posts) != 1 || len(fm.posts[0]) != 2 {
		t.Fatalf("sent %v, want the two frames of the JavaScriptCore-safe bundle", fm.posts)
	}
	if f := fm.posts[0][0]["file"]; f != jsc+"//&platform=ios&dev=true" {
		t.Errorf("a stripped URL was sent as %v, want the stack's own URL with options", f)
	}
	if !got[0][0].Mapped || !got[0][1].Mapped || got[0][2].Mapped || got[0][3].Mapped || got[0][4].Mapped {
		t.Errorf("mapped: %+v", got[0])
	}
	if none, err := m.mapStacks(t.Context(), []jsStack{parseJSStack("at e (/Users/ana/shop/src/a.js:1:1)")}); err != nil || none[0][0].Mapped || fm.postCount() != 1 {
		t.Errorf("a stack with nothing to send: err %v, %d requests", err, fm.postCount())
	}
}

// A reader waits at most the wait; Metro's late answer fills the cache
// for the next read, without a second request.
func TestSymbolicateSlowAnswer(t *testing.T) {
	fm := startFakeMetro(t)
	fm.hold = make(chan struct{})
	m, _ := newTestSymbolicator(t, fm)
	m.wait = time.Millisecond
	got, err := m.mapStacks(t.Context(), []jsStack{testStack()})
	var slow *errMetro
	if !isMetroErr(err, &slow, metroSlow) || got[0][0].Mapped || got[0][0].File != deviceBundle {
		t.Fatalf("err %v, frame %+v; want metroSlow and the raw frame", err, got[0][0])
	}
	close(fm.hold)
	deadline := time.Now().Add(10 * time.Second)
	for {
		got, err = m.mapStacks(t.Context(), []jsStack{testStack()})
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("Metro's late answer never reached the cache: %v", err)
		}
		time.Sleep(time.Millisecond)
	}
	if !got[0][0].Mapped || fm.postCount() != 1 {
		t.Errorf("mapped %v after %d requests, want true after 1", got[0][0].Mapped, fm.postCount())
	}
}

// Metro unreachable is believed for a while: no request until then; when
// it answers again it may be another Metro, and nothing kept is trusted.
func TestSymbolicateUnreachable(t *testing.T) {
	fm := startFakeMetro(t)
	m, clock := newTestSymbolicator(t, fm)
	if _, err := m.mapStacks(t.Context(), []jsStack{testStack()}); err != nil {
		t.Fatal(err)
	}
	fm.mu.Lock()
	fm.down = true
	statusN := fm.statusN
	fm.mu.Unlock()
	// Kept answers stay while Metro is down; a new frame meets it down.
	newFrame := parseJSStack("at a (" + deviceBundle + ":48400:1)")
	got, err := m.mapStacks(t.Context(), []jsStack{testStack(), newFrame})
	var unreachable *errMetro
	if !isMetroErr(err, &unreachable, metroUnreachable) || unreachable.Origin != fm.srv.URL || !got[0][0].Mapped || got[1][0].Mapped {
		t.Fatalf("err %v, kept frame mapped %v, new frame mapped %v", err, got[0][0].Mapped, got[1][0].Mapped)
	}
	fm.mu.Lock()
	fm.down = false // up again, but not yet believed
	fm.mu.Unlock()
	clock.add(symbolicateDownFor - time.Second)
	if _, err := m.mapStacks(t.Context(), []jsStack{newFrame}); !isMetroErr(err, &unreachable, metroUnreachable) || fm.postCount() != 1 {
		t.Fatalf("within the negative cache: err %v, %d requests; want unreachable, no new request", err, fm.postCount())
	}
	clock.add(2 * time.Second)
	got, err = m.mapStacks(t.Context(), []jsStack{newFrame})
	if err != nil || !got[0][0].Mapped {
		t.Fatalf("after it: err %v, mapped %v", err, got[0][0].Mapped)
	}
	fm.mu.Lock()
	asked := fm.statusN > statusN
	fm.mu.Unlock()
	if !asked {
		t.Error("/status was not asked again after Metro came back")
	}
	if _, err := m.mapStacks(t.Context(), []jsStack{testStack()}); err != nil || fm.postCount() != 3 {
		t.Errorf("a Metro back from down: err %v, %d requests; want the old stack asked again (3)", err, fm.postCount())
	}
}

// A different project root is another project: nothing kept is trusted.
func TestSymbolicateRootChangeClearsCache(t *testing.T) {
	fm := startFakeMetro(t)
	m, clock := newTestSymbolicator(t, fm)
	if _, err := m.mapStacks(t.Context(), []jsStack{testStack()}); err != nil {
		t.Fatal(err)
	}
	fm.mu.Lock()
	fm.root = "/Users/ana/other"
	fm.mu.Unlock()
	clock.add(symbolicateStatusFor + time.Second)
	// The next request asks /status again, then the stack anew.
	if _, err := m.mapStacks(t.Context(), []jsStack{parseJSStack("at a (" + deviceBundle + ":48400:1)")}); err != nil {
		t.Fatal(err)
	}
	got, err := m.mapStacks(t.Context(), []jsStack{testStack()})
	if err != nil || fm.postCount() != 3 || got[0][0].File != fakeRoot+"/src/CartButton.tsx" {
		t.Errorf("err %v, %d requests, file %q; want the stack asked again, named absolutely", err, fm.postCount(), got[0][0].File)
	}
}

// A frame's answer is trusted for symbolicateFrameFor from when Metro gave it, read
// or not in between: past that, the app may run an edited bundle under the
// same URL, and Metro is asked again.
func TestSymbolicateAnswersExpire(t *testing.T) {
	fm := startFakeMetro(t)
	m, clock := newTestSymbolicator(t, fm)
	read := func() mappedFrame {
		t.Helper()
		got, err := m.mapStacks(t.Context(), []jsStack{testStack()})
		if err != nil {
			t.Fatal(err)
		}
		return got[0][0]
	}
	read()
	clock.add(symbolicateFrameFor - time.Second)
	read()
	if n := fm.postCount(); n != 1 {
		t.Fatalf("read again within %v: %d requests, want 1", symbolicateFrameFor, n)
	}
	// The code changed: the same bundle position is now another line.
	fm.mu.Lock()
	fm.sources[fakeBundlePos{48211, 16}] = fakeSource{fakeRoot + "/src/CartButton.tsx", 50, 2, "handleAdd", false}
	fm.mu.Unlock()
	clock.add(time.Second)
	if f := read(); f.Line != 50 || fm.postCount() != 2 {
		t.Errorf("read %v after the answer: line %d, %d requests; want 50, 2", symbolicateFrameFor, f.Line, fm.postCount())
	}
	if f := read(); f.Line != 50 || fm.postCount() != 2 {
		t.Errorf("and at once again: line %d, %d requests; want 50, 2", f.Line, fm.postCount())
	}
}

// The cache holds at most maxFrames answers: answers no longer trusted
// make room first, then the cache starts over; a call's answers are all
// kept for its readers.
func TestSymbolicateCacheBounded(t *testing.T) {
	fm := startFakeMetro(t)
	m, clock := newTestSymbolicator(t, fm)
	m.maxFrames = 4
	at := func(line int) jsStack {
		return parseJSStack(fmt.Sprintf("at a (%s:%d:1)\nat b (%s:%d:2)", deviceBundle, line, deviceBundle, line))
	}
	size := func() int {
		m.mu.Lock()
		defer m.mu.Unlock()
		return len(m.frames)
	}
	for line := 1; line <= 2; line++ {
		if _, err := m.mapStacks(t.Context(), []jsStack{at(line)}); err != nil {
			t.Fatal(err)
		}
	}
	if n := size(); n != 4 {
		t.Fatalf("%d frames kept, want 4", n)
	}
	// Full: a third stack starts the cache over, and its answers stay.
	if _, err := m.mapStacks(t.Context(), []jsStack{at(3)}); err != nil {
		t.Fatal(err)
	}
	if n := size(); n != 2 {
		t.Errorf("past the bound: %d frames kept, want 2 (the new stack's)", n)
	}
	if _, err := m.mapStacks(t.Context(), []jsStack{at(3)}); err != nil || fm.postCount() != 3 {
		t.Errorf("the new stack again: err %v, %d requests; want nil, 3", err, fm.postCount())
	}
	// Expired answers go before trusted ones.
	clock.add(symbolicateFrameFor / 2)
	if _, err := m.mapStacks(t.Context(), []jsStack{at(4)}); err != nil {
		t.Fatal(err)
	}
	clock.add(symbolicateFrameFor / 2)
	if _, err := m.mapStacks(t.Context(), []jsStack{at(5)}); err != nil {
		t.Fatal(err)
	}
	if n := size(); n != 4 {
		t.Errorf("after expiry made room: %d frames kept, want 4", n)
	}
	before := fm.postCount()
	if _, err := m.mapStacks(t.Context(), []jsStack{at(4)}); err != nil || fm.postCount() != before {
		t.Errorf("a trusted answer was dropped for room: err %v, %d requests, want %d", err, fm.postCount(), before)
	}
}

// A closed client answers at once, unreachable, and a cancelled reader
// stops waiting.
func TestSymbolicateClosedAndCancelled(t *testing.T) {
	fm := startFakeMetro(t)
	fm.hold = make(chan struct{})
	m, _ := newTestSymbolicator(t, fm)
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := m.mapStacks(ctx, []jsStack{testStack()}); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: err %v", err)
	}
	close(fm.hold)
	m.close()
	m.close()
	var unreachable *errMetro
	if _, err := m.mapStacks(t.Context(), []jsStack{parseJSStack("at a (" + deviceBundle + ":48400:1)")}); !isMetroErr(err, &unreachable, metroUnreachable) {
		t.Errorf("closed: err %v, want unreachable", err)
	}
}

// A bundle on another port is another Metro's: its frames are not sent to
// this one, which would map them against another project; a tunnel's URL,
// which names no port, is.
func TestSymbolicateOtherPort(t *testing.T) {
	fm := startFakeMetro(t)
	m, _ := newTestSymbolicator(t, fm)
	other := strings.Replace(deviceBundle, ":8081", ":8082", 1)
	got, err := m.mapStacks(t.Context(), []jsStack{testStackAt(other)})
	var otherPort *errMetro
	if !isMetroErr(err, &otherPort, metroOtherPort) || otherPort.Port != "8082" || got[0][0].Mapped || fm.postCount() != 0 {
		t.Errorf("err %v, mapped %v, %d requests; want the other port named, nothing sent", err, got[0][0].Mapped, fm.postCount())
	}
	tunnel := "https://abc-anonymous-8081.exp.direct/index.bundle?platform=ios&dev=true"
	if got, err := m.mapStacks(t.Context(), []jsStack{testStackAt(tunnel)}); err != nil || !got[0][0].Mapped {
		t.Errorf("a tunnel's URL: err %v, mapped %v", err, got[0][0].Mapped)
	}
	if originPort("http://127.0.0.1") != "80" || originPort("https://metro.test") != "443" || originPort("http://[::1]:8081") != "8081" {
		t.Error("originPort misreads an origin")
	}
}

// isMetroErr reports whether err holds an errMetro of kind, and sets *target to it.
func isMetroErr(err error, target **errMetro, kind metroErrKind) bool {
	return errors.As(err, target) && (*target).kind == kind
}
