package main

import (
	"context"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
)

// sentUpdates records resources/updated notifications with their fake time.
type sentUpdates struct {
	mu    sync.Mutex
	start time.Time
	got   []string // "uri@offset"
}

func (s *sentUpdates) notify(method string, params any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	uri := params.(map[string]string)["uri"]
	s.got = append(s.got, uri+"@"+time.Since(s.start).String())
}

func (s *sentUpdates) take() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := s.got
	s.got = nil
	return out
}

func TestUpdatesAreThrottledAndCoalesced(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sent := &sentUpdates{start: time.Now()}
		hub := newResourceHub(config{}, nil, sent.notify)
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		go hub.run(ctx)
		for _, uri := range []string{uriRedux, uriMMKVPrefix + "auth", uriMMKVPrefix + "default"} {
			if err := hub.subscribe(uri); err != nil {
				t.Fatal(err)
			}
		}

		// A burst of redux events: one notification at once, then, for the
		// events after it, one trailing notification when the interval has
		// passed; none lost and none extra.
		hub.eventPushed("redux")
		synctest.Wait()
		if diff := cmp.Diff([]string{uriRedux + "@0s"}, sent.take()); diff != "" {
			t.Errorf("at once (-want +got):\n%s", diff)
		}
		for range 100 {
			hub.eventPushed("redux")
		}
		synctest.Wait()
		if got := sent.take(); len(got) != 0 {
			t.Errorf("notified again within the interval: %v", got)
		}
		time.Sleep(updateInterval)
		synctest.Wait()
		if diff := cmp.Diff([]string{uriRedux + "@250ms"}, sent.take()); diff != "" {
			t.Errorf("trailing (-want +got):\n%s", diff)
		}
		time.Sleep(10 * updateInterval)
		synctest.Wait()
		if got := sent.take(); len(got) != 0 {
			t.Errorf("notifications without events: %v", got)
		}

		// Events spread over a second: never more than 4 per second.
		for range 40 {
			hub.eventPushed("redux")
			time.Sleep(25 * time.Millisecond)
			synctest.Wait()
		}
		time.Sleep(updateInterval)
		synctest.Wait()
		if got := sent.take(); len(got) != 5 { // 1 s of events: at 0, 250, 500, 750 ms, then trailing at 1 s
			t.Errorf("got %d notifications for 1 s of events, want 5: %v", len(got), got)
		}

		// An mmkv event touches every subscribed MMKV instance; other streams none.
		hub.eventPushed("mmkv")
		hub.eventPushed("navigation")
		synctest.Wait()
		got := sent.take()
		want := []string{uriMMKVPrefix + "auth@" + got[0][len(uriMMKVPrefix+"auth@"):], uriMMKVPrefix + "default@" + got[0][len(uriMMKVPrefix+"auth@"):]}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("mmkv event (-want +got):\n%s", diff)
		}

		// After unsubscribe, nothing more.
		hub.unsubscribe(uriRedux)
		time.Sleep(updateInterval)
		hub.eventPushed("redux")
		synctest.Wait()
		if got := sent.take(); len(got) != 0 {
			t.Errorf("notified after unsubscribe: %v", got)
		}
	})
}

func TestParseURI(t *testing.T) {
	for _, tc := range []struct {
		uri, kind, instance string
		ok                  bool
	}{
		{uriSession, uriSession, "", true},
		{uriRedux, uriRedux, "", true},
		{uriNavigation, uriNavigation, "", true},
		{"debug://mmkv/auth", uriMMKVPrefix, "auth", true},
		{"debug://mmkv/a%2Fb%20c", uriMMKVPrefix, "a/b c", true},
		{"debug://mmkv/", "", "", false},
		{"debug://mmkv/a/b", "", "", false},
		{"debug://mmkv/%zz", "", "", false},
		{"debug://redux/state/", "", "", false},
		{"debug://other", "", "", false},
	} {
		kind, instance, ok := parseURI(tc.uri)
		if kind != tc.kind || instance != tc.instance || ok != tc.ok {
			t.Errorf("parseURI(%q) = %q, %q, %v; want %q, %q, %v", tc.uri, kind, instance, ok, tc.kind, tc.instance, tc.ok)
		}
		if tc.ok && tc.instance != "" && mmkvURI(tc.instance) != tc.uri && tc.instance != "a/b c" {
			t.Errorf("mmkvURI(%q) = %q, want %q", tc.instance, mmkvURI(tc.instance), tc.uri)
		}
	}
	if got := mmkvURI("a/b c"); got != "debug://mmkv/a%2Fb%20c" {
		t.Errorf("mmkvURI escapes to %q", got)
	}
}
