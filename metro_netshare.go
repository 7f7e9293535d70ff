package main

// metro_netshare.go tells which network events a page's connection cannot
// attribute to its app. Expo apps (SDK 58, expo-modules-core's
// ExpoRequestCdpInterceptor) report their requests on a socket of their own,
// /inspector/network, as plain CDP Network events that name no device and
// no app, and Expo's dev server sends each frame to every debugger socket of
// every page (@expo/cli createDebugMiddleware.js, createNetworkWebsocket).
// With two apps attached, each of our connections receives both apps'
// requests, and nothing in a frame says whose it is. The sign is an
// identical frame arriving on two pages' connections; once it has been seen,
// the dev server is known to broadcast, and every network event that
// reaches a connection while another page is attached may be another app's:
// its request is marked, never attributed by guess.

import (
	"hash/maphash"
	"maps"
	"slices"
	"sync"
)

// maxMetroNetFrames bounds the frame digests remembered to spot a frame
// that reaches a second page's connection.
const maxMetroNetFrames = 4096

// metroNetShare remembers recent network frames by digest and the page
// whose connection received each first. Its methods are safe for
// concurrent use.
type metroNetShare struct {
	seed maphash.Seed

	mu        sync.Mutex
	first     map[uint64]string // digest → page id that had it first
	order     queue[uint64]     // digests, oldest first; the oldest forgotten past maxMetroNetFrames
	broadcast bool              // a frame reached two pages' connections
}

func newMetroNetShare() *metroNetShare {
	s := &metroNetShare{seed: maphash.MakeSeed(), first: map[uint64]string{}, order: newQueue[uint64](maxMetroNetFrames, 0, nil)}
	s.order.onDrop = func(d uint64) { delete(s.first, d) }
	return s
}

// note records that page's connection received frame and reports whether
// another page's connection received the identical frame too.
func (s *metroNetShare) note(page string, frame []byte) bool {
	d := maphash.Bytes(s.seed, frame)
	s.mu.Lock()
	defer s.mu.Unlock()
	if p, ok := s.first[d]; ok {
		if p != page {
			s.broadcast = true
			return true
		}
		return false // the page's own repeat
	}
	s.first[d] = page
	s.order.push(d)
	return false
}

// broadcasting reports whether the dev server was seen sending one network
// frame to several pages' connections.
func (s *metroNetShare) broadcasting() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.broadcast
}

// reset forgets everything, for the next dev server (poll says why).
func (s *metroNetShare) reset() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.order.clear()
	s.broadcast = false
}

// networkShared reports whether a network frame that page's connection
// received cannot be attributed to page's app (the file header says when).
func (m *metroLink) networkShared(page string, frame []byte) bool {
	if m.netShare.note(page, frame) {
		return true
	}
	if !m.netShare.broadcasting() {
		return false
	}
	// A connection's own lock is never taken under the link's
	// (metro_link.go's status does the same).
	m.mu.Lock()
	conns := slices.Collect(maps.Values(m.conns))
	m.mu.Unlock()
	return slices.ContainsFunc(conns, func(c *metroConn) bool { return c.page.ID != page && c.isAttached() })
}
