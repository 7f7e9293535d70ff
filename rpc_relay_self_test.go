package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

// selfRelay is one server whose relay is pointed at its own /mcp while its
// bound function says "not listening": the instant between binding the
// adapter port and marking the link as listening, held open.
type selfRelay struct {
	srv   *mcpServer
	relay *relay
	lists *listChangedCounter
	stop  func() // stops the relay, the announcer and the endpoint, and waits for them
}

// startSelfRelay starts it; instance is what the endpoint calls the
// server: the relay's own instance, or another one to defeat the
// self-recognition and test the guards behind it.
func startSelfRelay(t *testing.T, sameInstance bool) *selfRelay {
	t.Helper()
	cfg := testConfig(t)
	cfg.Tune.ListChanged = time.Millisecond
	ctx, cancel := context.WithCancel(context.Background())
	srv, wg := listServer(t, ctx, cfg)
	lc := newListChangedCounter(srv)
	tr := newHTTPTransport(srv, cfg, srv.link.checkUpgrade, nil)
	rl := newRelay(cfg, func() (bool, string) { return false, "" }, 5*time.Millisecond)
	instance := rl.instance
	if !sameInstance {
		instance = "another server"
	}
	ts := httptest.NewServer(relayEndpoint(tr, instance))
	rl.url = ts.URL + mcpPath
	ready := make(chan struct{})
	close(ready) // no link here: nothing to wait for
	rl.ready = ready
	srv.relay = rl
	wg.Go(func() { rl.watch(ctx, srv) })
	var once sync.Once
	stop := func() {
		once.Do(func() {
			cancel()
			tr.close()
			ts.Close()
			wg.Wait()
		})
	}
	t.Cleanup(stop)
	return &selfRelay{srv: srv, relay: rl, lists: lc, stop: stop}
}

// changeListing attaches an app with an MMKV instance of its own, which
// changes what resources/list answers.
func (sr *selfRelay) changeListing(i int) {
	id := fmt.Sprintf("app-%d", i)
	registryOf(sr.srv.link).attach(sessionViaWire, id, "phone", mmkvInfo(id, id), &testFeed{})
}

// waitCount polls, with a deadline, until the counter reaches n.
func (sr *selfRelay) waitCount(t *testing.T, n int) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(time.Millisecond) {
		if got, _ := sr.lists.get(); got >= n {
			return
		}
		if time.Now().After(deadline) {
			got, _ := sr.lists.get()
			t.Fatalf("%d list_changed within 10 s, want %d", got, n)
		}
	}
}

// TestRelayNeverListensToItself: a server that finds itself answering on
// the adapter port, whatever its link's flag says in that instant, never
// relays there: the probe's verdict is "no holder to relay to", no
// subscriptions/listen stream is opened on itself, and a listing change is
// announced once.
func TestRelayNeverListensToItself(t *testing.T) {
	t.Parallel()
	sr := startSelfRelay(t, true)
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(time.Millisecond) {
		sr.relay.holder.mu.Lock()
		known, answers := sr.relay.holder.known, sr.relay.holder.answers
		sr.relay.holder.mu.Unlock()
		if known {
			if answers {
				t.Fatal("the relay judged its own server a holder to relay to")
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the relay never probed the port within 10 s")
		}
	}
	for i := range 3 {
		sr.changeListing(i)
		sr.waitCount(t, i+1)
	}
	// A relayed request is not relayed either: forward serves it here.
	if _, _, _, ok := sr.relay.forward(t.Context(), &callInfo{}, &request{Method: "tools/call"}, 0); ok {
		t.Error("forward relayed a request to this very server")
	}
	sr.stop()
	if n := len(sr.srv.listenerList()); n != 0 {
		t.Errorf("%d subscriptions/listen streams open on the server, want none of its own relay", n)
	}
	if n, _ := sr.lists.get(); n != 3 {
		t.Errorf("3 listing changes: %d list_changed, want 3", n)
	}
}

// TestRelayedNotificationsGoNoFurther defeats the self-recognition, so that
// the relay does listen to its own server: what comes back through it goes
// to the server's clients only, through the announcer, and never back out
// to a listen stream, so each change is heard twice (ours, then the echo)
// and no loop forms.
func TestRelayedNotificationsGoNoFurther(t *testing.T) {
	t.Parallel()
	sr := startSelfRelay(t, false)
	for deadline := time.Now().Add(10 * time.Second); len(sr.srv.listenerList()) == 0; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the relay opened no listen stream within 10 s")
		}
	}
	for i := range 3 {
		sr.changeListing(i)
		sr.waitCount(t, 2*(i+1))
	}
	sr.stop()
	if n, _ := sr.lists.get(); n != 6 {
		t.Errorf("3 listing changes heard through a relay to itself: %d list_changed, want 6 (each, and its echo)", n)
	}
}

// TestRelayedListChangesAreBounded: a holder announcing a change without
// pause is passed on at most once per interval, to the clients only.
func TestRelayedListChangesAreBounded(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const interval = 100 * time.Millisecond
		var mu sync.Mutex
		var sent []any
		a := newListAnnouncer(func() string { return "same" }, func(params any) {
			mu.Lock()
			sent = append(sent, params)
			mu.Unlock()
		}, interval)
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() { defer close(done); a.run(ctx) }()
		start := time.Now()
		for time.Since(start) < 10*interval {
			a.relayedChange()
			time.Sleep(interval / 50)
		}
		time.Sleep(2 * interval)
		synctest.Wait()
		cancel()
		<-done
		mu.Lock()
		defer mu.Unlock()
		if len(sent) < 2 || len(sent) > 11 {
			t.Errorf("a holder announcing every %v for %v: %d list_changed passed on, want one per %v at most (2-11)",
				interval/50, 10*interval, len(sent), interval)
		}
		for _, p := range sent {
			if _, ok := p.(clientsOnly); !ok {
				t.Errorf("a relayed change was passed on as %T, want clientsOnly", p)
			}
		}
	})
}

// TestAppInTheFirstSecond starts the whole program on a real adapter port,
// as a user does, with an app that keeps replacing its adapter from the
// first instant: the relay must find no other process to relay to, and the
// client hears of the one listing change once.
func TestAppInTheFirstSecond(t *testing.T) {
	t.Parallel()
	for start, collisions := 0, 0; start < 3; start++ {
		cfg := testConfig(t)
		cfg.WSPort = freePort(t)
		ts := startServer(t, cfg)
		ts.initialize() // serve answers once its first bind attempt has ended
		// Another test may have taken the port between freePort and the
		// bind: then this server relays to that one, which is not what is
		// tested here, and the start is made again on another port.
		server, _ := healthOf(ts, 1)["server"].(map[string]any)
		if _, relayed := server["relay"]; server["listening"] != true || relayed {
			if collisions++; collisions > 5 {
				t.Fatalf("no free port held after 5 tries; last health: %v", server)
			}
			start--
			continue
		}
		url := fmt.Sprintf("ws://127.0.0.1:%d/", cfg.WSPort)
		var last *sessionTestApp
		for i := range 100 {
			id := fmt.Sprintf("s%d-%d", start, i)
			last = dialSessionApp(t, url, testHandshake(id, hsWith("deviceId", "phone"),
				hsStreams(map[string]any{"name": "mmkv", "active": true, "instances": []any{"default"}})), appAnswers(`{}`))
		}
		last.leave()
		ts.send(`{"jsonrpc":"2.0","id":"end","method":"ping"}`)
		changes := 0
		for {
			var msg struct {
				ID     any    `json:"id"`
				Method string `json:"method"`
			}
			if err := json.Unmarshal([]byte(ts.next()), &msg); err != nil {
				t.Fatal(err)
			}
			if msg.Method == "notifications/resources/list_changed" {
				changes++
			}
			if msg.ID == "end" {
				break
			}
		}
		if changes != 1 {
			t.Errorf("start %d: 100 adapters replacing each other from the first instant, one listing change: %d list_changed, want 1; stderr:\n%s",
				start, changes, ts.stderr.String())
		}
	}
}
