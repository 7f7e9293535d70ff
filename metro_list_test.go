package main

import (
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/coder/websocket"
	"github.com/google/go-cmp/cmp"
)

func TestParseMetroList(t *testing.T) {
	t.Parallel()
	body, _ := json.Marshal([]any{
		standInPage("1", "com.example.shop", "Pixel 8", "dev-a", true),
		map[string]any{"id": "2", "title": "Hermes", "webSocketDebuggerUrl": "ws://x/inspector/debug?page=2"}, // no reactNative
		map[string]any{"id": 3, "reactNative": map[string]any{}},                                              // mistyped
		"not an object",
		func() map[string]any {
			p := standInPage("5", "com.example.odd", "Pixel 8", "dev-c", true)
			p["description"] = 42
			return p
		}(),
		standInPage("4", "com.example.admin", "iPad", "dev-b", false),
	})
	got, err := parseMetroList(body)
	if err != nil {
		t.Fatal(err)
	}
	want := []metroPageInfo{
		{ID: "1", Title: "com.example.shop (Pixel 8)", AppID: "com.example.shop", DeviceName: "Pixel 8",
			LogicalDeviceID: "dev-a", DebuggerURL: "ws://10.0.2.2:8081/inspector/debug?device=dev-a&page=1", DevtoolsFrontendURL: "devtools://devtools/bundled/js_app.html", MultipleDebuggers: true},
		{ID: "4", Title: "com.example.admin (iPad)", AppID: "com.example.admin", DeviceName: "iPad",
			LogicalDeviceID: "dev-b", DebuggerURL: "ws://10.0.2.2:8081/inspector/debug?device=dev-b&page=4", DevtoolsFrontendURL: "devtools://devtools/bundled/js_app.html"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("pages (-want +got):\n%s", diff)
	}
	for _, garbage := range []string{`{"pages":[]}`, `[`, `null`, ``, `<html>`} {
		if _, err := parseMetroList([]byte(garbage)); !errors.Is(err, errMetroList) {
			t.Errorf("parseMetroList(%q) = %v, want errMetroList", garbage, err)
		}
	}
}

// FuzzParseMetroList: any body is a list of pages, each with an id and a
// debugger URL, or an errMetroList; never more than maxMetroPages.
func FuzzParseMetroList(f *testing.F) {
	seed, _ := json.Marshal([]any{standInPage("1", "com.example.shop", "Pixel 8", "dev-a", true)})
	f.Add(seed)
	f.Add([]byte(`[{"id":"1","webSocketDebuggerUrl":"ws://h/p","reactNative":null}]`))
	f.Add([]byte(`[]`))
	f.Fuzz(func(t *testing.T, body []byte) {
		pages, err := parseMetroList(body)
		if err != nil {
			if !errors.Is(err, errMetroList) {
				t.Fatalf("error %v is not an errMetroList", err)
			}
			return
		}
		if len(pages) > maxMetroPages {
			t.Fatalf("%d pages, over %d", len(pages), maxMetroPages)
		}
		for _, p := range pages {
			if p.ID == "" || p.DebuggerURL == "" {
				t.Fatalf("page %+v lacks an id or a debugger URL", p)
			}
			metroDialURL(p.DebuggerURL, "http://127.0.0.1:8081")
		}
	})
}

func TestMetroDialURL(t *testing.T) {
	t.Parallel()
	tests := []struct{ debugger, metro, want string }{
		{"ws://10.0.2.2:8081/inspector/debug?device=d&page=1", "http://127.0.0.1:8081", "ws://127.0.0.1:8081/inspector/debug?device=d&page=1"},
		{"ws://192.168.1.20:19000/inspector/debug?page=2", "https://metro.test:443", "wss://metro.test:443/inspector/debug?page=2"},
	}
	for _, tt := range tests {
		if got, err := metroDialURL(tt.debugger, tt.metro); err != nil || got != tt.want {
			t.Errorf("metroDialURL(%q, %q) = %q, %v; want %q", tt.debugger, tt.metro, got, err, tt.want)
		}
	}
	if _, err := metroDialURL("http://x/y", "http://127.0.0.1:8081"); !errors.Is(err, errMetroList) {
		t.Errorf("an http debugger URL: %v, want errMetroList", err)
	}
}

// TestMetroLinkFollowsNoRedirect: a page list or debugger socket that
// answers with a redirect does not take the link to another host, which
// would pass METRO_URL's loopback-or-allowed rule by.
func TestMetroLinkFollowsNoRedirect(t *testing.T) {
	t.Parallel()
	var elsewhere atomic.Int32
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		elsewhere.Add(1)
		w.Write([]byte(`[]`))
	}))
	defer other.Close()
	metro := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, other.URL+r.URL.Path, http.StatusFound)
	}))
	defer metro.Close()
	cfg := testConfig(t)
	cfg.MetroURL = metro.URL
	link := newMetroLink(cfg, slog.New(slog.DiscardHandler), nil)
	if _, err := link.fetchList(t.Context()); err == nil {
		t.Error("a redirected page list was read, want an error")
	}
	ws, _, err := websocket.Dial(t.Context(), "ws"+strings.TrimPrefix(metro.URL, "http")+"/inspector/debug", &websocket.DialOptions{HTTPClient: link.client})
	if err == nil {
		ws.CloseNow()
		t.Error("a redirected debugger socket was opened, want an error")
	}
	if n := elsewhere.Load(); n != 0 {
		t.Errorf("the other host was reached %d times, want never", n)
	}
}
