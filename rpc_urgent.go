package main

import (
	"context"
	"sync"
)

// Bounds of the urgent lane: requests of it running at once, and waiting.
const (
	maxUrgent       = 16
	maxUrgentQueued = 256
)

// urgentLane runs the requests that promise an answer within their own
// bound whatever else is running (calls of the tools marked urgent, such as
// the health check, "never slow") on workers of their own. In the main pool
// they would wait behind every queued call, and a stalled adapter holds
// each of those for REQUEST_TIMEOUT_MS. The lane is small because each of
// its requests ends within its bound, so a full lane drains by itself.
//
// Only the reading goroutine calls submit, and close once after its last
// submit. The zero value is ready for use.
type urgentLane struct {
	mu      sync.Mutex
	tasks   chan func() // made on first use; closed by close
	workers int         // started, at most maxUrgent
	busy    int         // tasks submitted and not finished
	wg      sync.WaitGroup
}

// submit queues fn for a worker of the lane, starting one when every
// worker already has a task. When the queue is full it calls flush (a
// reply held back must not wait for room) and waits for room.
func (l *urgentLane) submit(fn func(), flush func()) {
	l.mu.Lock()
	if l.tasks == nil {
		l.tasks = make(chan func(), maxUrgentQueued)
	}
	l.busy++
	if l.busy > l.workers && l.workers < maxUrgent {
		l.workers++
		l.wg.Add(1)
		go l.work(l.tasks)
	}
	tasks := l.tasks
	l.mu.Unlock()
	select {
	case tasks <- fn:
	default:
		flush()
		tasks <- fn
	}
}

func (l *urgentLane) work(tasks <-chan func()) {
	defer l.wg.Done()
	for fn := range tasks {
		fn()
		l.mu.Lock()
		l.busy--
		l.mu.Unlock()
	}
}

// close lets the queued tasks run and waits for every worker to return.
func (l *urgentLane) close() {
	l.mu.Lock()
	tasks := l.tasks
	l.mu.Unlock()
	if tasks != nil {
		close(tasks)
	}
	l.wg.Wait()
}

// spawnUrgent runs a request on the urgent lane, registered for
// cancellation like any other.
func (c *rpcConn) spawnUrgent(ctx context.Context, req request) {
	ctx, cancel := context.WithCancel(ctx)
	c.track(req.ID, cancel)
	c.lane.submit(func() {
		defer cancel()
		reply := c.run(ctx, &req)
		if !c.finish(req.ID) {
			c.out.write(reply, true)
		}
	}, func() { _ = c.out.flush() })
}
