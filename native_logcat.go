package main

// native_logcat.go reads `adb logcat -v threadtime` lines:
//
//	MM-DD HH:MM:SS.mmm  PID  TID L TAG     : message
//
// PID and TID right-aligned in 5, the level one of V D I W E F, the tag
// padded to 8 before ": ". A message with newlines comes as several lines
// with the same prefix (native_crash.go puts them back together). Lines
// that are not entries (`--------- beginning of crash`, a device's binary
// garbage) are reported as such and skipped by the caller.

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// logcatLine is one parsed threadtime line.
type logcatLine struct {
	Stamp    string // "MM-DD HH:MM:SS.mmm", as printed
	PID, TID int
	Level    byte // one of VDIWEF
	Tag      string
	Message  string // valid UTF-8, control characters other than tab replaced
}

var errLogcatLine = errors.New("not a logcat threadtime line")

const logcatStampLen = len("MM-DD HH:MM:SS.mmm")

// parseLogcatLine reads one line (without its newline).
func parseLogcatLine(line string) (logcatLine, error) {
	var l logcatLine
	line = strings.TrimRight(line, "\r")
	if len(line) < logcatStampLen+1 || !validLogcatStamp(line[:logcatStampLen]) {
		return l, fmt.Errorf("%w: no MM-DD HH:MM:SS.mmm time first", errLogcatLine)
	}
	l.Stamp = line[:logcatStampLen]
	rest := line[logcatStampLen:]
	var ok bool
	if l.PID, rest, ok = logcatNumber(rest); !ok {
		return l, fmt.Errorf("%w: no pid after the time", errLogcatLine)
	}
	if l.TID, rest, ok = logcatNumber(rest); !ok {
		return l, fmt.Errorf("%w: no tid after the pid", errLogcatLine)
	}
	if len(rest) < 3 || rest[0] != ' ' || !strings.ContainsRune("VDIWEF", rune(rest[1])) || rest[2] != ' ' {
		return l, fmt.Errorf("%w: no level (V D I W E F) after the tid", errLogcatLine)
	}
	l.Level = rest[1]
	rest = rest[3:]
	tag, msg, found := strings.Cut(rest, ": ")
	if !found {
		// An empty message leaves the line ending in ":".
		if tag, found = strings.CutSuffix(rest, ":"); !found {
			return l, fmt.Errorf("%w: no \": \" after the tag", errLogcatLine)
		}
	}
	l.Tag = cleanLogText(strings.TrimRight(tag, " "))
	if strings.HasSuffix(l.Tag, ":") {
		// "tag:: m" could be read two ways, and would print as a third.
		return l, fmt.Errorf("%w: the tag ends with a colon", errLogcatLine)
	}
	l.Message = cleanLogText(msg)
	return l, nil
}

// logcatNumber reads spaces then a decimal number (a pid or tid).
func logcatNumber(s string) (int, string, bool) {
	t := strings.TrimLeft(s, " ")
	end := 0
	for end < min(len(t), 10) && t[end] >= '0' && t[end] <= '9' {
		end++
	}
	n, err := strconv.Atoi(t[:end])
	if len(t) == len(s) || err != nil { // no space before the number, or no digits
		return 0, s, false
	}
	return n, t[end:], true
}

func validLogcatStamp(s string) bool {
	for i, p := range []byte("00-00 00:00:00.000") {
		if (p == '0' && (s[i] < '0' || s[i] > '9')) || (p != '0' && s[i] != p) {
			return false
		}
	}
	return true
}

// logcatTime places a threadtime stamp, which has no year nor zone, in
// now's year and zone (the device's clock is taken as the host's); a stamp
// more than a day ahead of now is last year's.
func logcatTime(stamp string, now time.Time) time.Time {
	t, err := time.ParseInLocation("2006-01-02 15:04:05.000", strconv.Itoa(now.Year())+"-"+stamp, now.Location())
	if err != nil {
		return now
	}
	if t.After(now.Add(24 * time.Hour)) {
		t = t.AddDate(-1, 0, 0)
	}
	return t
}

// logcatLevel is a logcat level as a console level.
func logcatLevel(level byte) string {
	switch level {
	case 'V', 'D':
		return "debug"
	case 'W':
		return "warn"
	case 'E', 'F':
		return "error"
	}
	return "info"
}

// cleanLogText makes device text safe to keep: valid UTF-8, and control
// characters other than tab shown as U+FFFD.
func cleanLogText(s string) string {
	if utf8.ValidString(s) && !strings.ContainsFunc(s, isLogControl) {
		return s
	}
	return strings.Map(func(r rune) rune {
		if isLogControl(r) {
			return utf8.RuneError
		}
		return r
	}, strings.ToValidUTF8(s, string(utf8.RuneError)))
}

// isLogControl reports whether r is a control character other than tab.
func isLogControl(r rune) bool { return r < 0x20 && r != '\t' || r == 0x7f }
