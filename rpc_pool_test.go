package main

import (
	"slices"
	"sync"
	"sync/atomic"
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

func TestIsUrgent(t *testing.T) {
	s := &mcpServer{tools: newTestToolSet(config{}, nil)}
	for _, tc := range []struct {
		method, params string
		want           bool
	}{
		{"tools/call", `{"name":"debug_health_check"}`, true},
		{"tools/call", `{"name":"debug_health_check","arguments":{}}`, true},
		{"tools/call", `{"NAME":"debug_health_check"}`, true}, // as callTool matches names
		{"tools/call", `{"name":"debug_health\u005fcheck"}`, true},
		{"tools/call", `{"name":"debug_get_snapshot","arguments":{"name":"debug_health_check"}}`, false},
		{"tools/call", `{"name":"debug_health_check_"}`, false},
		{"tools/call", `{"name":["debug_health_check"]}`, false},
		{"tools/call", `{}`, false},
		{"tools/call", ``, false},
		{"resources/read", `{"name":"debug_health_check"}`, false},
	} {
		req := request{ID: []byte("1"), Method: tc.method}
		if tc.params != "" {
			req.Params = []byte(tc.params)
		}
		if got := s.isUrgent(&req); got != tc.want {
			t.Errorf("isUrgent(%s %s) = %v, want %v", tc.method, tc.params, got, tc.want)
		}
	}
}

// TestUrgentLaneIsBounded submits more blocking tasks than the lane has
// workers: no more than maxUrgent start, the rest wait, and all run once
// released; close returns only after the last.
func TestUrgentLaneIsBounded(t *testing.T) {
	lane := newWorkerPool(maxUrgent, maxUrgentQueued, 0)
	release := make(chan struct{})
	started := make(chan struct{}, maxUrgent+10)
	var ran atomic.Int32
	flushed := 0
	for range maxUrgent + 10 {
		lane.submit(func() {
			started <- struct{}{}
			<-release
			ran.Add(1)
		}, 0, func() { flushed++ })
	}
	for range maxUrgent {
		<-started
	}
	lane.mu.Lock()
	workers := lane.workers
	lane.mu.Unlock()
	if workers != maxUrgent {
		t.Errorf("%d workers for %d blocked tasks, want the bound %d", workers, maxUrgent+10, maxUrgent)
	}
	if flushed != 0 {
		t.Errorf("flushed %d times with room in the queue", flushed)
	}
	close(release)
	lane.close()
	if got := ran.Load(); got != maxUrgent+10 {
		t.Errorf("%d tasks ran, want %d", got, maxUrgent+10)
	}
}
