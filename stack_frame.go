package main

// stack_frame.go is one frame of a JavaScript stack: the one type every
// link reads frames into, the one place a frame object (CDP's, React
// Native's, Metro's, Reactotron's) is read, and the one printing of a
// frame, `at fn (file:line:col)`. Text stacks are read in stack_parse.go.
//
// Where each source counts lines and columns from, and so what reading
// adds to reach a jsFrame's 1-based line and column:
//
//	source                                    line  column  read as
//	Hermes text `at f (url:L:C)`              1     1       printed
//	JavaScriptCore text `f@url:L:C`           1     1       printed
//	V8 text `at f (url:L:C)`                  1     1       printed
//	CDP Runtime.CallFrame                     0     0       +1, +1
//	  {functionName, url, lineNumber, columnNumber}
//	React Native's StackFrame, Metro's        1     0       as sent, +1
//	  /symbolicate frames (asked and answered)
//	  {methodName, file, lineNumber, column}
//	Reactotron {functionName, fileName,       1     see below
//	  lineNumber, columnNumber?}
//
// Hermes names its numbers line1Based and column1Based, and React Native's
// parseErrorStack turns them, and stacktrace-parser's JavaScriptCore
// columns, into a StackFrame by subtracting 1 from the column only
// (react-native: Libraries/Core/Devtools/parseErrorStack.js,
// parseHermesStack.js). CDP defines call frames as 0-based; V8 prints the
// same frame of testdata/metro/real/exception_thrown.json at 21:22 in the
// error's text and at 20/21 in the CDP frame. Metro's symbolicate looks a
// frame up by line1Based and column0Based and answers the source map's
// line1Based and column0Based (metro: packages/metro/src/Server/
// symbolicate.js). Reactotron's React Native client (trackGlobalErrors)
// maps the stack in the app through Metro and sends fileName, functionName
// and lineNumber, no column; its web client sends stacktrace-js frames,
// whose columnNumber is the engine's 1-based column for a frame left as a
// URL (error-stack-parser) and the source map's 0-based column for a frame
// stacktrace-gps resolved to a source file.

import (
	"cmp"
	"strconv"
	"strings"
)

type frameKind uint8

const (
	frameURL      frameKind = iota // an http(s) URL: a bundle the dev server served
	framePath                      // a file path, or any other location: already source, or nothing to map
	frameBytecode                  // Hermes `address at file:1:offset`: a release build's bytecode
	frameNative                    // native code, or no location at all
	frameInternal                  // Hermes's InternalBytecode.js
	frameSkipped                   // Hermes's `... skipping N frames`
	// frameBundle is a release bundle's position that names no file:
	// React Native's `name@line:column` in a JavascriptException or an
	// RCTFatalException's reason, whose column counts from 0 (Hermes: line
	// 1, the column a bytecode offset). Column holds it plus 1, as for
	// every frame; text prints it back as it came.
	frameBundle
)

// jsFrame is one frame of a stack. Line and Column are 1-based, as the
// engines print them and editors count them; 0 when absent.
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
	// Bundle is the release bundle (androidBundle, iosBundle) its
	// frameBundle frames, which name no file, lie in; "" unknown.
	Bundle string
}

// anonymousMethod names a frame's function when the source names none.
const anonymousMethod = "<anonymous>"

// text prints one frame in Hermes's form (V8's for a nameless source
// frame), which parseFrameLine reads back.
func (f jsFrame) text() string {
	loc := f.File
	if f.Line > 0 {
		loc += ":" + strconv.Itoa(f.Line)
		if _, _, numbered := cutNumber(f.File); f.Column > 0 || numbered {
			// a file that itself ends in :digits keeps its column, even 0,
			// or the file's number would read back as the line
			loc += ":" + strconv.Itoa(f.Column)
		}
	}
	method := cmp.Or(f.Method, anonymousMethod)
	switch f.Kind {
	case frameSkipped:
		return "... skipping " + strconv.Itoa(f.Skipped) + " frames"
	case frameNative:
		return "at " + method + " (native)"
	case frameBytecode:
		loc = "address at " + loc
	case frameBundle:
		return f.Method + "@" + strconv.Itoa(f.Line) + ":" + strconv.Itoa(max(f.Column-1, 0))
	}
	if f.Method == "" && f.Line > 0 && f.Kind != frameBytecode {
		return "at " + loc // V8's form for a nameless frame
	}
	return "at " + method + " (" + loc + ")"
}

// framesText prints frames one a line, as the engines print them; ""
// when there are none.
func framesText(frames []jsFrame) string {
	lines := make([]string, len(frames))
	for i, f := range frames {
		lines[i] = f.text()
	}
	return strings.Join(lines, "\n")
}

// located gives a frame read from an object the kind its file says.
func located(method, file string, line, column int) jsFrame {
	f := jsFrame{Method: method, File: file, Line: line, Column: column, Kind: classifyFile(file)}
	if file == "" || file == "native" || file == "[native code]" {
		f.Kind = frameNative
	}
	return f
}

// readJSStack reads the stack of a console event: text, or an array whose
// elements are frame lines or frame objects (readFrameValue). ok is false
// for anything else.
func readJSStack(raw []byte) (jsStack, bool) {
	if s, ok := wireString(raw); ok {
		return parseJSStack(s), true
	}
	if rawKind(raw) != "array" {
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

// readFrameValue reads one element of a stack array: a frame line, or a
// frame object in any of the shapes of the table above, told apart by
// their member names.
func readFrameValue(v []byte) (jsFrame, bool) {
	if s, ok := wireString(v); ok {
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
	number := func(name string) (int64, bool) {
		i, ok := wireInt(rawMember(v, name))
		return i, ok && i >= 0 && i < maxFrameNumber
	}
	method := text("methodName", "functionName")
	line, hasLine := number("lineNumber")
	if !hasLine {
		line = 0
	}
	if url := text("url"); url != "" || rawMember(v, "url") != nil {
		if col, ok := number("columnNumber"); ok && hasLine {
			return located(method, url, int(line)+1, int(col)+1), true // CDP counts both from 0
		}
	}
	f := located(method, text("file", "fileName", "url"), int(line), 0)
	if col, ok := number("column"); ok {
		f.Column = int(col) + 1 // React Native's and Metro's 0-based column
	} else if col, ok := number("columnNumber"); ok {
		// Reactotron's web client (the file header says which base).
		f.Column = int(col)
		if f.Kind != frameURL {
			f.Column++
		}
	}
	if f.Line == 0 {
		f.Column = 0
	}
	return f, true
}
