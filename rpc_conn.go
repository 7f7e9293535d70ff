package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"sync/atomic"
)

// Bounds on what one client may make the server hold.
const (
	maxLineBytes    = 16 << 20 // one JSON-RPC message on stdin
	maxNestingDepth = 128      // arrays and objects inside one message
	maxInFlight     = 256      // requests handled at once; more wait in a queue
	maxQueued       = 4096     // requests waiting for a worker; reading waits beyond it
	maxQueuedBytes  = 64 << 20 // bytes of the lines of the queued requests
	maxBatch        = 100      // elements of one JSON-RPC batch
)

// maxWaiting bounds the requests of one connection that run outside the
// pool because they wait (calls of tools the tool table marks `waits`).
// Past it such a request is answered at once, its context marked so that
// the tool refuses it (withoutWaitSlot, tool_wait.go), as the server-wide
// bound (maxWaits) does.
const maxWaiting = 256

// handlerFunc answers one request. A returned *rpcError goes to the client as
// is; any other error becomes -32603. Notifications' results are discarded.
type handlerFunc func(ctx context.Context, req *request) (any, error)

// rpcConn serves JSON-RPC over a line-oriented stream. Requests run
// concurrently, at most maxInFlight at a time, except those for which
// inline returns true, which run on the reading goroutine in arrival order
// (cheap methods, and ones whose effect later lines depend on), and those
// for which urgent returns true, which have a small pool of their own
// (rpc_pool.go) so that they never wait behind the others, and those for
// which waits returns true, which wait for the app as long as their
// timeout and so run outside the pool (spawnWaiting). admit runs
// on the reading goroutine for every request before it is dispatched, so its
// verdict follows arrival order too.
type rpcConn struct {
	handle handlerFunc
	inline func(method string) bool
	admit  func(req *request) error
	urgent func(req *request) bool // nil: none
	waits  func(req *request) bool // nil: none
	logger *slog.Logger
	out    *lineWriter
	// stopped is closed when intake ends (EOF or ctx done), before serve
	// waits for requests still running: long-lived ones (2026-07-28's
	// subscriptions/listen) end on it rather than hold serve open.
	stopped chan struct{}

	calls inFlightCalls

	// Requests run on a pool of at most maxInFlight workers (rpc_pool.go),
	// whose queue keeps ping and cancellations answered while all are busy.
	pool *workerPool
	lane *workerPool // the urgent lane (rpc_pool.go)
	// The waits running, at most maxWaiting (spawnWaiting).
	waitSlots chan struct{}
	waiting   sync.WaitGroup
}

// inFlightCalls are the requests of one client being handled, by idKey,
// for notifications/cancelled to end. Safe for concurrent use.
type inFlightCalls struct {
	mu    sync.Mutex
	calls map[string]*call
}

// call is one request being handled.
type call struct {
	cancel    context.CancelFunc
	cancelled atomic.Bool // by notifications/cancelled: send no reply
}

func newRPCConn(out io.Writer, handle handlerFunc, inline func(string) bool, admit func(*request) error, logger *slog.Logger) *rpcConn {
	return &rpcConn{
		handle:    handle,
		inline:    inline,
		admit:     admit,
		logger:    logger,
		out:       &lineWriter{w: bufio.NewWriterSize(out, 64<<10)},
		stopped:   make(chan struct{}),
		pool:      newWorkerPool(maxInFlight, maxQueued, maxQueuedBytes),
		lane:      newWorkerPool(maxUrgent, maxUrgentQueued, 0),
		waitSlots: make(chan struct{}, maxWaiting),
	}
}

// serve reads messages from in until EOF or ctx is done, then waits for every
// request already read and writes every reply before returning. Requests'
// contexts derive from ctx, so cancelling it also stops their work.
func (c *rpcConn) serve(ctx context.Context, in io.Reader) error {
	input := make(chan []inputLine)
	quit := make(chan struct{})
	defer close(quit)
	go readLines(in, input, quit)
	stop := context.AfterFunc(ctx, func() { interruptRead(in) })
	defer stop()
	var readErr error
intake:
	for {
		var items []inputLine
		select {
		case items = <-input:
		default:
			// Nothing more to read right now: no reply may wait in the
			// buffer while we do. Under pipelined input the next lines are
			// ready, so replies to a burst leave in few writes.
			_ = c.out.flush()
			select {
			case <-ctx.Done():
				break intake
			case items = <-input:
			}
		}
		for _, item := range items {
			if ctx.Err() != nil {
				break intake
			}
			switch {
			case errors.Is(item.err, errLineTooLong):
				c.writeError(nil, rpcErrorf(errInvalidRequest, map[string]int64{"limit": maxLineBytes},
					"invalid request: line of %d bytes exceeds the %d-byte (16 MiB) limit; skipped", item.skipped, int64(maxLineBytes)))
				continue
			case item.err == io.EOF:
				break intake
			case item.err != nil:
				if ctx.Err() == nil {
					readErr = fmt.Errorf("read stdin: %w", item.err)
				}
				break intake
			}
			c.receive(ctx, item.data)
		}
	}
	close(c.stopped)
	c.pool.close() // workers drain the queue, then return
	c.lane.close()
	c.waiting.Wait() // waits end on stopped, answering with what they saw
	if err := c.out.flush(); err != nil && readErr == nil {
		readErr = fmt.Errorf("write stdout: %w", err)
	}
	return readErr
}

// receive handles one line.
func (c *rpcConn) receive(ctx context.Context, line []byte) {
	if nestingExceeds(line, maxNestingDepth) {
		c.writeError(nil, rpcErrorf(errInvalidRequest, map[string]int{"limit": maxNestingDepth},
			"invalid request: nesting deeper than %d levels", maxNestingDepth))
		return
	}
	if !json.Valid(line) {
		c.writeError(nil, rpcErrorf(errParse, nil, "parse error: %s", syntaxError(line)))
		return
	}
	if line[0] == '[' {
		elems := splitArray(line)
		if len(elems) == 0 {
			c.writeError(nil, rpcErrorf(errInvalidRequest, nil, "invalid request: empty batch"))
			return
		}
		if len(elems) > maxBatch {
			c.writeError(nil, rpcErrorf(errInvalidRequest, map[string]int{"limit": maxBatch},
				"invalid request: batch of %d messages exceeds the limit of %d", len(elems), maxBatch))
			return
		}
		c.spawn(ctx, len(line), func(ctx context.Context) { c.serveBatch(ctx, elems) })
		return
	}
	req, err := decodeMessage(line)
	if errors.Is(err, errClientResponse) {
		c.logger.Debug("ignored a response from the client")
		return
	}
	if err != nil {
		c.writeError(req.ID, asRPCError(err))
		return
	}
	if req.Method == "notifications/cancelled" && req.isNotification() {
		c.cancelRequest(req.Params)
		return
	}
	if err := c.admit(&req); err != nil {
		if !req.isNotification() {
			c.writeError(req.ID, asRPCError(err))
		}
		return
	}
	if c.inline(req.Method) {
		if reply := c.run(ctx, &req); reply != nil {
			c.out.write(reply, false)
		}
		return
	}
	if req.isNotification() {
		c.spawn(ctx, len(line), func(ctx context.Context) { c.run(ctx, &req) })
		return
	}
	if c.urgent != nil && c.urgent(&req) {
		c.lane.submit(c.answer(ctx, &req), 0, c.flushOut)
		return
	}
	if c.waits != nil && c.waits(&req) {
		if !c.spawnWaiting(ctx, &req) {
			// Refused at once (BUSY) here: it never queues behind other work.
			c.out.write(c.run(withoutWaitSlot(ctx, maxWaiting), &req), false)
		}
		return
	}
	c.pool.submit(c.answer(ctx, &req), len(line), c.flushOut)
}

// serveBatch answers a JSON-RPC batch with one array holding the replies to
// its requests, in order; a batch of notifications only gets no reply.
func (c *rpcConn) serveBatch(ctx context.Context, elems []json.RawMessage) {
	var replies [][]byte
	size := 0
	for _, elem := range elems {
		req, err := decodeMessage(elem)
		switch {
		case errors.Is(err, errClientResponse):
			continue
		case err != nil:
			replies = append(replies, encodeReply(req.ID, nil, asRPCError(err)))
			continue
		case req.Method == "notifications/cancelled" && req.isNotification():
			c.cancelRequest(req.Params)
			continue
		}
		err = c.admit(&req)
		switch {
		case err != nil && req.isNotification():
		case err != nil:
			replies = append(replies, encodeReply(req.ID, nil, asRPCError(err)))
		case req.isNotification():
			c.run(ctx, &req)
		default:
			elemCtx, cancel := context.WithCancel(ctx)
			c.calls.track(req.ID, cancel)
			reply := c.run(elemCtx, &req)
			cancel()
			if size += len(reply); size > maxLineBytes {
				// The whole array is one line: keep it within what a client
				// can be expected to read.
				reply = encodeReply(req.ID, nil, rpcErrorf(errInternal, map[string]int{"limit": maxLineBytes},
					"internal error: the batch's replies exceed %d bytes; send this request on its own", maxLineBytes))
			}
			if !c.calls.finish(req.ID) {
				replies = append(replies, reply)
			}
		}
	}
	if len(replies) > 0 {
		c.out.write(append(append([]byte{'['}, bytes.Join(replies, []byte{','})...), ']'), true)
	}
}

// spawn queues fn, which answers no request of its own (a batch, a
// notification), on the connection's pool; size is the line's length.
// Only the reading goroutine calls spawn; it waits only while the queue is
// full.
func (c *rpcConn) spawn(ctx context.Context, size int, fn func(context.Context)) {
	ctx, cancel := context.WithCancel(ctx)
	c.pool.submit(func() { defer cancel(); fn(ctx) }, size, c.flushOut)
}

// spawnWaiting runs a request that waits for the app on a goroutine of its
// own, outside the pool: it holds no worker while it waits, so every other
// request is served as fast as with nobody waiting. It reports false, and
// does nothing, when maxWaiting such requests already run.
func (c *rpcConn) spawnWaiting(ctx context.Context, req *request) bool {
	select {
	case c.waitSlots <- struct{}{}:
	default:
		return false
	}
	run := c.answer(ctx, req)
	c.waiting.Go(func() {
		defer func() { <-c.waitSlots }()
		run()
	})
	return true
}

// answer registers req for cancellation and returns what runs it, on
// whichever pool or goroutine, and writes its reply unless the client
// cancelled it.
func (c *rpcConn) answer(ctx context.Context, req *request) func() {
	ctx, cancel := context.WithCancel(ctx)
	c.calls.track(req.ID, cancel)
	return func() {
		defer cancel()
		reply := c.run(ctx, req)
		if !c.calls.finish(req.ID) {
			c.out.write(reply, true)
		}
	}
}

// flushOut writes the replies held back, before a submit waits for room.
func (c *rpcConn) flushOut() { _ = c.out.flush() }

func (f *inFlightCalls) track(id json.RawMessage, cancel context.CancelFunc) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.calls == nil {
		f.calls = make(map[string]*call)
	}
	f.calls[idKey(id)] = &call{cancel: cancel}
}

// finish unregisters a request and reports whether it was cancelled by the
// client, in which case no reply may be sent.
func (f *inFlightCalls) finish(id json.RawMessage) (cancelled bool) {
	key := idKey(id)
	f.mu.Lock()
	defer f.mu.Unlock()
	cl := f.calls[key]
	delete(f.calls, key)
	return cl != nil && cl.cancelled.Load()
}

// cancel handles notifications/cancelled: the request's context ends and
// its reply is suppressed. Unknown or finished ids are ignored, as the
// cancellation may cross the reply on the wire. It reports false when
// params name no valid requestId.
func (f *inFlightCalls) cancel(params json.RawMessage) bool {
	var p struct {
		RequestID json.RawMessage `json:"requestId"`
	}
	if json.Unmarshal(params, &p) != nil || !validID(p.RequestID) {
		return false
	}
	f.mu.Lock()
	cl := f.calls[idKey(p.RequestID)]
	f.mu.Unlock()
	if cl != nil {
		cl.cancelled.Store(true)
		cl.cancel()
	}
	return true
}

func (c *rpcConn) cancelRequest(params json.RawMessage) {
	if !c.calls.cancel(params) {
		c.logger.Debug("ignored notifications/cancelled without a valid requestId")
	}
}

// run calls the handler and encodes its reply; for a notification it
// returns nil.
func (c *rpcConn) run(ctx context.Context, req *request) []byte {
	if req.isNotification() {
		_, _ = callSafely(ctx, c.handle, c.logger, req)
		return nil
	}
	return reply(ctx, c.handle, c.logger, req)
}

func reply(ctx context.Context, handle handlerFunc, logger *slog.Logger, req *request) []byte {
	result, err := callSafely(ctx, handle, logger, req)
	if err != nil {
		return encodeReply(req.ID, nil, asRPCError(err))
	}
	return encodeReply(req.ID, result, nil)
}

// callSafely calls handle, turning a panic into -32603 so that one bad
// request cannot take the server down. Every transport calls handlers
// through it.
func callSafely(ctx context.Context, handle handlerFunc, logger *slog.Logger, req *request) (result any, err error) {
	defer func() {
		if p := recover(); p != nil {
			logger.Error("handler panicked", "method", req.Method, "panic", p)
			err = rpcErrorf(errInternal, nil, "internal error in %s", req.Method)
		}
	}()
	return handle(ctx, req)
}

// writeError answers on the reading goroutine; serve flushes when idle.
func (c *rpcConn) writeError(id json.RawMessage, err *rpcError) {
	c.out.write(encodeReply(id, nil, err), false)
}

func (c *rpcConn) notify(method string, params any) {
	msg := map[string]any{"jsonrpc": "2.0", "method": method, "params": params}
	data, err := json.Marshal(msg)
	if err != nil {
		c.logger.Error("encode notification", "method", method, "err", err)
		return
	}
	c.out.write(data, true)
}
