package main

// Reactotron helpers only the tests use: the bridge's bound address, and
// frames of the Reactotron desktop app's that this server does not send,
// held against its captured frames with the ones it does.

import (
	"context"
	"time"
)

// addr waits until the bridge is listening, or ctx ends.
func (b *reactotronBridge) addr(ctx context.Context) (string, error) {
	for {
		b.mu.Lock()
		addr, listening := b.boundAddr, b.listening
		b.mu.Unlock()
		if listening {
			return addr, nil
		}
		select {
		case <-ctx.Done():
			return "", ctx.Err()
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// reactotronKeysRequest asks for the keys of the object at a Reactotron path.
func reactotronKeysRequest(path string) []byte {
	return reactotronServerFrame("state.keys.request", reactotronPathPayload(path))
}
