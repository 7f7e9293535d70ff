package main

// tool_health_native.go words the native side's state (native_follow.go)
// for debug_health_check, quoting adb's own words where adb gave them.

import (
	"fmt"
	"slices"
	"strings"
)

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
	AppIDs    []healthNativeAppID  `json:"appIds,omitempty"`
	LastEnd   *healthNativeEnd     `json:"lastEnd,omitempty"`
}

// healthNativeAppID is one app followed and where its id came from:
// "NATIVE_APPS", the project file that names it, or "session".
type healthNativeAppID struct {
	ID   string `json:"id"`
	From string `json:"from"`
}

// healthNativeEnd is how an app last ended.
type healthNativeEnd struct {
	App    string `json:"app"`
	Device string `json:"device"`
	How    string `json:"how"`            // crashed, anr, killed_low_memory, killed, stopped, died
	Kind   string `json:"kind,omitempty"` // the crash's: java, javascript, native, objc
	PID    int    `json:"pid,omitempty"`
	At     string `json:"at"`
	Reason string `json:"reason"`
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
	NotJoined string            `json:"notJoined,omitempty"` // why its apps are never joined to a Metro session (native_samename.go)
}

type healthNativeApp struct {
	ID        string `json:"id"`
	Processes []int  `json:"processes"` // pids; empty when the app is not running
}

type healthNativeCrash struct {
	App     string `json:"app"`
	Device  string `json:"device"`
	Kind    string `json:"kind"` // java, javascript, native, objc
	At      string `json:"at"`
	Summary string `json:"summary"`
}

// maxHealthNativeDevices bounds the devices a health check lists.
const maxHealthNativeDevices = 16

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
	for _, d := range st.Devices[:min(len(st.Devices), maxHealthNativeDevices)] {
		hd := healthNativeDevice{Platform: d.Platform, ID: d.ID, Name: d.Name, State: d.State, Following: d.Following,
			Apps: []healthNativeApp{}, Dropped: d.Dropped, Ended: d.Ended}
		if twins := sameNameDevices(st.Devices, d); len(twins) > 0 {
			hd.NotJoined = fmt.Sprintf("%s is also the name of %s: Metro names a device only by its name (an Android device by its model), "+
				"so a Metro page of that name could be on either, and this device's apps keep native sessions of their own", d.Name, strings.Join(twins, ", "))
		}
		if d.AskFailed != "" {
			hd.CannotAsk = "adb cannot ask the device; its apps' state is kept: " + d.AskFailed
			if d.Platform == nativeIOS {
				hd.CannotAsk = "simctl cannot list the simulator's running apps; their state is kept: " + d.AskFailed
			}
		}
		running := slices.ContainsFunc(d.Apps, func(a nativeAppStatus) bool { return len(a.PIDs) > 0 })
		if !d.Following && d.State != "device" && d.State != "gone" && running {
			hd.Kept = "not followed while " + d.State + "; its apps' sessions stay until it is online again or gone"
		}
		for _, a := range d.Apps {
			hd.Apps = append(hd.Apps, healthNativeApp{ID: a.ID, Processes: append([]int{}, a.PIDs...)}) // [] when not running
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
		h.Status = "following the native logs of the apps listed on each device (NATIVE_APPS, the app ids the project names, and the apps of the sessions: see appIds)"
	}
	if c := st.LastCrash; c != nil {
		h.LastCrash = &healthNativeCrash{App: c.App, Device: c.Device, Kind: c.Kind, At: c.At.UTC().Format(timeFormat), Summary: c.Summary}
	}
	for _, a := range st.AppIDs {
		h.AppIDs = append(h.AppIDs, healthNativeAppID(a))
	}
	if e := st.LastEnd; e != nil {
		h.LastEnd = &healthNativeEnd{App: e.App, Device: e.Device, How: e.How, Kind: e.Kind, PID: e.PID,
			At: e.At.UTC().Format(timeFormat), Reason: e.Reason}
	}
	return h
}
