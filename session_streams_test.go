package main

import (
	"testing"
	"time"
)

// TestSessionKeepsOmittedStreams: a reconnect whose description omits a
// stream that holds events keeps the stream's figures, so the seqs the
// server numbers go on (a Metro or Reactotron session), and a wire
// adapter's omitted stream stays listed but inactive, its events readable.
func TestSessionKeepsOmittedStreams(t *testing.T) {
	t.Parallel()
	reg, _ := newTestRegistry(100)
	at := time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)

	first := &testFeed{}
	s, _ := reg.attach(sessionViaMetro, "metro:app@phone", "", testInfo("p1", "", "app", "console"), first)
	s.appendEvent(first, "network", "http_request", at, []byte(`{"n":1}`))
	s.appendEvent(first, "network", "http_request", at, []byte(`{"n":2}`))
	second := &testFeed{}
	reg.attach(sessionViaMetro, "metro:app@phone", "", testInfo("p2", "", "app", "console"), second)
	if found, _ := s.streamActive("network"); !found {
		t.Error("the network stream is gone after the page changed")
	}
	s.appendEvent(second, "network", "http_request", at, []byte(`{"n":3}`))
	if got := s.latestSeq("network"); got != 3 {
		t.Errorf("after a re-attach the next request is seq %d, want 3", got)
	}

	wire := &testFeed{}
	w, _ := reg.attach(sessionViaWire, "w1", "dev", testInfo("w1", "dev", "shop", "redux", "mmkv"), wire)
	recordTestEvent(w, wire, "mmkv", 7, "set", `{}`)
	again := &testFeed{}
	reg.attach(sessionViaWire, "w1", "dev", testInfo("w1", "dev", "shop", "redux"), again)
	if found, _ := w.streamActive("mmkv"); found {
		t.Error("a wire stream the adapter no longer lists is still active")
	}
	if got := w.latestSeq("mmkv"); got != 7 {
		t.Errorf("the omitted wire stream's latest seq is %d, want 7 (kept)", got)
	}
	recordTestEvent(w, again, "mmkv", 7, "set", `{}`)
	if n := len(eventsOf(t, w, "mmkv")); n != 1 {
		t.Errorf("mmkv holds %d events, want 1: a replayed seq changes nothing", n)
	}
}

// eventsOf is what s holds of stream.
func eventsOf(t *testing.T, s *session, stream string) []bufferedEvent {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.rings[stream]
	if r == nil {
		return nil
	}
	out := make([]bufferedEvent, 0, r.events.len())
	for i := range r.events.len() {
		out = append(out, *r.events.at(i))
	}
	return out
}
