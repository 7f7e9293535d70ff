package main

// mcp_progress.go carries what a call that waits needs from the MCP core:
// progress notifications for a request that asked for them with
// _meta.progressToken (the same in both eras; over HTTP, 2026-07-28 sends
// them on the request's own stream, asksProgress), and an end when the
// transport stops taking requests.

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
)

// progressToken is params._meta.progressToken, a string or an integer as
// both eras define it, or nil when the request carries none (or one of
// another type, which names no progress a client could follow).
func progressToken(params json.RawMessage) json.RawMessage {
	var token json.RawMessage
	_ = eachMember(params, func(name string, v []byte) bool {
		if name == "_meta" && rawKind(v) == "object" {
			token = rawMember(v, "progressToken")
		}
		return true
	})
	if !json.Valid(token) {
		return nil // params that reach a handler are valid JSON; a token must be too, to be sent back
	}
	if _, isInt := wireInt(token); isInt || rawKind(token) == "string" {
		return token
	}
	return nil
}

// asksProgress reports whether req is a tool call that asked for progress:
// over HTTP, the 2026-07-28 revision answers it with a stream.
func asksProgress(req *request) bool {
	return req.Method == "tools/call" && progressToken(req.Params) != nil
}

// waits reports whether req calls a tool that waits for the app (the tool
// table's `waits`): transports run it outside their pool of workers.
func (s *mcpServer) waits(req *request) bool {
	t := s.calledTool(req)
	return t != nil && t.waits
}

// callContext prepares the context of a call of t: progress reports go to
// the client when the request asked for them, and a call that waits ends
// when the transport stops taking requests. done releases what it holds.
func callContext(ctx context.Context, t *tool, params json.RawMessage) (_ context.Context, done func()) {
	call := callFrom(ctx)
	if token := progressToken(params); token != nil && call.send != nil {
		send := call.send
		ctx = withProgress(ctx, func(progress, total float64, message string) {
			p := map[string]any{"progressToken": token, "progress": progress, "message": strings.TrimSpace(message)}
			if total > 0 {
				p["total"] = total
			}
			send("notifications/progress", p)
		})
	}
	if !t.waits || call.stopped == nil {
		return ctx, func() {}
	}
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Go(func() {
		select {
		case <-call.stopped:
			cancel()
		case <-ctx.Done():
		}
	})
	return ctx, func() { cancel(); wg.Wait() }
}
