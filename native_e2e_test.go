//go:build unix

package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The logs below are written as the tools print them (threadtime; a
// tombstone under crash_dump's own pid; ndjson).
const (
	logcatStart = `--------- beginning of main
11-27 05:30:00.100  1000  1100 I ActivityManager: Start proc 4242:com.example.shop/u0a123 for activity {com.example.shop/com.example.shop.MainActivity}
11-27 05:30:00.200  4242  4242 I ReactNativeJS: Running "shop" with {"rootTag":1}
11-27 05:30:00.300  4242  4260 I ShopNative: cart loaded
11-27 05:30:00.300  4242  4260 I ShopNative:   2 items
11-27 05:30:00.310  3333  3333 I OtherApp: a line of another process
` + "\x00\xff\xfe garbage\n"
	logcatJavaCrash = `--------- beginning of crash
11-27 05:30:01.000  4242  4242 E AndroidRuntime: FATAL EXCEPTION: main
11-27 05:30:01.000  4242  4242 E AndroidRuntime: Process: com.example.shop, PID: 4242
11-27 05:30:01.000  4242  4242 E AndroidRuntime: java.lang.IllegalStateException: cart is empty
11-27 05:30:01.000  4242  4242 E AndroidRuntime: 	at com.example.shop.CartModule.checkout(CartModule.kt:88)
11-27 05:30:01.001  3333  3333 I OtherApp: interleaved line
11-27 05:30:01.000  4242  4242 E AndroidRuntime: 	at java.lang.reflect.Method.invoke(Native Method)
11-27 05:30:01.000  4242  4242 E AndroidRuntime: Caused by: java.lang.NullPointerException: items
11-27 05:30:01.000  4242  4242 E AndroidRuntime: 	at com.example.shop.Cart.items(Cart.kt:12)
11-27 05:30:01.000  4242  4242 E AndroidRuntime: 	... 3 more
11-27 05:30:01.010  4242  4242 I Process : Sending signal. PID: 4242 SIG: 9
`
	logcatNativeCrash = `11-27 05:30:05.000  4300  4321 F libc    : Fatal signal 11 (SIGSEGV), code 1 (SEGV_MAPERR), fault addr 0x0 in tid 4321 (mqt_js), pid 4300 (com.example.shop)
11-27 05:30:05.100  5555  5555 F DEBUG   : *** *** *** *** *** *** *** *** *** *** *** *** *** *** *** ***
11-27 05:30:05.100  5555  5555 F DEBUG   : Build fingerprint: 'google/sdk_gphone64_x86_64/emu64xa:14/UE1A/1:userdebug/dev-keys'
11-27 05:30:05.101  3333  3333 I OtherApp: interleaved during the tombstone
11-27 05:30:05.100  5555  5555 F DEBUG   : pid: 4300, tid: 4321, name: mqt_js  >>> com.example.shop <<<
11-27 05:30:05.100  5555  5555 F DEBUG   : signal 11 (SIGSEGV), code 1 (SEGV_MAPERR), fault addr 0x0
11-27 05:30:05.100  5555  5555 F DEBUG   : backtrace:
11-27 05:30:05.100  5555  5555 F DEBUG   :       #00 pc 00000000001a2b3c  /data/app/com.example.shop/lib/x86_64/libfoo.so (crash+44) (BuildId: 1234)
11-27 05:30:05.100  5555  5555 F DEBUG   :       #01 pc 0000000000045678  /data/app/com.example.shop/lib/x86_64/libhermes.so (BuildId: 5678)
`
	adbOneDevice = "List of devices attached\nemulator-5554          device product:sdk_gphone64_x86_64 model:sdk_gphone64_x86_64 device:emu64xa transport_id:1\n\n"
)

// nativeServer starts the server against the stand-ins, following shop
// and the other apps given.
func nativeServer(t *testing.T, apps ...string) (*testServer, string) {
	t.Helper()
	adb, xcrun, dir := nativeStandin(t)
	cfg := testConfig(t)
	cfg.NativeLogs, cfg.ADBPath, cfg.XcrunPath = true, adb, xcrun
	cfg.NativeApps = append([]string{"com.example.shop"}, apps...)
	cfg.Tune.NativePoll, cfg.Tune.NativeFlush = 10*time.Millisecond, testNativeFlush
	return startServer(t, cfg), dir
}

// testNativeFlush is the servers' wait after an entry's last line, for
// the product's half second (nativeIdleFlush): the tests append a
// multi-line entry in one write, which is read at once, so the wait only
// has to outlast the read of one pipe buffer, not a device's pace.
const testNativeFlush = 100 * time.Millisecond

// standinAndroidDevice has the stand-in list one Android device, with an
// empty log, no simulator, and pidof naming pids (each "<pid>\n", or ""
// for no process) for the packages given.
func standinAndroidDevice(t *testing.T, dir string, pids map[string]string) {
	t.Helper()
	writeStandin(t, dir, "devices", adbOneDevice)
	for pkg, pid := range pids {
		writeStandin(t, dir, "pidof-"+pkg, pid)
	}
	writeStandin(t, dir, "logcat-emulator-5554", "")
	writeStandin(t, dir, "simctl-list", `{"devices":{}}`)
}

func writeStandin(t *testing.T, dir, name, content string) {
	t.Helper()
	tmp := filepath.Join(dir, name+".tmp")
	if err := os.WriteFile(tmp, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, filepath.Join(dir, name)); err != nil {
		t.Fatal(err)
	}
}

// toolCall calls a tool and returns its structuredContent; nil for an
// error result.
func toolCall(t *testing.T, ts *testServer, id int, name string, args map[string]any) map[string]any {
	t.Helper()
	reply := ts.call(id, "tools/call", map[string]any{"name": name, "arguments": args})
	result, _ := reply["result"].(map[string]any)
	sc, _ := result["structuredContent"].(map[string]any)
	return sc
}

// pollLogs calls debug_get_logs until done accepts its entries, or fails
// after a generous deadline.
func pollLogs(t *testing.T, ts *testServer, id *int, args map[string]any, done func([]map[string]any) bool) []map[string]any {
	t.Helper()
	return pollLogsBy(t, ts, args, done, func() map[string]any {
		*id++
		return toolCall(t, ts, *id, "debug_get_logs", args)
	})
}

// pollLogsBy is pollLogs through call, which asks debug_get_logs once.
func pollLogsBy(t *testing.T, ts *testServer, args map[string]any, done func([]map[string]any) bool, call func() map[string]any) []map[string]any {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		sc := call()
		var entries []map[string]any
		raw, _ := json.Marshal(sc["entries"])
		_ = json.Unmarshal(raw, &entries)
		if sc != nil && done(entries) {
			return entries
		}
		if time.Now().After(deadline) {
			t.Fatalf("debug_get_logs %v never satisfied the test; last: %s\n%s", args, raw, ts.stderr.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func pollHealth(t *testing.T, ts *testServer, id *int, done func(native map[string]any) bool) map[string]any {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		*id++
		sc := toolCall(t, ts, *id, "debug_health_check", map[string]any{})
		server, _ := sc["server"].(map[string]any)
		native, _ := server["native"].(map[string]any)
		if native != nil && done(native) {
			return native
		}
		if time.Now().After(deadline) {
			raw, _ := json.Marshal(native)
			t.Fatalf("the health check never satisfied the test; last native: %s", raw)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func entryWith(entries []map[string]any, part string) map[string]any {
	for _, e := range entries {
		if m, _ := e["message"].(string); strings.Contains(m, part) {
			return e
		}
	}
	return nil
}

// TestNativeAndroidApp runs the server against a stand-in adb whose
// device runs the app: its lines (a multi-line message as one entry), not
// another process's; a debug_wait_for woken by a Java crash, which is one
// entry; a native crash with its tombstone as one entry; a relaunch under
// a new pid; the adb server restarting; the device going away; only listed
// commands run, and no child left once the server has stopped.
func TestNativeAndroidApp(t *testing.T) {
	t.Parallel()
	ts, dir := nativeServer(t)
	standinAndroidDevice(t, dir, map[string]string{"com.example.shop": "4242\n"})
	ts.initialize()
	id := 0
	session := "native:com.example.shop@emulator-5554"
	pollHealth(t, ts, &id, func(n map[string]any) bool {
		return strings.Contains(jsonText(n), `"following":true`) && strings.Contains(jsonText(n), `"processes":[4242]`)
	})
	waitStandinReading(t, dir, "logcat-emulator-5554", 1)
	appendStandin(t, dir, "logcat-emulator-5554", logcatStart)
	entries := pollLogs(t, ts, &id, map[string]any{"session": session}, func(e []map[string]any) bool {
		return entryWith(e, "cart loaded") != nil && entryWith(e, "Running") != nil
	})
	cart := entryWith(entries, "cart loaded")
	if cart["message"] != "cart loaded\n  2 items" || cart["native"] != true || cart["tag"] != "ShopNative" ||
		cart["pid"] != float64(4242) || cart["tid"] != float64(4260) || cart["level"] != "info" {
		t.Errorf("the multi-line message: %v", cart)
	}
	if entryWith(entries, "another process") != nil || entryWith(entries, "garbage") != nil {
		t.Errorf("lines of another process or garbage were kept: %v", entries)
	}

	// debug_wait_for wakes on the Java crash, which arrives whole. It
	// waits from since_seq, the seq of the lines read so far: without it
	// only what comes after the wait has started counts, and the crash
	// appended at once may be read before then.
	id++
	since, _ := toolCall(t, ts, id, "debug_get_logs", map[string]any{"session": session})["latestSeq"].(float64)
	if since == 0 {
		t.Fatal("debug_get_logs gave no latestSeq")
	}
	ts.send(`{"jsonrpc":"2.0","id":900,"method":"tools/call","params":{"name":"debug_wait_for","arguments":{"session":"` + session +
		`","stream":"console","level":"error","since_seq":` + strconv.Itoa(int(since)) + `,"timeout_ms":60000}}}`)
	appendStandin(t, dir, "logcat-emulator-5554", logcatJavaCrash)
	var woke map[string]any
	for woke == nil {
		var msg map[string]any
		if err := json.Unmarshal([]byte(ts.next()), &msg); err == nil && msg["id"] == float64(900) {
			woke = msg
		}
	}
	raw, _ := json.Marshal(woke)
	if !strings.Contains(string(raw), `\"ended\":\"matched\"`) || !strings.Contains(string(raw), "Caused by: java.lang.NullPointerException") {
		t.Errorf("debug_wait_for did not wake on the whole Java crash: %s", raw)
	}

	// The process is gone: the native session ends.
	writeStandin(t, dir, "pidof-com.example.shop", "")
	deadline := time.Now().Add(30 * time.Second)
	for !strings.Contains(jsonText(toolCall(t, ts, 800, "debug_health_check", map[string]any{})["sessions"]), `"connected":false`) {
		if time.Now().After(deadline) {
			t.Fatal("the native session stayed live after the app's process ended")
		}
		time.Sleep(10 * time.Millisecond)
	}

	// A relaunch: a new pid, found by pidof, then a native crash.
	writeStandin(t, dir, "pidof-com.example.shop", "4300\n")
	pollHealth(t, ts, &id, func(n map[string]any) bool {
		return strings.Contains(jsonText(n), `"processes":[4300]`)
	})
	appendStandin(t, dir, "logcat-emulator-5554", logcatNativeCrash)
	errs := pollLogs(t, ts, &id, map[string]any{"session": session, "level": "error"}, func(e []map[string]any) bool {
		return entryWith(e, "backtrace:") != nil
	})
	if len(errs) != 2 {
		t.Fatalf("want the two crashes as two entries, got %d: %v", len(errs), errs)
	}
	java, native := errs[0], errs[1]
	for _, part := range []string{"FATAL EXCEPTION: main", "IllegalStateException: cart is empty", "at com.example.shop.CartModule.checkout", "Caused by:", "... 3 more"} {
		if !strings.Contains(java["message"].(string), part) {
			t.Errorf("the Java crash lacks %q: %q", part, java["message"])
		}
	}
	for _, part := range []string{"Fatal signal 11 (SIGSEGV)", ">>> com.example.shop <<<", "#00 pc 00000000001a2b3c", "#01 pc"} {
		if !strings.Contains(native["message"].(string), part) {
			t.Errorf("the native crash lacks %q: %q", part, native["message"])
		}
	}
	if java["crash"] != "java" || native["crash"] != "native" || native["pid"] != float64(4300) {
		t.Errorf("crash kinds or pids: %v / %v", java, native)
	}
	if strings.Contains(jsonText(errs), "interleaved") {
		t.Errorf("another process's lines joined a crash: %v", errs)
	}
	health := pollHealth(t, ts, &id, func(n map[string]any) bool { return n["lastCrash"] != nil })
	if c := jsonText(health["lastCrash"]); !strings.Contains(c, `"kind":"native"`) || !strings.Contains(c, "Fatal signal 11") {
		t.Errorf("the health check's last crash: %s", c)
	}

	// The adb server restarts: logcat ends once and is started again. Its
	// -T 1 prints the last line read again, which is kept once.
	appendStandin(t, dir, "logcat-emulator-5554", "11-27 05:30:08.000  4300  4300 W ShopNative: before the restart\n")
	pollLogs(t, ts, &id, map[string]any{"session": session, "contains": "before the restart"}, func(e []map[string]any) bool { return len(e) == 1 })
	writeStandin(t, dir, "die-emulator-5554", "")
	waitStandinReading(t, dir, "logcat-emulator-5554", 2)
	appendStandin(t, dir, "logcat-emulator-5554", "11-27 05:30:09.000  4300  4300 W ShopNative: after the restart\n")
	pollLogs(t, ts, &id, map[string]any{"session": session, "contains": "after the restart"}, func(e []map[string]any) bool { return len(e) == 1 })
	if again := pollLogs(t, ts, &id, map[string]any{"session": session, "contains": "before the restart"}, func([]map[string]any) bool { return true }); len(again) != 1 {
		t.Errorf("the line last read before the restart is kept %d times, want once", len(again))
	}

	// The device goes away: it is no longer followed.
	writeStandin(t, dir, "devices", "List of devices attached\n\n")
	pollHealth(t, ts, &id, func(n map[string]any) bool { return len(n["devices"].([]any)) == 0 })

	ts.stdin.Close()
	<-ts.done
	ts.done <- nil // for the cleanup
	waitNoStandin(t, dir)
	commands := standinCommands(t, dir)
	checkListedCommands(t, commands)
	logcats := 0
	for _, c := range commands {
		if strings.Contains(c, " logcat ") {
			logcats++
		}
	}
	if logcats != 2 {
		t.Errorf("logcat ran %d times, want 2 (once, and once after the adb server restarted): %v", logcats, commands)
	}
}

// waitStandinReading waits until the stand-in's log of name has been
// opened n times: what is appended from then on is streamed.
func waitStandinReading(t *testing.T, dir, name string, n int) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		data, _ := os.ReadFile(filepath.Join(dir, name+".reading"))
		if strings.Count(string(data), "started") >= n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the stand-in did not open %s %d times", name, n)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func appendStandin(t *testing.T, dir, name, text string) {
	t.Helper()
	f, err := os.OpenFile(filepath.Join(dir, name), os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(text); err != nil {
		t.Fatal(err)
	}
}

func jsonText(v any) string {
	data, _ := json.Marshal(v)
	return string(data)
}

// TestNativeSimulatorApp runs the server against a stand-in xcrun whose
// booted simulator runs the app: its JavaScript console (no other link
// carries it), not another app's events, and an uncaught NSException with
// its call stack as one entry. simctl spawn starts `log` as its child, as
// the real one does: neither outlives the server.
func TestNativeSimulatorApp(t *testing.T) {
	t.Parallel()
	ts, dir := nativeServer(t)
	udid := "6F1B1C5E-2A6B-4A6E-9C1D-1D2E3F4A5B6C"
	writeStandin(t, dir, "devices", "List of devices attached\n\n")
	writeStandin(t, dir, "simctl-list", `{"devices":{"com.apple.CoreSimulator.SimRuntime.iOS-18-0":[{"udid":"`+udid+`","state":"Booted","name":"iPhone 15 Pro"}]}}`)
	writeStandin(t, dir, "simlog-"+udid, "Filtering the log data using \"processImagePath CONTAINS ...\"\n"+simSeeds[1]+"\n"+
		`{"eventMessage":"another app","eventType":"logEvent","processID":99,"processImagePath":"/x/Containers/Bundle/Application/V/Other.app/Other","messageType":"Default"}`+"\n"+
		simSeeds[2]+"\n"+
		`{"eventMessage":"libc++abi: terminating due to uncaught exception of type NSException","eventType":"logEvent","processID":4300,"processImagePath":"/x/Containers/Bundle/Application/U/Shop.app/Shop","messageType":"Error"}`+"\n")
	ts.initialize()
	id := 0
	session := "native:com.example.shop@" + udid
	entries := pollLogs(t, ts, &id, map[string]any{"session": session}, func(e []map[string]any) bool {
		return entryWith(e, "Terminating app") != nil
	})
	if len(entries) != 2 {
		t.Fatalf("want the console line and the crash, got %v", entries)
	}
	if js := entries[0]; js["tag"] != "com.facebook.react.log" || js["pid"] != float64(4300) || !strings.HasPrefix(js["message"].(string), "Running") {
		t.Errorf("the JavaScript console line: %v", js)
	}
	crash := entries[1]
	if crash["crash"] != "objc" || crash["level"] != "error" || !strings.Contains(crash["message"].(string), "*** First throw call stack:") ||
		!strings.HasSuffix(crash["message"].(string), "of type NSException") {
		t.Errorf("the uncaught exception: %v", crash)
	}
	health := pollHealth(t, ts, &id, func(n map[string]any) bool { return n["lastCrash"] != nil })
	if c := jsonText(health["lastCrash"]); !strings.Contains(c, `"device":"iPhone 15 Pro"`) || !strings.Contains(c, "NSInvalidArgumentException") {
		t.Errorf("the health check's last crash: %s", c)
	}
	ts.stdin.Close()
	<-ts.done
	ts.done <- nil
	if n := len(standinPIDs(t, dir)); n < 2 {
		t.Fatalf("the stand-in's log child never started (%d processes)", n)
	}
	waitNoStandin(t, dir)
	checkListedCommands(t, standinCommands(t, dir))
}

// TestNativeWithoutTools: with neither adb nor xcrun, the health check
// says so once, and no process is started.
func TestNativeWithoutTools(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cfg := testConfig(t)
	cfg.NativeLogs, cfg.ADBPath, cfg.XcrunPath = true, filepath.Join(dir, "no-adb"), filepath.Join(dir, "no-xcrun")
	ts := startServer(t, cfg)
	ts.initialize()
	sc := toolCall(t, ts, 1, "debug_health_check", map[string]any{})
	native := jsonText(sc["server"].(map[string]any)["native"])
	if native != `{"devices":[],"status":"neither adb nor xcrun was found (set ADB, ANDROID_HOME or XCRUN): no native logs"}` {
		t.Errorf("server.native: %s", native)
	}
}

// waitSessionEnded polls the health check until no session is live.
func waitSessionEnded(t *testing.T, ts *testServer, id *int, why string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		*id++
		sessions := jsonText(toolCall(t, ts, *id, "debug_health_check", map[string]any{})["sessions"])
		if strings.Contains(sessions, `"connected":false`) && !strings.Contains(sessions, `"connected":true`) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the native session stayed live %s: %s", why, sessions)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestNativeSessionEndsWhenSimulatorLeaves: a simulator has no pid
// lookup; its app's native session ends when the simulator leaves the
// booted list, so that it is not left live (and the default session).
func TestNativeSessionEndsWhenSimulatorLeaves(t *testing.T) {
	t.Parallel()
	ts, dir := nativeServer(t)
	udid := "6F1B1C5E-2A6B-4A6E-9C1D-1D2E3F4A5B6C"
	writeStandin(t, dir, "devices", "List of devices attached\n\n")
	writeStandin(t, dir, "simctl-list", `{"devices":{"com.apple.CoreSimulator.SimRuntime.iOS-18-0":[{"udid":"`+udid+`","state":"Booted","name":"iPhone 15 Pro"}]}}`)
	writeStandin(t, dir, "simlog-"+udid, simSeeds[1]+"\n")
	ts.initialize()
	id := 0
	pollLogs(t, ts, &id, map[string]any{"session": "native:com.example.shop@" + udid}, func(e []map[string]any) bool { return len(e) == 1 })
	writeStandin(t, dir, "simctl-list", `{"devices":{}}`)
	waitSessionEnded(t, ts, &id, "after its simulator shut down")
}

// TestNativeSessionEndsWhenDeviceLeaves: an Android device unplugged while
// the app runs (pidof last said it had a process) ends the app's native
// session: nothing looks its pids up any more.
func TestNativeSessionEndsWhenDeviceLeaves(t *testing.T) {
	t.Parallel()
	ts, dir := nativeServer(t)
	standinAndroidDevice(t, dir, map[string]string{"com.example.shop": "4242\n"})
	ts.initialize()
	id := 0
	waitStandinReading(t, dir, "logcat-emulator-5554", 1)
	appendStandin(t, dir, "logcat-emulator-5554", logcatStart)
	pollLogs(t, ts, &id, map[string]any{"session": "native:com.example.shop@emulator-5554"}, func(e []map[string]any) bool {
		return entryWith(e, "cart loaded") != nil
	})
	writeStandin(t, dir, "devices", "List of devices attached\n\n")
	waitSessionEnded(t, ts, &id, "after its device left")
}

// TestNativeLinesBeforePidof: an app's lines logged before pidof names
// its pid (and with no Start proc line) reach its session once it does,
// grouped as usual. Another followed app's line, logged after them, shows
// that they were read while the pid was still unknown.
func TestNativeLinesBeforePidof(t *testing.T) {
	t.Parallel()
	ts, dir := nativeServer(t, "com.example.other")
	standinAndroidDevice(t, dir, map[string]string{"com.example.other": "5000\n"})
	ts.initialize()
	id := 0
	pollHealth(t, ts, &id, func(n map[string]any) bool { return strings.Contains(jsonText(n), `"processes":[5000]`) })
	waitStandinReading(t, dir, "logcat-emulator-5554", 1)
	appendStandin(t, dir, "logcat-emulator-5554", logcatBeforePID+"11-27 05:30:00.070  5000  5000 I Other   : read after the shop's lines\n")
	pollLogs(t, ts, &id, map[string]any{"session": "native:com.example.other@emulator-5554"}, func(e []map[string]any) bool {
		return entryWith(e, "read after the shop's lines") != nil
	})
	writeStandin(t, dir, "pidof-com.example.shop", "4242\n")
	entries := pollLogs(t, ts, &id, map[string]any{"session": "native:com.example.shop@emulator-5554"}, func(e []map[string]any) bool {
		return len(e) >= 2
	})
	var got []string
	for _, e := range entries {
		got = append(got, e["message"].(string))
	}
	want := []string{`Running "shop" with {"rootTag":1}`, "Error: boom, stack:\ncheckout@1:2345\nonPress@1:678"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("the shop's session holds %q, want %q", got, want)
	}
}
