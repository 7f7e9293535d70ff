package main

// Hooks the tests and benchmarks use to drive the simulated app from
// inside the process: a fixed big Redux state, pushes as fast as the socket
// takes them, and a connection without a logger.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
)

// errDemoNotConnected is returned by pushEvents when no connection is live.
var errDemoNotConnected = errors.New("not connected")

// setReduxState replaces the reported Redux state by state, which must be
// valid JSON, and records a state_snapshot of it. Later actions are still
// recorded but leave the reported state alone, so benchmarks keep their big
// state. It panics on invalid JSON, a caller's bug.
func (a *demoApp) setReduxState(state json.RawMessage) {
	if !json.Valid(state) {
		panic("demoApp.setReduxState: state is not valid JSON")
	}
	owned := bytes.Clone(state)
	// A real app holds its store as objects: decode the state now, so
	// that path requests do not pay for it (demo_paths.go).
	a.paths.tree(a.reduxStream.name, owned)
	a.takeReduxState(owned)
}

// setReduxStateDecoded is setReduxState for a state the test holds decoded
// too: decoded, which must equal what decodeState(state) gives (as
// largeReduxState's states do) and must not change afterwards, becomes the
// app's store as it is, which spares a big state's second decoding.
func (a *demoApp) setReduxStateDecoded(state json.RawMessage, decoded any) {
	owned := bytes.Clone(state)
	a.paths.mu.Lock()
	a.paths.streams[a.reduxStream.name] = demoTree{encoding: owned, root: decoded}
	a.paths.mu.Unlock()
	a.takeReduxState(owned)
}

// takeReduxState makes owned, already kept as the Redux tree, the
// reported state and records its snapshot.
func (a *demoApp) takeReduxState(owned json.RawMessage) {
	a.mutate(func() {
		a.override = owned
		a.reduxStream.state = owned
		a.snapshotLocked(a.reduxStream)
	})
}

// pushEvents records n Redux actions (ui/hideToast of the oldest toast, or
// ui/showToast when none is shown) and pushes them as fast as the socket takes them, returning
// once all are written. It fails when not connected, when the connection
// ends or when ctx is done.
func (a *demoApp) pushEvents(ctx context.Context, n int) error {
	a.mu.Lock()
	link := a.link
	a.mu.Unlock()
	if link == nil {
		return fmt.Errorf("demo app: push events: %w", errDemoNotConnected)
	}
	for range n {
		if err := a.pushOne(ctx, link); err != nil {
			return fmt.Errorf("demo app: push events: %w", err)
		}
	}
	if err := link.flush(ctx); err != nil {
		return fmt.Errorf("demo app: push events: %w", err)
	}
	return nil
}

func (a *demoApp) pushOne(ctx context.Context, link *demoLink) error {
	a.pushMu.Lock()
	defer a.pushMu.Unlock()
	a.mu.Lock()
	a.toastCycleLocked()
	events, live := a.takeOutboxLocked()
	a.mu.Unlock()
	if live != link {
		return errDemoNotConnected
	}
	for _, ev := range events {
		if err := link.enqueue(ctx, demoPush{event: ev}); err != nil {
			return err
		}
	}
	return nil
}

// toastCycleLocked is pushEvents' action: show a toast, or hide the oldest.
func (a *demoApp) toastCycleLocked() {
	if len(a.redux.UI.Toasts) == 0 {
		a.showToastLocked()
		return
	}
	id := a.redux.UI.Toasts[0].ID
	a.dispatchLocked("ui/hideToast", map[string]int{"id": id}, func(s *demoReduxState) {
		s.UI.Toasts = s.UI.Toasts[1:]
	})
}

// connect dials url, performs the handshake and serves requests and pushes
// until ctx is done (then it closes with 1000, after answering the requests
// in flight) or the connection ends. It returns after all its goroutines
// have exited: nil when ctx ended it, a *demoHandshakeError (wrapped) when
// the server refused the handshake, else the error that ended it.
func (a *demoApp) connect(ctx context.Context, wsURL string) error {
	return a.connectLogged(ctx, wsURL, slog.New(slog.DiscardHandler), nil)
}

// flush waits until every push queued before it has been written.
func (l *demoLink) flush(ctx context.Context) error {
	flushed := make(chan struct{})
	if err := l.enqueue(ctx, demoPush{flushed: flushed}); err != nil {
		return err
	}
	select {
	case <-flushed:
		return nil
	case <-l.done:
		return errors.New("connection ended")
	case <-ctx.Done():
		return ctx.Err()
	}
}

// enqueue queues a push, waiting for room.
func (l *demoLink) enqueue(ctx context.Context, p demoPush) error {
	if p.event != nil && !l.fits(p.event) {
		return nil
	}
	select {
	case l.pushes <- p:
		return nil
	case <-l.done:
		return errors.New("connection ended")
	case <-ctx.Done():
		return ctx.Err()
	}
}
