package main

// native_project.go reads which apps the project builds, so that they are
// followed with nothing to set (a release build has no Metro to name
// them). In PROJECT_DIR (the server's working directory when unset):
//
//   - android/app/build.gradle(.kts): the first `applicationId "…"` (Groovy),
//     `applicationId = "…"` (Kotlin), else `namespace`;
//   - app.json: expo.android.package and expo.ios.bundleIdentifier;
//     app.config.js/ts: the same keys when their values are string literals;
//   - ios/*.xcodeproj/project.pbxproj: PRODUCT_BUNDLE_IDENTIFIER, but for
//     values built from $(…) variables and test targets' (whose build
//     settings name a TEST_HOST, BUNDLE_LOADER or TEST_TARGET_NAME).

import (
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

const (
	// maxProjectFileBytes bounds what is read of one project file: real
	// ones are a few kilobytes (a large app's project.pbxproj some hundreds).
	maxProjectFileBytes = 2 << 20
	maxXcodeProjects    = 4
)

// Where a followed app id came from, besides a project file's path.
const (
	appFromSetting = "NATIVE_APPS"
	appFromSession = "session"
)

// nativeAppSource is one followed app id and where it came from: the
// setting, a project file's path, or a session.
type nativeAppSource struct {
	ID, From string
}

// projectFile is one file that may name the project's app ids, and its
// reader; in projectFiles, the path is relative to the project.
type projectFile struct {
	path string
	read func(text string) []string
}

var projectFiles = []projectFile{
	{"android/app/build.gradle", parseGradleAppID},
	{"android/app/build.gradle.kts", parseGradleAppID},
	{"app.json", parseExpoAppJSON},
	{"app.config.js", parseExpoConfigScript},
	{"app.config.ts", parseExpoConfigScript},
}

// projectAppIDs remembers the project's app ids and the stamp of the files
// they were read from. Safe for concurrent use.
type projectAppIDs struct {
	mu      sync.Mutex
	stamp   string
	ids     []nativeAppSource
	sources []nativeAppSource // the last list followed (apps), for the health check
}

// read returns the app ids the project in dir names, read again when its files change.
func (p *projectAppIDs) read(dir string) []nativeAppSource {
	if abs, err := filepath.Abs(dir); err == nil { // "" is the working directory
		dir = abs
	}
	files := projectPaths(dir)
	stamp := dir
	for _, f := range files {
		if info, err := os.Stat(f.path); err == nil {
			stamp += "\x00" + f.path + "\x00" + info.ModTime().Format(time.RFC3339Nano) + "\x00" + strconv.FormatInt(info.Size(), 10)
		}
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if stamp == p.stamp {
		return p.ids
	}
	p.stamp, p.ids = stamp, nil
	for _, f := range files {
		file, err := os.Open(f.path)
		if err != nil {
			continue
		}
		text, err := io.ReadAll(io.LimitReader(file, maxProjectFileBytes))
		file.Close()
		if err != nil {
			continue
		}
		for _, id := range f.read(string(text)) {
			if validNativeAppID(id) && !slices.ContainsFunc(p.ids, func(s nativeAppSource) bool { return s.ID == id }) {
				p.ids = append(p.ids, nativeAppSource{ID: id, From: f.path})
			}
		}
	}
	return p.ids
}

// projectPaths lists dir's files that may name app ids, with their readers.
func projectPaths(dir string) []projectFile {
	var files []projectFile
	for _, f := range projectFiles {
		files = append(files, projectFile{filepath.Join(dir, filepath.FromSlash(f.path)), f.read})
	}
	xcode, _ := filepath.Glob(filepath.Join(dir, "ios", "*.xcodeproj", "project.pbxproj"))
	slices.Sort(xcode)
	for _, path := range xcode[:min(len(xcode), maxXcodeProjects)] {
		files = append(files, projectFile{path, parsePBXBundleIDs})
	}
	return files
}

// keep remembers sources, the first of each id, at most maxNativeApps,
// and returns their ids.
func (p *projectAppIDs) keep(sources []nativeAppSource) []string {
	var kept []nativeAppSource
	var ids []string
	for _, s := range sources {
		if len(ids) < maxNativeApps && validNativeAppID(s.ID) && !slices.Contains(ids, s.ID) {
			kept, ids = append(kept, s), append(ids, s.ID)
		}
	}
	p.mu.Lock()
	p.sources = kept
	p.mu.Unlock()
	return ids
}

// followed is the last list kept.
func (p *projectAppIDs) followed() []nativeAppSource {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.sources)
}

func parseGradleAppID(text string) []string {
	for _, key := range []string{"applicationId", "namespace"} {
		if id := quotedAfterKey(stripLineComments(text), key, " \t="); id != "" {
			return []string{id}
		}
	}
	return nil
}

func parseExpoConfigScript(text string) []string {
	text = stripLineComments(text)
	var ids []string
	for _, key := range []string{"package", "bundleIdentifier"} {
		for _, k := range []string{key, `"` + key + `"`, "'" + key + "'"} {
			if id := quotedAfterKey(text, k, " \t:"); id != "" {
				ids = append(ids, id)
				break
			}
		}
	}
	return ids
}

// parseExpoAppJSON reads app.json, whose keys are at the top without expo.
func parseExpoAppJSON(text string) []string {
	type config struct {
		Android struct {
			Package string `json:"package"`
		} `json:"android"`
		IOS struct {
			BundleIdentifier string `json:"bundleIdentifier"`
		} `json:"ios"`
	}
	var app struct {
		config
		Expo *config `json:"expo"`
	}
	if json.Unmarshal([]byte(text), &app) != nil {
		return nil
	}
	c := app.config
	if app.Expo != nil {
		c = *app.Expo
	}
	return slices.DeleteFunc([]string{c.Android.Package, c.IOS.BundleIdentifier}, func(id string) bool { return id == "" })
}

func parsePBXBundleIDs(text string) []string {
	var ids []string
	for _, block := range strings.Split(text, "buildSettings = {")[1:] {
		block, _, _ = strings.Cut(block, "}")
		if strings.Contains(block, "TEST_HOST") || strings.Contains(block, "BUNDLE_LOADER") || strings.Contains(block, "TEST_TARGET_NAME") {
			continue
		}
		for line := range strings.SplitSeq(block, "\n") {
			value, ok := strings.CutPrefix(strings.TrimSpace(line), "PRODUCT_BUNDLE_IDENTIFIER = ")
			if !ok {
				continue
			}
			value = strings.Trim(strings.TrimSuffix(strings.TrimSpace(value), ";"), `"`)
			if !strings.Contains(value, "$") && !slices.Contains(ids, value) {
				ids = append(ids, value)
			}
		}
	}
	return ids
}

// quotedAfterKey finds key as a word followed by characters of seps and
// a quoted string, and returns the string; "" when there is none.
func quotedAfterKey(text, key, seps string) string {
	for i := 0; ; {
		j := strings.Index(text[i:], key)
		if j < 0 {
			return ""
		}
		start, end := i+j, i+j+len(key)
		i = end
		if start > 0 && isWordByte(text[start-1]) || end < len(text) && isWordByte(text[end]) {
			continue // applicationIdSuffix, a namespace inside another word
		}
		rest := strings.TrimLeft(text[end:], seps)
		if len(rest) == len(text[end:]) || rest == "" || (rest[0] != '"' && rest[0] != '\'') {
			continue
		}
		value, _, closed := strings.Cut(rest[1:min(len(rest), 1+maxQuotedID)], rest[:1])
		if closed && !strings.ContainsAny(value, "\n$") {
			return value
		}
	}
}

// maxQuotedID bounds the quoted value looked at, so that a file of many
// unclosed quotes is read in linear time; an app id is at most 255 bytes.
const maxQuotedID = 256

func isWordByte(b byte) bool {
	return b == '_' || b == '$' || b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b >= '0' && b <= '9'
}

// stripLineComments drops `//` comments that begin a line (after spaces).
func stripLineComments(text string) string {
	lines := strings.Split(text, "\n")
	for i, l := range lines {
		if strings.HasPrefix(strings.TrimSpace(l), "//") {
			lines[i] = ""
		}
	}
	return strings.Join(lines, "\n")
}
