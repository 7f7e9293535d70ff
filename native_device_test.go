//go:build unix

package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// stallingSink holds the first delivery until release is closed, then
// records what each delivery carries.
type stallingSink struct {
	app     string
	stalled chan struct{} // closed when the first delivery waits
	release chan struct{}
	once    sync.Once
	freed   sync.Once
	mu      sync.Mutex
	msgs    []string
}

func (s *stallingSink) nativeAppIDs() []string   { return []string{s.app} }
func (s *stallingSink) nativeAppEnded(nativeApp) {}
func (s *stallingSink) deliverNative(_ nativeApp, entries []nativeEntry) {
	s.once.Do(func() { close(s.stalled) })
	<-s.release
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, e := range entries {
		s.msgs = append(s.msgs, e.Message)
	}
}

// free lets every delivery through.
func (s *stallingSink) free() { s.freed.Do(func() { close(s.release) }) }

func (s *stallingSink) got(part string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.ContainsFunc(s.msgs, func(m string) bool { return strings.Contains(m, part) })
}

// TestIntakeRecoversAfterOfflineCycle: a busy app logs into a device whose
// consumer is stalled, so its intake fills to the byte bound; the device
// goes offline, which ends the follow with lines still queued, and comes
// back. The lines left behind leave the intake's count with it: a line
// logged after the device is back arrives.
func TestIntakeRecoversAfterOfflineCycle(t *testing.T) {
	t.Parallel()
	adb, _, dir := nativeStandin(t)
	const serial, app = "emulator-5554", "com.example.busy"
	log := "logcat-" + serial
	if err := os.WriteFile(filepath.Join(dir, log), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "pidof-"+app), []byte("4242\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	sink := &stallingSink{app: app, stalled: make(chan struct{}), release: make(chan struct{})}
	f := newNativeFollower(config{Tune: tunables{NativePoll: 10 * time.Millisecond, NativeFlush: testNativeFlush}}, slog.New(slog.DiscardHandler), sink,
		map[string]string{nativeToolADB: adb})
	ctx, cancel := context.WithCancel(t.Context())
	var wg sync.WaitGroup
	t.Cleanup(func() { cancel(); sink.free(); wg.Wait() })
	listed := func(state string) []nativeDeviceStatus {
		return []nativeDeviceStatus{{Platform: nativeAndroid, ID: serial, Name: "Pixel", State: state}}
	}
	dev := func() *nativeDevice {
		f.mu.Lock()
		defer f.mu.Unlock()
		return f.devices[nativeAndroid+"/"+serial]
	}
	f.reconcile(ctx, &wg, listed("device"), []string{app}, nil)
	waitStandinReading(t, dir, log, 1)
	waitUntil(t, "the app's pid", func() bool {
		st := dev().status()
		return len(st.Apps) == 1 && slices.Equal(st.Apps[0].PIDs, []int{4242})
	})
	// Lines of about 1 KiB, more than the intake holds in bytes: it ends
	// within one line of its byte bound.
	line := func(i int, text string) string {
		return fmt.Sprintf("11-27 05:30:00.000  4242  4242 I Busy: %s %06d %s\n", text, i, strings.Repeat("x", 1000))
	}
	appendStandin(t, dir, log, line(0, "first"))
	<-sink.stalled // the consumer waits on the sink from here on
	var flood strings.Builder
	for i := range nativeIntakeBytes/1000 + 512 {
		flood.WriteString(line(i, "busy"))
	}
	appendStandin(t, dir, log, flood.String())
	waitUntil(t, "the intake to fill", func() bool { return dev().status().Dropped > 0 })

	f.reconcile(ctx, &wg, listed("offline"), []string{app}, nil)
	sink.free()
	old := dev()
	waitUntil(t, "the follow to end", old.finished)
	f.reconcile(ctx, &wg, listed("device"), []string{app}, nil)
	waitStandinReading(t, dir, log, 2)
	appendStandin(t, dir, log, line(0, "after the device came back"))
	waitUntil(t, "the line logged after the device came back", func() bool { return sink.got("after the device came back") })
}
