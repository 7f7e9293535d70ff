package main

import (
	"strings"
	"testing"
	"time"
)

// assembled feeds lines to an assembler whose app runs as pid 4242 (and
// 4300), one millisecond apart, and returns what it emitted and when.
type assembled struct {
	entries []nativeEntry
	apps    []string
	at      []time.Time
	clock   time.Time // the assembler's now, which tests step
}

func assembleLogcat(t *testing.T, text string, start time.Time) (*logcatAssembler, *assembled, time.Time) {
	t.Helper()
	out := &assembled{}
	now := &out.clock
	a := newLogcatAssembler(func(pid int) string {
		if pid == 4242 || pid == 4300 {
			return "com.example.shop"
		}
		return ""
	}, func(pkg string) bool { return pkg == "com.example.shop" }, func(app string, e nativeEntry) {
		out.entries, out.apps, out.at = append(out.entries, e), append(out.apps, app), append(out.at, *now)
	})
	*now = start
	for line := range strings.SplitSeq(strings.TrimRight(text, "\n"), "\n") {
		*now = now.Add(time.Millisecond)
		if l, err := parseLogcatLine(line); err == nil {
			a.add(l, *now)
		}
	}
	return a, out, *now
}

// TestCrashIsOneEntry: a Java crash and a native crash with its
// tombstone, interleaved with other processes' lines, become one entry
// each holding the whole text, emitted once nativeIdleFlush (under a
// second) has passed since their last line, and not before.
func TestCrashIsOneEntry(t *testing.T) {
	t.Parallel()
	start := time.Date(2026, 11, 27, 5, 30, 0, 0, time.UTC)
	a, out, last := assembleLogcat(t, logcatJavaCrash+logcatNativeCrash, start)
	// The Java crash ended when the app logged its next line (Process).
	if len(out.entries) != 1 || out.entries[0].Crash != nativeCrashJava {
		t.Fatalf("after the Java crash's lines: %+v", out.entries)
	}
	var now time.Time
	for now = last; ; now = now.Add(10 * time.Millisecond) {
		at, ok := a.nextFlush()
		if !ok {
			break
		}
		if now.Before(at) {
			continue
		}
		out.clock = now
		a.flush(now, false, false)
	}
	if len(out.entries) != 3 {
		t.Fatalf("want the Java crash, the Process line and the native crash, got %d: %+v", len(out.entries), out.entries)
	}
	java, native := out.entries[0], out.entries[2]
	wantJava := "FATAL EXCEPTION: main\nProcess: com.example.shop, PID: 4242\njava.lang.IllegalStateException: cart is empty\n" +
		"\tat com.example.shop.CartModule.checkout(CartModule.kt:88)\n\tat java.lang.reflect.Method.invoke(Native Method)\n" +
		"Caused by: java.lang.NullPointerException: items\n\tat com.example.shop.Cart.items(Cart.kt:12)\n\t... 3 more"
	if java.Message != wantJava || java.Level != "error" || java.Tag != "AndroidRuntime" || java.PID != 4242 {
		t.Errorf("the Java crash:\n%+v\nwant message\n%s", java, wantJava)
	}
	if !strings.HasPrefix(native.Message, "Fatal signal 11 (SIGSEGV)") || !strings.Contains(native.Message, ">>> com.example.shop <<<") ||
		!strings.HasSuffix(native.Message, "libhermes.so (BuildId: 5678)") || strings.Contains(native.Message, "interleaved") {
		t.Errorf("the native crash:\n%s", native.Message)
	}
	if native.Crash != nativeCrashNative || native.PID != 4300 || native.Tag != "libc" || out.apps[2] != "com.example.shop" {
		t.Errorf("the native crash's fields: %+v (app %q)", native, out.apps[2])
	}
	if lag := out.at[2].Sub(last); lag < nativeIdleFlush || lag > nativeIdleFlush+10*time.Millisecond || lag >= time.Second {
		t.Errorf("the native crash was emitted %v after its last line, want %v", lag, nativeIdleFlush)
	}
}

// TestNativeCrashWaitsForItsTombstone: a signal line alone waits
// nativeTombstoneWait for its tombstone, which joins it though crash_dump
// writes it under another pid.
func TestNativeCrashWaitsForItsTombstone(t *testing.T) {
	t.Parallel()
	start := time.Date(2026, 11, 27, 5, 30, 0, 0, time.UTC)
	lines := strings.SplitN(logcatNativeCrash, "\n", 2)
	a, out, last := assembleLogcat(t, lines[0], start)
	a.flush(last.Add(nativeIdleFlush), false, false)
	if len(out.entries) != 0 {
		t.Fatalf("the signal line went out before its tombstone could come: %+v", out.entries)
	}
	now := last.Add(nativeIdleFlush + time.Millisecond)
	for line := range strings.SplitSeq(strings.TrimRight(lines[1], "\n"), "\n") {
		l, _ := parseLogcatLine(line)
		a.add(l, now)
	}
	a.flush(now.Add(nativeIdleFlush), false, false)
	if len(out.entries) != 1 || !strings.Contains(out.entries[0].Message, "backtrace:") {
		t.Fatalf("want one entry with the tombstone, got %+v", out.entries)
	}
}

// TestTombstoneOfAnotherApp: a tombstone is attributed by its package
// line, not by the pid it is written under; another app's is dropped.
func TestTombstoneOfAnotherApp(t *testing.T) {
	t.Parallel()
	other := strings.ReplaceAll(logcatNativeCrash, "com.example.shop", "com.other.app")
	other = strings.ReplaceAll(other, " 4300 ", " 7000 ")
	other = strings.ReplaceAll(other, "pid: 4300", "pid: 7000")
	a, out, last := assembleLogcat(t, other, time.Date(2026, 11, 27, 5, 30, 0, 0, time.UTC))
	a.flush(last.Add(time.Hour), true, false)
	if len(out.entries) != 0 {
		t.Errorf("another app's crash was kept: %+v", out.entries)
	}
}

// TestMultiLineMessage: the lines of one message (one prefix) are one
// entry; the JavaScript console is marked.
func TestMultiLineMessage(t *testing.T) {
	t.Parallel()
	text := "11-27 05:30:00.200  4242  4290 E ReactNativeJS: Error: boom, js engine: hermes, stack:\n" +
		"11-27 05:30:00.200  4242  4290 E ReactNativeJS: checkout@1:2345\n" +
		"11-27 05:30:00.200  4242  4290 E ReactNativeJS: onPress@1:678\n" +
		"11-27 05:30:00.201  4242  4290 I ReactNativeJS: next\n"
	a, out, last := assembleLogcat(t, text, time.Date(2026, 11, 27, 5, 30, 0, 0, time.UTC))
	a.flush(last.Add(nativeIdleFlush), false, false)
	if len(out.entries) != 2 {
		t.Fatalf("want 2 entries, got %+v", out.entries)
	}
	e := out.entries[0]
	if e.Message != "Error: boom, js engine: hermes, stack:\ncheckout@1:2345\nonPress@1:678" || !e.JSConsole || e.Level != "error" || e.TID != 4290 {
		t.Errorf("the JavaScript error: %+v", e)
	}
}

// TestEntryBounded: an endless message is cut at maxEntryLines, saying
// how many lines were left out.
func TestEntryBounded(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	for range maxEntryLines + 5 {
		b.WriteString("11-27 05:30:00.200  4242  4242 I Shop    : line\n")
	}
	a, out, last := assembleLogcat(t, b.String(), time.Date(2026, 11, 27, 5, 30, 0, 0, time.UTC))
	a.flush(last.Add(nativeIdleFlush), false, false)
	if len(out.entries) != 1 || !strings.HasSuffix(out.entries[0].Message, "… (5 more lines)") {
		t.Errorf("got %d entries ending %q", len(out.entries), out.entries[0].Message[len(out.entries[0].Message)-20:])
	}
}

// TestUncaughtNSException: the exception and what its process logs after
// it are one entry; other events are one entry each.
func TestUncaughtNSException(t *testing.T) {
	t.Parallel()
	var got []nativeEntry
	a := newSimAssembler(func(_ string, e nativeEntry) { got = append(got, e) })
	now := time.Date(2026, 11, 27, 5, 30, 0, 0, time.UTC)
	for _, s := range []string{simSeeds[1], simSeeds[2],
		`{"eventMessage":"libc++abi: terminating due to uncaught exception of type NSException","processID":4300,"processImagePath":"/x/Shop.app/Shop","messageType":"Default"}`} {
		l, err := parseSimLogLine([]byte(s))
		if err != nil {
			t.Fatal(err)
		}
		a.add(l, "com.example.shop", now)
	}
	if at, ok := a.nextFlush(); !ok || at.Sub(now) != nativeIdleFlush {
		t.Fatalf("next flush %v %v", at, ok)
	}
	a.flush(now.Add(nativeIdleFlush), false)
	if len(got) != 2 || !got[0].JSConsole || got[1].Crash != nativeCrashObjC {
		t.Fatalf("got %+v", got)
	}
	if !strings.Contains(got[1].Message, "*** First throw call stack:") || !strings.HasSuffix(got[1].Message, "of type NSException") {
		t.Errorf("the crash: %q", got[1].Message)
	}
}

func TestActivityStartProc(t *testing.T) {
	t.Parallel()
	pid, pkg, ok := activityStartProc("Start proc 4300:com.example.shop/u0a123 for pre-top-activity {com.example.shop/com.example.shop.MainActivity}")
	if !ok || pid != 4300 || pkg != "com.example.shop" {
		t.Errorf("got %d %q %v", pid, pkg, ok)
	}
	if _, _, ok := activityStartProc("Start proc x:y"); ok {
		t.Error("a line without a pid was read")
	}
}

// TestJavaCrashFiledByProcess: a Java crash is filed under the package
// its `Process:` line names, not under the app its pid was last known
// as; a package that is not followed drops it.
func TestJavaCrashFiledByProcess(t *testing.T) {
	t.Parallel()
	d := pidDevice()
	d.setPIDs("com.example.shop", []int{4242}) // stale: the system gave 4242 to another process
	in := newAndroidIntake(d)
	text := `11-27 05:30:02.000  4242  4242 E AndroidRuntime: FATAL EXCEPTION: main
11-27 05:30:02.000  4242  4242 E AndroidRuntime: Process: com.example.other, PID: 4242
11-27 05:30:02.000  4242  4242 E AndroidRuntime: java.lang.IllegalStateException: other's crash
11-27 05:30:03.000  4242  4242 E AndroidRuntime: FATAL EXCEPTION: main
11-27 05:30:03.000  4242  4242 E AndroidRuntime: Process: com.example.unfollowed:sync, PID: 4242
11-27 05:30:03.000  4242  4242 E AndroidRuntime: java.lang.IllegalStateException: a stranger's crash
11-27 05:30:04.000  4242  4242 E AndroidRuntime: FATAL EXCEPTION: main
11-27 05:30:04.000  4242  4242 E AndroidRuntime: Process: com.example.shop:remote, PID: 4242
11-27 05:30:04.000  4242  4242 E AndroidRuntime: java.lang.IllegalStateException: the shop's crash`
	now := time.Now()
	for line := range strings.SplitSeq(text, "\n") {
		in.add([]byte(line), now)
	}
	in.flush(now, true)
	var got []string
	for _, app := range d.pending.apps {
		for _, e := range d.pending.entries[app] {
			got = append(got, app+": "+e.Message)
		}
	}
	want := []string{
		"com.example.other: FATAL EXCEPTION: main\nProcess: com.example.other, PID: 4242\njava.lang.IllegalStateException: other's crash",
		"com.example.shop: FATAL EXCEPTION: main\nProcess: com.example.shop:remote, PID: 4242\njava.lang.IllegalStateException: the shop's crash",
	}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("the crashes filed:\n%q\nwant\n%q", got, want)
	}
}
