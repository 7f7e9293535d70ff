package main

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// pendingDevice is an Android device following com.example.shop, with
// no pid known yet, and its intake.
func pendingDevice(t *testing.T) (*nativeDevice, *androidIntake) {
	t.Helper()
	d := newNativeDevice(&nativeFollower{}, nativeAndroid, "emulator-5554")
	d.setListed("sdk_gphone64_x86_64", "device", []string{"com.example.shop"})
	return d, newAndroidIntake(d)
}

// feedIntake adds text's lines one millisecond apart from now, returning
// the time of the last.
func feedIntake(in *androidIntake, text string, now time.Time) time.Time {
	for line := range strings.SplitSeq(strings.TrimRight(text, "\n"), "\n") {
		now = now.Add(time.Millisecond)
		in.add([]byte(line), now)
	}
	return now
}

// emitted lists the device's entries waiting for delivery as "app: message".
func emitted(d *nativeDevice) []string {
	var out []string
	for _, app := range d.pending.apps {
		for _, e := range d.pending.entries[app] {
			out = append(out, app+": "+e.Message)
		}
	}
	return out
}

// logcatBeforePID is what an app logs at launch before its pid is known:
// a console line, then a JavaScript error on three lines with one prefix,
// another process's line between them.
const logcatBeforePID = `11-27 05:30:00.050  4242  4242 I ReactNativeJS: Running "shop" with {"rootTag":1}
11-27 05:30:00.060  4242  4260 E ReactNativeJS: Error: boom, stack:
11-27 05:30:00.060  4242  4260 E ReactNativeJS: checkout@1:2345
11-27 05:30:00.061  3333  3333 I OtherApp: a line of another process
11-27 05:30:00.060  4242  4260 E ReactNativeJS: onPress@1:678
`

var wantBeforePID = []string{
	`com.example.shop: Running "shop" with {"rootTag":1}`,
	"com.example.shop: Error: boom, stack:\ncheckout@1:2345\nonPress@1:678",
}

// TestPendingLinesLearntFromStartProc: lines the app logs before
// ActivityManager's Start proc line names its pid are grouped as usual,
// in order, before its next line; another process's are not kept.
func TestPendingLinesLearntFromStartProc(t *testing.T) {
	t.Parallel()
	d, in := pendingDevice(t)
	now := feedIntake(in, logcatBeforePID+
		"11-27 05:30:00.100  1000  1100 I ActivityManager: Start proc 4242:com.example.shop/u0a123 for activity {com.example.shop/com.example.shop.MainActivity}\n"+
		"11-27 05:30:00.200  4242  4242 I ShopNative: the first line once the pid is known\n",
		time.Date(2026, 11, 27, 5, 30, 0, 0, time.UTC))
	in.flush(now, true)
	want := append(slices.Clone(wantBeforePID), "com.example.shop: the first line once the pid is known")
	if diff := cmp.Diff(want, emitted(d)); diff != "" {
		t.Fatalf("entries (-want +got):\n%s", diff)
	}
	e := d.pending.entries["com.example.shop"][1]
	if e.PID != 4242 || e.TID != 4260 || e.Level != "error" || !e.JSConsole || e.Tag != "ReactNativeJS" {
		t.Errorf("the error's fields: %+v", e)
	}
}

// TestPendingLinesAfterPidof: once pidof names the app's pid, the lines
// it logged before are handed over, on the flush that the new pid wakes
// or before the pid's next line, whichever comes first.
func TestPendingLinesAfterPidof(t *testing.T) {
	t.Parallel()
	for _, then := range []string{"flush", "next line"} {
		t.Run(then, func(t *testing.T) {
			t.Parallel()
			d, in := pendingDevice(t)
			now := feedIntake(in, logcatBeforePID, time.Date(2026, 11, 27, 5, 30, 0, 0, time.UTC))
			in.flush(now, false)
			if got := emitted(d); len(got) != 0 {
				t.Fatalf("entries before the pid is known: %q", got)
			}
			d.setPIDs("com.example.shop", []int{4242})
			select {
			case <-d.pidWake:
			default:
				t.Fatal("a new pid did not wake the consumer")
			}
			d.setPIDs("com.example.shop", []int{4242})
			select {
			case <-d.pidWake:
				t.Fatal("the same pids again woke the consumer")
			default:
			}
			want := slices.Clone(wantBeforePID)
			if then == "next line" {
				now = feedIntake(in, "11-27 05:30:02.000  4242  4242 I ShopNative: after pidof\n", now)
				want = append(want, "com.example.shop: after pidof")
			}
			in.flush(now.Add(nativeIdleFlush), false)
			if diff := cmp.Diff(want, emitted(d)); diff != "" {
				t.Errorf("entries (-want +got):\n%s", diff)
			}
		})
	}
}

// assemblerOf is an assembler whose pids are known's (which the test
// changes), following com.example.shop, and what it emits.
func assemblerOf(known map[int]string) (*logcatAssembler, *[]nativeEntry) {
	var out []nativeEntry
	a := newLogcatAssembler(func(pid int) string { return known[pid] },
		func(pkg string) bool { return pkg == "com.example.shop" },
		func(_ string, e nativeEntry) { out = append(out, e) })
	return a, &out
}

// pendingLineOf is a line of pid whose tid is n, so that no two lines
// are one message.
func pendingLineOf(pid, n int, message string) logcatLine {
	return logcatLine{Stamp: "11-27 05:30:00.000", PID: pid, TID: n, Level: 'I', Tag: "Shop", Message: message}
}

func checkPendingBounds(t *testing.T, a *logcatAssembler) {
	t.Helper()
	if n, b := a.pending.lines.len(), a.pending.lines.bytes; n > maxPendingLines || b > maxPendingBytes {
		t.Fatalf("%d lines, %d bytes kept: beyond %d lines, %d bytes", n, b, maxPendingLines, maxPendingBytes)
	}
}

// TestPendingLinesBounded: a flood of lines of unknown pids keeps at most
// maxPendingLines lines and maxPendingBytes bytes; once the app's pid is
// known, the newest of its lines within the bounds are replayed, in order.
func TestPendingLinesBounded(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		message string
	}{
		{"short lines", "x"},
		{"long lines", strings.Repeat("y", 4000)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			known := map[int]string{}
			a, out := assemblerOf(known)
			now := time.Date(2026, 11, 27, 5, 30, 0, 0, time.UTC)
			const flood = 4 * maxPendingLines
			for i := range flood {
				a.add(pendingLineOf(3000+i%50, i, tc.message), now)
				checkPendingBounds(t, a)
			}
			for i := range flood {
				a.add(pendingLineOf(4242, i, fmt.Sprint(i, tc.message)), now)
				checkPendingBounds(t, a)
			}
			kept := a.pending.lines.len()
			if kept == 0 || a.pending.byPID[4242] != kept {
				t.Fatalf("%d lines kept, %d of the app's: want only the app's newest", kept, a.pending.byPID[4242])
			}
			known[4242] = "com.example.shop"
			a.flush(now, true, false)
			if len(*out) != kept {
				t.Fatalf("%d entries replayed, want the %d lines kept", len(*out), kept)
			}
			for i, e := range *out {
				if want := fmt.Sprint(flood-kept+i, tc.message); e.Message != want {
					t.Fatalf("entry %d is %.20q, want %.20q", i, e.Message, want)
				}
			}
			if a.pending.lines.len() != 0 || a.pending.lines.bytes != 0 || len(a.pending.byPID) != 0 {
				t.Errorf("after the replay: %d lines, %d bytes, %v", a.pending.lines.len(), a.pending.lines.bytes, a.pending.byPID)
			}
		})
	}
}

// TestPendingLineAgesOut: a line more than pendingLineAge older than the
// newest kept is forgotten, and not replayed once its pid is known; one
// just within the age is.
func TestPendingLineAgesOut(t *testing.T) {
	t.Parallel()
	known := map[int]string{}
	a, out := assemblerOf(known)
	start := time.Date(2026, 11, 27, 5, 30, 0, 0, time.UTC)
	a.add(pendingLineOf(4242, 1, "too old"), start)
	a.add(pendingLineOf(4242, 2, "just within the age"), start.Add(time.Millisecond))
	a.add(pendingLineOf(3333, 3, "another process"), start.Add(pendingLineAge+time.Millisecond))
	if a.pending.byPID[4242] != 1 {
		t.Fatalf("%d of the app's lines kept, want 1", a.pending.byPID[4242])
	}
	known[4242] = "com.example.shop"
	a.add(pendingLineOf(4242, 4, "once known"), start.Add(pendingLineAge+2*time.Millisecond))
	a.flush(start.Add(time.Hour), true, false)
	var got []string
	for _, e := range *out {
		got = append(got, e.Message)
	}
	if diff := cmp.Diff([]string{"just within the age", "once known"}, got); diff != "" {
		t.Errorf("entries (-want +got):\n%s", diff)
	}
}

// TestPendingLinesBeforeCrash: an app that crashes before any lookup
// knows its pid still gets the lines it logged before, as entries ahead
// of the crash: a Java crash names the app in its Process line, libc's
// signal line in its last parenthesis.
func TestPendingLinesBeforeCrash(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, pid, crash, headline string
	}{
		{"java", "4242", logcatJavaCrash, "java: FATAL EXCEPTION: main"},
		{"native", "4300", logcatNativeCrash, "native: Fatal signal 11 (SIGSEGV), code 1 (SEGV_MAPERR), fault addr 0x0 in tid 4321 (mqt_js), pid 4300 (com.example.shop)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			a, out := assemblerOf(map[int]string{})
			now := time.Date(2026, 11, 27, 5, 30, 0, 0, time.UTC)
			for line := range strings.SplitSeq(strings.TrimRight(strings.ReplaceAll(logcatBeforePID, "4242", tc.pid)+tc.crash, "\n"), "\n") {
				now = now.Add(time.Millisecond)
				if l, err := parseLogcatLine(line); err == nil {
					a.add(l, now)
				}
			}
			a.flush(now.Add(time.Hour), true, false)
			var got []string
			for _, e := range *out {
				got = append(got, e.Crash+": "+strings.SplitN(e.Message, "\n", 2)[0])
			}
			want := []string{`: Running "shop" with {"rootTag":1}`, ": Error: boom, stack:", tc.headline}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("entries (-want +got):\n%s", diff)
			}
		})
	}
}

// TestPendingLinesLookedForOnlyWhenAPidIsNew: a flush looks the kept
// lines' pids up only once a pid has been added since the last look, so a
// busy device's flushes do not ask for every kept pid each time.
func TestPendingLinesLookedForOnlyWhenAPidIsNew(t *testing.T) {
	t.Parallel()
	known := map[int]string{}
	lookups, gen := 0, uint64(0)
	var out []nativeEntry
	a := newLogcatAssembler(func(pid int) string { lookups++; return known[pid] },
		func(pkg string) bool { return pkg == "com.example.shop" },
		func(_ string, e nativeEntry) { out = append(out, e) })
	a.pidGeneration = func() uint64 { return gen }
	now := time.Date(2026, 11, 27, 5, 30, 0, 0, time.UTC)
	for i := range 10 {
		a.add(pendingLineOf(4000+i, i, "before"), now)
	}
	a.flush(now, false, false)
	before := lookups
	for range 5 {
		a.flush(now, false, false)
	}
	if lookups != before {
		t.Errorf("%d pid lookups by flushes with no new pid, want none", lookups-before)
	}
	known[4003], gen = "com.example.shop", gen+1
	a.flush(now, true, false)
	if len(out) != 1 || out[0].PID != 4003 {
		t.Errorf("after a new pid, emitted %+v; want pid 4003's kept line", out)
	}
}
