package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/google/go-cmp/cmp"
)

// The simulated app's connection: handshake, requests and pushes against a
// scripted server peer, payload limits, reconnecting, and no leaks.

// demoTestPeer is the server end of one connection from a demoApp.
type demoTestPeer struct {
	t         *testing.T
	conn      *websocket.Conn
	handshake map[string]any
	connected <-chan error // connect's result
	cancel    context.CancelFunc
	stopOnce  sync.Once
	stopErr   error
}

// demoTestServer accepts WebSockets and hands them to the test. It lives
// until the test's cleanup.
func demoTestServer(t *testing.T) (wsURL string, conns <-chan *websocket.Conn) {
	t.Helper()
	accepted := make(chan *websocket.Conn)
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := websocket.Accept(w, r, nil) // also checks the app's Origin names the same host
		if err != nil {
			return
		}
		c.SetReadLimit(64 << 20)
		select {
		case accepted <- c:
		case <-release:
			c.CloseNow()
		}
	}))
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(release) })
	return "ws" + strings.TrimPrefix(srv.URL, "http"), accepted
}

// demoTestConnect starts app.connect against a test server and returns
// after reading the app's handshake; the test answers it.
func demoTestConnect(t *testing.T, app *demoApp) *demoTestPeer {
	t.Helper()
	wsURL, conns := demoTestServer(t)
	ctx, cancel := context.WithCancel(t.Context())
	connected := make(chan error, 1)
	go func() { connected <- app.connect(ctx, wsURL) }()
	p := &demoTestPeer{t: t, connected: connected, cancel: cancel}
	t.Cleanup(func() { p.stop() })
	select {
	case p.conn = <-conns:
	case err := <-connected:
		t.Fatalf("connect returned before the server accepted: %v", err)
	}
	msg := p.read()
	if err := json.Unmarshal(msg, &p.handshake); err != nil {
		t.Fatalf("handshake %s: %v", msg, err)
	}
	return p
}

func (p *demoTestPeer) read() []byte {
	p.t.Helper()
	for {
		typ, data, err := p.conn.Read(p.t.Context())
		if err != nil {
			p.t.Fatalf("server read: %v", err)
		}
		if typ == websocket.MessageText {
			return data
		}
	}
}

func (p *demoTestPeer) write(msg string) {
	p.t.Helper()
	if err := p.conn.Write(p.t.Context(), websocket.MessageText, []byte(msg)); err != nil {
		p.t.Fatalf("server write %s: %v", msg, err)
	}
}

// live answers the handshake with ack and returns once the app serves
// requests, and so also pushes.
func (p *demoTestPeer) live(ack string) {
	p.t.Helper()
	p.write(ack)
	p.write(`{"type":"request","id":"live","method":"streams.list"}`)
	p.response("live")
}

const demoTestAck = `{"type":"handshake_ack","protocolVersion":1,"server":{"name":"devtools-mcp","version":"0.1.0"},"maxPayload":524288,"requestTimeoutMs":5000}`

type demoTestFrame struct {
	Type   string          `json:"type"`
	ID     string          `json:"id"`
	Result json.RawMessage `json:"result"`
	Error  *wireError      `json:"error"`
	Event  demoTestEvent   `json:"event"`
	raw    []byte
}

// next reads the next frame.
func (p *demoTestPeer) next() demoTestFrame {
	p.t.Helper()
	raw := p.read()
	f := demoTestFrame{raw: raw}
	if err := json.Unmarshal(raw, &f); err != nil {
		p.t.Fatalf("frame %.200s: %v", raw, err)
	}
	return f
}

// response reads frames until the response to id, passing over pushes and
// responses to ids in skip.
func (p *demoTestPeer) response(id string, skip ...string) demoTestFrame {
	p.t.Helper()
	for {
		f := p.next()
		switch {
		case f.Type == "event":
		case f.Type == "response" && f.ID == id:
			if !bytes.HasPrefix(f.raw, []byte(`{"type":"response","id":`)) {
				p.t.Errorf("response %.60s does not start with type and id", f.raw)
			}
			return f
		case f.Type == "response" && slices.Contains(skip, f.ID):
		default:
			p.t.Fatalf("waiting for response %s, got %.200s", id, f.raw)
		}
	}
}

// stop cancels connect, lets the app close (reading to complete the close
// handshake) and returns connect's result.
func (p *demoTestPeer) stop() error {
	p.stopOnce.Do(func() {
		p.cancel()
		ctx := context.WithoutCancel(p.t.Context())
		for {
			if _, _, err := p.conn.Read(ctx); err != nil {
				if status := websocket.CloseStatus(err); status != websocket.StatusNormalClosure {
					p.stopErr = fmt.Errorf("app closed with %v (%v), want 1000", status, err)
				}
				break
			}
		}
		if err := <-p.connected; err != nil && p.stopErr == nil {
			p.stopErr = fmt.Errorf("connect returned %w after cancel, want nil", err)
		}
		p.conn.CloseNow()
	})
	return p.stopErr
}

func TestDemoConnect(t *testing.T) {
	checkDemoNoLeak(t)
	app := newDemoApp(demoOptions{Seed: 3, Now: demoTestClock(), Token: "s3cret"})
	p := demoTestConnect(t, app)

	wantHandshake := map[string]any{
		"type": "handshake", "protocolVersion": 1.0, "sessionId": app.sessionID, "adapterVersion": demoAdapterVersion,
		"startedAt": demoTestTime(0), "token": "s3cret",
		"app":    map[string]any{"name": "ShopApp", "version": "2.4.0", "bundleId": "com.example.shop"},
		"device": map[string]any{"platform": "ios", "osVersion": "18.1", "model": "iPhone 16", "isEmulator": true},
		"streams": []any{
			map[string]any{"name": "redux", "active": true},
			map[string]any{"name": "navigation", "active": true},
			map[string]any{"name": "mmkv", "active": true, "instances": []any{"default", "auth"}},
			map[string]any{"name": "console", "active": true},
			map[string]any{"name": "network", "active": true},
		},
		"capabilities": []any{"state.dispatch", "commands", "snapshot.path", "snapshot.keys"},
	}
	if diff := cmp.Diff(wantHandshake, p.handshake); diff != "" {
		t.Errorf("handshake (-want +got):\n%s", diff)
	}
	p.write(demoTestAck)

	// Requests are answered with what handle answers.
	for i, c := range []struct{ method, params string }{
		{"streams.list", `{}`},
		{"events.query", `{"stream":"navigation","limit":2}`},
		{"snapshot.get", `{"stream":"mmkv","seq":1}`},
	} {
		id := fmt.Sprint(i + 1)
		p.write(fmt.Sprintf(`{"type":"request","id":%q,"method":%q,"params":%s}`, id, c.method, c.params))
		f := p.response(id)
		want, werr := demoCall(t, app, c.method, c.params)
		if werr != nil || f.Error != nil || !bytes.Equal(want, f.Result) {
			t.Errorf("%s: result %s error %v, want %s %v", c.method, f.Result, f.Error, want, werr)
		}
	}
	p.write(`{"type":"request","id":"u","method":"state.dump","params":{}}`)
	if f := p.response("u"); f.Error == nil || f.Error.Code != "UNKNOWN_METHOD" {
		t.Errorf("unknown method: %s", f.raw)
	}

	// What a server may send that the adapter ignores; the connection stays.
	if err := p.conn.Write(t.Context(), websocket.MessageBinary, []byte(`{"type":"request","id":"bin","method":"streams.list"}`)); err != nil {
		t.Fatal(err)
	}
	for _, msg := range []string{`{"type":`, `[1,2]`, `{"type":"mystery","id":"x"}`, `{"type":"pong"}`,
		`{"type":"request","method":"streams.list"}`, `{"type":"cancel","id":"nothing-pending"}`} {
		p.write(msg)
	}
	p.write(`{"type":"request","id":"after","method":"streams.list"}`)
	p.response("after")

	// A cancelled request may or may not be answered; later ones are.
	p.write(`{"type":"request","id":"c","method":"snapshot.get","params":{"stream":"redux"}}`)
	p.write(`{"type":"cancel","id":"c"}`)
	p.write(`{"type":"request","id":"d","method":"streams.list"}`)
	p.response("d", "c")

	// Pushes: every event recorded by step arrives, in seq order per stream.
	latest := map[string]int64{}
	for _, s := range app.listStreams().Streams {
		latest[s.Name] = s.LatestSeq
	}
	app.step()
	want := map[string][]demoTestEvent{}
	remaining := 0
	for stream, seq := range latest {
		var q demoTestQuery
		demoMustCall(t, app, "events.query", fmt.Sprintf(`{"stream":%q,"limit":200,"since_seq":%d}`, stream, seq), &q)
		if len(q.Events) > 0 {
			want[stream] = q.Events
			remaining += len(q.Events)
		}
	}
	got := map[string][]demoTestEvent{}
	for remaining > 0 {
		f := p.next()
		if f.Type != "event" {
			t.Fatalf("waiting for pushes, got %.200s", f.raw)
		}
		if f.Event.Seq > latest[f.Event.Stream] {
			got[f.Event.Stream] = append(got[f.Event.Stream], f.Event)
			remaining--
		}
	}
	if diff := cmp.Diff(want, got, demoRawEqual); diff != "" {
		t.Errorf("pushed events (-queried +pushed):\n%s", diff)
	}

	if err := p.stop(); err != nil {
		t.Error(err)
	}
}

func TestDemoConnectRefused(t *testing.T) {
	checkDemoNoLeak(t)
	app := newDemoTestApp(3, 0)
	p := demoTestConnect(t, app)
	p.write(`{"type":"handshake_error","code":"UNAUTHORIZED","message":"token missing or wrong"}`)
	err := <-p.connected
	var refused *demoHandshakeError
	if !errors.As(err, &refused) || refused.Code != "UNAUTHORIZED" || !strings.Contains(err.Error(), "token missing or wrong") {
		t.Errorf("connect = %v, want a handshake error naming UNAUTHORIZED and the message", err)
	}
	p.stopOnce.Do(func() { p.conn.CloseNow() })
	if err := app.pushEvents(t.Context(), 1); !errors.Is(err, errDemoNotConnected) {
		t.Errorf("pushEvents after a refused handshake = %v, want errDemoNotConnected", err)
	}
}

func TestDemoConnectServerCloses(t *testing.T) {
	checkDemoNoLeak(t)
	app := newDemoTestApp(3, 0)
	p := demoTestConnect(t, app)
	p.write(demoTestAck)
	p.write(`{"type":"request","id":"1","method":"streams.list"}`)
	p.response("1")
	p.conn.Close(4000, "replaced")
	err := <-p.connected
	if websocket.CloseStatus(err) != 4000 {
		t.Errorf("connect = %v, want the server's close 4000", err)
	}
	p.stopOnce.Do(func() {})
}

func TestDemoPayloadLimit(t *testing.T) {
	big := json.RawMessage(`{"blob":"` + strings.Repeat("b", 8000) + `"}`)
	ack := `{"type":"handshake_ack","protocolVersion":1,"maxPayload":4096}`

	t.Run("answers PAYLOAD_TOO_LARGE", func(t *testing.T) {
		checkDemoNoLeak(t)
		app := newDemoTestApp(3, 0)
		p := demoTestConnect(t, app)
		p.live(ack)
		app.setReduxState(big) // its push is over the limit and skipped
		app.step()
		latest := app.listStreams().Streams[0].LatestSeq

		p.write(`{"type":"request","id":"1","method":"snapshot.get","params":{"stream":"redux","seq":2}}`)
		p.write(`{"type":"request","id":"2","method":"events.query","params":{"stream":"redux","limit":200}}`)
		p.write(`{"type":"request","id":"3","method":"events.query","params":{"stream":"navigation","limit":1}}`)
		responses := map[string]demoTestFrame{}
		seenLatest := false
		for len(responses) < 3 || !seenLatest {
			f := p.next()
			if len(f.raw) > 4096 {
				t.Errorf("frame of %d bytes over maxPayload 4096: %.100s", len(f.raw), f.raw)
			}
			switch f.Type {
			case "response":
				responses[f.ID] = f
			case "event":
				if f.Event.Stream == "redux" && f.Event.Seq == 2 {
					t.Errorf("the oversized state_snapshot was pushed")
				}
				seenLatest = seenLatest || (f.Event.Stream == "redux" && f.Event.Seq == latest)
			}
		}
		for _, id := range []string{"1", "2"} {
			e := responses[id].Error
			if e == nil || e.Code != "PAYLOAD_TOO_LARGE" {
				t.Errorf("response %s = %.200s, want PAYLOAD_TOO_LARGE", id, responses[id].raw)
				continue
			}
			details, _ := e.Details.(map[string]any)
			if bytes, _ := details["bytes"].(float64); bytes <= 4096 || details["maxPayload"] != 4096.0 {
				t.Errorf("response %s details %v, want bytes over maxPayload 4096", id, e.Details)
			}
		}
		if r := responses["3"]; r.Error != nil || r.Result == nil {
			t.Errorf("a small response was refused: %.200s", r.raw)
		}
		if err := p.stop(); err != nil {
			t.Error(err)
		}
	})

	t.Run("SendOversized", func(t *testing.T) {
		checkDemoNoLeak(t)
		app := newDemoApp(demoOptions{Seed: 3, Now: demoTestClock(), SendOversized: true})
		app.setReduxState(big)
		p := demoTestConnect(t, app)
		p.write(ack)
		p.write(`{"type":"request","id":"1","method":"snapshot.get","params":{"stream":"redux"}}`)
		f := p.response("1")
		var s demoTestSnapshot
		if err := json.Unmarshal(f.Result, &s); err != nil || !bytes.Equal(s.State, big) {
			t.Errorf("snapshot.get with SendOversized = %.100s (%v), want the whole state", f.raw, err)
		}
		if err := p.stop(); err != nil {
			t.Error(err)
		}
	})
}

func TestDemoPushEvents(t *testing.T) {
	checkDemoNoLeak(t)
	app := newDemoTestApp(3, 0)
	if err := app.pushEvents(t.Context(), 1); !errors.Is(err, errDemoNotConnected) {
		t.Errorf("pushEvents before connecting = %v, want errDemoNotConnected", err)
	}
	p := demoTestConnect(t, app)
	p.live(demoTestAck)

	const n = 300
	pushed := make(chan error, 1)
	go func() { pushed <- app.pushEvents(t.Context(), n) }()
	for i := range n {
		f := p.next()
		action := struct {
			Action struct{ Type string } `json:"action"`
		}{}
		_ = json.Unmarshal(f.Event.Payload, &action)
		if f.Type != "event" || f.Event.Stream != "redux" || f.Event.Seq != int64(2+i) || f.Event.Type != "action_dispatched" ||
			!strings.HasPrefix(action.Action.Type, "ui/") {
			t.Fatalf("push %d = %.200s, want redux action_dispatched seq %d", i, f.raw, 2+i)
		}
	}
	if err := <-pushed; err != nil {
		t.Errorf("pushEvents = %v", err)
	}
	if err := p.stop(); err != nil {
		t.Error(err)
	}
}

func TestDemoRun(t *testing.T) {
	checkDemoNoLeak(t)
	wsURL, conns := demoTestServer(t)
	app := newDemoTestApp(3, 0)
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() {
		defer close(done)
		app.run(ctx, wsURL, 0, nil)
	}()
	t.Cleanup(func() {
		cancel()
		<-done
	})
	accept := func() *demoTestPeer {
		t.Helper()
		p := &demoTestPeer{t: t}
		p.conn = <-conns
		if err := json.Unmarshal(p.read(), &p.handshake); err != nil || p.handshake["sessionId"] != app.sessionID {
			t.Fatalf("handshake %v: %v", p.handshake, err)
		}
		return p
	}

	// Refused, then dropped by the server, then stopped by the app: run
	// reconnects after each of the first two.
	p := accept()
	p.write(`{"type":"handshake_error","code":"UNAUTHORIZED","message":"token missing"}`)
	p.conn.CloseNow()

	p = accept()
	p.write(demoTestAck)
	p.conn.Close(4000, "replaced")

	p = accept()
	p.write(demoTestAck)
	p.write(`{"type":"request","id":"1","method":"streams.list"}`)
	p.response("1")
	cancel()
	for {
		if _, _, err := p.conn.Read(context.WithoutCancel(t.Context())); err != nil {
			if websocket.CloseStatus(err) != websocket.StatusNormalClosure {
				t.Errorf("run closed with %v, want 1000", err)
			}
			break
		}
	}
	<-done
}

// demoGoroutines counts the goroutines running demoApp or demoLink code.
func demoGoroutines() int {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	count := 0
	for _, g := range bytes.Split(buf, []byte("\n\n")) {
		if bytes.Contains(g, []byte("(*demoApp)")) || bytes.Contains(g, []byte("(*demoLink)")) {
			count++
		}
	}
	return count
}

// checkDemoNoLeak fails the test when, after its cleanups, more goroutines
// run demo code than before it. connect and run wait for their goroutines
// before returning, but a goroutine that has just called wg.Done is still
// listed until it has returned, so the count is polled with a deadline.
func checkDemoNoLeak(t *testing.T) {
	t.Helper()
	before := demoGoroutines()
	t.Cleanup(func() {
		for deadline := time.Now().Add(5 * time.Second); ; {
			after := demoGoroutines()
			if after <= before {
				return
			}
			if time.Now().After(deadline) {
				t.Errorf("%d goroutines running demo code outlived the test", after-before)
				return
			}
			time.Sleep(time.Millisecond) // polling with a deadline
		}
	})
}

// TestDemoConcurrent runs steps, snapshot requests and pushEvents at once
// (for the race detector) and checks pushes stay in seq order per stream.
func TestDemoConcurrent(t *testing.T) {
	checkDemoNoLeak(t)
	app := newDemoTestApp(11, 0)
	p := demoTestConnect(t, app)
	p.live(demoTestAck)

	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for range 25 {
				app.step()
				app.handle("snapshot.get", json.RawMessage(`{"stream":"navigation"}`))
			}
		})
	}
	wg.Go(func() {
		if err := app.pushEvents(t.Context(), 50); err != nil {
			t.Errorf("pushEvents: %v", err)
		}
	})
	for i := range 20 {
		p.write(fmt.Sprintf(`{"type":"request","id":"r%d","method":"snapshot.get","params":{"stream":"redux"}}`, i))
	}

	// pushEvents flushes every push queued before its own: once its last
	// event arrives, all earlier pushes have.
	finalSeq := make(chan int64, 1)
	go func() {
		wg.Wait()
		err := app.pushEvents(t.Context(), 1)
		if err != nil {
			t.Errorf("final pushEvents: %v", err)
		}
		finalSeq <- app.listStreams().Streams[0].LatestSeq
	}()
	// Frames are read on their own goroutine, the connection's only reader
	// until it closes, so that the final seq can arrive while a read waits:
	// a read that blocked after the last frame and before the final seq
	// would wait for ever.
	type read struct {
		data []byte
		err  error
	}
	reads := make(chan read)
	go func() {
		for {
			typ, data, err := p.conn.Read(context.Background())
			if err == nil && typ != websocket.MessageText {
				continue
			}
			select {
			case reads <- read{data, err}:
			case <-t.Context().Done(): // the test failed midway
				return
			}
			if err != nil {
				return
			}
		}
	}()
	last := map[string]int64{}
	responses := 0
	final := int64(-1)
	for responses < 20 || final < 0 || last["redux"] < final {
		var r read
		select {
		case final = <-finalSeq:
			continue
		case r = <-reads:
		}
		if r.err != nil {
			t.Fatalf("server read: %v", r.err)
		}
		f := demoTestFrame{raw: r.data}
		if err := json.Unmarshal(r.data, &f); err != nil {
			t.Fatalf("frame %.200s: %v", r.data, err)
		}
		switch f.Type {
		case "response":
			if f.Error != nil {
				t.Errorf("response %s: %v", f.ID, f.Error)
			}
			responses++
		case "event":
			if f.Event.Seq <= last[f.Event.Stream] {
				t.Fatalf("%s push seq %d after seq %d", f.Event.Stream, f.Event.Seq, last[f.Event.Stream])
			}
			last[f.Event.Stream] = f.Event.Seq
		}
	}
	// What p.stop does, through the reader: the app closes with 1000.
	p.stopOnce.Do(func() {
		p.cancel()
		for r := range reads {
			if r.err != nil {
				if status := websocket.CloseStatus(r.err); status != websocket.StatusNormalClosure {
					t.Errorf("app closed with %v (%v), want 1000", status, r.err)
				}
				break
			}
		}
		if err := <-p.connected; err != nil {
			t.Errorf("connect returned %v after cancel, want nil", err)
		}
		p.conn.CloseNow()
	})
}

// demoBigState is a Redux state of about size bytes.
func demoBigState(size int) json.RawMessage {
	var b bytes.Buffer
	b.WriteString(`{"catalog":{"byId":{`)
	for i := 0; b.Len() < size; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `"P-%d":{"sku":"P-%d","name":"Product number %d","price":%d.99,"tags":["a","b","c"]}`, i, i, i, i%100)
	}
	b.WriteString(`}}}`)
	return b.Bytes()
}

// BenchmarkDemoSnapshotResponse measures answering snapshot.get of a 5 MB
// state up to the bytes of the frame (no socket).
func BenchmarkDemoSnapshotResponse(b *testing.B) {
	app := newDemoApp(demoOptions{Seed: 1})
	app.setReduxState(demoBigState(5 << 20))
	quotedID := demoAppendString(nil, "17")
	var buf []byte
	b.ReportAllocs()
	for b.Loop() {
		result, werr := app.handle("snapshot.get", json.RawMessage(`{"stream":"redux"}`))
		if werr != nil {
			b.Fatal(werr)
		}
		buf = demoAppendResponse(buf[:0], quotedID, result, nil)
		b.SetBytes(int64(len(buf)))
	}
}

// BenchmarkDemoSnapshotOverSocket measures snapshot.get of a 5 MB state
// through a loopback WebSocket, request to response.
func BenchmarkDemoSnapshotOverSocket(b *testing.B) {
	app := newDemoApp(demoOptions{Seed: 1})
	app.setReduxState(demoBigState(5 << 20))
	accepted := make(chan *websocket.Conn, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := websocket.Accept(w, r, nil)
		if err == nil {
			c.SetReadLimit(64 << 20)
			accepted <- c
		}
	}))
	defer srv.Close()
	ctx, cancel := context.WithCancel(b.Context())
	done := make(chan error, 1)
	go func() { done <- app.connect(ctx, "ws"+strings.TrimPrefix(srv.URL, "http")) }()
	c := <-accepted
	defer c.CloseNow()
	if _, _, err := c.Read(b.Context()); err != nil {
		b.Fatal(err)
	}
	ack := `{"type":"handshake_ack","protocolVersion":1,"maxPayload":67108864}`
	if err := c.Write(b.Context(), websocket.MessageText, []byte(ack)); err != nil {
		b.Fatal(err)
	}
	req := []byte(`{"type":"request","id":"1","method":"snapshot.get","params":{"stream":"redux"}}`)
	b.ReportAllocs()
	for b.Loop() {
		if err := c.Write(b.Context(), websocket.MessageText, req); err != nil {
			b.Fatal(err)
		}
		for {
			_, data, err := c.Read(b.Context())
			if err != nil {
				b.Fatal(err)
			}
			if bytes.HasPrefix(data, []byte(`{"type":"response"`)) {
				b.SetBytes(int64(len(data)))
				break
			}
		}
	}
	b.StopTimer()
	cancel()
	for {
		if _, _, err := c.Read(context.WithoutCancel(b.Context())); err != nil {
			break
		}
	}
	if err := <-done; err != nil {
		b.Error(err)
	}
}
