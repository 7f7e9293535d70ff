package main

import (
	"strings"
	"testing"
	"time"
)

// TestJSCrashIOS: the simulator's RCTFatalException is a JavaScript crash
// with its frames verbatim; the `Unhandled JS Exception` event before it
// is folded in. An `Unhandled JS Exception` that no crash follows is kept
// once it is due.
func TestJSCrashIOS(t *testing.T) {
	t.Parallel()
	var got []nativeEntry
	a := newSimAssembler(func(_ string, e nativeEntry) { got = append(got, e) })
	now := time.Date(2026, 11, 27, 7, 30, 0, 0, time.UTC)
	lines := strings.Split(strings.TrimSpace(readTestdata(t, "native", "release", "js-crash.ndjson")), "\n")
	for _, line := range lines {
		if l, err := parseSimLogLine([]byte(line)); err == nil {
			a.add(l, "com.example.shop", now)
		}
	}
	a.flush(now.Add(nativeIdleFlush), false)
	if len(got) != 2 || got[1].Crash != nativeCrashJS || got[1].Level != "error" {
		t.Fatalf("want the console line and one JavaScript crash, got %+v", got)
	}
	msg := got[1].Message
	if !strings.Contains(msg, "js engine: hermes, stack:\np@1:132161\np@1:132084\nanonymous@1:131119'") || !strings.Contains(msg, "RCTFatal + 612") {
		t.Errorf("the crash's text:\n%s", msg)
	}
	if h := crashHeadline(nativeCrashJS, splitLines(msg, 4)); h != jsCrashMessage {
		t.Errorf("headline %q", h)
	}

	got = nil
	b := newSimAssembler(func(_ string, e nativeEntry) { got = append(got, e) })
	l, _ := parseSimLogLine([]byte(lines[2]))
	b.add(l, "com.example.shop", now)
	if at, ok := b.nextFlush(); !ok || at != now.Add(nativeIdleFlush) || len(got) != 0 {
		t.Fatalf("the report is not held until due: %v %v %+v", at, ok, got)
	}
	b.flush(now.Add(nativeIdleFlush), false)
	if len(got) != 1 || got[0].Crash != "" || !got[0].JSConsole || !strings.HasPrefix(got[0].Message, "Unhandled JS Exception: TypeError") {
		t.Errorf("the report alone: %+v", got)
	}
}
