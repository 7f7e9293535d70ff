package main

// stack_parse.go reads a JavaScript stack printed as text, as the engines
// print it (Hermes, JavaScriptCore, V8), whichever kind of app sent it, and
// finds the stacks inside a text (an Error logged with its stack). Frames
// are sorted by what the dev server's /symbolicate can do with them
// (symbolicate_client.go).
// stack_frame.go holds the frame itself, its printing and frame objects.

import (
	"strconv"
	"strings"
	"unicode"
)

// maxFrameNumber bounds a line, column or count: longer digit runs are not
// locations but text.
const maxFrameNumber = 1 << 30

func parseJSStack(text string) jsStack {
	var st jsStack
	lines := strings.Split(text, "\n")
	for i, line := range lines {
		line = strings.TrimRight(line, "\r")
		lines[i] = line
		if strings.TrimSpace(line) == "" {
			continue
		}
		if f, ok := parseFrameLine(line); ok {
			st.Frames = append(st.Frames, f)
			continue
		}
		st.Message, st.Frames = lines[:i+1:i+1], nil
	}
	return st
}

// parseFrameLine reads one frame line in any engine's form.
func parseFrameLine(line string) (jsFrame, bool) {
	s := strings.TrimSpace(line)
	if rest, ok := strings.CutPrefix(s, "... skipping "); ok {
		n, ok := strings.CutSuffix(strings.TrimSuffix(rest, "s"), " frame") // "frames", or "frame" for one
		if count, err := frameNumber(n); ok && err == nil {
			return jsFrame{Kind: frameSkipped, Skipped: count}, true
		}
		return jsFrame{}, false
	}
	if rest, ok := strings.CutPrefix(s, "at "); ok {
		// Hermes and V8: `at name (location)`, or `at location`.
		rest = strings.TrimSpace(rest)
		if strings.HasSuffix(rest, ")") {
			if open := strings.LastIndex(rest, " ("); open >= 0 {
				return locatedFrame(strings.TrimSpace(rest[:open]), rest[open+2:len(rest)-1], true)
			}
		}
		if f, ok := locatedFrame("", rest, false); ok {
			return f, true
		}
		return jsFrame{Method: rest, Kind: frameNative}, rest != ""
	}
	if s == "[native code]" {
		return jsFrame{Kind: frameNative}, true
	}
	// JavaScriptCore: `name@location`, `@location`, or a bare location.
	if at := strings.IndexByte(s, '@'); at >= 0 {
		name := strings.TrimSpace(s[:at])
		if strings.ContainsFunc(name, unicode.IsSpace) && !strings.HasSuffix(name, " code") { // global code, module code, eval code
			return jsFrame{}, false
		}
		if f, ok := bundleFrame(name, s[at+1:]); ok {
			return f, true
		}
		return locatedFrame(name, s[at+1:], false)
	}
	if strings.Contains(s, "://") && !strings.ContainsFunc(s, unicode.IsSpace) {
		return locatedFrame("", s, false)
	}
	return jsFrame{}, false
}

// locatedFrame reads a frame's location; anyText accepts a location with
// no line (Hermes's `native`, or a file alone), which only the
// parenthesised form can tell from text.
func locatedFrame(method, loc string, anyText bool) (jsFrame, bool) {
	f := jsFrame{Method: method}
	switch loc {
	case "native", "[native code]", "<anonymous>":
		f.Kind = frameNative
		return f, true
	}
	if file, ok := strings.CutPrefix(loc, "address at "); ok {
		f.Kind = frameBytecode
		f.File, f.Line, f.Column = splitLocation(file)
		return f, f.Line > 0 || anyText
	}
	f.File, f.Line, f.Column = splitLocation(loc)
	if f.Line == 0 && !anyText {
		return jsFrame{}, false
	}
	f.Kind = classifyFile(f.File)
	return f, true
}

// splitLocation takes the last two `:digits` of a location as its line and
// column (URLs have ports), or the last one as its line.
func splitLocation(loc string) (file string, line, column int) {
	head, last, ok := cutNumber(loc)
	if !ok {
		return loc, 0, 0
	}
	if file, n, ok := cutNumber(head); ok {
		if n == 0 {
			return loc, 0, 0 // lines count from 1: not a location
		}
		return file, n, last
	}
	if last == 0 {
		return loc, 0, 0
	}
	return head, last, 0
}

// cutNumber splits `text:digits` into text and the number.
func cutNumber(s string) (string, int, bool) {
	colon := strings.LastIndexByte(s, ':')
	if colon < 0 {
		return s, 0, false
	}
	n, err := frameNumber(s[colon+1:])
	if err != nil {
		return s, 0, false
	}
	return s[:colon], n, true
}

// frameNumber reads plain decimal digits, up to maxFrameNumber.
func frameNumber(s string) (int, error) {
	if s == "" || len(s) > 10 || strings.TrimLeft(s, "0123456789") != "" {
		return 0, strconv.ErrSyntax
	}
	n, err := strconv.Atoi(s)
	if err != nil || n > maxFrameNumber {
		return 0, strconv.ErrRange
	}
	return n, nil
}

// classifyFile sorts a frame's file: a bundle URL, Hermes's internal
// bytecode, or a path that is already source (or nothing Metro knows).
func classifyFile(file string) frameKind {
	lower := strings.ToLower(file)
	switch {
	case strings.HasPrefix(lower, "http://") || strings.HasPrefix(lower, "https://"):
		return frameURL
	case file == "InternalBytecode.js" || strings.HasSuffix(file, "/InternalBytecode.js"):
		return frameInternal
	}
	return framePath
}

// textStack is a stack found inside a text: its frame lines are the
// text's lines first to end-1.
type textStack struct {
	first, end int
	frames     []jsFrame
}

// findStacks splits text into lines and finds the stacks in it: each run
// of frame lines is one (an Error logged with its stack, several Errors,
// a stack pasted into a message), and a line that is not a frame, a blank
// one included, ends it. Joining lines with "\n" gives text again.
func findStacks(text string) (lines []string, stacks []textStack) {
	lines = strings.Split(text, "\n")
	var run *textStack
	for i, line := range lines {
		f, ok := parseFrameLine(strings.TrimRight(line, "\r"))
		switch {
		case ok && run == nil:
			stacks = append(stacks, textStack{first: i, end: i + 1, frames: []jsFrame{f}})
			run = &stacks[len(stacks)-1]
		case ok:
			run.end, run.frames = i+1, append(run.frames, f)
		default:
			run = nil
		}
	}
	return lines, stacks
}

// bundleFrame reads a frameBundle location. The last frame of an
// RCTFatalException's reason ends with the reason's closing quote.
func bundleFrame(name, loc string) (jsFrame, bool) {
	loc = strings.TrimSuffix(loc, "'")
	l, c, ok := strings.Cut(loc, ":")
	if !ok {
		return jsFrame{}, false
	}
	line, err1 := frameNumber(l)
	col, err2 := frameNumber(c)
	if err1 != nil || err2 != nil || line == 0 || col >= maxFrameNumber {
		return jsFrame{}, false
	}
	return jsFrame{Method: name, Line: line, Column: col + 1, Kind: frameBundle}, true
}

// The release bundles React Native embeds in an app, by platform.
const (
	androidBundle = "index.android.bundle"
	iosBundle     = "main.jsbundle"
)

// releaseBundleIn names the release bundle a text's frameBundle frames
// belong to, from the exception that carries them: Android's
// JavascriptException, iOS's RCTFatalException (`Unhandled JS
// Exception`); "" when the text says neither.
func releaseBundleIn(text string) string {
	switch {
	case strings.Contains(text, "JavascriptException"):
		return androidBundle
	case strings.Contains(text, "RCTFatalException") || strings.Contains(text, "Unhandled JS Exception"):
		return iosBundle
	}
	return ""
}

// releasePosition is where a release build's frame lies in its bundle:
// the bundle's name, the 1-based line and the 0-based column a source map
// is looked up by; ok is false for a frame of no release bundle. bundle
// names the one frameBundle frames belong to (releaseBundleIn).
func releasePosition(f jsFrame, bundle string) (name string, line1, column0 int, ok bool) {
	if f.Line < 1 || f.Column < 1 && f.Kind != frameBytecode {
		return "", 0, 0, false
	}
	switch f.Kind {
	case frameBundle:
		return bundle, f.Line, f.Column - 1, bundle != ""
	case frameBytecode: // the offset as Hermes prints it
		name = releaseBundleName(f.File)
		return name, f.Line, f.Column, name != ""
	case framePath: // a JavaScript release bundle's engine-printed column
		name = releaseBundleName(f.File)
		return name, f.Line, f.Column - 1, name != ""
	}
	return "", 0, 0, false
}

// releaseBundleName is androidBundle or iosBundle when file is one, by its
// last path element; "" otherwise.
func releaseBundleName(file string) string {
	base := file[strings.LastIndexAny(file, "/\\")+1:]
	switch base {
	case androidBundle, iosBundle:
		return base
	}
	return ""
}
