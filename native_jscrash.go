package main

// native_jscrash.go tells a JavaScript crash from a Java or Objective-C
// one. React Native ends the app on an uncaught JavaScript error (a
// release build has no LogBox to show it) in two steps:
//
//   - it logs the error on the JavaScript console: Android `E ReactNativeJS:
//     TypeError: …`, iOS an os_log event `Unhandled JS Exception: …`
//     (subsystem com.facebook.react.log);
//   - then throws it natively: Android `com.facebook.react.common.JavascriptException:
//     TypeError: …, js engine: hermes, stack:` under AndroidRuntime's
//     `FATAL EXCEPTION`, one `name@line:column` frame a line after it; iOS
//     `*** Terminating app due to uncaught exception 'RCTFatalException:
//     Unhandled JS Exception: …', reason: '…, stack:` and the frames.
//
// The crash entry is marked nativeCrashJS, and the console line before it
// (same process, same message) is folded into it, not kept as a second
// entry (foldIn). The frames stay in the entry's text verbatim, one a line,
// for whoever maps them.

import (
	"slices"
	"strings"
)

const jsFoldedHeader = "React Native's console report of this error:"

// isJSException reports whether an exception line (`class: message`) is
// React Native's JavascriptException.
func isJSException(line string) bool {
	class, _, ok := strings.Cut(line, ": ")
	return ok && (class == "JavascriptException" || strings.HasSuffix(class, ".JavascriptException"))
}

// isRCTFatal reports whether an uncaught Objective-C exception is React
// Native's for an uncaught JavaScript error.
func isRCTFatal(msg string) bool {
	first, _, _ := strings.Cut(msg, "\n")
	return strings.Contains(first, "uncaught exception 'RCTFatalException") || strings.Contains(first, "Unhandled JS Exception: ")
}

// thrownJSMessage is the JavaScript error's message in a crash's line or a
// console report: the class, `Unhandled JS Exception: `, the engine and
// the stack that follow it left out.
func thrownJSMessage(line string) string {
	if _, after, ok := strings.Cut(line, "reason: '"); ok {
		line = after // iOS: the reason, which holds the message whole (up to a bound)
	}
	if isJSException(line) {
		_, line, _ = strings.Cut(line, ": ")
	}
	line = strings.TrimPrefix(line, "Unhandled JS Exception: ")
	line, _, _ = strings.Cut(line, ", js engine: ")
	line, _, _ = strings.Cut(line, ", stack:")
	return strings.TrimSpace(line)
}

// sameJSError reports whether a console report's first line and a crash's
// line name the same error; either may be cut short (iOS cuts the
// message at 175 characters).
func sameJSError(report, crash string) bool {
	r, c := thrownJSMessage(report), thrownJSMessage(crash)
	return r != "" && c != "" && (strings.HasPrefix(r, c) || strings.HasPrefix(c, r))
}

// foldIn folds report into crash when it is the console report of line (the
// crash's exception): report's first line is the crash's own message; the
// others go at its end under jsFoldedHeader (finish). It reports whether it did.
func (crash *entryGroup) foldIn(report *entryGroup, line string) bool {
	if report == nil || !report.entry.JSConsole || report.entry.Level != "error" || report.entry.PID != crash.entry.PID ||
		len(report.lines) == 0 || !sameJSError(report.lines[0], line) {
		return false
	}
	crash.folded = append(crash.folded, report.lines[1:]...)
	return true
}

// foldJSReport folds into crash the open message or the held console
// error, when it reports the error that line (its JavascriptException) throws.
func (a *logcatAssembler) foldJSReport(crash *entryGroup, line string) {
	switch {
	case crash.foldIn(a.message, line):
		a.message = nil
	case crash.foldIn(a.jsError, line):
		a.jsError = nil
	}
}

// dropKnown is folded without the lines that lines has: a console report
// carries the same frames as the crash.
func dropKnown(folded, lines []string) []string {
	have := make(map[string]bool, len(lines))
	for _, l := range lines {
		have[l] = true
	}
	return slices.DeleteFunc(slices.Clone(folded), func(l string) bool { return have[l] })
}

// crashHeadline picks the line that says what the crash was: the
// exception after FATAL EXCEPTION and Process, a JavaScript crash's thrown
// message, the signal line, the uncaught exception's reason.
func crashHeadline(kind string, lines []string) string {
	for _, l := range lines {
		switch {
		case kind == nativeCrashJS && (isJSException(l) || strings.Contains(l, "Unhandled JS Exception: ")):
			return thrownJSMessage(l)
		case kind == nativeCrashJava && !strings.HasPrefix(l, "FATAL EXCEPTION") && !strings.HasPrefix(l, "Process: "):
			return strings.TrimSpace(l)
		}
	}
	return strings.TrimSpace(lines[0])
}
