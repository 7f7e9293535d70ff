package main

import (
	"testing"
	"time"
)

// TestSessionKeepsOmittedStreams: a reconnect of a Metro or Reactotron
// session, whose description omits a stream the server numbers, keeps the
// stream's figures, so its seqs go on; a wire adapter's list stays what
// the adapter says.
func TestSessionKeepsOmittedStreams(t *testing.T) {
	t.Parallel()
	reg, _ := newTestRegistry(100)
	at := time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)

	// Streams the server numbers: Metro's network, Reactotron's react_query.
	for _, c := range []struct{ via, id, stream string }{
		{sessionViaMetro, "metro:app@phone", "network"},
		{sessionViaReactotron, "client-1", "react_query"},
	} {
		first := &testFeed{}
		s, _ := reg.attach(c.via, c.id, "", testInfo("p1", "", "app", "console"), first)
		s.appendEvent(first, c.stream, "e", at, []byte(`{"n":1}`))
		s.appendEvent(first, c.stream, "e", at, []byte(`{"n":2}`))
		s.leave(first, "disconnected")
		second := &testFeed{}
		reg.attach(c.via, c.id, "", testInfo("p2", "", "app", "console"), second)
		if found, _ := s.streamActive(c.stream); !found {
			t.Errorf("%s: the %s stream is gone after the app came back", c.via, c.stream)
		}
		s.appendEvent(second, c.stream, "e", at, []byte(`{"n":3}`))
		if got := s.latestSeq(c.stream); got != 3 {
			t.Errorf("%s: after a re-attach the next %s event is seq %d, want 3", c.via, c.stream, got)
		}
		if n := len(eventsOf(t, s, c.stream)); n != 3 {
			t.Errorf("%s: %s holds %d events, want 3", c.via, c.stream, n)
		}
	}

	// A wire adapter numbers its own events: its list is what it says.
	wire := &testFeed{}
	w, _ := reg.attach(sessionViaWire, "w1", "dev", testInfo("w1", "dev", "shop", "redux", "mmkv"), wire)
	recordTestEvent(w, wire, "mmkv", 7, "set", `{}`)
	again := &testFeed{}
	reg.attach(sessionViaWire, "w1", "dev", testInfo("w1", "dev", "shop", "redux"), again)
	if found, _ := w.streamActive("mmkv"); found || w.latestSeq("mmkv") != 0 {
		t.Errorf("a wire stream the adapter no longer lists is still listed (latest seq %d)", w.latestSeq("mmkv"))
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
