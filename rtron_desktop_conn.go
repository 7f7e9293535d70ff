package main

// rtron_desktop_conn.go is the relay's connection to the Reactotron desktop
// app (rtron_desktop.go): dialling with backoff, the writer and reader of
// one connection, the writer towards the app, and the queues between them.

import (
	"context"
	"errors"
	"time"

	"github.com/coder/websocket"
)

func newFrameQueue(frames int, bytes int64) queue[queuedFrame] {
	return newQueue(frames, bytes, func(f queuedFrame) int64 { return int64(len(f.data)) })
}

type queuedFrame struct {
	data  []byte
	key   string // for a request of the desktop: its answer's key
	ask   bool
	sub   bool     // a state.values.subscribe of the desktop's
	paths []string // and its paths
	retry bool     // its write to the desktop failed once already
}

// connectLoop keeps a connection to the desktop until the app's ends,
// dialling again with backoff after each failure or loss. It runs on a
// goroutine the app connection's owner counts, as the sockets it dials do.
func (r *desktopRelay) connectLoop() {
	retry := newBackoff(r.opts.MinBackoff, r.opts.MaxBackoff)
	opts := socketOptions{limit: r.opts.MaxFrame, closeTimeout: linkCloseTimeout, writeTimeout: r.opts.WriteTimeout}
	for r.ctx.Err() == nil {
		dialCtx, cancel := context.WithTimeout(r.ctx, r.opts.DialTimeout)
		sock, err := dialSocket(dialCtx, "ws://"+r.opts.Addr+"/", nil, r.app.sock.wg, opts)
		cancel()
		if err == nil {
			retry.reset()
			err = r.serveDesktop(sock)
		}
		if r.ctx.Err() != nil {
			return
		}
		delay := retry.next()
		r.mu.Lock()
		first := r.stats.LastError == ""
		r.stats.LastError = err.Error()
		r.mu.Unlock()
		if first {
			r.logger.Info("the Reactotron desktop app is not reachable; the app stays with the agent, and the relay retries", "err", err)
		} else {
			r.logger.Debug("the Reactotron desktop app is not reachable", "err", err, "retryIn", delay)
		}
		if !sleepCtx(r.ctx, delay) {
			return
		}
	}
}

var errDesktopPongLate = errors.New("the desktop app did not answer a ping in time")

// serveDesktop relays over one connection to the desktop until it fails or
// the app's connection ends, then closes it and returns once its reader
// and pings have stopped.
func (r *desktopRelay) serveDesktop(sock *wireSocket) error {
	defer sock.finish()
	r.mu.Lock()
	r.stats.Connected, r.stats.LastError = true, ""
	r.stats.Connects++
	r.mu.Unlock()
	r.logger.Info("relaying a Reactotron app to the desktop app")
	var rerr error
	readDone := make(chan struct{})
	go func() { rerr = r.readDesktop(sock); close(readDone) }()
	stopPings, pinged := make(chan struct{}), make(chan bool, 1)
	go func() {
		late := sock.pingUntil(stopPings, r.opts.PingInterval, r.opts.PongTimeout)
		if late {
			sock.dropSocket()
		}
		pinged <- late
	}()
	err := r.writeDesktop(func(data []byte) error { return sock.writeFrame(r.ctx, data) }, readDone)
	sock.closeWith(websocket.StatusGoingAway, "")
	<-readDone
	close(stopPings)
	late := <-pinged
	switch {
	case late:
		err = errDesktopPongLate
	case err == nil:
		err = rerr
	}
	r.mu.Lock()
	r.stats.Connected = false
	r.mu.Unlock()
	if err == nil {
		err = errors.New("connection closed")
	}
	return err
}

// writeDesktop writes the intro, then the queued frames as they come. It
// returns when a write fails, the reader has stopped (readDone), or the
// app's connection ends. Frames stay queued for the next
// connection when the reader has seen the desktop go, checked before each
// frame, and when a write fails: a desktop that died mid-write never read
// the frame. (One the socket accepted in the instant before the reader saw
// the desktop go is lost: the desktop acknowledges nothing.)
func (r *desktopRelay) writeDesktop(write func([]byte) error, readDone <-chan struct{}) error {
	if err := write(r.intro); err != nil {
		return err
	}
	r.count(&r.stats.SentToDesktop)
	for {
		f, ok := r.nextFrame(&r.toDesktop, r.toDesktopReady, readDone)
		if !ok {
			return nil
		}
		if err := write(f.data); err != nil {
			r.mu.Lock()
			if f.retry {
				r.toDesktop.dropped++ // failed twice: no frame holds the rest back for ever
			} else {
				f.retry = true
				r.toDesktop.pushFront(f) // the oldest: first out, or first dropped
			}
			r.mu.Unlock()
			return err
		}
		r.count(&r.stats.SentToDesktop)
	}
}

// count adds one to a counter of the relay's, which r.mu guards.
func (r *desktopRelay) count(n *int64) {
	r.mu.Lock()
	*n++
	r.mu.Unlock()
}

// readDesktop queues the desktop's frames for the app. A late pong drops
// the socket, which ends the read.
func (r *desktopRelay) readDesktop(sock *wireSocket) error {
	for {
		data, _, err := sock.readTextOwned() // queued: the message is kept
		if err != nil {
			return err
		}
		if data == nil {
			r.count(&r.stats.Oversized)
			continue
		}
		typ, key, ask := desktopRequestKey(data)
		paths, sub := desktopSubscribePaths(data)
		r.mu.Lock()
		if typ == "setClientId" {
			r.stats.ClientIDsIgnored++
		} else {
			r.toApp.push(queuedFrame{data: data, key: key, ask: ask, sub: sub, paths: paths})
		}
		r.mu.Unlock()
		wake(r.toAppReady)
	}
}

// writeApp writes the desktop's frames to the app until its connection ends.
func (r *desktopRelay) writeApp() {
	for {
		f, ok := r.nextFrame(&r.toApp, r.toAppReady, nil)
		if !ok || r.app.writeForDesktop(r, f) != nil {
			return // the app's connection is ending
		}
		r.count(&r.stats.SentToApp)
	}
}

// nextFrame pops the oldest frame of q, waiting for ready while q is
// empty. ok is false once stop is closed (looked at before each frame)
// or the app's connection ends.
func (r *desktopRelay) nextFrame(q *queue[queuedFrame], ready, stop <-chan struct{}) (f queuedFrame, ok bool) {
	for {
		select {
		case <-stop:
			return f, false
		default:
		}
		r.mu.Lock()
		f, ok = q.pop()
		r.mu.Unlock()
		if ok {
			return f, true
		}
		select {
		case <-ready:
		case <-stop:
			return f, false
		case <-r.ctx.Done():
			return f, false
		}
	}
}

// writeForDesktop writes one of the desktop's frames to the app; a request
// joins the queue of its answer's key first, in write order with the
// bridge's own (rtron_asks.go); a subscription is joined with the bridge's
// (rtron_subscribe.go).
func (c *reactotronConn) writeForDesktop(r *desktopRelay, f queuedFrame) error {
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	if f.ask {
		c.mu.Lock()
		if c.reason == "" && len(r.owned) < r.opts.MaxPending && len(c.waiters[f.key]) < maxReactotronWaiters {
			w := make(chan reactotronAnswer, 1)
			c.waiters[f.key] = append(c.waiters[f.key], w)
			r.owned[w] = time.Now()
		} else {
			r.count(&r.stats.Untracked)
		}
		c.mu.Unlock()
	}
	data := f.data
	if f.sub {
		data = c.subscriptionForDesktop(r, f)
	}
	return c.sock.writeFrame(r.ctx, data)
}
