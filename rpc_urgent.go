package main

// Bounds of the urgent lane: requests of it running at once, and waiting.
const (
	maxUrgent       = 16
	maxUrgentQueued = 256
)

// newUrgentLane is the pool that runs the requests that promise an answer
// within their own bound whatever else is running (calls of the tools
// marked urgent, such as the health check: "never slow"). In the main pool they would wait behind every queued call,
// and a stalled adapter holds each of those for REQUEST_TIMEOUT_MS. The
// lane is small because each of its requests ends within its bound, so a
// full lane drains by itself.
func newUrgentLane() *workerPool {
	return newWorkerPool(maxUrgent, maxUrgentQueued, 0)
}
