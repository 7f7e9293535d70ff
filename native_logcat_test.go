package main

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
)

// Real threadtime lines, as an emulator prints them.
var logcatSeeds = []string{
	"11-27 05:30:01.123  4242  4242 E AndroidRuntime: FATAL EXCEPTION: main",
	"11-27 05:30:01.123  4242  4242 E AndroidRuntime: \tat com.example.shop.CartModule.checkout(CartModule.kt:88)",
	"11-27 05:30:05.000  4300  4321 F libc    : Fatal signal 11 (SIGSEGV), code 1 (SEGV_MAPERR), fault addr 0x0 in tid 4321 (mqt_js), pid 4300 (com.example.shop)",
	"11-27 05:30:05.100  5555  5555 F DEBUG   : pid: 4300, tid: 4321, name: mqt_js  >>> com.example.shop <<<",
	"11-27 05:30:00.200  4242  4290 I ReactNativeJS: Running \"shop\" with {\"rootTag\":1}",
	"01-02 00:00:00.000     1     1 V init    :",
	"12-31 23:59:59.999 123456 123457 W ActivityManager: Start proc 4300:com.example.shop/u0a123 for activity",
	"--------- beginning of crash",
	"\x00\xff\xfe garbage",
}

func TestParseLogcatLine(t *testing.T) {
	t.Parallel()
	tests := []struct {
		line string
		want logcatLine
	}{
		{logcatSeeds[0], logcatLine{Stamp: "11-27 05:30:01.123", PID: 4242, TID: 4242, Level: 'E', Tag: "AndroidRuntime", Message: "FATAL EXCEPTION: main"}},
		{logcatSeeds[1], logcatLine{Stamp: "11-27 05:30:01.123", PID: 4242, TID: 4242, Level: 'E', Tag: "AndroidRuntime", Message: "\tat com.example.shop.CartModule.checkout(CartModule.kt:88)"}},
		{logcatSeeds[2], logcatLine{Stamp: "11-27 05:30:05.000", PID: 4300, TID: 4321, Level: 'F', Tag: "libc", Message: "Fatal signal 11 (SIGSEGV), code 1 (SEGV_MAPERR), fault addr 0x0 in tid 4321 (mqt_js), pid 4300 (com.example.shop)"}},
		{logcatSeeds[5], logcatLine{Stamp: "01-02 00:00:00.000", PID: 1, TID: 1, Level: 'V', Tag: "init"}},
		{logcatSeeds[6], logcatLine{Stamp: "12-31 23:59:59.999", PID: 123456, TID: 123457, Level: 'W', Tag: "ActivityManager", Message: "Start proc 4300:com.example.shop/u0a123 for activity"}},
		{"11-27 05:30:01.123  4242  4242 I Shop    : bad \x01 byte \xff\r", logcatLine{Stamp: "11-27 05:30:01.123", PID: 4242, TID: 4242, Level: 'I', Tag: "Shop", Message: "bad \uFFFD byte \uFFFD"}},
	}
	for _, tt := range tests {
		got, err := parseLogcatLine(tt.line)
		if err != nil {
			t.Errorf("%q: %v", tt.line, err)
			continue
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("%q (-want +got):\n%s", tt.line, diff)
		}
	}
	for _, bad := range []string{logcatSeeds[7], logcatSeeds[8], "", "11-27 05:30:01.123 x", "11-27 05:30:01.123  42  42 Q tag: m",
		"11-27 05:30:01.123  42  42 E tag without colon"} {
		if _, err := parseLogcatLine(bad); !errors.Is(err, errLogcatLine) {
			t.Errorf("%q: %v, want errLogcatLine", bad, err)
		}
	}
}

// FuzzParseLogcatLine: whatever the line, a parsed line has a valid level
// and clean text, and printing it as threadtime does reads back the same.
func FuzzParseLogcatLine(f *testing.F) {
	for _, s := range logcatSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		l, err := parseLogcatLine(line)
		if err != nil {
			if !errors.Is(err, errLogcatLine) {
				t.Fatalf("%q: error %v is not errLogcatLine", line, err)
			}
			return
		}
		if !strings.ContainsRune("VDIWEF", rune(l.Level)) || l.PID < 0 || l.TID < 0 {
			t.Fatalf("%q: bad fields %+v", line, l)
		}
		if !utf8.ValidString(l.Tag) || !utf8.ValidString(l.Message) || cleanLogText(l.Message) != l.Message {
			t.Fatalf("%q: text not clean: %+v", line, l)
		}
		back, err := parseLogcatLine(l.String())
		if err != nil {
			t.Fatalf("%q printed as %q does not parse: %v", line, l.String(), err)
		}
		if diff := cmp.Diff(l, back); diff != "" {
			t.Fatalf("%q: round trip differs (-first +again):\n%s", line, diff)
		}
	})
}

func TestLogcatTime(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 27, 5, 31, 0, 0, time.UTC)
	if got := logcatTime("11-27 05:30:01.123", now); !got.Equal(time.Date(2026, 11, 27, 5, 30, 1, 123e6, time.UTC)) {
		t.Errorf("this year's stamp: %v", got)
	}
	newYear := time.Date(2027, 1, 1, 0, 0, 1, 0, time.UTC)
	if got := logcatTime("12-31 23:59:59.000", newYear); got.Year() != 2026 {
		t.Errorf("a stamp of last December read on New Year's Day: %v", got)
	}
}

// String prints l as threadtime does; parseLogcatLine reads it back.
func (l logcatLine) String() string {
	return fmt.Sprintf("%s %5d %5d %c %-8s: %s", l.Stamp, l.PID, l.TID, l.Level, l.Tag, l.Message)
}
