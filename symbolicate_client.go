package main

// symbolicate_client.go maps stack frames to source through the dev
// server's POST /symbolicate (Metro's, which `expo start` serves too), for
// the stacks of every kind of app: adapters', Reactotron clients' and the
// Metro link's. Only frames whose file is a bundle URL are sent, and
// always to the configured Metro: Metro reads the bundle's options from the
// URL's path and query, never its host, and a host taken from what an app
// sent is never dialled. A caller waits at most answerWait; a request that
// takes longer goes on in the background and fills the cache for the next
// read. Answers are memoised per frame (the first answer is the best one:
// Metro maps against the code as it is now), but only for
// symbolicateFrameFor: past that the app may have reloaded an edited
// bundle under the same URL, and an old answer would name the wrong line
// (a 5xx is not kept at all: do). "Metro unreachable" is remembered for a
// while so that a page of logs does not pay for it twice.

import (
	"cmp"
	"context"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"
)

const (
	symbolicateAnswerWait   = time.Second      // the longest a reader waits for Metro
	symbolicateFirstTimeout = 10 * time.Second // Metro may build the whole graph on the first request
	symbolicateTimeout      = 5 * time.Second
	symbolicateDialTimeout  = 2 * time.Second
	symbolicateDownFor      = 15 * time.Second // how long "unreachable" is believed
	symbolicateStatusFor    = 30 * time.Second // how long /status's answer is believed
	maxSymbolicateAnswer    = 4 << 20          // bytes of a /symbolicate answer read
	maxStatusAnswer         = 4 << 10
	maxSymbolicateCalls     = 4    // requests in flight at once
	maxSymbolicateCache     = 8192 // frames remembered; the cache starts over past it
	// symbolicateFrameFor is how long a frame's answer is trusted, from
	// when Metro gave it (see above). Metro's bundle headers
	// (X-Metro-Delta-ID) would say exactly, but reading them costs a build.
	symbolicateFrameFor = time.Minute
)

// errMetro says why Metro mapped no frames, by kind: the answers word
// each kind (tool_stacks.go).
type errMetro struct {
	kind    metroErrKind
	Origin  string
	Err     error         // metroUnreachable: why
	Wait    time.Duration // metroSlow
	Port    string        // metroOtherPort
	Status  int           // metroRefused: 400 for a frame it rejects, 500 for a build failure
	Message string        // metroRefused: Metro's `error`, or what was wrong with the body
}

type metroErrKind int

const (
	metroUnreachable metroErrKind = iota // no answer at Origin, or none lately: believed down for a while
	metroSlow                            // no answer within Wait; the request goes on
	// metroOtherPort: the bundle is served on Port, not by the Metro at
	// Origin: another Metro (another project, or RCT_METRO_PORT) serves
	// it, and this one would map its frames wrongly.
	metroOtherPort
	metroRefused // an answer, but not mapped frames: a Status other than 200, or a body not its answer
)

func (e *errMetro) Error() string {
	switch e.kind {
	case metroUnreachable:
		return fmt.Sprintf("metro not reachable at %s: %v", e.Origin, e.Err)
	case metroSlow:
		return fmt.Sprintf("metro at %s did not answer within %v", e.Origin, e.Wait)
	case metroOtherPort:
		return fmt.Sprintf("the bundle is served on port %s, not by the metro at %s", e.Port, e.Origin)
	}
	return fmt.Sprintf("metro at %s answered /symbolicate with %d: %s", e.Origin, e.Status, e.Message)
}
func (e *errMetro) Unwrap() error { return e.Err }

// mappedFrame is what Metro made of one frame: Mapped is false when it
// left the frame as sent. Column is 1-based, as the engines print it; File
// is relative to the project root when it lies under it.
type mappedFrame struct {
	jsFrame       // as Metro named it (a framePath), or as sent
	Collapse bool // framework internals, by the project's Metro config
	Mapped   bool
	// MapFile and MapBuilt name the release build's source map that
	// mapped it (symbolicate_local.go) and its mtime; "" for Metro.
	MapFile  string
	MapBuilt time.Time
}

// symbolicateKey is a frame as sent: its bundle URL, 1-based line, 0-based
// column.
type symbolicateKey struct {
	url          string
	line, column int
}

// symbolicateCall is one request in flight; done closes when its answers
// are in the cache (or err is set).
type symbolicateCall struct {
	keys   []symbolicateKey
	method map[symbolicateKey]string
	done   chan struct{}
	err    error
}

// symbolicator is the /symbolicate client of one dev server (Metro). Its methods
// are safe to call concurrently; close stops the requests in flight and
// waits for them.
type symbolicator struct {
	origin    string
	port      string // origin's port, to which frames' bundle URLs are compared
	client    *http.Client
	wait      time.Duration // answerWait
	now       func() time.Time
	maxFrames int // maxSymbolicateCache; tests lower it

	life  context.Context
	stop  context.CancelFunc
	calls sync.WaitGroup

	mu        sync.Mutex
	frames    map[symbolicateKey]cachedFrame
	inflight  map[symbolicateKey]*symbolicateCall
	calling   int       // calls in flight (maxSymbolicateCalls)
	root      string    // the project root /status named; "" unknown
	statusAt  time.Time // when /status was last asked; zero: never
	answered  bool      // Metro has answered once: later requests get the short timeout
	downUntil time.Time
	downErr   error
	wasDown   bool // unreachable since the last answer: when it answers, it may be another Metro
}

// cachedFrame is Metro's first answer for a frame (File absolute, as Metro
// named it), or why Metro refused it (a 4xx or a garbled answer, which
// asking again would not change; a 5xx is never kept), and when.
type cachedFrame struct {
	frame mappedFrame
	err   error
	at    time.Time
}

// cached is the answer kept for k, if it is still trusted; an answer
// older than symbolicateFrameFor is dropped. m.mu is held.
func (m *symbolicator) cached(k symbolicateKey) (cachedFrame, bool) {
	f, ok := m.frames[k]
	if ok && m.now().Sub(f.at) >= symbolicateFrameFor {
		delete(m.frames, k)
		return cachedFrame{}, false
	}
	return f, ok
}

// newSymbolicator is the client of the Metro at origin
// (scheme://host:port).
func newSymbolicator(origin string) *symbolicator {
	life, stop := context.WithCancel(context.Background())
	// Metro is dialled directly, and only Metro (wire_dial.go's directClient).
	transport := directTransport()
	transport.DialContext = (&net.Dialer{Timeout: symbolicateDialTimeout}).DialContext
	transport.MaxResponseHeaderBytes, transport.MaxIdleConns, transport.IdleConnTimeout = maxStatusAnswer*16, 2, time.Minute
	return &symbolicator{
		origin: origin, port: originPort(origin), client: directClient(transport), wait: symbolicateAnswerWait, now: time.Now,
		maxFrames: maxSymbolicateCache,
		life:      life, stop: stop,
		frames: make(map[symbolicateKey]cachedFrame), inflight: make(map[symbolicateKey]*symbolicateCall),
	}
}

func (m *symbolicator) run(ctx context.Context) {
	<-ctx.Done()
	m.close()
}

// close cancels the requests in flight and waits for them; safe twice.
func (m *symbolicator) close() {
	m.mu.Lock()
	m.stop()
	m.mu.Unlock()
	m.calls.Wait()
}

// mapStacks maps the bundle-URL frames of stacks, in one request for all
// of them (frames already answered cost nothing). The answer has one
// slice per stack, one element per frame; a frame that was not sent, or
// not mapped, has Mapped false. The error (an errMetro, or ctx's when it
// ends first) says why some frames that could be mapped were not; the
// frames mapped so far are answered either way.
func (m *symbolicator) mapStacks(ctx context.Context, stacks []jsStack) ([][]mappedFrame, error) {
	ask := askedFrames(stacks, m.port)
	waits, err := m.startCall(ask)
	// A wait cut short says so, over why frames were not asked.
	if cut, werr := m.await(ctx, waits); cut || (werr != nil && err == nil) {
		err = werr
	}
	if err == nil && ask.otherPort != "" {
		err = &errMetro{kind: metroOtherPort, Origin: m.origin, Port: ask.otherPort}
	}
	return m.answers(stacks, ask.sent, err)
}

// frameAsk is what a mapStacks call asks Metro: per stack, per frame, the
// key sent (zero: not sent); the distinct keys in order, each with the
// method name to send; and a port other than Metro's that some frame's
// bundle URL named.
type frameAsk struct {
	sent      [][]symbolicateKey
	order     []symbolicateKey
	wanted    map[symbolicateKey]string
	otherPort string
}

// askedFrames sorts out what to ask for stacks' frames. A frame is not
// sent when it is not a URL, has no line or column, is a URL without the
// query that carries the bundle's options (JavaScriptCore strips it) while
// no other frame of its stack names the same bundle with one, or names a
// port other than metroPort (the last such of the first stack with one is
// otherPort). The host is not compared: the device names Metro as it sees
// it (10.0.2.2, a LAN address); a tunnel's URL names no port.
func askedFrames(stacks []jsStack, metroPort string) frameAsk {
	ask := frameAsk{sent: make([][]symbolicateKey, len(stacks)), wanted: map[symbolicateKey]string{}}
	for i, st := range stacks {
		withQuery := map[string]string{}
		for _, f := range st.Frames {
			if base, ok := bundleBase(f.File); ok && f.Kind == frameURL {
				withQuery[base] = f.File
			}
		}
		ask.sent[i] = make([]symbolicateKey, len(st.Frames))
		stackPort := ""
		for j, f := range st.Frames {
			if f.Kind != frameURL || f.Line < 1 || f.Column < 1 {
				continue
			}
			url := f.File
			if _, ok := bundleBase(url); !ok {
				if url = withQuery[url]; url == "" {
					continue
				}
			}
			if port := urlPort(url); port != "" && metroPort != "" && port != metroPort {
				stackPort = port
				continue
			}
			k := symbolicateKey{url: url, line: f.Line, column: f.Column - 1} // Metro's columns count from 0
			ask.sent[i][j] = k
			if _, dup := ask.wanted[k]; !dup {
				ask.order = append(ask.order, k)
			}
			ask.wanted[k] = f.Method
		}
		ask.otherPort = cmp.Or(ask.otherPort, stackPort)
	}
	return ask
}

// startCall starts one request for the frames neither cached nor asked
// already, and gives the calls to wait for: that one and those in flight
// with other asked frames. The error says why frames missing were not
// asked for (Metro believed down, closing, or too many calls in flight).
func (m *symbolicator) startCall(ask frameAsk) ([]*symbolicateCall, error) {
	var waits []*symbolicateCall
	m.mu.Lock()
	defer m.mu.Unlock()
	var missing []symbolicateKey
	for _, k := range ask.order {
		if _, ok := m.cached(k); ok {
			continue
		}
		if c, ok := m.inflight[k]; ok {
			if !slices.Contains(waits, c) {
				waits = append(waits, c)
			}
			continue
		}
		missing = append(missing, k)
	}
	switch {
	case len(missing) == 0:
	case m.now().Before(m.downUntil):
		return waits, &errMetro{kind: metroUnreachable, Origin: m.origin, Err: m.downErr}
	case m.life.Err() != nil:
		return waits, &errMetro{kind: metroUnreachable, Origin: m.origin, Err: m.life.Err()}
	case m.calling >= maxSymbolicateCalls:
		return waits, &errMetro{kind: metroSlow, Origin: m.origin, Wait: m.wait}
	default:
		c := &symbolicateCall{keys: missing, method: ask.wanted, done: make(chan struct{})}
		for _, k := range missing {
			m.inflight[k] = c
		}
		waits = append(waits, c)
		m.calling++
		m.calls.Go(func() { m.do(c) })
	}
	return waits, nil
}

// await waits for the calls, at most m.wait, and gives the first error
// one of them ended with, or, cut true, why the wait stopped before.
func (m *symbolicator) await(ctx context.Context, waits []*symbolicateCall) (cut bool, err error) {
	deadline := time.After(m.wait)
	for _, c := range waits {
		select {
		case <-c.done:
			if c.err != nil && err == nil {
				err = c.err
			}
		case <-deadline:
			return true, &errMetro{kind: metroSlow, Origin: m.origin, Wait: m.wait}
		case <-ctx.Done():
			return true, ctx.Err()
		}
	}
	return false, err
}

// answers reads the cache for each frame sent (mapStacks says the shape),
// named relative to the project root; err is kept, or set from a frame
// Metro refused.
func (m *symbolicator) answers(stacks []jsStack, sent [][]symbolicateKey, err error) ([][]mappedFrame, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := unmappedFrames(stacks)
	for i, st := range stacks {
		for j := range st.Frames {
			cached, ok := m.cached(sent[i][j]) // a frame not sent has the zero key, never cached
			if !ok {
				continue
			}
			if cached.err != nil && err == nil {
				err = cached.err
			}
			if mf := cached.frame; mf.Mapped {
				mf.File = relativeTo(m.root, mf.File)
				out[i][j] = mf
			}
		}
	}
	return out, err
}

// originPort is the port of Metro's origin, explicit or the scheme's.
func originPort(origin string) string {
	u, err := url.Parse(origin)
	if err != nil {
		return ""
	}
	if p := u.Port(); p != "" {
		return p
	}
	if u.Scheme == "https" {
		return "443"
	}
	return "80"
}

// urlPort is the port a URL names explicitly, or "".
func urlPort(raw string) string {
	u, err := url.Parse(strings.Replace(raw, "//&", "?", 1))
	if err != nil {
		return ""
	}
	return u.Port()
}

// bundleBase is a bundle URL without its options, and whether it had any
// (a query, or JavaScriptCore-safe `//&`).
func bundleBase(url string) (string, bool) {
	if i := strings.Index(url, "//&"); i > len("https://") {
		return url[:i], true
	}
	if i := strings.IndexByte(url, '?'); i >= 0 {
		return url[:i], true
	}
	return url, false
}

func relativeTo(root, file string) string {
	if root == "" {
		return file
	}
	root = strings.TrimRight(root, "/\\")
	if rest, ok := strings.CutPrefix(file, root); ok && rest != "" && (rest[0] == '/' || rest[0] == '\\') {
		return rest[1:]
	}
	return file
}
