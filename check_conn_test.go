package main

import (
	"sync"
	"testing"
)

// TestCloseHandshakeTwiceAtOnce: the read loop and the handshake timer can
// both end the wait for a handshake at the same moment; neither may panic.
func TestCloseHandshakeTwiceAtOnce(t *testing.T) {
	t.Parallel()
	for range 2000 {
		c := &checkConn{handshaken: make(chan struct{})}
		start := make(chan struct{})
		var wg sync.WaitGroup
		for range 2 {
			wg.Go(func() {
				<-start
				c.closeHandshake()
			})
		}
		close(start)
		wg.Wait()
		select {
		case <-c.handshaken:
		default:
			t.Fatal("handshaken is still open after closeHandshake")
		}
	}
}
