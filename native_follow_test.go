package main

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// followerOfBadDevice reconciles a listed device whose log command cannot
// be built (its serial has a space), so that its follow ends by itself.
func followerOfBadDevice(t *testing.T, minBackoff time.Duration) (*nativeFollower, func() *nativeDevice, func()) {
	t.Helper()
	f := newNativeFollower(config{}, slog.New(slog.DiscardHandler), newNativeRecorder(), map[string]string{})
	f.runner.minBackoff, f.runner.maxBackoff = minBackoff, minBackoff
	ctx, cancel := context.WithCancel(t.Context())
	var wg sync.WaitGroup
	t.Cleanup(func() { cancel(); wg.Wait() })
	listed := []nativeDeviceStatus{{Platform: nativeAndroid, ID: "bad serial", State: "device"}}
	reconcile := func() { f.reconcile(ctx, &wg, listed, nil, nil) }
	dev := func() *nativeDevice {
		f.mu.Lock()
		defer f.mu.Unlock()
		return f.devices[nativeAndroid+"/bad serial"]
	}
	return f, dev, reconcile
}

// TestFollowOfRefusedSerialEnds: a device whose log command the closed list
// refuses (the listings never list one: they keep only serials it takes)
// is not shown as followed, says why, and is not started again and again.
func TestFollowOfRefusedSerialEnds(t *testing.T) {
	t.Parallel()
	f, dev, reconcile := followerOfBadDevice(t, 0)
	reconcile()
	first := dev().done
	<-first
	st := f.status()
	if len(st.Devices) != 1 || st.Devices[0].Following || !strings.Contains(st.Devices[0].Ended, "not a safe command argument") {
		t.Errorf("a device whose follow has ended: %+v", st.Devices)
	}
	reconcile()
	if dev().done != first {
		t.Error("the refused device's follow was started again")
	}
}

// TestAppIDsFromProjectRoot: the app ids are read from the project root
// the follower is given (the one Metro names, as the release maps'), not
// PROJECT_DIR, and the health check's source is that project's file.
func TestAppIDsFromProjectRoot(t *testing.T) {
	t.Parallel()
	root, err := filepath.Abs(filepath.Join("testdata", "native", "projects", "rn-app"))
	if err != nil {
		t.Fatal(err)
	}
	f := newNativeFollower(config{ProjectDir: t.TempDir()}, slog.New(slog.DiscardHandler), newNativeRecorder(), map[string]string{})
	f.projectRoot = func() string { return root }
	if apps := f.apps(); !slices.Contains(apps, "com.example.shop") {
		t.Fatalf("the apps followed: %v", apps)
	}
	want := nativeAppSource{ID: "com.example.shop", From: filepath.Join(root, "android", "app", "build.gradle")}
	if got := describeNative(f.status()).AppIDs; !slices.ContainsFunc(got, func(a healthNativeAppID) bool { return a.ID == want.ID && a.From == want.From }) {
		t.Errorf("the health check's appIds %+v, want %+v among them", got, want)
	}
}

// TestNativeToolPaths: a setting is looked up alone; else adb is the
// Android SDK's (ANDROID_HOME, then ANDROID_SDK_ROOT) when it is an
// executable file there, else the one on PATH.
func TestNativeToolPaths(t *testing.T) {
	home, root, bin := t.TempDir(), t.TempDir(), t.TempDir()
	for _, p := range []string{filepath.Join(root, "platform-tools", "adb"), filepath.Join(bin, "adb"), filepath.Join(bin, "xcrun")} {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("#!/bin/sh\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.MkdirAll(filepath.Join(home, "platform-tools", "adb"), 0o755); err != nil { // a directory, not the tool
		t.Fatal(err)
	}
	t.Setenv("PATH", bin)
	env := map[string]string{"ANDROID_HOME": home, "ANDROID_SDK_ROOT": root}
	for _, tc := range []struct {
		name string
		cfg  config
		env  map[string]string
		want map[string]string
	}{
		{"sdk", config{}, env, map[string]string{nativeToolADB: filepath.Join(root, "platform-tools", "adb"), nativeToolXcrun: filepath.Join(bin, "xcrun")}},
		{"path", config{}, nil, map[string]string{nativeToolADB: filepath.Join(bin, "adb"), nativeToolXcrun: filepath.Join(bin, "xcrun")}},
		{"settings missing", config{ADBPath: filepath.Join(home, "nope"), XcrunPath: "nope"}, env, map[string]string{}},
		{"settings", config{ADBPath: filepath.Join(bin, "xcrun"), XcrunPath: "adb"}, env, map[string]string{nativeToolADB: filepath.Join(bin, "xcrun"), nativeToolXcrun: filepath.Join(bin, "adb")}},
	} {
		got := nativeToolPaths(tc.cfg, func(k string) string { return tc.env[k] })
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tc.name, diff)
		}
	}
}
