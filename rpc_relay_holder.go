package main

import (
	"context"
	"sync"
	"time"
)

// Bounds of asking whether the process holding the adapter port answers
// MCP. A devtools-mcp answers server/discover at once; a program that
// listens on the port and never answers must not hold up every call.
const (
	relayProbeTimeout = time.Second      // one probe (config.RelayProbeTimeout overrides it)
	relayVerdictTTL   = 10 * time.Second // a verdict is trusted this long, then asked again in the background
)

// holderCheck remembers whether the holder of the adapter port answers MCP
// (verdict says for how long). Probes run on the goroutine of run, which
// the relay's owner waits for.
type holderCheck struct {
	probe   func(ctx context.Context) bool // asks the holder once; ctx bounds it
	timeout time.Duration                  // bound of one probe
	ttl     time.Duration                  // how long a verdict is trusted

	mu      sync.Mutex
	known   bool          // a probe or a relayed request has given a verdict
	answers bool          // the verdict: the holder answers MCP
	at      time.Time     // when the verdict was given
	pending chan struct{} // closed when the probe asked for ends; nil: none asked for
	wake    chan struct{} // cap 1: a probe is asked for
}

func newHolderCheck(probe func(context.Context) bool, timeout, ttl time.Duration) *holderCheck {
	return &holderCheck{probe: probe, timeout: timeout, ttl: ttl, wake: make(chan struct{}, 1)}
}

// verdict reports whether the holder answers MCP. Without a fresh verdict
// it asks for a probe; when there is no verdict at all, it waits for that
// probe only if wait is set (and at most until ctx ends), and otherwise
// answers false at once. An old verdict is answered at once.
func (h *holderCheck) verdict(ctx context.Context, wait bool) bool {
	h.mu.Lock()
	if h.known && time.Since(h.at) < h.ttl {
		defer h.mu.Unlock()
		return h.answers
	}
	if h.pending == nil {
		h.pending = make(chan struct{})
		wake(h.wake)
	}
	known, answers, pending := h.known, h.answers, h.pending
	h.mu.Unlock()
	if known || !wait {
		return answers
	}
	select {
	case <-pending:
	case <-ctx.Done():
		return false
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.answers
}

// record gives a verdict learnt from a relayed request.
func (h *holderCheck) record(answers bool) {
	h.mu.Lock()
	h.known, h.answers, h.at = true, answers, time.Now()
	h.mu.Unlock()
}

// recheck asks for a probe now; until it ends, the verdict stands.
func (h *holderCheck) recheck() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.at = time.Time{}
	if h.pending == nil {
		h.pending = make(chan struct{})
		wake(h.wake)
	}
}

// run performs the probes asked for until ctx ends; a probe in flight ends
// with ctx.
func (h *holderCheck) run(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-h.wake:
		}
		pctx, cancel := context.WithTimeout(ctx, h.timeout)
		answers := h.probe(pctx)
		cancel()
		h.mu.Lock()
		if ctx.Err() == nil {
			h.known, h.answers, h.at = true, answers, time.Now()
		}
		pending := h.pending
		h.pending = nil
		h.mu.Unlock()
		if pending != nil {
			close(pending)
		}
	}
}

// probeHolder asks the holder for server/discover and reports whether a
// JSON-RPC answer came back before ctx ended.
func (rl *relay) probeHolder(ctx context.Context) bool {
	resp, self, err := rl.exchange(ctx, rl.client, "probe", "server/discover", nil, "", "application/json")
	if err != nil {
		return false
	}
	defer resp.Body.Close()
	if self {
		return false // this very process: nothing to relay to
	}
	_, err = readRelayReply(resp)
	return err == nil
}
