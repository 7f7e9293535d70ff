package main

// native_adb.go is what is Android's own: `adb devices -l` read into
// devices, the apps' pids looked up with `pidof` (and learnt early from
// ActivityManager's `Start proc` line, so that a crash at launch is not
// missed), and logcat lines kept only when they are the apps' own (those
// logged before their pid was known included: native_pending.go).

import (
	"context"
	"errors"
	"os/exec"
	"strconv"
	"strings"
	"time"
)

// listAndroid runs `adb devices -l`.
func (f *nativeFollower) listAndroid(ctx context.Context) ([]nativeDeviceStatus, error) {
	out, err := f.runner.output(ctx, adbDevicesCommand())
	if err != nil {
		return nil, err
	}
	return parseADBDevices(string(out)), nil
}

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
		if d.State == "no" && len(fields) > 2 { // "no permissions (…)"
			d.State = "no permissions"
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

// parsePidof reads pidof's output: pids separated by spaces.
func parsePidof(out string) []int {
	var pids []int
	for _, f := range strings.Fields(out) {
		if n, err := strconv.Atoi(f); err == nil && n > 0 && len(pids) < 64 {
			pids = append(pids, n)
		}
	}
	return pids
}

// lookUpPIDs looks up the followed apps' pids every poll until ctx ends.
func (d *nativeDevice) lookUpPIDs(ctx context.Context) {
	timer := time.NewTimer(0)
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-timer.C:
		}
		for _, app := range d.followedApps() {
			cmd, err := adbPidofCommand(d.id, app)
			if err != nil {
				continue
			}
			out, err := d.follower.runner.output(ctx, cmd)
			var exit *exec.ExitError
			switch {
			case ctx.Err() != nil:
				return
			case errors.As(err, &exit) && exit.ExitCode() == 1:
				d.setPIDs(app, nil) // pidof: no such process
			case err == nil:
				d.setPIDs(app, parsePidof(string(out)))
			}
		}
		timer.Reset(d.follower.pollEvery)
	}
}

// setPIDs installs app's pids, telling the sink when its last process
// has gone, and waking the consumer when a pid is new: the lines that pid
// logged before it was known are waiting (native_pending.go).
func (d *nativeDevice) setPIDs(app string, pids []int) {
	d.mu.Lock()
	if d.pids == nil {
		d.pids, d.pidApp = map[string][]int{}, map[int]string{}
	}
	had := len(d.pids[app]) > 0
	added := false
	for _, pid := range pids {
		added = added || d.pidApp[pid] != app
	}
	for _, old := range d.pids[app] {
		delete(d.pidApp, old)
	}
	d.pids[app] = pids
	for _, pid := range pids {
		d.pidApp[pid] = app
	}
	if len(pids) > 0 {
		d.markRunningLocked(app)
	}
	if added {
		d.pidGen++
	}
	d.mu.Unlock()
	if had && len(pids) == 0 {
		d.appEnded(app) // told once the app's last lines (its crash) are delivered
	}
	if added {
		select {
		case d.pidWake <- struct{}{}:
		default: // a wake is pending already
		}
	}
}

// learnPID adds a pid of app seen in the log before pidof could tell.
func (d *nativeDevice) learnPID(app string, pid int) {
	if !d.follows(app) {
		return
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.pids == nil {
		d.pids, d.pidApp = map[string][]int{}, map[int]string{}
	}
	if d.pidApp[pid] == app {
		return
	}
	d.pids[app] = append(d.pids[app], pid)
	d.pidApp[pid] = app
	d.pidGen++
	d.markRunningLocked(app)
}

func (d *nativeDevice) appOf(pid int) string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.pidApp[pid]
}

// pidGeneration changes whenever a pid is added to an app's.
func (d *nativeDevice) pidGeneration() uint64 {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.pidGen
}

// androidIntake parses logcat lines into the assembler.
type androidIntake struct {
	device *nativeDevice
	asm    *logcatAssembler
}

func newAndroidIntake(d *nativeDevice) *androidIntake {
	asm := newLogcatAssembler(d.appOf, d.follows, d.emit)
	asm.pidGeneration = d.pidGeneration
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

func (in *androidIntake) flush(now time.Time, all bool) { in.asm.flush(now, all) }
func (in *androidIntake) nextFlush() (time.Time, bool)  { return in.asm.nextFlush() }
