package main

// session_sameapp.go is "one app, two links": an app seen through Metro
// (console, network) is often also connected through Reactotron's client
// or a debug adapter (state). The agent should see one app: a call that
// names no session goes to the session of that app that has the stream it
// asks for, and the health check lists the two together.
//
// The rule, written once: a Metro session and a session of another link
// are one app when
//   - the other names a bundle id (a wire handshake's app.bundleId) and it
//     equals Metro's app id; or, when it names none,
//   - its app name equals Metro's app id, the app id's last dot-separated
//     part, or the page title; names compare case-insensitively, ignoring
//     spaces, dots, dashes and underscores ("Shop" ~ "com.example.shop");
//   - and, when both name a device (Metro's device name, the other's
//     device model or name), one of the two contains the other, compared
//     the same way ("iPhone" ~ "iPhone 15 Pro"): a Reactotron client or an
//     adapter may give only a model. The native side and Metro both name
//     the device itself, and are one device only when the names are equal
//     (nativeOnPageDevice): "iPhone 16 Pro" is not "iPhone 16".
// Two sessions of the same link are never one app: each link already
// keeps one session per app. A native session (session_native.go) names
// its app by package or bundle id, as Metro does, and takes Metro's part.

import (
	"cmp"
	"encoding/json"
	"strings"
)

// sameApp reports whether a and b are one app seen through two links.
func sameApp(a, b sessionView) bool {
	if a.Via == b.Via || (anchorRank(a.Via) == 0 && anchorRank(b.Via) == 0) {
		return false
	}
	if anchorRank(b.Via) > anchorRank(a.Via) {
		a, b = b, a
	}
	metro, other := describeApp(a), describeApp(b)
	appID := appNameKey(metro.bundleID)
	switch {
	case appID == "":
		return false
	case other.bundleID != "":
		if appNameKey(other.bundleID) != appID {
			return false
		}
	case !namesApp(other.name, metro.bundleID) && (appNameKey(other.name) == "" || appNameKey(other.name) != appNameKey(metro.title)):
		return false
	}
	if a.Via == sessionViaNative && b.Via == sessionViaMetro {
		return nativeOnPageDevice(metro, other)
	}
	md, od := appNameKey(metro.device), appNameKey(other.device)
	return md == "" || od == "" || strings.Contains(md, od) || strings.Contains(od, md)
}

// nativeOnPageDevice reports whether a native app's device is a Metro
// page's: a simulator when Metro's device name is its name exactly, an
// Android device when Metro's (its model) is the model as adb writes it;
// never when another listed device has the same name (native_samename.go),
// as twin emulators of one image do: the page could be either's.
func nativeOnPageDevice(native, page appNames) bool {
	name := page.device
	if native.platform == nativeAndroid {
		name = adbModelSpelling(androidModelOf(name))
	}
	return native.device != "" && name == native.device && len(native.sameNameAs) == 0
}

// androidModelOf is the model in the name React Native gives Metro for an
// Android device (AndroidInfoHelpers.getFriendlyDeviceName): "MODEL -
// RELEASE - API N", or the model alone on Genymotion.
func androidModelOf(name string) string {
	i := strings.LastIndex(name, " - API ")
	if i < 0 || strings.Trim(name[i+len(" - API "):], "0123456789") != "" {
		return name
	}
	if j := strings.LastIndex(name[:i], " - "); j >= 0 {
		return name[:j]
	}
	return name
}

// adbModelSpelling writes a model as `adb devices -l` does: each byte other
// than an ASCII letter or digit as "_" ("Pixel 8" → "Pixel_8").
func adbModelSpelling(s string) string {
	b := []byte(s)
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			b[i] = '_'
		}
	}
	return string(b)
}

// anchorRank ranks the links whose ids the rule compares the other's names
// to: the native side above Metro (see the header); 0 for the others.
func anchorRank(via string) int {
	switch via {
	case sessionViaNative:
		return 2
	case sessionViaMetro:
		return 1
	}
	return 0
}

// appNames is what a session's description says of its app and device.
type appNames struct {
	name, bundleID, title, device string
	platform                      string   // a native session's
	sameNameAs                    []string // a native session's: devices with its device's name
}

func describeApp(v sessionView) appNames {
	if v.Info == nil {
		return appNames{}
	}
	var app struct {
		Name     string `json:"name"`
		BundleID string `json:"bundleId"`
		Title    string `json:"title"`
	}
	var device struct {
		Name       string   `json:"name"`
		Model      string   `json:"model"`
		Platform   string   `json:"platform"`
		SameNameAs []string `json:"sameNameAs"`
	}
	_ = json.Unmarshal(v.Info.App, &app)
	_ = json.Unmarshal(v.Info.Device, &device)
	return appNames{name: app.Name, bundleID: app.BundleID, title: app.Title, device: cmp.Or(device.Name, device.Model),
		platform: device.Platform, sameNameAs: device.SameNameAs}
}

// findFor resolves a session argument for a call that reads stream ("" for
// none): a named session as find does; with no name, the default session,
// unless it lacks stream and another session of the same app has it.
func (r *sessionRegistry) findFor(ref, stream string) (*session, error) {
	s, err := r.find(ref)
	if err != nil || ref != "" || stream == "" || s == nil {
		return s, err
	}
	if found, _ := s.streamActive(stream); found {
		return s, nil
	}
	if pick := r.sameAppSession(s.view(), func(o *session) bool { found, _ := o.streamActive(stream); return found && o != s }); pick != nil {
		return pick, nil
	}
	return s, nil
}

// sameAppSession is the one lookup of an app's session through another
// link: among the sessions that keep accepts and that are v's app
// (sameApp), a live one, else the newest; nil when none.
func (r *sessionRegistry) sameAppSession(v sessionView, keep func(*session) bool) *session {
	var pick *session
	for _, o := range r.list() { // the newest first
		if keep(o) && sameApp(v, o.view()) && (pick == nil || (o.isLive() && !pick.isLive())) {
			pick = o
		}
	}
	return pick
}

// grouped is every session, the newest first, each followed by the other
// sessions of its app (sameApp), and for each session the ids of those.
// Descriptions are read once: this runs on every health check.
func (r *sessionRegistry) grouped() ([]*session, map[*session][]string) {
	all := r.list()
	views := make([]sessionView, len(all))
	for i, s := range all {
		views[i] = s.view()
	}
	out := make([]*session, 0, len(all))
	same := map[*session][]string{}
	placed := make([]bool, len(all))
	for i, s := range all {
		if !placed[i] {
			placed[i] = true
			out = append(out, s)
		}
		for j, o := range all {
			if i == j || !sameApp(views[i], views[j]) {
				continue
			}
			same[s] = append(same[s], o.id)
			if !placed[j] && j > i {
				placed[j] = true
				out = append(out, o)
			}
		}
	}
	return out, same
}
