package main

import (
	"context"
	"testing"
	"time"
)

// nativeRecorder is a nativeSink that hands each app's end to a channel.
type nativeRecorder struct {
	ended chan nativeApp
}

func newNativeRecorder() *nativeRecorder {
	return &nativeRecorder{ended: make(chan nativeApp, 4*maxNativeApps)}
}

func (*nativeRecorder) nativeAppIDs() []string                 { return nil }
func (*nativeRecorder) deliverNative(nativeApp, []nativeEntry) {}
func (r *nativeRecorder) nativeAppEnded(app nativeApp)         { r.ended <- app }

// waitEnded waits for the end of appID, failing after a generous deadline.
func (r *nativeRecorder) waitEnded(t *testing.T, appID string) {
	t.Helper()
	deadline := time.NewTimer(10 * time.Second)
	defer deadline.Stop()
	for {
		select {
		case app := <-r.ended:
			if app.AppID == appID {
				return
			}
		case <-deadline.C:
			t.Fatalf("the sink was never told that %s ended", appID)
		}
	}
}

// nopIntake is a deviceIntake that keeps nothing.
type nopIntake struct{}

func (nopIntake) add([]byte, time.Time)        {}
func (nopIntake) flush(time.Time, bool)        {}
func (nopIntake) nextFlush() (time.Time, bool) { return time.Time{}, false }

// TestAppEndNeverLost: ends told while the consumer is busy are kept until
// it reads them, however many: an app that relaunched and ended again and
// again before the consumer looked does not push another app's end out.
func TestAppEndNeverLost(t *testing.T) {
	t.Parallel()
	rec := newNativeRecorder()
	d := newNativeDevice(&nativeFollower{sink: rec}, nativeAndroid, "emulator-5554")
	for i := range maxNativeApps + 1 {
		d.setPIDs("com.example.busy", []int{100 + i})
		d.setPIDs("com.example.busy", nil)
	}
	d.setPIDs("com.example.shop", []int{4242})
	d.setPIDs("com.example.shop", nil)
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() {
		defer close(done)
		d.consume(ctx, newNativeLines(), nopIntake{})
	}()
	rec.waitEnded(t, "com.example.shop")
	cancel()
	<-done
}
