package main

// symbolicate_local.go maps release builds' frames (Hermes bytecode
// offsets, React Native's `name@1:132161`, JavaScript release bundles'
// positions) with the build's own source map, found where React Native's
// and Expo's builds leave it, with nothing to set (find). A map is read
// once (stack_sourcemap.go, read), and kept until its file changes (size or
// mtime); a few are kept at most (maxReleaseMaps).

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"
)

const (
	maxReleaseMaps    = 4       // maps kept read at once
	maxSourceMapBytes = 1 << 30 // a larger file is not read
	maxMapScan        = 4096    // files looked at in one SOURCE_MAPS folder
)

// errMetroOff: frames in a dev server's bundle, but no Metro is
// configured (METRO_URL=off).
var errMetroOff = errors.New("stack mapping through Metro is off")

// errNoSourceMap: release frames, and no map for their bundle where
// builds leave one.
type errNoSourceMap struct {
	Bundle  string   // androidBundle or iosBundle
	Project string   // the project folder
	Looked  []string // where, relative to the project when under it
}

func (e *errNoSourceMap) Error() string {
	return fmt.Sprintf("no source map for %s in %s", e.Bundle, strings.Join(e.Looked, ", "))
}

// errSourceMapUnread: the map found could not be read.
type errSourceMapUnread struct {
	Path string
	Err  error
}

func (e *errSourceMapUnread) Error() string { return fmt.Sprintf("source map %s: %v", e.Path, e.Err) }
func (e *errSourceMapUnread) Unwrap() error { return e.Err }

// errSourceMapReading: the map found was still being read when the
// caller's time ended; the read goes on, and the map is kept.
type errSourceMapReading struct {
	Path string
	Size int64
	Err  error // the caller's ctx.Err()
}

func (e *errSourceMapReading) Error() string {
	return fmt.Sprintf("source map %s (%d bytes) is still being read", e.Path, e.Size)
}
func (e *errSourceMapReading) Unwrap() error { return e.Err }

// sourceMapper is the stackMapper serve hands the answers: release frames
// to the maps on disk, bundle-URL frames to Metro (nil: METRO_URL off).
type sourceMapper struct {
	metro *symbolicator
	maps  *releaseMaps
}

// mapStacks maps what each side can, and says why the rest was not.
func (s *sourceMapper) mapStacks(ctx context.Context, stacks []jsStack) ([][]mappedFrame, error) {
	var out [][]mappedFrame
	var metroErr error
	if s.metro != nil {
		out, metroErr = s.metro.mapStacks(ctx, stacks)
	} else {
		out = unmappedFrames(stacks)
		for _, st := range stacks {
			if slices.ContainsFunc(st.Frames, func(f jsFrame) bool { return f.Kind == frameURL }) {
				metroErr = errMetroOff
			}
		}
	}
	return out, errors.Join(metroErr, s.maps.mapRelease(ctx, stacks, out, s.projectRoot()))
}

// projectRoot is the project folder the release maps are looked for in
// (releaseMaps.project); the native side reads the app ids from it too.
func (s *sourceMapper) projectRoot() string { return s.maps.project(s.metro) }

func unmappedFrames(stacks []jsStack) [][]mappedFrame {
	out := make([][]mappedFrame, len(stacks))
	for i, st := range stacks {
		out[i] = make([]mappedFrame, len(st.Frames))
		for j, f := range st.Frames {
			out[i][j] = mappedFrame{jsFrame: f}
		}
	}
	return out
}

// releaseMaps finds and keeps release builds' source maps.
type releaseMaps struct {
	projectDir string   // PROJECT_DIR; "" is the working directory
	extra      []string // SOURCE_MAPS: files or folders, searched first

	readFile func(string) ([]byte, error) // os.ReadFile; tests hold reads
	waiting  func(path string)            // tests: told a caller waits on a read

	mu     sync.Mutex
	loaded map[string]*loadedMap
	order  []string       // paths, the least recently used first
	reads  sync.WaitGroup // the reads going on
}

// loadedMap is a map read, or being read, and the file as it was when
// read. sm and err are set before done is closed, and not changed after.
type loadedMap struct {
	size int64
	mod  time.Time
	done chan struct{}
	sm   *sourceMap
	err  error
}

func newReleaseMaps(cfg config) *releaseMaps {
	return &releaseMaps{projectDir: cfg.ProjectDir, extra: cfg.SourceMaps, readFile: os.ReadFile, loaded: map[string]*loadedMap{}}
}

// project is the app's project folder: the one Metro named, else
// PROJECT_DIR, else the working directory.
func (r *releaseMaps) project(metro *symbolicator) string {
	if metro != nil {
		metro.mu.Lock()
		root := metro.root
		metro.mu.Unlock()
		if root != "" {
			return root
		}
	}
	dir := cmp.Or(r.projectDir, ".")
	if abs, err := filepath.Abs(dir); err == nil {
		return abs
	}
	return dir
}

// mapRelease maps, in out, the frames of stacks that lie in a release
// bundle with that bundle's map, and says why some could not be. It does
// not wait for a map past ctx: those frames stay as they are.
func (r *releaseMaps) mapRelease(ctx context.Context, stacks []jsStack, out [][]mappedFrame, project string) error {
	byBundle := map[string]foundMap{}
	var errs []error
	for i, st := range stacks {
		for j, f := range st.Frames {
			bundle, line, col, ok := releasePosition(f, st.Bundle)
			if !ok {
				continue
			}
			m, seen := byBundle[bundle]
			if !seen {
				var err error
				m, err = r.mapFor(ctx, bundle, project)
				byBundle[bundle] = m
				errs = append(errs, err) // errors.Join leaves out nil
			}
			if m.sm == nil {
				continue
			}
			if pos, ok := m.sm.lookup(line, col); ok {
				out[i][j] = mappedFrame{
					jsFrame:  jsFrame{Method: pos.label(), File: relativeTo(project, pos.Source), Line: pos.Line, Column: pos.Column + 1, Kind: framePath},
					Collapse: strings.Contains(pos.Source, "/node_modules/") || strings.HasPrefix(pos.Source, "node_modules/"),
					Mapped:   true, MapFile: relativeTo(project, m.path), MapBuilt: m.mod,
				}
			}
		}
	}
	return errors.Join(errs...)
}

// foundMap is a bundle's map file, its mtime, and the map read from it
// (nil when it could not be).
type foundMap struct {
	path string
	mod  time.Time
	sm   *sourceMap
}

// mapFor finds the bundle's map and reads it, or gives the one kept.
func (r *releaseMaps) mapFor(ctx context.Context, bundle, project string) (foundMap, error) {
	path, info, looked := r.find(bundle, project)
	if path == "" {
		return foundMap{}, &errNoSourceMap{Bundle: bundle, Project: project, Looked: looked}
	}
	found := foundMap{path: path, mod: info.ModTime()}
	sm, err := r.read(ctx, path, info)
	switch {
	case err != nil && err == ctx.Err(): // a read's own error is never the caller's
		return found, &errSourceMapReading{Path: relativeTo(project, path), Size: info.Size(), Err: err}
	case err != nil:
		return found, &errSourceMapUnread{Path: relativeTo(project, path), Err: err}
	}
	found.sm = sm
	return found, nil
}

// read gives the map at path, read again only when the file changed. The
// file is read and indexed outside r.mu, once for all its callers: the
// first starts the read, every caller waits for it or for its ctx, and
// one that gives up leaves the read to go on and be kept for the next.
// A file that could not be read is read again on the next call; a map
// found malformed is kept as such until its file changes.
func (r *releaseMaps) read(ctx context.Context, path string, info fs.FileInfo) (*sourceMap, error) {
	r.mu.Lock()
	l, ok := r.loaded[path]
	if !ok || l.size != info.Size() || !l.mod.Equal(info.ModTime()) {
		l = &loadedMap{size: info.Size(), mod: info.ModTime(), done: make(chan struct{})}
		r.loaded[path] = l
		r.reads.Go(func() { r.load(path, l) })
	}
	r.order = append(slices.DeleteFunc(r.order, func(p string) bool { return p == path }), path) // the most recently used
	r.evict()
	r.mu.Unlock()
	select {
	case <-l.done:
		return l.sm, l.err
	default:
	}
	if r.waiting != nil {
		r.waiting(path)
	}
	select {
	case <-l.done:
		return l.sm, l.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// load reads and indexes the map at path into l, then closes l.done.
func (r *releaseMaps) load(path string, l *loadedMap) {
	var sm *sourceMap
	var err error
	unreadable := false
	if l.size > maxSourceMapBytes {
		err = fmt.Errorf("%d bytes, over the %d read", l.size, maxSourceMapBytes)
	} else if data, readErr := r.readFile(path); readErr != nil {
		err, unreadable = readErr, true
	} else {
		sm, err = readSourceMap(data)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	l.sm, l.err = sm, err
	close(l.done)
	if unreadable && r.loaded[path] == l {
		delete(r.loaded, path)
		r.order = slices.DeleteFunc(r.order, func(p string) bool { return p == path })
	}
	r.evict()
}

// evict drops the least recently used maps over maxReleaseMaps, but none
// still being read (its callers wait on it); r.mu is held.
func (r *releaseMaps) evict() {
	for i := 0; len(r.loaded) > maxReleaseMaps && i < len(r.order); {
		l := r.loaded[r.order[i]]
		select {
		case <-l.done:
			delete(r.loaded, r.order[i])
			r.order = slices.Delete(r.order, i, i+1)
		default:
			i++
		}
	}
}

// find picks the bundle's map: SOURCE_MAPS' first (a file that names
// no other platform, or the newest fitting map in a folder), then the
// project's build outputs (projectMapPatterns), the newest first. looked
// says where it looked, for the answer when it found none.
func (r *releaseMaps) find(bundle, project string) (string, fs.FileInfo, []string) {
	var looked []string
	for _, entry := range r.extra {
		looked = append(looked, relativeTo(project, entry))
		info, err := os.Stat(entry)
		if err != nil {
			continue
		}
		if !info.IsDir() {
			if mapFits(filepath.Base(entry), bundle, true) {
				return entry, info, nil
			}
			continue
		}
		if path, info := newestMap(scanMaps(entry), entry, bundle); path != "" {
			return path, info, nil
		}
	}
	for _, pattern := range projectMapPatterns(bundle) {
		looked = append(looked, pattern)
		matches, _ := filepath.Glob(filepath.Join(project, filepath.FromSlash(pattern)))
		if path, info := newestMap(matches, project, bundle); path != "" {
			return path, info, nil
		}
	}
	return "", nil, looked
}

// projectMapPatterns are where builds leave a bundle's map, relative to
// the project: React Native's Android Gradle plugin, the iOS build phase
// with SOURCEMAP_FILE as React Native's docs set it, `expo export
// --source-maps`.
func projectMapPatterns(bundle string) []string {
	if bundle == androidBundle {
		return []string{"android/app/build/generated/sourcemaps/react/*/index.android.bundle.map", "dist/_expo/static/js/android/*.map"}
	}
	return []string{"main.jsbundle.map", "dist/_expo/static/js/ios/*.map"}
}

// mapFits reports whether a map file may be the bundle's: a .map whose
// name (its path below where it was looked for) names the bundle's
// platform, or, when named by the user (anyName), names no other.
func mapFits(name, bundle string, anyName bool) bool {
	lower := strings.ToLower(filepath.ToSlash(name))
	if !strings.HasSuffix(lower, ".map") {
		return false
	}
	android := strings.Contains(lower, "android")
	ios := strings.Contains(lower, "ios") || strings.Contains(lower, "jsbundle")
	if bundle == androidBundle {
		return android || (anyName && !ios)
	}
	return ios || (anyName && !android)
}

// scanMaps lists the .map files under a folder, up to maxMapScan entries.
func scanMaps(dir string) []string {
	var out []string
	seen := 0
	_ = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		seen++
		if err != nil || seen > maxMapScan {
			return filepath.SkipAll
		}
		if d.IsDir() && d.Name() == "node_modules" {
			return filepath.SkipDir
		}
		if !d.IsDir() && strings.HasSuffix(d.Name(), ".map") {
			out = append(out, path)
		}
		return nil
	})
	return out
}

// newestMap is the most recently built of paths (found under dir) that
// fit the bundle.
func newestMap(paths []string, dir, bundle string) (string, fs.FileInfo) {
	var newest string
	var newestInfo fs.FileInfo
	for _, p := range paths {
		if rel, err := filepath.Rel(dir, p); err != nil || !mapFits(rel, bundle, false) {
			continue
		}
		if info, err := os.Stat(p); err == nil && info.Mode().IsRegular() && (newestInfo == nil || info.ModTime().After(newestInfo.ModTime())) {
			newest, newestInfo = p, info
		}
	}
	return newest, newestInfo
}
