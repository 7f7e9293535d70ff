package main

// rtron_desktop.go relays every Reactotron app to the Reactotron desktop app
// (REACTOTRON_DESKTOP), so that the developer's debugger and the agent see
// the same app at once. For each app connection, once the app has
// introduced itself, the relay dials the desktop app and keeps one
// WebSocket to it, as if the app had dialled it itself:
//
//   - The app's frames go to the desktop unchanged, except the answers to
//     the bridge's own requests, which stay with the bridge. The
//     client.intro goes first on every connection to the desktop; when the
//     bridge gave the app its clientId, the intro carries that id, so the
//     desktop never assigns another.
//   - The desktop's frames go to the app unchanged, except setClientId: the
//     app keeps the one id the bridge gave it, and state.values.subscribe,
//     which the app gets joined with the bridge's own list; each
//     state.values.change goes to the desktop with the entries of its
//     paths only (rtron_subscribe.go).
//   - The desktop's requests join the bridge's answer queues (rtron_asks.go)
//     and an answer goes only to whoever asked first; a backup's second
//     answer, from a second state plugin, goes with its first (backupAnswers).
//     An answer nobody asked for (a plugin pushing values) goes to both.
//     A desktop request unanswered for PendingTimeout gives up its place.
//   - The desktop comes and goes: the relay dials again with backoff and
//     replays the intro. Frames wait in a bounded queue meanwhile, the
//     oldest dropped first and counted; frames for a slow app wait in one
//     of their own. Neither side's writes wait on the other side.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"
)

// reactotronDesktopOptions say where the desktop app listens and how the
// relay to it is bounded. serve fills them from the configuration.
type reactotronDesktopOptions struct {
	Addr           string        // host:port
	MinBackoff     time.Duration // the wait after the first failed dial; doubled up to MaxBackoff
	MaxBackoff     time.Duration
	DialTimeout    time.Duration
	WriteTimeout   time.Duration // a write to the desktop that takes longer ends that connection
	PingInterval   time.Duration // the desktop is pinged this often
	PongTimeout    time.Duration // and dropped when its pong is later than this
	QueueFrames    int           // frames held for the desktop while it is away or slow
	QueueBytes     int64         // and their bytes
	AppQueueFrames int           // the desktop's frames held for a slow app
	PendingTimeout time.Duration // how long a desktop request holds its place for an answer
	MaxPending     int           // desktop requests awaiting answers, per app
	MaxFrame       int64         // a larger frame from the desktop is dropped
}

// newReactotronDesktopOptions are the relay's bounds for a desktop at addr.
func newReactotronDesktopOptions(addr string, maxFrame int64, requestTimeout time.Duration) *reactotronDesktopOptions {
	return &reactotronDesktopOptions{Addr: addr, MinBackoff: 250 * time.Millisecond, MaxBackoff: 5 * time.Second,
		DialTimeout: 5 * time.Second, WriteTimeout: linkWriteTimeout,
		PingInterval: linkPingInterval, PongTimeout: linkPongTimeout, QueueFrames: 1000, QueueBytes: 8 << 20,
		AppQueueFrames: 256, PendingTimeout: max(requestTimeout, 10*time.Second), MaxPending: 64, MaxFrame: maxFrame}
}

// reactotronPortHeldError: another program holds the bridge's port.
type reactotronPortHeldError struct {
	Port int
	Err  error
}

func (e *reactotronPortHeldError) Error() string {
	return fmt.Sprintf("port %d (REACTOTRON_PORT) is held by another program, most likely the Reactotron desktop app: "+
		"set the desktop app's port to another, for example 9091, and REACTOTRON_DESKTOP=127.0.0.1:9091 so that both see the app; "+
		"or start devtools-mcp before the desktop app (%v)", e.Port, e.Err)
}

func (e *reactotronPortHeldError) Unwrap() error { return e.Err }

// desktopRelay is one app connection's relay to the desktop app.
type desktopRelay struct {
	opts   *reactotronDesktopOptions
	app    *reactotronConn
	logger *slog.Logger
	intro  []byte // replayed first on every connection to the desktop

	ctx    context.Context // ends when the app connection does
	cancel context.CancelFunc

	toDesktopReady chan struct{} // a frame was queued for the desktop
	toAppReady     chan struct{}

	mu        sync.Mutex
	toDesktop queue[queuedFrame]
	toApp     queue[queuedFrame]
	stats     relayStatus // its counters and connection state; status fills in the rest

	// From here on, guarded by app.mu.
	// owned marks the waiters of the desktop's requests among the app
	// connection's waiters, with when they were written.
	owned map[chan reactotronAnswer]time.Time
	// paths is the desktop's last state.values.subscribe list, pathsEver
	// every path it has subscribed to (rtron_subscribe.go).
	paths     []string
	pathsEver []string
	// backup is the backup request whose answers are arriving.
	backup backupAnswers
}

// backupAnswers are the answers to one state.backup.request so far. Every
// state plugin of the app answers a backup, and reactotron-core-client
// hands a command to its plugins one after the other, so an app with
// reactotron-redux and reactotron-plugin-zustand answers each request
// twice, one frame right after the other: the Redux state (an object) and
// the stores (an array). A backup answer right after another, of a shape
// that request has not had, is the same request's; anything else starts
// the next.
type backupAnswers struct {
	open   bool     // the app's last frame was a backup answer
	owner  int      // whose request it answered
	shapes []string // the shapes of its answers so far
}

// relayStatus is a relay's state in debug_health_check.
type relayStatus struct {
	Address          string `json:"address"`
	Connected        bool   `json:"connected"`
	Connects         int64  `json:"connects"`
	LastError        string `json:"lastError,omitempty"`
	Queued           int    `json:"queued"`
	QueuedBytes      int64  `json:"queuedBytes"`
	QueueLimit       int    `json:"queueLimit"`
	QueueBytesLimit  int64  `json:"queueBytesLimit"`
	SentToDesktop    int64  `json:"sentToDesktop"` // frames written to the desktop, intros included
	DroppedToDesktop int64  `json:"droppedToDesktop"`
	SentToApp        int64  `json:"sentToApp"` // frames written to the app
	DroppedToApp     int64  `json:"droppedToApp"`
	AppQueueLimit    int    `json:"appQueueLimit"`
	AnswersKept      int64  `json:"answersKept"`      // answers to the bridge's requests, not relayed
	ClientIDsIgnored int64  `json:"clientIdsIgnored"` // setClientId frames of the desktop's, not relayed
	Oversized        int64  `json:"oversized"`        // frames from the desktop over MaxFrame
	Untracked        int64  `json:"untracked"`        // desktop requests beyond MaxPending, relayed unmatched
	Expired          int64  `json:"expired"`          // desktop requests that gave up their place
}

// desktopStatus lists the relays of the live app connections by session id.
func (b *reactotronBridge) desktopStatus() map[string]*relayStatus {
	out := map[string]*relayStatus{}
	for _, c := range b.host.open() {
		c.mu.Lock()
		r, id := c.relay, c.clientID
		c.mu.Unlock()
		if r != nil {
			out[id] = r.status()
		}
	}
	return out
}

func (r *desktopRelay) status() *relayStatus {
	r.mu.Lock()
	defer r.mu.Unlock()
	st := r.stats
	st.Address, st.AppQueueLimit = r.opts.Addr, r.opts.AppQueueFrames
	st.Queued, st.QueuedBytes, st.DroppedToDesktop = r.toDesktop.len(), r.toDesktop.bytes, r.toDesktop.dropped
	st.QueueLimit, st.QueueBytesLimit, st.DroppedToApp = r.opts.QueueFrames, r.opts.QueueBytes, r.toApp.dropped
	return &st
}

// startRelay starts relaying an app that has just introduced itself with
// the client.intro data. It does nothing without a desktop configured, for
// an introduction the bridge refused, or a second time.
func (c *reactotronConn) startRelay(f reactotronFrame, data []byte) {
	opts := c.bridge.desktop
	c.mu.Lock()
	defer c.mu.Unlock()
	if opts == nil || c.session == nil || c.relay != nil || c.reason != "" {
		return
	}
	intro := bytes.Clone(data)
	if given, err := parseReactotronIntro(f.Payload); err == nil && given.ClientID == "" {
		intro = introWithClientID(data, c.clientID)
	}
	ctx, cancel := context.WithCancel(context.Background())
	r := &desktopRelay{opts: opts, app: c, intro: intro, ctx: ctx, cancel: cancel,
		logger:         c.bridge.logger.With("desktop", opts.Addr, "client", c.clientID),
		toDesktopReady: make(chan struct{}, 1), toAppReady: make(chan struct{}, 1),
		toDesktop: newFrameQueue(opts.QueueFrames, opts.QueueBytes),
		toApp:     newFrameQueue(opts.AppQueueFrames, opts.QueueBytes),
		owned:     map[chan reactotronAnswer]time.Time{}}
	c.relay = r
	c.sock.goTracked(r.connectLoop)
	c.sock.goTracked(r.writeApp)
}

// introWithClientID is the client.intro frame data with payload.clientId
// set to id; data itself when it cannot be read.
func introWithClientID(data []byte, id string) []byte {
	var frame map[string]json.RawMessage
	var payload map[string]json.RawMessage
	if json.Unmarshal(data, &frame) != nil || json.Unmarshal(frame["payload"], &payload) != nil || payload == nil {
		return bytes.Clone(data)
	}
	payload["clientId"] = appendJSONString(nil, id, false)
	// Neither Marshal can fail: every member was read from valid JSON.
	frame["payload"], _ = json.Marshal(payload)
	out, _ := json.Marshal(frame)
	return out
}

// relayFromApp queues an app frame for the desktop unless it answers one of
// the bridge's requests, and reports whether the bridge should handle it: a
// frame that answers one of the desktop's requests is the desktop's alone.
// f is zero for a frame the bridge could not read, which goes to the desktop.
func (c *reactotronConn) relayFromApp(f reactotronFrame, data []byte) (handle bool) {
	c.mu.Lock()
	r := c.relay
	owner := ownerNobody
	var desktopPaths, ourPaths []string
	if r != nil {
		key, _, err := reactotronAnswerOf(f)
		switch {
		case f.Type == "state.backup.response":
			key = backupKey
			owner = r.claimBackup(f)
		case err == nil:
			owner = r.claim(key)
		}
		if key != backupKey {
			r.backup = backupAnswers{}
		}
		desktopPaths, ourPaths = r.paths, c.subscribed
	}
	c.mu.Unlock()
	switch {
	case r == nil:
		return true
	case owner == ownerBridge:
		r.count(&r.stats.AnswersKept)
		return true
	}
	if f.Type == "state.values.change" {
		if data = changeForDesktop(data, desktopPaths, ourPaths); data == nil {
			return true
		}
	}
	r.mu.Lock()
	r.toDesktop.push(queuedFrame{data: bytes.Clone(data)})
	r.mu.Unlock()
	wake(r.toDesktopReady)
	return owner == ownerNobody
}

// Who asked for an answer.
const (
	ownerNobody = iota
	ownerBridge
	ownerDesktop
)

// claim says whose the next answer under key is, and takes the desktop's
// waiter out of the queue when it is the desktop's. The caller holds
// app.mu; the bridge's own waiter is left for deliver.
func (r *desktopRelay) claim(key string) int {
	c := r.app
	now := time.Now()
	for list := c.waiters[key]; len(list) > 0; list = c.waiters[key] {
		at, desktop := r.owned[list[0]]
		if !desktop {
			return ownerBridge
		}
		delete(r.owned, list[0])
		c.dropWaiterLocked(key, list[0])
		if now.Sub(at) <= r.opts.PendingTimeout {
			return ownerDesktop
		}
		r.count(&r.stats.Expired)
	}
	return ownerNobody
}

// claimBackup is claim for a state.backup.response (see backupAnswers).
// The caller holds app.mu.
func (r *desktopRelay) claimBackup(f reactotronFrame) int {
	shape := "state"
	if state, err := parseReactotronBackup(f.Payload); err == nil && rawKind(state) == "array" {
		shape = "stores"
	}
	if b := &r.backup; b.open && !slices.Contains(b.shapes, shape) {
		b.shapes = append(b.shapes, shape)
		return b.owner
	}
	owner := r.claim(backupKey)
	r.backup = backupAnswers{open: true, owner: owner, shapes: []string{shape}}
	return owner
}

// ownsLocked reports whether w waits for an answer to one of the desktop's
// requests. The caller holds app.mu.
func (r *desktopRelay) ownsLocked(w chan reactotronAnswer) bool {
	_, ok := r.owned[w]
	return ok
}

// desktopRequestKey reads a frame from the desktop: its type and, for a
// request the app answers, the key of the answer. The desktop writes plain
// JSON.stringify({type, payload}).
func desktopRequestKey(data []byte) (typ, key string, ask bool) {
	var f struct {
		Type    string          `json:"type"`
		Payload json.RawMessage `json:"payload"`
	}
	if json.Unmarshal(data, &f) != nil {
		return "", "", false
	}
	var p struct {
		Path string `json:"path"` // "" when absent or null
	}
	pathOK := json.Unmarshal(f.Payload, &p) == nil
	switch f.Type {
	case "state.values.request":
		return f.Type, valuesKey(p.Path), pathOK
	case "state.keys.request":
		return f.Type, keysKey(p.Path), pathOK
	case "state.backup.request":
		return f.Type, backupKey, true
	}
	return f.Type, "", false
}
