package main

// metro_link.go is the Metro link: it polls Metro's page list (METRO_URL)
// and keeps one connection (metro_conn.go) to each React Native app it
// lists, beside React Native DevTools, never instead of it:
//
//   - A page that does not declare supportsMultipleDebuggers is not
//     attached (the proxy would close the developer's debugger), unless
//     METRO_ATTACH_EXCLUSIVE is set.
//   - A connection the proxy closed with [NEW_DEBUGGER_OPENED] is not taken
//     back: that page id is left alone for as long as Metro lists it. The
//     app's next page (after a reload that makes a new page id, or a
//     relaunch that lists it anew) is attached again.
//   - A connection that closes within metroQuickClose of attaching backs off,
//     doubling from minBackoff to maxBackoff, and says so in the health
//     check: no reconnect loop.
//
// Metro not running is the normal case: the link polls quietly (every
// downEvery, upEvery while Metro answers) and the health check says it once.
// An app keeps one session across reloads, relaunches and crashes
// (metro_identity.go); of several pages of one app, the newest listed is
// attached.

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"
)

// Intervals of the Metro link; tests shorten them.
const (
	metroUpEvery    = time.Second
	metroDownEvery  = 2500 * time.Millisecond
	metroQuickClose = 2 * time.Second
	metroMinBackoff = 2 * time.Second
	metroMaxBackoff = time.Minute
	metroKeepalive  = 15 * time.Second
	metroDialLimit  = 3 * time.Second
	maxMetroApps    = 256 // apps whose session ids are remembered
)

// metroStreams are the streams a Metro session can have: console from the
// start, network with the first request a page reports.
var metroStreams = []string{"console", "network"}

// Why a listed page is not attached.
const (
	metroNotMultiDebugger = "single_debugger"  // no supportsMultipleDebuggers, and METRO_ATTACH_EXCLUSIVE is off
	metroOtherDebugger    = "other_debugger"   // closed with [NEW_DEBUGGER_OPENED]
	metroClosedOnAttach   = "closed_on_attach" // closed right after attaching: backing off
	metroOlderPage        = "older_page"       // a newer page of the same app is listed
	metroDialFailed       = "dial_failed"      // the page's WebSocket could not be opened
)

// metroCounters are what the link dropped, since it started.
type metroCounters struct {
	OversizedFrames    int64 // frames over MAX_PAYLOAD_SIZE, read through and dropped
	MalformedFrames    int64 // frames or events that are not CDP as documented
	UnknownAnswers     int64 // answers to no request of ours
	UnfinishedRequests int64 // network requests forgotten before they ended
}

// metroPageStatus is one listed page, as the health check shows it.
type metroPageStatus struct {
	ID, App, Device, Title string
	Session                string // the session it feeds, when attached
	Attached               bool
	Reason                 string // a metroNot… constant when not attached
	Detail                 string // the close reason or error behind Reason
	RetryAt                time.Time
	Origin                 *metroOrigin // the Origin sent, when the dev server may have refused it
}

// metroStatus is the link's state for debug_health_check.
type metroStatus struct {
	URL                string
	Checked, Reachable bool
	Error              string // why the last poll failed
	Pages              []metroPageStatus
	Dropped            metroCounters
	// SharedNetwork: the dev server sends every app's network events to
	// every page (Expo), and several pages are attached, so requests cannot
	// be told apart by app (metro_netshare.go).
	SharedNetwork bool
}

// metroBackoff is a page left alone for a while after closing at once.
type metroBackoff struct {
	until  time.Time
	retry  backoff // the delays of this page's quick closes
	reason string
	detail string
	// origin is the Origin sent, kept when the dev server may have refused
	// it: a dial that failed, or a close without a close frame, which is
	// how Expo ends a debugger whose Origin it refuses.
	origin *metroOrigin
}

// metroLink polls Metro and attaches its pages. run must be called once;
// status is safe at any time.
type metroLink struct {
	cfg    config
	logger *slog.Logger
	sink   metroSink
	client *http.Client

	upEvery, downEvery     time.Duration
	minBackoff, maxBackoff time.Duration
	keepalive, dialTimeout time.Duration
	pongTimeout            time.Duration

	wg sync.WaitGroup // every connection's goroutine

	mu        sync.Mutex
	checked   bool
	reachable bool
	lastErr   string
	listed    []metroPageInfo
	conns     map[string]*metroConn    // by page id
	held      map[string]*metroBackoff // pages not to attach now, by page id
	idents    metroIdentities          // which session each app feeds (metro_identity.go)
	dropped   metroCounters
	// manifestHost is the host:port Expo's manifest names (learnManifestHost).
	manifestHost  string
	manifestAsked bool
	netShare      *metroNetShare // network frames several pages received (metro_netshare.go)
}

func newMetroLink(cfg config, logger *slog.Logger, sink metroSink) *metroLink {
	return &metroLink{cfg: cfg, logger: logger.With("component", "metro"), sink: sink,
		client:  directClient(directTransport()), // Metro only: no proxy, no redirect past METRO_URL's rule
		upEvery: metroUpEvery, downEvery: metroDownEvery,
		minBackoff: metroMinBackoff, maxBackoff: metroMaxBackoff, keepalive: metroKeepalive, dialTimeout: metroDialLimit,
		pongTimeout: linkPongTimeout,
		conns:       map[string]*metroConn{}, held: map[string]*metroBackoff{},
		idents: newMetroIdentities(), netShare: newMetroNetShare()}
}

// run polls until ctx ends, then ends every connection and returns once
// their goroutines have.
func (m *metroLink) run(ctx context.Context) {
	defer m.client.CloseIdleConnections()
	defer m.wg.Wait()
	for wait := time.Duration(0); sleepCtx(ctx, wait); { // the connections end with ctx
		wait = m.downEvery
		if m.poll(ctx) {
			wait = m.upEvery
		}
	}
}

// poll reads Metro's page list once and attaches what it should; it
// reports whether Metro answered.
func (m *metroLink) poll(ctx context.Context) bool {
	pages, err := m.fetchList(ctx)
	if err == nil {
		m.learnManifestHost(ctx, pages)
	}
	if ctx.Err() != nil {
		return false
	}
	// Decided under the lock, closed after it: a closing socket never
	// holds up the readers of the other pages, which count under it.
	var gone []*metroConn
	defer func() {
		for _, c := range gone {
			c.stop("page gone")
		}
	}()
	m.mu.Lock()
	defer m.mu.Unlock()
	wasReachable, wasChecked := m.reachable, m.checked
	m.checked = true
	if err != nil {
		m.reachable, m.lastErr = false, err.Error()
		m.listed = nil
		m.manifestHost, m.manifestAsked = "", false // the next dev server may name another host
		m.netShare.reset()                          // and may not broadcast network events
		if wasReachable || !wasChecked {
			m.logger.Debug("Metro is not reachable; polling quietly", "url", m.cfg.MetroURL, "err", err)
		}
		// Pages still attached keep their connections: Metro's HTTP side
		// can hiccup while its sockets stay up.
		return false
	}
	m.reachable, m.lastErr = true, ""
	if !wasReachable {
		m.logger.Info("Metro found", "url", m.cfg.MetroURL, "pages", len(pages))
	}
	m.listed = pages
	chosen := m.chooseLocked(pages)
	sessionIDs := m.sessionIDsLocked(pages, chosen)
	for id, c := range m.conns {
		if _, ok := chosen[id]; !ok {
			gone = append(gone, c)
		}
	}
	// A page gone takes its rule with it.
	maps.DeleteFunc(m.held, func(id string, _ *metroBackoff) bool { return !chosen[id] })
	now := time.Now()
	for _, p := range pages {
		if d := m.decideLocked(p, chosen, now); d.attach {
			m.attachLocked(ctx, p, sessionIDs[p.ID])
		}
	}
	return true
}

// metroDecision is what the link makes of one listed page.
type metroDecision struct {
	conn   *metroConn    // its connection, dialling or attached
	attach bool          // to attach now
	reason string        // a metroNot… constant when it is left alone
	hold   *metroBackoff // the hold behind reason, if any
}

// decideLocked decides what becomes of page p, of the pages chosen, at
// now: poll acts on it and status reports it.
func (m *metroLink) decideLocked(p metroPageInfo, chosen map[string]bool, now time.Time) metroDecision {
	if c := m.conns[p.ID]; c != nil {
		return metroDecision{conn: c}
	}
	if !chosen[p.ID] {
		return metroDecision{reason: metroOlderPage}
	}
	if h := m.held[p.ID]; h != nil && (h.until.IsZero() || now.Before(h.until)) {
		return metroDecision{reason: h.reason, hold: h}
	}
	if !p.MultipleDebuggers && !m.cfg.MetroAttachExclusive {
		return metroDecision{reason: metroNotMultiDebugger}
	}
	return metroDecision{attach: true}
}

// chooseLocked picks the page to attach of each app: the last listed.
func (m *metroLink) chooseLocked(pages []metroPageInfo) map[string]bool {
	newest := map[string]string{}
	for _, p := range pages {
		newest[p.appKey()] = p.ID
	}
	chosen := make(map[string]bool, len(newest))
	for _, id := range newest {
		chosen[id] = true
	}
	return chosen
}

// fetchList GETs /json/list, bounded in time and size.
func (m *metroLink) fetchList(ctx context.Context) ([]metroPageInfo, error) {
	ctx, cancel := context.WithTimeout(ctx, min(m.cfg.RequestTimeout, 2*time.Second))
	defer cancel()
	body, status, err := metroGet(ctx, m.client, m.cfg.MetroURL+"/json/list", nil, maxMetroListBytes)
	switch {
	case err != nil:
		return nil, err
	case status != http.StatusOK:
		return nil, fmt.Errorf("%w: HTTP %d", errMetroList, status)
	case len(body) > maxMetroListBytes:
		return nil, fmt.Errorf("%w: over %d bytes", errMetroList, maxMetroListBytes)
	}
	return parseMetroList(body)
}

// metroGet GETs url from the dev server with header, and reads at most
// limit+1 bytes of the answer, so that the caller sees one over limit.
func metroGet(ctx context.Context, client *http.Client, url string, header http.Header, limit int) (body []byte, status int, err error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, 0, err
	}
	maps.Copy(req.Header, header)
	resp, err := client.Do(req)
	if err != nil {
		return nil, 0, err
	}
	defer resp.Body.Close()
	body, err = io.ReadAll(io.LimitReader(resp.Body, int64(limit)+1))
	return body, resp.StatusCode, err
}

func (m *metroLink) attachLocked(ctx context.Context, p metroPageInfo, id string) {
	c := &metroConn{link: m, page: p, sessionID: id, linkDone: ctx, sent: map[int64]string{}}
	c.ctx, c.cancel = context.WithCancel(ctx)
	m.conns[p.ID] = c
	m.wg.Go(func() { m.ended(c, c.serve()) })
}

// ended records how a connection ended, and what that means for its page.
func (m *metroLink) ended(c *metroConn, end metroConnEnd) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.conns[c.page.ID] == c {
		delete(m.conns, c.page.ID)
	}
	if end.stopped != "" {
		return // the link ended it: the page is gone, replaced, or the server stops
	}
	detail := cmp.Or(end.closeReason, errText(end.err))
	switch {
	case strings.Contains(end.closeReason, "[NEW_DEBUGGER_OPENED]"): // the proxy's close for another debugger
		m.held[c.page.ID] = &metroBackoff{reason: metroOtherDebugger, detail: detail}
		m.logger.Info("another debugger took a React Native page; it is left to it while Metro lists the page",
			"page", c.page.ID, "session", c.sessionID)
	case end.attachedAt.IsZero() || end.lived < metroQuickClose:
		prev := m.held[c.page.ID]
		retry := newBackoff(m.minBackoff, m.maxBackoff)
		if prev != nil && prev.retry.max > 0 {
			retry = prev.retry
		}
		delay := retry.next()
		reason := metroClosedOnAttach
		if end.attachedAt.IsZero() {
			reason = metroDialFailed
		}
		held := &metroBackoff{until: time.Now().Add(delay), retry: retry, reason: reason, detail: detail}
		if end.attachedAt.IsZero() || end.closeReason == "" {
			origin := c.origin
			held.origin = &origin
		}
		m.held[c.page.ID] = held
		if prev == nil {
			m.logger.Info("a React Native page closed right after attaching; backing off", "page", c.page.ID,
				"detail", detail, "retryIn", delay)
		}
	default:
		delete(m.held, c.page.ID)
	}
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// sessionIDsLocked is the session id of each chosen page, by page id (assign).
func (m *metroLink) sessionIDsLocked(pages []metroPageInfo, chosen map[string]bool) map[string]string {
	var picked []metroPageInfo
	live := map[string]string{}
	for _, p := range pages {
		if !chosen[p.ID] {
			continue
		}
		picked = append(picked, p)
		if c := m.conns[p.ID]; c != nil {
			live[p.ID] = c.sessionID
		}
	}
	return m.idents.assign(picked, live)
}

// sessionInfo describes a page's app as a session describes an app.
func (m *metroLink) sessionInfo(p metroPageInfo, now time.Time) *adapterInfo {
	app, _ := reactotronMarshal(map[string]any{"name": nullable(p.AppID), "bundleId": nullable(p.AppID), "title": nullable(p.Title)})
	device, _ := reactotronMarshal(map[string]any{"name": nullable(p.DeviceName), "logicalDeviceId": nullable(p.LogicalDeviceID)})
	return &adapterInfo{SessionID: p.ID, AdapterVersion: "metro", ConnectedAt: now, App: app, Device: device,
		DeviceID: p.LogicalDeviceID, Streams: []streamState{{Name: "console", Active: true}}}
}

func (m *metroLink) count(f func(*metroCounters)) {
	m.mu.Lock()
	f(&m.dropped)
	m.mu.Unlock()
}

func (m *metroLink) status() metroStatus {
	m.mu.Lock()
	st := metroStatus{URL: m.cfg.MetroURL, Checked: m.checked, Reachable: m.reachable, Error: m.lastErr, Dropped: m.dropped}
	chosen := m.chooseLocked(m.listed)
	now := time.Now()
	var conns []*metroConn
	for _, p := range m.listed {
		d := m.decideLocked(p, chosen, now)
		ps := metroPageStatus{ID: p.ID, App: p.AppID, Device: p.DeviceName, Title: p.Title, Reason: d.reason}
		if d.hold != nil {
			ps.Detail, ps.RetryAt, ps.Origin = d.hold.detail, d.hold.until, d.hold.origin
		}
		if d.conn != nil {
			ps.Session = d.conn.sessionID
		}
		conns = append(conns, d.conn)
		st.Pages = append(st.Pages, ps)
	}
	m.mu.Unlock()
	attached := 0
	for i, c := range conns {
		if c != nil && c.isAttached() {
			st.Pages[i].Attached = true
			attached++
		}
	}
	st.SharedNetwork = attached > 1 && m.netShare.broadcasting()
	return st
}

// learnManifestHost asks Expo's manifest for the dev server's own host, once
// per dev server run, when a listed page says that host is not METRO_URL's.
func (m *metroLink) learnManifestHost(ctx context.Context, pages []metroPageInfo) {
	m.mu.Lock()
	asked := m.manifestAsked
	m.mu.Unlock()
	if asked || !slices.ContainsFunc(pages, func(p metroPageInfo) bool { _, other := metroFrontendHost(p.DevtoolsFrontendURL); return other }) {
		return
	}
	askCtx, cancel := context.WithTimeout(ctx, min(m.cfg.RequestTimeout, 5*time.Second))
	defer cancel()
	host := fetchManifestHost(askCtx, m.client, m.cfg.MetroURL)
	if ctx.Err() != nil {
		return // the link stops
	}
	m.mu.Lock()
	m.manifestHost, m.manifestAsked = host, true
	m.mu.Unlock()
}

func (m *metroLink) debuggerOrigin(p metroPageInfo) metroOrigin {
	m.mu.Lock()
	defer m.mu.Unlock()
	return chooseMetroOrigin(m.cfg.MetroURL, p, m.manifestHost, m.cfg.MetroAllowedHosts)
}
