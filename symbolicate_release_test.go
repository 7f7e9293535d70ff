//go:build unix

package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// fixtureMapBuilt is the mtime the fixture maps are given, which the
// answer names as when the map was built.
var fixtureMapBuilt = time.Date(2026, 11, 27, 5, 0, 0, 0, time.UTC)

// fixtureProject makes a project folder holding the real Metro's map of
// testdata/sourcemaps at rel, its sources moved from where Metro built it
// into the project, as a build in the project would name them.
func fixtureProject(t *testing.T, rel string) string {
	t.Helper()
	project := t.TempDir()
	data, err := os.ReadFile("testdata/sourcemaps/index.android.bundle.map")
	if err != nil {
		t.Fatal(err)
	}
	var fixture struct{ Root string }
	raw, err := os.ReadFile("testdata/sourcemaps/expected.json")
	if err != nil || json.Unmarshal(raw, &fixture) != nil || fixture.Root == "" {
		t.Fatalf("expected.json: %v", err)
	}
	data = bytes.ReplaceAll(data, []byte(`"`+fixture.Root+`/`), []byte(`"`+project+`/`))
	data = bytes.ReplaceAll(data, []byte(`"`+filepath.Dir(fixture.Root)+`/`), []byte(`"`+project+`/`))
	path := filepath.Join(project, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(path, fixtureMapBuilt, fixtureMapBuilt); err != nil {
		t.Fatal(err)
	}
	return project
}

// releaseCrashLogcat is the fixture bundle's crash as React Native's
// release build logs it: the JS thread's line, then the JavascriptException
// with the frames of testdata/sourcemaps/frames.txt, then Java's frames.
func releaseCrashLogcat(t *testing.T) string {
	t.Helper()
	raw, err := os.ReadFile("testdata/sourcemaps/frames.txt")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(raw)), "\n")
	message, frames := lines[0], lines[1:]
	const at = "11-27 05:31:00.010  4242  4271 E AndroidRuntime: "
	var b strings.Builder
	b.WriteString("11-27 05:31:00.000  4242  4270 E ReactNativeJS: " + message + "\n")
	b.WriteString(at + "FATAL EXCEPTION: mqt_v_native\n")
	b.WriteString(at + "Process: com.example.shop, PID: 4242\n")
	b.WriteString(at + "com.facebook.react.common.JavascriptException: " + message + ", stack:\n")
	for _, f := range frames {
		b.WriteString(at + f + "\n")
	}
	for _, j := range []string{
		"com.facebook.react.modules.core.ExceptionsManagerModule.reportException(ExceptionsManagerModule.java:65)",
		"java.lang.reflect.Method.invoke(Native Method)",
		"com.facebook.react.bridge.JavaMethodWrapper.invoke(JavaMethodWrapper.java:372)",
		"com.facebook.jni.NativeRunnable.run(Native Method)",
		"android.os.Handler.handleCallback(Handler.java:958)",
	} {
		b.WriteString(at + "\tat " + j + "\n")
	}
	return b.String()
}

// TestReleaseCrashGolden: a release build's JavaScript crash, followed in
// logcat, reads in one debug_get_logs {level: "error"} answer of at most 4
// KB as the thrown error with its frames in the project's source, named as
// metro-symbolicate names them, and the map it used: byte for byte
// testdata/sourcemaps/golden_android.json. The map is found in the
// project with nothing set but PROJECT_DIR.
func TestReleaseCrashGolden(t *testing.T) {
	t.Parallel()
	project := fixtureProject(t, "android/app/build/generated/sourcemaps/react/release/index.android.bundle.map")
	adb, xcrun, dir := nativeStandin(t)
	cfg := testConfig(t)
	cfg.NativeLogs, cfg.ADBPath, cfg.XcrunPath = true, adb, xcrun
	cfg.NativeApps = []string{"com.example.shop"}
	cfg.Tune.NativePoll = 10 * time.Millisecond
	cfg.ProjectDir, cfg.MetroURL = project, ""
	ts := startServer(t, cfg)
	standinAndroidDevice(t, dir, map[string]string{"com.example.shop": "4242\n"})
	ts.initialize()
	id := 0
	waitStandinReading(t, dir, "logcat-emulator-5554", 1)
	appendStandin(t, dir, "logcat-emulator-5554", releaseCrashLogcat(t))
	args := map[string]any{"session": "native:com.example.shop@emulator-5554", "level": "error"}
	pollLogs(t, ts, &id, args, func(e []map[string]any) bool { return entryWith(e, "JavascriptException") != nil })
	id++
	reply := ts.call(id, "tools/call", map[string]any{"name": "debug_get_logs", "arguments": args})
	result, _ := reply["result"].(map[string]any)
	got, err := json.MarshalIndent(result["structuredContent"], "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	got = bytes.ReplaceAll(got, []byte(project), []byte("<project>"))
	text, _ := json.Marshal(result["content"])
	if len(text) > 4096 {
		t.Errorf("the answer's text is %d bytes, over 4 KB", len(text))
	}
	for _, want := range []string{"at loadOrders (src/orders/api.js:4:17)", "TypeError: Cannot read properties of undefined (reading 'data')",
		"mapped with android/app/build/generated/sourcemaps/react/release/index.android.bundle.map, built 2026-11-27 05:00 UTC"} {
		if !bytes.Contains(got, []byte(want)) {
			t.Errorf("the answer lacks %q", want)
		}
	}
	checkReleaseGolden(t, got, "golden_android.json")
}

// checkReleaseGolden compares an answer with its golden of
// testdata/sourcemaps (-update writes it).
func checkReleaseGolden(t *testing.T, got []byte, name string) {
	t.Helper()
	golden := filepath.Join("testdata", "sourcemaps", name)
	if *update {
		if err := os.WriteFile(golden, append(got, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if string(want) != string(got)+"\n" {
		t.Errorf("the answer differs from %s:\n%s", golden, got)
	}
}

// TestReleaseCrashGoldenIOS: the same crash on an iOS simulator, where
// React Native's RCTFatalException carries the frames in its reason,
// reads as the thrown error with its frames in the project's source,
// mapped with the project's main.jsbundle.map: byte for byte
// testdata/sourcemaps/golden_ios.json.
func TestReleaseCrashGoldenIOS(t *testing.T) {
	t.Parallel()
	project := fixtureProject(t, "main.jsbundle.map")
	adb, xcrun, dir := nativeStandin(t)
	cfg := testConfig(t)
	cfg.NativeLogs, cfg.ADBPath, cfg.XcrunPath = true, adb, xcrun
	cfg.NativeApps = []string{"com.example.shop"}
	cfg.Tune.NativePoll = 10 * time.Millisecond
	cfg.ProjectDir, cfg.MetroURL = project, ""
	ts := startServer(t, cfg)
	raw, err := os.ReadFile("testdata/sourcemaps/frames.txt")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(raw)), "\n")
	message, frames := lines[0], lines[1:]
	reason := "Unhandled JS Exception: " + message
	text := "*** Terminating app due to uncaught exception 'RCTFatalException: " + reason + "', reason: '" + reason + ", stack:\n" +
		strings.Join(frames, "\n") + "'\n*** First throw call stack:\n(0x1 0x2 0x3)"
	event, _ := json.Marshal(map[string]any{"eventMessage": text, "eventType": "logEvent", "threadID": 4712, "messageType": "Error", "processID": 4300,
		"processImagePath": "/x/Containers/Bundle/Application/U/Shop.app/Shop", "timestamp": "2026-11-27 05:30:02.000000+0000"})
	udid := "6F1B1C5E-2A6B-4A6E-9C1D-1D2E3F4A5B6C"
	writeStandin(t, dir, "devices", "List of devices attached\n\n")
	writeStandin(t, dir, "simctl-list", `{"devices":{"com.apple.CoreSimulator.SimRuntime.iOS-18-0":[{"udid":"`+udid+`","state":"Booted","name":"iPhone 15 Pro"}]}}`)
	writeStandin(t, dir, "simlog-"+udid, simSeeds[0]+"\n"+simSeeds[1]+"\n"+string(event)+"\n")
	ts.initialize()
	id := 0
	args := map[string]any{"session": "native:com.example.shop@" + udid, "level": "error"}
	pollLogs(t, ts, &id, args, func(e []map[string]any) bool { return entryWith(e, "RCTFatalException") != nil })
	id++
	reply := ts.call(id, "tools/call", map[string]any{"name": "debug_get_logs", "arguments": args})
	result, _ := reply["result"].(map[string]any)
	got, err := json.MarshalIndent(result["structuredContent"], "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	got = bytes.ReplaceAll(got, []byte(project), []byte("<project>"))
	if content, _ := json.Marshal(result["content"]); len(content) > 4096 {
		t.Errorf("the answer's text is %d bytes, over 4 KB", len(content))
	}
	for _, want := range []string{"at loadOrders (src/orders/api.js:4:17)", "mapped with main.jsbundle.map, built 2026-11-27 05:00 UTC"} {
		if !bytes.Contains(got, []byte(want)) {
			t.Errorf("the answer lacks %q", want)
		}
	}
	checkReleaseGolden(t, got, "golden_ios.json")
}
