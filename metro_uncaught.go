package main

// metro_uncaught.go tells, on a dev build, React Native's own report of an
// uncaught error from the app's console.error. ExceptionsManager's
// reportException logs only the error's message (`Name: message`) with
// console.error, so the stack that the debugger sends with it is React
// Native's handler's (reportException, handleException, and
// reportFatalError when the error was fatal), never the throw site: the
// Error and its stack go to the app's LogBox only. Such a report says so
// in its message, and its handler frames are left out rather than leave
// the reader reading framework frames. (When the Error itself is an
// argument, as older versions log it, its own stack is the throw site's,
// and the call is left as it is.)

import (
	"slices"
	"strings"
)

// rnHandlerFrames are where React Native's handler reports an error from.
var rnHandlerFrames = []string{"reportException", "handleException"}

// maxHandlerDepth is how near the top of the stack the handler's frame is:
// console.error is called from reportException itself (below the
// console wrapper LogBox installs, when the stack shows it).
const maxHandlerDepth = 2

// rnUncaughtNote is the note a console.error's message gets when its
// frames are React Native's handler reporting an uncaught error by its
// message alone; "" for any other call (the file header says why an Error
// argument is one).
func rnUncaughtNote(args []cdpRemoteObject, frames []jsFrame) string {
	if slices.ContainsFunc(args, func(a cdpRemoteObject) bool { return a.Subtype == "error" }) {
		return ""
	}
	handler, uncaught := false, "uncaught"
	for i, f := range frames {
		name := f.Method[strings.LastIndexByte(f.Method, '.')+1:]
		if i < maxHandlerDepth && slices.Contains(rnHandlerFrames, name) {
			handler = true
		}
		if name == "reportFatalError" {
			uncaught = "uncaught, fatal"
		}
	}
	if !handler {
		return ""
	}
	return "(" + uncaught + ": React Native's error handler reported this error; the throw site and its stack are shown in the app's LogBox, not here)"
}
