package main

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
)

// queuedData lists the frames q holds, oldest first.
func queuedData(q *queue[queuedFrame]) []string {
	var out []string
	for i := range q.len() {
		out = append(out, string(q.at(i).data))
	}
	return out
}

// TestDesktopWriteFailureKeepsFrame: a frame whose write to the desktop
// fails is not lost: it stays at the head of the queue and is the first
// written, after the intro, on the next connection.
func TestDesktopWriteFailureKeepsFrame(t *testing.T) {
	r := &desktopRelay{ctx: context.Background(), intro: []byte("intro"), toDesktopReady: make(chan struct{}, 1),
		toDesktop: newFrameQueue(10, 1<<20)}
	r.toDesktop.push(queuedFrame{data: []byte("a")})
	r.toDesktop.push(queuedFrame{data: []byte("b")})
	var written []string
	reset := errors.New("connection reset")
	err := r.writeDesktop(func(data []byte) error {
		if string(data) == "b" {
			return reset
		}
		written = append(written, string(data))
		return nil
	}, make(chan struct{}))
	if !errors.Is(err, reset) {
		t.Fatalf("writeDesktop = %v, want the write's error", err)
	}
	if want := []string{"intro", "a"}; !slices.Equal(written, want) {
		t.Errorf("written %q, want %q", written, want)
	}
	if got := queuedData(&r.toDesktop); !slices.Equal(got, []string{"b"}) || r.toDesktop.bytes != 1 || r.toDesktop.dropped != 0 {
		t.Errorf("queue %q (%d bytes, %d dropped), want the failed frame alone", got, r.toDesktop.bytes, r.toDesktop.dropped)
	}
	if r.stats.SentToDesktop != 2 {
		t.Errorf("sent %d, want 2: a failed write is not sent", r.stats.SentToDesktop)
	}

	// The next connection, until the app's ends.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	r.ctx = ctx
	r.toDesktop.push(queuedFrame{data: []byte("c")})
	written = nil
	err = r.writeDesktop(func(data []byte) error {
		written = append(written, string(data))
		if string(data) == "c" {
			cancel()
		}
		return nil
	}, make(chan struct{}))
	if err != nil {
		t.Fatalf("writeDesktop = %v, want nil once the app's connection ended", err)
	}
	if want := []string{"intro", "b", "c"}; !slices.Equal(written, want) {
		t.Errorf("written %q on the next connection, want %q", written, want)
	}
}

// TestDesktopWriteFailsTwiceDropsFrame: a frame whose write fails on two
// connections is dropped and counted, so that one frame the desktop
// cannot take never holds back the ones behind it.
func TestDesktopWriteFailsTwiceDropsFrame(t *testing.T) {
	r := &desktopRelay{ctx: context.Background(), intro: []byte("intro"), toDesktopReady: make(chan struct{}, 1),
		toDesktop: newFrameQueue(10, 1<<20)}
	r.toDesktop.push(queuedFrame{data: []byte("poison")})
	r.toDesktop.push(queuedFrame{data: []byte("next")})
	refuse := func(data []byte) error {
		if string(data) == "poison" {
			return errors.New("closed by the desktop")
		}
		return nil
	}
	for i := range 2 {
		if err := r.writeDesktop(refuse, make(chan struct{})); err == nil {
			t.Fatalf("connection %d: writeDesktop = nil, want the write's error", i+1)
		}
	}
	if got := queuedData(&r.toDesktop); !slices.Equal(got, []string{"next"}) || r.toDesktop.dropped != 1 || r.toDesktop.bytes != 4 {
		t.Errorf("queue %q (%d bytes, %d dropped), want next alone and the twice-failed frame counted", got, r.toDesktop.bytes, r.toDesktop.dropped)
	}
}

// TestDesktopGoneKeepsQueue: once the reader has seen the desktop go,
// the writer writes no more frames into the dead connection, even with
// frames queued: they wait for the next one.
func TestDesktopGoneKeepsQueue(t *testing.T) {
	r := &desktopRelay{ctx: context.Background(), intro: []byte("intro"), toDesktopReady: make(chan struct{}, 1),
		toDesktop: newFrameQueue(10, 1<<20)}
	r.toDesktop.push(queuedFrame{data: []byte("a")})
	var written []string
	gone := make(chan struct{})
	err := r.writeDesktop(func(data []byte) error {
		written = append(written, string(data))
		if string(data) == "a" {
			// The desktop goes while a is written, and b is queued.
			close(gone)
			r.mu.Lock()
			r.toDesktop.push(queuedFrame{data: []byte("b")})
			r.mu.Unlock()
		}
		return nil
	}, gone)
	if err != nil {
		t.Fatalf("writeDesktop = %v, want nil once the reader stopped", err)
	}
	if want := []string{"intro", "a"}; !slices.Equal(written, want) {
		t.Errorf("written %q, want %q: nothing after the desktop went", written, want)
	}
	if got := queuedData(&r.toDesktop); !slices.Equal(got, []string{"b"}) {
		t.Errorf("queue %q, want b kept for the next connection", got)
	}
}

// TestDesktopRelayFollowsNoRedirect: the relay dials REACTOTRON_DESKTOP
// and nothing else: an upgrade answered with a redirect (to a desktop that
// would accept it) fails, and the health check says why, as Metro's dial
// does, so that REACTOTRON_DESKTOP's loopback-or-allowed rule holds.
func TestDesktopRelayFollowsNoRedirect(t *testing.T) {
	t.Parallel()
	d := newFakeDesktop(t)
	d.start()
	redirect := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "http://"+d.addr+"/", http.StatusTemporaryRedirect)
	}))
	defer redirect.Close()
	b, _, url := startRelayBridge(t, testDesktopOptions(strings.TrimPrefix(redirect.URL, "http://")))
	app := dialReactotron(t, url, nil)
	app.send(recordedFrames(t, "app")[0])
	// Either the dial fails, or the desktop gets the connection.
	var lastErr string
	followed := false
	waitUntil(t, "the relay's dial to end", func() bool {
		for _, r := range b.desktopStatus() {
			lastErr = r.LastError
		}
		select {
		case <-d.conns:
			followed = true
		default:
		}
		return lastErr != "" || followed
	})
	if followed {
		t.Fatal("the relay followed the redirect to the desktop it named")
	}
	if !strings.Contains(lastErr, "redirect") {
		t.Errorf("relay error %q, want the redirect named", lastErr)
	}
}
