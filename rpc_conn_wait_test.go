package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"
)

// serveWaitConn serves a connection whose "wait" requests run outside the
// pool, with handle, over pipes: what the test writes to in, and the
// lines it answers (a channel of capacity lineCap, closed at the end of
// output); served gives serve's error once the input has ended.
func serveWaitConn(handle func(context.Context, *request) (any, error), lineCap int) (c *rpcConn, in *io.PipeWriter, lines chan string, served chan error) {
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	c = newRPCConn(outW, handle, func(string) bool { return false }, func(*request) error { return nil }, slog.New(slog.DiscardHandler))
	c.waits = func(req *request) bool { return req.Method == "wait" }
	served = make(chan error, 1)
	go func() { served <- c.serve(context.Background(), inR); outW.Close() }()
	lines = make(chan string, lineCap)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(outR)
		for sc.Scan() {
			lines <- sc.Text()
		}
	}()
	return c, inW, lines, served
}

// TestWaitsHoldNoWorker: with as many requests waiting as the pool has
// workers, another request is still answered at once; a cancelled wait
// gets no reply, and at the end of input every other wait ends and is
// answered before serve returns.
func TestWaitsHoldNoWorker(t *testing.T) {
	var c *rpcConn
	started := make(chan struct{}, maxInFlight)
	handle := func(ctx context.Context, req *request) (any, error) {
		if req.Method != "wait" {
			return "done", nil
		}
		started <- struct{}{}
		select {
		case <-ctx.Done():
			return "cancelled", nil
		case <-c.stopped: // as the MCP core ends waits (callContext)
			return "stopped", nil
		}
	}
	c, inW, lines, served := serveWaitConn(handle, 2*maxInFlight)
	var burst strings.Builder
	for i := range maxInFlight {
		fmt.Fprintf(&burst, `{"jsonrpc":"2.0","id":%d,"method":"wait"}`+"\n", i)
	}
	if _, err := io.WriteString(inW, burst.String()); err != nil {
		t.Fatal(err)
	}
	deadline := time.After(20 * time.Second)
	for range maxInFlight {
		select {
		case <-started:
		case <-deadline:
			t.Fatal("the waits never all started")
		}
	}
	_, _ = io.WriteString(inW, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":0}}`+"\n"+
		`{"jsonrpc":"2.0","id":"work","method":"work"}`+"\n")
	select {
	case line := <-lines:
		if line != `{"jsonrpc":"2.0","id":"work","result":"done"}` {
			t.Fatalf("first reply %s, want the work's", line)
		}
	case <-deadline:
		t.Fatal("a request behind the waits was not answered")
	}
	inW.Close()
	if err := <-served; err != nil {
		t.Fatal(err)
	}
	stoppedReplies := 0
	for line := range lines {
		var msg struct {
			ID     json.RawMessage
			Result string
		}
		if json.Unmarshal([]byte(line), &msg) != nil || string(msg.ID) == "0" || msg.Result != "stopped" {
			t.Errorf("reply %s, want stopped (and none for the cancelled id 0)", line)
		}
		stoppedReplies++
	}
	if stoppedReplies != maxInFlight-1 {
		t.Errorf("%d waits answered at the end of input, want %d", stoppedReplies, maxInFlight-1)
	}
}

// untilWaiting polls, with a deadline, until n debug_wait_for calls wait.
func untilWaiting(t *testing.T, ts *toolSet, n int64) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); ts.waiting.Load() != n; {
		if time.Now().After(deadline) {
			t.Fatalf("%d calls waiting, want %d", ts.waiting.Load(), n)
		}
		time.Sleep(time.Millisecond) // polling with a deadline
	}
}

// untilTokensFree polls until no request of tr holds a token: a handler
// releases its token when it returns, which can be after its client saw
// the connection end.
func untilTokensFree(t *testing.T, tr *httpTransport) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); len(tr.requests) != 0 || len(tr.waiting) != 0; {
		if time.Now().After(deadline) {
			t.Fatalf("%d request tokens and %d waiting ones still held, want none", len(tr.requests), len(tr.waiting))
		}
		time.Sleep(time.Millisecond) // polling with a deadline
	}
}

// attachWaitSession gives srv a live session with a network stream.
func attachWaitSession(srv *mcpServer) {
	registryOf(srv.link).attach(sessionViaWire, "s1", "", testInfo("s1", "", "shop", "network"), &testFeed{})
}

const waitCall = `{"name":"debug_wait_for","arguments":{"stream":"network","timeout_ms":60000}`

// TestWaitCancelledOverStdio: notifications/cancelled ends a waiting call
// in both eras, and no reply is sent for it.
func TestWaitCancelledOverStdio(t *testing.T) {
	for _, modern := range []bool{false, true} {
		t.Run(fmt.Sprintf("modern=%t", modern), func(t *testing.T) {
			_, srv := newTestTransport(testConfig(t))
			attachWaitSession(srv)
			inR, inW := io.Pipe()
			outR, outW := io.Pipe()
			served := make(chan error, 1)
			go func() { served <- serveStdio(context.Background(), srv, inR, outW); outW.Close() }()
			sc := bufio.NewScanner(outR)
			send := func(line string) {
				if _, err := io.WriteString(inW, line+"\n"); err != nil {
					t.Fatal(err)
				}
			}
			meta, after := "", `{"jsonrpc":"2.0","id":8,"method":"ping"}`
			if modern {
				meta = `,"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`
				after = `{"jsonrpc":"2.0","id":8,"method":"tools/list","params":{` + meta[1:] + `}}`
			} else {
				send(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25"}}`)
				send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
				sc.Scan()
			}
			send(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":` + waitCall + meta + `}}`)
			untilWaiting(t, srv.tools, 1)
			send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":7}}`)
			untilWaiting(t, srv.tools, 0)
			send(after)
			if !sc.Scan() || !strings.HasPrefix(sc.Text(), `{"jsonrpc":"2.0","id":8,`) {
				t.Fatalf("after the cancel: %q, want the reply to id 8", sc.Text())
			}
			inW.Close()
			for sc.Scan() {
				t.Errorf("unexpected line %s", sc.Text())
			}
			if err := <-served; err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestWaitOverHTTP: a waiting call holds none of the tokens of requests
// being served; it ends when its client goes away (both eras) or cancels
// it (legacy); with a progressToken, a 2026-07-28 call is answered with a
// stream that carries notifications/progress, then the reply.
func TestWaitOverHTTP(t *testing.T) {
	h := newTestHTTP(t, testConfig(t))
	attachWaitSession(h.srv)
	h.srv.tools.waitProgress = 5 * time.Millisecond
	modernMeta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`
	modern := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":` + waitCall + `,` + modernMeta + `}}`
	session := h.initialize()
	legacy := `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":` + waitCall + `}}`

	goneAway := func(body string, headers ...string) {
		t.Helper()
		ctx, cancel := context.WithCancel(t.Context())
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, h.url, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		setHeaders(req, headers)
		done := make(chan struct{})
		go func() {
			defer close(done)
			if resp, err := http.DefaultClient.Do(req); err == nil {
				resp.Body.Close()
			}
		}()
		untilWaiting(t, h.srv.tools, 1)
		if len(h.tr.requests) != 0 || len(h.tr.waiting) != 1 {
			t.Errorf("a waiting call holds %d request tokens and %d waiting ones, want 0 and 1", len(h.tr.requests), len(h.tr.waiting))
		}
		cancel()
		untilWaiting(t, h.srv.tools, 0)
		<-done
		untilTokensFree(t, h.tr) // the handler gives its token back after the client has seen the end
	}
	goneAway(modern, modernHeaders("tools/call", "debug_wait_for")...)
	goneAway(legacy, "MCP-Session-Id: "+session, "MCP-Protocol-Version: 2025-11-25")

	replied := make(chan map[string]any, 1)
	go func() {
		_, msg := h.post(legacy, "MCP-Session-Id: "+session, "MCP-Protocol-Version: 2025-11-25")
		replied <- msg
	}()
	untilWaiting(t, h.srv.tools, 1)
	h.post(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":2}}`, "MCP-Session-Id: "+session, "MCP-Protocol-Version: 2025-11-25")
	untilWaiting(t, h.srv.tools, 0)
	<-replied

	body := strings.Replace(modern, `"timeout_ms":60000`, `"timeout_ms":40`, 1)
	body = strings.Replace(body, `"_meta":{`, `"_meta":{"progressToken":"p1",`, 1)
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, h.url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	setHeaders(req, modernHeaders("tools/call", "debug_wait_for"))
	stream := openSSE(t, req)
	progress := 0
	for {
		msg := stream.next(t)
		if msg["method"] == "notifications/progress" {
			if p := msg["params"].(map[string]any); p["progressToken"] != "p1" || p["total"] != float64(40) {
				t.Errorf("progress %v", p)
			}
			progress++
			continue
		}
		if msg["id"] != float64(1) || msg["result"] == nil || progress == 0 {
			t.Errorf("final %v after %d progress notifications, want the reply after at least one", msg, progress)
		}
		break
	}
	stream.ended(t)
}

// TestWaitPastTheConnectionsBoundIsRefusedAtOnce: with maxWaiting waits
// held and every worker busy, one more wait is answered at once with its
// context marked as having no room (the tool then answers BUSY), instead
// of queueing for a worker.
func TestWaitPastTheConnectionsBoundIsRefusedAtOnce(t *testing.T) {
	var c *rpcConn
	started := make(chan struct{}, maxWaiting+maxInFlight)
	release := make(chan struct{})
	handle := func(ctx context.Context, req *request) (any, error) {
		if limit, full := noWaitSlot(ctx); full {
			return fmt.Sprintf("no room: %d", limit), nil
		}
		started <- struct{}{}
		select {
		case <-release:
			return "released", nil
		case <-c.stopped:
			return "stopped", nil
		}
	}
	c, inW, lines, served := serveWaitConn(handle, 2*(maxWaiting+maxInFlight))
	// Every wait slot and every worker held.
	var burst strings.Builder
	for i := range maxWaiting {
		fmt.Fprintf(&burst, `{"jsonrpc":"2.0","id":%d,"method":"wait"}`+"\n", i)
	}
	for i := range maxInFlight {
		fmt.Fprintf(&burst, `{"jsonrpc":"2.0","id":"busy%d","method":"work"}`+"\n", i)
	}
	if _, err := io.WriteString(inW, burst.String()); err != nil {
		t.Fatal(err)
	}
	deadline := time.After(20 * time.Second)
	for range maxWaiting + maxInFlight {
		select {
		case <-started:
		case <-deadline:
			t.Fatal("the waits and the work never all started")
		}
	}
	_, _ = io.WriteString(inW, `{"jsonrpc":"2.0","id":"one-more","method":"wait"}`+"\n")
	select {
	case line := <-lines:
		if want := fmt.Sprintf(`{"jsonrpc":"2.0","id":"one-more","result":"no room: %d"}`, maxWaiting); line != want {
			t.Fatalf("first reply %s, want %s", line, want)
		}
	case <-deadline:
		t.Fatal("the wait past the bound was not answered while the workers were busy")
	}
	close(release)
	inW.Close()
	if err := <-served; err != nil {
		t.Fatal(err)
	}
	for range lines {
	}
}
