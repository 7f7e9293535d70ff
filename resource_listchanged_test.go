package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
)

// listChangedCounter is an MCP client of srv that counts the
// notifications/resources/list_changed it gets, and keeps what
// resources/list answered after the last one.
type listChangedCounter struct {
	srv *mcpServer

	mu      sync.Mutex
	count   int
	listing string // the resources/list answer fetched on the last notification
}

func newListChangedCounter(srv *mcpServer) *listChangedCounter {
	lc := &listChangedCounter{srv: srv}
	c := newClient(srv, "counter", func(method string, _ any) {
		if method != "notifications/resources/list_changed" {
			return
		}
		page := string(srv.resources.listPage(0)) // what a client fetches on the notification
		lc.mu.Lock()
		lc.count++
		lc.listing = page
		lc.mu.Unlock()
	}, nil)
	c.initialized.Store(true)
	c.ready.Store(true)
	srv.addClient(c)
	return lc
}

func (lc *listChangedCounter) get() (int, string) {
	lc.mu.Lock()
	defer lc.mu.Unlock()
	return lc.count, lc.listing
}

// listServer is the MCP core over a link that is not listening: apps are
// attached to its session registry directly, and the link's events reach
// the server as they do in serve.
func listServer(t *testing.T, ctx context.Context, cfg config) (*mcpServer, *sync.WaitGroup) {
	t.Helper()
	srv := newMCPServer(cfg, nil)
	srv.link = newTestLink(cfg, nil, srv.onLinkEvent)
	srv.tools = newTestToolSet(cfg, srv.link)
	srv.resources = newTestResourceHub(cfg, srv.link, srv.notifyClient)
	srv.resources.lists.interval = cfg.Tune.ListChanged
	var wg sync.WaitGroup
	wg.Go(func() { srv.link.events.run(srv.onLinkEvent) })
	wg.Go(func() { srv.resources.run(ctx) })
	wg.Go(func() { srv.resources.lists.run(ctx) })
	context.AfterFunc(ctx, srv.link.events.close)
	return srv, &wg
}

func mmkvInfo(id string, instances ...string) *adapterInfo {
	info := testInfo(id, "phone", "ShopApp", "redux")
	info.Streams = append(info.Streams, streamState{Name: "mmkv", Active: true, Instances: instances})
	return info
}

// TestListChangedOnlyWhenTheListingChanges replaces an app's adapter 2 000
// times, as an app reloading in a loop does: the listing stays the same, so
// the client hears once (the first app's MMKV instances came). Then a burst
// of replacements that do change it: the first change is announced at
// once, the rest within one interval as one notification, and what the
// client fetches then is the final listing.
func TestListChangedOnlyWhenTheListingChanges(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const interval = 100 * time.Millisecond
		cfg := testConfig(t)
		cfg.Tune.ListChanged = interval
		ctx, cancel := context.WithCancel(context.Background())
		srv, wg := listServer(t, ctx, cfg)
		lc := newListChangedCounter(srv)
		reg := registryOf(srv.link)

		for i := range 2000 {
			id := fmt.Sprintf("reload-%d", i)
			reg.attach(sessionViaWire, id, "phone", mmkvInfo(id, "default", "auth"), &testFeed{})
			if i%100 == 0 {
				time.Sleep(interval / 3) // some replacements come after the interval
			}
		}
		time.Sleep(2 * interval)
		synctest.Wait()
		if n, listing := lc.get(); n != 1 || !strings.Contains(listing, "debug://mmkv/auth") {
			t.Errorf("2 000 replacements with one listing: %d notifications (last listing %s), want 1", n, listing)
		}

		// A burst that changes the listing every time, within one interval.
		for i := range 50 {
			id := fmt.Sprintf("change-%d", i)
			reg.attach(sessionViaWire, id, "phone", mmkvInfo(id, fmt.Sprintf("i%d", i)), &testFeed{})
			synctest.Wait() // each change reaches the announcer before the next
		}
		synctest.Wait()
		if n, _ := lc.get(); n != 2 {
			t.Errorf("the burst's first change: %d notifications in all, want 2 (announced at once)", n)
		}
		time.Sleep(interval)
		synctest.Wait()
		if n, listing := lc.get(); n != 3 || !strings.Contains(listing, "debug://mmkv/i49") || strings.Contains(listing, "debug://mmkv/i48") {
			t.Errorf("after the burst: %d notifications, last listing %s; want 3, the last with i49 alone", n, listing)
		}

		// The app leaves: its session stays the default one, post-mortem,
		// with the same instances; nothing to announce. Its expiry is.
		s := reg.current()
		s.mu.Lock()
		feed := s.feed
		s.mu.Unlock()
		reg.detach(s, feed, "disconnected")
		time.Sleep(2 * interval)
		synctest.Wait()
		if n, _ := lc.get(); n != 3 {
			t.Errorf("a disconnect that leaves the listing alone: %d notifications, want still 3", n)
		}
		reg.mu.Lock()
		reg.pruneLocked(time.Now().Add(sessionPostMortemTTL))
		reg.mu.Unlock()
		time.Sleep(2 * interval)
		synctest.Wait()
		if n, listing := lc.get(); n != 4 || strings.Contains(listing, "debug://mmkv/") {
			t.Errorf("after the expiry: %d notifications, last listing %s; want 4, without MMKV instances", n, listing)
		}
		cancel()
		wg.Wait()
	})
}

// TestListChangedNotFromStalledAdapter: tool calls of 100 KB each against an
// adapter that stopped reading fail, the link drops the adapter when a
// write stalls, and no resource comes or goes: the client hears no
// list_changed beyond the connect's.
func TestListChangedNotFromStalledAdapter(t *testing.T) {
	cfg := linkTestConfig()
	cfg.RequestTimeout = 20 * time.Millisecond
	cfg.Tune.ListChanged = time.Millisecond
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	srv := newMCPServer(cfg, nil)
	srv.link = newTestLink(cfg, nil, srv.onLinkEvent)
	srv.link.writeTimeout = 50 * time.Millisecond // a stalled write drops the adapter soon
	srv.tools = newTestToolSet(cfg, srv.link)
	srv.resources = newTestResourceHub(cfg, srv.link, srv.notifyClient)
	srv.resources.lists.interval = cfg.Tune.ListChanged
	lc := newListChangedCounter(srv)
	var wg sync.WaitGroup
	defer wg.Wait()
	defer cancel()
	wg.Go(func() { _ = srv.link.run(ctx) })
	wg.Go(func() { srv.resources.run(ctx) })
	wg.Go(func() { srv.resources.lists.run(ctx) })
	addr, err := srv.link.addr(ctx)
	if err != nil {
		t.Fatal(err)
	}
	h := &linkHarness{link: srv.link, addr: addr}
	a := h.dial(t, nil) // reads the handshake's answer, then nothing more
	a.send(testHandshake("stalled", hsWith("capabilities", []any{"commands"})))
	if got := a.recv(); got["type"] != "handshake_ack" {
		t.Fatalf("handshake answer = %v", got)
	}
	for deadline := time.Now().Add(linkWaitLimit); ; time.Sleep(time.Millisecond) {
		if n, _ := lc.get(); n == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the connect was never announced")
		}
	}

	blob := strings.Repeat("x", 100<<10)
	var failed atomic.Int32
	var calls sync.WaitGroup
	for i := range 400 {
		calls.Go(func() {
			params, _ := json.Marshal(map[string]any{"name": "debug_run_command",
				"arguments": map[string]any{"command": fmt.Sprint("c", i), "args": map[string]any{"blob": blob}}})
			res, err := srv.callTool(withCall(ctx, &callInfo{}), params)
			if raw, ok := res.(json.RawMessage); err == nil && ok && strings.Contains(string(raw), `"isError":true`) {
				failed.Add(1)
			}
		})
	}
	calls.Wait()
	if failed.Load() != 400 {
		t.Errorf("%d of 400 calls against a stalled adapter failed, want all", failed.Load())
	}
	for deadline := time.Now().Add(linkWaitLimit); srv.link.status().Connected; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the stalled adapter was never dropped")
		}
	}
	// Announcements go out from the hub's goroutine; a ping through the
	// same path is not possible, so wait past the interval once more
	// with something that changes the listing, and count it.
	registryOf(srv.link).attach(sessionViaWire, "next", "tablet", mmkvInfo("next", "other"), &testFeed{})
	for deadline := time.Now().Add(linkWaitLimit); ; time.Sleep(time.Millisecond) {
		n, listing := lc.get()
		if strings.Contains(listing, "debug://mmkv/other") {
			if n != 2 {
				t.Errorf("%d list_changed in all, want 2: the connect's and the last change's", n)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the last change was never announced")
		}
	}
}
