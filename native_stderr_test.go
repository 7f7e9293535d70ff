package main

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

// TestStderrTailKeepsLastLines: a child's stderr keeps its last lines,
// each bounded, and the reason is adb's error line, not its advice after.
func TestStderrTailKeepsLastLines(t *testing.T) {
	t.Parallel()
	tail := &stderrTail{}
	tail.Write([]byte("one\ntwo\n" + strings.Repeat("é", maxStderrLine) + "\n"))
	tail.Write([]byte(adbUnauthorizedWords[:20]))
	tail.Write([]byte(adbUnauthorizedWords[20:]))
	got := tail.kept()
	want := []string{"error: device unauthorized.", "This adb server's $ADB_VENDOR_KEYS is not set",
		"Try 'adb kill-server' if that seems wrong.", "Otherwise check for a confirmation dialog on your device."}
	if !slices.Equal(got, want) {
		t.Errorf("kept %q, want %q", got, want)
	}
	if said := (&nativeCommandError{Command: "adb", Err: errors.New("exit status 1"), Stderr: got}).Said(); said != want[0] {
		t.Errorf("the reason: %q", said)
	}
	twice := []string{"error: closed", "* daemon started successfully", "error: no devices/emulators found"}
	if said := (&nativeCommandError{Command: "adb", Err: errors.New("exit status 1"), Stderr: twice}).Said(); said != twice[0] {
		t.Errorf("of two error lines, the reason is %q, want the first", said)
	}
	long := &stderrTail{}
	long.Write([]byte(strings.Repeat("é", 10*maxStderrLine)))
	if l := long.kept(); len(l) != 1 || utf8.RuneCountInString(l[0]) > maxStderrLine+clipNote || !utf8.ValidString(l[0]) {
		t.Errorf("a long line kept as %d characters", utf8.RuneCountInString(l[0]))
	}
}

// clipNote bounds the characters clipText adds to say what it left out.
const clipNote = len("… (9999999999 more characters)")

const adbUnauthorizedWords = "error: device unauthorized.\nThis adb server's $ADB_VENDOR_KEYS is not set\n" +
	"Try 'adb kill-server' if that seems wrong.\nOtherwise check for a confirmation dialog on your device.\n"

// TestChildEnvDropsLogTags: the children's environment is the server's
// without ANDROID_LOG_TAGS, whose value is kept for the health check.
func TestChildEnvDropsLogTags(t *testing.T) {
	t.Parallel()
	env, tags := childEnv([]string{"HOME=/h", "ANDROID_LOG_TAGS=*:S", "ANDROID_LOG_TAGSX=1", "PATH=/bin"})
	if !slices.Equal(env, []string{"HOME=/h", "ANDROID_LOG_TAGSX=1", "PATH=/bin"}) || tags != "*:S" {
		t.Errorf("env %q, tags %q", env, tags)
	}
}

// TestADBServerStartNoted: adb's lines for a server it started are kept
// as the last start, the version clash first.
func TestADBServerStartNoted(t *testing.T) {
	t.Parallel()
	r := newNativeRunner(nil)
	tail := &stderrTail{seen: r.adbServerLine}
	tail.Write([]byte("adb server version (41) doesn't match this client (39); killing...\n* daemon started successfully\n"))
	if s := r.serverStart(); s.At.IsZero() || s.Said != "adb server version (41) doesn't match this client (39); killing..." {
		t.Errorf("server start: %+v", s)
	}
}

// FuzzStderrTail: whatever a child writes, in whatever pieces, at most
// maxStderrLines lines are kept, each one line of valid UTF-8 within
// the bound.
func FuzzStderrTail(f *testing.F) {
	f.Add(adbUnauthorizedWords, 7)
	f.Add("\n\n\xff\xfe\r\n"+strings.Repeat("x", 600), 1)
	f.Fuzz(func(t *testing.T, text string, cut int) {
		tail := &stderrTail{seen: newNativeRunner(nil).adbServerLine}
		cut = min(max(cut, 0), len(text))
		tail.Write([]byte(text[:cut]))
		tail.Write([]byte(text[cut:]))
		lines := tail.kept()
		if len(lines) > maxStderrLines {
			t.Fatalf("%d lines kept", len(lines))
		}
		for _, l := range lines {
			if l == "" || strings.ContainsAny(l, "\n\r") || !utf8.ValidString(l) || utf8.RuneCountInString(l) > maxStderrLine+clipNote {
				t.Fatalf("kept %q", l)
			}
		}
	})
}
