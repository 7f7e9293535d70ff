package main

import (
	"slices"
	"strings"
	"testing"
	"time"
)

// setPIDs installs app's pids, as a lookup made now would.
func (d *nativeDevice) setPIDs(app string, pids []int) {
	d.setPIDsSince(app, pids, d.pidGeneration())
}

// pidDevice is a device following shop and other, with nothing running.
func pidDevice() *nativeDevice {
	d := newNativeDevice(&nativeFollower{sink: newNativeRecorder()}, nativeAndroid, "emulator-5554")
	d.setListed("", "device", []string{"com.example.shop", "com.example.other"})
	return d
}

// TestReusedPIDNotFiledUnderOldApp: once ActivityManager starts another
// package's process under a pid the app had (pidof cannot tell meanwhile),
// that process's lines are not the app's, and the app has ended.
func TestReusedPIDNotFiledUnderOldApp(t *testing.T) {
	t.Parallel()
	d := pidDevice()
	d.setPIDs("com.example.shop", []int{4242})
	in := newAndroidIntake(d)
	now := time.Now()
	for _, l := range []string{
		"11-27 05:30:00.000  4242  4242 I ReactNativeJS: the shop's line",
		"11-27 05:30:01.000  1000  1100 I ActivityManager: Start proc 4242:com.example.unfollowed/u0a55 for service {com.example.unfollowed/.Sync}",
		"11-27 05:30:01.100  4242  4242 I Sync    : a reused pid's line",
	} {
		in.add([]byte(l), now)
	}
	in.flush(now, true)
	got := d.pending.entries["com.example.shop"]
	if len(got) != 1 || got[0].Message != "the shop's line" {
		t.Errorf("the shop's entries: %+v", got)
	}
	if app := d.appOf(4242); app != "" {
		t.Errorf("pid 4242 still filed under %q", app)
	}
	if ends := d.takeEndsDue(); !slices.Equal(ends, []string{"com.example.shop"}) {
		t.Errorf("ends due: %v", ends)
	}
}

// TestPIDUpdateKeepsOtherAppsPID: an app's update never unmaps a pid that
// another followed app owns now, and a pid moves to one app at a time.
func TestPIDUpdateKeepsOtherAppsPID(t *testing.T) {
	t.Parallel()
	d := pidDevice()
	d.setPIDs("com.example.shop", []int{100})
	d.learnPID("com.example.other", 100) // the system gave the shop's pid to other
	d.setPIDs("com.example.shop", nil)   // the shop's lookup: no process
	if app := d.appOf(100); app != "com.example.other" {
		t.Errorf("pid 100 is %q's, want com.example.other's", app)
	}
	d.setPIDs("com.example.shop", []int{100}) // and back
	if app := d.appOf(100); app != "com.example.shop" || slices.Contains(d.status().Apps[1].PIDs, 100) {
		t.Errorf("pid 100 is %q's; other's pids %v", app, d.status().Apps[1].PIDs)
	}
}

// TestLearntPIDsBounded: pids learnt while pidof cannot answer are
// bounded, the oldest dropped.
func TestLearntPIDsBounded(t *testing.T) {
	t.Parallel()
	d := pidDevice()
	for pid := 1; pid <= 10*maxAppPIDs; pid++ {
		d.learnPID("com.example.shop", pid)
	}
	d.mu.Lock()
	n, mapped, learnt := len(d.pids["com.example.shop"]), len(d.pidApp), len(d.learnt)
	d.mu.Unlock()
	if n != maxAppPIDs || mapped != maxAppPIDs || learnt != maxAppPIDs {
		t.Errorf("kept %d pids, %d mapped, %d learnt; want %d", n, mapped, learnt, maxAppPIDs)
	}
	if d.appOf(1) != "" || d.appOf(10*maxAppPIDs) != "com.example.shop" {
		t.Error("the oldest pids were not the ones dropped")
	}
}

// TestLookupDropsStalePIDs: a successful lookup drops the pids it does
// not name, but not one the log taught after the lookup was asked.
func TestLookupDropsStalePIDs(t *testing.T) {
	t.Parallel()
	d := pidDevice()
	d.learnPID("com.example.shop", 100)
	since := d.pidGeneration() // the lookup is asked
	d.learnPID("com.example.shop", 200)
	d.setPIDsSince("com.example.shop", nil, since)
	if d.appOf(100) != "" || d.appOf(200) != "com.example.shop" {
		t.Errorf("after the lookup: 100 is %q's, 200 is %q's", d.appOf(100), d.appOf(200))
	}
}

// TestUnfollowedAppsPIDsForgotten: the pids of an app no longer followed
// are dropped.
func TestUnfollowedAppsPIDsForgotten(t *testing.T) {
	t.Parallel()
	d := pidDevice()
	d.setPIDs("com.example.other", []int{300})
	d.forgetUnfollowed([]string{"com.example.shop"})
	if d.appOf(300) != "" {
		t.Error("an unfollowed app's pid is still mapped")
	}
}

// TestEndWaitsForTombstone: an app that ends while its native crash waits
// for its tombstone keeps its end due until the tombstone has joined the
// crash: the end path's flush does not emit the signal line alone, and
// the end follows the whole crash, woken once it has gone out.
func TestEndWaitsForTombstone(t *testing.T) {
	t.Parallel()
	d := pidDevice()
	d.setPIDs("com.example.shop", []int{4300})
	in := newAndroidIntake(d)
	live := make(chan struct{})
	in.live = live
	signal, tombstone, _ := strings.Cut(logcatNativeCrash, "\n")
	now := time.Now()
	in.add([]byte(signal), now)
	d.setPIDs("com.example.shop", nil) // pidof: no process any more
	// The consumer's end path: flush all, then take the ends due.
	in.flush(now, true)
	if ends := d.takeEndsDue(); len(ends) != 0 || len(d.pending.entries["com.example.shop"]) != 0 {
		t.Fatalf("before the tombstone: ends %v, entries %+v", ends, d.pending.entries)
	}
	<-d.endWake                        // appEnded's wake, taken above
	d.setPIDs("com.example.shop", nil) // the next lookup: still due, held; no wake, no early flush
	select {
	case <-d.endWake:
		t.Fatal("an end held for the tombstone woke the consumer again")
	default:
	}
	for line := range strings.SplitSeq(strings.TrimSpace(tombstone), "\n") {
		in.add([]byte(line), now)
	}
	in.flush(now.Add(nativeIdleFlush), false)
	got := d.pending.entries["com.example.shop"]
	if len(got) != 1 || !strings.Contains(got[0].Message, ">>> com.example.shop <<<") {
		t.Fatalf("the crash with its tombstone: %+v", got)
	}
	select {
	case <-d.endWake:
	default:
		t.Fatal("the held end did not wake the consumer")
	}
	in.flush(now.Add(nativeIdleFlush), true)
	if ends := d.takeEndsDue(); !slices.Equal(ends, []string{"com.example.shop"}) {
		t.Errorf("ends due after the crash: %v", ends)
	}
	close(live) // the follow ends: everything goes out, nothing held
	in.add([]byte(signal), now)
	in.flush(now, true)
	if got := d.pending.entries["com.example.shop"]; len(got) != 2 {
		t.Errorf("a follow that ends holds back a crash: %+v", got)
	}
}
