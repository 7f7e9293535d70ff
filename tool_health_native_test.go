package main

import (
	"strings"
	"testing"
	"time"
)

// TestHealthNativeSaysWhy: the health check words adb's failures beside
// what they concern: the listing, a device it cannot ask, a device whose
// apps are kept while it is not online, a restarted adb server, and an
// ANDROID_LOG_TAGS ignored.
func TestHealthNativeSaysWhy(t *testing.T) {
	t.Parallel()
	h := describeNative(nativeStatus{ADB: "/usr/bin/adb", ListError: "adb devices -l: exit status 1: error: protocol fault",
		ADBServer: nativeServerStart{At: time.Date(2026, 11, 28, 15, 0, 0, 0, time.UTC), Said: "adb server version (41) doesn't match this client (39); killing..."},
		LogTags:   "*:S",
		Devices: []nativeDeviceStatus{{Platform: nativeAndroid, ID: "R58M12345", State: "unauthorized", AskFailed: "error: device unauthorized.",
			Apps: []nativeAppStatus{{ID: "com.example.shop", PIDs: []int{4242}}}}}})
	for _, c := range []struct{ field, want string }{
		{h.Error, "listing devices fails, so every device followed stays followed until a listing succeeds: adb devices -l: exit status 1: error: protocol fault"},
		{h.ADBServer, "adb server version (41) doesn't match this client (39); killing..."},
		{h.LogTags, "ANDROID_LOG_TAGS=*:S is set in the server's environment and ignored"},
		{h.Devices[0].CannotAsk, "adb cannot ask the device; its apps' state is kept: error: device unauthorized."},
		{h.Devices[0].Kept, "not followed while unauthorized"},
	} {
		if !strings.Contains(c.field, c.want) {
			t.Errorf("%q does not say %q", c.field, c.want)
		}
	}
	if h := describeNative(nativeStatus{ADB: "/usr/bin/adb"}); h.Error != "" || h.ADBServer != "" || h.LogTags != "" {
		t.Errorf("a tidy native side says %+v", h)
	}
	fresh := describeNative(nativeStatus{Devices: []nativeDeviceStatus{{Platform: nativeAndroid, ID: "R58M12345", State: "unauthorized",
		Apps: []nativeAppStatus{{ID: "com.example.shop"}}}}})
	if fresh.Devices[0].Kept != "" {
		t.Errorf("a device never followed keeps nothing, yet says %q", fresh.Devices[0].Kept)
	}
}
