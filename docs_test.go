package main

// docs_test.go holds README.md and docs/*.md to the code and to each other:
// every relative link resolves to a file, and its #anchor to a heading of
// that file (GitHub's slugs); every setting the pages name, as a variable or
// a flag, is one of config.go's settings (or a flag of the program); and
// docs/configuration.md's table documents every setting, with its default.

import (
	"bytes"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode"
)

// notSettings are the upper-case names the pages write in backticks that are
// not devtools-mcp's settings. A name that looks like a setting and is in
// neither list fails the test: a misspelt or removed setting.
var notSettings = map[string]string{
	// Tool error codes (errors.go) and Wire Protocol error codes.
	"ADAPTER_ERROR": "code", "BUSY": "code", "EVENT_NOT_FOUND": "code", "INTERNAL": "code",
	"INVALID_HANDSHAKE": "code", "INVALID_PARAMS": "code", "NOT_CONNECTED": "code",
	"NOT_SUPPORTED": "code", "PATH_NOT_FOUND": "code", "PAYLOAD_TOO_LARGE": "code",
	"SCOPE_NOT_FOUND": "code", "SNAPSHOT_NOT_FOUND": "code", "STREAM_UNAVAILABLE": "code",
	"TIMEOUT": "code", "UNAUTHORIZED": "code", "UNKNOWN_METHOD": "code", "UNSUPPORTED_PROTOCOL": "code",
	// Other programs' variables: the npm launcher, Go, adb, React Native, Expo, the environment.
	"DEVTOOLS_MCP_BINARY": "the npm launcher's", "CGO_ENABLED": "Go's", "ANDROID_ADB_SERVER_PORT": "adb's", "ANDROID_LOG_TAGS": "adb's",
	"RCT_METRO_PORT": "React Native's", "REACT_NATIVE_PACKAGER_HOSTNAME": "Expo's", "PRODUCT_BUNDLE_IDENTIFIER": "Xcode's", "SOURCEMAP_FILE": "React Native's",
	"EXPO_PACKAGER_PROXY_URL": "Expo's", "EXPO_OFFLINE": "Expo's", "HTTP_PROXY": "the environment's",
	"PATH": "the environment's",
	// Variables of the scripts under .ci/.
	"ADB_CHECK_FLAGS": ".ci/adb.sh", "FUZZ_TIME": ".ci/run", "RECORD_DIR": ".ci/metro-inspector.sh",
	// Words that are not variables: adb's messages, placeholders, HTTP methods, key prefixes, files.
	"CNXN": "adb", "AUTH": "adb", "OPEN": "adb", "OKAY": "adb", "WRTE": "adb", "CLSE": "adb",
	"SERIAL": "placeholder", "UDID": "placeholder", "PACKAGE": "placeholder", "OWNER": "placeholder",
	"GET": "HTTP", "DELETE": "HTTP", "AKIA": "key prefix", "ASIA": "key prefix",
	"SIGSEGV": "signal", "SHA256SUMS": "file",
}

// notOurFlags are the single-dash flags the pages write that belong to
// other programs: go test and go build, adb logcat.
var notOurFlags = map[string]bool{
	"bench": true, "benchtime": true, "count": true, "fuzz": true, "fuzztime": true,
	"ldflags": true, "parallel": true, "race": true, "run": true, "update": true,
	"T": true, "b": true, "d": true, "t": true, "v": true, "s": true,
}

type docPage struct{ path, text string }

func readDocPages(t *testing.T) []docPage {
	t.Helper()
	paths, err := filepath.Glob("docs/*.md")
	if err != nil || len(paths) == 0 {
		t.Fatalf("docs/*.md: %v (%d pages)", err, len(paths))
	}
	var pages []docPage
	for _, p := range append([]string{"README.md"}, paths...) {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		pages = append(pages, docPage{filepath.ToSlash(p), string(b)})
	}
	return pages
}

var (
	fenceLine    = regexp.MustCompile("^\\s*(```|~~~)")
	codeSpan     = regexp.MustCompile("`+[^`\n]*`+")
	inlineLink   = regexp.MustCompile(`\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)`)
	refLinkDef   = regexp.MustCompile(`(?m)^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s|$)`)
	headingLine  = regexp.MustCompile(`^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$`)
	upperName    = regexp.MustCompile(`^([A-Z][A-Z0-9_]*[A-Z0-9])(?:=|$)`)
	leadingFlag  = regexp.MustCompile(`^-([A-Za-z][A-Za-z0-9-]*)`)
	flagToken    = regexp.MustCompile(`(?:^|\s)-([A-Za-z][A-Za-z0-9-]*)`)
	commandStart = regexp.MustCompile(`(?:^|[\s/])(?:devtools-mcp|go run \.)(?:\s+check-adapter)?\s`)
	shellAssign  = regexp.MustCompile(`(?:^|\s)([A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+)=`)
	tableSetting = regexp.MustCompile("(?m)^\\| `([A-Z][A-Z0-9_]*)` \\| `-([a-z][a-z0-9-]*)` \\| ([^|]*) \\|")
)

// splitFences returns a page's prose lines (code spans kept) and the lines
// of its fenced code blocks.
func splitFences(text string) (prose, code []string) {
	in := false
	for _, line := range strings.Split(text, "\n") {
		if fenceLine.MatchString(line) {
			in = !in
			continue
		}
		if in {
			code = append(code, line)
		} else {
			prose = append(prose, line)
		}
	}
	return prose, code
}

// githubSlug is the anchor GitHub gives a heading: the text lower-cased,
// spaces made hyphens, and everything but letters, digits, marks, '-' and
// '_' left out (so "1. Transport" is "1-transport" and "§" goes).
func githubSlug(heading string) string {
	heading = regexp.MustCompile(`\[([^\]]*)\]\([^)]*\)`).ReplaceAllString(heading, "$1")
	var b strings.Builder
	for _, r := range strings.ToLower(strings.TrimSpace(heading)) {
		switch {
		case r == ' ':
			b.WriteByte('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.IsMark(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

// docAnchors lists the anchors of a page's headings, a repeated heading
// numbered as GitHub numbers it ("x", "x-1", "x-2").
func docAnchors(text string) map[string]bool {
	prose, _ := splitFences(text)
	anchors, seen := map[string]bool{}, map[string]int{}
	for _, line := range prose {
		m := headingLine.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		slug := githubSlug(m[2])
		if n := seen[slug]; n > 0 {
			anchors[fmt.Sprintf("%s-%d", slug, n)] = true
		} else {
			anchors[slug] = true
		}
		seen[slug]++
	}
	return anchors
}

// brokenLinks lists the relative links of pages that name no existing file,
// or an anchor that no heading of the linked page has. read gives a file's
// text (nil error when it exists; text only matters for .md files).
func brokenLinks(pages []docPage, read func(name string) ([]byte, error)) []string {
	var bad []string
	for _, p := range pages {
		prose, _ := splitFences(p.text)
		text := codeSpan.ReplaceAllString(strings.Join(prose, "\n"), "")
		var targets []string
		for _, m := range inlineLink.FindAllStringSubmatch(text, -1) {
			targets = append(targets, m[1])
		}
		for _, m := range refLinkDef.FindAllStringSubmatch(text, -1) {
			targets = append(targets, m[1])
		}
		for _, target := range targets {
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			file, anchor, _ := strings.Cut(target, "#")
			name, b, err := p.path, []byte(p.text), error(nil)
			if file != "" {
				name = path.Clean(path.Join(path.Dir(p.path), file))
				b, err = read(name)
			}
			if err != nil {
				bad = append(bad, fmt.Sprintf("%s: link %q: no file %s", p.path, target, name))
				continue
			}
			if anchor != "" && strings.HasSuffix(name, ".md") && !docAnchors(string(b))[anchor] {
				bad = append(bad, fmt.Sprintf("%s: link %q: %s has no heading #%s", p.path, target, name, anchor))
			}
		}
	}
	return bad
}

// namedSettings lists the settings a page names: upper-case names in code
// spans (alone or as NAME=value) and assigned in code blocks, and the flags
// of code spans that start with one or of devtools-mcp command lines.
func namedSettings(text string) (envs, flags []string) {
	prose, code := splitFences(text)
	var commands []string
	for _, span := range codeSpan.FindAllString(strings.Join(prose, "\n"), -1) {
		span = strings.Trim(span, "`")
		if m := upperName.FindStringSubmatch(span); m != nil {
			envs = append(envs, m[1])
		}
		if m := leadingFlag.FindStringSubmatch(span); m != nil {
			flags = append(flags, m[1])
		}
		commands = append(commands, span)
	}
	for _, line := range code {
		for _, m := range shellAssign.FindAllStringSubmatch(line, -1) {
			envs = append(envs, m[1])
		}
		commands = append(commands, line)
	}
	for _, line := range commands {
		line, _, _ = strings.Cut(line, "#")
		if loc := commandStart.FindStringIndex(line); loc != nil {
			for _, m := range flagToken.FindAllStringSubmatch(line[loc[1]-1:], -1) {
				flags = append(flags, m[1])
			}
		}
	}
	return envs, flags
}

// programFlags are every flag devtools-mcp takes: the settings' and the
// others its usage text names (-demo, -help, check-adapter's -json, …).
func programFlags() map[string]bool {
	var usage bytes.Buffer
	printUsage(&usage)
	known := map[string]bool{}
	for _, m := range flagToken.FindAllStringSubmatch(usage.String(), -1) {
		known[m[1]] = true
	}
	for _, s := range settings {
		known[s.flag] = true
	}
	return known
}

// unknownSettings lists the names of pages that are neither settings nor
// known to be something else.
func unknownSettings(pages []docPage) []string {
	envs := map[string]bool{}
	for _, s := range settings {
		envs[s.env] = true
	}
	flags := programFlags()
	var bad []string
	for _, p := range pages {
		e, f := namedSettings(p.text)
		for _, name := range e {
			if !envs[name] && notSettings[name] == "" {
				bad = append(bad, fmt.Sprintf("%s: `%s` is not a setting (config.go's settings), nor listed in notSettings", p.path, name))
			}
		}
		for _, name := range f {
			if !flags[name] && !notOurFlags[name] {
				bad = append(bad, fmt.Sprintf("%s: -%s is not a flag of devtools-mcp, nor listed in notOurFlags", p.path, name))
			}
		}
		for _, m := range tableSetting.FindAllStringSubmatch(p.text, -1) {
			i := slices.IndexFunc(settings, func(s setting) bool { return s.env == m[1] })
			if i >= 0 && settings[i].flag != m[2] {
				bad = append(bad, fmt.Sprintf("%s: row of %s names -%s, its flag is -%s", p.path, m[1], m[2], settings[i].flag))
			}
		}
	}
	return bad
}

// undocumentedSettings lists the settings that the configuration page's
// table lacks, or gives with another flag or default.
func undocumentedSettings(configuration string) []string {
	rows := map[string][]string{}
	for _, m := range tableSetting.FindAllStringSubmatch(configuration, -1) {
		rows[m[1]] = m[2:]
	}
	var bad []string
	for _, s := range settings {
		row, ok := rows[s.env]
		switch {
		case !ok:
			bad = append(bad, fmt.Sprintf("%s (-%s) has no row in docs/configuration.md's table", s.env, s.flag))
		case row[0] != s.flag:
			bad = append(bad, fmt.Sprintf("%s: the table names -%s, its flag is -%s", s.env, row[0], s.flag))
		case s.def != "" && strings.Trim(strings.TrimSpace(row[1]), "`") != s.def:
			bad = append(bad, fmt.Sprintf("%s: the table gives the default %q, config.go %q", s.env, strings.TrimSpace(row[1]), s.def))
		}
	}
	return bad
}

func TestDocsLinksResolve(t *testing.T) {
	t.Parallel()
	for _, bad := range brokenLinks(readDocPages(t), os.ReadFile) {
		t.Error(bad)
	}
}

func TestDocsNameOnlySettings(t *testing.T) {
	t.Parallel()
	for _, bad := range unknownSettings(readDocPages(t)) {
		t.Error(bad)
	}
}

func TestDocsConfigurationListsEverySetting(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile("docs/configuration.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, bad := range undocumentedSettings(string(b)) {
		t.Error(bad)
	}
}

// TestDocsCheckersCatchDrift: each check fails on the drift it names, and
// passes what is right, on pages made up for it.
func TestDocsCheckersCatchDrift(t *testing.T) {
	t.Parallel()
	for heading, want := range map[string]string{
		"Under Expo (`npx expo start`)":                      "under-expo-npx-expo-start",
		"1. Transport":                                       "1-transport",
		"Optional state streams: `react_query` and `stores`": "optional-state-streams-react_query-and-stores",
		"Many agents, one app":                               "many-agents-one-app",
		"[Linked](x.md) §4 text":                             "linked-4-text",
	} {
		if got := githubSlug(heading); got != want {
			t.Errorf("githubSlug(%q) = %q, want %q", heading, got, want)
		}
	}

	files := map[string]string{
		"docs/a.md": "# A\n\n## Same\n\n## Same\n\n```\n## Not a heading\n```\n",
		"main.go":   "package main\n",
	}
	read := func(name string) ([]byte, error) {
		if s, ok := files[name]; ok {
			return []byte(s), nil
		}
		return nil, os.ErrNotExist
	}
	good := docPage{"README.md", "## Here\n[a](docs/a.md) [b](docs/a.md#same-1) [c](#here) [d](main.go) [e](https://x.example/y)\n" +
		"`[not a link](nowhere.md)`\n```\n[not a link](nowhere.md)\n```\n[ref]: docs/a.md#a\n"}
	if bad := brokenLinks([]docPage{good}, read); len(bad) != 0 {
		t.Errorf("brokenLinks of good links: %q", bad)
	}
	wrong := docPage{"docs/b.md", "[a](a.md#not-a-heading) [b](missing.md) [c](../docs/a.md#same-2) [d](#nowhere) [e](a.md#not-a-heading-1)\n[ref]: gone.md\n"}
	files["docs/b.md"] = wrong.text
	if bad := brokenLinks([]docPage{wrong}, read); len(bad) != 6 {
		t.Errorf("brokenLinks of six broken links found %d: %q", len(bad), bad)
	}

	fine := docPage{"README.md", "`WS_PORT`, `READ_ONLY=true`, `-read-only`, `-metro-url=off`, `NOT_CONNECTED`,\n" +
		"`devtools-mcp check-adapter -json -only 4`, `go test -race ./...`\n" +
		"```sh\nMETRO_URL=off devtools-mcp -transport http -demo   # -not-a-flag in a comment\n```\n" +
		"| `WS_PORT` | `-ws-port` | 19850 | port |\n"}
	if bad := unknownSettings([]docPage{fine}); len(bad) != 0 {
		t.Errorf("unknownSettings of settings: %q", bad)
	}
	drift := docPage{"README.md", "`METRO_URLS`, `-metro-urls`, `REDACTED_KEYS=a`\n" +
		"```sh\nNATIVE_LOG=off devtools-mcp -demo -read-onyl\n```\n" +
		"| `WS_PORT` | `-ws-prt` | 19850 | port |\n"}
	// Six misnamed settings, and the row's flag is named twice: as a flag
	// and as the row's.
	if bad := unknownSettings([]docPage{drift}); len(bad) != 7 {
		t.Errorf("unknownSettings of six misnamed settings found %d errors, want 7: %q", len(bad), bad)
	}

	var table strings.Builder
	for _, s := range settings {
		fmt.Fprintf(&table, "| `%s` | `-%s` | `%s` | x |\n", s.env, s.flag, s.def)
	}
	if bad := undocumentedSettings(table.String()); len(bad) != 0 {
		t.Errorf("undocumentedSettings of the full table: %q", bad)
	}
	first := fmt.Sprintf("| `%s` | `-%s` | `%s` | x |\n", settings[0].env, settings[0].flag, settings[0].def)
	missing := strings.Replace(table.String(), first, "", 1)
	otherDefault := strings.Replace(table.String(), first, fmt.Sprintf("| `%s` | `-%s` | 1 | x |\n", settings[0].env, settings[0].flag), 1)
	otherFlag := strings.Replace(table.String(), first, fmt.Sprintf("| `%s` | `-port` | `%s` | x |\n", settings[0].env, settings[0].def), 1)
	for name, text := range map[string]string{"a missing row": missing, "another default": otherDefault, "another flag": otherFlag} {
		if bad := undocumentedSettings(text); len(bad) != 1 || !strings.Contains(bad[0], settings[0].env) {
			t.Errorf("undocumentedSettings of %s: %q, want one error naming %s", name, bad, settings[0].env)
		}
	}
}
