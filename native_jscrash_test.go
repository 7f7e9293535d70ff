package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// replayLogcat feeds a recorded logcat file to an assembler whose apps'
// pids are known, one millisecond apart, then flushes everything; it
// returns what the followed app (com.example.shop) got.
func replayLogcat(t *testing.T, text string, pids map[int]string) []nativeEntry {
	t.Helper()
	var got []nativeEntry
	a := newLogcatAssembler(func(pid int) string { return pids[pid] }, func(pkg string) bool { return pkg == "com.example.shop" },
		func(app string, e nativeEntry) {
			if app != "com.example.shop" {
				t.Errorf("an entry for %q: %+v", app, e)
			}
			got = append(got, e)
		})
	now := time.Date(2026, 11, 27, 7, 0, 0, 0, time.UTC)
	for line := range strings.SplitSeq(strings.TrimRight(text, "\n"), "\n") {
		now = now.Add(time.Millisecond)
		if l, err := parseLogcatLine(line); err == nil {
			a.add(l, now)
		}
	}
	a.flush(now.Add(time.Hour), true, false)
	return got
}

func readTestdata(t testing.TB, parts ...string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(append([]string{"testdata"}, parts...)...))
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

const jsCrashMessage = "TypeError: Cannot read property 'data' of undefined"

// TestJSCrashAndroid: a release build's JavaScript crash is one fatal
// entry of kind javascript, not java, with its frames verbatim one a
// line; the ReactNativeJS line before it, the same error, is folded into
// it rather than kept as a second entry.
func TestJSCrashAndroid(t *testing.T) {
	t.Parallel()
	got := replayLogcat(t, readTestdata(t, "native", "release", "js-crash.logcat"), map[int]string{5400: "com.example.shop"})
	var crashes, reports []nativeEntry
	for _, e := range got {
		if e.Crash != "" {
			crashes = append(crashes, e)
		} else if strings.Contains(e.Message, jsCrashMessage) {
			reports = append(reports, e)
		}
	}
	if len(crashes) != 1 || len(reports) != 0 {
		t.Fatalf("want one crash and no separate console report, got crashes %+v, reports %+v", crashes, reports)
	}
	c := crashes[0]
	if c.Crash != nativeCrashJS || c.Level != "error" || c.PID != 5400 || c.Tag != "AndroidRuntime" {
		t.Errorf("the crash: %+v", c)
	}
	frames := "js engine: hermes, stack:\np@1:132161\np@1:132084\nanonymous@1:131119\n\tat com.facebook.react.modules.core.ExceptionsManagerModule"
	if !strings.Contains(c.Message, frames) || strings.Contains(c.Message, jsFoldedHeader) {
		t.Errorf("the crash's text lacks its frames one a line, or repeats the report:\n%s", c.Message)
	}
	if h := crashHeadline(c.Crash, splitLines(c.Message, 4)); h != jsCrashMessage {
		t.Errorf("headline %q, want %q", h, jsCrashMessage)
	}
	if first := got[0]; !strings.HasPrefix(first.Message, "Running \"shop\"") || got[1].Crash != nativeCrashJS {
		t.Errorf("entries out of order: %+v", got)
	}

	// With no line of the app after its stack, the death that system_server
	// reports ends the crash, which goes first.
	text := strings.Replace(readTestdata(t, "native", "release", "js-crash.logcat"), "11-27 07:10:01.215  5400  5432 I Process : Sending signal. PID: 5400 SIG: 9\n", "", 1)
	got = replayLogcat(t, text, map[int]string{5400: "com.example.shop"})
	if len(got) != 3 || got[1].Crash != nativeCrashJS || got[2].End != nativeEndDied || got[2].PID != 5400 {
		t.Errorf("the crash and the death: %+v", got)
	}
}

// TestJSCrashFoldsHeldReport: the console report is folded in though a
// line of another thread of the app came between it and the crash, and
// its lines the crash lacks (the component stack) are kept at its end; a
// console error that names another error stays an entry of its own, before
// the crash.
func TestJSCrashFoldsHeldReport(t *testing.T) {
	t.Parallel()
	text := readTestdata(t, "native", "release", "js-crash.logcat")
	report := "11-27 07:10:01.200  5400  5431 E ReactNativeJS: TypeError: Cannot read property 'data' of undefined, js engine: hermes\n"
	text = strings.Replace(text, report, report+
		"11-27 07:10:01.200  5400  5431 E ReactNativeJS: \n"+
		"11-27 07:10:01.200  5400  5431 E ReactNativeJS: This error is located at:\n"+
		"11-27 07:10:01.200  5400  5431 E ReactNativeJS:     in OrderList\n"+
		"11-27 07:10:01.205  5400  5433 W unknown:ReactNative: a line of another thread\n", 1)
	got := replayLogcat(t, text, map[int]string{5400: "com.example.shop"})
	var crash *nativeEntry
	for i, e := range got {
		if e.Crash != "" {
			crash = &got[i]
		} else if strings.Contains(e.Message, jsCrashMessage) {
			t.Errorf("the console report stayed an entry: %q", e.Message)
		}
	}
	if crash == nil || !strings.HasSuffix(crash.Message, jsFoldedHeader+"\n\nThis error is located at:\n    in OrderList") {
		t.Fatalf("the crash lacks the report's further lines: %+v", crash)
	}

	other := strings.Replace(readTestdata(t, "native", "release", "js-crash.logcat"), "E ReactNativeJS: TypeError:", "E ReactNativeJS: RangeError:", 1)
	got = replayLogcat(t, other, map[int]string{5400: "com.example.shop"})
	if len(got) != 5 || !strings.HasPrefix(got[1].Message, "RangeError:") || got[1].Crash != "" || got[2].Crash != nativeCrashJS {
		t.Errorf("another error's report: %+v", got)
	}
}

// FuzzThrownJSMessage: what is read as the thrown message is in the line,
// without the stack; a JavascriptException line written as React Native
// does reads back its message.
func FuzzThrownJSMessage(f *testing.F) {
	for _, text := range []string{readTestdata(f, "native", "release", "js-crash.logcat"), readTestdata(f, "native", "release", "js-crash.ndjson")} {
		for line := range strings.SplitSeq(text, "\n") {
			f.Add(line, "TypeError: x")
		}
	}
	f.Fuzz(func(t *testing.T, line, message string) {
		got := thrownJSMessage(line)
		if !strings.Contains(line, got) || strings.Contains(got, ", stack:") {
			t.Fatalf("%q read as %q", line, got)
		}
		isJSException(line)
		isRCTFatal(line)
		message = strings.TrimSpace(oneLine(message))
		if message == "" || strings.Contains(message, ", js engine: ") || strings.Contains(message, ", stack:") || strings.Contains(message, "reason: '") ||
			strings.HasPrefix(message, "Unhandled JS Exception: ") {
			return
		}
		thrown := "com.facebook.react.common.JavascriptException: " + message + ", js engine: hermes, stack:"
		if !isJSException(thrown) || thrownJSMessage(thrown) != message || !sameJSError(message, thrown) {
			t.Fatalf("%q read as %q", thrown, thrownJSMessage(thrown))
		}
	})
}
