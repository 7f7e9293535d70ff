package main

import (
	"encoding/json"
	"slices"
	"testing"
)

func TestSameApp(t *testing.T) {
	t.Parallel()
	view := func(via, app, device string) sessionView {
		return sessionView{Via: via, Info: &adapterInfo{App: json.RawMessage(app), Device: json.RawMessage(device)}}
	}
	metro := view(sessionViaMetro, `{"name":"com.example.shop","bundleId":"com.example.shop","title":"Shop Dev"}`, `{"name":"iPhone 15 Pro"}`)
	tests := []struct {
		name  string
		other sessionView
		want  bool
	}{
		{"bundle id equals the app id", view(sessionViaWire, `{"name":"Storefront","bundleId":"com.example.shop"}`, `{}`), true},
		{"another bundle id, whatever the name", view(sessionViaWire, `{"name":"shop","bundleId":"com.example.admin"}`, `{}`), false},
		{"name is the app id's last part", view(sessionViaReactotron, `{"name":"Shop"}`, `{"model":"iPhone"}`), true},
		{"name is the page title", view(sessionViaReactotron, `{"name":"shop-dev"}`, `{}`), true},
		{"name matches, device does not", view(sessionViaReactotron, `{"name":"Shop"}`, `{"model":"Pixel 8"}`), false},
		{"another name", view(sessionViaReactotron, `{"name":"React Native App"}`, `{}`), false},
		{"no name", view(sessionViaReactotron, `{}`, `{}`), false},
		{"two Metro sessions are two apps", view(sessionViaMetro, `{"bundleId":"com.example.shop"}`, `{}`), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := sameApp(metro, tt.other); got != tt.want {
				t.Errorf("sameApp(metro, %s) = %t, want %t", tt.other.Info.App, got, tt.want)
			}
			if got := sameApp(tt.other, metro); got != tt.want {
				t.Errorf("sameApp is not symmetric for %s", tt.other.Info.App)
			}
		})
	}
	if sameApp(view(sessionViaWire, `{"name":"Shop"}`, `{}`), view(sessionViaReactotron, `{"name":"Shop"}`, `{}`)) {
		t.Error("a wire and a Reactotron session are one app: only a Metro session pairs with another link")
	}
}

// TestOneAppTwoLinks: the same app through an adapter (state) and through
// Metro (console): calls without `session` go to the session with the
// stream they read, and the health check lists the two together.
func TestOneAppTwoLinks(t *testing.T) {
	t.Parallel()
	e, m := startMetroE2E(t)
	metroAttached(e)
	url := e.waitHealth(func(h healthOut) bool { return h.Server.Listening }).Server.WSURL
	hs := appHandshake("shop-1", "phone", "Storefront")
	hs["app"] = map[string]any{"name": "Storefront", "bundleId": "com.example.shop"}
	dialSessionApp(t, url, hs, appAnswers(`{"cart":{"items":2}}`)) // now the default session: connected last
	m.push("1", consoleFrame("from Metro"))
	e.waitEventsOf("console", "log", 1) // no session named: the one with a console stream

	logs := e.toolJSON("debug_get_logs", nil)
	if who := logs["session"].(map[string]any)["id"]; who != standInSession {
		t.Errorf("debug_get_logs answered by %v, want the Metro session", who)
	}
	state := e.toolJSON("debug_get_state_path", map[string]any{"path": "cart.items"})
	if state["value"] != 2.0 || state["session"].(map[string]any)["id"] != "shop-1" {
		t.Errorf("debug_get_state_path = %v, want 2 from the adapter's session", state)
	}

	h := e.sessionsHealth()
	var ids []string
	for _, s := range h.Sessions {
		ids = append(ids, s.ID)
	}
	if !slices.Equal(ids, []string{"shop-1", standInSession}) {
		t.Fatalf("sessions = %v, want the adapter's then Metro's, together", ids)
	}
	if !slices.Equal(h.Sessions[0].SameAppAs, []string{standInSession}) || !slices.Equal(h.Sessions[1].SameAppAs, []string{"shop-1"}) {
		t.Errorf("sameAppAs = %v / %v, want each naming the other", h.Sessions[0].SameAppAs, h.Sessions[1].SameAppAs)
	}
}
