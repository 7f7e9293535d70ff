package main

// metro_origin.go decides the Origin the Metro link sends on a page's
// debugger socket. Two checks read it:
//
//   - React Native's inspector proxy (dev-middleware 0.85 and later)
//     answers 401 unless the Origin is the dev server's own origin or names
//     localhost, 127.0.0.1 or 0.0.0.0.
//   - Expo's dev server (@expo/cli, isMatchingOrigin in utils/net.js)
//     terminates the socket unless the Origin's host:port is exactly the
//     host of its own URL: 127.0.0.1:PORT on a laptop (it rewrites
//     localhost to 127.0.0.1), else the host of REACT_NATIVE_PACKAGER_HOSTNAME
//     or of EXPO_PACKAGER_PROXY_URL.
//
// So METRO_URL's origin works for plain Metro and for Expo reached as
// 127.0.0.1, and is refused by Expo reached as localhost (the URL `expo
// start` prints) or told another host name. The dev server's own host is
// read from what it says about itself:
//
//   - The page list's devtoolsFrontendUrl: dev-middleware writes the
//     frontend's ws parameter as a bare path when the list was asked by the
//     server's own host, and with a host otherwise; older versions write
//     the URL absolute, on the server's own origin.
//   - The page list's webSocketDebuggerUrl: current versions echo the host
//     the list was asked by; older ones name the server's own.
//   - Expo's manifest (GET / with expo-platform), whose hostUri is built
//     the way Expo builds its own URL: REACT_NATIVE_PACKAGER_HOSTNAME or the
//     proxy URL when set, else the host asked, localhost rewritten to
//     127.0.0.1. It is asked as learnManifestHost says.
//
// A host the dev server names is sent only when it is loopback or in
// METRO_ALLOWED_HOSTS, the rule METRO_URL itself follows.

import (
	"cmp"
	"context"
	"encoding/json"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
)

// maxMetroManifestBytes bounds the manifest read for its hostUri.
const maxMetroManifestBytes = 1 << 20

// metroOrigin is the Origin chosen for a page's debugger socket.
type metroOrigin struct {
	Origin string // sent as the Origin header
	// Named is the dev server's own origin as it names it, when that is
	// not Origin because its host is neither loopback nor allowed.
	Named string
}

// metroFrontendHost reads a page's devtoolsFrontendUrl (file header): own
// is the dev server's origin when the URL is absolute on it; other reports
// a ws (or wss) parameter naming a host.
func metroFrontendHost(frontendURL string) (own string, other bool) {
	u, err := url.Parse(frontendURL)
	if err != nil {
		return "", false
	}
	if (u.Scheme == "http" || u.Scheme == "https") && u.Host != "" {
		return u.Scheme + "://" + strings.ToLower(u.Host), false
	}
	q := u.Query()
	ws := cmp.Or(q.Get("ws"), q.Get("wss"))
	return "", ws != "" && !strings.HasPrefix(ws, "/")
}

// chooseMetroOrigin is the Origin to send for page, reached through
// metroURL (scheme://host:port), given the host:port Expo's manifest names
// ("" when not asked or not Expo) and the hosts allowed besides loopback.
func chooseMetroOrigin(metroURL string, page metroPageInfo, manifestHost string, allowed []string) metroOrigin {
	base, err := url.Parse(metroURL)
	if err != nil || base.Host == "" {
		return metroOrigin{Origin: metroURL}
	}
	asked := strings.ToLower(base.Host)
	choice := metroOrigin{Origin: base.Scheme + "://" + asked}
	var candidates []string // the dev server's own host:port, best first
	own, other := metroFrontendHost(page.DevtoolsFrontendURL)
	if u, err := url.Parse(own); own != "" && err == nil && u.Host != asked {
		candidates = append(candidates, u.Host)
	}
	if u, err := url.Parse(page.DebuggerURL); err == nil && u.Host != "" && !strings.EqualFold(u.Host, asked) && own == "" && other {
		candidates = append(candidates, strings.ToLower(u.Host))
	}
	if other {
		if manifestHost != "" {
			candidates = append(candidates, withPort(manifestHost, base.Port()))
		}
		if h := base.Hostname(); isLoopbackHost(h) && h != "127.0.0.1" {
			candidates = append(candidates, net.JoinHostPort("127.0.0.1", base.Port())) // Expo's rewrite of localhost
		}
	}
	for _, c := range candidates {
		host, _, err := net.SplitHostPort(c)
		if err != nil {
			host = c
		}
		host = strings.Trim(host, "[]")
		if isLoopbackHost(host) || slices.Contains(allowed, strings.ToLower(host)) {
			choice.Origin = base.Scheme + "://" + c
			return choice
		}
		choice.Named = cmp.Or(choice.Named, base.Scheme+"://"+c)
	}
	return choice
}

func withPort(hostPort, port string) string {
	if _, _, err := net.SplitHostPort(hostPort); err == nil || port == "" {
		return strings.ToLower(hostPort)
	}
	return net.JoinHostPort(strings.Trim(strings.ToLower(hostPort), "[]"), port)
}

// fetchManifestHost asks an Expo dev server for its manifest and returns
// the host:port it names (parseManifestHost), "" when it is not Expo's.
func fetchManifestHost(ctx context.Context, client *http.Client, metroURL string) string {
	body, status, err := metroGet(ctx, client, metroURL+"/", http.Header{
		"Expo-Platform": {"ios"}, "Accept": {"application/expo+json,application/json"}}, maxMetroManifestBytes)
	if err != nil || status != http.StatusOK || len(body) > maxMetroManifestBytes {
		return ""
	}
	return parseManifestHost(body)
}

// parseManifestHost reads the host:port an Expo manifest names, "" when
// it names none that is a plain host[:port].
func parseManifestHost(body []byte) string {
	var m struct {
		Extra struct {
			ExpoClient struct {
				HostURI string `json:"hostUri"`
			} `json:"expoClient"`
			ExpoGo struct {
				DebuggerHost string `json:"debuggerHost"`
			} `json:"expoGo"`
		} `json:"extra"`
		HostURI string `json:"hostUri"` // legacy manifests
	}
	if rawKind(body) != "object" || json.Unmarshal(body, &m) != nil {
		return ""
	}
	for _, h := range []string{m.Extra.ExpoClient.HostURI, m.Extra.ExpoGo.DebuggerHost, m.HostURI} {
		if h == "" || len(h) > 300 {
			continue
		}
		u, err := url.Parse("http://" + h)
		if err != nil || u.Host != h || u.Hostname() == "" || (net.ParseIP(u.Hostname()) == nil && !validHostName(u.Hostname())) {
			continue
		}
		return strings.ToLower(h)
	}
	return ""
}
