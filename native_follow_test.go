package main

import (
	"context"
	"log/slog"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
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
