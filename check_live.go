package main

// check_live.go holds check-adapter's checks of what happens over time:
// pushed messages, the acting requests, pings, the reconnect after the kit
// closes the socket, frame sizes, and the frames seen over the whole run.

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/coder/websocket"
)

func checkPushEvents(ctx context.Context, k *checkKit) *checkOutcome {
	_, _, _, pushes := k.conn.recorded()
	if !slices.ContainsFunc(pushes, func(p checkPush) bool { return p.kind == "event" }) && k.opts.PushWait > 0 {
		// An app pushes when something happens in it: give it a moment.
		fmt.Fprintf(k.progress, "  waiting up to %s for the adapter to push an event\n", k.opts.PushWait)
		select {
		case <-k.conn.pushed:
		case <-time.After(k.opts.PushWait):
		case <-ctx.Done():
		}
		_, _, _, pushes = k.conn.recorded()
	}
	advertised := map[string]bool{}
	for _, s := range k.info.Streams {
		advertised[s.Name] = true
	}
	last := map[string]checkPush{}
	var order []string
	for _, p := range pushes {
		if p.kind == "streams" {
			for _, s := range p.streams {
				advertised[s.Name] = true
			}
			continue
		}
		prev, seen := last[p.event.Stream]
		switch {
		case p.problem != "":
			return checkFailed("(nothing: read a pushed event)", "%s: %s", clipJSON(p.frame), p.problem)
		case !advertised[p.event.Stream]:
			return checkFailed("(nothing: read a pushed event)", "an event of stream %q, which was never advertised", p.event.Stream)
		case seen && p.event.Seq <= prev.event.Seq:
			return checkFailed("(nothing: read pushed events)", "stream %q pushed seq %d after seq %d", p.event.Stream, p.event.Seq, prev.event.Seq)
		case !seen:
			order = append(order, p.event.Stream)
		}
		last[p.event.Stream] = p
	}
	if len(last) == 0 {
		return checkSkip("the adapter pushed no events (pushes are optional)")
	}
	// The newest push of each stream must be what a query finds under its seq.
	for _, stream := range order {
		p := last[stream]
		params := map[string]any{"stream": stream, "limit": 1, "since_seq": p.event.Seq - 1}
		ans, fail := k.query(ctx, params)
		if fail != nil {
			return fail
		}
		if p.event.Seq < ans.oldestSeq {
			continue // evicted since
		}
		if len(ans.events) != 1 || ans.events[0].head.Seq != p.event.Seq || ans.events[0].head.Type != p.event.Type {
			got := "no event"
			if len(ans.events) > 0 {
				got = fmt.Sprintf("seq %d of type %q", ans.events[0].head.Seq, ans.events[0].head.Type)
			}
			return checkFailed(checkSent("events.query", params), "%s; the adapter pushed seq %d of type %q", got, p.event.Seq, p.event.Type)
		}
	}
	return nil
}

func checkPushStreams(ctx context.Context, k *checkKit) *checkOutcome {
	_, _, _, pushes := k.conn.recorded()
	var latest []streamState
	for _, p := range pushes {
		if p.kind == "streams" && p.problem != "" {
			return checkFailed("(nothing: read a pushed streams message)", "%s: %s", clipJSON(p.frame), p.problem)
		}
		if p.streams != nil {
			latest = p.streams
		}
	}
	if latest == nil {
		return checkSkip("the adapter pushed no stream list (pushes are optional)")
	}
	k.listed = nil // ask again: the list changed
	list, fail := k.streams(ctx)
	if fail != nil {
		return fail
	}
	for _, s := range latest {
		if !slices.ContainsFunc(list, func(l checkStream) bool { return *l.Name == s.Name }) {
			return checkFailed("streams.list {}", "no stream %q, which the adapter's last streams push lists", s.Name)
		}
	}
	return nil
}

func checkDispatch(ctx context.Context, k *checkKit) *checkOutcome {
	if !k.offers(capStateDispatch) {
		return checkSkip("not claimed: the handshake's capabilities lack %q", capStateDispatch)
	}
	params := map[string]any{"action": map[string]any{"type": "checkAdapter/probe", "payload": map[string]bool{"harmless": true}}}
	raw, fail := k.call(ctx, "state.dispatch", params)
	if fail != nil {
		return fail
	}
	var res struct {
		Seq *int64 `json:"seq"`
	}
	if err := json.Unmarshal(raw, &res); err != nil || res.Seq == nil {
		return checkFailed(checkSent("state.dispatch", params), "%s, not {seq}", clipJSON(raw))
	}
	q := map[string]any{"stream": "redux", "limit": 1, "since_seq": *res.Seq - 1}
	ans, fail := k.query(ctx, q)
	if fail != nil {
		return fail
	}
	if len(ans.events) != 1 || ans.events[0].head.Seq != *res.Seq || ans.events[0].head.Type != "action_dispatched" {
		return checkFailed(checkSent("events.query", q), "no action_dispatched event with seq %d, which state.dispatch answered", *res.Seq)
	}
	return k.expectError(ctx, "state.dispatch", map[string]any{"action": map[string]int{"type": 1}}, wireCodeInvalidParams)
}

func checkCommands(ctx context.Context, k *checkKit) *checkOutcome {
	if !k.offers(capCommands) {
		return checkSkip("not claimed: the handshake's capabilities lack %q", capCommands)
	}
	raw, fail := k.call(ctx, "commands.list", nil)
	if fail != nil {
		return fail
	}
	var res struct {
		Commands *[]struct {
			Command *string `json:"command"`
		} `json:"commands"`
	}
	if err := json.Unmarshal(raw, &res); err != nil || res.Commands == nil {
		return checkFailed("commands.list {}", "%s, not {commands: [...]}", clipJSON(raw))
	}
	for i, c := range *res.Commands {
		if c.Command == nil || *c.Command == "" {
			return checkFailed("commands.list {}", "commands[%d] has no command name", i)
		}
	}
	return k.expectError(ctx, "commands.run", map[string]any{"command": "check-adapter.noSuchCommand", "args": map[string]any{}}, wireCodeInvalidParams)
}

func checkPing(ctx context.Context, k *checkKit) *checkOutcome {
	pingCtx, cancel := context.WithTimeout(ctx, k.opts.PongTimeout)
	defer cancel()
	if err := k.conn.ws.Ping(pingCtx); err != nil {
		return checkFailed("a WebSocket ping frame", "no pong within %s: %v", k.opts.PongTimeout, err)
	}
	return nil
}

// checkReconnect closes the connection with 1001, as a server shutting down
// does, announces checkSmallPayload, and waits for the adapter to come back.
func checkReconnect(ctx context.Context, k *checkKit) *checkOutcome {
	k.mu.Lock()
	k.nextPayload = k.opts.SmallPayload
	k.mu.Unlock()
	old := k.conn
	old.ws.Close(websocket.StatusGoingAway, "check-adapter: testing the reconnect")
	<-old.done
	start := time.Now()
	c, err := k.awaitConn(ctx, k.opts.ReconnectTimeout)
	sent := "close code 1001 (server going away)"
	if err != nil {
		return &checkOutcome{sent: sent, got: err.Error(), blocks: "the adapter did not reconnect"}
	}
	k.conn = c
	c.mu.Lock()
	info, refusal, noHandshake := c.info, c.refusal, c.noHandshake
	c.mu.Unlock()
	switch {
	case refusal != nil:
		return &checkOutcome{sent: sent, got: fmt.Sprintf("a new connection whose handshake is refused: %s: %s", refusal.code, refusal.message), blocks: "no valid handshake after the reconnect"}
	case noHandshake || info == nil:
		return &checkOutcome{sent: sent, got: "a new connection without a handshake", blocks: "no valid handshake after the reconnect"}
	}
	k.info = info
	fmt.Fprintf(k.progress, "  the adapter reconnected after %s\n", time.Since(start).Round(time.Millisecond))
	return nil
}

func checkSessionID(_ context.Context, k *checkKit) *checkOutcome {
	if k.info == k.first {
		return checkSkip("no reconnect happened")
	}
	if k.info.SessionID != k.first.SessionID {
		return checkFailed("close code 1001, then the adapter's new handshake", "sessionId %q, the first handshake's was %q", k.info.SessionID, k.first.SessionID)
	}
	return nil
}

// checkMaxPayload asks, on the connection that announced the small
// maxPayload, for the largest whole snapshot, which must be refused with
// PAYLOAD_TOO_LARGE, then checks that no frame of the run was over the
// maxPayload of its connection.
func checkMaxPayload(ctx context.Context, k *checkKit) *checkOutcome {
	if k.conn.maxPayload == k.opts.SmallPayload && k.opts.SmallPayload < k.opts.MaxPayload {
		names, _ := k.snapshotStreams(ctx) // none: nothing to ask for
		for _, name := range names {
			params := map[string]any{"stream": name}
			a, err := k.conn.request(ctx, "snapshot.get", params)
			sent := checkSent("snapshot.get", params) + fmt.Sprintf(" with maxPayload %d", k.conn.maxPayload)
			switch {
			case err != nil:
				return checkFailed(sent, "%v", err)
			case a.oversized > 0:
				return checkFailed(sent, "a response of %d bytes, over maxPayload %d, not PAYLOAD_TOO_LARGE", a.oversized, k.conn.maxPayload)
			case a.err != nil && a.err.Code != wireCodePayloadTooLarge:
				return checkFailed(sent, "error %s, not PAYLOAD_TOO_LARGE", a.err.Code)
			}
		}
	}
	for _, c := range k.allConns() {
		if oversized, _, _, _ := c.recorded(); len(oversized) > 0 {
			return checkFailed("(nothing: read every frame)", "%s", strings.Join(oversized, "; "))
		}
	}
	return nil
}

func checkFrames(_ context.Context, k *checkKit) *checkOutcome {
	for _, c := range k.allConns() {
		_, stray, malformed, _ := c.recorded()
		if len(malformed) > 0 {
			return checkFailed("(nothing: read every frame)", "frames that are not a JSON object with a string type: %s", strings.Join(malformed, "; "))
		}
		if len(stray) > 0 {
			return checkFailed("(nothing: read every frame)", "responses to no pending request: %s", strings.Join(stray, "; "))
		}
	}
	return nil
}
