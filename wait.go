package main

// wait.go is how goroutines wait and wake: the one retry delay, a sleep its
// context cuts short, a ticking loop, and a wake that never blocks.

import (
	"cmp"
	"context"
	"time"
)

// backoff is a delay that starts at min and doubles after each failure up
// to max; reset brings it back to min after a healthy run.
type backoff struct {
	min, max time.Duration
	cur      time.Duration // the next delay; 0 before the first
}

func newBackoff(min, max time.Duration) backoff { return backoff{min: min, max: max} }

// next returns the delay to wait now, and doubles the one after.
func (b *backoff) next() time.Duration {
	d := cmp.Or(b.cur, b.min)
	b.cur = min(2*d, b.max)
	return d
}

func (b *backoff) reset() { b.cur = 0 }

// sleepCtx waits d, or until ctx ends; it reports whether d passed.
func sleepCtx(ctx context.Context, d time.Duration) bool {
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-timer.C:
		return true
	}
}

// every calls f every d until ctx ends or f returns false.
func every(ctx context.Context, d time.Duration, f func() bool) {
	ticker := time.NewTicker(d)
	defer ticker.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-ticker.C:
			if !f() {
				return
			}
		}
	}
}

// isClosed reports whether done is closed, without waiting.
func isClosed(done <-chan struct{}) bool {
	select {
	case <-done:
		return true
	default:
		return false
	}
}

// wake leaves a wake in ready (capacity 1) for the goroutine waiting on
// it, unless one is there already.
func wake(ready chan struct{}) {
	select {
	case ready <- struct{}{}:
	default:
	}
}
