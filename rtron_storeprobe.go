package main

// rtron_storeprobe.go learns whether a Reactotron app has a store to read,
// without ever sending what would make a plugin throw.
//
// reactotron-redux 3.2.1 reads its store unguarded for state.keys.request,
// state.values.request, state.backup.request, state.action.dispatch and
// state.restore.request: sent before the app created its store, each
// throws inside the app's WebSocket message handler (a red screen in a
// React Native app). Only state.values.subscribe is guarded: without a
// store it answers state.values.change with no changes. reactotron-mst
// 3.1.12 guards every request, and answers none, until trackMstNode; Zustand
// and TanStack Query's plugins never read a Redux store.
//
// So the bridge sends an app no state read until it knows a store exists,
// and learns that from what is safe: a probe of two subscriptions written
// back to back, one with storeProbePath (a path no store has) and then the
// bridge's own list (rtron_subscribe.go), which replaces it at once. A
// plugin with a store answers the probe path with an entry for it, its
// value undefined: reactotron-redux once its store exists, reactotron-mst
// once it tracks a tree. Without a store neither answers at all (the
// client sends no empty change). The probe sent when the app introduces
// itself also asks for "*": reactotron-plugin-zustand answers it with
// every named store, which is how the bridge learns their names, and
// reactotron-redux with its whole state under "" (the state a backup on
// connect used to move). A state.action.complete from reactotron-redux or
// reactotron-mst, and any answer to a state read, also show that a store
// exists.

import (
	"context"
	"time"
)

// storeProbeTimeout bounds how long a read waits for the probe's answer
// (awaitStore): reactotron-mst without a tracked tree answers nothing.
const storeProbeTimeout = 1500 * time.Millisecond

// storeProbePath is the path the probe subscribes to (isProbePath).
const storeProbePath = "__devtools_mcp_store_probe__"

// errNoStore is a state read or dispatch asked of an app that has not shown
// a store: reactotron-redux has no store yet, reactotron-mst tracks no tree.
type errNoStore struct {
	Stream string // the stream asked for
	Method string // what was asked
}

func (e *errNoStore) Error() string {
	return "the app has no store yet for stream " + e.Stream + " (" + e.Method + " not sent)"
}

// noteReduxStore records that the app has a store, kept by a plugin that
// answers Redux reads.
func (c *reactotronConn) noteReduxStore(sink reactotronStateSink) {
	sink.noteStatePlugin(statePluginRedux)
	c.mu.Lock()
	defer c.mu.Unlock()
	if !isClosed(c.storeShown) {
		close(c.storeShown)
	}
}

// noteSubscriptionAnswer notes a store, kept by a plugin that answers Redux
// reads, when a state.values.change has an entry for a probe path: the
// probe's own, or "" or "*" (the whole state, as Redux and MST report it).
func (c *reactotronConn) noteSubscriptionAnswer(sink reactotronStateSink, payload []byte) {
	marked := false
	_ = eachElement(rawMember(payload, "changes"), func(_ int, e []byte) bool {
		if p, ok := wireString(rawMember(e, "path")); ok && isProbePath(p) {
			marked = true
		}
		return !marked
	})
	if marked {
		c.noteReduxStore(sink)
	}
}

// isProbePath reports whether a change entry's path is one only the probe
// asks for: never a store of a name, never the desktop's unless its own
// list asks for it.
func isProbePath(p string) bool { return p == storeProbePath || p == "" || p == "*" }

// sendProbe writes the probe described at the top of this file.
func (c *reactotronConn) sendProbe(ctx context.Context, onIntro bool) error {
	paths := []string{storeProbePath}
	if onIntro {
		paths = []string{"*", storeProbePath}
	}
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	if err := c.sock.writeFrame(ctx, reactotronSubscribe(paths)); err != nil {
		return err
	}
	return c.writeSubscriptionLocked(ctx)
}

// awaitStore returns nil once the app has shown a store, probing for one
// when none is known; errNoStore when none shows within storeProbeTimeout
// (or the request timeout, when shorter).
func (c *reactotronConn) awaitStore(ctx context.Context, stream, method string) error {
	if isClosed(c.storeShown) {
		return nil
	}
	if err := c.sendProbe(ctx, false); err != nil {
		return errReactotronGone
	}
	wait := storeProbeTimeout
	if f := c.bridge.cfg.Tune.StoreProbe; f != nil {
		wait = f()
	}
	timer := time.NewTimer(min(wait, c.bridge.cfg.RequestTimeout))
	defer timer.Stop()
	select {
	case <-c.storeShown:
		return nil
	case <-timer.C:
		return &errNoStore{Stream: stream, Method: method}
	case <-c.done:
		return errReactotronGone
	case <-ctx.Done():
		return ctx.Err()
	}
}
