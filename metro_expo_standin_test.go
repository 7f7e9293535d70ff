package main

// metro_expo_standin_test.go is Expo's dev server (`expo start`, SDK 58) as
// the tests need it, where it differs from plain Metro:
//   - its own URL is 127.0.0.1:PORT (it rewrites localhost), or the host of
//     REACT_NATIVE_PACKAGER_HOSTNAME when one is set (own);
//   - /json/list is dev-middleware's: webSocketDebuggerUrl echoes the host
//     asked, devtoolsFrontendUrl's ws parameter names it only when it is not
//     the server's own (getDevToolsFrontendUrl.js);
//   - the manifest (GET / with expo-platform) names the server's host;
//   - a debugger socket whose Origin host is not its own is terminated right
//     after the upgrade (createDebugMiddleware.js, isMatchingOrigin);
//   - network events reported on /inspector/network go to every debugger
//     socket of every page (createNetworkWebsocket): broadcast.

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"
)

type expoStandIn struct {
	t   *testing.T
	srv *httptest.Server

	mu        sync.Mutex
	own       string   // host:port of the dev server's own URL
	pages     []string // page ids; app "com.example.<id>", device "iPhone <id>"
	origins   []string // the Origin of every debugger upgrade
	refused   int      // upgrades terminated for their Origin
	manifests int      // manifest requests
	sockets   map[string][]*websocket.Conn
	wg        sync.WaitGroup
}

// startExpoStandIn starts the stand-in; own is the host of its URL, ""
// for 127.0.0.1.
func startExpoStandIn(t *testing.T, ownHost string, pages ...string) *expoStandIn {
	t.Helper()
	e := &expoStandIn{t: t, pages: pages, sockets: map[string][]*websocket.Conn{}}
	mux := http.NewServeMux()
	mux.HandleFunc("/json/list", e.serveList)
	mux.HandleFunc("/inspector/debug", e.serveDebugger)
	mux.HandleFunc("/{$}", e.serveManifest)
	e.srv = httptest.NewServer(mux)
	_, port, _ := net.SplitHostPort(e.srv.Listener.Addr().String())
	e.own = net.JoinHostPort("127.0.0.1", port)
	if ownHost != "" {
		e.own = net.JoinHostPort(ownHost, port)
	}
	t.Cleanup(func() {
		e.mu.Lock()
		for _, list := range e.sockets {
			for _, ws := range list {
				ws.CloseNow()
			}
		}
		e.mu.Unlock()
		e.srv.CloseClientConnections()
		e.srv.Close()
		e.wg.Wait()
	})
	return e
}

func (e *expoStandIn) port() string {
	_, port, _ := net.SplitHostPort(e.srv.Listener.Addr().String())
	return port
}

func (e *expoStandIn) serveList(w http.ResponseWriter, r *http.Request) {
	e.mu.Lock()
	own, pages := e.own, append([]string(nil), e.pages...)
	e.mu.Unlock()
	list := []map[string]any{}
	for _, id := range pages {
		path := "/inspector/debug?device=dev-" + id + "&page=" + id
		ws := path
		if r.Host != own {
			ws = r.Host + path
		}
		q := url.Values{"ws": {ws}, "sources.hide_add_folder": {"true"}, "unstable_enableNetworkPanel": {"true"}}
		list = append(list, map[string]any{
			"id": "dev-" + id + "-" + id, "title": "app " + id, "appId": "com.example." + id, "description": "com.example." + id,
			"deviceName": "iPhone " + id, "type": "node",
			"webSocketDebuggerUrl": "ws://" + r.Host + path,
			"devtoolsFrontendUrl":  "/debugger-frontend/rn_fusebox.html?" + q.Encode(),
			"reactNative": map[string]any{"logicalDeviceId": "dev-" + id,
				"capabilities": map[string]any{"nativePageReloads": true, "supportsMultipleDebuggers": true}},
		})
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(list)
}

// serveManifest answers as ExpoGoManifestHandlerMiddleware: the host is
// the override when set, else the host asked with localhost rewritten.
func (e *expoStandIn) serveManifest(w http.ResponseWriter, r *http.Request) {
	if r.Header.Get("Expo-Platform") == "" {
		http.NotFound(w, r)
		return
	}
	e.mu.Lock()
	e.manifests++
	own := e.own
	e.mu.Unlock()
	host := own
	if h, _, _ := net.SplitHostPort(own); h == "127.0.0.1" {
		asked, port, _ := net.SplitHostPort(r.Host)
		if asked == "localhost" {
			asked = "127.0.0.1"
		}
		host = net.JoinHostPort(asked, port)
	}
	fmt.Fprintf(w, `{"id":"m","runtimeVersion":"exposdk:58.0.0","extra":{"expoClient":{"name":"shop","hostUri":%q},"expoGo":{"debuggerHost":%q}}}`, host, host)
}

func (e *expoStandIn) serveDebugger(w http.ResponseWriter, r *http.Request) {
	origin := r.Header.Get("Origin")
	page := r.URL.Query().Get("page")
	// The Origin is Expo's to check, below, not the library's same-host rule.
	ws, err := websocket.Accept(w, r, &websocket.AcceptOptions{InsecureSkipVerify: true})
	if err != nil {
		return
	}
	e.mu.Lock()
	e.origins = append(e.origins, origin)
	u, perr := url.Parse(origin)
	refuse := origin != "" && (perr != nil || u.Host != e.own)
	if refuse {
		e.refused++
	} else {
		e.sockets[page] = append(e.sockets[page], ws)
	}
	e.wg.Add(1)
	e.mu.Unlock()
	defer e.wg.Done()
	if refuse {
		ws.CloseNow() // socket.terminate(): no close frame
		return
	}
	for {
		_, data, err := ws.Read(context.Background())
		if err != nil {
			return
		}
		var req struct {
			ID int64 `json:"id"`
		}
		json.Unmarshal(data, &req)
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		err = ws.Write(ctx, websocket.MessageText, fmt.Appendf(nil, `{"id":%d,"result":{}}`, req.ID))
		cancel()
		if err != nil {
			return
		}
	}
}

// broadcast sends frames as Expo's /inspector/network does: each frame to
// every debugger socket of every page, in turn.
func (e *expoStandIn) broadcast(frames ...string) {
	e.t.Helper()
	e.mu.Lock()
	var sockets []*websocket.Conn
	for _, list := range e.sockets {
		sockets = append(sockets, list...)
	}
	e.mu.Unlock()
	for _, f := range frames {
		for _, ws := range sockets {
			if err := ws.Write(context.Background(), websocket.MessageText, []byte(f)); err != nil {
				e.t.Fatalf("broadcast: %v", err)
			}
		}
	}
}

// sendTo sends frames to page's debugger sockets only, as a page's own
// (Fusebox) network events go.
func (e *expoStandIn) sendTo(page string, frames ...string) {
	e.t.Helper()
	e.mu.Lock()
	sockets := append([]*websocket.Conn(nil), e.sockets[page]...)
	e.mu.Unlock()
	for _, f := range frames {
		for _, ws := range sockets {
			if err := ws.Write(context.Background(), websocket.MessageText, []byte(f)); err != nil {
				e.t.Fatalf("send to %s: %v", page, err)
			}
		}
	}
}

func (e *expoStandIn) attachedCount() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	n := 0
	for _, list := range e.sockets {
		n += len(list)
	}
	return n
}

func (e *expoStandIn) seen() (origins []string, refused, manifests int) {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]string(nil), e.origins...), e.refused, e.manifests
}
