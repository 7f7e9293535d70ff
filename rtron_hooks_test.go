package main

// Reactotron helpers only the tests use: the bridge's bound address, and
// frames of the Reactotron desktop app's that this server does not send,
// held against its captured frames with the ones it does.

import (
	"context"
	"fmt"
	"time"
)

// addr waits until the bridge is listening, ctx ends, or 10 s pass: a
// bridge that cannot listen fails the test with its listen error instead of
// hanging it.
func (b *reactotronBridge) addr(ctx context.Context) (string, error) {
	deadline := time.After(10 * time.Second)
	for {
		b.mu.Lock()
		addr, listening, listenErr := b.boundAddr, b.listening, b.listenErr
		b.mu.Unlock()
		if listening {
			return addr, nil
		}
		select {
		case <-ctx.Done():
			return "", ctx.Err()
		case <-deadline:
			return "", fmt.Errorf("the bridge is not listening after 10 s: %s", listenErr)
		case <-time.After(10 * time.Millisecond):
		}
	}
}
