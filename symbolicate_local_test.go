package main

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// writeMapAt writes a small map at rel under dir, built at the time given.
func writeMapAt(t *testing.T, dir, rel, source string, built time.Time) string {
	t.Helper()
	path := filepath.Join(dir, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	doc := `{"version":3,"sources":["` + source + `"],"names":["f"],"mappings":"AAAAA"}`
	if err := os.WriteFile(path, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(path, built, built); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestReleaseMapsFind: the map is found where builds leave it, with
// nothing set: Android's Gradle output, any variant, the newest first;
// iOS's main.jsbundle.map at the root; Expo's dist/. SOURCE_MAPS comes
// first: a file that names no other platform, or a folder's fitting map.
// With none, where it looked.
func TestReleaseMapsFind(t *testing.T) {
	old, recent := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)
	project := t.TempDir()
	r := newReleaseMaps(config{ProjectDir: project})
	found := func(bundle string) string {
		path, _, looked := r.find(bundle, project)
		if path == "" {
			return "none: " + strings.Join(looked, ", ")
		}
		rel, _ := filepath.Rel(project, path)
		return filepath.ToSlash(rel)
	}
	if got := found(androidBundle); got != "none: android/app/build/generated/sourcemaps/react/*/index.android.bundle.map, dist/_expo/static/js/android/*.map" {
		t.Errorf("no map: %s", got)
	}
	if got := found(iosBundle); got != "none: main.jsbundle.map, dist/_expo/static/js/ios/*.map" {
		t.Errorf("no iOS map: %s", got)
	}
	writeMapAt(t, project, "dist/_expo/static/js/android/entry-1a2b.hbc.map", "a.js", recent)
	writeMapAt(t, project, "dist/_expo/static/js/ios/entry-3c4d.hbc.map", "a.js", recent)
	if got := found(androidBundle) + " " + found(iosBundle); got != "dist/_expo/static/js/android/entry-1a2b.hbc.map dist/_expo/static/js/ios/entry-3c4d.hbc.map" {
		t.Errorf("Expo's export: %s", got)
	}
	writeMapAt(t, project, "android/app/build/generated/sourcemaps/react/debug/index.android.bundle.map", "a.js", old)
	writeMapAt(t, project, "android/app/build/generated/sourcemaps/react/release/index.android.bundle.map", "a.js", recent)
	writeMapAt(t, project, "main.jsbundle.map", "a.js", recent)
	if got := found(androidBundle) + " " + found(iosBundle); got != "android/app/build/generated/sourcemaps/react/release/index.android.bundle.map main.jsbundle.map" {
		t.Errorf("React Native's builds: %s", got)
	}
	writeMapAt(t, project, "android/app/build/generated/sourcemaps/react/debug/index.android.bundle.map", "a.js", recent.Add(time.Hour))
	if got := found(androidBundle); got != "android/app/build/generated/sourcemaps/react/debug/index.android.bundle.map" {
		t.Errorf("the newest variant: %s", got)
	}

	extra := t.TempDir()
	named := writeMapAt(t, extra, "crash.map", "a.js", old)
	iosOnly := writeMapAt(t, extra, "ios-release.map", "a.js", old)
	folder := filepath.Join(extra, "maps")
	inFolder := writeMapAt(t, folder, "v2/android/index.android.bundle.map", "a.js", old)
	r.extra = []string{iosOnly, folder}
	a, _, _ := r.find(androidBundle, project)
	i, _, _ := r.find(iosBundle, project)
	if a != inFolder || i != iosOnly {
		t.Errorf("SOURCE_MAPS first: android %s, iOS %s", a, i)
	}
	r.extra = []string{named}
	if a, _, _ := r.find(androidBundle, project); a != named {
		t.Errorf("a map SOURCE_MAPS names for no platform: %s", a)
	}
}

// TestReleaseMapsCache: a map is read once, read again when its file
// changes, and at most maxReleaseMaps are kept.
func TestReleaseMapsCache(t *testing.T) {
	dir := t.TempDir()
	built := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	r := newReleaseMaps(config{})
	read := func(path string) *sourceMap {
		info, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		sm, err := r.read(context.Background(), path, info)
		if err != nil {
			t.Fatal(err)
		}
		return sm
	}
	path := writeMapAt(t, dir, "a.map", "a.js", built)
	first := read(path)
	if read(path) != first {
		t.Error("an unchanged map was read again")
	}
	writeMapAt(t, dir, "a.map", "b.js", built.Add(time.Minute))
	again := read(path)
	if p, _ := again.lookup(1, 0); again == first || p.Source != "b.js" {
		t.Errorf("a rebuilt map was not read again: %+v", p)
	}
	for i := 0; i < maxReleaseMaps; i++ {
		read(writeMapAt(t, dir, string(rune('b'+i))+".map", "a.js", built))
	}
	r.reads.Wait()
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.loaded) != maxReleaseMaps || r.loaded[path] != nil {
		t.Errorf("kept %d maps (the oldest kept: %v), want %d", len(r.loaded), r.loaded[path] != nil, maxReleaseMaps)
	}
}

// TestSourceMapperRelease: an iOS release crash's reason maps with the
// project's main.jsbundle.map, named relative to the project, framework
// frames marked; with no map, the note says where it looked and how to
// build one; Metro's frames with METRO_URL off say it is off.
func TestSourceMapperRelease(t *testing.T) {
	project := t.TempDir()
	s := &sourceMapper{maps: newReleaseMaps(config{ProjectDir: project})}
	reason := "*** Terminating app due to uncaught exception 'RCTFatalException: Unhandled JS Exception: TypeError: x', reason: 'Unhandled JS Exception: TypeError: x, stack:\nloadOrders@1:0\nrun@1:4'"
	lines, spans := findStacks(reason)
	if len(spans) != 1 || len(spans[0].frames) != 2 {
		t.Fatalf("the reason's frames: %q %+v", lines, spans)
	}
	st := jsStack{Frames: spans[0].frames, Bundle: releaseBundleIn(reason)}

	_, err := s.mapStacks(context.Background(), []jsStack{st})
	var noMap *errNoSourceMap
	if !errors.As(err, &noMap) {
		t.Fatalf("no map: %v", err)
	}
	note := stackNoteFor(err, false)
	if !strings.Contains(note.Reason, "looked in "+project+" for main.jsbundle.map, dist/_expo/static/js/ios/*.map") ||
		!strings.Contains(note.Hint, "SOURCEMAP_FILE") || !strings.Contains(note.Hint, "npx expo export --source-maps") {
		t.Errorf("the note without a map: %+v", note)
	}

	mappings := vlqText([][][]int{{{0, 0, 41, 2, 0}, {4, 1, 7, 0}}})
	doc := `{"version":3,"sources":["` + project + `/src/orders/api.js","` + project + `/node_modules/lib/run.js"],"names":["loadOrders"],"mappings":"` + mappings + `"}`
	if err := os.WriteFile(filepath.Join(project, "main.jsbundle.map"), []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := s.mapStacks(context.Background(), []jsStack{st})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, f := range out[0] {
		got = append(got, f.text()+" "+f.MapFile)
		if f.Collapse != strings.Contains(f.File, "node_modules") {
			t.Errorf("%s: collapse %v", f.text(), f.Collapse)
		}
	}
	want := []string{"at loadOrders (src/orders/api.js:42:3) main.jsbundle.map", "at node_modules/lib/run.js:8:1 main.jsbundle.map"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("mapped (-want +got):\n%s", diff)
	}

	dev := parseJSStack("Error: x\n    at f (" + testBundle + ":9:9)")
	if _, err := s.mapStacks(context.Background(), []jsStack{dev}); !errors.Is(err, errMetroOff) {
		t.Errorf("Metro's frames with METRO_URL off: %v", err)
	} else if n := stackNoteFor(err, false); n.Status != "off" {
		t.Errorf("the note: %+v", n)
	}
}

// heldRead holds r's reads of one path until released, and counts every
// read of every path.
type heldRead struct {
	started chan string // the held path, each time its read starts
	release func()
	mu      sync.Mutex
	reads   map[string]int
}

func holdRead(t *testing.T, r *releaseMaps, held string) *heldRead {
	gate := make(chan struct{})
	h := &heldRead{started: make(chan string, 8), release: sync.OnceFunc(func() { close(gate) }), reads: map[string]int{}}
	r.readFile = func(path string) ([]byte, error) {
		h.mu.Lock()
		h.reads[path]++
		h.mu.Unlock()
		if path == held {
			h.started <- path
			<-gate
		}
		return os.ReadFile(path)
	}
	t.Cleanup(func() { h.release(); r.reads.Wait() })
	return h
}

func (h *heldRead) count(path string) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.reads[path]
}

// readResult is what one call of releaseMaps.read answered.
type readResult struct {
	sm  *sourceMap
	err error
}

// goRead calls r.read in a goroutine of its own.
func goRead(ctx context.Context, r *releaseMaps, path string) <-chan readResult {
	out := make(chan readResult, 1)
	go func() {
		info, err := os.Stat(path)
		if err != nil {
			out <- readResult{err: err}
			return
		}
		sm, err := r.read(ctx, path, info)
		out <- readResult{sm, err}
	}()
	return out
}

// within waits for a value, failing the test if none comes: the deadline
// is only reached when the code under test is stuck.
func within[T any](t *testing.T, what string, ch <-chan T) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(10 * time.Second):
		t.Fatalf("stuck: %s", what)
		panic("unreachable")
	}
}

// TestReleaseMapsSlowReadBlocksNoOther: while one map is being read
// (slowly: a release map of hundreds of MB), another map is read and
// answered; the lock is not held across a read.
func TestReleaseMapsSlowReadBlocksNoOther(t *testing.T) {
	dir := t.TempDir()
	built := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	slow, other := writeMapAt(t, dir, "slow.map", "slow.js", built), writeMapAt(t, dir, "other.map", "other.js", built)
	r := newReleaseMaps(config{})
	h := holdRead(t, r, slow)
	slowDone := goRead(context.Background(), r, slow)
	within(t, "the slow read to start", h.started)

	got := within(t, "the other map, while the slow one is read", goRead(context.Background(), r, other))
	if got.err != nil {
		t.Fatal(got.err)
	}
	if p, ok := got.sm.lookup(1, 0); !ok || p.Source != "other.js" {
		t.Errorf("the other map answered %+v, %v", p, ok)
	}
	select {
	case res := <-slowDone:
		t.Fatalf("the held read answered before it was released: %+v", res)
	default:
	}
	h.release()
	if res := within(t, "the slow map once released", slowDone); res.err != nil || res.sm == nil {
		t.Errorf("the slow map: %+v", res)
	}
}

// TestReleaseMapsCallerGivesUp: a caller whose ctx ends while its map is
// read returns at once, its frames unmapped with a note that the map is
// being read; the read goes on, and its map is kept: the next caller
// gets it without reading the file again.
func TestReleaseMapsCallerGivesUp(t *testing.T) {
	project := t.TempDir()
	path := filepath.Join(project, "main.jsbundle.map")
	mappings := vlqText([][][]int{{{0, 0, 41, 2, 0}}})
	doc := `{"version":3,"sources":["src/orders/api.js"],"names":["loadOrders"],"mappings":"` + mappings + `"}`
	if err := os.WriteFile(path, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	s := &sourceMapper{maps: newReleaseMaps(config{ProjectDir: project})}
	h := holdRead(t, s.maps, path)
	st := jsStack{Frames: []jsFrame{{Method: "p", Line: 1, Column: 1, Kind: frameBundle}}, Bundle: iosBundle}
	if _, _, _, ok := releasePosition(st.Frames[0], st.Bundle); !ok {
		t.Fatalf("%+v is no release frame", st.Frames[0])
	}

	ctx, cancel := context.WithCancel(context.Background())
	type answer struct {
		out [][]mappedFrame
		err error
	}
	first := make(chan answer, 1)
	go func() {
		out, err := s.mapStacks(ctx, []jsStack{st})
		first <- answer{out, err}
	}()
	within(t, "the read to start", h.started)
	cancel()
	a := within(t, "the caller whose ctx ended", first)
	var reading *errSourceMapReading
	if !errors.As(a.err, &reading) || !errors.Is(a.err, context.Canceled) || reading.Path != "main.jsbundle.map" {
		t.Fatalf("the caller that gave up: %v", a.err)
	}
	if a.out[0][0].Mapped {
		t.Errorf("a frame mapped without its map: %+v", a.out[0][0])
	}
	if note := stackNoteFor(a.err, false); note.Status != "pending" || !strings.Contains(note.Reason, "main.jsbundle.map") || !strings.Contains(note.Reason, "still being read") {
		t.Errorf("the note: %+v", note)
	}

	h.release()
	out, err := s.mapStacks(context.Background(), []jsStack{st})
	if err != nil {
		t.Fatal(err)
	}
	if f := out[0][0]; !f.Mapped || f.text() != "at loadOrders (src/orders/api.js:42:3)" {
		t.Errorf("after the read: %+v", f)
	}
	if n := h.count(path); n != 1 {
		t.Errorf("the map was read %d times, want once", n)
	}
}

// TestReleaseMapsReadOnce: callers of a map not yet read, at the same
// time, wait for one read of it and get the same map.
func TestReleaseMapsReadOnce(t *testing.T) {
	dir := t.TempDir()
	path := writeMapAt(t, dir, "a.map", "a.js", time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	r := newReleaseMaps(config{})
	h := holdRead(t, r, path)
	waiting := make(chan string, 8)
	r.waiting = func(p string) { waiting <- p }
	first := goRead(context.Background(), r, path)
	within(t, "the first read to start", h.started)
	within(t, "the first caller to wait", waiting)
	second := goRead(context.Background(), r, path)
	within(t, "the second caller to wait", waiting)
	h.release()
	a, b := within(t, "the first caller", first), within(t, "the second caller", second)
	if a.err != nil || b.err != nil || a.sm == nil || a.sm != b.sm {
		t.Errorf("the callers got %+v and %+v, want one map", a, b)
	}
	if n := h.count(path); n != 1 {
		t.Errorf("the map was read %d times, want once", n)
	}
}

// TestReleaseMapsUnreadableNotKept: a map whose file could not be read is
// read again on the next call, not answered from the failure.
func TestReleaseMapsUnreadableNotKept(t *testing.T) {
	dir := t.TempDir()
	path := writeMapAt(t, dir, "a.map", "a.js", time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	r := newReleaseMaps(config{})
	fail := true
	r.readFile = func(p string) ([]byte, error) {
		if fail {
			return nil, fs.ErrPermission
		}
		return os.ReadFile(p)
	}
	t.Cleanup(r.reads.Wait)
	if res := within(t, "the failed read", goRead(context.Background(), r, path)); !errors.Is(res.err, fs.ErrPermission) {
		t.Fatalf("the failed read: %+v", res)
	}
	r.reads.Wait()
	fail = false
	if res := within(t, "the read again", goRead(context.Background(), r, path)); res.err != nil || res.sm == nil {
		t.Errorf("after a failed read: %+v", res)
	}
}
