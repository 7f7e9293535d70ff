package main

// check_kit.go is `devtools-mcp check-adapter`, the conformance kit for
// Wire Protocol v1 adapters: it listens where the server would, waits for
// one adapter, drives it through the exchanges of docs/protocol.md that it
// claims (check_cases.go, check_paths.go) and prints a report
// (check_report.go). It knows nothing of sessions, tools or MCP.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/coder/websocket"
)

// checkKitVersion is the version the kit announces in handshake_ack.
const checkKitVersion = "1"

// errChecksFailed is returned when a required check did not pass.
var errChecksFailed = errors.New("check-adapter: the adapter failed a required check")

// checkOptions configures check-adapter; the entry fills it from the flags
// and the environment, with the server's defaults.
type checkOptions struct {
	Host             string
	Port             int // 0: any free port (tests)
	Token            string
	AllowedHosts     []string // WS_ALLOWED_HOSTS
	AllowedOrigins   []string // WS_ALLOWED_ORIGINS
	MaxPayload       int64    // announced on the first connection
	SmallPayload     int64    // announced after the reconnect, to ask for an answer too large for it
	RequestTimeout   time.Duration
	HandshakeTimeout time.Duration // upgrade to handshake (§2: 10 s)
	WaitTimeout      time.Duration // for the adapter to connect at all
	ReconnectTimeout time.Duration // for it to come back after a 1001 (§6)
	PongTimeout      time.Duration // for the pong to a WebSocket ping (§6)
	PushWait         time.Duration // for a first pushed event, when none came before its check

	JSON         bool   // print the report as one JSON document
	Only         string // run only the checks of this section ("4", "§4") or name prefix
	AllowActions bool   // also send the requests that change the app

	Listening func(addr string) // tests: told the address once bound
	Connected func()            // tests: called once the first handshake is answered, before any check
	// GiveUp (tests) is asked at each wait for an answer: a receive of n
	// from the channel it returns gives the wait up as RequestTimeout
	// passing would, once the kit has handled the first n frames of the
	// connection, so that a request a test drops need not wait out a short
	// timeout that every request must then share, and a frame the test sent
	// before giving up is read first.
	GiveUp func(id string) <-chan int
}

// checkKit runs one check-adapter session.
type checkKit struct {
	opts     checkOptions
	progress io.Writer
	upgrade  *adapterLink // only its upgrade checks are used

	conns       chan *checkConn // connections that completed the upgrade
	nextPayload int64           // maxPayload for the next connection; under mu
	mu          sync.Mutex
	all         []*checkConn
	stopping    bool // no new connection handlers

	conn   *checkConn    // the connection checks talk to
	info   *adapterInfo  // its handshake
	first  *adapterInfo  // the first connection's handshake
	listed []checkStream // the streams.list answer, once read; nil before
}

// runCheckAdapter runs check-adapter: it returns errChecksFailed when a
// required check failed, another error when it could not run at all.
func runCheckAdapter(ctx context.Context, opts checkOptions, stdout, stderr io.Writer) error {
	k := &checkKit{
		opts:        opts,
		progress:    stderr,
		conns:       make(chan *checkConn, 1),
		nextPayload: opts.MaxPayload,
		// The server's own link, never run: its upgrade checks, with the
		// allowed hosts and origins read as the server reads them.
		upgrade: newAdapterLink(config{WSAllowedHosts: opts.AllowedHosts, WSAllowedOrigins: opts.AllowedOrigins}, nil, nil),
	}
	ln, err := net.Listen("tcp", net.JoinHostPort(opts.Host, strconv.Itoa(opts.Port)))
	if err != nil {
		return fmt.Errorf("check-adapter: %w", err)
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var handlers sync.WaitGroup
	srv := &http.Server{
		Handler:     http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { k.serveHTTP(ctx, &handlers, w, r) }),
		ReadTimeout: 10 * time.Second,
		BaseContext: func(net.Listener) context.Context { return ctx },
	}
	var serving sync.WaitGroup
	serving.Go(func() { _ = srv.Serve(ln) })
	defer func() {
		cancel()
		k.mu.Lock()
		k.stopping = true // handlers.Add below happens under mu, before this
		k.mu.Unlock()
		k.closeAll(websocket.StatusGoingAway, "check-adapter done")
		_ = srv.Close()
		serving.Wait()
		handlers.Wait()
	}()
	addr := ln.Addr().String()
	if opts.Listening != nil {
		opts.Listening(addr)
	}
	fmt.Fprintf(stderr, "check-adapter: listening on ws://%s/; waiting up to %s for an adapter to connect\n"+
		"  (start your app's development build, or in another terminal: devtools-mcp -demo-adapter-only -ws-port %d)\n",
		addr, opts.WaitTimeout, ln.Addr().(*net.TCPAddr).Port)

	results, err := k.run(ctx)
	if err != nil {
		return err
	}
	if opts.JSON {
		err = writeCheckJSON(stdout, k.first, results)
	} else {
		err = writeCheckTable(stdout, k.first, results)
	}
	if err != nil {
		return err
	}
	for _, r := range results {
		if r.Required && (r.Result == checkFail || r.Result == checkNotRun) {
			return errChecksFailed
		}
	}
	return nil
}

// serveHTTP accepts an adapter's upgrade on "/" and hands the connection
// to the kit; it returns when the connection has ended.
func (k *checkKit) serveHTTP(ctx context.Context, handlers *sync.WaitGroup, w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/" {
		http.NotFound(w, r)
		return
	}
	k.mu.Lock()
	if k.stopping {
		k.mu.Unlock()
		http.Error(w, "check-adapter is done", http.StatusServiceUnavailable)
		return
	}
	handlers.Add(1)
	k.mu.Unlock()
	defer handlers.Done()
	refusal := k.upgrade.checkUpgrade(r)
	ws, err := websocket.Accept(w, r, &websocket.AcceptOptions{InsecureSkipVerify: true})
	if err != nil {
		return
	}
	ws.SetReadLimit(-1) // checkConn.read bounds what it keeps
	k.mu.Lock()
	c := &checkConn{
		ws:         ws,
		maxPayload: k.nextPayload,
		upgradeBad: refusal,
		timeout:    k.opts.RequestTimeout,
		giveUp:     k.opts.GiveUp,
		handshaken: make(chan struct{}),
		pushed:     make(chan struct{}, 1),
		done:       make(chan struct{}),
		writeLock:  make(chan struct{}, 1),
		pending:    map[string]chan checkAnswer{},
		answered:   map[string]bool{},
		cancelled:  map[string]bool{},
	}
	c.handledMore = sync.NewCond(&c.mu)
	k.all = append(k.all, c)
	k.mu.Unlock()
	go c.readLoop(k.opts.Token) // ends before the handler returns: it waits for c.done
	select {
	case k.conns <- c:
	default:
		ws.Close(websocket.StatusTryAgainLater, "check-adapter tests one adapter at a time")
	}
	select {
	case <-c.handshaken:
	case <-c.done:
	case <-time.After(k.opts.HandshakeTimeout):
		c.expireHandshake()
	}
	select {
	case <-c.done:
	case <-ctx.Done():
		ws.Close(websocket.StatusGoingAway, "check-adapter done")
		<-c.done
	}
}

func (k *checkKit) allConns() []*checkConn {
	k.mu.Lock()
	defer k.mu.Unlock()
	return slices.Clone(k.all)
}

func (k *checkKit) closeAll(code websocket.StatusCode, reason string) {
	var closing sync.WaitGroup
	for _, c := range k.allConns() {
		closing.Go(func() { c.ws.Close(code, reason) })
	}
	closing.Wait()
}

// awaitConn waits up to timeout for the next connection and its handshake.
func (k *checkKit) awaitConn(ctx context.Context, timeout time.Duration) (*checkConn, error) {
	select {
	case c := <-k.conns:
		select {
		case <-c.handshaken:
			return c, nil
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	case <-time.After(timeout):
		return nil, fmt.Errorf("no adapter connected within %s", timeout)
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// run connects, runs every selected check in order, and returns the results.
func (k *checkKit) run(ctx context.Context) ([]checkResult, error) {
	c, err := k.awaitConn(ctx, k.opts.WaitTimeout)
	if err != nil {
		return nil, fmt.Errorf("check-adapter: %w", err)
	}
	fmt.Fprintln(k.progress, "check-adapter: an adapter connected; running the checks")
	k.conn = c
	c.mu.Lock()
	k.info, k.first = c.info, c.info
	c.mu.Unlock()
	if k.opts.Connected != nil && k.info != nil {
		k.opts.Connected()
	}

	cases := selectChecks(k.opts.Only)
	results := make([]checkResult, 0, len(cases))
	blocked := ""
	for i, cc := range cases {
		fmt.Fprintf(k.progress, "[%d/%d] %s\n", i+1, len(cases), cc.name)
		select {
		case <-k.conn.done:
			if blocked == "" && k.info != nil {
				blocked = "the adapter disconnected during an earlier check"
			}
		default:
		}
		r := checkResult{Name: cc.name, Section: cc.section, Required: cc.required}
		switch {
		case blocked != "":
			r.Result, r.Note = checkNotRun, blocked
		case cc.needs == checkNeedsActions && !k.opts.AllowActions:
			r.Result, r.Note = checkSkipped, "changes the app: run with -allow-actions"
		case cc.needs != "" && cc.needs != checkNeedsActions && !k.offers(cc.needs):
			r.Result, r.Note = checkSkipped, "not claimed: the handshake's capabilities lack "+strconv.Quote(cc.needs)
		default:
			out := cc.run(ctx, k)
			switch {
			case ctx.Err() != nil:
				return nil, ctx.Err()
			case out == nil:
				r.Result = checkPass
			case out.skip != "":
				r.Result, r.Note = checkSkipped, out.skip
			default:
				r.Result, r.Sent, r.Got, r.Requires = checkFail, out.sent, out.got, cc.requires
				if out.blocks != "" {
					blocked = out.blocks
				}
			}
		}
		results = append(results, r)
	}
	return results, nil
}

func (k *checkKit) offers(capability string) bool {
	return k.info != nil && slices.Contains(k.info.Capabilities, capability)
}

// Results of a check.
const (
	checkPass    = "pass"
	checkFail    = "fail"
	checkSkipped = "skipped"
	checkNotRun  = "not-run" // an earlier failure left nothing to check
)

// checkNeedsActions marks the checks that only -allow-actions runs.
const checkNeedsActions = "-allow-actions"

// checkOutcome is what a check found: nil is a pass.
type checkOutcome struct {
	skip      string // not applicable, and why
	sent, got string // for a failure: what the kit sent and what came back
	blocks    string // for a failure that leaves later checks nothing to talk to: why
}

func checkFailed(sent, got string, args ...any) *checkOutcome {
	return &checkOutcome{sent: sent, got: fmt.Sprintf(got, args...)}
}

func checkSkip(format string, args ...any) *checkOutcome {
	return &checkOutcome{skip: fmt.Sprintf(format, args...)}
}

// checkResult is one line of the report.
type checkResult struct {
	Name     string `json:"check"`
	Result   string `json:"result"` // pass, fail, skipped or not-run
	Section  string `json:"section"`
	Required bool   `json:"required"` // a MUST of docs/protocol.md; false for a SHOULD
	Sent     string `json:"sent,omitempty"`
	Got      string `json:"got,omitempty"`
	Requires string `json:"requires,omitempty"`
	Note     string `json:"note,omitempty"` // why skipped or not run
}

// selectChecks returns the checks -only names: those of a section ("4",
// "§4", "§4 events.query") or whose name starts with only; all for "".
// The handshake is always checked: nothing else can run without it.
func selectChecks(only string) []checkCase {
	only = strings.TrimPrefix(strings.TrimSpace(only), "§")
	picked := map[string]bool{"handshake": true}
	for _, cc := range checkCases {
		section := strings.TrimPrefix(cc.section, "§")
		if only == "" || strings.HasPrefix(cc.name, only) ||
			section == only || strings.HasPrefix(section, only+" ") || strings.HasPrefix(section, only+".") {
			picked[cc.name] = true
		}
	}
	if picked["handshake.session-id"] || picked["max-payload"] {
		picked["liveness.reconnect"] = true // they need the second connection
	}
	var out []checkCase
	for _, cc := range checkCases {
		if picked[cc.name] {
			out = append(out, cc)
		}
	}
	return out
}

const (
	// checkSmallPayload is the maxPayload announced after the reconnect:
	// the settings' smallest, so that a whole snapshot is too large for it.
	checkSmallPayload = 1024
	// checkReconnectTimeout is the time §6 gives an adapter to come back.
	checkReconnectTimeout = 5 * time.Second
	// checkPushWait is how long push.event waits for a first push.
	checkPushWait = 5 * time.Second
)
