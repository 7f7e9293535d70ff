package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"sync"
	"sync/atomic"
	"time"
)

// rpc_stdio.go is the stdio framing of JSON-RPC: newline-delimited messages
// read in bounded batches (a line over the bound read through, not held),
// and replies written through one buffered writer.

// serveStdio answers MCP on stdin (rpcConn.serve); the stdio peer is one
// client of srv.
func serveStdio(ctx context.Context, srv *mcpServer, stdin io.Reader, stdout io.Writer) error {
	c := newClient(srv, "stdio", nil, nil)
	rpc := newRPCConn(stdout, c.handle, isInline, c.admit, srv.logger)
	rpc.urgent = srv.isUrgent
	rpc.waits = srv.waits
	c.notify, c.stopped = rpc.notify, rpc.stopped
	srv.addClient(c)
	err := rpc.serve(ctx, stdin)
	srv.removeClient(c)
	return err
}

// inputLine is one line read from the client, or why reading stopped.
type inputLine struct {
	data    []byte // trimmed and non-empty; the receiver owns it
	err     error  // errLineTooLong (then skipped is its length), io.EOF or a read error
	skipped int64
}

// readLines reads lines from in and hands them over until reading fails or
// quit is closed. Reading has its own goroutine so that serve can stop
// intake at once when its context ends: a read cannot be interrupted unless
// in supports deadlines (see interruptRead). Otherwise this goroutine ends
// at in's next data, EOF or error; serve does not wait for it.
func readLines(in io.Reader, input chan<- []inputLine, quit <-chan struct{}) {
	lines := newLineReader(in, maxLineBytes, dropLongLines)
	var batch []inputLine
	size := 0
	for {
		line, err := lines.next()
		item := inputLine{err: err, skipped: lines.skipped}
		if err == nil {
			line = bytes.TrimSpace(line)
			if len(line) > 0 {
				// The line reader reuses its buffer; decoded messages point into the line.
				item.data = bytes.Clone(line)
				batch, size = append(batch, item), size+len(line)
			}
		} else {
			batch = append(batch, item)
		}
		// Hand over what is ready before a read that may block, and in
		// batches of at most readBatchBytes: one handoff per line would cost
		// a goroutine switch per message.
		if err == nil && size < readBatchBytes && lines.hasLine() {
			continue
		}
		if len(batch) > 0 {
			select {
			case input <- batch:
			case <-quit:
				return
			}
			batch, size = nil, 0
		}
		if err != nil && !errors.Is(err, errLineTooLong) {
			return
		}
	}
}

// readBatchBytes bounds the lines read ahead of the one being handled.
const readBatchBytes = 256 << 10

// interruptRead unblocks a pending read when in supports deadlines (a pipe
// made with os.Pipe does; an inherited stdin usually does not).
func interruptRead(in io.Reader) {
	if d, ok := in.(interface{ SetReadDeadline(time.Time) error }); ok {
		_ = d.SetReadDeadline(time.Now())
	}
}

// lineWriter writes one message per line under one lock. It flushes when no
// other writer is waiting, so a burst of replies costs few system calls and
// the last reply of a burst is never left in the buffer.
type lineWriter struct {
	waiting atomic.Int32
	mu      sync.Mutex
	w       *bufio.Writer
	err     error // first write error; later writes are dropped
}

func (lw *lineWriter) write(msg []byte, flush bool) {
	// Invalid bytes can only sit inside JSON strings (elsewhere the JSON
	// would be invalid), where U+FFFD keeps it valid. validUTF8 replaces
	// each such byte, as appendJSONString does, so that the raw
	// structuredContent of a tool result and its escaped text item agree.
	msg = validUTF8(msg)
	lw.waiting.Add(1)
	lw.mu.Lock()
	defer lw.mu.Unlock()
	lw.waiting.Add(-1)
	if lw.err != nil {
		return
	}
	_, _ = lw.w.Write(msg) // a bufio.Writer's error sticks: WriteByte returns it too
	if err := lw.w.WriteByte('\n'); err != nil {
		lw.err = err
		return
	}
	if flush && lw.waiting.Load() == 0 {
		lw.err = lw.w.Flush()
	}
}

func (lw *lineWriter) flush() error {
	lw.mu.Lock()
	defer lw.mu.Unlock()
	if lw.err == nil {
		lw.err = lw.w.Flush()
	}
	return lw.err
}
