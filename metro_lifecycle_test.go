package main

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/coder/websocket"
)

// What a Metro app does over its life (reloads of both kinds, relaunches,
// another debugger taking its page) must leave its session's streams
// numbered as one sequence: seqs only rise, what came before stays
// readable, and since_seq reads go on where they were.

// requestFrames is one finished GET of url, as a React Native page reports
// it over CDP.
func requestFrames(id, url string) [][]byte {
	return [][]byte{
		fmt.Appendf(nil, `{"method":"Network.requestWillBeSent","params":{"requestId":%q,"timestamp":10,"wallTime":1795777202.7,"request":{"url":%q,"method":"GET","headers":{}}}}`, id, url),
		fmt.Appendf(nil, `{"method":"Network.responseReceived","params":{"requestId":%q,"timestamp":10.1,"response":{"status":200,"headers":{}}}}`, id),
		fmt.Appendf(nil, `{"method":"Network.loadingFinished","params":{"requestId":%q,"timestamp":10.2}}`, id),
	}
}

// seqsAndURLs lists the seqs of events, and their payloads' url (network)
// or message (console).
func seqsAndURLs(events []map[string]any) ([]int64, []string) {
	var seqs []int64
	var what []string
	for _, ev := range events {
		seqs = append(seqs, int64(ev["seq"].(float64)))
		p, _ := ev["payload"].(map[string]any)
		s, _ := p["url"].(string)
		if m, ok := p["message"].(string); ok {
			s = m
		}
		what = append(what, s)
	}
	return seqs, what
}

// eventsSince is what session id holds of stream after seq since.
func eventsSince(t *testing.T, reg *sessionRegistry, id, stream string, since int64) []map[string]any {
	t.Helper()
	return sessionQuery(t, reg, id, eventsParams{Stream: stream, Limit: 100, SinceSeq: &since})
}

// checkRising asserts that session id's stream holds want (urls or
// messages) numbered 1…n, and that a read since the seq of the first
// `before` of them returns exactly the rest.
func checkRising(t *testing.T, reg *sessionRegistry, id, stream string, before int, want ...string) {
	t.Helper()
	seqs, got := seqsAndURLs(sessionEvents(t, reg, id, stream))
	wantSeqs := make([]int64, len(want))
	for i := range want {
		wantSeqs[i] = int64(i + 1)
	}
	if !slices.Equal(got, want) || !slices.Equal(seqs, wantSeqs) {
		t.Errorf("%s holds %q at seqs %v, want %q at %v", stream, got, seqs, want, wantSeqs)
	}
	seqs, got = seqsAndURLs(eventsSince(t, reg, id, stream, int64(before)))
	if !slices.Equal(got, want[before:]) || !slices.Equal(seqs, wantSeqs[before:]) {
		t.Errorf("%s since_seq %d = %q at %v, want %q at %v", stream, before, got, seqs, want[before:], wantSeqs[before:])
	}
}

// pushActivity sends one console.log and two requests (names from tag) to
// page, and waits for the session to hold console and network events.
func pushActivity(t *testing.T, m *metroStandIn, reg *sessionRegistry, page, tag string, console, network int64) {
	t.Helper()
	m.push(page, consoleFrame("log "+tag))
	m.push(page, requestFrames(tag+"-a", "https://api.example.com/"+tag+"/a")...)
	m.push(page, requestFrames(tag+"-b", "https://api.example.com/"+tag+"/b")...)
	waitUntil(t, tag+" recorded", func() bool {
		s, _ := reg.find(standInSession)
		return s != nil && len(sessionEvents(t, reg, standInSession, "console")) >= int(console) &&
			len(sessionEvents(t, reg, standInSession, "network")) >= int(network)
	})
}

// shopAttached starts a stand-in listing the shop app on one page, with
// the link attached to it and the page's first activity (a log and two
// requests) pushed.
func shopAttached(t *testing.T, pageID string) (*metroStandIn, *metroLink, *sessionRegistry) {
	t.Helper()
	m := startMetroStandIn(t)
	m.setPages(standInPage(pageID, "com.example.shop", "Pixel 8", "dev-a", true))
	link, reg := startMetroLink(t, m, nil)
	waitUntil(t, "page "+pageID+" attached", func() bool { p, _ := pageStatus(link, pageID); return p.Attached })
	pushActivity(t, m, reg, pageID, "first", 1, 2)
	return m, link, reg
}

// TestMetroSeqsRiseAcrossReloadWithNewPage: an older React Native reload
// lists the app under a new page id; the next page's requests and logs go
// on from the seqs before, which stay readable.
func TestMetroSeqsRiseAcrossReloadWithNewPage(t *testing.T) {
	t.Parallel()
	m, link, reg := shopAttached(t, "1")

	m.setPages(standInPage("2", "com.example.shop", "Pixel 8", "dev-a", true))
	m.closePage("1", websocket.StatusGoingAway, "[PAGE_NOT_FOUND] page reloaded")
	waitUntil(t, "page 2 attached", func() bool { p, _ := pageStatus(link, "2"); return p.Attached && p.Session == standInSession })
	pushActivity(t, m, reg, "2", "second", 2, 4)

	checkRising(t, reg, standInSession, "network", 2, "https://api.example.com/first/a", "https://api.example.com/first/b",
		"https://api.example.com/second/a", "https://api.example.com/second/b")
	checkRising(t, reg, standInSession, "console", 1, "log first", "log second")
}

// TestMetroSeqsRiseAcrossRelaunch: the app process restarts; the proxy
// drops the page with its device, then lists it again under the same
// logical device and page id. One session, seqs going on.
func TestMetroSeqsRiseAcrossRelaunch(t *testing.T) {
	t.Parallel()
	m, link, reg := shopAttached(t, "dev-a-1")

	// The app is killed: its device socket closes, the proxy forgets the
	// device and closes its debuggers.
	m.setPages()
	m.closePage("dev-a-1", websocket.StatusNormalClosure, "")
	s, _ := reg.find(standInSession)
	waitUntil(t, "the session not live", func() bool { return !s.isLive() })
	m.waitPolls(2)
	m.setPages(standInPage("dev-a-1", "com.example.shop", "Pixel 8", "dev-a", true))
	waitUntil(t, "the relaunched page attached", func() bool {
		p, _ := pageStatus(link, "dev-a-1")
		return p.Attached && p.Session == standInSession && s.isLive()
	})
	pushActivity(t, m, reg, "dev-a-1", "second", 2, 4)

	checkRising(t, reg, standInSession, "network", 2, "https://api.example.com/first/a", "https://api.example.com/first/b",
		"https://api.example.com/second/a", "https://api.example.com/second/b")
	checkRising(t, reg, standInSession, "console", 1, "log first", "log second")
	if n := reg.count(); n != 1 {
		t.Errorf("%d sessions, want 1", n)
	}
}

// TestMetroSeqsRiseAcrossReattach: another debugger takes the page
// ([NEW_DEBUGGER_OPENED]); the app's next page is attached to the same
// session, which numbers on from where it was.
func TestMetroSeqsRiseAcrossReattach(t *testing.T) {
	t.Parallel()
	m, link, reg := shopAttached(t, "1")

	m.closePage("1", websocket.StatusNormalClosure, "[NEW_DEBUGGER_OPENED] New debugger opened for the same app instance")
	waitUntil(t, "page 1 left alone", func() bool { p, _ := pageStatus(link, "1"); return p.Reason == metroOtherDebugger })
	m.setPages(standInPage("2", "com.example.shop", "Pixel 8", "dev-a", true))
	waitUntil(t, "page 2 attached", func() bool { p, _ := pageStatus(link, "2"); return p.Attached && p.Session == standInSession })
	pushActivity(t, m, reg, "2", "second", 2, 4)

	checkRising(t, reg, standInSession, "network", 2, "https://api.example.com/first/a", "https://api.example.com/first/b",
		"https://api.example.com/second/a", "https://api.example.com/second/b")
	checkRising(t, reg, standInSession, "console", 1, "log first", "log second")
	// The stream is the session's, not the page's: it is listed active
	// with its figures throughout.
	s, _ := reg.find(standInSession)
	if found, _ := s.streamActive("network"); !found {
		t.Error("the network stream is not active after the re-attach")
	}
}

// TestMetroContextReloadKeepsConnection: React Native 0.76 and later
// (nativePageReloads) reload in place: the page and the debugger socket
// stay, and the page says so with Runtime.executionContextsCleared and
// Runtime.executionContextCreated. The link keeps reading on the same
// socket and the seqs rise.
func TestMetroContextReloadKeepsConnection(t *testing.T) {
	t.Parallel()
	m, link, reg := shopAttached(t, "1")

	m.push("1", []byte(`{"method":"Runtime.executionContextsCleared"}`),
		[]byte(`{"method":"Runtime.executionContextCreated","params":{"context":{"id":2,"origin":"","name":"main","uniqueId":"2-b"}}}`))
	pushActivity(t, m, reg, "1", "second", 2, 4)

	checkRising(t, reg, standInSession, "network", 2, "https://api.example.com/first/a", "https://api.example.com/first/b",
		"https://api.example.com/second/a", "https://api.example.com/second/b")
	checkRising(t, reg, standInSession, "console", 1, "log first", "log second")
	if n := m.dialsOf("1"); n != 1 {
		t.Errorf("page 1 dialled %d times, want 1: a reload in place keeps the connection", n)
	}
	if d := link.status().Dropped; d.MalformedFrames != 0 {
		t.Errorf("dropped = %+v, want the reload's events read as CDP", d)
	}
}

// TestMetroPageThatNeverPongsIsDropped: a page whose socket answers no
// ping (a frozen device, a proxy that stopped forwarding) is dropped with
// "ping timeout" once its pong is late, and attached again while Metro
// still lists it.
func TestMetroPageThatNeverPongsIsDropped(t *testing.T) {
	t.Parallel()
	m := startMetroStandIn(t)
	m.mu.Lock()
	m.noPong = true
	m.mu.Unlock()
	m.setPages(standInPage("1", "com.example.shop", "Pixel 8", "dev-a", true))
	_, reg := startMetroLink(t, m, nil, func(l *metroLink) { l.keepalive, l.pongTimeout = 5*time.Millisecond, 20*time.Millisecond })
	waitUntil(t, "the page dropped for its late pong", func() bool {
		reg.events.mu.Lock()
		defer reg.events.mu.Unlock()
		return slices.ContainsFunc(reg.events.items, func(ev linkEvent) bool {
			return ev.Kind == linkDisconnected && ev.SessionID == standInSession && ev.Reason == "ping timeout"
		})
	})
	waitUntil(t, "the page attached again", func() bool {
		m.mu.Lock()
		defer m.mu.Unlock()
		return m.dials["1"] >= 2
	})
}
