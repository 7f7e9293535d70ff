//go:build unix

package main

import (
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestNativeReleaseEnds runs the server against the stand-in adb with no
// NATIVE_APPS and no session: the app is known from its project
// (PROJECT_DIR's build.gradle), and the health check says so. A release
// build's JavaScript crash reaches the app's session as one javascript
// crash; then an ANR and a low-memory kill, written by system_server and
// lmkd under their own pids, are entries of the app's session with their
// reasons, another app's are not; the health check says how the app last
// ended.
func TestNativeReleaseEnds(t *testing.T) {
	t.Parallel()
	adb, xcrun, dir := nativeStandin(t)
	cfg := testConfig(t)
	cfg.NativeLogs, cfg.ADBPath, cfg.XcrunPath = true, adb, xcrun
	cfg.ProjectDir, _ = filepath.Abs(filepath.Join("testdata", "native", "projects", "rn-app"))
	cfg.Tune.NativePoll = 10 * time.Millisecond
	ts := startServer(t, cfg)
	standinAndroidDevice(t, dir, map[string]string{"com.example.shop": "5400\n"})
	ts.initialize()
	id := 0
	gradle := filepath.Join(cfg.ProjectDir, "android", "app", "build.gradle")
	pollHealth(t, ts, &id, func(n map[string]any) bool {
		return strings.Contains(jsonText(n["appIds"]), `{"from":`+jsonText(gradle)+`,"id":"com.example.shop"}`) &&
			strings.Contains(jsonText(n), `"processes":[5400]`)
	})
	waitStandinReading(t, dir, "logcat-emulator-5554", 1)
	appendStandin(t, dir, "logcat-emulator-5554", readTestdata(t, "native", "release", "js-crash.logcat"))
	session := "native:com.example.shop@emulator-5554"
	entries := pollLogs(t, ts, &id, map[string]any{"session": session, "level": "error"}, func(e []map[string]any) bool {
		return entryWith(e, "JavascriptException") != nil
	})
	if crash := entryWith(entries, "JavascriptException"); crash["crash"] != "javascript" || len(entries) != 1 ||
		!strings.Contains(crash["message"].(string), "stack:\np@1:132161\np@1:132084\nanonymous@1:131119\n") {
		t.Errorf("the JavaScript crash, alone among the errors: %v", entries)
	}
	if n := len(jsonText(entries)); n > 4096 {
		t.Errorf("the errors' answer is %d bytes, over 4 KB", n)
	} else {
		t.Logf("measured: the JavaScript crash's debug_get_logs {level: error} entries are %d bytes", n)
	}

	appendStandin(t, dir, "logcat-emulator-5554", readTestdata(t, "native", "release", "verdicts.logcat"))
	entries = pollLogs(t, ts, &id, map[string]any{"session": session}, func(e []map[string]any) bool {
		return entryWith(e, "Process com.example.shop (pid 5700) has died") != nil
	})
	anr := entryWith(entries, "ANR in com.example.shop")
	if anr == nil || anr["level"] != "error" || anr["ended"] != "anr" || anr["pid"] != float64(5500) || !strings.Contains(anr["message"].(string), "\nReason: Input dispatching timed out") {
		t.Errorf("the ANR: %v", anr)
	}
	lmk := entryWith(entries, "Kill 'com.example.shop' (5600)")
	if lmk == nil || lmk["level"] != "warn" || lmk["ended"] != "killed_low_memory" || lmk["pid"] != float64(5600) || !strings.Contains(lmk["message"].(string), "reason: low watermark is breached") {
		t.Errorf("the low-memory kill: %v", lmk)
	}
	for _, foreign := range []string{"com.other.app", "com.example.shopping", "Start proc", "InputDispatcher", "not the app"} {
		if e := entryWith(entries, foreign); e != nil {
			t.Errorf("another process's line is the app's: %v", e)
		}
	}
	native := pollHealth(t, ts, &id, func(n map[string]any) bool {
		end, _ := n["lastEnd"].(map[string]any)
		return end["how"] == "stopped"
	})
	if end := native["lastEnd"].(map[string]any); end["app"] != "com.example.shop" || !strings.HasPrefix(end["reason"].(string), "Force stopping com.example.shop") {
		t.Errorf("lastEnd: %v", end)
	}
	if !strings.Contains(jsonText(native["appIds"]), `{"from":`+jsonText(filepath.Join(cfg.ProjectDir, "ios", "Shop.xcodeproj", "project.pbxproj"))+`,"id":"com.example.shop.ios"}`) {
		t.Errorf("appIds: %v", native["appIds"])
	}
}

// TestNativeLateVerdictEndsAgain: a verdict read after pidof said the app
// had no process left opens its session again; the next lookup naming no
// pid ends it again (app_ended), it is not left live.
func TestNativeLateVerdictEndsAgain(t *testing.T) {
	t.Parallel()
	ts, dir := nativeServer(t)
	standinAndroidDevice(t, dir, map[string]string{"com.example.shop": "4242\n"})
	ts.initialize()
	ts.call(1, "logging/setLevel", map[string]any{"level": "info"}) // a session's end is told at warning
	n := &notingServer{ts: ts, id: 1}
	session := "native:com.example.shop@emulator-5554"
	waitStandinReading(t, dir, "logcat-emulator-5554", 1)
	appendStandin(t, dir, "logcat-emulator-5554", logcatStart)
	n.waitSession(t, session, true, 0, "the app's first lines")
	writeStandin(t, dir, "pidof-com.example.shop", "")
	n.waitSession(t, session, false, 1, "pidof named no pid")
	appendStandin(t, dir, "logcat-emulator-5554",
		"11-27 05:31:00.001   398   398 I lowmemorykiller: Kill 'com.example.shop' (4242), uid 10190, oom_score_adj 900 to free 81234kB rss, 12345kB swap; reason: low watermark is breached\n")
	// Polled through n: the end the verdict's session comes to may be told
	// while the logs are polled, and ends must count it.
	n.pollLogs(t, map[string]any{"session": session}, func(e []map[string]any) bool {
		return entryWith(e, "Kill 'com.example.shop' (4242)") != nil
	})
	n.waitSession(t, session, false, 2, "the late verdict's session")
}
