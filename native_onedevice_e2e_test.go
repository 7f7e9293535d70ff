//go:build unix

package main

import (
	"strings"
	"testing"
	"time"
)

// nativeMetroServer starts the server against the native stand-ins and a
// Metro stand-in listing page, following com.example.shop.
func nativeMetroServer(t *testing.T, page map[string]any) (*testServer, string) {
	t.Helper()
	adb, xcrun, dir := nativeStandin(t)
	m := startMetroStandIn(t)
	m.setPages(page)
	cfg := testConfig(t)
	cfg.MetroURL, cfg.Tune.MetroPoll = m.srv.URL, 5*time.Millisecond
	cfg.NativeLogs, cfg.ADBPath, cfg.XcrunPath = true, adb, xcrun
	cfg.NativeApps, cfg.Tune.NativePoll, cfg.Tune.NativeFlush = []string{"com.example.shop"}, 10*time.Millisecond, testNativeFlush
	return startServer(t, cfg), dir
}

// waitMetroLive polls the health check until session is live.
func waitMetroLive(t *testing.T, ts *testServer, id *int, session string) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); ; {
		*id++
		sessions := jsonText(toolCall(t, ts, *id, "debug_health_check", map[string]any{})["sessions"])
		if strings.Contains(sessions, `"connected":true`) && strings.Contains(sessions, `"id":"`+session+`"`) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the Metro session %s never went live: %s", session, sessions)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestTwoSimulatorsTwoSessions: iPhone 16 runs the dev build under Metro;
// iPhone 16 Pro, booted beside it, a release build of the same app. Both
// crash: each crash is in its own simulator's session, iPhone 16's in
// Metro's, iPhone 16 Pro's in its native session.
func TestTwoSimulatorsTwoSessions(t *testing.T) {
	t.Parallel()
	ts, dir := nativeMetroServer(t, standInPage("1", "com.example.shop", "iPhone 16", "dev-a", true))
	dev, pro := "AAAAAAAA-0000-4000-8000-000000000016", "BBBBBBBB-0000-4000-8000-000000000160"
	writeStandin(t, dir, "devices", "List of devices attached\n\n")
	writeStandin(t, dir, "simctl-list", `{"devices":{"com.apple.CoreSimulator.SimRuntime.iOS-18-0":[`+
		`{"udid":"`+dev+`","state":"Booted","name":"iPhone 16"},{"udid":"`+pro+`","state":"Booted","name":"iPhone 16 Pro"}]}}`)
	writeStandin(t, dir, "simlog-"+dev, "")
	writeStandin(t, dir, "simlog-"+pro, "")
	ts.initialize()
	id := 0
	metro := "metro:com.example.shop@iPhone 16"
	waitMetroLive(t, ts, &id, metro)
	waitStandinReading(t, dir, "simlog-"+dev, 1)
	waitStandinReading(t, dir, "simlog-"+pro, 1)
	crash := func(where string) string {
		return simEvent(4300, "Error", "*** Terminating app due to uncaught exception 'NSGenericException', reason: 'on the "+where+"'\n*** First throw call stack:\n(0x1)")
	}
	appendStandin(t, dir, "simlog-"+pro, crash("Pro"))
	appendStandin(t, dir, "simlog-"+dev, crash("16"))
	onPro := pollLogs(t, ts, &id, map[string]any{"session": "native:com.example.shop@" + pro}, func(e []map[string]any) bool { return len(e) > 0 })
	onDev := pollLogs(t, ts, &id, map[string]any{"session": metro, "level": "error"}, func(e []map[string]any) bool { return entryWith(e, "reason: 'on the") != nil })
	if len(onPro) != 1 || entryWith(onPro, "'on the Pro'") == nil {
		t.Errorf("iPhone 16 Pro's native session holds %v, want its crash alone", onPro)
	}
	if len(onDev) != 1 || entryWith(onDev, "'on the 16'") == nil {
		t.Errorf("iPhone 16's Metro session holds %v, want its crash alone", onDev)
	}
}

// TestTwinEmulatorsAndMetro: two emulators of one image share their model,
// the only name Metro gives the page's device. The app's lines on one of
// them stay in its native session, and the health check says why.
func TestTwinEmulatorsAndMetro(t *testing.T) {
	t.Parallel()
	// React Native names an Android device to Metro "MODEL - RELEASE - API N".
	ts, dir := nativeMetroServer(t, standInPage("1", "com.example.shop", "sdk_gphone64_x86_64 - 14 - API 34", "dev-a", true))
	writeStandin(t, dir, "devices", "List of devices attached\n"+
		"emulator-5554          device product:sdk_gphone64_x86_64 model:sdk_gphone64_x86_64 device:emu64xa transport_id:1\n"+
		"emulator-5556          device product:sdk_gphone64_x86_64 model:sdk_gphone64_x86_64 device:emu64xa transport_id:2\n\n")
	writeStandin(t, dir, "pidof-com.example.shop", "4242\n")
	writeStandin(t, dir, "logcat-emulator-5554", "")
	writeStandin(t, dir, "logcat-emulator-5556", "")
	writeStandin(t, dir, "simctl-list", `{"devices":{}}`)
	ts.initialize()
	id := 0
	metro := "metro:com.example.shop@sdk_gphone64_x86_64 - 14 - API 34"
	waitMetroLive(t, ts, &id, metro)
	waitStandinReading(t, dir, "logcat-emulator-5554", 1)
	appendStandin(t, dir, "logcat-emulator-5554", "11-27 05:30:00.300  4242  4260 W ShopNative: on a twin\n")
	pollLogs(t, ts, &id, map[string]any{"session": "native:com.example.shop@emulator-5554", "contains": "on a twin"}, func(e []map[string]any) bool { return len(e) == 1 })
	if e := pollLogs(t, ts, &id, map[string]any{"session": metro, "contains": "on a twin"}, func([]map[string]any) bool { return true }); len(e) != 0 {
		t.Errorf("a twin emulator's line reached the Metro session of its model: %v", e)
	}
	native := pollHealth(t, ts, &id, func(n map[string]any) bool { return strings.Count(jsonText(n), `"notJoined"`) == 2 })
	if text := jsonText(native); !strings.Contains(text, "sdk_gphone64_x86_64 is also the name of emulator-5556") ||
		!strings.Contains(text, "sdk_gphone64_x86_64 is also the name of emulator-5554") {
		t.Errorf("the health check does not say why: %s", text)
	}
}

// TestEmulatorJoinsMetro: one emulator, whose dev build Metro lists under
// the name React Native gives it ("MODEL - RELEASE - API N"): the app's
// native lines join its Metro session, not a native session of their own.
func TestEmulatorJoinsMetro(t *testing.T) {
	t.Parallel()
	ts, dir := nativeMetroServer(t, standInPage("1", "com.example.shop", "sdk_gphone64_x86_64 - 14 - API 34", "dev-a", true))
	writeStandin(t, dir, "devices", "List of devices attached\n"+
		"emulator-5554          device product:sdk_gphone64_x86_64 model:sdk_gphone64_x86_64 device:emu64xa transport_id:1\n\n")
	writeStandin(t, dir, "pidof-com.example.shop", "4242\n")
	writeStandin(t, dir, "logcat-emulator-5554", "")
	writeStandin(t, dir, "simctl-list", `{"devices":{}}`)
	ts.initialize()
	id := 0
	metro := "metro:com.example.shop@sdk_gphone64_x86_64 - 14 - API 34"
	waitMetroLive(t, ts, &id, metro)
	waitStandinReading(t, dir, "logcat-emulator-5554", 1)
	appendStandin(t, dir, "logcat-emulator-5554", "11-27 05:30:00.300  4242  4260 W ShopNative: on the one emulator\n")
	pollLogs(t, ts, &id, map[string]any{"session": metro, "contains": "on the one emulator"}, func(e []map[string]any) bool { return len(e) == 1 })
}
