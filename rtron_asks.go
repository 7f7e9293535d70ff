package main

// rtron_asks.go sends the bridge's requests to a Reactotron app and waits
// for their answers. Reactotron answers carry no id: each answer goes to the
// oldest request waiting under its key (type and path). A waiter joins its
// key's queue while the connection's write lock is held, so the queues are
// in the order the requests reach the app; the desktop app's requests join
// the same queues (rtron_desktop.go), and an answer goes to whoever asked
// first.
//
// A path through null: reactotron-redux throws while reading it and never
// answers. A request for a value is therefore fenced: right behind it goes
// a request for the top-level keys, which the same plugin answers in the
// same order. When the fence's answer arrives first, the value's answer is
// not coming, and the caller learns so at once instead of after
// REQUEST_TIMEOUT.

import (
	"context"
	"fmt"
	"slices"
	"time"
)

// errReactotronGone: the app's connection ended, or a write to it failed,
// before the answer came. It is a not-connected error like the adapters'.
var errReactotronGone error = &errNotConnected{Reason: linkReasonDisconnected}

// reactotronBadActionError: an action asked of the app (a dispatch, a
// custom command) cannot be put in a Reactotron message. Argument names
// the tool argument at fault and Problem says what is wrong with it.
type reactotronBadActionError struct{ Argument, Problem string }

func (e *reactotronBadActionError) Error() string {
	return fmt.Sprintf("argument %q: %s", e.Argument, e.Problem)
}

// maxReactotronFences bounds the fences waiting for their answer. An app
// that answers values but not keys leaves each fence waiting; past this
// many, values are asked unfenced, as before fences existed.
const maxReactotronFences = 8

// reactotronAsk is one request and the key its answer comes under.
type reactotronAsk struct {
	key   string
	frame []byte
}

// post writes the requests in order, each after its waiter has joined the
// queue of its key. The waiters are returned in the same order.
func (c *reactotronConn) post(ctx context.Context, asks ...reactotronAsk) ([]chan reactotronAnswer, error) {
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	ws := make([]chan reactotronAnswer, 0, len(asks))
	for _, a := range asks {
		w := make(chan reactotronAnswer, 1)
		c.mu.Lock()
		switch {
		case c.reason != "":
			c.mu.Unlock()
			c.forget(asks, ws)
			return nil, errReactotronGone
		case len(c.waiters[a.key]) >= maxReactotronWaiters:
			c.mu.Unlock()
			c.forget(asks, ws)
			return nil, &errTooManyPending{Via: sessionViaReactotron, Limit: maxReactotronWaiters}
		}
		c.waiters[a.key] = append(c.waiters[a.key], w)
		c.mu.Unlock()
		ws = append(ws, w)
		if err := c.sock.writeFrame(ctx, a.frame); err != nil {
			c.forget(asks, ws)
			return nil, errReactotronGone
		}
	}
	return ws, nil
}

// forget takes waiters out of their queues: their answers, if they come,
// go to the next in line.
func (c *reactotronConn) forget(asks []reactotronAsk, ws []chan reactotronAnswer) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for i, w := range ws {
		c.dropWaiterLocked(asks[i].key, w)
	}
}

// dropWaiterLocked takes w out of key's queue; the caller holds c.mu.
func (c *reactotronConn) dropWaiterLocked(key string, w chan reactotronAnswer) {
	list := slices.DeleteFunc(c.waiters[key], func(x chan reactotronAnswer) bool { return x == w })
	if len(list) == 0 {
		delete(c.waiters, key)
	} else {
		c.waiters[key] = list
	}
}

// ask writes asks (post) and waits for the first one's answer until the
// request timeout or ctx ends; a second ask is its fence (see the top of
// this file). A fence left waiting when the value comes first stays
// queued: its answer follows and takes it out. Waiters whose answer does
// not come are taken out of their queues.
func (c *reactotronConn) ask(ctx context.Context, method string, asks ...reactotronAsk) (reactotronAnswer, error) {
	ws, err := c.post(ctx, asks...)
	if err != nil {
		return reactotronAnswer{}, err
	}
	var fence chan reactotronAnswer // nil, never ready, when unfenced
	if len(ws) > 1 {
		fence = ws[1]
	}
	timeout := c.bridge.cfg.RequestTimeout
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	select {
	case a, ok := <-ws[0]:
		if !ok {
			return reactotronAnswer{}, errReactotronGone
		}
		return a, nil
	case _, ok := <-fence:
		// Answers are delivered in the order they arrive: had the first
		// one's come first, it would be here already.
		select {
		case a, ok := <-ws[0]:
			if ok {
				return a, nil
			}
		default:
		}
		c.forget(asks[:1], ws[:1])
		if !ok {
			return reactotronAnswer{}, errReactotronGone
		}
		return reactotronAnswer{missing: true}, nil
	case <-timer.C:
		c.forget(asks, ws)
		return reactotronAnswer{}, &errAdapterTimeout{Via: sessionViaReactotron, Method: method, After: timeout}
	case <-ctx.Done():
		c.forget(asks, ws)
		return reactotronAnswer{}, ctx.Err()
	}
}

// askValue asks the value at a dotted path behind a fence, unless
// maxReactotronFences wait already. An answer marked missing means the app
// has nothing there or the path runs through null or another value
// without keys.
func (c *reactotronConn) askValue(ctx context.Context, dotted string) (reactotronAnswer, error) {
	asks := []reactotronAsk{{key: valuesKey(dotted), frame: reactotronValuesRequest(dotted)},
		{key: keysKey(""), frame: reactotronKeysRequest("")}}
	c.mu.Lock()
	if len(c.waiters[asks[1].key]) >= maxReactotronFences {
		asks = asks[:1]
	}
	c.mu.Unlock()
	return c.ask(ctx, "state.values.request", asks...)
}

// reactotronKeysRequest asks for the keys of the object at a Reactotron
// path: the fence behind a value request (askValue).
func reactotronKeysRequest(path string) []byte {
	return reactotronServerFrame("state.keys.request", reactotronPathPayload(path))
}
