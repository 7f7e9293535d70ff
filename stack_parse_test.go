package main

import (
	"strconv"
	"strings"
	"testing"
	"unicode"

	"github.com/google/go-cmp/cmp"
)

// text prints the stack again, frames in Hermes's form, so that parsing
// the text gives the same stack.
func (st jsStack) text() string {
	lines := append([]string(nil), st.Message...)
	for _, f := range st.Frames {
		lines = append(lines, "    "+f.text())
	}
	return strings.Join(lines, "\n")
}

const testBundle = "http://localhost:8081/index.bundle?platform=ios&dev=true&minify=false"

func TestParseJSStack(t *testing.T) {
	for _, tc := range []struct {
		name    string
		text    string
		message []string
		frames  []jsFrame
	}{
		{"hermes", "Error: boom\n    at onPress (" + testBundle + ":48211:18)\n    at anonymous (" + testBundle + ":1:2)",
			[]string{"Error: boom"}, []jsFrame{
				{Method: "onPress", File: testBundle, Line: 48211, Column: 18, Kind: frameURL},
				{Method: "anonymous", File: testBundle, Line: 1, Column: 2, Kind: frameURL},
			}},
		{"hermes bytecode, native, internal and skipped",
			"TypeError: x is undefined\n    at anonymous (address at index.android.bundle:1:902133)\n    at forEach (native)\n" +
				"    at apply (InternalBytecode.js:12:3)\n    ... skipping 50 frames\n    at last (address at /data/app/index.android.bundle:1:7)",
			[]string{"TypeError: x is undefined"}, []jsFrame{
				{Method: "anonymous", File: "index.android.bundle", Line: 1, Column: 902133, Kind: frameBytecode},
				{Method: "forEach", Kind: frameNative},
				{Method: "apply", File: "InternalBytecode.js", Line: 12, Column: 3, Kind: frameInternal},
				{Kind: frameSkipped, Skipped: 50},
				{Method: "last", File: "/data/app/index.android.bundle", Line: 1, Column: 7, Kind: frameBytecode},
			}},
		{"jsc with a JavaScriptCore-safe URL",
			"onPress@http://localhost:8081/index.bundle//&platform=ios&dev=true:48211:18\nglobal code@http://10.0.2.2:8081/index.bundle//&platform=ios:3:1\n[native code]\n@http://localhost:8081/index.bundle//&platform=ios:9:9",
			nil, []jsFrame{
				{Method: "onPress", File: "http://localhost:8081/index.bundle//&platform=ios&dev=true", Line: 48211, Column: 18, Kind: frameURL},
				{Method: "global code", File: "http://10.0.2.2:8081/index.bundle//&platform=ios", Line: 3, Column: 1, Kind: frameURL},
				{Kind: frameNative},
				{File: "http://localhost:8081/index.bundle//&platform=ios", Line: 9, Column: 9, Kind: frameURL},
			}},
		{"v8, bare locations, ports and an Expo entry",
			"Error: x\n    at http://192.168.1.20:19000/.expo/.virtual-metro-entry.bundle?platform=ios&dev=true:7:3\n    at Array.forEach (<anonymous>)\n    at async Promise.all (index 0)",
			[]string{"Error: x"}, []jsFrame{
				{File: "http://192.168.1.20:19000/.expo/.virtual-metro-entry.bundle?platform=ios&dev=true", Line: 7, Column: 3, Kind: frameURL},
				{Method: "Array.forEach", Kind: frameNative},
				{Method: "async Promise.all", File: "index 0", Kind: framePath},
			}},
		{"already source, as Reactotron's error tracking sends it",
			"at handleAdd (/Users/ana/shop/src/CartButton.tsx:42)\nat placeOrder (src/api/orders.ts:42:11)",
			nil, []jsFrame{
				{Method: "handleAdd", File: "/Users/ana/shop/src/CartButton.tsx", Line: 42, Kind: framePath},
				{Method: "placeOrder", File: "src/api/orders.ts", Line: 42, Column: 11, Kind: framePath},
			}},
		{"frames count only after the last line that is not a frame",
			"Error: outer\n    at a (" + testBundle + ":1:1)\nCaused by: inner at line 3\n    at b (" + testBundle + ":2:2)\n\n",
			[]string{"Error: outer", "    at a (" + testBundle + ":1:1)", "Caused by: inner at line 3"}, []jsFrame{
				{Method: "b", File: testBundle, Line: 2, Column: 2, Kind: frameURL},
			}},
		{"message lines that look like frames", "mail ana@example.com failed\nretry at 10:30",
			[]string{"mail ana@example.com failed", "retry at 10:30"}, nil},
		{"an empty file name (Hermes tolerates it)", "    at f (:3:4)", nil, []jsFrame{{Method: "f", Line: 3, Column: 4, Kind: framePath}}},
		{"numbers too long to be a location", "at f (" + testBundle + ":99999999999:1)", nil,
			[]jsFrame{{Method: "f", File: testBundle + ":99999999999", Line: 1, Kind: frameURL}}},
		{"windows line ends", "Error: e\r\n    at f (" + testBundle + ":5:6)\r\n", []string{"Error: e"},
			[]jsFrame{{Method: "f", File: testBundle, Line: 5, Column: 6, Kind: frameURL}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := parseJSStack(tc.text)
			if diff := cmp.Diff(jsStack{Message: tc.message, Frames: tc.frames}, got); diff != "" {
				t.Errorf("parseJSStack(%q) (-want +got):\n%s", tc.text, diff)
			}
		})
	}
}

// FuzzParseJSStack: whatever the text, parsing never fails, a number read
// is in bounds, and the stack printed again in Hermes's form reads back
// the same.
func FuzzParseJSStack(f *testing.F) {
	for _, seed := range []string{
		"Error: boom\n    at onPress (" + testBundle + ":48211:18)\n    at forEach (native)\n    ... skipping 3 frames",
		"onPress@http://localhost:8081/index.bundle//&platform=ios:1:2\n[native code]\nglobal code@http://h:1/x.bundle?a:3:4",
		"    at anonymous (address at index.android.bundle:1:902133)\n    at f (InternalBytecode.js:1:1)",
		"Error: x\n    at http://h:8081/i.bundle?p=1:7:3\n    at Array.forEach (<anonymous>)\nnot a frame\n    at g (/src/a.js:4)",
		"at f (:3:4)", "at  (x:1:2)", "a@b", "at (", "... skipping 1 frame",
		"com.facebook.react.common.JavascriptException: TypeError: x, stack:\np@1:132161\n@1:0\nanonymous@1:5'",
		"p@main.jsbundle:1:3\nq@file:///var/app/main.jsbundle:1:30",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, text string) {
		st := parseJSStack(text)
		for _, fr := range st.Frames {
			if fr.Line < 0 || fr.Line > maxFrameNumber || fr.Column < 0 || fr.Column > maxFrameNumber || fr.Skipped < 0 {
				t.Fatalf("frame out of bounds: %+v", fr)
			}
		}
		for _, fr := range st.Frames {
			if strings.ContainsAny(fr.File, "()") || strings.ContainsAny(fr.Method, "()") {
				return // where a name ends and a file begins is ambiguous in every engine's form
			}
			if strings.IndexFunc(fr.File, unicode.IsSpace) >= 0 {
				return // so is where a file with spaces ends ("@ :1", "(:1 )"): no bundle URL holds one
			}
		}
		again := parseJSStack(st.text())
		if diff := cmp.Diff(normalisedFrames(st), normalisedFrames(again)); diff != "" {
			t.Fatalf("frames of %q printed as %q read back differently (-first +again):\n%s", text, st.text(), diff)
		}
	})
}

// normalisedFrames are a stack's frames as their printed form keeps them:
// a nameless frame without a line prints as <anonymous>.
func normalisedFrames(st jsStack) []jsFrame {
	var out []jsFrame
	for _, f := range st.Frames {
		if f.Method == "" && (f.Line == 0 || f.Kind == frameBytecode) {
			f.Method = "<anonymous>"
		}
		out = append(out, f)
	}
	return out
}

// expoBundle is a bundle URL as Expo's dev server (SDK 58) serves it, in
// its JavaScriptCore-safe form.
const expoBundle = "http://127.0.0.1:8081/index.bundle//&platform=ios&dev=true&hot=false&lazy=true&transform.engine=hermes&transform.routerRoot=app"

func TestFindStacks(t *testing.T) {
	t.Parallel()
	type span struct{ First, End, Frames int }
	for _, tc := range []struct {
		name string
		text string
		want []span
	}{
		{"an Error logged by React Native's exception handler (Hermes)",
			"Error: boom\n    at onCheckout (" + expoBundle + ":4024:13)\n    at onPress (" + expoBundle + ":3990:7)\n    at forEach (native)",
			[]span{{1, 4, 3}}},
		{"a message, then an Error (JavaScriptCore)",
			"checkout failed Error: boom\nonCheckout@" + expoBundle + ":4024:13\nglobal code@" + expoBundle + ":1:1",
			[]span{{1, 3, 2}}},
		{"two Errors, one a line", "Error: a\n    at f (" + testBundle + ":1:1)\nError: b\n    at g (" + testBundle + ":2:2)\n    ... skipping 3 frames",
			[]span{{1, 2, 1}, {3, 5, 2}}},
		{"a blank line ends a stack", "    at f (" + testBundle + ":1:1)\n\n    at g (" + testBundle + ":2:2)",
			[]span{{0, 1, 1}, {2, 3, 1}}},
		{"text that only looks like a stack", "mail ana@example.com failed\nretry at 10:30 (soon)", nil},
		{"no text", "", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			lines, stacks := findStacks(tc.text)
			if strings.Join(lines, "\n") != tc.text {
				t.Errorf("lines %q do not join back to the text", lines)
			}
			var got []span
			for _, s := range stacks {
				got = append(got, span{s.first, s.end, len(s.frames)})
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("findStacks(%q) (-want +got):\n%s", tc.text, diff)
			}
		})
	}
}

// FuzzFindStacks: the lines join back to the text, and the stacks found
// are exactly its runs of frame lines, each read as parseFrameLine reads
// its lines, in order and apart.
func FuzzFindStacks(f *testing.F) {
	for _, seed := range []string{
		"Error: boom\n    at onCheckout (" + expoBundle + ":4024:13)\n    at forEach (native)",
		"x Error: a\n    at f (" + testBundle + ":1:1)\nError: b\ng@" + testBundle + ":2:2\n\n[native code]",
		"mail ana@example.com failed\nretry at 10:30\r\n    at f (:3:4)\r\n",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, text string) {
		lines, stacks := findStacks(text)
		if strings.Join(lines, "\n") != text {
			t.Fatalf("lines do not join back to %q", text)
		}
		inStack := make([]bool, len(lines))
		last := -1
		for _, s := range stacks {
			if s.first <= last || s.end <= s.first || s.end > len(lines) || len(s.frames) != s.end-s.first {
				t.Fatalf("stack %+v out of order or shape (last line of the one before %d, %d lines)", s, last, len(lines))
			}
			for i := s.first; i < s.end; i++ {
				inStack[i] = true
				fr, ok := parseFrameLine(strings.TrimRight(lines[i], "\r"))
				if !ok || !cmp.Equal(fr, s.frames[i-s.first]) {
					t.Fatalf("line %q of a stack read as %+v, %v; the stack holds %+v", lines[i], fr, ok, s.frames[i-s.first])
				}
			}
			if s.end < len(lines) {
				if _, ok := parseFrameLine(strings.TrimRight(lines[s.end], "\r")); ok {
					t.Fatalf("the stack %+v ends before the frame line %q", s, lines[s.end])
				}
			}
			last = s.end - 1
		}
		for i, line := range lines {
			if _, ok := parseFrameLine(strings.TrimRight(line, "\r")); ok && !inStack[i] {
				t.Fatalf("frame line %q is in no stack", line)
			}
		}
	})
}

// BenchmarkFindStacks: what searching a log's message for stacks costs a
// read of debug_get_logs, for a plain line and for an Error with its stack.
func BenchmarkFindStacks(b *testing.B) {
	var frames []string
	for i := range 12 {
		frames = append(frames, "    at f"+strings.Repeat("x", i)+" ("+expoBundle+":4024:13)")
	}
	for _, bc := range []struct{ name, text string }{
		{"plain", "metro-check: cart loaded with 3 items {id: 42, name: \"Ada\"}"},
		{"error", "Error: boom\n" + strings.Join(frames, "\n")},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.SetBytes(int64(len(bc.text)))
			for b.Loop() {
				findStacks(bc.text)
			}
		})
	}
}

// TestParseReleaseFrames: a release build's frames are read, and placed in
// their bundle at the line and 0-based column a source map is looked up
// by: React Native's `name@line:column` (column from 0; the bundle from the
// exception that carries them, the last of an iOS reason ending with its
// quote), Hermes' `address at` bytecode offsets, and a JavaScript release
// bundle's engine-printed 1-based column.
func TestParseReleaseFrames(t *testing.T) {
	for _, c := range []struct {
		line, bundle string
		want         string // bundle:line:column0, or "" for no release position
	}{
		{"p@1:132161", androidBundle, "index.android.bundle:1:132161"},
		{"anonymous@1:0", iosBundle, "main.jsbundle:1:0"},
		{"loadOrders@5:100'", iosBundle, "main.jsbundle:5:100"},
		{"p@1:132161", "", ""}, // no exception says which bundle
		{"    at p (address at index.android.bundle:1:902133)", "", "index.android.bundle:1:902133"},
		{"    at p (address at /data/app/x/main.jsbundle:1:0)", "", "main.jsbundle:1:0"},
		{"    at p (address at unknown:1:9)", androidBundle, ""},
		{"p@main.jsbundle:1:3", "", "main.jsbundle:1:2"},
		{"p@file:///var/containers/App.app/main.jsbundle:2:30", "", "main.jsbundle:2:29"},
		{"p@/src/app.js:2:30", androidBundle, ""},
		{"    at f (" + testBundle + ":48211:18)", androidBundle, ""},
	} {
		f, ok := parseFrameLine(c.line)
		if !ok {
			t.Errorf("%q is not read as a frame", c.line)
			continue
		}
		got := ""
		if b, line, col, ok := releasePosition(f, c.bundle); ok {
			got = b + ":" + strconv.Itoa(line) + ":" + strconv.Itoa(col)
		}
		if got != c.want {
			t.Errorf("%q (%s): %q, want %q", c.line, c.bundle, got, c.want)
		}
	}
	if f, _ := parseFrameLine("p@1:132161"); f.text() != "p@1:132161" {
		t.Errorf("a release frame prints as %q", f.text())
	}
	for text, want := range map[string]string{
		"com.facebook.react.common.JavascriptException: TypeError: x, js engine: hermes, stack:":                                                   androidBundle,
		"*** Terminating app due to uncaught exception 'RCTFatalException: Unhandled JS Exception: x', reason: 'Unhandled JS Exception: x, stack:": iosBundle,
		"Unhandled JS Exception: TypeError: x":           iosBundle,
		"java.lang.IllegalStateException: cart is empty": "",
	} {
		if got := releaseBundleIn(text); got != want {
			t.Errorf("releaseBundleIn(%q) = %q, want %q", text, got, want)
		}
	}
}
