package main

import (
	"encoding/json"
	"errors"
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
		Subsystem: "com.facebook.react.log", Category: "javascript"}
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
		for _, s := range []string{l.Timestamp, l.MessageType, l.ImagePath, l.Subsystem, l.Category} {
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
	want := []bootedSimulator{{UDID: "6F1B1C5E-2A6B-4A6E-9C1D-1D2E3F4A5B6C", Name: "iPhone 15 Pro"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if _, err := parseSimctlDevices([]byte("not json")); err == nil {
		t.Error("a listing that is not JSON was read")
	}
}
