//go:build unix

package main

// End-to-end benchmarks: the whole server, in process through serve and as
// the built binary, with the simulated app on a real loopback WebSocket.
// Each measures what one performance target is stated in (named in its
// comment) and reports time, allocations and custom metrics; they check
// every answer but never assert on time or memory.
//
// Run them properly with, for example:
//
//	go test -run '^$' -bench 'Pipelined|Startup' -benchtime=200x -count=5
//	go test -run '^$' -bench 'StatePath|Snapshot|UnmarshalState' -count=5
//	go test -run '^$' -bench 'Ingest' -benchtime=100000x -count=5
//	go test -run '^$' -bench 'Resident' -benchtime=1x -count=5
//
// This file is unix-only: it reads process CPU time with getrusage and, on
// Linux, resident sizes from /proc.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"
)

// benchPipelinedCalls is how many tools/call one op of the pipelined benchmarks
// sends before reading any reply.
const benchPipelinedCalls = 1000

// benchMaxPayload is the MAX_PAYLOAD_SIZE and MAX_RESULT_BYTES of the
// benchmarks that move whole multi-megabyte states: the 5 MB state's
// snapshot.get frame and its unscoped tool result both fit.
const benchMaxPayload = 16 << 20

// Paths into the generated state (state_gen_test.go) of every size: a small
// leaf past the 95% of the encoding that catalog takes, so that resolving
// it scans almost the whole state; and a mid-size subtree, about 5% of it
// (25 KB of 512 KB, 260 KB of 5 MB).
const (
	benchLeafPath  = `users.byId["1000"].email`
	benchScopePath = `users.byId`
)

// benchStateSizes are the sizes of the end-to-end state benchmarks.
var benchStateSizes = []struct {
	name  string
	bytes int
}{
	{"512KB", 512 << 10},
	{"5MB", 5 << 20},
}

// ---------------------------------------------------------------------------
// A line-oriented MCP client for the server's stdio, usable from benchmarks.

// benchClient talks MCP to a server through its stdin and stdout. Its
// methods must be called from the benchmark's goroutine.
type benchClient struct {
	tb     testing.TB
	w      io.Writer     // the server's stdin
	r      *bufio.Reader // the server's stdout
	line   []byte        // the last line read, reused
	req    []byte        // the last request written, reused
	nextID int64
}

func benchNewClient(tb testing.TB, stdin io.Writer, stdout io.Reader) *benchClient {
	return &benchClient{tb: tb, w: stdin, r: bufio.NewReaderSize(stdout, 1<<20), nextID: 1 << 20}
}

// readLine returns the next stdout line without its newline; it is valid
// until the next call.
func (c *benchClient) readLine() []byte {
	c.tb.Helper()
	c.line = c.line[:0]
	for {
		chunk, err := c.r.ReadSlice('\n')
		c.line = append(c.line, chunk...)
		switch {
		case err == nil:
			return c.line[:len(c.line)-1]
		case !errors.Is(err, bufio.ErrBufferFull):
			c.tb.Fatalf("reading the server's stdout: %v (after %q)", err, benchClip(c.line))
		}
	}
}

// benchReplyPrefix is how every reply line to a request with an integer id starts
// (encodeReply writes the envelope by hand, in this order).
func benchReplyPrefix(dst []byte, id int64) []byte {
	dst = append(dst, `{"jsonrpc":"2.0","id":`...)
	dst = strconv.AppendInt(dst, id, 10)
	return append(dst, ',')
}

// benchNotificationPrefix starts every notification line (json.Marshal of a map
// sorts its keys).
var benchNotificationPrefix = []byte(`{"jsonrpc":"2.0","method":`)

// benchOKToolSuffix ends the reply line of a successful tool call.
var benchOKToolSuffix = []byte(`,"isError":false}}`)

// reply reads lines until the reply to id, skipping notifications.
func (c *benchClient) reply(id int64) []byte {
	c.tb.Helper()
	var prefix [64]byte
	want := benchReplyPrefix(prefix[:0], id)
	for {
		line := c.readLine()
		if bytes.HasPrefix(line, want) {
			return line
		}
		if !bytes.HasPrefix(line, benchNotificationPrefix) {
			c.tb.Fatalf("waiting for the reply to %d, got %q", id, benchClip(line))
		}
	}
}

// send writes one request line.
func (c *benchClient) send(line []byte) {
	c.tb.Helper()
	if _, err := c.w.Write(line); err != nil {
		c.tb.Fatalf("writing the server's stdin: %v", err)
	}
}

func (c *benchClient) initialize() {
	c.tb.Helper()
	c.send([]byte(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}` + "\n"))
	if line := c.reply(0); !bytes.Contains(line, []byte(`"protocolVersion":"2025-11-25"`)) {
		c.tb.Fatalf("initialize: %q", benchClip(line))
	}
	c.send([]byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n"))
}

// benchAppendToolCall appends a tools/call request line; args is a JSON object
// or empty.
func benchAppendToolCall(dst []byte, id int64, name, args string) []byte {
	dst = append(dst, `{"jsonrpc":"2.0","id":`...)
	dst = strconv.AppendInt(dst, id, 10)
	dst = append(dst, `,"method":"tools/call","params":{"name":`...)
	dst = strconv.AppendQuote(dst, name)
	if args != "" {
		dst = append(dst, `,"arguments":`...)
		dst = append(dst, args...)
	}
	return append(dst, "}}\n"...)
}

// tool calls a tool and returns the whole reply line, failing unless the
// call succeeded. The line is valid until the next read.
func (c *benchClient) tool(name, args string) []byte {
	c.tb.Helper()
	c.nextID++
	c.req = benchAppendToolCall(c.req[:0], c.nextID, name, args)
	c.send(c.req)
	line := c.reply(c.nextID)
	if !bytes.HasSuffix(line, benchOKToolSuffix) {
		c.tb.Fatalf("%s %s failed: %q", name, args, benchClip(line))
	}
	return line
}

// structured returns the structuredContent of a successful tool reply line.
func (c *benchClient) structured(line []byte) json.RawMessage {
	c.tb.Helper()
	var reply struct {
		Result struct {
			StructuredContent json.RawMessage `json:"structuredContent"`
		} `json:"result"`
	}
	if err := json.Unmarshal(line, &reply); err != nil || reply.Result.StructuredContent == nil {
		c.tb.Fatalf("malformed tool reply (%v): %q", err, benchClip(line))
	}
	return reply.Result.StructuredContent
}

// waitHealth polls debug_health_check until ok holds, with a deadline.
func (c *benchClient) waitHealth(ok func(healthOut) bool) healthOut {
	c.tb.Helper()
	for deadline := time.Now().Add(10 * time.Second); ; {
		var h healthOut
		res := c.structured(c.tool("debug_health_check", ""))
		if err := json.Unmarshal(res, &h); err != nil {
			c.tb.Fatal(err)
		}
		if ok(h) {
			return h
		}
		if time.Now().After(deadline) {
			c.tb.Fatalf("health never reached the wanted state: %s", res)
		}
		time.Sleep(2 * time.Millisecond) // polling with a deadline
	}
}

// pipeline writes lines (requests with the ids in ids, in any order the
// server likes to answer them) from another goroutine while reading the
// replies, skipping notifications; it fails unless every id got exactly one
// successful tool reply.
func (c *benchClient) pipeline(lines []byte, ids []int64) {
	c.tb.Helper()
	written := make(chan error, 1)
	go func() {
		_, err := c.w.Write(lines)
		written <- err
	}()
	pending := make(map[int64]bool, len(ids))
	for _, id := range ids {
		pending[id] = true
	}
	idStart := len(`{"jsonrpc":"2.0","id":`)
	for len(pending) > 0 {
		line := c.readLine()
		if bytes.HasPrefix(line, benchNotificationPrefix) {
			continue
		}
		end := bytes.IndexByte(line[min(idStart, len(line)):], ',')
		var id int64
		var err error
		if end >= 0 && bytes.HasPrefix(line, []byte(`{"jsonrpc":"2.0","id":`)) {
			id, err = strconv.ParseInt(string(line[idStart:idStart+end]), 10, 64)
		}
		if end < 0 || err != nil || !pending[id] || !bytes.HasSuffix(line, benchOKToolSuffix) {
			// The writer ends when the cleanup closes the server's stdin.
			c.tb.Fatalf("unexpected reply while %d are pending: %q", len(pending), benchClip(line))
		}
		delete(pending, id)
	}
	if err := <-written; err != nil {
		c.tb.Fatalf("writing the server's stdin: %v", err)
	}
}

func benchClip(b []byte) string {
	if len(b) > 600 {
		return string(b[:600]) + fmt.Sprintf("… (%d bytes)", len(b))
	}
	return string(b)
}

// ---------------------------------------------------------------------------
// The server in process and the simulated app.

// benchConfig is the default configuration with the listener on any free
// loopback port; logs keep the default level (they go to io.Discard).
func benchConfig(tb testing.TB) config {
	tb.Helper()
	cfg, err := loadConfig(nil, func(string) string { return "" })
	if err != nil {
		tb.Fatal(err)
	}
	cfg.WSPort = 0
	cfg.MetroURL = ""      // a Metro running on this machine must not change the figures
	cfg.NativeLogs = false // nor an adb or a device of this machine
	return cfg
}

// benchStartServer runs serve(cfg) with pipes until the benchmark ends and
// returns an initialized client.
func benchStartServer(tb testing.TB, cfg config) *benchClient {
	tb.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		err := serve(ctx, cfg, inR, outW, io.Discard)
		outW.Close()
		done <- err
	}()
	tb.Cleanup(func() {
		drained := make(chan struct{})
		go func() {
			_, _ = io.Copy(io.Discard, outR)
			close(drained)
		}()
		inW.Close()
		select {
		case err := <-done:
			if err != nil {
				tb.Errorf("serve: %v", err)
			}
		case <-time.After(10 * time.Second):
			tb.Error("server did not stop after stdin closed")
			cancel()
			<-done
		}
		cancel()
		<-drained
	})
	c := benchNewClient(tb, inW, outR)
	c.initialize()
	return c
}

// benchConnectApp connects a simulated app, whose Redux state is state when
// not nil, to the server behind c, and waits until the server reports it
// connected. The app disconnects when the benchmark ends. It offers no
// path requests: these benchmarks measure the server slicing whole states.
func benchConnectApp(tb testing.TB, c *benchClient, state json.RawMessage) *demoApp {
	tb.Helper()
	return benchConnectAppWith(tb, c, state, demoOptions{Seed: 7, WithoutPathRequests: true})
}

// benchConnectAppWith is benchConnectApp with the app's options.
func benchConnectAppWith(tb testing.TB, c *benchClient, state json.RawMessage, opts demoOptions) *demoApp {
	tb.Helper()
	app := newDemoApp(opts)
	if state != nil {
		app.setReduxState(state) // before connecting: the big snapshot is not pushed
	}
	connectDemoApp(tb, c, app)
	return app
}

// healthWaiter is a test's client of a server: it polls debug_health_check
// until ok holds.
type healthWaiter interface {
	waitHealth(ok func(healthOut) bool) healthOut
}

// connectDemoApp connects app to the server behind c, as a user would find
// it (from debug_health_check), and waits until the server reports it
// connected. The app disconnects when the test ends.
func connectDemoApp(tb testing.TB, c healthWaiter, app *demoApp) {
	tb.Helper()
	url := c.waitHealth(func(h healthOut) bool { return h.Server.Listening }).Server.WSURL
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- app.connect(ctx, url) }()
	tb.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			tb.Errorf("demo app: %v", err)
		}
	})
	c.waitHealth(func(h healthOut) bool { return h.Connected })
}

// ---------------------------------------------------------------------------
// The built binary.

// benchBuildBinary builds the program into a temporary directory that lives as
// long as the benchmark; with b.Loop the benchmark function, and so the
// build, runs once per -count.
func benchBuildBinary(b *testing.B) string {
	b.Helper()
	goCmd, err := exec.LookPath("go")
	if err != nil {
		b.Skipf("no go command to build the binary with: %v", err)
	}
	bin := filepath.Join(b.TempDir(), "devtools-mcp")
	// Built as docs/install.md says to build it: static, without cgo, which
	// saves the dynamic loader about a millisecond per start.
	cmd := exec.Command(goCmd, "build", "-o", bin, ".")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// benchFreePort returns a loopback TCP port that was free a moment ago. The
// binary retries a taken port and serves MCP meanwhile, so a lost race only
// shows in debug_health_check.
func benchFreePort(tb testing.TB) string {
	tb.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	defer l.Close()
	return strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
}

// benchBinaryEnv is the environment of the binary: ours without the server's
// settings, so that a developer's WS_PORT or MAX_RESULT_BYTES cannot change
// what is measured; settings are passed as flags.
func benchBinaryEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if !benchIsSettingEnv(name) {
			env = append(env, kv)
		}
	}
	// A Metro running on this machine must not join the session measured.
	return append(env, "METRO_URL=off", "NATIVE_LOGS=off") // nor may an adb or a device of this machine
}

func benchIsSettingEnv(name string) bool {
	for _, s := range settings {
		if s.env == name {
			return true
		}
	}
	return false
}

// benchBinaryProc is the binary running with pipes for stdin and stdout.
type benchBinaryProc struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	stderr *lockedBuffer
	*benchClient
}

func benchStartBinary(b *testing.B, bin string, args ...string) *benchBinaryProc {
	b.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = benchBinaryEnv()
	stdin, err := cmd.StdinPipe()
	if err != nil {
		b.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	p := &benchBinaryProc{cmd: cmd, stdin: stdin, stderr: &lockedBuffer{}}
	cmd.Stderr = p.stderr
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		if p.cmd.ProcessState == nil { // not stopped: the benchmark failed
			_ = p.cmd.Process.Kill()
			_ = p.cmd.Wait()
		}
	})
	p.benchClient = benchNewClient(b, stdin, stdout)
	return p
}

// stop closes stdin and waits for the binary to exit, failing unless it
// exits with status 0 within a deadline.
func (p *benchBinaryProc) stop() {
	p.tb.Helper()
	p.stdin.Close()
	exited := make(chan error, 1)
	go func() {
		_, _ = io.Copy(io.Discard, p.r) // replies nobody waits for must not block the exit
		exited <- p.cmd.Wait()
	}()
	select {
	case err := <-exited:
		if err != nil {
			p.tb.Fatalf("binary: %v\n%s", err, p.stderr)
		}
	case <-time.After(10 * time.Second):
		_ = p.cmd.Process.Kill()
		<-exited
		p.tb.Fatalf("binary did not exit after stdin closed\n%s", p.stderr)
	}
}

// benchProcStatusKB reads one "Vm…:  1234 kB" field of /proc/pid/status.
func benchProcStatusKB(tb testing.TB, pid int, field string) int64 {
	tb.Helper()
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		tb.Fatal(err)
	}
	for line := range strings.SplitSeq(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, field+":"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			if err != nil {
				tb.Fatalf("%s: %q", field, line)
			}
			return kb
		}
	}
	tb.Fatalf("no %s in /proc/%d/status", field, pid)
	return 0
}

// ---------------------------------------------------------------------------
// MCP on stdio: pipelined calls and startup.

// benchHealthChecks is n pipelined debug_health_check calls with ids 1..n.
func benchHealthChecks(n int) ([]byte, []int64) {
	var lines []byte
	ids := make([]int64, n)
	for i := range n {
		ids[i] = int64(i + 1)
		lines = benchAppendToolCall(lines, ids[i], "debug_health_check", "")
	}
	return lines, ids
}

// BenchmarkPipelinedHealthChecks: one op is 1 000 debug_health_check calls
// written at once to a running, initialized server (serve, with pipes; no
// app connected), until every reply has been read.
func BenchmarkPipelinedHealthChecks(b *testing.B) {
	c := benchStartServer(b, benchConfig(b))
	lines, ids := benchHealthChecks(benchPipelinedCalls)
	b.ReportAllocs()
	for b.Loop() {
		c.pipeline(lines, ids)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*benchPipelinedCalls), "ns/call")
}

// BenchmarkBinaryPipelinedHealthChecks: one op is the built binary started
// with stdin holding initialize and 1 000 debug_health_check calls, until it
// has exited after answering them all. Target: median ≤ 15 ms.
func BenchmarkBinaryPipelinedHealthChecks(b *testing.B) {
	bin := benchBuildBinary(b)
	port := benchFreePort(b)
	calls, _ := benchHealthChecks(benchPipelinedCalls)
	input := []byte(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}` + "\n" +
		`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n")
	input = append(input, calls...)
	var stdout, stderr bytes.Buffer
	env := benchBinaryEnv()
	for b.Loop() {
		stdout.Reset()
		stderr.Reset()
		cmd := exec.Command(bin, "-ws-port", port)
		cmd.Env = env
		cmd.Stdin = bytes.NewReader(input)
		cmd.Stdout = &stdout
		cmd.Stderr = &stderr
		if err := cmd.Run(); err != nil {
			b.Fatalf("binary: %v\n%s", err, stderr.Bytes())
		}
		if lines, ok := bytes.Count(stdout.Bytes(), []byte("\n")), bytes.Count(stdout.Bytes(), benchOKToolSuffix); lines != benchPipelinedCalls+1 || ok != benchPipelinedCalls {
			b.Fatalf("%d reply lines, %d successful calls; want %d and %d\n%s", lines, ok, benchPipelinedCalls+1, benchPipelinedCalls, benchClip(stdout.Bytes()))
		}
	}
}

// BenchmarkStartup: one op starts the built binary, writes initialize, reads
// the reply, closes stdin and waits for the exit. Target: median ≤ 5 ms.
func BenchmarkStartup(b *testing.B) {
	bin := benchBuildBinary(b)
	port := benchFreePort(b)
	for b.Loop() {
		p := benchStartBinary(b, bin, "-ws-port", port)
		p.initialize()
		p.stop()
	}
}

// ---------------------------------------------------------------------------
// Large states, end to end.

// benchToolOnState measures one tool call per op against a server whose
// connected app holds the generated state of each size; configure, if
// given, changes the server's settings.
func benchToolOnState(b *testing.B, name string, args map[string]any, configure ...func(*config)) {
	for _, size := range benchStateSizes {
		b.Run(size.name, func(b *testing.B) {
			state := benchStateOfSize(b, size.bytes).baseJSON
			cfg := benchConfig(b)
			cfg.MaxPayloadSize = benchMaxPayload
			cfg.MaxResultBytes = benchMaxPayload
			for _, f := range configure {
				f(&cfg)
			}
			c := benchStartServer(b, cfg)
			benchConnectApp(b, c, state)
			rawArgs, err := json.Marshal(args)
			if err != nil {
				b.Fatal(err)
			}
			line := c.tool(name, string(rawArgs)) // warm: buffers grown, answer checked
			if !bytes.Contains(line, []byte(`"structuredContent":{`)) {
				b.Fatalf("%s: %q", name, benchClip(line))
			}
			runtime.GC()
			b.SetBytes(int64(len(state)))
			b.ReportAllocs()
			var replyBytes int
			for b.Loop() {
				replyBytes = len(c.tool(name, string(rawArgs)))
			}
			b.ReportMetric(float64(replyBytes), "reply-B")
		})
	}
}

// BenchmarkStatePath: debug_get_state_path of a small leaf near the end of
// the state. Targets: 512KB ≤ 2× BenchmarkUnmarshalState/512KB; 5MB ≤ 11×
// the 512KB figure.
func BenchmarkStatePath(b *testing.B) {
	benchToolOnState(b, "debug_get_state_path", map[string]any{"path": benchLeafPath})
}

// BenchmarkStatePathPushDown: debug_get_state_path of the same leaf on
// 5 KB, 512 KB and 5 MB states, with the path pushed down to the app
// (default settings) and without (the app predates snapshot.path and sends
// the whole state, so MAX_PAYLOAD_SIZE must exceed 5 MB). Target: pushed
// down, 5 MB within 1.5× of 5 KB.
func BenchmarkStatePathPushDown(b *testing.B) {
	args := `{"path":` + strconv.Quote(benchLeafPath) + `}`
	for _, mode := range []struct {
		name     string
		withPath bool
	}{{"pushed", true}, {"whole", false}} {
		for _, size := range []struct {
			name  string
			bytes int
		}{{"5KB", 5 << 10}, {"512KB", 512 << 10}, {"5MB", 5 << 20}} {
			b.Run(mode.name+"/"+size.name, func(b *testing.B) {
				state := benchStateOfSize(b, size.bytes).baseJSON
				cfg := benchConfig(b)
				if !mode.withPath {
					cfg.MaxPayloadSize = benchMaxPayload
				}
				c := benchStartServer(b, cfg)
				benchConnectAppWith(b, c, state, demoOptions{Seed: 7, WithoutPathRequests: !mode.withPath})
				line := c.tool("debug_get_state_path", args) // warm: the app decodes its state once
				if !bytes.Contains(line, []byte(`"structuredContent":{"path"`)) {
					b.Fatalf("%q", benchClip(line))
				}
				runtime.GC()
				b.ReportAllocs()
				for b.Loop() {
					c.tool("debug_get_state_path", args)
				}
			})
		}
	}
}

// BenchmarkSnapshot: debug_get_snapshot of the whole Redux state (the reply
// line carries it twice, as text and as structuredContent).
func BenchmarkSnapshot(b *testing.B) {
	benchToolOnState(b, "debug_get_snapshot", map[string]any{"stream": "redux"})
}

// BenchmarkSnapshotRedactOff is BenchmarkSnapshot with REDACT=off: the
// difference is what redaction of a whole state costs end to end.
func BenchmarkSnapshotRedactOff(b *testing.B) {
	benchToolOnState(b, "debug_get_snapshot", map[string]any{"stream": "redux"}, func(c *config) { c.Redact = false })
}

// BenchmarkSnapshotScope: debug_get_snapshot of a subtree of about 5% of
// the Redux state.
func BenchmarkSnapshotScope(b *testing.B) {
	benchToolOnState(b, "debug_get_snapshot", map[string]any{"stream": "redux", "scope": benchScopePath})
}

// BenchmarkUnmarshalState is the reference of the state benchmarks: one
// json.Unmarshal into any of the same state bytes. (BenchmarkUnmarshal
// decodes with UseNumber through a json.Decoder, as diffs do.)
func BenchmarkUnmarshalState(b *testing.B) {
	for _, size := range benchStateSizes {
		b.Run(size.name, func(b *testing.B) {
			data := benchStateOfSize(b, size.bytes).baseJSON
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			for b.Loop() {
				var v any
				if err := json.Unmarshal(data, &v); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// ---------------------------------------------------------------------------
// Ingest.

// ---------------------------------------------------------------------------
// Resident memory of the binary.
