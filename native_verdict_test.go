package main

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestAndroidVerdicts: system_server's and lmkd's verdicts about the app,
// written under their own pids, become the app's entries, attributed by
// the package and pid they name: the ANR block as one error entry with its
// PID and Reason, the kills and deaths and the force stop one entry each.
// Another package's verdicts (com.other.app, com.example.shopping) and
// system_server's other lines are not the app's.
func TestAndroidVerdicts(t *testing.T) {
	t.Parallel()
	got := replayLogcat(t, readTestdata(t, "native", "release", "verdicts.logcat"), nil)
	type want struct {
		end, level, start string
		pid               int
	}
	wants := []want{
		{nativeEndANR, "error", "ANR in com.example.shop (com.example.shop/.MainActivity)\nPID: 5500\nReason: Input dispatching timed out", 5500},
		{nativeEndKilled, "warn", "Killing 5500:com.example.shop/u0a190 (adj 0): user request after error", 5500},
		{nativeEndDied, "info", "Process com.example.shop (pid 5500) has died: fg  TOP", 5500},
		{nativeEndLowMemory, "warn", "Kill 'com.example.shop' (5600), uid 10190, oom_score_adj 900 to free 81234kB rss, 12345kB swap; reason: low watermark", 5600},
		{nativeEndDied, "info", "Process com.example.shop (pid 5600) has died: cch+75 CEM", 5600},
		{nativeEndStopped, "info", "Force stopping com.example.shop appid=10190 user=0: from pid 8123", 0},
		{nativeEndKilled, "warn", "Killing 5700:com.example.shop/u0a190 (adj 0): stop com.example.shop", 5700},
		{nativeEndDied, "info", "Process com.example.shop (pid 5700) has died: fg  TOP", 5700},
	}
	if len(got) != len(wants) {
		t.Fatalf("want %d entries, got %d: %+v", len(wants), len(got), got)
	}
	for i, w := range wants {
		e := got[i]
		if e.End != w.end || e.Level != w.level || e.PID != w.pid || !strings.HasPrefix(e.Message, w.start) || e.Crash != "" {
			t.Errorf("entry %d: %+v\nwant %+v", i, e, w)
		}
		if strings.Contains(e.Message, "com.other.app") || strings.Contains(e.Message, "shopping") || strings.Contains(e.Message, "InputDispatcher") {
			t.Errorf("entry %d holds another app's verdict: %q", i, e.Message)
		}
	}
	if anr := got[0].Message; !strings.HasSuffix(anr, "12% TOTAL: 11% user + 1% kernel") || strings.Count(anr, "\n") != 12 || got[0].Tag != "ActivityManager" {
		t.Errorf("the ANR block is not whole: %q", anr)
	}
}

// TestAppsOwnLineIsNoVerdict: any process may log under ActivityManager
// or lowmemorykiller: a line the app writes itself is its ordinary line,
// not a verdict about it; system_server's same line is one.
func TestAppsOwnLineIsNoVerdict(t *testing.T) {
	t.Parallel()
	got := replayLogcat(t, `11-27 07:20:00.000  5400  5400 I ActivityManager: Process com.example.shop (pid 5400) has died: fg  TOP
11-27 07:20:01.000  5400  5410 I lowmemorykiller: Kill 'com.example.shop' (5400), uid 10190, oom_score_adj 0 to free 1kB rss, 1kB swap; reason: none
11-27 07:20:02.000   612   990 I ActivityManager: Process com.example.shop (pid 5400) has died: fg  TOP`, map[int]string{5400: "com.example.shop"})
	if len(got) != 3 || got[0].End != "" || got[1].End != "" || got[2].End != nativeEndDied || got[2].PID != 5400 {
		t.Errorf("want the app's two own lines, then system_server's verdict: %+v", got)
	}
}

// TestAppLastEnd: the health check's last end is the most telling verdict:
// the kill and the death that follow an ANR, a low-memory kill or a force
// stop leave it; a new verdict after that replaces it; a crash is
// "crashed" with its kind and headline.
func TestAppLastEnd(t *testing.T) {
	t.Parallel()
	got := replayLogcat(t, readTestdata(t, "native", "release", "verdicts.logcat"), nil)
	app := nativeApp{Platform: nativeAndroid, DeviceID: "emulator-5554", AppID: "com.example.shop"}
	var ends appEnds
	if ends.last() != nil {
		t.Fatal("an end before any")
	}
	steps := []struct {
		upto       int
		how        string
		pid        int
		reasonPart string
	}{
		{3, nativeEndANR, 5500, "Input dispatching timed out (6f2e1a"},
		{5, nativeEndLowMemory, 5600, "reason: low watermark is breached"},
		{8, nativeEndStopped, 0, "Force stopping com.example.shop appid=10190 user=0: from pid 8123"},
	}
	done := 0
	for _, s := range steps {
		for ; done < s.upto; done++ {
			ends.note(app, got[done])
		}
		e := ends.last()
		if e == nil || e.How != s.how || e.PID != s.pid || !strings.Contains(e.Reason, s.reasonPart) || e.App != "com.example.shop" || e.Device != "emulator-5554" {
			t.Errorf("after %d entries: %+v, want %s pid %d with %q", s.upto, e, s.how, s.pid, s.reasonPart)
		}
	}
	crash := replayLogcat(t, readTestdata(t, "native", "release", "js-crash.logcat"), map[int]string{5400: "com.example.shop"})
	for _, e := range crash {
		if e.Crash != "" || e.End != "" {
			ends.note(app, e)
		}
	}
	if e := ends.last(); e == nil || e.How != nativeEndCrash || e.Kind != nativeCrashJS || e.Reason != jsCrashMessage || e.PID != 5400 {
		t.Errorf("after the JavaScript crash and its death: %+v", e)
	}
	h := describeNative(nativeStatus{LastEnd: ends.last(), AppIDs: []nativeAppSource{{ID: "com.example.shop", From: appFromSetting}}})
	if h.LastEnd == nil || h.LastEnd.How != "crashed" || h.LastEnd.Kind != "javascript" || h.LastEnd.At != "2026-11-27T07:10:01.210Z" ||
		len(h.AppIDs) != 1 || h.AppIDs[0].From != "NATIVE_APPS" {
		t.Errorf("the health check: %+v %+v", h.LastEnd, h.AppIDs)
	}
}

// TestAppEndsPerDevice: the death that follows an app's ANR is merged
// into it on the same device only: the app dying on another device just
// after is its last end.
func TestAppEndsPerDevice(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 11, 27, 7, 20, 5, 0, time.UTC)
	one := nativeApp{Platform: nativeAndroid, DeviceID: "emulator-5554", DeviceName: "sdk_gphone64_x86_64", AppID: "com.example.shop"}
	two := one
	two.DeviceID = "emulator-5556" // a twin emulator: the same model's name
	anr := nativeEntry{At: at, End: nativeEndANR, PID: 5500, Message: "ANR in com.example.shop\nReason: Input dispatching timed out"}
	died := nativeEntry{At: at.Add(time.Second), End: nativeEndDied, PID: 6600, Message: "Process com.example.shop (pid 6600) has died: cch"}
	var ends appEnds
	ends.note(one, anr)
	ends.note(two, died)
	if e := ends.last(); e == nil || e.How != nativeEndDied || e.DeviceID != "emulator-5556" || e.PID != 6600 {
		t.Errorf("the last end is not the other device's death: %+v", e)
	}
	anr.At, died.At = at.Add(2*time.Second), at.Add(3*time.Second)
	ends.note(two, anr)
	ends.note(two, died)
	if e := ends.last(); e == nil || e.How != nativeEndANR || e.DeviceID != "emulator-5556" {
		t.Errorf("the death after the ANR on the same device replaced it: %+v", e)
	}
}

// FuzzParseAndroidVerdict: a verdict read names a valid package written in
// the line, and a pid written in it; each verdict written as Android
// does reads back its package and pid.
func FuzzParseAndroidVerdict(f *testing.F) {
	for line := range strings.SplitSeq(readTestdata(f, "native", "release", "verdicts.logcat"), "\n") {
		if l, err := parseLogcatLine(line); err == nil {
			f.Add(l.Tag, l.Message, 5400, "com.example.shop", "fg  TOP")
		}
	}
	f.Fuzz(func(t *testing.T, tag, msg string, pid int, pkg, reason string) {
		if v, ok := parseAndroidVerdict(tag, msg); ok {
			if !validNativeAppID(v.Pkg) || !strings.Contains(msg, v.Pkg) || v.PID < 0 || v.PID > 0 && !strings.Contains(msg, strconv.Itoa(v.PID)) {
				t.Fatalf("%s: %q read as %+v", tag, msg, v)
			}
		}
		if pid <= 0 || !validNativeAppID(pkg) {
			return
		}
		reason = oneLine(reason)
		for _, c := range []struct {
			tag, line, end string
			pid            int
		}{
			{"ActivityManager", fmt.Sprintf("ANR in %s (%s/.MainActivity)", pkg, pkg), nativeEndANR, 0},
			{"ActivityManager", fmt.Sprintf("Process %s (pid %d) has died: %s", pkg, pid, reason), nativeEndDied, pid},
			{"ActivityManager", fmt.Sprintf("Killing %d:%s/u0a190 (adj 900): %s", pid, pkg, reason), nativeEndKilled, pid},
			{"ActivityManager", fmt.Sprintf("Force stopping %s appid=10190 user=0: %s", pkg, reason), nativeEndStopped, 0},
			{"lowmemorykiller", fmt.Sprintf("Kill '%s' (%d), uid 10190, oom_score_adj 900 to free 1kB rss; reason: %s", pkg, pid, reason), nativeEndLowMemory, pid},
			{"lmkd", fmt.Sprintf("Kill '%s:remote' (%d), uid 10190, oom_score_adj 900", pkg, pid), nativeEndLowMemory, pid},
		} {
			v, ok := parseAndroidVerdict(c.tag, c.line)
			if !ok || v.Pkg != pkg || v.PID != c.pid || v.End != c.end {
				t.Fatalf("%s: %q read as %+v, %v", c.tag, c.line, v, ok)
			}
		}
	})
}

var _ = time.Second
