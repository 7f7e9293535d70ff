package main

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"
)

// TestMain fails the run when goroutines of this program outlive the tests.
func TestMain(m *testing.M) {
	if v := os.Getenv(nativeStandinEnv); v != "" {
		os.Exit(runNativeStandin(v, os.Args[1:])) // a stand-in adb or xcrun (native_standin_test.go)
	}
	if os.Getenv(runAsProgramEnv) == "1" {
		// Re-executed by a test as the program itself, on real pipes.
		main()
		os.Exit(0)
	}
	// The tests spend most of their time waiting on sockets, pipes and
	// timers, not on the CPU: unless -test.parallel says otherwise, run
	// more of them at once than the GOMAXPROCS that go test defaults to
	// (on two cores the suite took 15 s at 2, 9 s at 8). Fuzzing is left
	// alone: there -test.parallel is the number of fuzzing processes.
	flag.Parse()
	parallelSet := false
	flag.Visit(func(f *flag.Flag) { parallelSet = parallelSet || f.Name == "test.parallel" })
	if fuzz := flag.Lookup("test.fuzz"); !parallelSet && (fuzz == nil || fuzz.Value.String() == "") {
		_ = flag.Set("test.parallel", strconv.Itoa(max(8, 4*runtime.GOMAXPROCS(0))))
	}
	code := m.Run()
	if code == 0 {
		if leaked := leakedGoroutines(10 * time.Second); leaked != "" {
			fmt.Fprintf(os.Stderr, "FAIL: goroutines outlived the tests:\n%s\n", leaked)
			code = 1
		}
	}
	os.Exit(code)
}

// leakedGoroutines polls until no goroutine runs code of this package or of
// the WebSocket library, or the deadline passes; it returns their stacks.
func leakedGoroutines(deadline time.Duration) string {
	var leaked []string
	for end := time.Now().Add(deadline); ; {
		leaked = leaked[:0]
		buf := make([]byte, 1<<20)
		buf = buf[:runtime.Stack(buf, true)]
		for g := range strings.SplitSeq(string(buf), "\n\n") {
			if strings.Contains(g, "leakedGoroutines") || strings.Contains(g, "testing.tRunner") {
				continue
			}
			if strings.Contains(g, "\nmain.") || strings.Contains(g, "coder/websocket") {
				leaked = append(leaked, g)
			}
		}
		if len(leaked) == 0 || time.Now().After(end) {
			return strings.Join(leaked, "\n\n")
		}
		time.Sleep(10 * time.Millisecond) // polling with a deadline, not synchronisation
	}
}

// testConfig is the default configuration with the listener on any free
// loopback port and logs at debug level.
func testConfig(t *testing.T) config {
	t.Helper()
	cfg, err := loadConfig(nil, func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	cfg.WSPort = 0
	cfg.Reactotron = false // off; bridge tests turn it on, on any free port (ReactotronPort 0)
	cfg.ReactotronPort = 0
	cfg.MetroURL = ""      // off: no test may depend on a Metro running on this machine
	cfg.NativeLogs = false // off: no test may depend on an adb or a device of this machine
	cfg.LogLevel = slog.LevelDebug
	cfg.Tune.ListChanged = time.Millisecond // tests that count list_changed set their own
	return cfg
}

// testServer is the whole program running through serve with pipes.
type testServer struct {
	t      *testing.T
	stdin  *io.PipeWriter
	lines  chan string // stdout, line by line
	stderr *lockedBuffer
	done   chan error
	stop   context.CancelFunc // what SIGINT and SIGTERM do in main
}

// startServer runs serve(cfg) until the test ends; stdin closes at cleanup.
func startServer(t *testing.T, cfg config) *testServer {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	ts := &testServer{t: t, stdin: inW, lines: make(chan string, 1024), stderr: &lockedBuffer{}, done: make(chan error, 1)}
	ctx, cancel := context.WithCancel(context.Background())
	ts.stop = cancel
	go func() {
		err := serve(ctx, cfg, inR, outW, ts.stderr)
		outW.Close()
		ts.done <- err
	}()
	readerDone := make(chan struct{})
	go func() {
		defer close(readerDone)
		defer close(ts.lines)
		scanner := bufio.NewScanner(outR)
		scanner.Buffer(make([]byte, 1<<20), 64<<20)
		for scanner.Scan() {
			ts.lines <- scanner.Text()
		}
	}()
	t.Cleanup(func() {
		inW.Close()
		select {
		case <-ts.done:
		case <-time.After(10 * time.Second):
			t.Error("server did not stop after stdin closed")
			cancel()
			<-ts.done
		}
		cancel()
		for range ts.lines {
		}
		<-readerDone
	})
	return ts
}

func (ts *testServer) send(lines ...string) {
	ts.t.Helper()
	for _, l := range lines {
		if _, err := io.WriteString(ts.stdin, l+"\n"); err != nil {
			ts.t.Fatalf("write stdin: %v", err)
		}
	}
}

// next returns the next stdout line, failing the test after a generous deadline.
func (ts *testServer) next() string {
	ts.t.Helper()
	select {
	case l, ok := <-ts.lines:
		if !ok {
			ts.t.Fatal("stdout closed while waiting for a line")
		}
		return l
	case <-time.After(20 * time.Second):
		ts.t.Fatal("no line on stdout within 20s")
	}
	return ""
}

// call sends a request and returns its reply, skipping notifications.
func (ts *testServer) call(id int, method string, params any) map[string]any {
	ts.t.Helper()
	req := map[string]any{"jsonrpc": "2.0", "id": id, "method": method}
	if params != nil {
		req["params"] = params
	}
	data, _ := json.Marshal(req)
	ts.send(string(data))
	for {
		var msg map[string]any
		line := ts.next()
		if err := json.Unmarshal([]byte(line), &msg); err != nil {
			ts.t.Fatalf("stdout line is not JSON: %v: %q", err, line)
		}
		if msg["id"] == float64(id) {
			return msg
		}
		if _, isNotification := msg["method"]; !isNotification {
			ts.t.Fatalf("reply to another request while waiting for id %d: %s", id, line)
		}
	}
}

func (ts *testServer) initialize() {
	ts.t.Helper()
	ts.call(0, "initialize", map[string]any{"protocolVersion": "2025-11-25", "capabilities": map[string]any{},
		"clientInfo": map[string]any{"name": "test", "version": "1"}})
	ts.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
}

// lockedBuffer is a bytes.Buffer safe for the concurrent writes of a logger.
type lockedBuffer struct {
	mu  sync.Mutex
	buf strings.Builder
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// TestStopClosesAdaptersWith1001 cancels the context as SIGTERM does, with
// stdin still open and an adapter connected: serve returns nil, and the
// adapter sees close code 1001.
func TestStopClosesAdaptersWith1001(t *testing.T) {
	ts := startServer(t, testConfig(t))
	ts.initialize()
	e := &e2e{testServer: ts}
	url := e.waitHealth(func(h healthOut) bool { return h.Server.Listening }).Server.WSURL
	c, _, err := websocket.Dial(t.Context(), url, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseNow()
	hs := `{"type":"handshake","protocolVersion":1,"sessionId":"s","adapterVersion":"1","streams":[]}`
	if err := c.Write(t.Context(), websocket.MessageText, []byte(hs)); err != nil {
		t.Fatal(err)
	}
	if _, ack, err := c.Read(t.Context()); err != nil || !strings.Contains(string(ack), "handshake_ack") {
		t.Fatalf("handshake: %s %v", ack, err)
	}
	expectGoingAway := readUntilClosed(t, c)
	ts.stop()
	if err := <-ts.done; err != nil {
		t.Errorf("serve after stop: %v, want nil (exit 0)", err)
	}
	ts.done <- nil // for the cleanup
	expectGoingAway()
}

// runAsProgramEnv, set to 1 in the environment of a re-executed test binary,
// makes it run main instead of the tests (see closedpipe_test.go).
const runAsProgramEnv = "DEVTOOLS_MCP_TEST_RUN_MAIN"

// TestHTTPShutdownFitsTheGrace holds the HTTP transport's wait for requests
// being served within the process's shutdown grace, leaving time for the
// rest of the shutdown.
func TestHTTPShutdownFitsTheGrace(t *testing.T) {
	if httpShutdownWait > shutdownGrace/2 {
		t.Errorf("httpShutdownWait = %v, over half of shutdownGrace (%v)", httpShutdownWait, shutdownGrace)
	}
}
