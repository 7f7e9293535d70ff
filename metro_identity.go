package main

// metro_identity.go decides which session each listed Metro page feeds.
//
// An app is its logical device and app id: the proxy's
// reactNative.logicalDeviceId is the `device` its device connected with,
// which React Native derives per device and app (a hash of the app id and
// the device's vendor or Android id), so it stays across reloads and
// relaunches, and two simulators or emulators listed under one device name
// have two. When it changes (a proxy given no `device` numbers devices as
// they connect; a Metro restart), the app id and device name find the
// session again, unless a page listed at the same time of another logical
// device feeds that session: two devices listed at once are two sessions.
//
// Session ids: `metro:<app id>@<device name>` for the first device of that
// name; a second device listed under the same name gets
// `metro:<app id>@<device name>#<first 6 characters of its logical device
// id>` (longer if that is taken too; `#2`, `#3`, … without one). An id stays
// with its device until maxMetroApps apps are remembered (assign).

import (
	"cmp"
	"strconv"
	"strings"
)

// metroIdentities is what the link remembers of apps, under its lock.
type metroIdentities struct {
	apps  map[string]string // appKey → session id
	names map[string]string // nameKey → session id
	ids   map[string]bool   // session ids given
}

func newMetroIdentities() metroIdentities {
	return metroIdentities{apps: map[string]string{}, names: map[string]string{}, ids: map[string]bool{}}
}

// assign gives each page of pages (the chosen ones: one per app) its
// session id, by page id. live names the session each page already
// attached feeds (page id → session id). No two pages get one id.
func (ids *metroIdentities) assign(pages []metroPageInfo, live map[string]string) map[string]string {
	// apps and names grow too when ids do not: a proxy that numbers
	// devices gives a new logical device id on every reconnect.
	if len(ids.ids) >= maxMetroApps || len(ids.apps)+len(ids.names) >= 2*maxMetroApps {
		// Forget every app's id rather than grow: their sessions stay, and
		// the pages attached now keep theirs below; any other page, the
		// listed ones included, is found again by name or given an id anew.
		clear(ids.apps)
		clear(ids.names)
		clear(ids.ids)
	}
	out := make(map[string]string, len(pages))
	owner := map[string]string{} // session id → appKey of the page given it
	claim := func(p metroPageInfo, id string) bool {
		if o, taken := owner[id]; taken && o != p.appKey() {
			return false
		}
		owner[id], out[p.ID] = p.appKey(), id
		return true
	}
	// Pages attached keep their session; then known apps, in list order;
	// then the others, by name or anew.
	for _, p := range pages {
		if id, ok := live[p.ID]; ok {
			claim(p, id)
		}
	}
	for _, p := range pages {
		if _, done := out[p.ID]; done {
			continue
		}
		if id, ok := ids.apps[p.appKey()]; ok {
			claim(p, id)
		}
	}
	for _, p := range pages {
		if _, done := out[p.ID]; done {
			continue
		}
		if id := ids.names[p.nameKey()]; id != "" && claim(p, id) {
			continue
		}
		claim(p, ids.fresh(p, owner))
	}
	named := map[string]string{} // nameKey → the id given in this list
	for _, p := range pages {
		id := out[p.ID]
		ids.ids[id] = true
		ids.apps[p.appKey()] = id
		if other, seen := named[p.nameKey()]; seen && other != id {
			// Two devices under one name: a changed logical device id could
			// be either's, so the name finds neither.
			ids.names[p.nameKey()] = ""
			continue
		}
		named[p.nameKey()] = id
		ids.names[p.nameKey()] = id
	}
	return out
}

// fresh is a new session id for p: the plain one when no other device was
// given it, else one told apart by p's logical device id.
func (ids *metroIdentities) fresh(p metroPageInfo, owner map[string]string) string {
	base := "metro:" + cmp.Or(p.AppID, "app") + "@" + cmp.Or(p.DeviceName, p.LogicalDeviceID, "device")
	free := func(id string) bool {
		_, taken := owner[id]
		return !taken && !ids.ids[id]
	}
	if free(base) {
		return base
	}
	dev := metroIDSuffix(p.LogicalDeviceID)
	for _, n := range []int{6, 8, 12, len(dev)} {
		if 0 < n && n <= len(dev) && free(base+"#"+dev[:n]) {
			return base + "#" + dev[:n]
		}
	}
	for n := 2; ; n++ {
		if id := base + "#" + strconv.Itoa(n); free(id) {
			return id
		}
	}
}

// metroIDSuffix keeps the letters, digits, dashes and underscores of a
// logical device id, at most 40 of them (React Native's are 40 hex digits).
func metroIDSuffix(logical string) string {
	var b strings.Builder
	for _, r := range logical {
		if b.Len() == 40 {
			break
		}
		if r == '-' || r == '_' || ('0' <= r && r <= '9') || ('a' <= r && r <= 'z') || ('A' <= r && r <= 'Z') {
			b.WriteRune(r)
		}
	}
	return b.String()
}
