package main

import (
	"fmt"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"
)

// expoFrontend is the devtoolsFrontendUrl dev-middleware 0.88 writes: the ws
// parameter is a bare path when the list was asked by the server's own
// host, and names the host asked otherwise (getDevToolsFrontendUrl.js).
func expoFrontend(askedHost string, own bool) string {
	ws := "/inspector/debug?device=d1&page=1"
	if !own {
		ws = askedHost + ws
	}
	return "/debugger-frontend/rn_fusebox.html?ws=" + strings.ReplaceAll(strings.ReplaceAll(ws, "?", "%3F"), "&", "%26") +
		"&sources.hide_add_folder=true&unstable_enableNetworkPanel=true"
}

func TestChooseMetroOrigin(t *testing.T) {
	t.Parallel()
	page := func(debuggerHost, frontend string) metroPageInfo {
		return metroPageInfo{ID: "1", DebuggerURL: "ws://" + debuggerHost + "/inspector/debug?device=d1&page=1", DevtoolsFrontendURL: frontend}
	}
	for _, tc := range []struct {
		name, metroURL string
		page           metroPageInfo
		manifest       string
		allowed        []string
		want           metroOrigin
	}{
		{"expo at 127.0.0.1: its own host", "http://127.0.0.1:8081",
			page("127.0.0.1:8081", expoFrontend("127.0.0.1:8081", true)), "", nil,
			metroOrigin{Origin: "http://127.0.0.1:8081"}},
		{"expo at localhost: its own host is 127.0.0.1", "http://localhost:8081",
			page("localhost:8081", expoFrontend("localhost:8081", false)), "", nil,
			metroOrigin{Origin: "http://127.0.0.1:8081"}},
		{"expo at localhost, manifest names 127.0.0.1", "http://localhost:19000",
			page("localhost:19000", expoFrontend("localhost:19000", false)), "127.0.0.1:19000", nil,
			metroOrigin{Origin: "http://127.0.0.1:19000"}},
		{"REACT_NATIVE_PACKAGER_HOSTNAME, allowed", "http://127.0.0.1:8081",
			page("127.0.0.1:8081", expoFrontend("127.0.0.1:8081", false)), "devbox.test:8081", []string{"devbox.test"},
			metroOrigin{Origin: "http://devbox.test:8081"}},
		{"REACT_NATIVE_PACKAGER_HOSTNAME, not allowed: named, not sent", "http://127.0.0.1:8081",
			page("127.0.0.1:8081", expoFrontend("127.0.0.1:8081", false)), "192.168.1.5:8081", nil,
			metroOrigin{Origin: "http://127.0.0.1:8081", Named: "http://192.168.1.5:8081"}},
		{"not allowed at localhost: the loopback rewrite still tried", "http://localhost:8081",
			page("localhost:8081", expoFrontend("localhost:8081", false)), "192.168.1.5:8081", nil,
			metroOrigin{Origin: "http://127.0.0.1:8081", Named: "http://192.168.1.5:8081"}},
		{"manifest host without a port takes METRO_URL's", "http://127.0.0.1:8081",
			page("127.0.0.1:8081", expoFrontend("127.0.0.1:8081", false)), "devbox.test", []string{"devbox.test"},
			metroOrigin{Origin: "http://devbox.test:8081"}},
		{"an absolute frontend URL names the server's own origin", "http://localhost:8081",
			page("localhost:8081", "http://[::1]:8081/debugger-frontend/rn_fusebox.html?ws=%2Finspector%2Fdebug"), "", nil,
			metroOrigin{Origin: "http://[::1]:8081"}},
		{"an older proxy names its own host in the debugger URL", "http://localhost:8081",
			page("127.0.0.1:8081", "devtools://devtools/bundled/js_app.html?ws=127.0.0.1:8081/inspector/debug"), "", nil,
			metroOrigin{Origin: "http://127.0.0.1:8081"}},
		{"plain metro, no frontend URL: METRO_URL's origin", "http://localhost:8081",
			page("10.0.2.2:8081", ""), "", nil,
			metroOrigin{Origin: "http://localhost:8081"}},
		{"a device's host in the debugger URL is not taken without the frontend saying so", "http://127.0.0.1:8081",
			page("10.0.2.2:8081", "devtools://devtools/bundled/js_app.html"), "", nil,
			metroOrigin{Origin: "http://127.0.0.1:8081"}},
		{"https", "https://localhost:8443",
			page("localhost:8443", strings.Replace(expoFrontend("localhost:8443", false), "ws=", "wss=", 1)), "", nil,
			metroOrigin{Origin: "https://127.0.0.1:8443"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := chooseMetroOrigin(tc.metroURL, tc.page, tc.manifest, tc.allowed); got != tc.want {
				t.Errorf("chooseMetroOrigin = %+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestParseManifestHost(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ name, body, want string }{
		{"expo go manifest", `{"id":"x","extra":{"expoClient":{"name":"shop","hostUri":"127.0.0.1:8081"},"expoGo":{"debuggerHost":"127.0.0.1:8081"}}}`, "127.0.0.1:8081"},
		{"debuggerHost only", `{"extra":{"expoGo":{"debuggerHost":"DevBox.test:8081"}}}`, "devbox.test:8081"},
		{"legacy", `{"hostUri":"192.168.1.5:19000"}`, "192.168.1.5:19000"},
		{"ipv6", `{"extra":{"expoClient":{"hostUri":"[::1]:8081"}}}`, "[::1]:8081"},
		{"a path is not a host", `{"extra":{"expoClient":{"hostUri":"evil.test/x"}}}`, ""},
		{"user info is not a host", `{"extra":{"expoClient":{"hostUri":"a@evil.test"}}}`, ""},
		{"mistyped", `{"extra":{"expoClient":{"hostUri":5}}}`, ""},
		{"not an object", `"127.0.0.1:8081"`, ""},
		{"html from the react native cli", `<!doctype html><title>React Native</title>`, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := parseManifestHost([]byte(tc.body)); got != tc.want {
				t.Errorf("parseManifestHost = %q, want %q", got, tc.want)
			}
		})
	}
}

// FuzzParseManifestHost: whatever the body, the host named is "" or a
// plain lower-case host[:port] that chooseMetroOrigin can put in an Origin
// as it is.
func FuzzParseManifestHost(f *testing.F) {
	for _, s := range []string{
		`{"extra":{"expoClient":{"hostUri":"127.0.0.1:8081"},"expoGo":{"debuggerHost":"127.0.0.1:8081"}}}`,
		`{"hostUri":"192.168.1.5:19000"}`, `{"extra":{"expoClient":{"hostUri":"[::1]:8081"}}}`,
		`{"extra":{"expoClient":{"hostUri":"a b:1"}}}`, `[]`, `{`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		h := parseManifestHost(body)
		if h == "" {
			return
		}
		if h != strings.ToLower(h) || strings.ContainsAny(h, "/?#@ \\\t\r\n") {
			t.Fatalf("parseManifestHost = %q: not a plain lower-case host[:port]", h)
		}
		o := chooseMetroOrigin("http://127.0.0.1:8081", metroPageInfo{DevtoolsFrontendURL: "/x?ws=other.test/y"}, h, []string{"*"})
		if !strings.HasPrefix(o.Origin, "http://") || strings.ContainsAny(o.Origin[len("http://"):], "/?#@") {
			t.Fatalf("origin %q from manifest host %q is not scheme://host[:port]", o.Origin, h)
		}
	})
}

// TestExpoOriginThroughLink: against a stand-in that terminates a debugger
// whose Origin is not its own host, as Expo does, the page is attached
// with METRO_URL at 127.0.0.1 and at localhost (the URL `expo start`
// prints); a host the server names that is not loopback is sent only once
// METRO_ALLOWED_HOSTS names it, and until then the health check names the
// refused Origin and the setting.
func TestExpoOriginThroughLink(t *testing.T) {
	t.Parallel()
	// Every debugger socket here must open, refused or not: a dial that
	// outlasts the 3 s limit under load would hold the page for the test's
	// hour-long backoff, so the dial has a minute.
	patientDial := func(l *metroLink) { l.dialTimeout = time.Minute }
	for _, host := range []string{"127.0.0.1", "localhost"} {
		t.Run(host, func(t *testing.T) {
			t.Parallel()
			e := startExpoStandIn(t, "", "1")
			link, _ := startMetroLinkAt(t, "http://"+host+":"+e.port(), nil, patientDial)
			waitUntil(t, "page attached", func() bool { return e.attachedCount() == 1 })
			waitUntil(t, "the link says attached", func() bool {
				p, _ := pageStatus(link, "dev-1-1")
				return p.Attached
			})
			origins, refused, _ := e.seen()
			if refused != 0 || origins[0] != "http://127.0.0.1:"+e.port() {
				t.Errorf("origins %q, %d refused; want http://127.0.0.1:%s, none refused", origins, refused, e.port())
			}
		})
	}
	t.Run("REACT_NATIVE_PACKAGER_HOSTNAME not allowed", func(t *testing.T) {
		t.Parallel()
		e := startExpoStandIn(t, "devbox.test", "1")
		link, _ := startMetroLinkAt(t, "http://127.0.0.1:"+e.port(), nil, patientDial)
		waitUntil(t, "the page held after a refusal", func() bool {
			p, _ := pageStatus(link, "dev-1-1")
			return p.Reason == metroClosedOnAttach
		})
		h := describeMetro(link.status())
		text := h.Pages[0].NotAttached
		for _, want := range []string{"the Origin sent was http://127.0.0.1:" + e.port(), "names itself http://devbox.test:" + e.port(), "add devbox.test to METRO_ALLOWED_HOSTS"} {
			if !strings.Contains(text, want) {
				t.Errorf("health check says %q; want it to contain %q", text, want)
			}
		}
	})
	t.Run("REACT_NATIVE_PACKAGER_HOSTNAME allowed", func(t *testing.T) {
		t.Parallel()
		e := startExpoStandIn(t, "devbox.test", "1")
		link, _ := startMetroLinkAt(t, "http://127.0.0.1:"+e.port(), func(c *config) { c.MetroAllowedHosts = []string{"devbox.test"} }, patientDial)
		// The stand-in notes the Origin once the upgrade is answered, which
		// the link may see first: it is read once the socket is counted.
		waitUntil(t, "page attached", func() bool { return e.attachedCount() == 1 })
		waitUntil(t, "the link says attached", func() bool {
			p, _ := pageStatus(link, "dev-1-1")
			return p.Attached
		})
		if origins, refused, manifests := e.seen(); refused != 0 || origins[0] != "http://devbox.test:"+e.port() || manifests != 1 {
			t.Errorf("origins %q, %d refused, %d manifests; want http://devbox.test:%s, none refused, one manifest", origins, refused, manifests, e.port())
		}
	})
}

// FuzzChooseMetroOrigin: whatever a page list says, the Origin sent is
// METRO_URL's scheme and a bare host[:port] that is METRO_URL's own,
// loopback, or allowed: a dev server never makes the link name a host the
// settings do not allow.
func FuzzChooseMetroOrigin(f *testing.F) {
	f.Add("http://localhost:8081", "ws://localhost:8081/inspector/debug?device=d&page=1", expoFrontend("localhost:8081", false), "127.0.0.1:8081")
	f.Add("http://127.0.0.1:8081", "ws://127.0.0.1:8081/inspector/debug?device=d&page=1", expoFrontend("127.0.0.1:8081", true), "")
	f.Add("http://127.0.0.1:8081", "ws://10.0.2.2:8081/x", "http://evil.test:1/debugger-frontend", "evil.test:80")
	f.Add("http://[::1]:8081", "ws://[::1]:8081/x", "devtools://devtools/bundled/js_app.html?ws=192.168.1.5:8081/x", "devbox.test")
	f.Fuzz(func(t *testing.T, metroURL, debuggerURL, frontend, manifest string) {
		base, err := url.Parse(metroURL)
		if err != nil || (base.Scheme != "http" && base.Scheme != "https") || base.Host == "" || base.User != nil {
			return
		}
		allowed := []string{"devbox.test"}
		o := chooseMetroOrigin(metroURL, metroPageInfo{DebuggerURL: debuggerURL, DevtoolsFrontendURL: frontend}, parseManifestHost(fmt.Appendf(nil, `{"hostUri":%q}`, manifest)), allowed)
		if o.Origin == base.Scheme+"://"+strings.ToLower(base.Host) {
			return
		}
		u, err := url.Parse(o.Origin)
		if err != nil || u.Scheme != base.Scheme || u.Path != "" || u.RawQuery != "" || u.User != nil || u.Fragment != "" {
			t.Fatalf("origin %q is not %s://host[:port]", o.Origin, base.Scheme)
		}
		if h := u.Hostname(); !isLoopbackHost(h) && !slices.Contains(allowed, h) {
			t.Fatalf("origin %q names %q, neither loopback nor allowed (METRO_URL %q, frontend %q, manifest %q)", o.Origin, h, metroURL, frontend, manifest)
		}
	})
}
