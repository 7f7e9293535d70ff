package main

// native_device.go is the follower of one device: its log stream, read
// through a bounded intake (lines beyond nativeIntake, or past
// nativeIntakeBytes waiting, are dropped and counted), the lines put
// together into entries, and the entries delivered per app in batches.
// Android devices also have their apps' pids looked up (native_adb.go), a
// new pid waking the consumer for the lines it logged before it was known
// (native_pending.go); simulator lines name their process
// (native_simulator.go).

import (
	"bytes"
	"context"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// nativeIntakeBytes bounds the bytes of lines waiting, per device.
const nativeIntakeBytes = 4 << 20

// nativeDevice follows one device. cancel and done are reconcile's (under
// the follower's mu); the rest is guarded by mu.
type nativeDevice struct {
	follower     *nativeFollower
	platform, id string
	cancel       context.CancelFunc
	done         chan struct{} // closed when follow has returned

	queued  atomic.Int64 // bytes waiting in the intake
	dropped atomic.Int64
	// keepApps, set by reconcile before it stops the follow of a device
	// offline or briefly unlisted, keeps its apps' state: they have not
	// ended, and the next follow carries on with them.
	keepApps atomic.Bool

	// retryAt and retryDelay are reconcile's too: when a follow that ended
	// by itself may start again, and the backoff before the next.
	retryAt    time.Time
	retryDelay time.Duration

	mu      sync.Mutex
	name    string
	state   string
	apps    []string
	pids    map[string][]int // app → its pids (Android)
	pidApp  map[int]string   // pid → app (Android)
	pidGen  uint64           // counts the pids added to pidApp
	ended   string
	running map[string]bool // apps that had pids or lines since they last ended
	endsDue map[string]bool // apps whose last process ended, not yet told
	// waits are the apps whose native crash waits for its tombstone (the
	// consumer's last flush said so): their ends stay due, held, until it
	// has come or its wait is over.
	waits    []string
	endsHeld map[string]bool
	// learnt (pid learnt from the log → pidGen then), askFailed (adb's
	// words when it last could not ask the device, "" once it could) and
	// listingSaid (the listing's words that askFailed last took) are
	// native_adb.go's, guarded by mu too.
	learnt      map[int]uint64
	askFailed   string
	listingSaid string

	pending pendingEntries // the consumer goroutine's
	endWake chan struct{}  // wakes the consumer when endsDue has apps
	pidWake chan struct{}  // wakes the consumer when an app has a new pid
}

func newNativeDevice(f *nativeFollower, platform, id string) *nativeDevice {
	return &nativeDevice{follower: f, platform: platform, id: id, endWake: make(chan struct{}, 1),
		pidWake: make(chan struct{}, 1)}
}

func (d *nativeDevice) setListed(name, state string, apps []string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.name, d.state = name, state
	if apps != nil {
		d.apps = apps
	}
}

// stop ends the follower without waiting for it.
func (d *nativeDevice) stop() {
	if d.cancel != nil {
		d.cancel()
		d.cancel = nil
	}
}

// finished reports whether no follower of the device runs.
func (d *nativeDevice) finished() bool {
	if d.done == nil {
		return true
	}
	select {
	case <-d.done:
		return true
	default:
		return false
	}
}

func (d *nativeDevice) status() nativeDeviceStatus {
	d.mu.Lock()
	defer d.mu.Unlock()
	st := nativeDeviceStatus{Platform: d.platform, ID: d.id, Name: d.name, State: d.state, Following: d.cancel != nil && !d.finished(),
		Dropped: d.dropped.Load(), Ended: d.ended, AskFailed: d.askFailed}
	for _, app := range d.apps {
		st.Apps = append(st.Apps, nativeAppStatus{ID: app, PIDs: append([]int(nil), d.pids[app]...)})
	}
	return st
}

func (d *nativeDevice) app(appID string) nativeApp {
	d.mu.Lock()
	a := nativeApp{Platform: d.platform, DeviceID: d.id, DeviceName: d.name, AppID: appID}
	d.mu.Unlock()
	a.SameNameAs = d.follower.sameNameAs(a.Platform, a.DeviceID, a.DeviceName)
	return a
}

func (d *nativeDevice) followedApps() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.apps
}

func (d *nativeDevice) follows(appID string) bool {
	if appID == "" {
		return false
	}
	for _, a := range d.followedApps() {
		if a == appID {
			return true
		}
	}
	return false
}

// follow reads the device's log until ctx ends (the device has gone, or
// the server stops), then ends every app of it still running.
func (d *nativeDevice) follow(ctx context.Context) {
	f := d.follower
	var cmd nativeCommand
	var err error
	if d.platform == nativeAndroid {
		cmd, err = adbLogcatCommand(d.id)
	} else {
		cmd, err = simctlLogCommand(d.id)
	}
	if err != nil {
		d.setEnded(err.Error())
		return
	}
	lines := make(chan []byte, nativeIntake)
	var wg sync.WaitGroup
	wg.Go(func() {
		// A restarted logcat (-T 1) prints the last line again: the line
		// last read is skipped once after a restart. Both callbacks run on
		// this goroutine.
		var last []byte
		restarted := false
		f.runner.keepStreaming(ctx, cmd, func(b []byte) {
			if restarted {
				switch {
				case bytes.Equal(b, last):
					restarted = false
					return
				case !bytes.HasPrefix(b, []byte("-")): // not `--------- beginning of …`
					restarted = false
				}
			}
			last = append(last[:0], b...)
			d.take(lines, b)
		}, func(err error) {
			restarted = true
			d.setEnded(endReason(err))
		})
	})
	if d.platform == nativeAndroid {
		wg.Go(func() { d.lookUpPIDs(ctx) })
		in := newAndroidIntake(d)
		in.live = ctx.Done()
		d.consume(ctx, lines, in)
	} else {
		wg.Go(func() { d.lookUpSimApps(ctx) })
		d.consume(ctx, lines, newSimIntake(d))
	}
	wg.Wait()
	if !d.keepApps.Load() {
		d.endAll()
	}
}

// endAll tells the sink that every app of the device that had pids or
// lines has ended: the device is no longer followed, so no lookup and no
// line will say when they do.
func (d *nativeDevice) endAll() {
	d.mu.Lock()
	var apps []string
	for app := range d.running {
		apps = append(apps, app)
	}
	for app := range d.endsDue {
		if !d.running[app] {
			apps = append(apps, app)
		}
	}
	d.running, d.endsDue, d.pids, d.pidApp, d.learnt = nil, nil, nil, nil, nil
	d.waits, d.endsHeld = nil, nil
	d.mu.Unlock()
	slices.Sort(apps)
	for _, app := range apps {
		d.follower.sink.nativeAppEnded(d.app(app))
	}
}

// markRunningLocked notes that app has pids or lines. The caller holds mu.
func (d *nativeDevice) markRunningLocked(app string) {
	if d.running == nil {
		d.running = map[string]bool{}
	}
	d.running[app] = true
}

// appEnded remembers that app's last process has ended and wakes the
// consumer, which tells the sink once the app's last lines are delivered.
// An end is never lost: it stays due until the consumer takes it.
func (d *nativeDevice) appEnded(app string) {
	d.mu.Lock()
	if d.endsDue[app] {
		// Due already: a wake is pending, or the consumer takes it, or it
		// is held for a tombstone (holdEnds wakes when it is not).
		d.mu.Unlock()
		return
	}
	if d.endsDue == nil {
		d.endsDue = map[string]bool{}
	}
	d.endsDue[app] = true
	d.mu.Unlock()
	select {
	case d.endWake <- struct{}{}:
	default: // a wake is pending already; it takes this end too
	}
}

// takeEndsDue returns the apps whose ends are due, in order, and forgets
// them; an app whose native crash waits for its tombstone stays due,
// held (holdEnds).
func (d *nativeDevice) takeEndsDue() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	var apps []string
	for app := range d.endsDue {
		if slices.Contains(d.waits, app) {
			if d.endsHeld == nil {
				d.endsHeld = map[string]bool{}
			}
			d.endsHeld[app] = true
			continue
		}
		apps = append(apps, app)
		delete(d.running, app)
		delete(d.endsDue, app)
	}
	slices.Sort(apps)
	return apps
}

// holdEnds takes the apps whose native crash waits for its tombstone, from
// the consumer's flush, and wakes the consumer when an end held for one
// of them is no longer: its crash has gone out, the end follows it.
func (d *nativeDevice) holdEnds(waits []string) {
	d.mu.Lock()
	d.waits = waits
	wake := false
	for app := range d.endsHeld {
		if !slices.Contains(waits, app) {
			delete(d.endsHeld, app)
			wake = true
		}
	}
	d.mu.Unlock()
	if wake {
		select {
		case d.endWake <- struct{}{}:
		default: // a wake is pending already
		}
	}
}

// take queues a copy of line for the consumer, or drops and counts it
// when the intake is full (nativeIntake lines or nativeIntakeBytes).
func (d *nativeDevice) take(lines chan<- []byte, line []byte) {
	if d.queued.Load()+int64(len(line)) > nativeIntakeBytes {
		d.dropped.Add(1)
		return
	}
	select {
	case lines <- append([]byte(nil), line...):
		d.queued.Add(int64(len(line)))
	default:
		d.dropped.Add(1)
	}
}

func endReason(err error) string {
	if err == nil {
		return "the log stream ended"
	}
	return err.Error()
}

func (d *nativeDevice) setEnded(reason string) {
	d.mu.Lock()
	d.ended = reason
	d.mu.Unlock()
}

// deviceIntake turns one platform's lines into entries.
type deviceIntake interface {
	add(line []byte, now time.Time)
	flush(now time.Time, all bool)
	nextFlush() (time.Time, bool)
}

// maxNativeBatch bounds the lines read before the entries are delivered.
const maxNativeBatch = 256

// consume reads the intake until ctx ends, delivering entries per app.
func (d *nativeDevice) consume(ctx context.Context, lines <-chan []byte, intake deviceIntake) {
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	defer timer.Stop()
	take := func(b []byte) { // one line off the intake, into the entries
		d.queued.Add(-int64(len(b)))
		intake.add(b, time.Now())
	}
	for {
		select {
		case <-ctx.Done():
			intake.flush(time.Now(), true)
			d.deliver()
			return
		case b := <-lines:
			take(b)
		drain:
			for range maxNativeBatch - 1 {
				select {
				case b := <-lines:
					take(b)
				default:
					break drain
				}
			}
		case <-timer.C:
		case <-d.pidWake:
			// The flush below hands the assembler the lines that the new
			// pid logged before it was known.
		case <-d.endWake:
			// What was read before the apps ended is their last word
			// (a crash): delivered first, then their sessions end.
			for drained := false; !drained; {
				select {
				case b := <-lines:
					take(b)
				default:
					drained = true
				}
			}
			intake.flush(time.Now(), true)
			d.deliver()
			for _, app := range d.takeEndsDue() {
				d.follower.sink.nativeAppEnded(d.app(app))
			}
		}
		now := time.Now()
		intake.flush(now, false)
		d.deliver()
		timer.Stop()
		if at, ok := intake.nextFlush(); ok {
			timer.Reset(max(at.Sub(now), time.Millisecond))
		}
	}
}

// pending holds the entries of the batch being read, per app; only the
// consumer's goroutine touches it.
type pendingEntries struct {
	apps    []string
	entries map[string][]nativeEntry
}

func (p *pendingEntries) add(app string, e nativeEntry) {
	if p.entries == nil {
		p.entries = map[string][]nativeEntry{}
	}
	if _, ok := p.entries[app]; !ok {
		p.apps = append(p.apps, app)
	}
	p.entries[app] = append(p.entries[app], e)
}

// emit collects an entry of app for the next delivery.
func (d *nativeDevice) emit(app string, e nativeEntry) {
	d.pending.add(app, e)
}

// deliver hands the batch's entries to the sink, app by app.
func (d *nativeDevice) deliver() {
	for _, app := range d.pending.apps {
		entries := d.pending.entries[app]
		d.mu.Lock()
		d.markRunningLocked(app)
		d.mu.Unlock()
		na := d.app(app)
		for _, e := range entries {
			if e.Crash != "" {
				d.follower.noteCrash(na, e)
			}
			if e.Crash != "" || e.End != "" {
				d.follower.ends.note(na, e)
			}
		}
		d.follower.sink.deliverNative(na, entries)
	}
	d.pending = pendingEntries{}
}

// splitLines is s's first n lines.
func splitLines(s string, n int) []string {
	return strings.SplitN(s, "\n", n+1)[:min(n, strings.Count(s, "\n")+1)]
}

// crashHeadline picks the line that says what the crash was: the
// exception after FATAL EXCEPTION and Process, the signal line, the
// uncaught exception's reason.
func crashHeadline(kind string, lines []string) string {
	if kind == nativeCrashJS {
		return jsCrashHeadline(lines)
	}
	if kind == nativeCrashJava {
		for _, l := range lines {
			if !strings.HasPrefix(l, "FATAL EXCEPTION") && !strings.HasPrefix(l, "Process: ") {
				return strings.TrimSpace(l)
			}
		}
	}
	return strings.TrimSpace(lines[0])
}

// clipLine cuts s to n bytes at a rune boundary.
func clipLine(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && n < len(s) && s[n]&0xc0 == 0x80 {
		n--
	}
	return s[:n] + "…"
}
