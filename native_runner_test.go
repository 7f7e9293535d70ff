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

// TestIntakeDropsWhenFull: a device's intake holds a bounded number of
// lines; beyond it lines are dropped and counted, for the health check.
func TestIntakeDropsWhenFull(t *testing.T) {
	t.Parallel()
	d := &nativeDevice{}
	lines := make(chan []byte, 2)
	for range 5 {
		d.take(lines, []byte("11-27 05:30:00.000  1  1 I t: m"))
	}
	if len(lines) != 2 || d.dropped.Load() != 3 {
		t.Errorf("queued %d, dropped %d; want 2 and 3", len(lines), d.dropped.Load())
	}
	big := make([]byte, nativeIntakeBytes)
	d2 := &nativeDevice{}
	d2.take(make(chan []byte, 10), big)
	d2.take(make(chan []byte, 10), []byte("x"))
	if d2.dropped.Load() != 1 {
		t.Errorf("bytes bound: dropped %d, want 1", d2.dropped.Load())
	}
	if st := d.status(); st.Dropped != 3 {
		t.Errorf("status: dropped %d", st.Dropped)
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
