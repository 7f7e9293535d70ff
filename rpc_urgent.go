package main

// The urgent lane is the pool (rpc_pool.go) that runs the requests that
// promise an answer within their own bound whatever else is running (calls
// of the tools marked urgent, such as the health check: "never slow"). In
// the main pool they would wait behind every queued call, and a stalled
// adapter holds each of those for REQUEST_TIMEOUT_MS. The lane is small
// because each of its requests ends within its bound, so a full lane drains
// by itself.
const (
	maxUrgent       = 16  // requests of the lane running at once
	maxUrgentQueued = 256 // and waiting
)
