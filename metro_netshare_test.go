package main

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
)

func TestMetroNetShareNote(t *testing.T) {
	t.Parallel()
	s := newMetroNetShare()
	frame := []byte(`{"method":"Network.requestWillBeSent","params":{"requestId":"1"}}`)
	if s.note("A", frame) || s.note("A", frame) || s.broadcasting() {
		t.Fatal("a frame on one page's connection, twice, counted as shared")
	}
	if !s.note("B", frame) || !s.broadcasting() {
		t.Fatal("the identical frame on a second page's connection is not shared")
	}
	if s.note("B", []byte(`{"method":"Network.requestWillBeSent","params":{"requestId":"2"}}`)) {
		t.Error("a frame no other page had counted as shared")
	}
	s.reset()
	if s.broadcasting() || s.note("C", frame) {
		t.Error("reset kept what it saw")
	}
	for i := range maxMetroNetFrames + 1 {
		s.note("A", fmt.Appendf(nil, "%d", i))
	}
	if len(s.first) != maxMetroNetFrames || s.order.len() != maxMetroNetFrames {
		t.Errorf("%d digests kept, want the bound %d", len(s.first), maxMetroNetFrames)
	}
}

// netEvent is a Network event's params, as CDP frames carry them.
func netStart(id, url string) string {
	return fmt.Sprintf(`{"requestId":%q,"timestamp":1,"request":{"url":%q,"method":"GET","headers":{}}}`, id, url)
}

func netResponse(id, url string, status int) string {
	return fmt.Sprintf(`{"requestId":%q,"timestamp":1.1,"response":{"url":%q,"status":%d,"headers":{}}}`, id, url, status)
}

func netEnd(id string, ts float64) string {
	return fmt.Sprintf(`{"requestId":%q,"timestamp":%g}`, id, ts)
}

// TestMetroNetworkEqualIDsNeverMerge: two apps' requests that name one id
// on a shared stream stay two requests, each with its own response and
// end, both marked; on a page's own stream a second start under a pending
// id is still the same request (a redirect, or a report with a stack).
func TestMetroNetworkEqualIDsNeverMerge(t *testing.T) {
	t.Parallel()
	type step struct {
		method, params string
		shared         bool
	}
	run := func(t *testing.T, steps []step) []map[string]any {
		t.Helper()
		var n metroNetwork
		var out []map[string]any
		for _, s := range steps {
			ev, ok, err := n.handle(s.method, []byte(s.params), testNow, s.shared)
			if err != nil {
				t.Fatalf("%s: %v", s.method, err)
			}
			if ok {
				var p map[string]any
				json.Unmarshal(ev.Payload, &p)
				out = append(out, p)
			}
		}
		if len(n.pending) != 0 || len(n.order) != 0 {
			t.Errorf("left pending: %v", n.order)
		}
		return out
	}
	t.Run("shared: two apps, one id", func(t *testing.T) {
		got := run(t, []step{
			{"Network.requestWillBeSent", netStart("1", "https://a.test/cart"), true},
			{"Network.requestWillBeSent", netStart("1", "https://b.test/feed"), true},
			{"Network.responseReceived", netResponse("1", "https://b.test/feed", 404), true},
			{"Network.responseReceived", netResponse("1", "https://a.test/cart", 200), true},
			{"Network.loadingFinished", netEnd("1", 1.5), true},
			{"Network.loadingFinished", netEnd("1", 1.75), true},
		})
		var summary []string
		for _, p := range got {
			summary = append(summary, fmt.Sprintf("%v %v %v", p["url"], p["status"], p["attribution"]))
		}
		slices.Sort(summary)
		want := []string{"https://a.test/cart 200 unknown", "https://b.test/feed 404 unknown"}
		if !slices.Equal(summary, want) {
			t.Errorf("events = %q, want %q", summary, want)
		}
	})
	t.Run("shared: a redirect is the same request", func(t *testing.T) {
		got := run(t, []step{
			{"Network.requestWillBeSent", netStart("7", "http://a.test/old"), true},
			{"Network.requestWillBeSent", `{"requestId":"7","timestamp":1.2,"redirectResponse":{"url":"http://a.test/old","status":301},"request":{"url":"https://a.test/new","method":"GET","headers":{}}}`, true},
			{"Network.responseReceived", netResponse("7", "https://a.test/new", 200), true},
			{"Network.loadingFinished", netEnd("7", 2), true},
		})
		if len(got) != 1 || got[0]["url"] != "https://a.test/new" || got[0]["status"] != 200.0 {
			t.Errorf("events = %v, want one request ending at the new URL with 200", got)
		}
	})
	t.Run("a page's own stream: one request", func(t *testing.T) {
		got := run(t, []step{
			{"Network.requestWillBeSent", netStart("3", "https://a.test/x"), false},
			{"Network.requestWillBeSent", netStart("3", "https://a.test/x"), false},
			{"Network.responseReceived", netResponse("3", "https://a.test/x", 200), false},
			{"Network.loadingFinished", netEnd("3", 2), false},
		})
		if len(got) != 1 || got[0]["attribution"] != nil {
			t.Errorf("events = %v, want one request, not marked", got)
		}
	})
	t.Run("shared: a response that fits no request is not taken", func(t *testing.T) {
		got := run(t, []step{
			{"Network.requestWillBeSent", netStart("1", "https://a.test/cart"), true},
			{"Network.requestWillBeSent", netStart("1", "https://b.test/feed"), true},
			{"Network.responseReceived", netResponse("1", "https://c.test/other", 500), true},
			{"Network.loadingFailed", `{"requestId":"1","timestamp":2,"errorText":"offline"}`, true},
			{"Network.loadingFailed", `{"requestId":"1","timestamp":2,"errorText":"offline"}`, true},
		})
		for _, p := range got {
			if p["status"] != nil {
				t.Errorf("a request took a response for another URL: %v", p)
			}
		}
		if len(got) != 2 {
			t.Errorf("%d events, want 2", len(got))
		}
	})
}

// TestExpoNetworkBroadcast: Expo's dev server sends each network frame to
// every page's connection. With two apps attached, each session holds both
// apps' requests, both marked as not attributable, the two requests named
// "1" stay two, and the health check says why; with one app attached,
// nothing is marked.
func TestExpoNetworkBroadcast(t *testing.T) {
	t.Parallel()
	frame := func(method, params string) string {
		return fmt.Sprintf(`{"method":%q,"params":%s}`, method, params)
	}
	t.Run("two apps", func(t *testing.T) {
		t.Parallel()
		e := startExpoStandIn(t, "", "1", "2")
		link, reg := startMetroLinkAt(t, "http://127.0.0.1:"+e.port(), nil)
		waitUntil(t, "both pages attached", func() bool {
			st := link.status()
			return len(st.Pages) == 2 && st.Pages[0].Attached && st.Pages[1].Attached && e.attachedCount() == 2
		})
		// The first frame shows the broadcast; the rest come as a request's
		// frames do, after it.
		e.broadcast(frame("Network.requestWillBeSent", netStart("1", "https://a.test/cart")))
		waitUntil(t, "the broadcast seen", link.netShare.broadcasting)
		e.broadcast(
			frame("Network.requestWillBeSent", netStart("1", "https://b.test/feed")),
			frame("Network.responseReceived", netResponse("1", "https://a.test/cart", 200)),
			frame("Network.responseReceived", netResponse("1", "https://b.test/feed", 404)),
			frame("Network.loadingFinished", netEnd("1", 1.5)),
			frame("Network.loadingFinished", netEnd("1", 1.75)),
		)
		for _, session := range []string{"metro:com.example.1@iPhone 1", "metro:com.example.2@iPhone 2"} {
			waitUntil(t, session+": two requests", func() bool {
				s, _ := reg.find(session)
				return s != nil && s.latestSeq("network") == 2
			})
			var got []string
			for _, ev := range sessionEvents(t, reg, session, "network") {
				p := ev["payload"].(map[string]any)
				got = append(got, fmt.Sprintf("%v %v %v", p["url"], p["status"], p["attribution"]))
				if sum := summarizeRequest([]byte(mustJSON(t, ev))); sum.Attribution != "unknown" {
					t.Errorf("%s: debug_get_network's line %+v is not marked", session, sum)
				}
			}
			slices.Sort(got)
			if want := []string{"https://a.test/cart 200 unknown", "https://b.test/feed 404 unknown"}; !slices.Equal(got, want) {
				t.Errorf("%s: requests %q, want %q", session, got, want)
			}
			out, failed := callToolDirect(t, newToolSet(adapterQueries{cfg: testConfig(t), sessions: reg}, newRedactor(testConfig(t))), "debug_get_network", map[string]any{"session": session})
			var list struct {
				Requests    []requestSummary
				Attribution string
			}
			if json.Unmarshal(out, &list); failed || len(list.Requests) != 2 || list.Requests[0].Attribution != "unknown" ||
				!strings.Contains(list.Attribution, "another app's") {
				t.Errorf("%s: debug_get_network = %s, want both lines marked and a note saying why", session, out)
			}
		}
		if h := describeMetro(link.status()); !strings.Contains(h.Network, "every attached page") {
			t.Errorf("health check network = %q, want why requests may be another app's", h.Network)
		}
	})
	t.Run("one app", func(t *testing.T) {
		t.Parallel()
		e := startExpoStandIn(t, "", "1")
		link, reg := startMetroLinkAt(t, "http://127.0.0.1:"+e.port(), nil)
		waitUntil(t, "the page attached", func() bool { p, _ := pageStatus(link, "dev-1-1"); return p.Attached && e.attachedCount() == 1 })
		e.broadcast(
			frame("Network.requestWillBeSent", netStart("1", "https://a.test/cart")),
			frame("Network.responseReceived", netResponse("1", "https://a.test/cart", 200)),
			frame("Network.loadingFinished", netEnd("1", 1.5)),
		)
		session := "metro:com.example.1@iPhone 1"
		waitUntil(t, "one request", func() bool { s, _ := reg.find(session); return s != nil && s.latestSeq("network") == 1 })
		p := sessionEvents(t, reg, session, "network")[0]["payload"].(map[string]any)
		if p["attribution"] != nil {
			t.Errorf("the only app's request is marked: %v", p)
		}
		if h := describeMetro(link.status()); h.Network != "" {
			t.Errorf("health check network = %q with one app", h.Network)
		}
	})
}

// BenchmarkMetroNetShareNote: what spotting a shared frame costs a
// network frame (a typical requestWillBeSent, about 400 bytes).
func BenchmarkMetroNetShareNote(b *testing.B) {
	s := newMetroNetShare()
	frames := make([][]byte, 8192)
	for i := range frames {
		frames[i] = fmt.Appendf(nil, `{"method":"Network.requestWillBeSent","params":%s}`, netStart(fmt.Sprint(i), "https://api.example.com/cart?user=42&page=3"))
	}
	b.ResetTimer()
	for i := range b.N {
		s.note("A", frames[i%len(frames)])
	}
}
