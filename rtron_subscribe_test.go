package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"slices"
	"sort"
	"testing"
	"time"
)

func TestRouteChange(t *testing.T) {
	for _, c := range []struct {
		path            string
		desktop, ours   []string
		toDesktop, toUs bool
	}{
		{"cart", nil, []string{"cart"}, false, true},                          // ours alone
		{"cart", []string{"cart"}, []string{"cart"}, true, true},              // both asked
		{"user.name", []string{"user.name"}, []string{"cart"}, true, false},   // the desktop's alone
		{"prefs", []string{"user.name"}, []string{"cart"}, true, true},        // nobody's: pushed unasked
		{"cart", nil, nil, true, true},                                        // nothing subscribed
		{"", []string{"*"}, []string{"cart"}, true, false},                    // reactotron-redux's whole state for "*"
		{"", []string{""}, []string{"cart"}, true, false},                     // and for ""
		{"", []string{"cart"}, []string{"auth"}, true, true},                  // nobody asked for the whole state
		{"cart", []string{""}, []string{"cart"}, true, true},                  // a desktop asking for everything gets every entry
		{"x", []string{"*"}, []string{"cart"}, true, true},                    // a store a "*" made the plugin list
		{"auth.user", []string{"auth.*"}, []string{"cart"}, true, false},      // one key of a starred path
		{"auth.a.b", []string{"auth.*"}, []string{"cart"}, true, false},       // and deeper
		{"auth", []string{"auth.*"}, []string{"cart"}, true, false},           // a starred path holding nothing
		{"author", []string{"auth.*"}, []string{"author"}, false, true},       // not under auth
		{"cart.items", []string{".*"}, []string{"cart.items"}, false, true},   // ".*" names no parent
		{"auth.token", []string{"auth.token"}, []string{"auth"}, true, false}, // a store's member is not the store
		{"user.name", []string{"user"}, []string{"user.name"}, false, true},   // nor the other way round
		{"user", []string{"user.*"}, []string{"user"}, true, true},            // both, by different paths
		{"user.name", []string{"user.name"}, []string{"user.*"}, true, true},  // a star of ours (never sent) still covers
	} {
		d, u := routeChange(c.path, c.desktop, c.desktop, c.ours)
		if d != c.toDesktop || u != c.toUs {
			t.Errorf("routeChange(%q, desktop %q, ours %q) = desktop %v, ours %v; want %v, %v", c.path, c.desktop, c.ours, d, u, c.toDesktop, c.toUs)
		}
	}
	// A path the desktop has dropped, in a change formed before the app got
	// its new list: the desktop may have it, the bridge never takes it.
	for _, c := range []struct {
		path            string
		ever, ours      []string
		toDesktop, toUs bool
	}{
		{"user.name", []string{"user.name"}, []string{"cart"}, true, false},
		{"auth.x", []string{"auth.*"}, nil, true, false},
		{"", []string{"*"}, nil, true, false},
		{"cart", []string{"cart"}, []string{"cart"}, false, true}, // ours, and no longer the desktop's
		{"prefs", []string{"user.name"}, []string{"cart"}, true, true},
	} {
		d, u := routeChange(c.path, nil, c.ever, c.ours)
		if d != c.toDesktop || u != c.toUs {
			t.Errorf("routeChange(%q, desktop none, ever %q, ours %q) = desktop %v, ours %v; want %v, %v", c.path, c.ever, c.ours, d, u, c.toDesktop, c.toUs)
		}
	}
}

func TestSubscriptionUnion(t *testing.T) {
	for _, c := range []struct{ desktop, ours, want []string }{
		{nil, nil, []string{}},
		{[]string{}, []string{"auth", "cart"}, []string{"auth", "cart"}},
		{[]string{"user.name", "cart"}, []string{"auth", "cart"}, []string{"user.name", "cart", "auth"}},
		{[]string{""}, []string{"auth"}, []string{"", "auth"}},
		{[]string{"auth", "cart", "x"}, []string{"auth", "cart"}, []string{"auth", "cart", "x"}},
	} {
		got := subscriptionUnion(c.desktop, c.ours)
		if !slices.Equal(got, c.want) {
			t.Errorf("subscriptionUnion(%q, %q) = %q, want %q", c.desktop, c.ours, got, c.want)
		}
	}
	for name, want := range map[string]bool{"cart": true, "": false, "*": false, "user.*": false, "a.b": true} {
		if got := bridgeSubscribable(name); got != want {
			t.Errorf("bridgeSubscribable(%q) = %v, want %v", name, got, want)
		}
	}
}

func TestChangeForDesktop(t *testing.T) {
	change := func(entries ...string) []byte {
		return []byte(`{"type":"state.values.change","payload":{"changes":[` + joinStrings(entries) + `]},"important":false,"date":"2026-11-25T14:34:41.351Z","deltaTime":1}`)
	}
	cart := `{"path":"cart","value":{"items":[],"total":"~~~ zero ~~~","addItem":"~~~ addItem() ~~~"}}`
	auth := `{"path":"auth","value":{"user":"~~~ null ~~~"}}`
	user := `{"path":"user.name", "value" : "Ada"}`
	whole := `{"path":"","value":{"user":{"name":"Ada"}}}`
	ours := []string{"auth", "cart"}
	for _, c := range []struct {
		name    string
		desktop []string
		in      []byte
		want    []byte // nil: nothing for the desktop
	}{
		{"every entry the desktop's", []string{"user.name"}, change(user), change(user)},
		{"a mix keeps the desktop's, byte for byte", []string{"user.name", "cart"}, change(cart, user, auth), change(cart, user)},
		{"none the desktop's", []string{"user.name"}, change(cart, auth), nil},
		{"no entries: the answer to an empty list", []string{}, change(), change()},
		{"before the desktop's first list: the bridge's probe", nil, change(cart, `{"path":"prefs","value":1}`), nil},
		{"the probe's path is never the desktop's", []string{"user.name"}, change(`{"path":"__devtools_mcp_store_probe__","value":"~~~ undefined ~~~"}`, user), change(user)},
		{"a whole state the desktop did not ask for is the probe's", []string{"user.name"}, change(whole, user), change(user)},
		{"whole state asked: the frame unchanged", []string{""}, change(whole, cart, auth), change(whole, cart, auth)},
		{"whole state asked, but not a store of ours the app lacks", []string{""}, change(whole, `{"path":"auth","value":"~~~ undefined ~~~"}`, cart), change(whole, cart)},
		{"an undefined entry the desktop asked for is its", []string{"auth"}, change(`{"path":"auth","value":"~~~ undefined ~~~"}`), change(`{"path":"auth","value":"~~~ undefined ~~~"}`)},
		{"unasked entries go to the desktop too", []string{}, change(`{"path":"prefs","value":1}`, cart), change(`{"path":"prefs","value":1}`)},
		{"an entry without a readable path is the desktop's", []string{}, change(`{"value":1}`, `5`, auth), change(`{"value":1}`, `5`)},
		{"no changes member", []string{}, []byte(`{"type":"state.values.change","payload":{}}`), []byte(`{"type":"state.values.change","payload":{}}`)},
		{"unreadable", []string{}, []byte(`{"type":"state.values.change","payload":{"changes":[{"path":"cart"}`), []byte(`{"type":"state.values.change","payload":{"changes":[{"path":"cart"}`)},
	} {
		got := changeForDesktop(c.in, c.desktop, ours)
		if !bytes.Equal(got, c.want) {
			t.Errorf("%s:\n got %s\nwant %s", c.name, got, c.want)
		}
	}
}

func joinStrings(s []string) string {
	return string(bytes.Join(func() [][]byte {
		out := make([][]byte, len(s))
		for i, x := range s {
			out[i] = []byte(x)
		}
		return out
	}(), []byte(",")))
}

func TestDesktopSubscribePaths(t *testing.T) {
	for _, c := range []struct {
		in    string
		paths []string
		ok    bool
	}{
		{`{"type":"state.values.subscribe","payload":{"paths":[]}}`, []string{}, true},
		{`{"type":"state.values.subscribe","payload":{"paths":["","user.name"]}}`, []string{"", "user.name"}, true},
		{`{"type":"state.values.subscribe","payload":{"paths":null}}`, nil, false},
		{`{"type":"state.values.subscribe","payload":{"paths":[1]}}`, nil, false},
		{`{"type":"state.values.subscribe","payload":{}}`, nil, false},
		{`{"type":"state.values.request","payload":{"paths":["a"]}}`, nil, false},
		{`not json`, nil, false},
	} {
		paths, ok := desktopSubscribePaths([]byte(c.in))
		if ok != c.ok || !slices.Equal(paths, c.paths) {
			t.Errorf("desktopSubscribePaths(%s) = %q, %v; want %q, %v", c.in, paths, ok, c.paths, c.ok)
		}
	}
}

func FuzzChangeForDesktop(f *testing.F) {
	f.Add([]byte(`{"type":"state.values.change","payload":{"changes":[{"path":"cart","value":1},{"path":"user.name","value":2}]}}`), "user.*", "cart")
	f.Add([]byte(`{"type":"state.values.change","payload":{"changes":[]}}`), "", "cart")
	f.Add([]byte(`{"payload":{"changes":[{"path":"\u0063art"},7,{"path":1}]},"x":[}`), "*", "")
	f.Fuzz(func(t *testing.T, data []byte, desktop, ours string) {
		out := changeForDesktop(data, []string{desktop}, []string{ours})
		if out == nil || bytes.Equal(out, data) {
			return
		}
		// Rewritten: valid JSON when the input was, with fewer entries.
		if json.Valid(data) && !json.Valid(out) {
			t.Errorf("%q became invalid %q", data, out)
		}
		n := func(b []byte) int {
			count := 0
			eachElement(rawMember(rawMember(b, "payload"), "changes"), func(int, []byte) bool { count++; return true })
			return count
		}
		if n(out) == 0 || n(out) >= n(data) {
			t.Errorf("%q rewritten to %q: want some entries and fewer", data, out)
		}
	})
}

func FuzzDesktopSubscribePaths(f *testing.F) {
	f.Add([]byte(`{"type":"state.values.subscribe","payload":{"paths":["a",""]}}`))
	f.Add([]byte(`{"type":"state.values.subscribe","payload":{"paths":null}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		paths, ok := desktopSubscribePaths(data)
		if ok != (paths != nil) {
			t.Errorf("%q: paths %q with ok %v", data, paths, ok)
		}
	})
}

// zustandBackupAnswer is reactotron-plugin-zustand's answer to a backup
// request, stores auth and cart (testdata/reactotron/zustand.jsonl).
func zustandBackupAnswer(t *testing.T) []byte {
	t.Helper()
	for _, f := range readReactotronCaptured(t, "testdata/reactotron/zustand.jsonl") {
		if f.Dir == "app" && bytes.Contains(f.Frame, []byte(`"state.backup.response"`)) {
			return f.Frame
		}
	}
	t.Fatal("no backup answer in zustand.jsonl")
	return nil
}

// zustandProbeAnswer is reactotron-plugin-zustand's answer to the probe's
// "*" (zustand_probe.jsonl has the real one): every store by name, here
// the stores of zustand.jsonl's backup.
func zustandProbeAnswer(t *testing.T) []byte {
	t.Helper()
	state := rawMember(rawMember(zustandBackupAnswer(t), "payload"), "state")
	return []byte(`{"type":"state.values.change","payload":{"changes":` + string(state) + `},"important":"~~~ false ~~~"}`)
}

// heldStores are the names of the stores a session holds, sorted.
func heldStores(s *session) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for name := range s.keptLocked().stores {
		out = append(out, name)
	}
	sort.Strings(out)
	return out
}

// TestDesktopRelaySharesSubscription: the app keeps one subscription list.
// It is always sent the union of the desktop's list and the bridge's, and
// each change reaches each side with the entries of its own paths.
func TestDesktopRelaySharesSubscription(t *testing.T) {
	d := newFakeDesktop(t) // not running yet: the bridge subscribes first
	b, link, url := startRelayBridge(t, testDesktopOptions(d.addr))
	app := dialReactotron(t, url, nil)
	app.send([]byte(`{"type":"client.intro","payload":{"name":"ZustandApp","clientId":"c1"}}`))
	app.answerProbe(t, 0, zustandProbeAnswer(t))
	ourList := string(reactotronSubscribe([]string{"auth", "cart"}))
	if got := app.waitServerFrame(t, 2); got != ourList {
		t.Fatalf("the app got %s, want the bridge's subscription %s", got, ourList)
	}
	var s *session
	linkWaitFor(t, "the session", func() bool {
		s = registryOf(link).currentLive(sessionViaReactotron)
		return s != nil
	})
	// The desktop arrives and sends its empty list: the app keeps ours.
	d.start()
	side := d.next()
	side.frame(t) // the intro
	if got := app.waitServerFrame(t, 3); got != ourList {
		t.Errorf("after the desktop's empty list the app got %s, want %s", got, ourList)
	}
	// The desktop subscribes to a path of its own and to one of ours.
	side.send(t, []byte(`{"type":"state.values.subscribe","payload":{"paths":["user.name","cart"]}}`))
	if got, want := app.waitServerFrame(t, 4), string(reactotronSubscribe([]string{"user.name", "cart", "auth"})); got != want {
		t.Errorf("the app got %s, want the union %s", got, want)
	}
	cart := `{"path":"cart","value":{"items":[{"sku":"A-1","price":9.5}],"total":9.5,"addItem":"~~~ addItem() ~~~"}}`
	auth := `{"path":"auth","value":{"user":"~~~ null ~~~","token":"~~~ null ~~~"}}`
	user := `{"path":"user.name","value":"Ada"}`
	change := func(entries ...string) []byte {
		return []byte(`{"type":"state.values.change","payload":{"changes":[` + joinStrings(entries) + `]},"important":false,"date":"2026-11-25T14:34:41.600Z","deltaTime":3}`)
	}
	marker := func(n int) []byte {
		return []byte(fmt.Sprintf(`{"type":"log","payload":{"level":"debug","message":"marker %d"},"important":false}`, n))
	}
	app.send(change(cart, user, auth))
	if got, want := side.frame(t), change(cart, user); !bytes.Equal(got, want) {
		t.Errorf("the desktop got\n%s\nwant its entries only\n%s", got, want)
	}
	linkWaitFor(t, "the bridge's stores", func() bool { return slices.Equal(heldStores(s), []string{"auth", "cart"}) })
	// A change of our stores alone is not the desktop's at all.
	app.send(change(auth))
	app.send(marker(1))
	if got := side.frame(t); !bytes.Equal(got, marker(1)) {
		t.Errorf("the desktop got %s, want the log after a change of the bridge's stores only", got)
	}
	// The desktop asks for the whole state (reactotron-core-server sends
	// "" for "*"): passed on as its choice, and every entry is its.
	side.send(t, []byte(`{"type":"state.values.subscribe","payload":{"paths":[""]}}`))
	if got, want := app.waitServerFrame(t, 5), string(reactotronSubscribe([]string{"", "auth", "cart"})); got != want {
		t.Errorf("the app got %s, want %s", got, want)
	}
	whole := `{"path":"","value":{"user":{"name":"Ada"},"todos":[]}}`
	app.send(change(whole, cart, auth))
	if got, want := side.frame(t), change(whole, cart, auth); !bytes.Equal(got, want) {
		t.Errorf("the desktop got\n%s\nwant the frame unchanged\n%s", got, want)
	}
	// The whole state is not a store of the bridge's.
	app.send(marker(2))
	side.frame(t)
	linkWaitFor(t, "the marker", func() bool { return s.latestSeq("console") == 2 })
	if got := heldStores(s); !slices.Equal(got, []string{"auth", "cart"}) {
		t.Errorf("the bridge holds stores %q, want auth and cart only", got)
	}
	// A list that holds ours reaches the app byte for byte.
	superset := []byte(`{"type":"state.values.subscribe", "payload":{"paths":["auth","cart","x"]}}`)
	side.send(t, superset)
	if got := app.waitServerFrame(t, 6); got != string(superset) {
		t.Errorf("the app got %s, want the desktop's own frame %s", got, superset)
	}
	// A change formed under an earlier list of the desktop's: the desktop
	// may have user.name, the bridge never takes it for a store (checked
	// below).
	app.send(change(user))
	if got, want := side.frame(t), change(user); !bytes.Equal(got, want) {
		t.Errorf("the desktop got %s, want %s", got, want)
	}
	// A store pushed unasked is both sides'; the bridge then subscribes to
	// it, keeping the desktop's list.
	prefs := `{"path":"prefs","value":{"theme":"dark"}}`
	app.send(change(prefs))
	if got, want := side.frame(t), change(prefs); !bytes.Equal(got, want) {
		t.Errorf("the desktop got %s, want the unasked change %s", got, want)
	}
	if got, want := app.waitServerFrame(t, 7), string(reactotronSubscribe([]string{"auth", "cart", "x", "prefs"})); got != want {
		t.Errorf("the app got %s, want the union with the new store %s", got, want)
	}
	if got := heldStores(s); !slices.Equal(got, []string{"auth", "cart", "prefs"}) {
		t.Errorf("the bridge holds stores %q, want auth, cart and prefs", got)
	}
	if r := relayOf(t, b, "c1"); r.AnswersKept != 0 {
		t.Errorf("relay = %+v, want no answer kept: the bridge asked nothing", r)
	}
}

// TestDeliverLeavesTheDesktopsWaiter: the bridge's handling of an answer
// never takes a waiter of the desktop's, which may head the backup queue
// when an answer is the second to one of the bridge's requests.
func TestDeliverLeavesTheDesktopsWaiter(t *testing.T) {
	desktops, ours := make(chan reactotronAnswer, 1), make(chan reactotronAnswer, 1)
	c := &reactotronConn{bridge: &reactotronBridge{logger: slog.New(slog.DiscardHandler)},
		waiters: map[string][]chan reactotronAnswer{backupKey: {desktops, ours}}}
	c.relay = &desktopRelay{app: c, owned: map[chan reactotronAnswer]time.Time{desktops: time.Now()}}
	c.deliver(backupKey, reactotronAnswer{value: json.RawMessage(`{}`)})
	if len(desktops) != 0 || len(ours) != 0 || len(c.waiters[backupKey]) != 2 {
		t.Errorf("deliver took a waiter from behind or the desktop's: queue %d, desktop's %d, ours %d", len(c.waiters[backupKey]), len(desktops), len(ours))
	}
	c.relay = nil // without a relay every waiter is the bridge's
	c.deliver(backupKey, reactotronAnswer{value: json.RawMessage(`{}`)})
	if len(desktops) != 1 || len(c.waiters[backupKey]) != 1 {
		t.Errorf("without a relay deliver did not answer the first waiter")
	}
}

// TestSharedAppCapture checks the rules against a real reactotron-core-client
// with reactotron-redux and reactotron-plugin-zustand in one app
// (testdata/reactotron/shared.jsonl):
//   - one backup request is answered twice, the Redux object then the
//     stores array, with no frame between them (backupAnswers);
//   - reactotron-redux forms the entries of each list as pathsCover
//     assumes ("" and "*" as the path "", "cart.*" as cart's keys, a path
//     its state lacks as undefined); reactotron-plugin-zustand 2.0.9 adds a
//     listener per subscription and reports its store on every change
//     whatever the list, so "prefs" comes unasked too;
//   - with the server's list taken as the desktop's and the bridge
//     subscribed to prefs, the desktop gets exactly the entries its list
//     covers (all of them for "" and "*"), the bridge prefs alone.
func TestSharedAppCapture(t *testing.T) {
	frames := readReactotronCaptured(t, "testdata/reactotron/shared.jsonl")
	var shapes []string
	for i, f := range frames {
		if f.Dir == "app" && bytes.Contains(f.Frame, []byte(`"state.backup.response"`)) {
			pf, err := parseReactotronFrame(f.Frame)
			if err != nil {
				t.Fatal(err)
			}
			state, _ := parseReactotronBackup(pf.Payload)
			shapes = append(shapes, rawKind(state))
			if len(shapes) == 2 && !bytes.Contains(frames[i-1].Frame, []byte(`"state.backup.response"`)) {
				t.Error("the second backup answer does not follow the first")
			}
		}
	}
	if !slices.Equal(shapes, []string{"object", "array"}) {
		t.Errorf("backup answers %q, want the Redux object then the stores array", shapes)
	}
	ours := []string{"prefs"}
	var list []string
	changes := 0
	for _, f := range frames {
		if f.Dir == "server" {
			if paths, ok := desktopSubscribePaths(f.Frame); ok {
				list = paths
			}
			continue
		}
		if !bytes.Contains(f.Frame, []byte(`"state.values.change"`)) {
			continue
		}
		changes++
		var toDesktop []string
		eachElement(rawMember(rawMember(f.Frame, "payload"), "changes"), func(_ int, e []byte) bool {
			p, ok := changePath(e)
			if !ok {
				t.Errorf("an entry without a readable path: %s", e)
			}
			if !pathsCover(list, p) && p != "prefs" {
				t.Errorf("under %q the app reported %q, which the list does not cover", list, p)
			}
			if pathsCover(list, p) || !pathsCover(ours, p) || wholeState(list) && !undefinedValue(e) {
				toDesktop = append(toDesktop, string(e))
			}
			return true
		})
		var got []string
		out := changeForDesktop(f.Frame, list, ours)
		eachElement(rawMember(rawMember(out, "payload"), "changes"), func(_ int, e []byte) bool {
			got = append(got, string(e))
			return true
		})
		if !slices.Equal(got, toDesktop) {
			t.Errorf("under %q the desktop got %q, want %q", list, got, toDesktop)
		}
		if len(toDesktop) == 0 && out != nil && !bytes.Contains(f.Frame, []byte(`"changes":[]`)) {
			t.Errorf("under %q the desktop got %s, want nothing", list, out)
		}
		pf, err := parseReactotronFrame(f.Frame)
		if err != nil {
			t.Fatal(err)
		}
		stores, err := parseReactotronValuesChange(pf.Payload)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range stores {
			_, toUs := routeChange(s.Name, list, list, ours)
			if toUs != (s.Name == "prefs") {
				t.Errorf("under %q the bridge takes %q: %v", list, s.Name, toUs)
			}
		}
	}
	if changes < 10 {
		t.Errorf("%d changes in the capture, want the whole run", changes)
	}
}
