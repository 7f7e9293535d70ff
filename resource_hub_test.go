package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
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
		hub := newTestResourceHub(config{}, newTestLink(config{}, nil, nil), sent.notify)
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
		at := got[0][strings.Index(got[0], "@"):]
		want := []string{uriMMKVPrefix + "auth" + at, uriMMKVPrefix + "default" + at}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("mmkv event (-want +got):\n%s", diff)
		}

		// The session moves with every event and with connection changes.
		if err := hub.subscribe(uriSession); err != nil {
			t.Fatal(err)
		}
		time.Sleep(updateInterval)
		hub.eventPushed("navigation")
		synctest.Wait()
		if got := sent.take(); len(got) != 1 || !strings.HasPrefix(got[0], uriSession+"@") {
			t.Errorf("navigation event with the session subscribed: %v", got)
		}
		time.Sleep(updateInterval)
		hub.adapterChanged() // a connect or disconnect changes every resource
		synctest.Wait()
		got = sent.take()
		at = got[0][strings.Index(got[0], "@"):]
		want = []string{uriMMKVPrefix + "auth" + at, uriMMKVPrefix + "default" + at, uriRedux + at, uriSession + at}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("adapter change (-want +got):\n%s", diff)
		}
		hub.unsubscribe(uriSession)

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

// waitNotification reads stdout until a notification with the method
// arrives whose params satisfy match, failing at the harness's deadline.
func (ts *testServer) waitNotification(method string, match func(params map[string]any) bool) map[string]any {
	ts.t.Helper()
	for {
		var msg map[string]any
		line := ts.next()
		if err := json.Unmarshal([]byte(line), &msg); err != nil {
			ts.t.Fatalf("not JSON: %q", line)
		}
		params, _ := msg["params"].(map[string]any)
		if msg["method"] == method && (match == nil || match(params)) {
			return params
		}
	}
}

// notificationWant is one notification waitNotifications waits for.
type notificationWant struct {
	method string
	match  func(params map[string]any) bool // nil: any params
}

// waitNotifications reads stdout until each wanted notification has come,
// in whatever order: the server sends a connect's log message and the
// list change it causes from two goroutines, so waiting for one after the
// other would throw the second away if it came first.
func (ts *testServer) waitNotifications(wants ...notificationWant) {
	ts.t.Helper()
	for len(wants) > 0 {
		var msg map[string]any
		line := ts.next()
		if err := json.Unmarshal([]byte(line), &msg); err != nil {
			ts.t.Fatalf("not JSON: %q", line)
		}
		params, _ := msg["params"].(map[string]any)
		for i, w := range wants {
			if msg["method"] == w.method && (w.match == nil || w.match(params)) {
				wants = slices.Delete(wants, i, i+1)
				break
			}
		}
	}
}

func readResource(t *testing.T, e *e2e, uri string) (text string, rpcErr map[string]any) {
	t.Helper()
	e.nextID++
	reply := e.call(e.nextID, "resources/read", map[string]any{"uri": uri})
	if errObj, ok := reply["error"].(map[string]any); ok {
		return "", errObj
	}
	contents := reply["result"].(map[string]any)["contents"].([]any)
	if len(contents) != 1 {
		t.Fatalf("%s: %d contents, want 1", uri, len(contents))
	}
	c := contents[0].(map[string]any)
	if c["uri"] != uri || c["mimeType"] != "application/json" {
		t.Errorf("%s: content %v", uri, c)
	}
	return c["text"].(string), nil
}

func TestResourcesEndToEnd(t *testing.T) {
	e := startE2E(t, testConfig(t), 12)

	e.nextID++
	list := e.call(e.nextID, "resources/list", nil)["result"].(map[string]any)["resources"].([]any)
	var uris []string
	for _, r := range list {
		uris = append(uris, r.(map[string]any)["uri"].(string))
	}
	want := []string{uriSession, uriSessions, uriRedux, uriNavigation, "debug://mmkv/default", "debug://mmkv/auth"}
	if diff := cmp.Diff(want, uris); diff != "" {
		t.Errorf("resources/list (-want +got):\n%s", diff)
	}

	text, _ := readResource(t, e, uriSession)
	var session struct {
		SessionID  string                     `json:"sessionId"`
		DeviceInfo map[string]json.RawMessage `json:"deviceInfo"`
		Streams    []map[string]any           `json:"streams"`
	}
	if err := json.Unmarshal([]byte(text), &session); err != nil || session.SessionID == "" ||
		!strings.Contains(string(session.DeviceInfo["app"]), "ShopApp") || len(session.Streams) != 5 {
		t.Errorf("session: %s", text)
	}
	for _, uri := range []string{uriRedux, uriNavigation} {
		text, errObj := readResource(t, e, uri)
		if errObj != nil || !json.Valid([]byte(text)) || !strings.HasPrefix(text, "{") {
			t.Errorf("%s: %v %.200s", uri, errObj, text)
		}
	}
	text, _ = readResource(t, e, "debug://mmkv/auth")
	var mmkv struct {
		Instance  string         `json:"instance"`
		Keys      map[string]any `json:"keys"`
		TotalSize float64        `json:"totalSize"`
	}
	if err := json.Unmarshal([]byte(text), &mmkv); err != nil || mmkv.Instance != "auth" || len(mmkv.Keys) == 0 || mmkv.TotalSize <= 0 {
		t.Errorf("mmkv auth: %s", text)
	}
	_, errObj := readResource(t, e, "debug://mmkv/nope")
	if errObj["code"] != float64(-32002) || errObj["data"].(map[string]any)["code"] != codeScopeNotFound ||
		errObj["data"].(map[string]any)["uri"] != "debug://mmkv/nope" {
		t.Errorf("unknown instance: %v", errObj)
	}

	e.nextID++
	completion := e.call(e.nextID, "completion/complete", map[string]any{
		"ref":      map[string]any{"type": "ref/resource", "uri": "debug://mmkv/{instance}"},
		"argument": map[string]any{"name": "instance", "value": "a"}})["result"].(map[string]any)["completion"]
	if diff := cmp.Diff(map[string]any{"values": []any{"auth"}, "total": float64(1), "hasMore": false}, completion); diff != "" {
		t.Errorf("completion (-want +got):\n%s", diff)
	}

	// A pushed event of a subscribed stream brings resources/updated.
	e.nextID++
	e.call(e.nextID, "resources/subscribe", map[string]any{"uri": uriRedux})
	e.app.step()
	e.waitNotification("notifications/resources/updated", func(p map[string]any) bool { return p["uri"] == uriRedux })
}

func TestResourceNotAdvertisedIsInternalError(t *testing.T) {
	cfg := testConfig(t)
	cfg.RequestTimeout = 20 * time.Millisecond // the adapter answers nothing; health checks wait this long for it
	ts := startServer(t, cfg)
	ts.initialize()
	e := &e2e{testServer: ts}
	url := e.waitHealth(func(h healthOut) bool { return h.Server.Listening }).Server.WSURL
	scriptedAdapter(t, url, func(id, method string) []byte { return nil })
	e.waitHealth(func(h healthOut) bool { return h.Connected })
	_, errObj := readResource(t, e, uriNavigation)
	data, _ := errObj["data"].(map[string]any)
	if errObj["code"] != float64(-32603) || data["code"] != codeStreamUnavailable || data["uri"] != uriNavigation {
		t.Errorf("navigation not advertised: %v", errObj)
	}
}

func TestConnectionEventsReachTheClient(t *testing.T) {
	ts := startServer(t, testConfig(t))
	ts.initialize()
	ts.call(1, "logging/setLevel", map[string]any{"level": "info"})
	e := &e2e{testServer: ts}
	url := e.waitHealth(func(h healthOut) bool { return h.Server.Listening }).Server.WSURL

	app := newDemoApp(demoOptions{Seed: 3})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- app.connect(ctx, url) }()
	ts.waitNotification("notifications/message", func(p map[string]any) bool {
		data, _ := p["data"].(map[string]any)
		return p["level"] == "info" && p["logger"] == "devtools-mcp" && data["event"] == "adapter connected"
	})
	ts.waitNotification("notifications/resources/list_changed", nil)

	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	ts.waitNotification("notifications/message", func(p map[string]any) bool {
		data, _ := p["data"].(map[string]any)
		return p["level"] == "warning" && data["event"] == "adapter disconnected"
	})
	// No list_changed follows: the app's session stays the default one,
	// post-mortem, with the same MMKV instances, so the listing is the same
	// (TestListChangedOnlyWhenTheListingChanges).
}

func TestNoLogMessagesBeforeSetLevel(t *testing.T) {
	ts := startServer(t, testConfig(t))
	ts.initialize()
	e := &e2e{testServer: ts}
	url := e.waitHealth(func(h healthOut) bool { return h.Server.Listening }).Server.WSURL
	scriptedAdapter(t, url, func(id, method string) []byte { return nil })
	// list_changed arrives; no notifications/message may come before or with it.
	for {
		var msg map[string]any
		line := ts.next()
		_ = json.Unmarshal([]byte(line), &msg)
		if msg["method"] == "notifications/message" {
			t.Fatalf("log message sent before logging/setLevel: %s", line)
		}
		if msg["method"] == "notifications/resources/list_changed" {
			return
		}
	}
}

// TestNoNotificationsBeforeInitialized connects an adapter after initialize
// is answered but before notifications/initialized: list_changed must wait,
// so that no notification can reach the client before it is ready.
func TestNoNotificationsBeforeInitialized(t *testing.T) {
	cfg := testConfig(t)
	cfg.RequestTimeout = 20 * time.Millisecond // the adapter answers nothing; health checks wait this long for it
	ts := startServer(t, cfg)
	ts.call(0, "initialize", map[string]any{"protocolVersion": "2025-11-25", "capabilities": map[string]any{},
		"clientInfo": map[string]any{"name": "test", "version": "1"}})
	// Every line read from here on must be a reply, never a notification.
	health := func(id int) string {
		ts.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"debug_health_check"}}`, id))
		line := ts.next()
		if !strings.Contains(line, fmt.Sprintf(`"id":%d,`, id)) {
			t.Fatalf("notification before notifications/initialized: %s", line)
		}
		return line
	}
	url := regexp.MustCompile(`ws://127\.0\.0\.1:\d+/`).FindString(health(1))
	scriptedAdapter(t, url, func(id, method string) []byte { return nil })
	for id := 2; !strings.Contains(health(id), `\"connected\":true`); id++ {
		if id > 2000 {
			t.Fatal("the adapter never showed as connected")
		}
	}
}

func TestSubscriptionsAreBounded(t *testing.T) {
	hub := newTestResourceHub(config{}, newTestLink(config{}, nil, nil), func(string, any) {})
	for i := range maxSubscriptions {
		if err := hub.subscribe(fmt.Sprintf("debug://mmkv/i%d", i)); err != nil {
			t.Fatalf("subscription %d: %v", i, err)
		}
	}
	if err := hub.subscribe(uriSession); err != nil {
		if !errors.Is(err, errInvalidParams) || !strings.Contains(err.Error(), "256") {
			t.Errorf("over the bound: %v, want -32602 naming 256", err)
		}
	} else {
		t.Error("subscription over the bound accepted")
	}
	if err := hub.subscribe("debug://mmkv/i0"); err != nil {
		t.Errorf("subscribing again to a held URI: %v", err)
	}
}

// TestLogLevelFilters sets the client level to warning: the info message of
// a connect must not be sent, the warning of the disconnect must.
func TestLogLevelFilters(t *testing.T) {
	ts := startServer(t, testConfig(t))
	ts.initialize()
	ts.call(1, "logging/setLevel", map[string]any{"level": "warning"})
	e := &e2e{testServer: ts}
	url := e.waitHealth(func(h healthOut) bool { return h.Server.Listening }).Server.WSURL
	app := newDemoApp(demoOptions{Seed: 5})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- app.connect(ctx, url) }()
	ts.waitNotification("notifications/resources/list_changed", nil) // the connect happened
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	params := ts.waitNotification("notifications/message", nil)
	if data, _ := params["data"].(map[string]any); params["level"] != "warning" || data["event"] != "adapter disconnected" {
		t.Errorf("first log message %v, want the disconnect's warning (the connect's info is below the level)", params)
	}
}

func TestResourceOverPayloadLimit(t *testing.T) {
	cfg := testConfig(t)
	cfg.MaxPayloadSize, cfg.MaxResultBytes = 1024, 1024 // the demo's Redux state is larger
	e := startE2E(t, cfg, 12)
	_, errObj := readResource(t, e, uriRedux)
	data, _ := errObj["data"].(map[string]any)
	if errObj["code"] != float64(-32603) || data["code"] != codePayloadTooLarge || data["uri"] != uriRedux {
		t.Errorf("redux state over MAX_PAYLOAD_SIZE: %v, want -32603 with data.code PAYLOAD_TOO_LARGE", errObj)
	}
}

// connectInstancesAdapter connects an adapter that advertises the MMKV
// instances given and answers nothing.
func connectInstancesAdapter(t *testing.T, e *e2e, instances []string) {
	t.Helper()
	url := e.waitHealth(func(h healthOut) bool { return h.Server.Listening }).Server.WSURL
	hs, _ := json.Marshal(map[string]any{"type": "handshake", "protocolVersion": 1, "sessionId": "many", "adapterVersion": "1",
		"streams": []map[string]any{{"name": "mmkv", "active": true, "instances": instances}}})
	answeringAdapter(t, url, string(hs), nil)
	e.waitHealth(func(h healthOut) bool { return h.Connected })
}

// TestResourcesListIsPaginated lists an adapter's MMKV instances, as many
// as a handshake may advertise (maxWireInstances, three pages' worth):
// no page may carry more than the page bounds, following nextCursor yields
// every resource once in order, and a cursor the server did not issue is
// -32602.
func TestResourcesListIsPaginated(t *testing.T) {
	cfg := testConfig(t)
	cfg.RequestTimeout = 20 * time.Millisecond // the adapter answers nothing; health checks wait this long for it
	ts := startServer(t, cfg)
	ts.initialize()
	e := &e2e{testServer: ts}
	names := []string{"a/b c", "ünï"}
	for i := range maxWireInstances - len(names) {
		names = append(names, fmt.Sprintf("instance-%04d", i))
	}
	connectInstancesAdapter(t, e, names)

	want := []string{uriSession, uriSessions, uriRedux, uriNavigation}
	for _, name := range names {
		want = append(want, mmkvURI(name))
	}
	var got []string
	cursor, pages := "", 0
	for {
		if pages++; pages > len(want) {
			t.Fatal("the listing never ends")
		}
		var params any
		if cursor != "" {
			params = map[string]any{"cursor": cursor}
		}
		e.nextID++
		reply := e.call(e.nextID, "resources/list", params)
		result, ok := reply["result"].(map[string]any)
		if !ok {
			t.Fatalf("page %d: %v", pages, reply)
		}
		raw, _ := json.Marshal(result)
		list := result["resources"].([]any)
		if len(list) == 0 || len(list) > maxListPage || len(raw) > maxListPageBytes+1024 {
			t.Errorf("page %d: %d resources in %d bytes, want 1 to %d in at most %d", pages, len(list), len(raw), maxListPage, maxListPageBytes)
		}
		for _, r := range list {
			got = append(got, r.(map[string]any)["uri"].(string))
		}
		next, more := result["nextCursor"].(string)
		if !more {
			break
		}
		cursor = next
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("resources over all pages (-want +got):\n%s", diff)
	}
	if isInline("resources/list") {
		t.Error("resources/list runs on the reading goroutine: a page of 256 KiB would hold up every later request")
	}

	for _, bad := range []string{"", "abc", cursor + "x", "bGlzdDow"} {
		e.nextID++
		reply := e.call(e.nextID, "resources/list", map[string]any{"cursor": bad})
		if errObj, _ := reply["error"].(map[string]any); errObj["code"] != float64(-32602) {
			t.Errorf("cursor %q: %v, want -32602", bad, reply)
		}
	}
}

// TestSubscribeToUnknownInstanceAgreesWithRead: with the app connected,
// subscribing to an MMKV instance it does not advertise is refused with the
// error a read of it gets; a known instance is accepted.
func TestSubscribeToUnknownInstanceAgreesWithRead(t *testing.T) {
	e := startE2E(t, testConfig(t), 12)
	const uri = "debug://mmkv/nope"
	_, readErr := readResource(t, e, uri)
	e.nextID++
	subErr, _ := e.call(e.nextID, "resources/subscribe", map[string]any{"uri": uri})["error"].(map[string]any)
	if diff := cmp.Diff(readErr, subErr); diff != "" || readErr["code"] != float64(-32002) {
		t.Errorf("subscribe vs read of %s (-read +subscribe):\n%s", uri, diff)
	}
	e.nextID++
	if reply := e.call(e.nextID, "resources/subscribe", map[string]any{"uri": "debug://mmkv/auth"}); reply["error"] != nil {
		t.Errorf("subscribe to an advertised instance: %v", reply)
	}
}

// FuzzListCursor checks that a position survives its cursor, and that only
// cursors the server issues are accepted: any string accepted is the one
// cursor of its position.
func FuzzListCursor(f *testing.F) {
	for _, seed := range []string{listCursor(1), listCursor(503), listCursor(1 << 40), "", "abc", "bGlzdDow",
		listCursor(3) + "=", "bGlzdDowMw", "bGlzdDorMw", "bGlzdDogMw"} {
		f.Add(seed, 7)
	}
	f.Fuzz(func(t *testing.T, cursor string, n int) {
		if pos, ok := parseListCursor(cursor); ok && (pos < 1 || listCursor(pos) != cursor) {
			t.Errorf("accepted %q as position %d, whose cursor is %q", cursor, pos, listCursor(pos))
		}
		if n < 1 {
			return
		}
		if pos, ok := parseListCursor(listCursor(n)); !ok || pos != n {
			t.Errorf("cursor of %d read back as %d, %v", n, pos, ok)
		}
	})
}
