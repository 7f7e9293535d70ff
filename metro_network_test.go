package main

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"
)

// TestMetroNetworkBounds: requests that never end are forgotten past
// maxMetroPendingRequests and counted; an end whose start was not seen
// and events without a requestId make nothing.
func TestMetroNetworkBounds(t *testing.T) {
	t.Parallel()
	var n metroNetwork
	for i := range maxMetroPendingRequests + 10 {
		params := fmt.Sprintf(`{"requestId":"%d","timestamp":1,"request":{"url":"https://x/%d","method":"GET","headers":{}}}`, i, i)
		if _, ok, err := n.handle("Network.requestWillBeSent", []byte(params), testNow, false); ok || err != nil {
			t.Fatalf("start %d: %v, %v", i, ok, err)
		}
	}
	if len(n.pending) != maxMetroPendingRequests || len(n.order) != maxMetroPendingRequests || n.evicted != 10 {
		t.Errorf("pending %d, order %d, evicted %d; want %d, %d, 10", len(n.pending), len(n.order), n.evicted, maxMetroPendingRequests, maxMetroPendingRequests)
	}
	if _, ok, _ := n.handle("Network.loadingFinished", []byte(`{"requestId":"0","timestamp":2}`), testNow, false); ok {
		t.Error("the end of a forgotten request made an event")
	}
	ev, ok, err := n.handle("Network.loadingFinished", []byte(`{"requestId":"521","timestamp":1.5}`), testNow, false)
	if !ok || err != nil {
		t.Fatalf("end of a pending request: %v, %v", ok, err)
	}
	var p map[string]any
	json.Unmarshal(ev.Payload, &p)
	if p["durationMs"] != 500.0 || p["status"] != nil || p["url"] != "https://x/521" {
		t.Errorf("event = %v", p)
	}
	if _, _, err := n.handle("Network.loadingFailed", []byte(`{"timestamp":1}`), testNow, false); err == nil {
		t.Error("an event without a requestId read without an error")
	}
}

// TestMetroNetworkByteBound: a page that starts requests with long URLs,
// headers and bodies (each cut to its own bound: 8192 characters, 32 KB,
// 64 K characters) and never ends them holds at most maxMetroPendingBytes,
// the oldest forgotten and counted; and what is counted is what is held,
// through redirects, responses and ends.
func TestMetroNetworkByteBound(t *testing.T) {
	t.Parallel()
	var n metroNetwork
	url := strings.Repeat("u", 100<<10)   // cut to 8192 characters
	header := strings.Repeat("h", 30<<10) // within the header bound: kept whole
	body := strings.Repeat("b", 100<<10)  // cut to 64 K characters
	held := func() int64 {
		var sum int64
		for _, r := range n.pending {
			size := len(r.method) + len(r.url) + 64
			for k, v := range r.headers {
				size += len(k) + len(v)
			}
			for k, v := range r.responseHeaders {
				size += len(k) + len(v)
			}
			if r.body != nil {
				size += len(*r.body)
			}
			sum += int64(size)
		}
		return sum
	}
	const started = 60
	for i := range started {
		params := fmt.Sprintf(`{"requestId":"%d","timestamp":1,"request":{"url":"https://x/%s","method":"POST","headers":{"X-Big":"%s"},"postData":"%s"}}`, i, url, header, body)
		if _, _, err := n.handle("Network.requestWillBeSent", []byte(params), testNow, false); err != nil {
			t.Fatal(err)
		}
		if i%7 == 0 { // a redirect: the same id again
			n.handle("Network.requestWillBeSent", fmt.Appendf(nil, `{"requestId":"%d","timestamp":1,"request":{"url":"https://y/","method":"GET","headers":{}}}`, i), testNow, false)
		}
		if i%5 == 0 {
			n.handle("Network.responseReceived", fmt.Appendf(nil, `{"requestId":"%d","response":{"status":200,"headers":{"X-Reply":"%s"}}}`, i, header), testNow, false)
		}
		if i%11 == 0 {
			n.handle("Network.loadingFinished", fmt.Appendf(nil, `{"requestId":"%d","timestamp":2}`, i), testNow, false)
		}
		if n.bytes > maxMetroPendingBytes {
			t.Fatalf("after %d requests the pending ones hold %d bytes, over %d", i+1, n.bytes, maxMetroPendingBytes)
		}
		if got := held(); got != n.bytes {
			t.Fatalf("after %d requests %d bytes are counted and %d held", i+1, n.bytes, got)
		}
	}
	if len(n.pending) != len(n.order) || len(n.pending) > maxMetroPendingBytes/(100<<10) {
		t.Errorf("%d pending, %d in order: want equal, and at most %d of about 100 KB each", len(n.pending), len(n.order), maxMetroPendingBytes/(100<<10))
	}
	evicted, finished := n.takeEvicted(), int64(started/11+1)
	if evicted == 0 || evicted+int64(len(n.pending))+finished != started {
		t.Errorf("%d forgotten, %d pending, %d finished of %d started: every request is held, ended or counted", evicted, len(n.pending), finished, started)
	}
	if n.takeEvicted() != 0 {
		t.Error("takeEvicted counted the same requests twice")
	}
}

// TestMetroUnfinishedCountedLive: requests forgotten unfinished show in the
// health check's counters while the page is still attached.
func TestMetroUnfinishedCountedLive(t *testing.T) {
	t.Parallel()
	m := startMetroStandIn(t)
	m.setPages(standInPage("1", "com.example.shop", "Pixel 8", "dev-a", true))
	link, _ := startMetroLink(t, m, nil)
	waitUntil(t, "page 1 attached", func() bool { p, _ := pageStatus(link, "1"); return p.Attached })
	m.pushEach("1", maxMetroPendingRequests+3, func(i int) []byte {
		return fmt.Appendf(nil, `{"method":"Network.requestWillBeSent","params":{"requestId":"r%d","timestamp":1,"request":{"url":"https://x/%d","method":"GET","headers":{}}}}`, i, i)
	})
	waitUntil(t, "forgotten requests counted", func() bool { return link.status().Dropped.UnfinishedRequests == 3 })
	if p, _ := pageStatus(link, "1"); !p.Attached {
		t.Errorf("page = %+v, want still attached", p)
	}
	if h := describeMetro(link.status()); h.Dropped.UnfinishedRequests == 0 {
		t.Errorf("health dropped = %+v, want the forgotten requests named", h.Dropped)
	}
}

// TestReadmeNamesPendingBounds: docs/metro.md names the bounds of unfinished
// Metro requests as the code has them.
func TestReadmeNamesPendingBounds(t *testing.T) {
	t.Parallel()
	readme, err := os.ReadFile("docs/metro.md")
	if err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("past %d per page or past\n%d MiB", maxMetroPendingRequests, maxMetroPendingBytes>>20)
	if !strings.Contains(string(readme), want) {
		t.Errorf("docs/metro.md does not say %q", want)
	}
}
