package main

import "context"

// maxWaiting bounds the requests of one connection that run outside the
// pool because they wait (calls of tools the tool table marks `waits`).
// Past it such a request is answered at once, its context marked so that
// the tool refuses it (withoutWaitSlot, tool_wait.go), as the server-wide
// bound (maxWaits) does.
const maxWaiting = 256

// spawnWaiting runs a request that waits for the app on a goroutine of its
// own, outside the pool: it holds no worker while it waits, so every other
// request is served as fast as with nobody waiting. It reports false, and
// does nothing, when maxWaiting such requests already run. serve waits for
// every one of them; they end when intake stops (the MCP core cancels them
// on stopped).
func (c *rpcConn) spawnWaiting(ctx context.Context, req *request) bool {
	select {
	case c.waitSlots <- struct{}{}:
	default:
		return false
	}
	run := c.answer(ctx, req)
	c.waiting.Go(func() {
		defer func() { <-c.waitSlots }()
		run()
	})
	return true
}
