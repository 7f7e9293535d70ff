package main

// rpc_pool.go is the one worker pool: a connection's requests run on it,
// and so do those of its urgent lane, each on a pool of its own size.

import "sync"

// The urgent lane is the pool that runs the requests that promise an answer
// within their own bound whatever else is running (calls of the tools
// marked urgent, such as the health check: "never slow"). In the main pool
// they would wait behind every queued call, and a stalled adapter holds
// each of those for REQUEST_TIMEOUT_MS. The lane is small because each of
// its requests ends within its bound, so a full lane drains by itself.
const (
	maxUrgent       = 16  // requests of the lane running at once
	maxUrgentQueued = 256 // and waiting
)

// task is a request waiting for a worker, with the size of its line.
type task struct {
	run  func()
	size int
}

// workerPool runs tasks on goroutines it starts on demand, at most
// maxWorkers, that take them from a bounded queue (submit) until close: a
// fresh goroutine per request would grow a new stack each time (17% of CPU
// under load).
//
// Only one goroutine calls submit, and close once after its last submit.
type workerPool struct {
	maxWorkers     int
	maxQueued      int // tasks waiting
	maxQueuedBytes int // sizes of the tasks waiting; 0 for no bound

	mu        sync.Mutex
	queue     queue[task] // counting the tasks' sizes
	idle      int         // workers waiting for a task
	workers   int         // workers started
	closing   bool        // close was called
	taskReady *sync.Cond  // on mu: the queue gained a task, or closing
	queueRoom *sync.Cond  // on mu: the queue lost a task
	wg        sync.WaitGroup
}

func newWorkerPool(maxWorkers, maxQueued, maxQueuedBytes int) *workerPool {
	p := &workerPool{maxWorkers: maxWorkers, maxQueued: maxQueued, maxQueuedBytes: maxQueuedBytes,
		queue: newQueue(0, 0, func(t task) int64 { return int64(t.size) })}
	p.taskReady = sync.NewCond(&p.mu)
	p.queueRoom = sync.NewCond(&p.mu)
	return p
}

// submit queues run, starting a worker when no idle one is left for it and
// fewer than maxWorkers run. size counts against maxQueuedBytes while run
// waits. When the queue is full it calls flush first (a reply held back
// must not wait for room), then waits for room.
func (p *workerPool) submit(run func(), size int, flush func()) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.full(size) {
		p.mu.Unlock()
		flush()
		p.mu.Lock()
		for p.full(size) {
			p.queueRoom.Wait()
		}
	}
	p.queue.push(task{run: run, size: size})
	if p.queue.len() > p.idle && p.workers < p.maxWorkers {
		p.workers++
		p.wg.Go(p.work)
	}
	p.taskReady.Signal()
}

// full reports whether a task of size must wait for room. A lone task
// always fits, however large.
func (p *workerPool) full(size int) bool {
	n := p.queue.len()
	return n >= p.maxQueued || (p.maxQueuedBytes > 0 && n > 0 && p.queue.bytes+int64(size) > int64(p.maxQueuedBytes))
}

// work runs queued tasks until close, once the queue is empty.
func (p *workerPool) work() {
	p.mu.Lock()
	for {
		for p.queue.len() == 0 && !p.closing {
			p.idle++
			p.taskReady.Wait()
			p.idle--
		}
		if p.queue.len() == 0 {
			p.mu.Unlock()
			return
		}
		t, _ := p.queue.pop()
		p.queueRoom.Signal()
		p.mu.Unlock()
		t.run()
		p.mu.Lock()
	}
}

// close lets the queued tasks run and waits for every worker to return.
func (p *workerPool) close() {
	p.mu.Lock()
	p.closing = true
	p.taskReady.Broadcast()
	p.mu.Unlock()
	p.wg.Wait()
}
