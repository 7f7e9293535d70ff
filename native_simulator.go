package main

// native_simulator.go is what is the iOS simulator's own: each log event
// (native_simctl.go reads them, and the listings) attributed to a followed
// app by what it says of its process: a subsystem under the bundle id, or
// an executable inside the app's bundle (Shop.app for com.example.shop:
// namesApp); and the apps' processes tracked as Android's are
// (native_adb.go): learnt from the app's own log events, and looked up
// with `launchctl list` in the simulator every poll, so that an app that
// exits while its simulator stays booted ends, and a relaunch starts again.

import (
	"context"
	"path"
	"strings"
	"time"
)

// lookUpSimApps is the simulator's lookUpPIDs: a failed listing changes nothing.
func (d *nativeDevice) lookUpSimApps(ctx context.Context) {
	cmd, err := deviceCommand(cmdSimctlApps, d.id)
	if err != nil {
		return
	}
	d.everyPoll(ctx, func() {
		since, apps := d.pidGeneration(), d.followedApps()
		out, err := d.follower.runner.output(ctx, cmd)
		if ctx.Err() != nil || !d.asked(err) {
			return
		}
		running := parseLaunchctlList(string(out), apps)
		for _, app := range apps {
			d.setPIDsSince(app, running[app], since)
		}
	})
}

// simAppOf names the followed app an event belongs to, "" for none.
func simAppOf(l simLogLine, apps []string) string {
	bundle := simAppBundleName(l.ImagePath)
	for _, app := range apps {
		if l.Subsystem == app || strings.HasPrefix(l.Subsystem, app+".") || (bundle != "" && namesApp(bundle, app)) {
			return app
		}
	}
	return ""
}

// namesApp is the one rule, here and in session_sameapp.go, by which a name
// (a bundle's, an adapter's) names the app appID: the id or its last
// dot-separated part, compared by appNameKey ("Shop" ~ "com.example.shop").
func namesApp(name, appID string) bool {
	key := appNameKey(name)
	return key != "" && (key == appNameKey(appID) || key == appNameKey(appID[strings.LastIndexByte(appID, '.')+1:]))
}

// appNameKey lowercases s and drops spaces, dots, dashes and underscores:
// app names compared so match however a tool spells them.
func appNameKey(s string) string {
	return strings.Map(func(r rune) rune {
		switch r {
		case ' ', '.', '-', '_':
			return -1
		}
		return r
	}, strings.ToLower(s))
}

// simIntake parses ndjson events into the assembler.
type simIntake struct {
	device *nativeDevice
	asm    *simAssembler
}

func newSimIntake(d *nativeDevice) *simIntake {
	asm := newSimAssembler(d.pending.add)
	asm.waits = nativeFlushWaits(d.follower.cfg.Tune.NativeFlush)
	return &simIntake{device: d, asm: asm}
}

func (in *simIntake) add(line []byte, now time.Time) {
	l, err := parseSimLogLine(line)
	if err != nil {
		return // the "Filtering the log data …" line, anything not JSON
	}
	app := simAppOf(l, in.device.followedApps())
	if app == "" {
		return
	}
	if l.PID > 0 && l.PID < 1<<31 && strings.HasSuffix(path.Dir(l.ImagePath), ".app") { // the app's executable, not an extension's
		in.device.learnPID(app, int(l.PID))
	}
	in.asm.add(l, app, now)
}

func (in *simIntake) flush(now time.Time, all bool) { in.asm.flush(now, all) }
func (in *simIntake) nextFlush() (time.Time, bool)  { return in.asm.nextFlush() }
