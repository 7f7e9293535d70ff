package main

import (
	"strings"
	"testing"
)

// TestReadLinesCutsLongLines: a line over maxNativeLine is cut there, the
// rest of it skipped and the cut counted; the lines around it are whole.
func TestReadLinesCutsLongLines(t *testing.T) {
	t.Parallel()
	r := newNativeRunner(nil)
	long := strings.Repeat("x", maxNativeLine+100)
	var got []string
	err := r.readLines(strings.NewReader("short\n"+long+"\nnext\nlast without newline"), func(b []byte) { got = append(got, string(b)) })
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 4 || got[0] != "short" || got[1] != long[:maxNativeLine] || got[2] != "next" || got[3] != "last without newline" {
		t.Errorf("got %d lines: %.40q", len(got), got)
	}
	if n := r.cutLines.Load(); n != 1 {
		t.Errorf("cut lines counted: %d, want 1", n)
	}
}

// TestIntakeRefusesWhenFull: a follow's intake holds at most nativeIntake
// lines and nativeIntakeBytes bytes; a line beyond either is refused, and
// the lines taken make room again.
func TestIntakeRefusesWhenFull(t *testing.T) {
	t.Parallel()
	l := newNativeLines()
	line := []byte("11-27 05:30:00.000  1  1 I t: m")
	for range nativeIntake {
		if !l.put(line) {
			t.Fatal("a line within the bound was refused")
		}
	}
	if l.put(line) {
		t.Error("a line beyond nativeIntake was taken")
	}
	if got := l.take(nil, 2); len(got) != 2 || !l.put(line) {
		t.Errorf("took %d lines; a line was refused after", len(got))
	}
	if n := l.q.clear(); n != nativeIntake-1 {
		t.Errorf("clear dropped %d lines, want %d", n, nativeIntake-1)
	}
	if !l.put(make([]byte, nativeIntakeBytes)) || l.put([]byte("x")) {
		t.Error("bytes bound: want a line of the whole bound taken, the next refused")
	}
}

func TestParseADBDevices(t *testing.T) {
	t.Parallel()
	out := "* daemon not running; starting now at tcp:5037\n* daemon started successfully\nList of devices attached\n" +
		"emulator-5554          device product:sdk_gphone64_x86_64 model:sdk_gphone64_x86_64 device:emu64xa transport_id:1\n" +
		"127.0.0.1:5555         offline transport_id:2\n" +
		"R58M12345              unauthorized usb:1-1 transport_id:3\n" +
		"-bad                   device\n\n"
	got := parseADBDevices(out)
	if len(got) != 3 || got[0].ID != "emulator-5554" || got[0].Name != "sdk_gphone64_x86_64" || got[0].State != "device" ||
		got[1].State != "offline" || got[2].State != "unauthorized" {
		t.Errorf("got %+v", got)
	}
	if pids := parsePidof("4242 4300\n"); len(pids) != 2 || pids[1] != 4300 {
		t.Errorf("pidof: %v", pids)
	}
}
