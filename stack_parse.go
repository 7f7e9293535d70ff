package main

// metro_stack.go reads a JavaScript stack as the engines print it (Hermes,
// JavaScriptCore, V8) or as apps send it (an array of frames), and sorts
// its frames by what Metro's /symbolicate can do with them: only a frame
// whose file is a bundle URL is worth sending (metro_symbolicate.go).

import (
	"encoding/json"
	"strconv"
	"strings"
	"unicode"
)

// frameKind says what a frame's location is.
type frameKind uint8

const (
	frameURL      frameKind = iota // an http(s) URL: a bundle Metro served
	framePath                      // a file path, or any other location: already source, or nothing to map
	frameBytecode                  // Hermes `address at file:1:offset`: a release build's bytecode
	frameNative                    // native code, or no location at all
	frameInternal                  // Hermes's InternalBytecode.js
	frameSkipped                   // Hermes's `... skipping N frames`
)

// jsFrame is one frame of a stack. Line and Column are as the engine
// printed them, 1-based; 0 when absent.
type jsFrame struct {
	Method  string
	File    string
	Line    int
	Column  int
	Kind    frameKind
	Skipped int // frames Hermes left out, for frameSkipped
}

// jsStack is a stack split where React Native splits it: the frames are
// the frame lines after the last line that is not a frame; everything up
// to that line is the message.
type jsStack struct {
	Message []string
	Frames  []jsFrame
}

// maxFrameNumber bounds a line, column or count: longer digit runs are not
// locations but text.
const maxFrameNumber = 1 << 30

// parseJSStack splits a stack printed as text.
func parseJSStack(text string) jsStack {
	var st jsStack
	lines := strings.Split(text, "\n")
	last := -1 // the last line that is not a frame
	frames := make([]jsFrame, len(lines))
	isFrame := make([]bool, len(lines))
	for i, line := range lines {
		line = strings.TrimRight(line, "\r")
		lines[i] = line
		if strings.TrimSpace(line) == "" {
			continue
		}
		if f, ok := parseFrameLine(line); ok {
			frames[i], isFrame[i] = f, true
			continue
		}
		last = i
	}
	for i := range lines {
		switch {
		case i <= last:
			st.Message = append(st.Message, lines[i])
		case isFrame[i]:
			st.Frames = append(st.Frames, frames[i])
		}
	}
	return st
}

// parseFrameLine reads one frame line in any engine's form.
func parseFrameLine(line string) (jsFrame, bool) {
	s := strings.TrimSpace(line)
	if rest, ok := strings.CutPrefix(s, "... skipping "); ok {
		n, ok := strings.CutSuffix(rest, " frames")
		if !ok {
			n, ok = strings.CutSuffix(rest, " frame")
		}
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

// text prints one frame in Hermes's form.
func (f jsFrame) text() string {
	loc := f.File
	if f.Line > 0 {
		loc += ":" + strconv.Itoa(f.Line)
		if f.Column > 0 {
			loc += ":" + strconv.Itoa(f.Column)
		}
	}
	switch f.Kind {
	case frameSkipped:
		return "... skipping " + strconv.Itoa(f.Skipped) + " frames"
	case frameNative:
		if f.Method == "" {
			return "at <anonymous> (native)"
		}
		return "at " + f.Method + " (native)"
	case frameBytecode:
		loc = "address at " + loc
	}
	if f.Method == "" && f.Line > 0 && f.Kind != frameBytecode {
		return "at " + loc // V8's form for a nameless frame
	}
	method := f.Method
	if method == "" {
		method = "<anonymous>"
	}
	return "at " + method + " (" + loc + ")"
}

// readJSStack reads the stack of a console event: text, or an array whose
// elements are frame lines or frame objects (CDP's functionName/url/
// lineNumber/columnNumber, React Native's methodName/file/lineNumber/column,
// Reactotron's functionName/fileName/lineNumber). ok is false for anything
// else.
func readJSStack(raw []byte) (jsStack, bool) {
	switch rawKind(raw) {
	case "string":
		var s string
		if json.Unmarshal(raw, &s) != nil {
			return jsStack{}, false
		}
		return parseJSStack(s), true
	case "array":
	default:
		return jsStack{}, false
	}
	var st jsStack
	ok := true
	_ = eachElement(raw, func(_ int, v []byte) bool {
		f, good := readFrameValue(v)
		if !good {
			ok = false
			return false
		}
		st.Frames = append(st.Frames, f)
		return true
	})
	return st, ok
}

// readFrameValue reads one element of a stack array.
func readFrameValue(v []byte) (jsFrame, bool) {
	if rawKind(v) == "string" {
		var s string
		if json.Unmarshal(v, &s) != nil {
			return jsFrame{}, false
		}
		return parseFrameLine(s)
	}
	if rawKind(v) != "object" {
		return jsFrame{}, false
	}
	text := func(names ...string) string {
		for _, n := range names {
			if s, ok := wireString(rawMember(v, n)); ok {
				return s
			}
		}
		return ""
	}
	number := func(names ...string) (int, bool) {
		for _, n := range names {
			if i, ok := wireInt(rawMember(v, n)); ok && i >= 0 && i <= maxFrameNumber {
				return int(i), true
			}
		}
		return 0, false
	}
	f := jsFrame{Method: text("methodName", "functionName"), File: text("file", "fileName", "url")}
	f.Line, _ = number("lineNumber")
	// Metro's own frames, and React Native's once parsed, count columns
	// from 0; CDP's call frames count lines and columns from 0.
	if col, ok := number("column", "columnNumber"); ok {
		f.Column = col + 1
	}
	if rawMember(v, "url") != nil && rawMember(v, "columnNumber") != nil {
		f.Line++
	}
	f.Kind = classifyFile(f.File)
	if f.File == "" || f.File == "native" || f.File == "[native code]" {
		f.Kind = frameNative
	}
	return f, true
}
