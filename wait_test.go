package main

import (
	"context"
	"slices"
	"testing"
	"testing/synctest"
	"time"
)

// TestBackoffDoublesToMaxAndResets: the delays start at min, double up to
// max and stay there; after reset they start at min again.
func TestBackoffDoublesToMaxAndResets(t *testing.T) {
	b := newBackoff(time.Second, 5*time.Second)
	var got []time.Duration
	for range 5 {
		got = append(got, b.next())
	}
	want := []time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 5 * time.Second, 5 * time.Second}
	if !slices.Equal(got, want) {
		t.Errorf("delays %v, want %v", got, want)
	}
	b.reset()
	if d := b.next(); d != time.Second {
		t.Errorf("after reset: %v, want the minimum", d)
	}
}

// TestSleepCtx: the wait lasts its delay, and a context that ends cuts it
// short.
func TestSleepCtx(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		if !sleepCtx(t.Context(), 3*time.Second) || time.Since(start) != 3*time.Second {
			t.Errorf("slept %v, want 3s", time.Since(start))
		}
		ctx, cancel := context.WithTimeout(t.Context(), time.Second)
		defer cancel()
		start = time.Now()
		if sleepCtx(ctx, time.Hour) || time.Since(start) != time.Second {
			t.Errorf("a context ending after 1s: slept %v", time.Since(start))
		}
	})
}

// TestEvery: f runs once per period, and the loop ends when f says so or
// the context ends.
func TestEvery(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start, n := time.Now(), 0
		every(t.Context(), time.Second, func() bool { n++; return n < 3 })
		if n != 3 || time.Since(start) != 3*time.Second {
			t.Errorf("f ran %d times in %v, want 3 in 3s", n, time.Since(start))
		}
		ctx, cancel := context.WithTimeout(t.Context(), 2500*time.Millisecond)
		defer cancel()
		n = 0
		every(ctx, time.Second, func() bool { n++; return true })
		if n != 2 {
			t.Errorf("within 2.5s f ran %d times, want 2", n)
		}
	})
}
