package main

import (
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/coder/websocket"
	"github.com/google/go-cmp/cmp"
)

// identityPage is a listed page of com.example.shop.
func identityPage(id, device, logical string) metroPageInfo {
	return metroPageInfo{ID: id, AppID: "com.example.shop", DeviceName: device, LogicalDeviceID: logical}
}

// TestMetroIdentityAssign walks the session ids the link gives through a
// day of two emulators of one image (same device name): one device keeps
// the plain id, a second listed beside it gets its logical device id's
// first characters, relaunches keep each its own, and a changed logical
// device id finds its session by name only while that tells one device.
func TestMetroIdentityAssign(t *testing.T) {
	t.Parallel()
	const (
		devA = "3f9a2c71d0e4b5a6c7d8e9f0a1b2c3d4e5f6a7b8"
		devB = "b71c0e55aa0123456789abcdef0123456789abcd"
		devC = "b71c0e77ffffffffffffffffffffffffffffffff" // shares devB's first 6 characters
		base = "metro:com.example.shop@sdk_gphone64_arm64"
	)
	ids := newMetroIdentities()
	step := func(name string, live map[string]string, pages []metroPageInfo, want map[string]string) {
		t.Helper()
		if diff := cmp.Diff(want, ids.assign(pages, live)); diff != "" {
			t.Errorf("%s (-want +got):\n%s", name, diff)
		}
	}
	a1 := identityPage("A-1", "sdk_gphone64_arm64", devA)
	b1 := identityPage("B-1", "sdk_gphone64_arm64", devB)
	step("one device", nil, []metroPageInfo{a1}, map[string]string{"A-1": base})
	step("a second device of that name", map[string]string{"A-1": base}, []metroPageInfo{a1, b1},
		map[string]string{"A-1": base, "B-1": base + "#b71c0e"})
	step("the second relaunches, listed first now", map[string]string{"A-1": base},
		[]metroPageInfo{identityPage("B-2", "sdk_gphone64_arm64", devB), a1},
		map[string]string{"A-1": base, "B-2": base + "#b71c0e"})
	step("a third whose id starts as the second's", nil,
		[]metroPageInfo{a1, identityPage("C-1", "sdk_gphone64_arm64", devC)},
		map[string]string{"A-1": base, "C-1": base + "#b71c0e77"})
	step("two devices were listed under the name: a new logical id is a new device", nil,
		[]metroPageInfo{identityPage("D-1", "sdk_gphone64_arm64", "7")},
		map[string]string{"D-1": base + "#7"})

	// One device alone: a new logical device id (a proxy that numbers
	// devices as they connect, restarted) is the same app.
	ids = newMetroIdentities()
	step("numbered device", nil, []metroPageInfo{identityPage("0-1", "iPhone 16", "0")},
		map[string]string{"0-1": "metro:com.example.shop@iPhone 16"})
	step("renumbered after a restart", nil, []metroPageInfo{identityPage("1-1", "iPhone 16", "1")},
		map[string]string{"1-1": "metro:com.example.shop@iPhone 16"})
	step("the first number comes back beside it", map[string]string{"1-1": "metro:com.example.shop@iPhone 16"},
		[]metroPageInfo{identityPage("0-2", "iPhone 16", "0"), identityPage("1-1", "iPhone 16", "1")},
		map[string]string{"0-2": "metro:com.example.shop@iPhone 16#0", "1-1": "metro:com.example.shop@iPhone 16"})
	step("no logical device id to tell apart", nil,
		[]metroPageInfo{identityPage("x", "iPhone 16", "0"), identityPage("y", "iPhone 16", "1"), identityPage("z", "iPhone 16", "")},
		map[string]string{"x": "metro:com.example.shop@iPhone 16#0", "y": "metro:com.example.shop@iPhone 16", "z": "metro:com.example.shop@iPhone 16#2"})
}

// TestMetroIDSuffix: a suffix keeps only characters safe in a session id.
func TestMetroIDSuffix(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"3F9a2c": "3F9a2c", "a b/c?d": "abcd", "": "", "dev-a_1": "dev-a_1", "é€x": "x",
		"0123456789012345678901234567890123456789EXTRA": "0123456789012345678901234567890123456789",
	} {
		if got := metroIDSuffix(in); got != want {
			t.Errorf("metroIDSuffix(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestMetroTwoDevicesOneName: two emulators of one image list the same app
// under the same device name with two logical device ids. They are two
// sessions, both attached, each with its own logs; one relaunching (a new
// page of the same logical device) stays its session, and neither takes
// the other's.
func TestMetroTwoDevicesOneName(t *testing.T) {
	t.Parallel()
	const (
		devA = "3f9a2c71d0e4b5a6c7d8e9f0a1b2c3d4e5f6a7b8"
		devB = "b71c0e55aa0123456789abcdef0123456789abcd"
	)
	idB := standInSession + "#b71c0e"
	m := startMetroStandIn(t)
	m.setPages(standInPage(devA+"-1", "com.example.shop", "Pixel 8", devA, true))
	link, reg := startMetroLink(t, m, nil)
	waitUntil(t, "device A attached", func() bool { p, _ := pageStatus(link, devA+"-1"); return p.Attached })
	m.setPages(standInPage(devA+"-1", "com.example.shop", "Pixel 8", devA, true),
		standInPage(devB+"-1", "com.example.shop", "Pixel 8", devB, true))
	waitUntil(t, "device B attached", func() bool { p, _ := pageStatus(link, devB+"-1"); return p.Attached })

	m.push(devA+"-1", consoleFrame("from A"))
	m.push(devB+"-1", consoleFrame("from B"))
	waitUntil(t, "both logs", func() bool {
		a, _ := reg.find(standInSession)
		b, _ := reg.find(idB)
		return a != nil && b != nil && a.latestSeq("console") == 1 && b.latestSeq("console") == 1
	})
	m.waitPolls(3) // were they one session, each attach would have replaced the other by now
	for id, want := range map[string]string{standInSession: "from A", idB: "from B"} {
		if got := messages(sessionEvents(t, reg, id, "console")); !slices.Equal(got, []string{want}) {
			t.Errorf("session %s holds %q, want only %q", id, got, want)
		}
		s, _ := reg.find(id)
		if !s.isLive() {
			t.Errorf("session %s is not live", id)
		}
	}
	for _, page := range []string{devA + "-1", devB + "-1"} {
		if n := m.dialsOf(page); n != 1 {
			t.Errorf("page %s dialled %d times, want 1: the sessions took each other", page, n)
		}
	}

	// B relaunches: its page is listed anew under its logical device id.
	m.setPages(standInPage(devA+"-1", "com.example.shop", "Pixel 8", devA, true),
		standInPage(devB+"-2", "com.example.shop", "Pixel 8", devB, true))
	m.closePage(devB+"-1", websocket.StatusNormalClosure, "")
	waitUntil(t, "B's new page attached to B's session", func() bool {
		p, _ := pageStatus(link, devB+"-2")
		return p.Attached && p.Session == idB
	})
	m.push(devB+"-2", consoleFrame("B again"))
	waitUntil(t, "B's second log", func() bool { b, _ := reg.find(idB); return b.latestSeq("console") == 2 })
	if got := messages(sessionEvents(t, reg, idB, "console")); !slices.Equal(got, []string{"from B", "B again"}) {
		t.Errorf("B holds %q", got)
	}
	if p, _ := pageStatus(link, devA+"-1"); !p.Attached || p.Session != standInSession {
		t.Errorf("A = %+v, want still attached to %s", p, standInSession)
	}
	if n := reg.count(); n != 2 {
		t.Errorf("%d sessions, want 2", n)
	}
}

// TestMetroSessionIDInURI: a told-apart session id, written into a
// resource URI's ?session= with # as %23 as docs/metro.md says, names that
// session.
func TestMetroSessionIDInURI(t *testing.T) {
	t.Parallel()
	const id = "metro:com.example.shop@Pixel 8#b71c0e"
	_, ref, ok := splitSessionQuery(uriSession + "?session=metro:com.example.shop@Pixel%208%23b71c0e")
	if !ok || ref != id {
		t.Errorf("?session= read as %q (ok %t), want %q", ref, ok, id)
	}
}

// FuzzMetroIdentityAssign: whatever sequence of page lists Metro shows
// (devices of few names and logical ids appearing, relaunching and going),
// every chosen page gets a session id, no two pages of different apps
// share one, and a page still attached keeps the id it feeds.
func FuzzMetroIdentityAssign(f *testing.F) {
	f.Add([]byte{0x01, 0x11, 0xff, 0x01, 0x11, 0x22}) // one device, then a second of its name
	f.Add([]byte{0x03, 0xff, 0x13, 0xff, 0x03, 0x13, 0xff, 0x23})
	f.Add([]byte{0x00, 0x10, 0x20, 0x30, 0xff, 0x31, 0xff, 0x00})
	f.Fuzz(func(t *testing.T, data []byte) {
		// A few lists of a few pages say all there is to say; longer
		// inputs only make the engine's minimising of each new one slow
		// (seconds with no exec counted).
		if len(data) > 96 {
			return
		}
		ids := newMetroIdentities()
		names := []string{"Pixel 8", "Pixel 8", "iPhone 16", ""}
		logical := []string{"", "0", "1", "3f9a2c71d0e4b5a6c7d8e9f0a1b2c3d4e5f6a7b8", "3f9a2c71d0e4ffffffffffffffffffffffffffff", "b71c0e55aa", "b71c0e55bb", "x y/z"}
		var prev map[string]string
		// Each byte adds a page (low bits: name and logical device; high:
		// page number); 0xff ends a list.
		for len(data) > 0 {
			var pages []metroPageInfo
			for len(data) > 0 && data[0] != 0xff {
				b := data[0]
				data = data[1:]
				dev := logical[b&7]
				p := metroPageInfo{AppID: "com.example.shop", DeviceName: names[(b>>3)&3], LogicalDeviceID: dev,
					ID: dev + "-" + string(rune('0'+(b>>5)))}
				// The link attaches the newest page of each app (chooseLocked).
				pages = slices.DeleteFunc(pages, func(q metroPageInfo) bool { return q.appKey() == p.appKey() || q.ID == p.ID })
				pages = append(pages, p)
			}
			if len(data) > 0 {
				data = data[1:]
			}
			live := map[string]string{}
			seen := map[string]bool{}
			for _, p := range pages {
				if id, ok := prev[p.ID]; ok && !seen[id] {
					live[p.ID], seen[id] = id, true
				}
			}
			got := ids.assign(pages, live)
			owner := map[string]string{}
			for _, p := range pages {
				id := got[p.ID]
				if !strings.HasPrefix(id, "metro:com.example.shop@") {
					t.Fatalf("page %+v got session id %q", p, id)
				}
				if o, ok := owner[id]; ok && o != p.appKey() {
					t.Fatalf("two apps share session %q in %+v: %v", id, pages, got)
				}
				owner[id] = p.appKey()
				if want, ok := live[p.ID]; ok && id != want {
					t.Fatalf("attached page %s moved from %q to %q", p.ID, want, id)
				}
			}
			prev = got
		}
	})
}

// TestMetroIdentitiesBounded: a proxy that numbers devices as they connect
// gives one device a new logical id on every reconnect; the name keeps its
// session, and what the link remembers stays bounded.
func TestMetroIdentitiesBounded(t *testing.T) {
	t.Parallel()
	ids := newMetroIdentities()
	for i := range 10 * maxMetroApps {
		p := metroPageInfo{ID: "p", AppID: "com.example.shop", DeviceName: "Pixel 8", LogicalDeviceID: strconv.Itoa(i)}
		got := ids.assign([]metroPageInfo{p}, nil)
		if got["p"] != "metro:com.example.shop@Pixel 8" {
			t.Fatalf("reconnect %d: session %q", i, got["p"])
		}
		if n := len(ids.apps) + len(ids.names) + len(ids.ids); n > 3*maxMetroApps {
			t.Fatalf("reconnect %d: %d entries remembered", i, n)
		}
	}
}
