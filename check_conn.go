package main

// check_conn.go is check-adapter's side of one adapter connection: it vets
// the handshake with the server's own reader (parseWireHandshake), then
// sends requests and matches responses by id, and records everything the
// adapter sends unasked (pushes, stray responses, malformed frames, frames
// over maxPayload) for the checks that judge it afterwards.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/coder/websocket"
)

// checkAnswer is one response to a request of the kit.
type checkAnswer struct {
	frame     []byte           // the whole response frame (nil when oversized)
	result    []byte           // the result member; nil when absent
	err       *wireAnswerError // the error member; nil when absent
	malformed string           // what is wrong with the response's shape, "" when nothing
	oversized int64            // > 0: the response frame's size, over maxPayload
}

// checkPush is an event or streams message the adapter pushed.
type checkPush struct {
	kind    string // "event" or "streams"
	frame   []byte
	event   wireEventHead // for an event
	streams []streamState // for a streams message
	problem string        // why the push is not well formed, "" when it is
}

// checkConn is one upgraded connection from the adapter under test.
type checkConn struct {
	ws         *websocket.Conn
	maxPayload int64 // announced in handshake_ack
	upgradeBad string
	timeout    time.Duration              // request timeout
	giveUp     func(id string) <-chan int // tests: checkOptions.GiveUp; nil for none

	handshaken    chan struct{} // closed once the handshake was acked, refused or timed out
	handshakeOnce sync.Once
	pushed        chan struct{} // gets a value (capacity 1) when an event is pushed
	done          chan struct{} // closed when the read loop has ended
	writeLock     chan struct{}

	mu          sync.Mutex
	firstFrame  []byte
	info        *adapterInfo
	refusal     *wireHandshakeRefusal
	noHandshake bool // no handshake came within the deadline
	pending     map[string]chan checkAnswer
	answered    map[string]bool
	cancelled   map[string]bool // an answer may still come; it is not stray
	nextID      int
	oversized   []string // frames over maxPayload, described
	stray       []string // responses to no pending request, described
	malformed   []string // frames that are not a JSON object with a string type
	pushes      []checkPush
	readErr     error

	framesRead    int        // frames taken off the connection so far
	framesHandled int        // of those, the ones recorded or delivered
	handledMore   *sync.Cond // on mu: framesHandled grew or readErr was set
}

// readLoop reads frames until the connection ends; the first text frame is
// the handshake.
func (c *checkConn) readLoop(token string) {
	defer close(c.done)
	for {
		typ, data, size, err := c.read()
		if err != nil {
			c.mu.Lock()
			c.readErr = err
			for id, ch := range c.pending {
				ch <- checkAnswer{malformed: "the connection ended before the response: " + err.Error()}
				delete(c.pending, id)
			}
			c.handledMore.Broadcast()
			c.mu.Unlock()
			c.closeHandshake()
			return
		}
		c.mu.Lock()
		c.framesRead++
		first := c.info == nil && c.refusal == nil && !c.noHandshake
		if first && typ == websocket.MessageText {
			c.firstFrame = data
		}
		c.mu.Unlock()
		switch {
		case typ != websocket.MessageText:
			// Binary frames are ignored at any time (§1).
		case size > c.maxPayload:
			c.handleOversized(data, size)
		case first:
			c.handleHandshake(data, token)
		default:
			c.handleMessage(data)
		}
		c.mu.Lock()
		c.framesHandled++
		c.handledMore.Broadcast()
		c.mu.Unlock()
	}
}

// expireHandshake closes the connection with 4004 unless its handshake
// has come (§2): the handshake deadline has passed.
func (c *checkConn) expireHandshake() {
	c.mu.Lock()
	late := c.info == nil && c.refusal == nil
	c.noHandshake = late
	c.mu.Unlock()
	if late {
		c.closeHandshake()
		c.ws.Close(wireCloseHandshakeTimeout, "no handshake in time")
	}
}

// closeHandshake may run on the read loop and the handshake timer at once.
func (c *checkConn) closeHandshake() { c.handshakeOnce.Do(func() { close(c.handshaken) }) }

// read reads one frame, keeping at most maxPayload bytes of it (and only
// the first wirePrefixLen of a larger one) and returning its full size.
func (c *checkConn) read() (websocket.MessageType, []byte, int64, error) {
	typ, r, err := c.ws.Reader(context.Background())
	if err != nil {
		return 0, nil, 0, err
	}
	data, err := io.ReadAll(io.LimitReader(r, c.maxPayload+1))
	if err != nil {
		return 0, nil, 0, err
	}
	size := int64(len(data))
	if size > c.maxPayload {
		rest, err := io.Copy(io.Discard, r)
		if err != nil {
			return 0, nil, 0, err
		}
		size += rest
		data = data[:min(wirePrefixLen, len(data))]
	}
	return typ, data, size, nil
}

func (c *checkConn) handleHandshake(data []byte, token string) {
	info, refusal := parseWireHandshake(data, token)
	c.mu.Lock()
	c.info, c.refusal = info, refusal
	c.mu.Unlock()
	if refusal != nil {
		c.write(map[string]string{"type": "handshake_error", "code": refusal.code, "message": refusal.message})
		c.closeHandshake()
		c.ws.Close(refusal.close, refusal.code)
		return
	}
	c.write(map[string]any{
		"type":             "handshake_ack",
		"protocolVersion":  wireProtocolVersion,
		"server":           map[string]string{"name": "devtools-mcp check-adapter", "version": checkKitVersion},
		"maxPayload":       c.maxPayload,
		"requestTimeoutMs": c.timeout.Milliseconds(),
	})
	c.closeHandshake()
}

func (c *checkConn) handleOversized(prefix []byte, size int64) {
	typ, _, _ := member(prefix, "type")
	id, _, _ := member(prefix, "id")
	t, _ := wireString(typ)
	ids, idOK := wireString(id)
	what := "a frame"
	if t != "" {
		what = "a " + strconv.Quote(t) + " frame"
	}
	if idOK {
		what += " for id " + strconv.Quote(ids)
	}
	c.note(&c.oversized, fmt.Sprintf("%s of %d bytes, over maxPayload %d", what, size, c.maxPayload))
	c.mu.Lock()
	defer c.mu.Unlock()
	if ch := c.pending[ids]; t == "response" && idOK && ch != nil {
		delete(c.pending, ids)
		c.answered[ids] = true
		ch <- checkAnswer{oversized: size}
	}
}

// handleMessage reads a frame after the handshake with the server's own
// message reader, and records or delivers it.
func (c *checkConn) handleMessage(data []byte) {
	var m wireMessage
	if err := m.parse(data); err != nil {
		c.note(&c.malformed, fmt.Sprintf("%s: %v", clipJSON(data), err))
		return
	}
	typ, ok := wireString(m.Type)
	if !ok {
		c.note(&c.malformed, fmt.Sprintf("%s: no string type", clipJSON(data)))
		return
	}
	switch typ {
	case "response":
		c.handleResponse(&m, data)
	case "event":
		head, err := parseWireEvent(m.Event) // the zero head on an error
		p := checkPush{kind: "event", frame: checkClip(data), event: head, problem: checkEventShape(m.Event)}
		if err != nil {
			p.problem = err.Error()
		}
		c.keepPush(p)
		select {
		case c.pushed <- struct{}{}:
		default:
		}
	case "streams":
		p := checkPush{kind: "streams", frame: checkClip(data)}
		if m.Streams == nil {
			p.problem = "streams: required"
		} else if s, err := parseWireStreams(m.Streams); err != nil {
			p.problem = "streams" + err.Error()
		} else {
			p.streams = s
		}
		c.keepPush(p)
	case "ping":
		c.write(map[string]string{"type": "pong"})
	}
	// Other types are ignored, as the server ignores them (§1).
}

func (c *checkConn) handleResponse(m *wireMessage, data []byte) {
	id, ok := wireString(m.ID)
	c.mu.Lock()
	defer c.mu.Unlock()
	ch := c.pending[id]
	if ok && c.cancelled[id] {
		return
	}
	if !ok || ch == nil {
		why := "an id the kit never sent"
		switch {
		case !ok:
			why = "no string id"
		case c.answered[id]:
			why = "an id already answered"
		}
		if len(c.stray) < maxCheckNotes {
			c.stray = append(c.stray, fmt.Sprintf("%s (%s)", clipJSON(data), why))
		}
		return
	}
	delete(c.pending, id)
	c.answered[id] = true
	a := checkAnswer{frame: data}
	switch {
	case !wireAbsent(m.Error):
		ae, err := parseWireAnswerError(m.Error)
		if err != nil {
			a.malformed = err.Error()
		} else {
			a.err = &ae
		}
	case m.Result == nil:
		a.malformed = "it has neither result nor error"
	default:
		a.result = m.Result
	}
	ch <- a
}

// Bounds on what a connection keeps of what the adapter sends unasked.
const (
	maxCheckNotes  = 20    // oversized, stray and malformed frames described
	maxCheckPushes = 10000 // pushes kept for push.event and push.streams
)

func (c *checkConn) keepPush(p checkPush) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.pushes) < maxCheckPushes {
		c.pushes = append(c.pushes, p)
	}
}

// checkClip keeps the start of a frame, enough to name it in a report.
func checkClip(frame []byte) []byte {
	return append([]byte(nil), frame[:min(len(frame), 200)]...)
}

func (c *checkConn) note(list *[]string, what string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(*list) < maxCheckNotes {
		*list = append(*list, what)
	}
}

// write sends v as one text frame; a failure shows up as the read loop's end.
func (c *checkConn) write(v any) {
	data, err := json.Marshal(v)
	if err != nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), c.timeout+time.Second)
	defer cancel()
	select {
	case c.writeLock <- struct{}{}:
	case <-ctx.Done():
		return
	}
	defer func() { <-c.writeLock }()
	_ = c.ws.Write(ctx, websocket.MessageText, data)
}

// errCheckNoAnswer is a request that got no response within the timeout.
var errCheckNoAnswer = errors.New("no response")

// send starts a request and returns its id and where its answer will come.
// extra is merged into the request frame (forward-compatibility checks).
func (c *checkConn) send(method string, params any, extra map[string]any) (string, chan checkAnswer) {
	c.mu.Lock()
	c.nextID++
	id := "ck-" + strconv.Itoa(c.nextID)
	ch := make(chan checkAnswer, 1)
	c.pending[id] = ch
	c.mu.Unlock()
	if params == nil {
		params = struct{}{}
	}
	frame := map[string]any{"type": "request", "id": id, "method": method, "params": params}
	maps.Copy(frame, extra)
	c.write(frame)
	return id, ch
}

// wait waits for the answer to id, giving up after the request timeout (the
// kit then sends a cancel, as the server would). Before it gives up, the
// frames already read are handled, so that an answer among them counts
// however the read loop and the timer were scheduled.
func (c *checkConn) wait(ctx context.Context, id string, ch chan checkAnswer) (checkAnswer, error) {
	var givenUp <-chan int // nil: never
	if c.giveUp != nil {
		givenUp = c.giveUp(id)
	}
	frames := 0 // to handle before giving up, besides those already read
	select {
	case a := <-ch:
		return a, nil
	case <-time.After(c.timeout):
	case frames = <-givenUp:
	case <-ctx.Done():
	}
	c.mu.Lock()
	frames = max(frames, c.framesRead)
	for c.framesHandled < frames && c.readErr == nil {
		c.handledMore.Wait()
	}
	_, still := c.pending[id]
	delete(c.pending, id)
	c.cancelled[id] = true
	c.mu.Unlock()
	if !still {
		return <-ch, nil // answered just now
	}
	c.write(map[string]string{"type": "cancel", "id": id})
	if ctx.Err() != nil {
		return checkAnswer{}, ctx.Err()
	}
	return checkAnswer{}, fmt.Errorf("%w within %d ms", errCheckNoAnswer, c.timeout.Milliseconds())
}

func (c *checkConn) request(ctx context.Context, method string, params any) (checkAnswer, error) {
	id, ch := c.send(method, params, nil)
	return c.wait(ctx, id, ch)
}

// recorded copies what was recorded so far, for a check to read.
func (c *checkConn) recorded() (oversized, stray, malformed []string, pushes []checkPush) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.oversized), slices.Clone(c.stray), slices.Clone(c.malformed), slices.Clone(c.pushes)
}

// checkEventShape applies the rules of §3 that the server does not need to
// read an event but an agent does: a string type, an RFC 3339 timestamp
// with milliseconds, and a payload. It returns the first problem, or "".
func checkEventShape(raw []byte) string {
	typ, _, _ := member(raw, "type")
	timestamp, _, _ := member(raw, "timestamp")
	payload, _, _ := member(raw, "payload")
	if t, ok := wireString(typ); !ok || t == "" {
		return "type: must be a non-empty string, got " + clipJSON(typ)
	}
	ts, ok := wireString(timestamp)
	if _, err := time.Parse(time.RFC3339Nano, ts); !ok || err != nil || !checkHasMillis(ts) {
		return "timestamp: must be RFC 3339 with milliseconds, got " + clipJSON(timestamp)
	}
	if payload == nil {
		return "payload: required"
	}
	return ""
}

// checkHasMillis reports whether an RFC 3339 time has a fraction of at
// least three digits.
func checkHasMillis(ts string) bool {
	_, fraction, found := strings.Cut(ts, ".")
	digits := len(fraction) - len(strings.TrimLeft(fraction, "0123456789"))
	return found && digits >= 3
}
