package main

// ring.go holds the FIFOs: ring, a growable circular slice of values that
// the session buffers and the worker pool keep in order, and queue, the one
// bounded first-in-first-out queue (by count and by bytes, dropping the
// oldest or refusing the newest) of the demo's events, the Reactotron
// relay's frames, the Metro link's network digests, the native side's
// intake and its lines of unknown pids.

// ring holds values in a circular slice that grows (doubling) when full;
// callers bound it by dropping the oldest. The zero ring is empty and ready.
type ring[T any] struct {
	buf   []T
	start int // index of the oldest value
	n     int
}

// len is how many values the ring holds.
func (r *ring[T]) len() int { return r.n }

// at returns a pointer to the i-th oldest value, 0 <= i < len; it is valid
// until the next push.
func (r *ring[T]) at(i int) *T { return &r.buf[(r.start+i)%len(r.buf)] }

// grow makes room for one more value.
func (r *ring[T]) grow() {
	if r.n < len(r.buf) {
		return
	}
	grown := make([]T, max(8, 2*len(r.buf)))
	for i := range r.n {
		grown[i] = *r.at(i)
	}
	r.buf, r.start = grown, 0
}

// push appends v as the newest value.
func (r *ring[T]) push(v T) {
	r.grow()
	r.buf[(r.start+r.n)%len(r.buf)] = v
	r.n++
}

// pushFront puts v before the oldest value.
func (r *ring[T]) pushFront(v T) {
	r.grow()
	r.start = (r.start + len(r.buf) - 1) % len(r.buf)
	r.buf[r.start] = v
	r.n++
}

// dropOldest removes and returns the oldest value; the ring must not be
// empty. Its slot is cleared, so the ring keeps nothing it no longer holds.
func (r *ring[T]) dropOldest() T {
	slot := &r.buf[r.start]
	v := *slot
	var zero T
	*slot = zero
	r.start = (r.start + 1) % len(r.buf)
	r.n--
	return v
}

// queue is a bounded FIFO: at most maxLen values and maxBytes of their
// sizes (0: no bound). It owns its byte count: a value that leaves it,
// popped, dropped or cleared, leaves the count. onDrop, if set, is told of
// each value dropped. Not safe for concurrent use.
type queue[T any] struct {
	vals     ring[T]
	maxLen   int
	maxBytes int64
	size     func(T) int64 // nil: values weigh nothing
	onDrop   func(T)
	bytes    int64 // of the values held
	dropped  int64 // values dropped or refused
}

func newQueue[T any](maxLen int, maxBytes int64, size func(T) int64) queue[T] {
	return queue[T]{maxLen: maxLen, maxBytes: maxBytes, size: size}
}

func (q *queue[T]) sizeOf(v T) int64 {
	if q.size == nil {
		return 0
	}
	return q.size(v)
}

func (q *queue[T]) len() int    { return q.vals.len() }
func (q *queue[T]) at(i int) *T { return q.vals.at(i) }

// fits reports whether n more values of size more bytes are within bounds.
func (q *queue[T]) fits(n int, more int64) bool {
	return (q.maxLen <= 0 || q.vals.len()+n <= q.maxLen) && (q.maxBytes <= 0 || q.bytes+more <= q.maxBytes)
}

// push appends v, then drops the oldest values (v itself last) until the
// queue is within bounds.
func (q *queue[T]) push(v T) { q.vals.push(v); q.bound(v) }

// pushFront puts v back before the oldest, where pop took it: it goes out
// first, or is the first dropped.
func (q *queue[T]) pushFront(v T) { q.vals.pushFront(v); q.bound(v) }

func (q *queue[T]) bound(added T) {
	q.bytes += q.sizeOf(added)
	for q.vals.len() > 0 && !q.fits(0, 0) {
		q.dropOldest()
	}
}

// offer appends v if it fits; otherwise v is refused, and counted.
func (q *queue[T]) offer(v T) bool {
	if !q.fits(1, q.sizeOf(v)) {
		q.dropped++
		return false
	}
	q.vals.push(v)
	q.bytes += q.sizeOf(v)
	return true
}

// pop removes and returns the oldest value.
func (q *queue[T]) pop() (T, bool) {
	var v T
	if q.vals.len() == 0 {
		return v, false
	}
	v = q.vals.dropOldest()
	q.bytes -= q.sizeOf(v)
	if q.vals.len() == 0 && len(q.vals.buf) > 64 {
		q.vals = ring[T]{} // let a burst's slice go
	}
	return v, true
}

// dropOldest drops the oldest value, counting it; the queue must not be
// empty.
func (q *queue[T]) dropOldest() {
	v, _ := q.pop()
	q.dropped++
	if q.onDrop != nil {
		q.onDrop(v)
	}
}

// clear drops every value, counting each, and returns how many there were.
func (q *queue[T]) clear() int {
	n := q.vals.len()
	for q.vals.len() > 0 {
		q.dropOldest()
	}
	return n
}
