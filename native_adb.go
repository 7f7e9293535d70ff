package main

// native_adb.go is what is Android's own: `adb devices -l` read into
// devices, the apps' pids looked up with `pidof` (and learnt early from
// ActivityManager's `Start proc` line, so that a crash at launch is not
// missed), and logcat lines kept only when they are the apps' own (those
// logged before their pid was known included: native_pending.go).

import (
	"cmp"
	"context"
	"errors"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"time"
)

// parseADBDevices reads `adb devices -l`: `List of devices attached`, then
// `SERIAL<spaces>STATE key:value…` lines. Serials the closed list would
// refuse are left out.
func parseADBDevices(out string) []nativeDeviceStatus {
	var devices []nativeDeviceStatus
	for line := range strings.SplitSeq(out, "\n") {
		fields := strings.Fields(line)
		if len(fields) < 2 || strings.HasPrefix(line, "List of devices") || strings.HasPrefix(line, "*") ||
			!validDeviceSerial(fields[0]) || len(devices) == maxNativeDevices {
			continue
		}
		d := nativeDeviceStatus{Platform: nativeAndroid, ID: fields[0], State: fields[1]}
		if d.State == "no" && len(fields) > 2 { // "no permissions (user … not in the plugdev group); see [url]"
			d.State = "no permissions"
			d.Said = noPermissionsWhy(line)
		}
		for _, kv := range fields[2:] {
			if model, ok := strings.CutPrefix(kv, "model:"); ok {
				d.Name = cleanLogText(model)
			}
		}
		devices = append(devices, d)
	}
	return devices
}

// noPermissionsWhy is adb's reason in a `no permissions (…)` line of the
// listing, "" when there is none or it is over maxStderrLine.
func noPermissionsWhy(line string) string {
	_, rest, _ := strings.Cut(line, "no permissions (")
	why, _, ok := strings.Cut(rest, ")")
	why = strings.TrimSpace(cleanLogText(why))
	if !ok || len(why) > maxStderrLine {
		return ""
	}
	return why
}

// parsePidof reads pidof's output: pids separated by spaces.
func parsePidof(out string) []int {
	var pids []int
	for _, f := range strings.Fields(out) {
		if n, err := strconv.Atoi(f); err == nil && n > 0 && len(pids) < maxAppPIDs {
			pids = append(pids, n)
		}
	}
	return pids
}

// maxAppPIDs bounds the pids kept per app, looked up or learnt.
const maxAppPIDs = 64

// lookUpPIDs looks up the followed apps' pids every poll until ctx ends.
// pidof runs and names the pids; or it runs and names none (exit status 1
// with nothing on stderr, or nothing at all from a device without
// shell_v2, which carries no status); or adb cannot ask (its own `error:
// device offline`, `unauthorized`, `not found`, `more than one device`,
// `closed`, all exit status 1 too, or a timeout): that says nothing about
// the app, whose pids stay, and the device notes why.
func (d *nativeDevice) lookUpPIDs(ctx context.Context) {
	d.everyPoll(ctx, func() {
		apps := d.followedApps()
		d.forgetUnfollowed(apps)
		for _, app := range apps {
			cmd, err := adbPidofCommand(d.id, app)
			if err != nil {
				continue
			}
			since := d.pidGeneration()
			out, err := d.follower.runner.output(ctx, cmd)
			if ctx.Err() != nil {
				return
			}
			var exit *exec.ExitError
			if errors.As(err, &exit) && exit.ExitCode() == 1 && saidOnStderr(err) == "" {
				out, err = nil, nil // it named none
			}
			if d.asked(err) {
				d.setPIDsSince(app, parsePidof(string(out)), since)
			}
		}
	})
}

func (d *nativeDevice) everyPoll(ctx context.Context, look func()) {
	look()
	every(ctx, d.follower.pollEvery, func() bool { look(); return true })
}

// asked reports whether a lookup that ended in err could ask the device,
// and keeps why not: the tool's words on stderr, else err ("" once it could).
func (d *nativeDevice) asked(err error) bool {
	said := cmp.Or(saidOnStderr(err), errText(err))
	d.mu.Lock()
	d.askFailed = said
	d.mu.Unlock()
	return err == nil
}

// setListingSaid takes the listing's words beside the device's state
// (`no permissions (…)`): they are why adb cannot ask it until a lookup
// can, or a listing shows the device ready, which clears them (a device
// with no followed app is never looked up).
func (d *nativeDevice) setListingSaid(said string, ready bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	switch {
	case said != "":
		d.askFailed, d.listingSaid = said, said
	case ready && d.listingSaid != "":
		if d.askFailed == d.listingSaid {
			d.askFailed = ""
		}
		d.listingSaid = ""
	}
}

// setPIDsSince installs app's pids from a lookup asked when the pid
// generation was since: a pid it does not name is dropped, unless the log
// taught it after the lookup was asked (its process may be newer than the
// answer).
func (d *nativeDevice) setPIDsSince(app string, pids []int, since uint64) {
	d.mu.Lock()
	keep := slices.Clone(pids[:min(len(pids), maxAppPIDs)])
	for _, old := range d.pids[app] {
		if d.learnt[old] > since && !slices.Contains(keep, old) && len(keep) < maxAppPIDs {
			keep = append(keep, old)
		}
	}
	// An app running by its lines alone (a verdict or a tombstone read
	// after its last process had gone) ends too, or its session stays live.
	had := len(d.pids[app]) > 0 || d.running[app]
	added := slices.ContainsFunc(keep, func(pid int) bool { return d.pidApp[pid] != app })
	for _, old := range d.pids[app] {
		if !slices.Contains(keep, old) {
			d.forgetPIDLocked(app, old)
		}
	}
	var emptied []string
	for _, pid := range keep {
		emptied = append(emptied, d.ownPIDLocked(app, pid)...)
	}
	d.pids[app] = keep
	if len(keep) > 0 {
		d.running[app] = true
	}
	if added {
		d.pidGen++
	}
	d.mu.Unlock()
	if had && len(keep) == 0 {
		emptied = append(emptied, app)
	}
	d.pidsChanged(emptied, added)
}

func (d *nativeDevice) pidsChanged(emptied []string, added bool) {
	for _, app := range emptied {
		d.appEnded(app)
	}
	if added {
		wake(d.pidWake)
	}
}

// forgetPIDLocked unmaps pid from app, never from another app that owns
// it now. The caller holds mu and updates app's list.
func (d *nativeDevice) forgetPIDLocked(app string, pid int) {
	if d.pidApp[pid] == app {
		delete(d.pidApp, pid)
		delete(d.learnt, pid)
	}
}

// ownPIDLocked maps pid to app, taking it from the app that had it (the
// system gave that process's pid to app's): it returns that app when it
// has no pid left. The caller holds mu and adds pid to app's list.
func (d *nativeDevice) ownPIDLocked(app string, pid int) (emptied []string) {
	if d.pidApp[pid] != app {
		emptied = d.dropPIDLocked(pid)
	}
	d.pidApp[pid] = app
	return emptied
}

// dropPIDLocked takes pid from the app that has it, if any, and returns
// that app when it has no pid left. The caller holds mu.
func (d *nativeDevice) dropPIDLocked(pid int) (emptied []string) {
	other := d.pidApp[pid]
	if other == "" {
		return nil
	}
	d.pids[other] = slices.DeleteFunc(slices.Clone(d.pids[other]), func(p int) bool { return p == pid })
	d.forgetPIDLocked(other, pid)
	if len(d.pids[other]) == 0 {
		return []string{other}
	}
	return nil
}

// learnPID takes a process start the log shows (ActivityManager's `Start
// proc PID:PACKAGE`) before pidof could tell: the pid is app's when app is
// followed; otherwise the pid is no longer any followed app's, whose
// process with that pid has gone.
func (d *nativeDevice) learnPID(app string, pid int) {
	follows := d.follows(app)
	d.mu.Lock()
	var emptied []string
	switch {
	case !follows:
		emptied = d.dropPIDLocked(pid)
	case d.pidApp[pid] != app:
		if n := len(d.pids[app]); n >= maxAppPIDs { // the oldest goes
			d.forgetPIDLocked(app, d.pids[app][0])
			d.pids[app] = slices.Clone(d.pids[app][n-maxAppPIDs+1:])
		}
		emptied = d.ownPIDLocked(app, pid)
		d.pids[app] = append(d.pids[app], pid)
		d.pidGen++
		d.learnt[pid] = d.pidGen
		d.running[app] = true
	}
	d.mu.Unlock()
	d.pidsChanged(emptied, false)
}

func (d *nativeDevice) forgetUnfollowed(apps []string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	for app, pids := range d.pids {
		if !slices.Contains(apps, app) {
			for _, pid := range pids {
				d.forgetPIDLocked(app, pid)
			}
			delete(d.pids, app)
		}
	}
}

// appOf is the followed app whose pid set holds pid now, "" for none.
func (d *nativeDevice) appOf(pid int) string {
	d.mu.Lock()
	defer d.mu.Unlock()
	if app := d.pidApp[pid]; slices.Contains(d.pids[app], pid) {
		return app
	}
	return ""
}

func (d *nativeDevice) pidGeneration() uint64 {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.pidGen
}

// androidIntake parses logcat lines into the assembler. live, when set,
// is the follow's ctx.Done(): while it is open, an app's end waits for the
// tombstone of its native crash (holdEnds), so that the crash is one entry
// before the end, not the signal line alone and the tombstone after it.
type androidIntake struct {
	device *nativeDevice
	asm    *logcatAssembler
	live   <-chan struct{}
}

func newAndroidIntake(d *nativeDevice) *androidIntake {
	asm := newLogcatAssembler(d.appOf, d.follows, d.pending.add)
	asm.pidGeneration = d.pidGeneration
	asm.waits = nativeFlushWaits(d.follower.cfg.Tune.NativeFlush)
	return &androidIntake{device: d, asm: asm}
}

func (in *androidIntake) add(line []byte, now time.Time) {
	l, err := parseLogcatLine(string(line))
	if err != nil {
		return // `--------- beginning of crash`, garbage
	}
	if l.Tag == "ActivityManager" {
		if pid, pkg, ok := activityStartProc(l.Message); ok {
			in.device.learnPID(pkg, pid)
		}
	}
	in.asm.add(l, now)
}

func (in *androidIntake) flush(now time.Time, all bool) {
	live := in.live != nil && !isClosed(in.live) // else the follow ends: everything goes out
	in.asm.flush(now, all, live)
	if live {
		in.device.holdEnds(in.asm.tombstoneWaits())
	}
}

func (in *androidIntake) nextFlush() (time.Time, bool) { return in.asm.nextFlush() }
