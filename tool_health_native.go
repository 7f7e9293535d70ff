package main

// tool_health_native.go words the native side's state (native_follow.go)
// for debug_health_check: the tools found, each device and the app
// processes on it, what was dropped, and the last crash; and, in adb's own
// words, why a listing failed or a device could not be asked, an adb
// server that was started again, and an ANDROID_LOG_TAGS set and ignored.

import "slices"

// healthNative is server.native of the health check.
type healthNative struct {
	Status    string               `json:"status"`
	ADB       string               `json:"adb,omitempty"`
	Xcrun     string               `json:"xcrun,omitempty"`
	Error     string               `json:"error,omitempty"`
	ADBServer string               `json:"adbServer,omitempty"` // the last adb server start an adb command of ours made
	LogTags   string               `json:"logTags,omitempty"`   // ANDROID_LOG_TAGS set, and ignored
	Devices   []healthNativeDevice `json:"devices"`
	CutLines  int64                `json:"cutLines,omitempty"` // lines longer than the bound, cut
	LastCrash *healthNativeCrash   `json:"lastCrash,omitempty"`
}

type healthNativeDevice struct {
	Platform  string            `json:"platform"`
	ID        string            `json:"id"` // the serial or udid
	Name      string            `json:"name,omitempty"`
	State     string            `json:"state"`
	Following bool              `json:"following"`
	Apps      []healthNativeApp `json:"apps"`
	Dropped   int64             `json:"droppedLines,omitempty"`
	Ended     string            `json:"logEnded,omitempty"`  // why its log stream last ended; it is restarted
	CannotAsk string            `json:"cannotAsk,omitempty"` // adb's words when it could not ask the device
	Kept      string            `json:"kept,omitempty"`      // why its apps' sessions stay while it is not followed
}

type healthNativeApp struct {
	ID        string `json:"id"`
	Processes []int  `json:"processes"` // pids; empty when the app is not running
}

type healthNativeCrash struct {
	App     string `json:"app"`
	Device  string `json:"device"`
	Kind    string `json:"kind"` // java, native, objc
	At      string `json:"at"`
	Summary string `json:"summary"`
}

// maxHealthNativeDevices bounds the devices a health check lists.
const maxHealthNativeDevices = 16

// describeNative words the native side's state.
func describeNative(st nativeStatus) *healthNative {
	h := &healthNative{ADB: st.ADB, Xcrun: st.Xcrun, Devices: []healthNativeDevice{}, CutLines: st.CutLines}
	if st.ListError != "" {
		h.Error = "listing devices fails, so every device followed stays followed until a listing succeeds: " + st.ListError
	}
	if s := st.ADBServer; !s.At.IsZero() {
		h.ADBServer = "an adb command started the adb server at " + s.At.UTC().Format(timeFormat) + " (" + s.Said +
			"); devices it does not list yet keep their sessions for a while"
	}
	if st.LogTags != "" {
		h.LogTags = "ANDROID_LOG_TAGS=" + st.LogTags + " is set in the server's environment and ignored: adb would hand it to logcat as its filter"
	}
	following := 0
	for i, d := range st.Devices {
		if i == maxHealthNativeDevices {
			break
		}
		hd := healthNativeDevice{Platform: d.Platform, ID: d.ID, Name: d.Name, State: d.State, Following: d.Following,
			Apps: []healthNativeApp{}, Dropped: d.Dropped, Ended: d.Ended}
		if d.AskFailed != "" {
			hd.CannotAsk = "adb cannot ask the device; its apps' state is kept: " + d.AskFailed
		}
		running := slices.ContainsFunc(d.Apps, func(a nativeAppStatus) bool { return len(a.PIDs) > 0 })
		if !d.Following && d.State != "device" && d.State != "gone" && running {
			hd.Kept = "not followed while " + d.State + "; its apps' sessions stay until it is online again or gone"
		}
		for _, a := range d.Apps {
			pids := a.PIDs
			if pids == nil {
				pids = []int{}
			}
			hd.Apps = append(hd.Apps, healthNativeApp{ID: a.ID, Processes: pids})
		}
		if d.Following {
			following++
		}
		h.Devices = append(h.Devices, hd)
	}
	switch {
	case st.ADB == "" && st.Xcrun == "":
		h.Status = "neither adb nor xcrun was found (set ADB, ANDROID_HOME or XCRUN): no native logs"
	case following == 0:
		h.Status = "no Android device or booted iOS simulator is online"
	default:
		h.Status = "following the native logs of the apps listed on each device (NATIVE_APPS and the apps of the sessions)"
	}
	if c := st.LastCrash; c != nil {
		h.LastCrash = &healthNativeCrash{App: c.App, Device: c.Device, Kind: c.Kind, At: c.At.UTC().Format(timeFormat), Summary: c.Summary}
	}
	return h
}
