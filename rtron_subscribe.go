package main

// rtron_subscribe.go shares the app's one state subscription between the
// bridge and the desktop app it is relayed to (rtron_desktop.go).
//
// A Reactotron app keeps one list of subscribed paths: each
// state.values.subscribe replaces it, and the state plugins then send
// state.values.change {changes: [{path, value}]} at once and after every
// change, each time one entry per path of the list (reactotron-redux: the
// value at the path; "p.*" gives one entry per key of p, "p.k", or "p"
// when p holds nothing; "*" and "" give the whole state under ""). The
// desktop app sends its own list on every connection and whenever its
// user edits it, and reactotron-core-server takes the paths of each change
// it receives as its list from then on. The bridge subscribes to the store
// names it learned (rtron_state.go). Sent as they come, each list would
// replace the other at the app.
//
// So the connection keeps both lists, the desktop's (desktopRelay.paths)
// and the bridge's (reactotronConn.subscribed), and the app is always sent
// their union, the desktop's paths first: the desktop's own frame,
// unchanged, when the union is its list. The bridge never subscribes to
// "*", "" or a "p.*" path: reactotron-redux would push the whole state, or
// all of p, on every action. When the desktop asks for them, that is its
// choice and goes to the app as asked.
//
// Each entry of a change goes to the side whose list covers its path (see
// pathsCover); to both when both lists cover it, and when neither does (a
// plugin pushing values unasked, or a store that a "*" of the desktop's
// made the plugin list). A desktop that subscribed to "*" or "" gets every
// entry but those the bridge's list alone asked for and the app has no
// value for: reactotron-redux reports a store name of the bridge's, which
// its state lacks, as undefined, and that entry would only clutter the
// desktop's view of the whole state. A change the app formed before it
// got the latest list may hold paths the desktop has since dropped: the
// bridge takes no entry of a path the desktop ever subscribed to on this
// connection unless its own list covers it, so that such a path never
// becomes a store of the bridge's (changeForDesktop says what the desktop
// gets). The bridge records only its entries in the stores stream: the whole
// Redux state that a desktop's "*" makes the app push on every action is
// the desktop's alone, and the bridge's redux stream keeps reading state
// on demand, through backups.

import (
	"bytes"
	"context"
	"encoding/json"
	"slices"
	"strings"
)

// pathsCover reports whether a change entry for path p answers one of
// paths, as reactotron-redux forms entries.
func pathsCover(paths []string, p string) bool {
	for _, s := range paths {
		switch {
		case s == p, s == "*" && p == "":
			return true
		case strings.HasSuffix(s, ".*") && len(s) > 2:
			parent := s[:len(s)-2]
			if p == parent || strings.HasPrefix(p, parent+".") {
				return true
			}
		}
	}
	return false
}

func wholeState(paths []string) bool {
	return slices.Contains(paths, "*") || slices.Contains(paths, "")
}

// routeChange says who gets a change entry for path p, given the desktop's
// list, every path the desktop has subscribed to (desktopEver, which holds
// desktop), and the bridge's list.
func routeChange(p string, desktop, desktopEver, ours []string) (toDesktop, toUs bool) {
	d, u := pathsCover(desktop, p), pathsCover(ours, p)
	return d || !u || wholeState(desktop), u || !(d || pathsCover(desktopEver, p))
}

// maxDesktopPathsSeen bounds the paths a relay remembers the desktop
// subscribing to; past it, new ones are not remembered.
const maxDesktopPathsSeen = 256

// bridgeSubscribable reports whether the bridge may subscribe to name: a
// store name that is not one of reactotron-redux's whole-state paths.
func bridgeSubscribable(name string) bool {
	return name != "" && name != "*" && !strings.HasSuffix(name, ".*")
}

// subscriptionUnion is the list the app is sent.
func subscriptionUnion(desktop, ours []string) []string {
	out := slices.Clone(desktop)
	for _, p := range ours {
		if !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	return out
}

// desktopPaths are the relay's paths and pathsEver; the caller holds c.mu.
func (c *reactotronConn) desktopPaths() (paths, ever []string) {
	if c.relay == nil {
		return nil, nil
	}
	return c.relay.paths, c.relay.pathsEver
}

// writeSubscriptionLocked writes the union of the desktop's and the
// bridge's lists to the app; the caller holds writeMu. Every writer of
// subscriptions holds writeMu while it reads the lists and writes, so the
// app's last list is the latest union.
func (c *reactotronConn) writeSubscriptionLocked(ctx context.Context) error {
	c.mu.Lock()
	desktop, _ := c.desktopPaths()
	union := subscriptionUnion(desktop, c.subscribed)
	c.mu.Unlock()
	return c.sock.writeFrame(ctx, reactotronSubscribe(union))
}

// subscriptionForDesktop records the desktop's list and returns what to
// write to the app in its place; the caller holds writeMu.
func (c *reactotronConn) subscriptionForDesktop(r *desktopRelay, f queuedFrame) []byte {
	c.mu.Lock()
	r.paths = f.paths
	for _, p := range f.paths {
		if len(r.pathsEver) < maxDesktopPathsSeen && !slices.Contains(r.pathsEver, p) {
			r.pathsEver = append(r.pathsEver, p)
		}
	}
	union := subscriptionUnion(f.paths, c.subscribed)
	c.mu.Unlock()
	if slices.Equal(union, f.paths) {
		return f.data
	}
	return reactotronSubscribe(union)
}

// desktopSubscribePaths reads the paths of a state.values.subscribe from
// the desktop; ok is false for any other frame, or paths that are not a
// list of strings (such a frame goes to the app unchanged and unrecorded).
func desktopSubscribePaths(data []byte) (paths []string, ok bool) {
	var f struct {
		Type    string `json:"type"`
		Payload struct {
			Paths []string `json:"paths"`
		} `json:"payload"`
	}
	if json.Unmarshal(data, &f) != nil || f.Type != "state.values.subscribe" || f.Payload.Paths == nil {
		return nil, false
	}
	return f.Payload.Paths, true
}

// ourStores keeps the entries of a change that are the bridge's.
func (c *reactotronConn) ourStores(stores []reactotronStoreValue) []reactotronStoreValue {
	c.mu.Lock()
	desktop, ever := c.desktopPaths()
	ours := c.subscribed
	c.mu.Unlock()
	return slices.DeleteFunc(stores, func(s reactotronStoreValue) bool {
		_, toUs := routeChange(s.Name, desktop, ever, ours)
		return !toUs
	})
}

// changeForDesktop is the app's state.values.change frame with only the
// desktop's entries, copied byte for byte; nil when none is the desktop's.
// A frame that cannot be read, a change with no entries (the answer to an
// empty list) and an entry without a readable path are the desktop's.
func changeForDesktop(data []byte, desktop, ours []string) []byte {
	payload := rawMember(data, "payload")
	changes := rawMember(payload, "changes")
	if changes == nil {
		return data
	}
	var kept [][]byte
	n := 0
	err := eachElement(changes, func(_ int, e []byte) bool {
		n++
		p, ok := changePath(e)
		to, _ := routeChange(p, desktop, nil, ours)
		if to && pathsCover(ours, p) && !pathsCover(desktop, p) && undefinedValue(e) {
			to = false // asked by the bridge alone, and the app has nothing there
		}
		if ok && isProbePath(p) && !pathsCover(desktop, p) {
			to = false // the answer to the bridge's store probe (rtron_storeprobe.go)
		}
		if !ok || to {
			kept = append(kept, e)
		}
		return true
	})
	switch {
	case desktop == nil:
		// Before the desktop's first list, a change answers the bridge's
		// probe (rtron_storeprobe.go): the desktop sends its list as it
		// takes the app, and what it asked for follows that.
		return nil
	case err != nil || len(kept) == n:
		return data
	case len(kept) == 0:
		return nil
	}
	list := append([]byte{'['}, bytes.Join(kept, []byte{','})...)
	if payload, err = withMember(payload, "changes", append(list, ']')); err != nil {
		return data
	}
	if out, err := withMember(data, "payload", payload); err == nil {
		return out
	}
	return data
}

// changePath reads the path of a change entry as the app wrote it: a
// string, in Reactotron's encoding ("" arrives as "~~~ empty string ~~~").
func changePath(entry []byte) (string, bool) {
	raw, ok := wireString(rawMember(entry, "path"))
	if !ok {
		return "", false
	}
	lit, str, undefined := decodeReactotronString(raw)
	if lit != "" || undefined {
		return "", false // null, a number, …: no path
	}
	return str, true
}

// undefinedValue reports whether a change entry holds no value: none, or
// undefined in Reactotron's encoding.
func undefinedValue(entry []byte) bool {
	v := rawMember(entry, "value")
	if v == nil {
		return true
	}
	s, ok := wireString(v)
	if !ok {
		return false
	}
	_, _, undefined := decodeReactotronString(s)
	return undefined
}

// withMember is the JSON object obj with the value of member name replaced
// by value; the other members keep their order and bytes.
func withMember(obj []byte, name string, value []byte) ([]byte, error) {
	var o jsonObject
	err := eachMember(obj, func(n string, v []byte) bool {
		if n == name {
			v = value
		}
		o.raw(n, v)
		return true
	})
	return o.close(), err
}
