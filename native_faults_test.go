//go:build unix

package main

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// faultSink is a nativeSink that keeps every message delivered and every
// app's end.
type faultSink struct {
	mu        sync.Mutex
	delivered []string // "app: message"
	ended     []string
}

func (*faultSink) nativeAppIDs() []string { return nil }
func (s *faultSink) deliverNative(app nativeApp, entries []nativeEntry) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, e := range entries {
		s.delivered = append(s.delivered, app.AppID+": "+e.Message)
	}
}
func (s *faultSink) nativeAppEnded(app nativeApp) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.ended = append(s.ended, app.AppID)
}

func (s *faultSink) endedApps() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.ended)
}

// waitDelivered waits until a message of app holding part is delivered.
func (s *faultSink) waitDelivered(t *testing.T, app, part string) {
	t.Helper()
	waitUntil(t, "a line of "+app+" holding "+part, func() bool {
		s.mu.Lock()
		defer s.mu.Unlock()
		return slices.ContainsFunc(s.delivered, func(m string) bool { return strings.HasPrefix(m, app+": ") && strings.Contains(m, part) })
	})
}

// faultRig runs a follower of com.example.shop against the stand-in adb,
// whose one device runs the app as pid 4242 and has logged its first
// lines, delivered once the rig returns. configure runs before the
// follower starts.
func faultRig(t *testing.T, configure func(f *nativeFollower)) (*nativeFollower, string, *faultSink) {
	t.Helper()
	adb, _, dir := nativeStandin(t)
	standinAndroidDevice(t, dir, map[string]string{"com.example.shop": "4242\n"})
	cfg := config{NativeApps: []string{"com.example.shop"}}
	cfg.Tune.NativePoll, cfg.Tune.NativeFlush = 10*time.Millisecond, testNativeFlush
	sink := &faultSink{}
	f := newNativeFollower(cfg, slog.New(slog.DiscardHandler), sink, map[string]string{nativeToolADB: adb})
	if configure != nil {
		configure(f)
	}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() {
		defer close(done)
		f.run(ctx)
	}()
	t.Cleanup(func() {
		cancel()
		<-done
		waitNoStandin(t, dir)
	})
	waitStandinReading(t, dir, "logcat-emulator-5554", 1)
	appendStandin(t, dir, "logcat-emulator-5554", logcatStart)
	sink.waitDelivered(t, "com.example.shop", "cart loaded")
	return f, dir, sink
}

// countCommands is how many commands the stand-in ran that hold part.
func countCommands(t *testing.T, dir, part string) int {
	n := 0
	for _, c := range standinCommands(t, dir) {
		if strings.Contains(c, part) {
			n++
		}
	}
	return n
}

// waitMoreCommands waits until n more commands holding part have run than
// when it was called: the follower has taken the answers of those before.
func waitMoreCommands(t *testing.T, dir, part string, n int) {
	t.Helper()
	from := countCommands(t, dir, part)
	waitUntil(t, "more commands "+part, func() bool { return countCommands(t, dir, part) >= from+n })
}

func shopDevice(f *nativeFollower) nativeDeviceStatus {
	for _, d := range f.status().Devices {
		if d.ID == "emulator-5554" {
			return d
		}
	}
	return nativeDeviceStatus{}
}

const adbUnauthorized = "error: device unauthorized.\nThis adb server's $ADB_VENDOR_KEYS is not set\n" +
	"Try 'adb kill-server' if that seems wrong.\nOtherwise check for a confirmation dialog on your device.\n"

// TestAdbErrorIsNotAppEnd: pidof's exit status 1 from adb's own failure
// (the device unauthorized) keeps the app's pids and session; the device
// says adb's words; pidof answering with no pid then ends the app.
func TestAdbErrorIsNotAppEnd(t *testing.T) {
	t.Parallel()
	f, dir, sink := faultRig(t, nil)
	writeStandin(t, dir, "pidof-fail-emulator-5554", adbUnauthorized)
	waitUntil(t, "the device says adb's words", func() bool { return shopDevice(f).AskFailed == "error: device unauthorized." })
	waitMoreCommands(t, dir, "pidof", 3)
	if ended := sink.endedApps(); len(ended) != 0 {
		t.Fatalf("adb's own failure ended %v", ended)
	}
	if d := shopDevice(f); len(d.Apps) != 1 || !slices.Equal(d.Apps[0].PIDs, []int{4242}) {
		t.Errorf("the app's pids after adb failed to ask: %+v", d.Apps)
	}
	appendStandin(t, dir, "logcat-emulator-5554", "11-27 05:30:02.000  4242  4242 I ReactNativeJS: still here\n")
	sink.waitDelivered(t, "com.example.shop", "still here")
	// pidof runs, and names no process: the app has ended.
	os.Remove(filepath.Join(dir, "pidof-fail-emulator-5554"))
	writeStandin(t, dir, "pidof-com.example.shop", "")
	waitUntil(t, "the app ended", func() bool { return slices.Equal(sink.endedApps(), []string{"com.example.shop"}) })
	if d := shopDevice(f); d.AskFailed != "" {
		t.Errorf("adb's words stay after it could ask: %q", d.AskFailed)
	}
}

// TestLogcatFailureSaysWhy: a log stream that adb ends with its own error
// says adb's words beside the device.
func TestLogcatFailureSaysWhy(t *testing.T) {
	t.Parallel()
	f, dir, _ := faultRig(t, nil)
	writeStandin(t, dir, "logcat-fail-emulator-5554", "error: device offline\n")
	writeStandin(t, dir, "gone-emulator-5554", "")
	waitUntil(t, "logEnded says adb's words", func() bool { return strings.HasSuffix(shopDevice(f).Ended, "exit status 1: error: device offline") })
}

// TestListingFailureKeepsFollowing: `adb devices -l` failing says why and
// stops nothing: the device's logcat runs on (it is never started again),
// no app ends, and the app's lines keep coming.
func TestListingFailureKeepsFollowing(t *testing.T) {
	t.Parallel()
	f, dir, sink := faultRig(t, nil)
	writeStandin(t, dir, "devices-fail", "error: protocol fault (couldn't read status): Connection reset by peer\n")
	waitUntil(t, "the listing error", func() bool {
		return strings.HasSuffix(f.status().ListError, "error: protocol fault (couldn't read status): Connection reset by peer")
	})
	waitMoreCommands(t, dir, "devices -l", 3)
	if d := shopDevice(f); !d.Following {
		t.Errorf("a failed listing stopped the device's follow: %+v", d)
	}
	os.Remove(filepath.Join(dir, "devices-fail"))
	waitUntil(t, "a listing that succeeds", func() bool { return f.status().ListError == "" })
	appendStandin(t, dir, "logcat-emulator-5554", "11-27 05:30:02.000  4242  4242 I ReactNativeJS: after the failed listings\n")
	sink.waitDelivered(t, "com.example.shop", "after the failed listings")
	if n := countCommands(t, dir, "logcat"); n != 1 {
		t.Errorf("logcat ran %d times, want once", n)
	}
	if ended := sink.endedApps(); len(ended) != 0 {
		t.Errorf("a failed listing ended %v", ended)
	}
}

// TestOfflineAndBackKeepsApps: a device offline, then unauthorized, then
// online again has its follow stopped meanwhile but its app kept: no end,
// and its next lines arrive.
func TestOfflineAndBackKeepsApps(t *testing.T) {
	t.Parallel()
	f, dir, sink := faultRig(t, nil)
	for _, state := range []string{"offline", "unauthorized"} {
		writeStandin(t, dir, "devices", "List of devices attached\nemulator-5554          "+state+" transport_id:1\n\n")
		waitUntil(t, "the device "+state, func() bool { d := shopDevice(f); return d.State == state && !d.Following })
	}
	if h := describeNative(f.status()); !strings.Contains(h.Devices[0].Kept, "unauthorized") {
		t.Errorf("the health check does not say the app is kept: %+v", h.Devices[0])
	}
	writeStandin(t, dir, "devices", adbOneDevice)
	waitStandinReading(t, dir, "logcat-emulator-5554", 2)
	appendStandin(t, dir, "logcat-emulator-5554", "11-27 05:30:02.000  4242  4242 I ReactNativeJS: back online\n")
	sink.waitDelivered(t, "com.example.shop", "back online")
	if ended := sink.endedApps(); len(ended) != 0 {
		t.Errorf("the device offline ended %v", ended)
	}
}

// TestNewADBServerKeepsUnlistedDevice: an adb server that an adb command
// just started lists no device yet; the device followed is kept (its app
// not ended) until the server lists it again.
func TestNewADBServerKeepsUnlistedDevice(t *testing.T) {
	t.Parallel()
	f, dir, sink := faultRig(t, func(f *nativeFollower) { f.serverGrace = time.Hour })
	writeStandin(t, dir, "daemon-start", "")
	waitUntil(t, "the adb server start noted", func() bool { return !f.status().ADBServer.At.IsZero() })
	if said := f.status().ADBServer.Said; said != "* daemon not running; starting now at tcp:5037" {
		t.Errorf("the server start says %q", said)
	}
	writeStandin(t, dir, "devices", "List of devices attached\n\n")
	waitUntil(t, "the device unlisted", func() bool { return shopDevice(f).State == "unlisted" })
	waitMoreCommands(t, dir, "devices -l", 3)
	writeStandin(t, dir, "devices", adbOneDevice)
	waitStandinReading(t, dir, "logcat-emulator-5554", 2)
	appendStandin(t, dir, "logcat-emulator-5554", "11-27 05:30:02.000  4242  4242 I ReactNativeJS: listed again\n")
	sink.waitDelivered(t, "com.example.shop", "listed again")
	if ended := sink.endedApps(); len(ended) != 0 {
		t.Errorf("a new adb server's empty listing ended %v", ended)
	}
}

// TestChildrenRunWithoutLogTags: ANDROID_LOG_TAGS in the server's
// environment reaches no child (adb would hand it to logcat as its
// filter), and the health check says it was set and ignored.
func TestChildrenRunWithoutLogTags(t *testing.T) {
	t.Setenv(nativeLogTagsEnv, "*:S")
	f, dir, _ := faultRig(t, nil)
	data, _ := os.ReadFile(filepath.Join(dir, "logtags"))
	got := strings.Fields(string(data))
	if len(got) == 0 || slices.ContainsFunc(got, func(s string) bool { return s != "unset" }) {
		t.Errorf("the children's ANDROID_LOG_TAGS: %q", got)
	}
	if h := describeNative(f.status()); !strings.Contains(h.LogTags, "ANDROID_LOG_TAGS=*:S") {
		t.Errorf("the health check says %q", h.LogTags)
	}
}

// TestOutputCarriesStderr: a short command that fails returns its exit
// status (for pidof's "no such process") with what it said on stderr; a
// silent one says nothing.
func TestOutputCarriesStderr(t *testing.T) {
	t.Parallel()
	r := newNativeRunner(map[string]string{"sh": "/bin/sh"})
	_, err := r.output(t.Context(), nativeCommand{tool: "sh", args: []string{"-c", "echo 'error: device offline' >&2; exit 1"}})
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 1 || saidOnStderr(err) == "" || !strings.HasSuffix(err.Error(), "exit status 1: error: device offline") {
		t.Errorf("adb's failure: %v", err)
	}
	_, err = r.output(t.Context(), nativeCommand{tool: "sh", args: []string{"-c", "exit 1"}})
	if !errors.As(err, &exit) || exit.ExitCode() != 1 || saidOnStderr(err) != "" {
		t.Errorf("a silent exit status 1: %v", err)
	}
}

// TestNewADBServerGraceEnds: a device that a new adb server still does
// not list once the grace has passed is gone: its app ends.
func TestNewADBServerGraceEnds(t *testing.T) {
	t.Parallel()
	var ahead atomic.Int64 // how far the runner's clock is ahead
	f, dir, sink := faultRig(t, func(f *nativeFollower) {
		f.serverGrace = time.Hour
		f.runner.now = func() time.Time { return time.Now().Add(time.Duration(ahead.Load())) }
	})
	writeStandin(t, dir, "daemon-start", "")
	waitUntil(t, "the adb server start noted", func() bool { return !f.status().ADBServer.At.IsZero() })
	writeStandin(t, dir, "devices", "List of devices attached\n\n")
	waitUntil(t, "the device unlisted", func() bool { return shopDevice(f).State == "unlisted" })
	if ended := sink.endedApps(); len(ended) != 0 {
		t.Fatalf("ended within the grace: %v", ended)
	}
	ahead.Store(int64(2 * time.Hour))
	waitUntil(t, "the app ended", func() bool { return slices.Equal(sink.endedApps(), []string{"com.example.shop"}) })
	waitUntil(t, "the device forgotten", func() bool { return len(f.status().Devices) == 0 })
}

// TestListingReadyClearsItsWords: a device listed with `no permissions`
// says adb's words; once a listing shows it ready they are gone, though
// no app is followed, so no lookup runs to clear them.
func TestListingReadyClearsItsWords(t *testing.T) {
	t.Parallel()
	adb, _, dir := nativeStandin(t)
	standinAndroidDevice(t, dir, nil)
	writeStandin(t, dir, "devices", "List of devices attached\nemulator-5554          no permissions (user in plugdev group; are your udev rules wrong?); see [http://developer.android.com/tools/device.html] transport_id:1\n\n")
	cfg := config{ProjectDir: t.TempDir()}
	cfg.Tune.NativePoll, cfg.Tune.NativeFlush = 10*time.Millisecond, testNativeFlush
	f := newNativeFollower(cfg, slog.New(slog.DiscardHandler), &faultSink{}, map[string]string{nativeToolADB: adb})
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() {
		defer close(done)
		f.run(ctx)
	}()
	defer func() {
		cancel()
		<-done
		waitNoStandin(t, dir)
	}()
	waitUntil(t, "the listing's words", func() bool { return strings.Contains(shopDevice(f).AskFailed, "plugdev") })
	writeStandin(t, dir, "devices", adbOneDevice)
	waitUntil(t, "the device ready", func() bool { return shopDevice(f).State == "device" })
	if said := shopDevice(f).AskFailed; said != "" {
		t.Errorf("a ready device still cannot be asked: %q", said)
	}
}
