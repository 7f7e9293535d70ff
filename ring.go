package main

// ring.go holds queue, the one first-in-first-out queue, bounded or not, of
// every buffer, intake and backlog in the server and the demo.

// queue holds values oldest first, at most maxLen and maxBytes of their
// sizes (0: no bound), and owns its byte count: a value popped, dropped or
// cleared leaves it. onDrop, if set, is told of each value dropped. The
// zero queue is unbounded; not safe for concurrent use.
type queue[T any] struct {
	buf      []T
	start, n int // the oldest value's index, and how many are held
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

func (q *queue[T]) len() int { return q.n }

// at returns a pointer to the i-th oldest value, 0 <= i < len; it is valid
// until the next push.
func (q *queue[T]) at(i int) *T { return &q.buf[(q.start+i)%len(q.buf)] }

// fits reports whether n more values of more bytes are within the bounds.
func (q *queue[T]) fits(n int, more int64) bool {
	return (q.maxLen <= 0 || q.n+n <= q.maxLen) && (q.maxBytes <= 0 || q.bytes+more <= q.maxBytes)
}

// add puts v at the back, or with front before the oldest value.
func (q *queue[T]) add(v T, front bool) {
	if q.n == len(q.buf) {
		grown := make([]T, max(8, 2*len(q.buf)))
		n := copy(grown, q.buf[q.start:]) // full: the oldest values, then the wrapped rest
		copy(grown[n:], q.buf[:q.start])
		q.buf, q.start = grown, 0
	}
	if front {
		q.start = (q.start + len(q.buf) - 1) % len(q.buf)
		q.buf[q.start] = v
	} else {
		q.buf[(q.start+q.n)%len(q.buf)] = v
	}
	q.n++
	q.bytes += q.sizeOf(v)
}

// push appends v, then drops the oldest values (v itself last) until the
// queue is within its bounds.
func (q *queue[T]) push(v T) { q.add(v, false); q.bound() }

// pushFront puts v back before the oldest value, where pop took it: it goes
// out first, or is the first dropped.
func (q *queue[T]) pushFront(v T) { q.add(v, true); q.bound() }

func (q *queue[T]) bound() {
	for q.n > 0 && !q.fits(0, 0) {
		q.dropOldest()
	}
}

// offer appends v if it fits; otherwise v is refused, and counted.
func (q *queue[T]) offer(v T) bool {
	if !q.fits(1, q.sizeOf(v)) {
		q.dropped++
		return false
	}
	q.add(v, false)
	return true
}

// pop removes and returns the oldest value. Its slot is cleared, so the
// queue keeps nothing it no longer holds.
func (q *queue[T]) pop() (T, bool) {
	var zero T
	if q.n == 0 {
		return zero, false
	}
	v := q.buf[q.start]
	q.buf[q.start] = zero
	q.start, q.n = (q.start+1)%len(q.buf), q.n-1
	q.bytes -= q.sizeOf(v)
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
	n := q.n
	for q.n > 0 {
		q.dropOldest()
	}
	return n
}
