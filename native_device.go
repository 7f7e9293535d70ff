package main

// native_device.go is the follower of one device. The native side
// (native_*.go), in the order a line takes it, with who owns what and on
// which goroutine:
//
//  1. The follower's run goroutine lists devices each poll and reconciles
//     (native_follow.go): one nativeDevice per serial or udid in devices,
//     under follower.mu (nativeDevice says what guards its own fields).
//  2. A device online gets a follow goroutine (follow, below), which runs
//     logcat -T 1 or `log stream` through the runner's keepStreaming
//     (native_runner.go) on a goroutine of its own, started again after a
//     backoff (wait.go) when it ends. The runner's reader goroutine splits
//     the child's output into lines (lines.go, cut at 16 KiB) and calls the
//     line callback; the ended callback runs on keepStreaming's goroutine
//     once that run's reader has returned, so the two never run at once.
//  3. The line callback skips the line a restarted logcat repeats and puts
//     the line into the follow's intake (nativeLines, under its own lock).
//  4. The consumer, on the follow goroutine itself (consume), takes batches
//     into the platform's deviceIntake: androidIntake parses logcat
//     (native_logcat.go) into the logcatAssembler (native_crash.go), which
//     groups messages and crashes per pid and keeps the lines of pids no app
//     owns yet in pendingLines (native_pending.go); simIntake parses `log
//     stream` (native_simctl.go) into the simAssembler. Both are the
//     consumer's alone.
//  5. On Android a lookUpPIDs goroutine (native_adb.go) sets the apps' pids
//     under device.mu each poll; a new pid (pidWake) or an app's last pid
//     gone (endWake) wakes the consumer.
//  6. The assemblers emit entries into device.pending (the consumer's);
//     deliver hands them per app to the sink (session_native.go), which
//     files them under the app's session; an end is told after the app's
//     last entries, and every running app's when the follow ends.

import (
	"bytes"
	"cmp"
	"context"
	"maps"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// nativeIntakeBytes bounds the bytes of lines waiting, per device.
const nativeIntakeBytes = 4 << 20

// nativeDevice follows one device. follower, platform and id are fixed;
// cancel and done are reconcile's (under the follower's mu); dropped is
// atomic; pending is the consumer's; the wakes are channels; the rest is
// guarded by mu.
type nativeDevice struct {
	follower     *nativeFollower
	platform, id string
	cancel       context.CancelFunc
	done         chan struct{} // closed when follow has returned

	dropped atomic.Int64 // lines its intakes refused, or held when a follow ended
	// keepApps, set by reconcile before it stops the follow of a device
	// offline or briefly unlisted, keeps its apps' state: they have not
	// ended, and the next follow carries on with them.
	keepApps atomic.Bool

	mu       sync.Mutex
	name     string
	state    string
	apps     []string
	pids     map[string][]int // app → its pids (Android)
	pidApp   map[int]string   // pid → app (Android)
	pidGen   uint64           // counts the pids added to pidApp
	ended    string
	running  map[string]bool // apps that had pids or lines since they last ended
	endsDue  map[string]bool // apps whose last process ended, not yet told
	waits    []string        // apps whose native crash waits for its tombstone (holdEnds)
	endsHeld map[string]bool // ends due, held for such a crash
	// native_adb.go's:
	learnt      map[int]uint64 // pid learnt from the log → pidGen then
	askFailed   string         // why adb last could not ask the device, "" once it could
	listingSaid string         // the listing's words that askFailed last took

	pending pendingEntries // the consumer goroutine's
	endWake chan struct{}  // wakes the consumer when endsDue has apps
	pidWake chan struct{}  // wakes the consumer when an app has a new pid
}

func newNativeDevice(f *nativeFollower, platform, id string) *nativeDevice {
	return &nativeDevice{follower: f, platform: platform, id: id, endWake: make(chan struct{}, 1),
		pidWake: make(chan struct{}, 1), pids: map[string][]int{}, pidApp: map[int]string{}, learnt: map[int]uint64{},
		running: map[string]bool{}, endsDue: map[string]bool{}, endsHeld: map[string]bool{}}
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

func (d *nativeDevice) finished() bool {
	return d.done == nil || isClosed(d.done)
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
	return appID != "" && slices.Contains(d.followedApps(), appID)
}

// follow reads the device's log until ctx ends (the device has gone, or
// the server stops), then ends every app of it still running.
func (d *nativeDevice) follow(ctx context.Context) {
	f := d.follower
	stream, lookUp, intake := cmdSimctlStream, d.lookUpSimApps, deviceIntake(newSimIntake(d))
	if d.platform == nativeAndroid {
		in := newAndroidIntake(d)
		in.live = ctx.Done()
		stream, lookUp, intake = cmdADBLogcat, d.lookUpPIDs, in
	}
	cmd, err := deviceCommand(stream, d.id)
	if err != nil { // never for a listed device: the listings keep only serials the list takes
		d.setEnded(err.Error())
		return
	}
	lines := newNativeLines()
	var wg sync.WaitGroup
	wg.Go(func() {
		// A restarted logcat (-T 1) prints the last line read again. The
		// two callbacks never run at once (see the top of the file).
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
			if !lines.put(b) {
				d.dropped.Add(1)
			}
		}, func(err error) {
			restarted = true
			d.setEnded(cmp.Or(errText(err), "the log stream ended"))
		})
	})
	wg.Go(func() { lookUp(ctx) })
	d.consume(ctx, lines, intake)
	wg.Wait()
	d.dropped.Add(int64(lines.q.clear())) // read, never taken: they go with this follow (its reader has ended)
	if !d.keepApps.Load() {
		d.endAll()
	}
}

// endAll tells the sink that every app of the device that had pids or
// lines has ended: the device is no longer followed, so no lookup and no
// line will say when they do.
func (d *nativeDevice) endAll() {
	d.mu.Lock()
	for app := range d.endsDue {
		d.running[app] = true
	}
	apps := slices.Sorted(maps.Keys(d.running))
	clear(d.running)
	clear(d.endsDue)
	clear(d.endsHeld)
	clear(d.pids)
	clear(d.pidApp)
	clear(d.learnt)
	d.waits = nil
	d.mu.Unlock()
	for _, app := range apps {
		d.follower.sink.nativeAppEnded(d.app(app))
	}
}

// appEnded remembers that app's last process has ended and wakes the
// consumer. An end is never lost: it stays due until the consumer takes it.
func (d *nativeDevice) appEnded(app string) {
	d.mu.Lock()
	due := d.endsDue[app]
	d.endsDue[app] = true
	d.mu.Unlock()
	// Due already: a wake is pending, or the consumer takes it, or it is
	// held for a tombstone (holdEnds wakes when it is not).
	if !due {
		wake(d.endWake)
	}
}

// takeEndsDue returns, sorted, and forgets the apps whose ends are due,
// but for those held for a tombstone (holdEnds).
func (d *nativeDevice) takeEndsDue() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	var apps []string
	for app := range d.endsDue {
		if slices.Contains(d.waits, app) {
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
	released := false
	for app := range d.endsHeld {
		if !slices.Contains(waits, app) {
			delete(d.endsHeld, app)
			released = true
		}
	}
	d.mu.Unlock()
	if released {
		wake(d.endWake)
	}
}

// nativeLines is one follow's intake: lines read and not yet taken, within
// nativeIntake lines and nativeIntakeBytes. The reader puts, the consumer takes.
type nativeLines struct {
	mu    sync.Mutex
	q     queue[[]byte]
	ready chan struct{} // holds a wake while lines wait
}

func newNativeLines() *nativeLines {
	return &nativeLines{q: newQueue(nativeIntake, nativeIntakeBytes, func(b []byte) int64 { return int64(len(b)) }),
		ready: make(chan struct{}, 1)}
}

// put queues a copy of line; false when the intake is full.
func (l *nativeLines) put(line []byte) bool {
	defer wake(l.ready)
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.q.offer(bytes.Clone(line))
}

// take appends up to n lines, oldest first, to batch; lines left behind
// leave a wake, so that the consumer comes back for them.
func (l *nativeLines) take(batch [][]byte, n int) [][]byte {
	l.mu.Lock()
	defer l.mu.Unlock()
	for range min(n, l.q.len()) {
		b, _ := l.q.pop()
		batch = append(batch, b)
	}
	if l.q.len() > 0 {
		wake(l.ready)
	}
	return batch
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
func (d *nativeDevice) consume(ctx context.Context, lines *nativeLines, intake deviceIntake) {
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	defer timer.Stop()
	var batch [][]byte
	take := func(n int) { // lines off the intake, into the entries
		batch = lines.take(batch[:0], n)
		for _, b := range batch {
			intake.add(b, time.Now())
		}
		clear(batch)
	}
	for {
		select {
		case <-ctx.Done():
			intake.flush(time.Now(), true)
			d.deliver()
			return
		case <-lines.ready:
			take(maxNativeBatch)
		case <-timer.C:
		case <-d.pidWake:
			// The flush below hands the assembler the lines that the new
			// pid logged before it was known.
		case <-d.endWake:
			// What was read before the apps ended is their last word
			// (a crash): delivered first, then their sessions end.
			take(nativeIntake)
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

// pendingEntries holds the entries of the batch being read, per app.
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

func (d *nativeDevice) deliver() {
	for _, app := range d.pending.apps {
		entries := d.pending.entries[app]
		d.mu.Lock()
		d.running[app] = true // it had lines
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
