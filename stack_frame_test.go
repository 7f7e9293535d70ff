package main

import (
	"strings"
	"testing"
	"unicode"

	"github.com/google/go-cmp/cmp"
)

// Frame objects are read by the convention of whoever sends each shape
// (stack_frame.go's table): a frame's line and column always come out
// 1-based, as the engines print them.
func TestReadJSStackArrays(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, raw string
		want      []jsFrame
		ok        bool
	}{
		{"lines", `["at f (` + testBundle + `:1:2)", "g@` + testBundle + `:3:4"]`, []jsFrame{
			{Method: "f", File: testBundle, Line: 1, Column: 2, Kind: frameURL},
			{Method: "g", File: testBundle, Line: 3, Column: 4, Kind: frameURL}}, true},
		{"react native's frames: 1-based line, 0-based column", `[{"methodName":"f","file":"` + testBundle + `","lineNumber":10,"column":4}]`,
			[]jsFrame{{Method: "f", File: testBundle, Line: 10, Column: 5, Kind: frameURL}}, true},
		{"CDP call frames: 0-based line and column", `[{"functionName":"f","url":"` + testBundle + `","lineNumber":10,"columnNumber":4}]`,
			[]jsFrame{{Method: "f", File: testBundle, Line: 11, Column: 5, Kind: frameURL}}, true},
		{"CDP: a native frame has no url", `[{"functionName":"forEach","url":"","lineNumber":0,"columnNumber":0}]`,
			[]jsFrame{{Method: "forEach", Line: 1, Column: 1, Kind: frameNative}}, true},
		{"reactotron-react-native: no column", `[{"functionName":"f","fileName":"/app/src/a.js","lineNumber":7}]`,
			[]jsFrame{{Method: "f", File: "/app/src/a.js", Line: 7, Kind: framePath}}, true},
		{"reactotron-react-js, resolved by a source map: 0-based column", `[{"functionName":"f","fileName":"webpack:///src/a.js","lineNumber":7,"columnNumber":2}]`,
			[]jsFrame{{Method: "f", File: "webpack:///src/a.js", Line: 7, Column: 3, Kind: framePath}}, true},
		{"reactotron-react-js, left as a URL: the engine's 1-based column", `[{"functionName":"f","fileName":"` + testBundle + `","lineNumber":7,"columnNumber":2}]`,
			[]jsFrame{{Method: "f", File: testBundle, Line: 7, Column: 2, Kind: frameURL}}, true},
		{"a column without a line is no location", `[{"methodName":"f","file":"a.js","column":3}]`,
			[]jsFrame{{Method: "f", File: "a.js", Kind: framePath}}, true},
		{"numbers out of range are left out", `[{"functionName":"f","url":"u","lineNumber":-1,"columnNumber":1e12}]`,
			[]jsFrame{{Method: "f", File: "u", Kind: framePath}}, true},
		{"a frame with no file", `[{"methodName":"f"}]`, []jsFrame{{Method: "f", Kind: frameNative}}, true},
		{"a number is no frame", `[1]`, nil, false},
		{"an object is no stack", `{"a":1}`, nil, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := readJSStack([]byte(tc.raw))
			if ok != tc.ok {
				t.Fatalf("ok = %v, want %v", ok, tc.ok)
			}
			if diff := cmp.Diff(tc.want, got.Frames); ok && diff != "" {
				t.Errorf("readJSStack(%s) (-want +got):\n%s", tc.raw, diff)
			}
		})
	}
}

// One frame prints one way whatever read it: the anonymous default, the
// nameless source frame, native code, bytecode and skipped frames.
func TestFrameText(t *testing.T) {
	t.Parallel()
	cdp, _ := readFrameValue([]byte(`{"functionName":"onPressCheckout","url":"` + testBundle + `","lineNumber":20,"columnNumber":21}`))
	for _, tc := range []struct {
		frame jsFrame
		want  string
	}{
		{jsFrame{Method: "f", File: testBundle, Line: 3, Column: 4, Kind: frameURL}, "at f (" + testBundle + ":3:4)"},
		{jsFrame{File: "src/a.ts", Line: 3, Column: 4, Kind: framePath}, "at src/a.ts:3:4"},
		{jsFrame{File: "src/a.ts", Kind: framePath}, "at <anonymous> (src/a.ts)"},
		{jsFrame{Method: "g", File: "/app/a.js", Line: 7, Kind: framePath}, "at g (/app/a.js:7)"},
		{jsFrame{Kind: frameNative}, "at <anonymous> (native)"},
		{jsFrame{File: "index.android.bundle", Line: 1, Column: 9, Kind: frameBytecode}, "at <anonymous> (address at index.android.bundle:1:9)"},
		{jsFrame{Kind: frameSkipped, Skipped: 4}, "... skipping 4 frames"},
		// CDP's 0-based call frame prints as V8 prints the same frame in
		// the error's text (testdata/metro/real/exception_thrown.json).
		{cdp, "at onPressCheckout (" + testBundle + ":21:22)"},
	} {
		if got := tc.frame.text(); got != tc.want {
			t.Errorf("%+v printed %q, want %q", tc.frame, got, tc.want)
		}
	}
}

// FuzzReadJSStack: whatever a console event's stack member holds, reading
// it never fails, every number read is in bounds, and a frame read from
// an object prints as a line that reads back as the same frame: one
// reading and one printing agree.
func FuzzReadJSStack(f *testing.F) {
	f.Add(`["at f (` + testBundle + `:1:2)", "g@x:3:4"]`)
	f.Add(`[{"methodName":"f","file":"` + testBundle + `","lineNumber":10,"column":4},{"functionName":"g","url":"u","lineNumber":0,"columnNumber":1e9}]`)
	f.Add(`"Error: x\n    at f (` + testBundle + `:1:2)"`)
	f.Add(`[{"lineNumber":-1,"column":"3"}, null, 1]`)
	f.Add(`[{"fileName":"App.tsx","functionName":"onPress","lineNumber":12,"columnNumber":7},{"fileName":"/Users/ana/shop/src/a.js","functionName":"g","lineNumber":4}]`)
	f.Add(`[{"functionName":"","url":"","lineNumber":3,"columnNumber":0},{"methodName":"h","file":"InternalBytecode.js","lineNumber":1,"column":0}]`)
	f.Fuzz(func(t *testing.T, raw string) {
		st, ok := readJSStack([]byte(raw))
		for _, fr := range st.Frames {
			if fr.Line < 0 || fr.Line > maxFrameNumber || fr.Column < 0 || fr.Column > maxFrameNumber {
				t.Fatalf("frame out of bounds: %+v", fr)
			}
		}
		if !ok || rawKind([]byte(raw)) != "array" {
			return
		}
		_ = eachElement([]byte(raw), func(i int, v []byte) bool {
			if rawKind(v) != "object" || i >= len(st.Frames) {
				return true
			}
			fr := st.Frames[i]
			if ambiguousFrame(fr) {
				return true
			}
			back, ok := parseFrameLine(fr.text())
			if !ok {
				t.Fatalf("frame %+v of %s printed as %q, which reads as no frame", fr, v, fr.text())
			}
			if diff := cmp.Diff(printedFrame(fr), printedFrame(back)); diff != "" {
				t.Fatalf("frame of %s printed as %q reads back differently (-read +again):\n%s", v, fr.text(), diff)
			}
			return true
		})
	})
}

// ambiguousFrame: a frame whose printed form no reader can split back
// (in any engine's form): a name or file with parentheses, a file with
// spaces or ending in `:digits`, a name padded with spaces, line breaks,
// or a file that reads as a keyword of the printed form.
func ambiguousFrame(f jsFrame) bool {
	if strings.ContainsAny(f.File+f.Method, "()\n\r") || strings.IndexFunc(f.File, unicode.IsSpace) >= 0 ||
		f.Method != strings.TrimSpace(f.Method) || strings.HasPrefix(f.File, "address at") {
		return true
	}
	if _, _, ok := cutNumber(f.File); ok {
		return true
	}
	switch f.File {
	case "native", "[native code]", "<anonymous>":
		return true
	}
	return false
}

// printedFrame is what a frame's printed form keeps: native code keeps its
// name alone, a nameless frame without a line is <anonymous>.
func printedFrame(f jsFrame) jsFrame {
	if f.Kind == frameNative {
		return jsFrame{Method: cmpOr(f.Method, anonymousMethod), Kind: frameNative}
	}
	if f.Method == "" && f.Line == 0 {
		f.Method = anonymousMethod
	}
	return f
}

func cmpOr(s, fallback string) string {
	if s == "" {
		return fallback
	}
	return s
}
