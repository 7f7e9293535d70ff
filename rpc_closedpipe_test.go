//go:build unix

package main

import (
	"bufio"
	"context"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/coder/websocket"
)

// connectTestAdapter dials wsURL, handshakes and waits for the ack.
func connectTestAdapter(t *testing.T, wsURL string) *websocket.Conn {
	t.Helper()
	c, _, err := websocket.Dial(t.Context(), wsURL, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.CloseNow() })
	hs := `{"type":"handshake","protocolVersion":1,"sessionId":"s","adapterVersion":"1","streams":[]}`
	if err := c.Write(t.Context(), websocket.MessageText, []byte(hs)); err != nil {
		t.Fatal(err)
	}
	if _, ack, err := c.Read(t.Context()); err != nil || !strings.Contains(string(ack), "handshake_ack") {
		t.Fatalf("handshake: %s %v", ack, err)
	}
	return c
}

// readUntilClosed reads from an adapter connection, from now on, until it
// closes; the returned function waits for that and fails unless the close
// code is 1001. Reading from the start lets the adapter answer the
// server's close frame at once, as a live app does, instead of the server
// waiting out its close timeout.
func readUntilClosed(t *testing.T, c *websocket.Conn) (expectGoingAway func()) {
	closed := make(chan error, 1)
	go func() {
		for {
			if _, _, err := c.Read(context.Background()); err != nil {
				closed <- err
				return
			}
		}
	}()
	return func() {
		t.Helper()
		if err := <-closed; websocket.CloseStatus(err) != websocket.StatusGoingAway {
			t.Errorf("adapter saw %v (%v), want close 1001", websocket.CloseStatus(err), err)
		}
	}
}

// TestClosedStderrDoesNotKillTheProcess runs the program as a real process
// and does what some MCP clients do on every close: close the read end of
// the server's stderr, then its stdin. Go kills a program that writes to a
// broken pipe on fd 1 or 2 unless it handles SIGPIPE; the shutdown log
// lines must not do that: the adapter gets its 1001 and the exit status is 0.
func TestClosedStderrDoesNotKillTheProcess(t *testing.T) {
	port := benchFreePort(t)
	cmd := exec.CommandContext(t.Context(), os.Args[0], "-ws-port", port, "-log-level", "debug")
	cmd.Env = append(benchBinaryEnv(), runAsProgramEnv+"=1")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	logs := bufio.NewReader(stderr)
	for {
		line, err := logs.ReadString('\n')
		if err != nil {
			t.Fatalf("stderr ended before the start line: %v", err)
		}
		if strings.Contains(line, "devtools-mcp started") {
			break
		}
	}
	expectGoingAway := readUntilClosed(t, connectTestAdapter(t, "ws://127.0.0.1:"+port+"/"))

	stderr.Close()
	stdin.Close()
	if _, err := io.Copy(io.Discard, stdout); err != nil {
		t.Errorf("read stdout: %v", err)
	}
	if err := cmd.Wait(); err != nil {
		t.Errorf("exit: %v, want status 0", err)
	}
	expectGoingAway()
}

// closableWriter keeps what is written until close; from then on every
// write fails as a pipe whose reader has gone does.
type closableWriter struct {
	mu      sync.Mutex
	closed  bool
	buf     strings.Builder
	started chan struct{} // closed when the start log line was written
}

func (w *closableWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return 0, &os.PathError{Op: "write", Path: "|1", Err: syscall.EPIPE}
	}
	w.buf.Write(p)
	if w.started != nil && strings.Contains(w.buf.String(), "devtools-mcp started") {
		close(w.started)
		w.started = nil
	}
	return len(p), nil
}

func (w *closableWriter) close() {
	w.mu.Lock()
	w.closed = true
	w.mu.Unlock()
}

// TestRunSurvivesFailingWriters drives run with a stdout that fails every
// write and a stderr that fails once the test closes it: the client's
// replies and the logs are lost, but shutdown is complete (the adapter gets
// 1001) and run returns nil, so the exit status is 0.
func TestRunSurvivesFailingWriters(t *testing.T) {
	stdout := &closableWriter{closed: true}
	stderr := &closableWriter{started: make(chan struct{})}
	started := stderr.started
	inR, inW := io.Pipe()
	port := benchFreePort(t)
	done := make(chan error, 1)
	go func() {
		done <- run(context.Background(), []string{"-ws-port", port, "-log-level", "debug"}, inR, stdout, stderr)
	}()
	select {
	case <-started:
	case err := <-done:
		t.Fatalf("run returned before starting: %v", err)
	}
	expectGoingAway := readUntilClosed(t, connectTestAdapter(t, "ws://127.0.0.1:"+port+"/"))
	stderr.close()
	// A reply that cannot be written, then the end of input.
	if _, err := io.WriteString(inW, `{"jsonrpc":"2.0","id":1,"method":"ping"}`+"\n"); err != nil {
		t.Fatal(err)
	}
	inW.Close()
	if err := <-done; err != nil {
		t.Errorf("run: %v, want nil (exit 0)", err)
	}
	expectGoingAway()
}
