package main

import (
	"slices"
	"sync"
	"testing"
)

// TestWorkerPoolWaitsForRoom: with the queue full (by count, or by bytes
// unless the queue is empty), submit flushes once, waits for a worker to
// take a task, then queues; every task runs, in order.
func TestWorkerPoolWaitsForRoom(t *testing.T) {
	for _, tc := range []struct {
		name             string
		maxQueued, bytes int
		queuedSize, size int
		wantWait         bool
	}{
		{"count", 1, 0, 1, 1, true},
		{"bytes", 10, 100, 60, 60, true},
		{"within bytes", 10, 100, 40, 60, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := newWorkerPool(1, tc.maxQueued, tc.bytes)
			var mu sync.Mutex
			var order []string
			ran := func(name string) func() {
				return func() {
					mu.Lock()
					order = append(order, name)
					mu.Unlock()
				}
			}
			started, release := make(chan struct{}), make(chan struct{})
			p.submit(func() { close(started); <-release; ran("a")() }, 0, func() { t.Error("flushed with an empty queue") })
			<-started // the one worker holds a; the queue is empty
			p.submit(ran("b"), tc.queuedSize, func() { t.Error("flushed with room in the queue") })
			flushed := make(chan struct{}, 2)
			submitted := make(chan struct{})
			go func() {
				defer close(submitted)
				p.submit(ran("c"), tc.size, func() { flushed <- struct{}{} })
			}()
			if tc.wantWait {
				<-flushed // c waits: nothing runs until a is released
				select {
				case <-submitted:
					t.Fatal("submit returned while the queue was full")
				default:
				}
			} else {
				<-submitted
			}
			close(release)
			<-submitted
			p.close()
			if len(flushed) != 0 {
				t.Errorf("flushed %d more times", len(flushed))
			}
			if want := []string{"a", "b", "c"}; !slices.Equal(order, want) {
				t.Errorf("ran %v, want %v", order, want)
			}
		})
	}
}
