package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// Simulator log lines as `log stream --style ndjson` prints them.
var simSeeds = []string{
	`Filtering the log data using "processImagePath CONTAINS \"/Containers/Bundle/Application/\""`,
	`{"traceID":1,"eventMessage":"Running \"shop\" with {\"rootTag\":1}","eventType":"logEvent","source":null,"formatString":"%{public}s","activityIdentifier":0,"subsystem":"com.facebook.react.log","category":"javascript","threadID":4711,"senderImageUUID":"A","backtrace":{"frames":[]},"bootUUID":"","processImagePath":"\/Users\/dev\/Library\/Developer\/CoreSimulator\/Devices\/UDID\/data\/Containers\/Bundle\/Application\/UUID\/Shop.app\/Shop","senderImagePath":"\/Shop.app\/Shop","timestamp":"2026-11-27 05:30:01.123456+0000","machTimestamp":1,"messageType":"Default","processImageUUID":"B","processID":4300,"senderProgramCounter":1,"parentActivityIdentifier":0,"timezoneName":""}`,
	`{"eventMessage":"*** Terminating app due to uncaught exception 'NSInvalidArgumentException', reason: '-[__NSCFNumber length]: unrecognized selector'\n*** First throw call stack:\n(0x1 0x2 0x3)","eventType":"logEvent","subsystem":"","category":"","threadID":4712,"processImagePath":"/x/Containers/Bundle/Application/U/Shop.app/Shop","timestamp":"2026-11-27 05:30:02.000000+0000","messageType":"Error","processID":4300}`,
	`{"eventType":"activityCreateEvent","eventMessage":"activity","processID":1}`,
	`{"eventMessage":5}`,
	`[1,2]`,
}

func TestParseSimLogLine(t *testing.T) {
	t.Parallel()
	got, err := parseSimLogLine([]byte(simSeeds[1]))
	if err != nil {
		t.Fatal(err)
	}
	want := simLogLine{Timestamp: "2026-11-27 05:30:01.123456+0000", MessageType: "Default", EventType: "logEvent",
		Message: `Running "shop" with {"rootTag":1}`, PID: 4300, TID: 4711,
		ImagePath: "/Users/dev/Library/Developer/CoreSimulator/Devices/UDID/data/Containers/Bundle/Application/UUID/Shop.app/Shop",
		Subsystem: "com.facebook.react.log"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if at := simTime(got.Timestamp, time.Time{}); !at.Equal(time.Date(2026, 11, 27, 5, 30, 1, 123456000, time.UTC)) {
		t.Errorf("timestamp: %v", at)
	}
	if simAppBundleName(got.ImagePath) != "Shop" || simAppOf(got, []string{"com.other", "com.example.shop"}) != "com.example.shop" {
		t.Errorf("the event's app: bundle %q, app %q", simAppBundleName(got.ImagePath), simAppOf(got, []string{"com.example.shop"}))
	}
	for _, bad := range []string{simSeeds[0], simSeeds[3], simSeeds[4], simSeeds[5], ""} {
		if _, err := parseSimLogLine([]byte(bad)); !errors.Is(err, errSimLogLine) {
			t.Errorf("%q: %v, want errSimLogLine", bad, err)
		}
	}
}

// FuzzParseSimLogLine: a parsed event's text is clean, and the event
// written back as JSON parses to the same event.
func FuzzParseSimLogLine(f *testing.F) {
	for _, s := range simSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		l, err := parseSimLogLine(line)
		if err != nil {
			if !errors.Is(err, errSimLogLine) {
				t.Fatalf("%q: error %v is not errSimLogLine", line, err)
			}
			return
		}
		for _, s := range []string{l.Timestamp, l.MessageType, l.ImagePath, l.Subsystem} {
			if cleanLogText(s) != s {
				t.Fatalf("%q: field %q is not clean", line, s)
			}
		}
		for part := range strings.SplitSeq(l.Message, "\n") {
			if cleanLogText(part) != part {
				t.Fatalf("%q: message %q is not clean", line, l.Message)
			}
		}
		again, _ := json.Marshal(l)
		back, err := parseSimLogLine(again)
		if err != nil {
			t.Fatalf("%q written back as %s does not parse: %v", line, again, err)
		}
		if diff := cmp.Diff(l, back); diff != "" {
			t.Fatalf("%q: round trip differs (-first +again):\n%s", line, diff)
		}
	})
}

func TestParseSimctlDevices(t *testing.T) {
	t.Parallel()
	out := `{"devices":{"com.apple.CoreSimulator.SimRuntime.iOS-18-0":[{"lastBootedAt":"2026-11-27T05:00:00Z","dataPath":"/x","udid":"6F1B1C5E-2A6B-4A6E-9C1D-1D2E3F4A5B6C","isAvailable":true,"deviceTypeIdentifier":"com.apple.CoreSimulator.SimDeviceType.iPhone-15-Pro","state":"Booted","name":"iPhone 15 Pro"},{"udid":"-rm","state":"Booted","name":"bad"},{"udid":"AAAA","state":"Shutdown","name":"off"}]}}`
	got, err := parseSimctlDevices([]byte(out))
	if err != nil {
		t.Fatal(err)
	}
	want := []nativeDeviceStatus{{Platform: nativeIOS, ID: "6F1B1C5E-2A6B-4A6E-9C1D-1D2E3F4A5B6C", Name: "iPhone 15 Pro", State: "device"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if _, err := parseSimctlDevices([]byte("not json")); err == nil {
		t.Error("a listing that is not JSON was read")
	}
}

// launchctlSeeds are `launchctl list` outputs as a simulator prints them,
// and some that are not.
var launchctlSeeds = []string{
	"PID\tStatus\tLabel\n-\t0\tcom.apple.assertiond\n4300\t0\tUIKitApplication:com.example.shop[4f2a][rb-legacy]\n-\t-9\tUIKitApplication:com.example.other[91c3][rb-legacy]\n",
	"4300\t0\tUIKitApplication:com.example.shop[4f2a][rb-legacy]\n4301\t0\tUIKitApplication:com.example.shop[77aa][rb-legacy]\n4300\t0\tUIKitApplication:com.example.shop[4f2a]\n",
	"-4\t0\tUIKitApplication:com.example.shop[1]\n0\t0\tUIKitApplication:com.example.shop\nx\t0\tUIKitApplication:com.example.shop\n",
	"4300 0 UIKitApplication:com.example.shop[4f2a] extra\n\n\t\t\n",
	"",
}

// TestParseLaunchctlList: the followed apps' running processes, by bundle
// id; an app whose job runs none ("-"), another app, a system job, a line
// of another shape and a pid twice are not.
func TestParseLaunchctlList(t *testing.T) {
	t.Parallel()
	apps := []string{"com.example.shop", "com.example.other"}
	tests := []struct {
		out  string
		want map[string][]int
	}{
		{launchctlSeeds[0], map[string][]int{"com.example.shop": {4300}}},
		{launchctlSeeds[1], map[string][]int{"com.example.shop": {4300, 4301}}},
		{launchctlSeeds[2], map[string][]int{}},
		{launchctlSeeds[3], map[string][]int{}},
		{"812\t0\tUIKitApplication:com.apple.Preferences[9][rb-legacy]\n", map[string][]int{}},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, parseLaunchctlList(tt.out, apps)); diff != "" {
			t.Errorf("%q (-want +got):\n%s", tt.out, diff)
		}
	}
	var many strings.Builder
	for pid := 1; pid <= 2*maxAppPIDs; pid++ {
		fmt.Fprintf(&many, "%d\t0\tUIKitApplication:com.example.shop[%x]\n", pid, pid)
	}
	if got := parseLaunchctlList(many.String(), apps); len(got["com.example.shop"]) != maxAppPIDs {
		t.Errorf("%d pids kept of one app, want at most %d", len(got["com.example.shop"]), maxAppPIDs)
	}
}

// FuzzParseLaunchctlList: only followed apps, each with distinct positive
// pids within the bound, and the result written back as a listing reads
// the same.
func FuzzParseLaunchctlList(f *testing.F) {
	for _, s := range launchctlSeeds {
		f.Add(s)
	}
	apps := []string{"com.example.shop", "com.example.other"}
	f.Fuzz(func(t *testing.T, out string) {
		got := parseLaunchctlList(out, apps)
		var back strings.Builder
		for app, pids := range got {
			if !slices.Contains(apps, app) || len(pids) == 0 || len(pids) > maxAppPIDs {
				t.Fatalf("%q: app %q with pids %v", out, app, pids)
			}
			for i, pid := range pids {
				if pid <= 0 || slices.Contains(pids[:i], pid) {
					t.Fatalf("%q: pids %v of %q", out, pids, app)
				}
				fmt.Fprintf(&back, "%d\t0\t%s%s[0][rb-legacy]\n", pid, simAppLabel, app)
			}
		}
		if diff := cmp.Diff(got, parseLaunchctlList(back.String(), apps)); diff != "" {
			t.Fatalf("%q written back does not read the same (-first +again):\n%s", out, diff)
		}
	})
}

// TestSimctlAppsCommand: the listing of a simulator's apps is its template
// with the udid in its place, and refuses a udid that is not one.
func TestSimctlAppsCommand(t *testing.T) {
	t.Parallel()
	c, err := deviceCommand(cmdSimctlApps, "6F1B1C5E-2A6B-4A6E-9C1D-1D2E3F4A5B6C")
	if err != nil || c.String() != "xcrun simctl spawn 6F1B1C5E-2A6B-4A6E-9C1D-1D2E3F4A5B6C launchctl list" ||
		strings.ReplaceAll(c.String(), "6F1B1C5E-2A6B-4A6E-9C1D-1D2E3F4A5B6C", "UDID") != nativeCommandTemplates[cmdSimctlApps] {
		t.Errorf("the command: %q, %v", c, err)
	}
	for _, udid := range []string{"", "-d", "a b", "x;reboot", "$(id)"} {
		if _, err := deviceCommand(cmdSimctlApps, udid); !errors.Is(err, errNativeArgument) {
			t.Errorf("udid %q: %v", udid, err)
		}
	}
}
