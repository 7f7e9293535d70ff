package main

// session_watch.go lets a caller wait for what a session does next without
// asking it again and again (changes). A session nobody watches allocates
// nothing.

// changes returns a channel closed at the session's next recorded event or
// change of link (disconnect, replacement, reconnection); each call after
// that hands out a fresh one. Take it before reading what the session
// holds, so that an event recorded between the read and the wait still
// wakes the waiter.
func (s *session) changes() <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.changed == nil {
		s.changed = make(chan struct{})
	}
	return s.changed
}

// wakeLocked wakes every waiter of changes. s.mu is held.
func (s *session) wakeLocked() {
	if s.changed != nil {
		close(s.changed)
		s.changed = nil
	}
}
