package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"
)

// fakeDesktop plays the Reactotron desktop app's server side, as
// reactotron-core-server does: it sends state.values.subscribe to every
// connection and records what each connection receives.
type fakeDesktop struct {
	t      *testing.T
	addr   string
	noRead bool // accept, then never read (a desktop that hangs)
	noPong bool // answer no ping (a desktop that froze)

	mu      sync.Mutex
	srv     *http.Server
	stopped chan struct{} // closed by kill
	live    []*desktopSide
	conns   chan *desktopSide // each new connection
}

// desktopSide is one connection the desktop accepted.
type desktopSide struct {
	ws     *websocket.Conn
	frames chan []byte   // what the relay wrote, in order
	closed chan struct{} // closed when reading ends
}

// desktopSubscribe is the frame the desktop sends every new connection
// (testdata/reactotron/desktop.jsonl).
var desktopSubscribe = []byte(`{"type":"state.values.subscribe","payload":{"paths":[]}}`)

// newFakeDesktop reserves a loopback port for a desktop that is not
// running yet.
func newFakeDesktop(t *testing.T) *fakeDesktop {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	d := &fakeDesktop{t: t, addr: ln.Addr().String(), conns: make(chan *desktopSide, 16)}
	ln.Close()
	t.Cleanup(d.kill)
	return d
}

// start listens on the desktop's port.
func (d *fakeDesktop) start() {
	d.t.Helper()
	ln, err := net.Listen("tcp", d.addr)
	if err != nil {
		d.t.Fatalf("desktop: %v", err)
	}
	if d.noRead {
		ln = smallBufferListener{ln}
	}
	srv := &http.Server{Handler: http.HandlerFunc(d.serve)}
	d.mu.Lock()
	d.srv, d.stopped = srv, make(chan struct{})
	d.mu.Unlock()
	go srv.Serve(ln)
}

func (d *fakeDesktop) serve(w http.ResponseWriter, r *http.Request) {
	ws, err := websocket.Accept(w, r, &websocket.AcceptOptions{OnPingReceived: func(context.Context, []byte) bool { return !d.noPong }})
	if err != nil {
		return
	}
	ws.SetReadLimit(-1)
	side := &desktopSide{ws: ws, frames: make(chan []byte, 4096), closed: make(chan struct{})}
	d.mu.Lock()
	d.live = append(d.live, side)
	stopped := d.stopped
	d.mu.Unlock()
	d.conns <- side
	ws.Write(context.Background(), websocket.MessageText, desktopSubscribe)
	defer close(side.closed)
	if d.noRead {
		<-stopped
		return
	}
	for {
		_, data, err := ws.Read(context.Background())
		if err != nil {
			return
		}
		side.frames <- data
	}
}

// kill stops the desktop and drops its connections, as quitting it does.
func (d *fakeDesktop) kill() {
	d.mu.Lock()
	srv, live, stopped := d.srv, d.live, d.stopped
	d.srv, d.live = nil, nil
	d.mu.Unlock()
	if srv != nil {
		srv.Close()
		close(stopped)
	}
	for _, s := range live {
		s.ws.CloseNow()
		<-s.closed
	}
}

// next is the desktop's next connection.
func (d *fakeDesktop) next() *desktopSide {
	d.t.Helper()
	select {
	case s := <-d.conns:
		return s
	case <-time.After(linkWaitLimit):
		d.t.Fatal("timed out waiting for the relay to connect to the desktop")
		return nil
	}
}

// frame is the next frame the desktop received on s.
func (s *desktopSide) frame(t *testing.T) []byte {
	t.Helper()
	select {
	case f := <-s.frames:
		return f
	case <-time.After(linkWaitLimit):
		t.Fatal("timed out waiting for a frame at the desktop")
		return nil
	}
}

func (s *desktopSide) send(t *testing.T, frame []byte) {
	t.Helper()
	if err := s.ws.Write(t.Context(), websocket.MessageText, frame); err != nil {
		t.Fatalf("desktop send: %v", err)
	}
}

// smallBufferListener gives each accepted connection a small receive
// buffer, so that a desktop that does not read pushes back soon.
type smallBufferListener struct{ net.Listener }

func (l smallBufferListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if tc, ok := c.(*net.TCPConn); ok {
		tc.SetReadBuffer(4096)
	}
	return c, err
}

// testDesktopOptions are bounds for tests: backoffs short enough never to
// be waited on for long, and timeouts no loaded machine reaches.
func testDesktopOptions(addr string) *reactotronDesktopOptions {
	return &reactotronDesktopOptions{Addr: addr, MinBackoff: time.Millisecond, MaxBackoff: 20 * time.Millisecond,
		DialTimeout: linkWaitLimit, WriteTimeout: time.Minute, PingInterval: time.Hour, PongTimeout: time.Minute, QueueFrames: 100, QueueBytes: 1 << 20,
		AppQueueFrames: 16, PendingTimeout: time.Minute, MaxPending: 64, MaxFrame: 1 << 20}
}

// startRelayBridge runs a bridge on a free port that relays to the desktop
// opts names.
func startRelayBridge(t *testing.T, opts *reactotronDesktopOptions) (*reactotronBridge, *adapterLink, string) {
	t.Helper()
	return startBridgeWith(t, 5*time.Second, opts)
}

// recordedFrames are the frames of desktop.jsonl in one direction.
func recordedFrames(t *testing.T, dir string) [][]byte {
	var out [][]byte
	for _, f := range readReactotronCaptured(t, "testdata/reactotron/desktop.jsonl") {
		if f.Dir == dir {
			out = append(out, f.Frame)
		}
	}
	return out
}

// recordedFrame is the first frame of dir whose text holds all of parts.
func recordedFrame(t *testing.T, dir string, parts ...string) []byte {
	t.Helper()
next:
	for _, f := range recordedFrames(t, dir) {
		for _, p := range parts {
			if !bytes.Contains(f, []byte(p)) {
				continue next
			}
		}
		return f
	}
	t.Fatalf("no %s frame in desktop.jsonl holds %q", dir, parts)
	return nil
}

// waitServerFrame waits for the app's n-th frame from the server (from 0).
func (a *fakeReactotronApp) waitServerFrame(t *testing.T, n int) string {
	t.Helper()
	var got []string
	linkWaitFor(t, fmt.Sprintf("frame %d at the app", n), func() bool {
		got = a.serverFrames()
		return len(got) > n
	})
	return got[n]
}

// answerProbe waits for the app's n-th and n+1-th frames from the server,
// which must be the bridge's store probe sent on connect and the list
// that replaces it (rtron_storeprobe.go), and answers the probe as
// reactotron-redux with a store does, or with answers when given.
func (a *fakeReactotronApp) answerProbe(t *testing.T, n int, answers ...[]byte) {
	t.Helper()
	if got := a.waitServerFrame(t, n); got != probeOnIntro {
		t.Fatalf("the app's frame %d is %s, want the bridge's store probe", n, got)
	}
	if got := a.waitServerFrame(t, n+1); got != probeRestore {
		t.Fatalf("the app's frame %d is %s, want the bridge's list after the probe", n+1, got)
	}
	if len(answers) == 0 {
		answers = [][]byte{reduxProbeAnswer}
	}
	for _, f := range answers {
		a.send(f)
	}
}

// reduxProbeAnswer is reactotron-redux's answer to the probe's path once
// its store exists (redux_late.jsonl).
var reduxProbeAnswer = []byte(`{"type":"state.values.change","payload":{"changes":[{"path":"__devtools_mcp_store_probe__","value":"~~~ undefined ~~~"}]},"important":"~~~ false ~~~"}`)

// ourBackupAnswer is an answer to the bridge's connect-time backup request
// that no other answer in these tests equals.
func ourBackupAnswer(t *testing.T) []byte {
	t.Helper()
	return bytes.Replace(recordedFrame(t, "app", `"state.backup.response"`), []byte(`"total":15.5`), []byte(`"total":1.25`), 1)
}

func relayOf(t *testing.T, b *reactotronBridge, id string) *relayStatus {
	t.Helper()
	r := b.desktopStatus()[id]
	if r == nil {
		t.Fatalf("no relay for %s", id)
	}
	return r
}

// TestDesktopRelayRealFrames replays the real client's frames: the intro
// reaches the desktop with the id the bridge gave the app (so the desktop
// assigns none), the app's frames reach it byte for byte and in order, and
// the desktop's frames reach the app byte for byte.
func TestDesktopRelayRealFrames(t *testing.T) {
	d := newFakeDesktop(t)
	d.start()
	b, _, url := startRelayBridge(t, testDesktopOptions(d.addr))
	app := dialReactotron(t, url, nil)
	intro := recordedFrames(t, "app")[0]
	app.send(intro)
	side := d.next()
	set := app.waitServerFrame(t, 0)
	var given struct{ Payload string }
	if err := json.Unmarshal([]byte(set), &given); err != nil || given.Payload == "" {
		t.Fatalf("the app's first frame is %s, want setClientId", set)
	}
	var sent, want map[string]any
	json.Unmarshal(side.frame(t), &sent)
	json.Unmarshal(intro, &want)
	want["payload"].(map[string]any)["clientId"] = given.Payload
	if fmt.Sprint(sent) != fmt.Sprint(want) {
		t.Errorf("the desktop got the intro\n%v\nwant\n%v", sent, want)
	}
	// The bridge's store probe, sent on connect, and its answer: the
	// bridge's alone, so the desktop's next frame is the first event.
	app.answerProbe(t, 1)
	var events [][]byte
	for _, f := range recordedFrames(t, "app")[1:] {
		if !bytes.Contains(f, []byte(`.response"`)) {
			events = append(events, f)
		}
	}
	for _, f := range events {
		app.send(f)
	}
	for _, f := range events {
		if got := side.frame(t); !bytes.Equal(got, f) {
			t.Fatalf("the desktop got\n%s\nwant\n%s", got, f)
		}
	}
	// The desktop's state.values.subscribe, then its requests and dispatch.
	if got := app.waitServerFrame(t, 3); got != string(desktopSubscribe) {
		t.Errorf("the app got %s from the desktop, want %s", got, desktopSubscribe)
	}
	for i, f := range recordedFrames(t, "from-desktop")[1:5] {
		side.send(t, f)
		if got := app.waitServerFrame(t, 4+i); got != string(f) {
			t.Errorf("the app got %s, want %s", got, f)
		}
	}
	// A setClientId from the desktop is not relayed: the app keeps its id.
	side.send(t, []byte(`{"type":"setClientId","payload":"d35k70p0-0000-4000-8000-000000000001"}`))
	side.send(t, desktopSubscribe)
	if got := app.waitServerFrame(t, 8); got != string(desktopSubscribe) {
		t.Errorf("the app got %s after the desktop's setClientId, want the frame after it", got)
	}
	if r := relayOf(t, b, given.Payload); r.ClientIDsIgnored != 1 || !r.Connected {
		t.Errorf("relay = %+v, want connected with one setClientId ignored", r)
	}
}

// TestDesktopRelayRoutesAnswers pins whose answer is whose: the desktop and
// the bridge both ask the app for its state; the app answers in order, and
// each gets its own answer, the desktop never the bridge's.
func TestDesktopRelayRoutesAnswers(t *testing.T) {
	d := newFakeDesktop(t)
	d.start()
	b, link, url := startRelayBridge(t, testDesktopOptions(d.addr))
	app := dialReactotron(t, url, nil)
	intro := []byte(`{"type":"client.intro","payload":{"name":"ShopApp","clientId":"c1"}}`)
	app.send(intro)
	side := d.next()
	if got := side.frame(t); !bytes.Equal(got, intro) {
		t.Errorf("the desktop got the intro %s, want it unchanged: %s", got, intro)
	}
	app.answerProbe(t, 0)
	waitStoreKnown(t, b, "c1")
	app.waitServerFrame(t, 2) // the desktop's subscribe
	var s *session
	linkWaitFor(t, "the session", func() bool {
		s = registryOf(link).currentLive(sessionViaReactotron)
		return s != nil
	})
	backupReq := recordedFrame(t, "from-desktop", `"state.backup.request"`)
	side.send(t, backupReq)
	if got := app.waitServerFrame(t, 3); got != string(backupReq) {
		t.Fatalf("the app got %s, want the desktop's %s", got, backupReq)
	}
	type outcome struct {
		raw json.RawMessage
		err error
	}
	snap := make(chan outcome, 1)
	go func() {
		raw, err := s.request(t.Context(), "snapshot.get", snapshotParams{Stream: "redux"})
		snap <- outcome{raw, err}
	}()
	if got := app.waitServerFrame(t, 4); got != string(backupReq) {
		t.Fatalf("the app got %s, want the bridge's %s", got, backupReq)
	}
	first := recordedFrame(t, "app", `"state.backup.response"`)
	second := bytes.Replace(first, []byte(`"total":15.5`), []byte(`"total":99`), 1)
	app.send(first)
	app.send(second)
	// An answer nobody asked for goes to the desktop as well.
	unasked := recordedFrame(t, "app", `"state.values.response"`, `"cart.total"`)
	app.send(unasked)
	marker := recordedFrame(t, "app", `"hello from the app"`)
	app.send(marker)
	// The desktop's first frame after the intro is its own answer: neither
	// the answer to the bridge's probe nor the bridge's backup reaches it.
	if got := side.frame(t); !bytes.Equal(got, first) {
		t.Errorf("the desktop got\n%s\nwant its answer\n%s", got, first)
	}
	if got := side.frame(t); !bytes.Equal(got, unasked) {
		t.Errorf("the desktop got\n%s\nwant the unasked answer", got)
	}
	if got := side.frame(t); !bytes.Equal(got, marker) {
		t.Errorf("the desktop got\n%s\nwant the log after the answers (the bridge's answer must not reach it)", got)
	}
	o := <-snap
	if o.err != nil || !bytes.Contains(o.raw, []byte(`"total":99`)) {
		t.Errorf("the bridge's snapshot = %s, %v; want the second answer", o.raw, o.err)
	}
	// The desktop's answer left nothing in the session: one snapshot, ours.
	if n := s.latestSeq("redux"); n != 1 {
		t.Errorf("%d redux events, want only the bridge's snapshot", n)
	}
	// Our requests never reach the desktop: it got no request frames.
	for _, f := range [][]byte{first, unasked, marker} {
		if bytes.Contains(f, []byte(`.request"`)) {
			t.Errorf("the desktop got a request: %s", f)
		}
	}
	// Intro, its answer, the unasked answer, the log: nothing else.
	linkWaitFor(t, "the counts", func() bool { return relayOf(t, b, "c1").SentToDesktop == 4 })
	if r := relayOf(t, b, "c1"); r.AnswersKept != 1 {
		t.Errorf("relay = %+v, want 1 answer kept: the snapshot's", r)
	}
}

// TestDesktopRelayComesAndGoes: absent at start, the app's frames wait for
// the desktop; killed, the agent keeps the app; restarted, the intro is
// replayed before what waited.
func TestDesktopRelayComesAndGoes(t *testing.T) {
	d := newFakeDesktop(t)
	b, link, url := startRelayBridge(t, testDesktopOptions(d.addr))
	app := dialReactotron(t, url, nil)
	intro := []byte(`{"type":"client.intro","payload":{"name":"ShopApp","clientId":"c1"}}`)
	app.send(intro)
	logAt := func(n int) []byte {
		return []byte(fmt.Sprintf(`{"type":"log","payload":{"level":"debug","message":"log %d"},"important":false}`, n))
	}
	events := func() int64 {
		s := registryOf(link).currentLive(sessionViaReactotron)
		if s == nil {
			return 0
		}
		return s.latestSeq("console")
	}
	app.send(logAt(1))
	linkWaitFor(t, "the agent to see the log", func() bool { return events() == 1 })
	linkWaitFor(t, "a failed dial", func() bool { return relayOf(t, b, "c1").LastError != "" })
	if r := relayOf(t, b, "c1"); r.Connected || r.Queued != 1 {
		t.Errorf("relay = %+v, want not connected, one frame queued", r)
	}
	d.start()
	side := d.next()
	for _, want := range [][]byte{intro, logAt(1)} {
		if got := side.frame(t); !bytes.Equal(got, want) {
			t.Errorf("the desktop got %s, want %s", got, want)
		}
	}
	d.kill()
	// A frame written as the desktop goes is lost with it; this one is
	// sent once the relay knows it has gone.
	linkWaitFor(t, "the relay to notice", func() bool { return !relayOf(t, b, "c1").Connected })
	app.send(logAt(2))
	linkWaitFor(t, "the agent to see the second log", func() bool { return events() == 2 })
	d.start()
	side = d.next()
	for _, want := range [][]byte{intro, logAt(2)} {
		if got := side.frame(t); !bytes.Equal(got, want) {
			t.Errorf("after the restart the desktop got %s, want %s", got, want)
		}
	}
	if r := relayOf(t, b, "c1"); r.Connects != 2 || r.DroppedToDesktop != 0 {
		t.Errorf("relay = %+v, want 2 connects and nothing dropped", r)
	}
}

// TestDesktopRelayBoundedQueue: while the desktop is away, at most
// QueueFrames frames wait, the oldest dropped and counted.
func TestDesktopRelayBoundedQueue(t *testing.T) {
	d := newFakeDesktop(t)
	opts := testDesktopOptions(d.addr)
	opts.QueueFrames = 3
	b, link, url := startRelayBridge(t, opts)
	app := dialReactotron(t, url, nil)
	app.send([]byte(`{"type":"client.intro","payload":{"name":"ShopApp","clientId":"c1"}}`))
	var last []byte
	for i := range 10 {
		last = []byte(fmt.Sprintf(`{"type":"log","payload":{"level":"debug","message":"log %d"},"important":false}`, i))
		app.send(last)
	}
	linkWaitFor(t, "the frames to be handled", func() bool {
		s := registryOf(link).currentLive(sessionViaReactotron)
		return s != nil && s.latestSeq("console") == 10
	})
	if r := relayOf(t, b, "c1"); r.Queued != 3 || r.DroppedToDesktop != 7 {
		t.Errorf("relay = %+v, want 3 queued and 7 dropped", r)
	}
	d.start()
	side := d.next()
	side.frame(t) // the intro
	side.frame(t)
	side.frame(t)
	if got := side.frame(t); !bytes.Equal(got, last) {
		t.Errorf("the desktop's last frame is %s, want the newest %s", got, last)
	}
}

// TestDesktopRelayDesktopNeverReads: a desktop that stops reading costs at
// most the queue's bytes, and the agent's requests are answered as before.
// The app is not pinged: on a loaded machine the flood can take longer
// than the ping interval, and its pong would wait behind it.
func TestDesktopRelayDesktopNeverReads(t *testing.T) {
	t.Parallel()
	d := newFakeDesktop(t)
	d.noRead = true
	d.start()
	opts := testDesktopOptions(d.addr)
	opts.QueueBytes = 256 << 10
	b, link, url := startBridgeTuned(t, 5*time.Second, opts, func(b *reactotronBridge) { b.pingInterval = time.Hour })
	// The app has a store: it answers the probe and every backup request.
	app := dialReactotron(t, url, map[string][]json.RawMessage{"state.backup.request": {recordedFrame(t, "app", `"state.backup.response"`)},
		"state.values.subscribe": {reduxProbeAnswer}})
	app.send([]byte(`{"type":"client.intro","payload":{"name":"ShopApp","clientId":"c1"}}`))
	d.next()
	waitStoreKnown(t, b, "c1") // the probe answered before the flood
	big := strings.Repeat("x", 64<<10)
	const n = 200 // 12.8 MB: more than the socket buffers hold
	for i := range n {
		app.send([]byte(fmt.Sprintf(`{"type":"log","payload":{"level":"debug","message":"%d %s"},"important":false}`, i, big)))
	}
	var s *session
	linkWaitFor(t, "the app's frames to be handled", func() bool {
		s = registryOf(link).currentLive(sessionViaReactotron)
		return s != nil && s.latestSeq("console") == n
	})
	r := relayOf(t, b, "c1")
	if r.DroppedToDesktop == 0 || r.QueuedBytes > opts.QueueBytes {
		t.Errorf("relay = %+v, want frames dropped and at most %d bytes queued", r, opts.QueueBytes)
	}
	// The agent's request goes out and its answer comes back at once.
	raw, err := s.request(t.Context(), "snapshot.get", snapshotParams{Stream: "redux"})
	if err != nil || !bytes.Contains(raw, []byte(`"total":15.5`)) {
		t.Errorf("snapshot = %s, %v; want the app's state", raw, err)
	}
}

// TestDesktopRelayDesktopNeverPongs: a desktop that answers no ping is
// dropped once its pong is late, and the relay says why.
func TestDesktopRelayDesktopNeverPongs(t *testing.T) {
	t.Parallel()
	d := newFakeDesktop(t)
	d.noPong = true
	d.start()
	opts := testDesktopOptions(d.addr)
	// The pong timeout also bounds the ping's write: a write it cuts closes
	// the socket, and the reader may report the close before the pinger
	// does. The late pong stays the reason (pingUntil).
	opts.PingInterval, opts.PongTimeout = 5*time.Millisecond, time.Millisecond
	opts.MinBackoff, opts.MaxBackoff = time.Hour, time.Hour // the first failure's reason stays to be read
	b, _, url := startRelayBridge(t, opts)
	app := dialReactotron(t, url, map[string][]json.RawMessage{"state.values.subscribe": {reduxProbeAnswer}})
	app.send([]byte(`{"type":"client.intro","payload":{"name":"ShopApp","clientId":"c1"}}`))
	linkWaitFor(t, "the relay to drop the desktop for its late pong", func() bool {
		r := b.desktopStatus()["c1"]
		return r != nil && r.LastError == errDesktopPongLate.Error() && !r.Connected
	})
}

// TestDesktopRelayAppReconnects: the app reloads (same clientId) while the
// desktop is connected: the old relay goes with the old connection, the
// new one introduces the app again, and the desktop's commands reach the
// new connection only.
func TestDesktopRelayAppReconnects(t *testing.T) {
	d := newFakeDesktop(t)
	d.start()
	_, _, url := startRelayBridge(t, testDesktopOptions(d.addr))
	intro := recordedFrames(t, "app")[0]
	intro = bytes.Replace(intro, []byte(`"~~~ null ~~~"`), []byte(`"c1"`), 1)
	answers := func() map[string][]json.RawMessage {
		return map[string][]json.RawMessage{"state.values.subscribe": {reduxProbeAnswer}}
	}
	first := dialReactotron(t, url, answers())
	first.send(intro)
	side1 := d.next()
	side1.frame(t)
	second := dialReactotron(t, url, answers())
	second.send(intro)
	side2 := d.next()
	if got := side2.frame(t); !bytes.Equal(got, intro) {
		t.Errorf("the new connection's intro is %s, want %s", got, intro)
	}
	select {
	case <-side1.closed:
	case <-time.After(linkWaitLimit):
		t.Fatal("the replaced connection's relay is still open")
	}
	dispatch := recordedFrame(t, "from-desktop", `"state.action.dispatch"`)
	side2.send(t, dispatch)
	if got := second.waitServerFrame(t, 0); got != probeOnIntro {
		t.Errorf("the reloaded app's first frame is %s, want the bridge's store probe", got)
	}
	second.waitServerFrame(t, 2) // the desktop's subscribe
	if got := second.waitServerFrame(t, 3); got != string(dispatch) {
		t.Errorf("the reloaded app got %s, want %s", got, dispatch)
	}
	// The answer to the bridge's probe, sent as the app saw it, never
	// reaches the desktop: its next frame after the intro is this log.
	marker := recordedFrame(t, "app", `"hello from the app"`)
	second.send(marker)
	if got := side2.frame(t); !bytes.Equal(got, marker) {
		t.Errorf("the desktop got %s, want the log (the bridge's answer must not reach it)", got)
	}
	for _, f := range first.serverFrames() {
		if f == string(dispatch) {
			t.Error("the replaced connection got the desktop's dispatch")
		}
	}
}

// TestDesktopRelayTwoBackupPlugins: an app with reactotron-redux and
// reactotron-plugin-zustand answers each backup request twice, one answer
// right after the other. Both answers go to whoever asked: the bridge's
// (for a snapshot) never reach the desktop, and the desktop's both reach
// it; the answers to the probe on connect reach it neither.
func TestDesktopRelayTwoBackupPlugins(t *testing.T) {
	d := newFakeDesktop(t) // started once the bridge has learned the stores
	b, link, url := startRelayBridge(t, testDesktopOptions(d.addr))
	app := dialReactotron(t, url, nil)
	app.send([]byte(`{"type":"client.intro","payload":{"name":"ShopApp","clientId":"c1"}}`))
	stores := zustandBackupAnswer(t)
	app.answerProbe(t, 0, reduxProbeAnswer, zustandProbeAnswer(t))
	if got, want := app.waitServerFrame(t, 2), string(reactotronSubscribe([]string{"auth", "cart"})); got != want {
		t.Fatalf("the app got %s, want the bridge's subscription %s", got, want)
	}
	var s *session
	linkWaitFor(t, "the session", func() bool {
		s = registryOf(link).currentLive(sessionViaReactotron)
		return s != nil
	})
	d.start()
	side := d.next()
	side.frame(t)             // the intro
	app.waitServerFrame(t, 3) // the desktop's subscription, joined with ours
	// The desktop's request, answered stores first this time.
	backupReq := recordedFrame(t, "from-desktop", `"state.backup.request"`)
	side.send(t, backupReq)
	if got := app.waitServerFrame(t, 4); got != string(backupReq) {
		t.Fatalf("the app got %s, want the desktop's %s", got, backupReq)
	}
	desktopRedux := recordedFrame(t, "app", `"state.backup.response"`)
	app.send(stores)
	app.send(desktopRedux)
	// The bridge's snapshot, answered Redux first.
	type outcome struct {
		raw json.RawMessage
		err error
	}
	snap := make(chan outcome, 1)
	go func() {
		raw, err := s.request(t.Context(), "snapshot.get", snapshotParams{Stream: "redux"})
		snap <- outcome{raw, err}
	}()
	if got := app.waitServerFrame(t, 5); got != string(reactotronBackupRequest()) {
		t.Fatalf("the app got %s, want the bridge's backup request", got)
	}
	latest := bytes.Replace(desktopRedux, []byte(`"total":15.5`), []byte(`"total":77`), 1)
	app.send(latest)
	app.send(stores)
	marker := recordedFrame(t, "app", `"hello from the app"`)
	app.send(marker)
	for i, want := range [][]byte{stores, desktopRedux, marker} {
		if got := side.frame(t); !bytes.Equal(got, want) {
			t.Errorf("the desktop's frame %d after the intro is\n%s\nwant\n%s", i, got, want)
		}
	}
	o := <-snap
	if o.err != nil || !bytes.Contains(o.raw, []byte(`"total":77`)) {
		t.Errorf("the bridge's snapshot = %s, %v; want the Redux answer to its own request", o.raw, o.err)
	}
	if r := relayOf(t, b, "c1"); r.AnswersKept != 2 {
		t.Errorf("relay = %+v, want 2 answers kept: both for the snapshot", r)
	}
}

func TestReactotronDesktopConfig(t *testing.T) {
	for _, c := range []struct {
		env  map[string]string
		want string // "" for no error; else a part of the error
	}{
		{map[string]string{"REACTOTRON_DESKTOP": "127.0.0.1:9091"}, ""},
		{map[string]string{"REACTOTRON_DESKTOP": "localhost:9091"}, ""},
		{map[string]string{"REACTOTRON_DESKTOP": "[::1]:9091"}, ""},
		{map[string]string{"REACTOTRON_DESKTOP": "10.0.0.5:9091"}, "REACTOTRON_DESKTOP_ALLOWED_HOSTS"},
		{map[string]string{"REACTOTRON_DESKTOP": "10.0.0.5:9091", "REACTOTRON_DESKTOP_ALLOWED_HOSTS": "10.0.0.5"}, ""},
		{map[string]string{"REACTOTRON_DESKTOP": "Mac.local:9091", "REACTOTRON_DESKTOP_ALLOWED_HOSTS": "mac.local"}, ""},
		{map[string]string{"REACTOTRON_DESKTOP": "127.0.0.1"}, "host:port"},
		{map[string]string{"REACTOTRON_DESKTOP": "127.0.0.1:9090"}, "the bridge's own port"},
		{map[string]string{"REACTOTRON_DESKTOP": "127.0.0.1:9091", "REACTOTRON_PORT": "0"}, "REACTOTRON_PORT is 0"},
		{map[string]string{"REACTOTRON_DESKTOP_ALLOWED_HOSTS": "http://x"}, "bare host"},
	} {
		_, err := loadConfig(nil, func(k string) string { return c.env[k] })
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%v: %v", c.env, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%v: error %v, want one saying %q", c.env, err, c.want)
		}
	}
}

func FuzzDesktopRequestKey(f *testing.F) {
	for _, fr := range [][]byte{[]byte(`{"type":"state.values.request","payload":{"path":"a.b"}}`),
		[]byte(`{"type":"state.keys.request","payload":{"path":null}}`), []byte(`{"type":"state.backup.request","payload":{}}`),
		[]byte(`{"type":"state.values.request","payload":{"path":5}}`), []byte(`{"type":"custom","payload":"ping"}`), []byte(`[]`)} {
		f.Add(fr)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		typ, key, ask := desktopRequestKey(data)
		if ask && (key == "" || !strings.HasPrefix(typ, "state.")) {
			t.Errorf("%q: type %q key %q ask %v", data, typ, key, ask)
		}
	})
}

func FuzzIntroWithClientID(f *testing.F) {
	f.Add([]byte(`{"type":"client.intro","payload":{"name":"a","clientId":"~~~ null ~~~"}}`), "c1")
	f.Add([]byte(`{"type":"client.intro","payload":null}`), "c1")
	f.Add([]byte(`not json`), "")
	f.Fuzz(func(t *testing.T, data []byte, id string) {
		out := introWithClientID(data, id)
		var frame struct {
			Payload map[string]json.RawMessage
		}
		if json.Unmarshal(out, &frame) != nil || frame.Payload == nil {
			if !bytes.Equal(out, data) {
				t.Errorf("%q: unreadable, but changed to %q", data, out)
			}
			return
		}
		var got, want string
		quoted, _ := json.Marshal(id) // invalid UTF-8 becomes U+FFFD, byte by byte
		json.Unmarshal(quoted, &want)
		if !bytes.Equal(out, data) && (json.Unmarshal(frame.Payload["clientId"], &got) != nil || got != want) {
			t.Errorf("%q: clientId %s, want %q", out, frame.Payload["clientId"], id)
		}
	})
}

// TestDesktopRelayThroughServe: with REACTOTRON_DESKTOP set, serve relays a
// Reactotron app, and debug_health_check shows where and how it goes.
func TestDesktopRelayThroughServe(t *testing.T) {
	d := newFakeDesktop(t)
	d.start()
	cfg := testConfig(t)
	cfg.Reactotron, cfg.ReactotronPort = true, 0 // any free port
	cfg.ReactotronDesktop = d.addr
	ts := startServer(t, cfg)
	ts.initialize()
	e := &e2e{testServer: ts, nextID: 100}
	var url string
	e.waitHealthRaw(func(h map[string]any) bool {
		rt, _ := h["server"].(map[string]any)["reactotron"].(map[string]any)
		url, _ = rt["url"].(string)
		return rt["listening"] == true && rt["desktop"] == d.addr
	})
	app := dialReactotron(t, url, nil)
	intro := []byte(`{"type":"client.intro","payload":{"name":"ShopApp","clientId":"c1"}}`)
	app.send(intro)
	if got := d.next().frame(t); !bytes.Equal(got, intro) {
		t.Errorf("the desktop got %s, want %s", got, intro)
	}
	h := e.waitHealthRaw(func(h map[string]any) bool {
		s, _ := h["sessions"].([]any)
		if len(s) != 1 {
			return false
		}
		desk, _ := s[0].(map[string]any)["desktop"].(map[string]any)
		return desk["connected"] == true && desk["sentToDesktop"] == 1.0
	})
	desk := h["sessions"].([]any)[0].(map[string]any)["desktop"].(map[string]any)
	if desk["address"] != d.addr || desk["queueLimit"] != 1000.0 || desk["droppedToDesktop"] != 0.0 {
		t.Errorf("desktop = %v, want the address, the default bounds and nothing dropped", desk)
	}
}

// TestDesktopRelayExpiredRequest: a desktop request past PendingTimeout
// has given up its place; its late answer is nobody's, so it goes to both.
func TestDesktopRelayExpiredRequest(t *testing.T) {
	d := newFakeDesktop(t)
	d.start()
	opts := testDesktopOptions(d.addr)
	opts.PendingTimeout = -1 // every desktop request has expired by the time it is answered
	b, _, url := startRelayBridge(t, opts)
	app := dialReactotron(t, url, nil)
	app.send([]byte(`{"type":"client.intro","payload":{"name":"ShopApp","clientId":"c1"}}`))
	side := d.next()
	side.frame(t)
	app.answerProbe(t, 0)
	backupReq := recordedFrame(t, "from-desktop", `"state.backup.request"`)
	side.send(t, backupReq)
	if got := app.waitServerFrame(t, 3); got != string(backupReq) {
		t.Fatalf("the app got %s, want the desktop's %s", got, backupReq)
	}
	answer := recordedFrame(t, "app", `"state.backup.response"`)
	app.send(answer)
	if got := side.frame(t); !bytes.Equal(got, answer) {
		t.Errorf("the desktop got %s, want the late answer", got)
	}
	if r := relayOf(t, b, "c1"); r.Expired != 1 || r.AnswersKept != 0 {
		t.Errorf("relay = %+v, want one expired request and no answer kept", r)
	}
}
