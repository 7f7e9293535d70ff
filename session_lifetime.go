package main

// session_lifetime.go ends sessions: a disconnected session is kept for
// sessionPostMortemTTL, and at most maxSessions are kept at once.

import (
	"context"
	"slices"
	"time"
)

// run forgets expired sessions every pruneEvery until ctx ends, so that
// clients hear of an expiry even when nobody asks for the session list.
// serve runs it.
func (r *sessionRegistry) run(ctx context.Context) {
	every(ctx, r.pruneEvery, func() bool { r.prune(); return true })
}

// boundLocked forgets the oldest disconnected sessions beyond maxSessions.
func (r *sessionRegistry) boundLocked() {
	for len(r.sessions) > maxSessions {
		i := slices.IndexFunc(r.sessions, func(s *session) bool { return !s.isLive() })
		if i < 0 {
			return // every session is live: they are bounded by connections
		}
		r.sessions = slices.Delete(r.sessions, i, i+1)
	}
}

// pruneLocked forgets sessions disconnected longer than the TTL ago.
func (r *sessionRegistry) pruneLocked(now time.Time) {
	r.sessions = slices.DeleteFunc(r.sessions, func(s *session) bool {
		s.mu.Lock()
		defer s.mu.Unlock()
		expired := s.feed == nil && now.Sub(s.disconnectedAt) >= r.ttl
		if expired {
			r.events.push(linkEvent{Kind: linkSessionExpired, SessionID: s.id})
		}
		return expired
	})
}

func (r *sessionRegistry) prune() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.pruneLocked(time.Now())
}
