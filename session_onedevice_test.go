package main

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestNativeOnPageDevice: between the native side and Metro a device is
// one device only when both name it the same (a simulator exactly, an
// Android model as adb spells it) and no other listed device has that
// name; an adapter that gives only a model still joins by containment.
func TestNativeOnPageDevice(t *testing.T) {
	t.Parallel()
	view := func(via, app, device string) sessionView {
		return sessionView{Via: via, Info: &adapterInfo{App: json.RawMessage(app), Device: json.RawMessage(device)}}
	}
	shop := `{"name":"com.example.shop","bundleId":"com.example.shop"}`
	tests := []struct {
		name          string
		native, other sessionView
		want          bool
	}{
		{"the same simulator", view(sessionViaNative, shop, `{"name":"iPhone 16","platform":"ios"}`), view(sessionViaMetro, shop, `{"name":"iPhone 16"}`), true},
		{"a simulator whose name contains the page's", view(sessionViaNative, shop, `{"name":"iPhone 16 Pro","platform":"ios"}`), view(sessionViaMetro, shop, `{"name":"iPhone 16"}`), false},
		{"a simulator whose name the page's contains", view(sessionViaNative, shop, `{"name":"iPhone 16","platform":"ios"}`), view(sessionViaMetro, shop, `{"name":"iPhone 16 Pro"}`), false},
		{"a simulator's name in another case", view(sessionViaNative, shop, `{"name":"iPhone 16","platform":"ios"}`), view(sessionViaMetro, shop, `{"name":"iphone 16"}`), false},
		{"an Android model as adb spells it", view(sessionViaNative, shop, `{"name":"Pixel_8","platform":"android"}`), view(sessionViaMetro, shop, `{"name":"Pixel 8"}`), true},
		{"another Android model", view(sessionViaNative, shop, `{"name":"Pixel_8","platform":"android"}`), view(sessionViaMetro, shop, `{"name":"Pixel 8 Pro"}`), false},
		{"React Native's name for an Android device", view(sessionViaNative, shop, `{"name":"sdk_gphone64_x86_64","platform":"android"}`), view(sessionViaMetro, shop, `{"name":"sdk_gphone64_x86_64 - 14 - API 34"}`), true},
		{"React Native's name for a phone", view(sessionViaNative, shop, `{"name":"Pixel_8","platform":"android"}`), view(sessionViaMetro, shop, `{"name":"Pixel 8 - 15 - API 35"}`), true},
		{"React Native's name for another phone", view(sessionViaNative, shop, `{"name":"Pixel_8","platform":"android"}`), view(sessionViaMetro, shop, `{"name":"Pixel 8 Pro - 15 - API 35"}`), false},
		{"twin emulators under React Native's name", view(sessionViaNative, shop, `{"name":"sdk_gphone64_x86_64","platform":"android","sameNameAs":["emulator-5556"]}`), view(sessionViaMetro, shop, `{"name":"sdk_gphone64_x86_64 - 14 - API 34"}`), false},
		{"twin emulators", view(sessionViaNative, shop, `{"name":"sdk_gphone64_x86_64","platform":"android","sameNameAs":["emulator-5556"]}`), view(sessionViaMetro, shop, `{"name":"sdk_gphone64_x86_64"}`), false},
		{"a page naming no device", view(sessionViaNative, shop, `{"name":"iPhone 16","platform":"ios"}`), view(sessionViaMetro, shop, `{}`), false},
		{"Reactotron's model alone", view(sessionViaNative, shop, `{"name":"iPhone 16 Pro","platform":"ios"}`), view(sessionViaReactotron, `{"name":"Shop"}`, `{"model":"iPhone"}`), true},
		{"Metro and a model alone", view(sessionViaMetro, shop, `{"name":"iPhone 16 Pro"}`), view(sessionViaReactotron, `{"name":"Shop"}`, `{"model":"iPhone"}`), true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := sameApp(tt.native, tt.other); got != tt.want {
				t.Errorf("sameApp(%s, %s) = %t, want %t", tt.native.Info.Device, tt.other.Info.Device, got, tt.want)
			}
			if got := sameApp(tt.other, tt.native); got != tt.want {
				t.Error("sameApp is not symmetric")
			}
		})
	}
}

// TestCrashInItsOwnSimulatorsSession: iPhone 16 runs the dev build under
// Metro, iPhone 16 Pro beside it a release build of the same app. Each
// one's crash lands in its own simulator's session: iPhone 16's in Metro's,
// iPhone 16 Pro's in its native session.
func TestCrashInItsOwnSimulatorsSession(t *testing.T) {
	t.Parallel()
	reg, _ := newTestRegistry(100)
	metro, _ := reg.connectMetro("metro:com.example.shop@iPhone 16", metroTestInfo("com.example.shop", "iPhone 16"), nativeTestFeed{})
	dev := nativeApp{Platform: nativeIOS, DeviceID: "AAAA-16", DeviceName: "iPhone 16", AppID: "com.example.shop"}
	pro := nativeApp{Platform: nativeIOS, DeviceID: "BBBB-16PRO", DeviceName: "iPhone 16 Pro", AppID: "com.example.shop"}
	reg.deliverNative(pro, []nativeEntry{{Level: "error", Message: "*** Terminating app on the Pro", Crash: nativeCrashObjC}})
	reg.deliverNative(dev, []nativeEntry{{Level: "error", Message: "*** Terminating app on the 16", Crash: nativeCrashObjC}})
	metroText := consoleText(t, metro.(*session))
	if !strings.Contains(metroText, "on the 16") || strings.Contains(metroText, "on the Pro") {
		t.Errorf("the iPhone 16's Metro session holds: %s", metroText)
	}
	native, err := reg.find(nativeSessionID(pro))
	if err != nil {
		t.Fatalf("the iPhone 16 Pro's crash made no native session: %v", err)
	}
	if text := consoleText(t, native); !strings.Contains(text, "on the Pro") || strings.Contains(text, "on the 16\"") {
		t.Errorf("the iPhone 16 Pro's native session holds: %s", text)
	}
	if _, err := reg.find(nativeSessionID(dev)); err == nil {
		t.Error("the iPhone 16's crash made a native session beside its Metro session")
	}
}

// TestTwinEmulatorsStayApart: two emulators of one image share a model,
// the only name Metro gives a device: the app's lines on either never go
// to the Metro session of that model, and its device names the twin. With
// the twin gone, they do.
func TestTwinEmulatorsStayApart(t *testing.T) {
	t.Parallel()
	reg, _ := newTestRegistry(100)
	metro, _ := reg.connectMetro("metro:com.example.shop@sdk_gphone64_x86_64", metroTestInfo("com.example.shop", "sdk_gphone64_x86_64"), nativeTestFeed{})
	app := nativeApp{Platform: nativeAndroid, DeviceID: "emulator-5554", DeviceName: "sdk_gphone64_x86_64", AppID: "com.example.shop",
		SameNameAs: []string{"emulator-5556"}}
	reg.deliverNative(app, []nativeEntry{{Level: "warn", Tag: "ShopNative", Message: "on a twin"}})
	if strings.Contains(consoleText(t, metro.(*session)), "on a twin") {
		t.Fatal("a twin emulator's line went to the Metro session of its model")
	}
	native, err := reg.find(nativeSessionID(app))
	if err != nil || !native.isLive() || !strings.Contains(consoleText(t, native), "on a twin") {
		t.Fatalf("the twin's native session: %v", err)
	}
	if device := string(native.view().Info.Device); !strings.Contains(device, `"sameNameAs":["emulator-5556"]`) {
		t.Errorf("the native session's device does not name its twin: %s", device)
	}
	app.SameNameAs = nil
	reg.deliverNative(app, []nativeEntry{{Level: "warn", Tag: "ShopNative", Message: "alone"}})
	if !strings.Contains(consoleText(t, metro.(*session)), "alone") || native.isLive() {
		t.Error("with no twin listed, the emulator's line did not join the Metro session of its model")
	}
}

// TestSameNameDevices: the listed devices of one platform sharing a name,
// as the follower sees them and as the health check words them.
func TestSameNameDevices(t *testing.T) {
	t.Parallel()
	f := &nativeFollower{devices: map[string]*nativeDevice{}, runner: newNativeRunner(nil)}
	for _, d := range []nativeDeviceStatus{
		{Platform: nativeAndroid, ID: "emulator-5554", Name: "sdk_gphone64_x86_64", State: "device"},
		{Platform: nativeAndroid, ID: "emulator-5556", Name: "sdk_gphone64_x86_64", State: "device"},
		{Platform: nativeAndroid, ID: "emulator-5558", Name: "sdk_gphone64_x86_64", State: "gone"},
		{Platform: nativeAndroid, ID: "R58M1", Name: "Pixel_8", State: "device"},
		{Platform: nativeIOS, ID: "AAAA", Name: "sdk_gphone64_x86_64", State: "device"},
	} {
		dev := newNativeDevice(f, d.Platform, d.ID)
		dev.setListed(d.Name, d.State, nil)
		f.devices[d.Platform+"/"+d.ID] = dev
	}
	if got := f.devices["android/emulator-5554"].app("com.example.shop").SameNameAs; strings.Join(got, ",") != "emulator-5556" {
		t.Errorf("emulator-5554's twins: %v", got)
	}
	if got := f.devices["android/R58M1"].app("com.example.shop").SameNameAs; got != nil {
		t.Errorf("a device with a name of its own has twins: %v", got)
	}
	h := describeNative(f.status())
	var apart []string
	for _, d := range h.Devices {
		if d.NotJoined != "" {
			apart = append(apart, d.ID)
		}
	}
	if strings.Join(apart, ",") != "emulator-5554,emulator-5556" {
		t.Errorf("the devices said to be kept apart: %v", apart)
	}
	if d := h.Devices[1]; !strings.Contains(d.NotJoined, "sdk_gphone64_x86_64 is also the name of emulator-5556") || !strings.Contains(d.NotJoined, "native sessions of their own") {
		t.Errorf("the wording: %q", d.NotJoined)
	}
}
