package main

// ring.go is the one ring buffer: a FIFO of values, oldest first, that the
// session buffers and the demo app keep their events in.

// ring holds values in a circular slice that grows (doubling) when full;
// callers bound it by dropping the oldest. The zero ring is empty and ready.
type ring[T any] struct {
	buf   []T
	start int // index of the oldest value
	n     int
}

// newRing returns an empty ring with room for capacity values.
func newRing[T any](capacity int) ring[T] {
	return ring[T]{buf: make([]T, capacity)}
}

// len is how many values the ring holds.
func (r *ring[T]) len() int { return r.n }

// at returns a pointer to the i-th oldest value, 0 <= i < len; it is valid
// until the next push.
func (r *ring[T]) at(i int) *T { return &r.buf[(r.start+i)%len(r.buf)] }

// push appends v as the newest value.
func (r *ring[T]) push(v T) {
	if r.n == len(r.buf) {
		grown := make([]T, max(8, 2*len(r.buf)))
		for i := range r.n {
			grown[i] = *r.at(i)
		}
		r.buf, r.start = grown, 0
	}
	r.buf[(r.start+r.n)%len(r.buf)] = v
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

// pushBounded appends v, first dropping the oldest value when the ring
// already holds limit values.
func (r *ring[T]) pushBounded(v T, limit int) {
	if r.n >= limit && r.n > 0 {
		r.dropOldest()
	}
	r.push(v)
}
