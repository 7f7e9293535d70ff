package main

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"
)

type nativeTestFeed struct{}

func (nativeTestFeed) request(context.Context, string, any) (json.RawMessage, error) {
	return nil, errAnswerLocally
}
func (nativeTestFeed) replaced() {}

func metroTestInfo(appID, device string) *adapterInfo {
	app, _ := json.Marshal(map[string]any{"name": appID, "bundleId": appID})
	dev, _ := json.Marshal(map[string]any{"name": device})
	return &adapterInfo{AdapterVersion: "metro", ConnectedAt: time.Now(), App: app, Device: dev,
		Streams: []streamState{{Name: "console", Active: true}}}
}

func consoleText(t *testing.T, s *session) string {
	t.Helper()
	raw, err := s.answerLocally("events.query", eventsParams{Stream: "console", Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	return string(raw)
}

// TestNativeSessionThenMetro: an app with no session gets a native one,
// where its JavaScript console lines are its console; once its Metro
// session appears, the native session ends ("joined"), later entries go to
// the Metro session, and the console lines Metro carries are not doubled.
// A Metro session of the same app on another device is not it.
func TestNativeSessionThenMetro(t *testing.T) {
	t.Parallel()
	reg, _ := newTestRegistry(100)
	app := nativeApp{Platform: nativeAndroid, DeviceID: "emulator-5554", DeviceName: "sdk_gphone64_x86_64", AppID: "com.example.shop"}
	at := time.Date(2026, 11, 27, 5, 30, 0, 0, time.UTC)
	reg.deliverNative(app, []nativeEntry{
		{At: at, Level: "info", Tag: "ReactNativeJS", PID: 4242, TID: 4290, Message: "Running shop", JSConsole: true},
		{At: at, Level: "error", Tag: "AndroidRuntime", PID: 4242, TID: 4242, Message: "FATAL EXCEPTION: main\nProcess: com.example.shop, PID: 4242", Crash: nativeCrashJava},
	})
	native, err := reg.find(nativeSessionID(app))
	if err != nil || !native.isLive() || native.via != sessionViaNative {
		t.Fatalf("the native session: %v %v", native, err)
	}
	text := consoleText(t, native)
	for _, part := range []string{`"message":"Running shop"`, `"native":true`, `"tag":"AndroidRuntime"`, `"pid":4242`, `"tid":4290`, `"crash":"java"`, `"level":"error"`} {
		if !strings.Contains(text, part) {
			t.Errorf("the native session's console lacks %s: %s", part, text)
		}
	}

	reg.connectMetro("other-device", metroTestInfo("com.example.shop", "iPhone 15"), nativeTestFeed{})
	if target, _ := reg.nativeTarget(app); target != nil {
		t.Fatalf("a Metro session of another device took the app's lines: %s", target.id)
	}
	metro, _ := reg.connectMetro("shop", metroTestInfo("com.example.shop", "sdk_gphone64_x86_64"), nativeTestFeed{})
	reg.deliverNative(app, []nativeEntry{
		{At: at, Level: "info", Tag: "ReactNativeJS", PID: 4242, Message: "doubled", JSConsole: true},
		{At: at, Level: "warn", Tag: "ShopNative", PID: 4242, Message: "native after Metro"},
	})
	if native.isLive() {
		t.Error("the native session is still live after the app's Metro session appeared")
	}
	got := consoleText(t, metro.(*session))
	if !strings.Contains(got, "native after Metro") || strings.Contains(got, "doubled") {
		t.Errorf("the Metro session's console: %s", got)
	}
	if strings.Contains(consoleText(t, native), "native after Metro") {
		t.Error("the ended native session still takes the app's lines")
	}
	if ids := reg.nativeAppIDs(); len(ids) != 1 || ids[0] != "com.example.shop" {
		t.Errorf("nativeAppIDs: %v", ids)
	}
	_, same := reg.grouped()
	if joined := same[native]; len(joined) == 0 {
		t.Error("the health check does not list the native session with the app's Metro session")
	}
}

// TestNativeAppEnded: the native session is live while the app runs, and
// comes back with its buffers when the app is launched again.
func TestNativeAppEnded(t *testing.T) {
	t.Parallel()
	reg, _ := newTestRegistry(100)
	app := nativeApp{Platform: nativeAndroid, DeviceID: "emulator-5554", AppID: "com.example.shop"}
	reg.deliverNative(app, []nativeEntry{{Level: "info", Message: "first run"}})
	reg.nativeAppEnded(app)
	s, _ := reg.find(nativeSessionID(app))
	if s.isLive() {
		t.Fatal("live after the app's process ended")
	}
	reg.deliverNative(app, []nativeEntry{{Level: "info", Message: "second run"}})
	if !s.isLive() || !strings.Contains(consoleText(t, s), "first run") || !strings.Contains(consoleText(t, s), "second run") {
		t.Errorf("after the relaunch: live %v, %s", s.isLive(), consoleText(t, s))
	}
}

// TestNativeJSConsoleKeptWhenNoLiveConsole: the native copies of the
// JavaScript console are dropped only while a live session of another
// link carries it. Once the app's Metro session has ended (its page left
// to another debugger, a relaunch Metro has not re-attached yet), the
// ReactNativeJS lines are the only copy left and are kept, in that
// session's console; when Metro is back, they are dropped again.
func TestNativeJSConsoleKeptWhenNoLiveConsole(t *testing.T) {
	t.Parallel()
	reg, _ := newTestRegistry(100)
	app := nativeApp{Platform: nativeAndroid, DeviceID: "emulator-5554", DeviceName: "sdk_gphone64_x86_64", AppID: "com.example.shop"}
	at := time.Date(2026, 11, 27, 5, 30, 0, 0, time.UTC)
	feed := nativeTestFeed{}
	metro, _ := reg.connectMetro("shop", metroTestInfo("com.example.shop", "sdk_gphone64_x86_64"), feed)
	s := metro.(*session)
	reg.deliverNative(app, []nativeEntry{{At: at, Level: "info", Tag: "ReactNativeJS", Message: "while Metro carries it", JSConsole: true}})
	if strings.Contains(consoleText(t, s), "while Metro carries it") {
		t.Error("a JavaScript console line was doubled while Metro carried the console")
	}
	if !s.leave(feed, "page_gone") {
		t.Fatal("the Metro session did not end")
	}
	reg.deliverNative(app, []nativeEntry{{At: at, Level: "info", Tag: "ReactNativeJS", Message: "only copy", JSConsole: true}})
	if !strings.Contains(consoleText(t, s), "only copy") {
		t.Errorf("the JavaScript console line was dropped though no live session carries it: %s", consoleText(t, s))
	}
	if again, _ := reg.connectMetro("shop", metroTestInfo("com.example.shop", "sdk_gphone64_x86_64"), feed); again.(*session) != s {
		t.Fatal("the Metro session did not come back as itself")
	}
	reg.deliverNative(app, []nativeEntry{{At: at, Level: "info", Tag: "ReactNativeJS", Message: "Metro is back", JSConsole: true}})
	if strings.Contains(consoleText(t, s), "Metro is back") {
		t.Error("a JavaScript console line was doubled once Metro was back")
	}
}
