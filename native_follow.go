package main

// native_follow.go follows the native logs of the apps the server knows:
// every online Android device that adb lists and, on macOS, every booted
// iOS simulator. The apps are NATIVE_APPS, the ids the project names
// (native_project.go) and the package or bundle ids the sessions name
// (Metro's app id, an adapter's app.bundleId). What becomes of their lines,
// and who owns what, is told at the top of native_device.go.

import (
	"cmp"
	"context"
	"errors"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sync"
	"time"
)

const (
	// nativePollEvery is how often devices are listed and pids looked up.
	nativePollEvery = 2 * time.Second
	// nativeIntake bounds the lines waiting to be read, per device.
	nativeIntake = 4096
	// maxNativeApps and maxNativeDevices (Android's) bound what is followed at once.
	maxNativeApps    = 32
	maxNativeDevices = 16
	// nativeServerGracePolls is how many polls after an adb command
	// started the adb server (again) a device it does not list is kept: a
	// new server lists a USB device within a second or two, one over Wi-Fi
	// once it is connected again.
	nativeServerGracePolls = 10
)

// Where a native entry is kept: a `log` event of the console stream, as
// every link keeps an app's console.
const (
	nativeStream    = "console"
	nativeEventType = "log"
)

const (
	nativeAndroid = "android"
	nativeIOS     = "ios"
)

// nativeApp is one app on one device.
type nativeApp struct {
	Platform   string // nativeAndroid or nativeIOS
	DeviceID   string // the serial or udid
	DeviceName string // the model or simulator name ("" when unknown)
	AppID      string // the package or bundle id

	SameNameAs []string // the other listed devices of the platform with DeviceName (native_samename.go)
}

// nativeSink is where the native side reports the apps' entries.
type nativeSink interface {
	// nativeAppIDs lists the package and bundle ids that sessions name.
	nativeAppIDs() []string
	// deliverNative files entries of app, oldest first.
	deliverNative(app nativeApp, entries []nativeEntry)
	// nativeAppEnded reports that app has no process left on its device.
	nativeAppEnded(app nativeApp)
}

// nativeAppStatus is one followed app's processes on a device.
type nativeAppStatus struct {
	ID   string
	PIDs []int
}

// nativeDeviceStatus is one listed device.
type nativeDeviceStatus struct {
	Platform, ID, Name, State string
	Following                 bool
	Apps                      []nativeAppStatus
	Dropped                   int64  // lines dropped at intake
	Ended                     string // why its log stream last ended (it is restarted after), "" if it never has
	Said                      string // adb's words beside its state in the listing ("user in plugdev group; …")
	AskFailed                 string // adb's words when it last could not ask the device, "" once it could
}

// nativeCrashStatus is the last crash seen.
type nativeCrashStatus struct {
	App, Device, Kind string
	At                time.Time
	Summary           string // the crash's headline (the exception, the signal)
}

// nativeStatus is the native side for debug_health_check.
type nativeStatus struct {
	ADB, Xcrun string // the tools found; "" when not
	ListError  string // why the last device listing failed; what is followed stays so
	// ADBServer is the last adb server start an adb command of ours made (zero: none).
	ADBServer nativeServerStart
	// LogTags is ANDROID_LOG_TAGS as it was set, ignored ("" when unset).
	LogTags   string
	Devices   []nativeDeviceStatus
	CutLines  int64
	LastCrash *nativeCrashStatus
	AppIDs    []nativeAppSource // the apps followed, and where each came from
	LastEnd   *nativeEndStatus  // how an app last ended
}

// nativeFollower finds devices and follows each. run must be called once;
// status is safe at any time.
type nativeFollower struct {
	cfg         config
	logger      *slog.Logger
	sink        nativeSink
	runner      *nativeRunner
	pollEvery   time.Duration
	serverGrace time.Duration // nativeServerGracePolls polls

	mu        sync.Mutex
	devices   map[string]*nativeDevice // by platform + id
	listError string
	lastCrash *nativeCrashStatus // replaced, never changed: status hands it out

	project projectAppIDs // the apps followed and where they came from (native_project.go)
	ends    appEnds       // how the apps last ended (native_verdict.go)
	// projectRoot is the project the app ids are read from: the one Metro
	// names, else PROJECT_DIR, else the working directory, as the release
	// maps' (serve sets it to theirs); nil reads PROJECT_DIR.
	projectRoot func() string
}

// nativeToolPaths finds adb and xcrun: the settings, else for adb the
// Android SDK's (ANDROID_HOME, then ANDROID_SDK_ROOT), else PATH. A tool not
// found is left out.
func nativeToolPaths(cfg config, getenv func(string) string) map[string]string {
	paths := map[string]string{}
	find := func(tool, setting string, candidates ...string) {
		if setting == "" {
			for _, c := range candidates {
				if info, err := os.Stat(c); err == nil && !info.IsDir() && info.Mode()&0o111 != 0 {
					paths[tool] = c
					return
				}
			}
		}
		if p, err := exec.LookPath(cmp.Or(setting, tool)); err == nil {
			paths[tool] = p
		}
	}
	sdk := func(env string) string {
		if dir := getenv(env); dir != "" {
			return filepath.Join(dir, "platform-tools", "adb")
		}
		return ""
	}
	find(nativeToolADB, cfg.ADBPath, sdk("ANDROID_HOME"), sdk("ANDROID_SDK_ROOT"))
	find(nativeToolXcrun, cfg.XcrunPath)
	return paths
}

func newNativeFollower(cfg config, logger *slog.Logger, sink nativeSink, paths map[string]string) *nativeFollower {
	runner := newNativeRunner(paths)
	if poll := cfg.Tune.NativePoll; poll > 0 {
		runner.minBackoff, runner.maxBackoff = poll, 4*poll
	}
	poll := cmp.Or(cfg.Tune.NativePoll, nativePollEvery)
	return &nativeFollower{cfg: cfg, logger: logger.With("component", "native"), sink: sink,
		runner: runner, pollEvery: poll, serverGrace: nativeServerGracePolls * poll, devices: map[string]*nativeDevice{}}
}

// run lists devices until ctx ends, following each, then ends every
// follower and returns once their goroutines and children have.
func (f *nativeFollower) run(ctx context.Context) {
	var wg sync.WaitGroup
	defer wg.Wait()
	list := func() bool {
		apps := f.apps()
		var listed []nativeDeviceStatus
		listErrs := map[string]error{}
		for _, l := range nativeListings {
			if f.runner.paths[l.cmd.tool] == "" {
				continue
			}
			out, err := f.runner.output(ctx, l.cmd)
			var devices []nativeDeviceStatus
			if err == nil {
				devices, err = l.parse(out)
			}
			listed, listErrs[l.platform] = append(listed, devices...), err
		}
		if ctx.Err() != nil {
			return false
		}
		f.reconcile(ctx, &wg, listed, apps, listErrs)
		return true
	}
	if list() {
		every(ctx, f.pollEvery, list)
	}
}

// nativeListings are the device listings, one a platform, run when their tool was found.
var nativeListings = []struct {
	platform string
	cmd      nativeCommand
	parse    func(out []byte) ([]nativeDeviceStatus, error)
}{
	{nativeAndroid, fromTemplate(cmdADBDevices), func(out []byte) ([]nativeDeviceStatus, error) { return parseADBDevices(string(out)), nil }},
	{nativeIOS, fromTemplate(cmdSimctlList), parseSimctlDevices},
}

// apps is the apps to follow (see above), at most maxNativeApps.
func (f *nativeFollower) apps() []string {
	var sources []nativeAppSource
	for _, id := range f.cfg.NativeApps {
		sources = append(sources, nativeAppSource{ID: id, From: appFromSetting})
	}
	root := f.cfg.ProjectDir
	if f.projectRoot != nil {
		root = f.projectRoot()
	}
	sources = append(sources, f.project.read(root)...)
	for _, id := range f.sink.nativeAppIDs() {
		sources = append(sources, nativeAppSource{ID: id, From: appFromSession})
	}
	return f.project.keep(sources)
}

// reconcile starts a follower for each device newly online and ends the
// followers of devices gone; every follower learns the apps to follow.
// listErrs holds why a platform's listing failed: such a listing says
// nothing of that platform's devices, which stay as they are. A device
// not ready (offline, unauthorized) keeps its apps (keepApps).
func (f *nativeFollower) reconcile(ctx context.Context, wg *sync.WaitGroup, listed []nativeDeviceStatus, apps []string, listErrs map[string]error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.listError = errText(errors.Join(listErrs[nativeAndroid], listErrs[nativeIOS]))
	seen := map[string]bool{}
	for _, d := range listed {
		key := d.Platform + "/" + d.ID
		seen[key] = true
		dev := f.devices[key]
		if dev == nil {
			dev = newNativeDevice(f, d.Platform, d.ID)
			f.devices[key] = dev
		}
		dev.setListingSaid(d.Said, d.State == "device") // before the state, which the health check reads with it
		dev.setListed(d.Name, d.State, apps)
		if d.State == "device" && dev.cancel == nil && dev.finished() {
			dev.keepApps.Store(false)
			devCtx, cancel := context.WithCancel(ctx)
			dev.cancel = cancel
			done := make(chan struct{})
			dev.done = done
			wg.Go(func() {
				defer close(done)
				dev.follow(devCtx)
			})
		} else if d.State != "device" && dev.cancel != nil {
			dev.keepApps.Store(true)
			dev.stop()
		}
	}
	f.reconcileUnlisted(wg, seen, listErrs)
}

// reconcileUnlisted ends the followers of devices a listing left out,
// unless that listing failed or a new adb server may not list them yet.
// The caller holds mu.
func (f *nativeFollower) reconcileUnlisted(wg *sync.WaitGroup, seen map[string]bool, listErrs map[string]error) {
	started := f.runner.serverStart().At
	newServer := !started.IsZero() && f.runner.now().Sub(started) < f.serverGrace
	for key, dev := range f.devices {
		if seen[key] || listErrs[dev.platform] != nil {
			continue
		}
		if dev.platform == nativeAndroid && newServer {
			dev.keepApps.Store(true)
			dev.stop()
			dev.setListed(dev.name, "unlisted", nil)
			continue
		}
		// A device gone stays listed until its follower has ended, so that
		// it is never followed twice should it come back at once. Its apps
		// end: by its follow's end, or here if they were kept.
		dev.keepApps.Store(false)
		dev.stop()
		if dev.finished() {
			delete(f.devices, key)
			wg.Go(dev.endAll)
		} else {
			dev.setListed(dev.name, "gone", nil)
		}
	}
}

// noteCrash keeps the last crash for the health check.
func (f *nativeFollower) noteCrash(app nativeApp, e nativeEntry) {
	summary := clipText(crashHeadline(e.Crash, splitLines(e.Message, 4)), 300)
	f.mu.Lock()
	f.lastCrash = &nativeCrashStatus{App: app.AppID, Device: cmp.Or(app.DeviceName, app.DeviceID), Kind: e.Crash, At: e.At,
		Summary: summary}
	f.mu.Unlock()
	f.logger.Info("the app crashed", "app", app.AppID, "device", app.DeviceID, "kind", e.Crash, "summary", summary)
}

func (f *nativeFollower) status() nativeStatus {
	f.mu.Lock()
	defer f.mu.Unlock()
	st := nativeStatus{ADB: f.runner.paths[nativeToolADB], Xcrun: f.runner.paths[nativeToolXcrun], ListError: f.listError,
		CutLines: f.runner.cutLines.Load(), ADBServer: f.runner.serverStart(), LogTags: f.runner.logTags}
	st.AppIDs, st.LastEnd, st.LastCrash = f.project.followed(), f.ends.last(), f.lastCrash
	for _, dev := range f.devices {
		st.Devices = append(st.Devices, dev.status())
	}
	slices.SortFunc(st.Devices, func(a, b nativeDeviceStatus) int {
		return cmp.Or(cmp.Compare(a.Platform, b.Platform), cmp.Compare(a.ID, b.ID))
	})
	return st
}
