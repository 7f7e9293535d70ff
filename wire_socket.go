package main

// wire_socket.go is the life of one WebSocket connection, whatever speaks
// over it and whether it was accepted or dialled (wire_dial.go), and the
// part of a listener that holds its connections. Every link uses all of it:
// the adapter link (wire_link.go, wire_conn.go) and the Reactotron bridge
// (rtron_bridge.go) for the sockets they accept, the Metro link
// (metro_conn.go) and the Reactotron desktop relay (rtron_desktop_conn.go)
// for the sockets they dial. The bridge also keeps its own lock above the
// writer's, to put several frames and their waiters in one order
// (rtron_asks.go, rtron_subscribe.go).

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"maps"
	"net"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coder/websocket"
)

// rawConnKey carries the accepted net.Conn in the request context, so that a
// close handshake can be bounded with a socket deadline and a dead peer
// dropped at once. Give a listener's http.Server socketConnContext.
type rawConnKey struct{}

func socketConnContext(ctx context.Context, c net.Conn) context.Context {
	return context.WithValue(ctx, rawConnKey{}, c)
}

// newSocketServer is the http.Server of a listener that upgrades to
// WebSocket: bounded headers, its errors logged at debug level, and each
// request given its net.Conn (socketConnContext).
func newSocketServer(upgrade http.HandlerFunc, logger *slog.Logger) *http.Server {
	return &http.Server{
		Handler:           upgrade,
		ReadHeaderTimeout: 10 * time.Second,
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          slog.NewLogLogger(logger.Handler(), slog.LevelDebug),
		ConnContext:       socketConnContext,
	}
}

// socketHost holds the connections (of type C) one listener accepted. Its
// methods are safe for concurrent use.
type socketHost[C comparable] struct {
	mu       sync.Mutex
	stopping bool
	conns    map[C]struct{}
	// wg counts every goroutine the host's connections run (handlers,
	// keepalives, closers, writers); Add is called either under mu while
	// !stopping, or by a goroutine wg already counts.
	wg sync.WaitGroup
}

// socketOptions are a connection's tunables, read once when it is accepted.
type socketOptions struct {
	limit        int64         // largest message kept (MAX_PAYLOAD_SIZE)
	closeTimeout time.Duration // close handshake, then the socket is dropped
	writeTimeout time.Duration // one frame write, for writeSoon
}

// upgrade accepts the WebSocket of an upgrade request the listener has
// vetted (Host and Origin follow wire protocol §7, which differs from
// coder/websocket's own origin check) and serves it: newConn makes the
// listener's connection over the socket and serve runs it until it ends.
// A stopping host refuses with 503; a connection accepted while the host
// stops is closed with 1001 at once.
func (h *socketHost[C]) upgrade(w http.ResponseWriter, r *http.Request, logger *slog.Logger, what string, opts socketOptions,
	newConn func(*wireSocket) C, serve func(C)) {
	h.mu.Lock()
	if h.stopping {
		h.mu.Unlock()
		http.Error(w, "devtools-mcp is shutting down", http.StatusServiceUnavailable)
		return
	}
	h.wg.Add(1)
	h.mu.Unlock()
	defer h.wg.Done()

	ws, err := websocket.Accept(w, r, &websocket.AcceptOptions{InsecureSkipVerify: true})
	if err != nil {
		logger.Debug(what+" upgrade failed", "remote", r.RemoteAddr, "err", err)
		return
	}
	raw, _ := r.Context().Value(rawConnKey{}).(net.Conn)
	sock := newWireSocket(ws, raw, r.RemoteAddr, &h.wg, opts)
	c := newConn(sock)
	h.mu.Lock()
	if h.conns == nil {
		h.conns = make(map[C]struct{})
	}
	h.conns[c] = struct{}{}
	stopping := h.stopping
	h.mu.Unlock()
	logger.Debug(what+" connection opened", "remote", sock.remote)
	if stopping {
		sock.closeWith(websocket.StatusGoingAway, "server shutting down")
	}
	serve(c)
	h.mu.Lock()
	delete(h.conns, c)
	h.mu.Unlock()
}

// whileRunning calls f under the host's lock unless the host is stopping,
// and reports whether it did: what f records, stop's caller sees.
func (h *socketHost[C]) whileRunning(f func()) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.stopping {
		return false
	}
	f()
	return true
}

// stop ends intake and returns the connections open now, for the caller
// to close; wait then waits for every goroutine they run.
func (h *socketHost[C]) stop() []C {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.stopping = true
	return slices.Collect(maps.Keys(h.conns))
}

func (h *socketHost[C]) open() []C {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Collect(maps.Keys(h.conns))
}

func (h *socketHost[C]) wait() { h.wg.Wait() }

// wireSocket is one WebSocket connection, accepted or dialled. Its methods
// are safe for concurrent use, except that one goroutine reads.
type wireSocket struct {
	ws     *websocket.Conn
	raw    net.Conn // the socket under ws; nil only if the server did not provide it
	remote string
	wg     *sync.WaitGroup // the host's
	opts   socketOptions

	// writeSem is the connection's one writer lock; it is a channel so that
	// waiting for it gives up with the write's context. It guards writeBuf.
	writeSem chan struct{}
	writeBuf bytes.Buffer

	// Owned by the reader.
	readBuf []byte
	probe   [1]byte
	// lastHandoff is the size of the last message whose buffer went with its
	// result: the next buffer that must grow past wireReadBufferMin grows
	// straight to about that size, since snapshots tend to repeat their size.
	lastHandoff int

	done      chan struct{} // closed by finish
	closeOnce sync.Once
	closingAt atomic.Pointer[time.Time] // when closeWith was first called

	lifeMu   sync.Mutex
	finished bool // no new goroutines for this connection
}

// newWireSocket gives ws its life: wg is its owner's (a listener's host, or
// a dialling link's), raw the socket under ws (nil when unknown).
func newWireSocket(ws *websocket.Conn, raw net.Conn, remote string, wg *sync.WaitGroup, opts socketOptions) *wireSocket {
	// Messages over the limit are streamed and discarded by readMessage
	// instead of closing the connection with 1009 as the stock limit does.
	ws.SetReadLimit(-1)
	return &wireSocket{ws: ws, raw: raw, remote: remote, wg: wg, opts: opts,
		writeSem: make(chan struct{}, 1), done: make(chan struct{})}
}

// goTracked runs f in a goroutine the host waits for, unless the
// connection has finished.
func (s *wireSocket) goTracked(f func()) bool {
	s.lifeMu.Lock()
	defer s.lifeMu.Unlock()
	if s.finished {
		return false
	}
	// Counted: the handler's own count is still held, so wg is above zero.
	s.wg.Go(f)
	return true
}

// finish marks the connection torn down: writes waiting for the lock give
// up, and goTracked starts nothing more. Call it once, when serving ends.
func (s *wireSocket) finish() {
	close(s.done)
	s.lifeMu.Lock()
	s.finished = true
	s.lifeMu.Unlock()
}

// closeWith starts the close handshake with code, without waiting for it;
// the socket is dropped if the handshake has not finished closeTimeout after
// it began. Only the first call has an effect.
func (s *wireSocket) closeWith(code websocket.StatusCode, reason string) {
	s.closeOnce.Do(func() {
		now := time.Now()
		s.closingAt.Store(&now)
		s.goTracked(func() {
			// The clock starts here, next to the close frame's write, so
			// that a slow start of this goroutine does not eat the time the
			// peer has to answer.
			// Not goTracked: the clock must run even when the connection
			// finished right after asking for the close. This goroutine's
			// own count is held, so wg is above zero.
			closed := make(chan struct{})
			s.wg.Go(func() {
				timer := time.NewTimer(s.opts.closeTimeout)
				defer timer.Stop()
				select {
				case <-closed:
				case <-timer.C:
					if s.raw != nil {
						s.raw.SetDeadline(time.Now())
					}
				}
			})
			s.ws.Close(code, reason)
			close(closed)
		})
	})
}

// dropSocket ends the connection at once, without a close handshake.
func (s *wireSocket) dropSocket() {
	if s.raw != nil {
		s.raw.Close()
		return
	}
	s.goTracked(func() { s.ws.CloseNow() })
}

// pingUntil pings every interval until stop is closed or a ping fails. It
// reports whether a pong came later than pongTimeout on a connection whose
// close had not begun by then (a dead peer); false when it ended otherwise.
func (s *wireSocket) pingUntil(stop <-chan struct{}, interval, pongTimeout time.Duration) (late bool) {
	ticker := time.NewTicker(interval)
	defer ticker.Stop()
	for {
		select {
		case <-stop:
			return false
		case <-ticker.C:
		}
		deadline := time.Now().Add(pongTimeout)
		ctx, cancel := context.WithDeadline(context.Background(), deadline)
		err := s.ws.Ping(ctx)
		timedOut := ctx.Err() != nil
		cancel()
		if err == nil {
			continue
		}
		// The pong is late when the deadline passed before we began to
		// close: a close of ours can hold a ping past its deadline, but one
		// that began after it is the owner reacting to the failure (the
		// deadline closes the connection when it cuts the ping's write,
		// and the reader may see that first).
		closingAt := s.closingAt.Load()
		return timedOut && (closingAt == nil || !closingAt.Before(deadline))
	}
}

// writeJSON encodes v and writes it as one text frame, holding the writer
// lock. ctx bounds both the wait for the lock and the write; when it ends
// mid-write the connection is closed (coder/websocket has no other way to
// abandon a partly written frame). A receive from abort (nil for none) gives
// up the wait for the lock only.
func (s *wireSocket) writeJSON(ctx context.Context, abort <-chan struct{}, v any) error {
	if err := s.lockWriter(ctx, abort); err != nil {
		return err
	}
	defer s.unlockWriter()
	s.writeBuf.Reset()
	enc := json.NewEncoder(&s.writeBuf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return err
	}
	frame := bytes.TrimSuffix(s.writeBuf.Bytes(), []byte("\n"))
	err := s.ws.Write(ctx, websocket.MessageText, frame)
	if s.writeBuf.Cap() > 64<<10 {
		s.writeBuf = bytes.Buffer{} // do not keep a rare large frame's buffer
	}
	return err
}

// writeFrame writes a prebuilt text frame as writeJSON writes v, bounded
// by ctx and by the write timeout.
func (s *wireSocket) writeFrame(ctx context.Context, frame []byte) error {
	ctx, cancel := context.WithTimeout(ctx, s.opts.writeTimeout)
	defer cancel()
	if err := s.lockWriter(ctx, nil); err != nil {
		return err
	}
	defer s.unlockWriter()
	return s.ws.Write(ctx, websocket.MessageText, frame)
}

// lockWriter takes the writer lock, giving up when ctx ends, abort
// receives, or the connection has finished.
func (s *wireSocket) lockWriter(ctx context.Context, abort <-chan struct{}) error {
	select {
	case s.writeSem <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-abort:
		return context.Canceled
	case <-s.done:
		return net.ErrClosed
	}
}

func (s *wireSocket) unlockWriter() { <-s.writeSem }

// writeSoon writes v bounded by the write timeout.
func (s *wireSocket) writeSoon(v any) error {
	ctx, cancel := context.WithTimeout(context.Background(), s.opts.writeTimeout)
	defer cancel()
	return s.writeJSON(ctx, nil, v)
}

// readMessage reads the next data message. A text message within the
// limit is returned whole, in s.readBuf (valid until the next call unless
// handed off). A larger one is read and discarded without holding more
// than limit bytes of it (plus a one-byte probe; the rest goes through
// io.Discard's shared buffers); its first wirePrefixLen bytes are returned
// with its full size. Binary messages are discarded; only their size is
// returned. Reads use no context: they end when the socket closes.
func (s *wireSocket) readMessage() (websocket.MessageType, []byte, int64, error) {
	typ, r, err := s.ws.Reader(context.Background())
	if err != nil {
		return 0, nil, 0, err
	}
	limit := int(s.opts.limit)
	buf := s.readBuf[:0]
	if cap(buf) == 0 {
		buf = make([]byte, 0, min(wireReadBufferMin, limit))
		s.readBuf = buf
	}
	if typ != websocket.MessageText {
		n, err := io.Copy(io.Discard, r)
		return typ, nil, n, err
	}
	// Every buffer is at most limit bytes long.
	for {
		if len(buf) == cap(buf) {
			if len(buf) >= limit {
				break
			}
			size := 2 * cap(buf)
			if s.lastHandoff > size {
				size = s.lastHandoff + s.lastHandoff/8
			}
			grown := make([]byte, len(buf), min(size, limit))
			copy(grown, buf)
			buf = grown
			s.readBuf = buf[:0]
		}
		n, err := r.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if err == io.EOF {
			return typ, buf, int64(len(buf)), nil
		}
		if err != nil {
			return 0, nil, 0, err
		}
	}
	// The buffer is full at the limit: one more byte makes the frame oversized.
	var n int
	for n == 0 && err == nil {
		n, err = r.Read(s.probe[:])
	}
	if err != nil && err != io.EOF {
		return 0, nil, 0, err
	}
	if n == 0 {
		return typ, buf, int64(len(buf)), nil // exactly at the limit
	}
	size := int64(len(buf) + n)
	prefix := buf[:min(wirePrefixLen, len(buf))]
	if err == nil {
		rest, err := io.Copy(io.Discard, r)
		if err != nil {
			return 0, nil, 0, err
		}
		size += rest
	}
	return typ, prefix, size, nil
}

// readText reads the next text message, skipping binary ones: data is the
// whole message, valid until the next read, or nil for one over the limit,
// whose size says how large it was.
func (s *wireSocket) readText() (data []byte, size int64, err error) {
	for {
		typ, data, size, err := s.readMessage()
		switch {
		case err != nil:
			return nil, 0, err
		case typ != websocket.MessageText:
			continue
		case size > s.opts.limit:
			return nil, size, nil
		}
		return data, size, nil
	}
}

// readTextOwned is readText for a caller that keeps the message (keep).
func (s *wireSocket) readTextOwned() (data []byte, size int64, err error) {
	data, size, err = s.readText()
	if data != nil {
		data = s.keep(data, len(data))
	}
	return data, size, err
}

// keep returns part of the message just read, whole bytes long, for a
// caller that keeps it: a large part takes the read buffer with it (the
// next message is read into a new one, sized from this one), a small one
// is copied, which is cheaper than regrowing a buffer.
func (s *wireSocket) keep(part []byte, whole int) []byte {
	if len(part) < wireHandoffMin {
		return bytes.Clone(part)
	}
	s.readBuf, s.lastHandoff = nil, whole
	return part
}
