//go:build unix

package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestRunnerEndsWhatAChildLeftBehind: a child that exits by itself while
// a process it started runs on (simctl spawn's log, a wrapper script) does
// not leave that process behind, for a stream or a short command.
func TestRunnerEndsWhatAChildLeftBehind(t *testing.T) {
	t.Parallel()
	for _, short := range []bool{false, true} {
		dir := t.TempDir()
		pidFile := filepath.Join(dir, "pid")
		tool := filepath.Join(dir, "tool")
		// The tool starts a long sleep in the background, says its pid
		// and exits at once; the sleep keeps no pipe of ours open.
		script := fmt.Sprintf("#!/bin/sh\nsleep 300 </dev/null >/dev/null 2>&1 &\necho $! > '%s'\necho line\n", pidFile)
		if err := os.WriteFile(tool, []byte(script), 0o755); err != nil {
			t.Fatal(err)
		}
		r := newNativeRunner(map[string]string{"adb": tool})
		c := nativeCommand{tool: "adb", args: []string{"devices", "-l"}}
		var err error
		if short {
			_, err = r.output(t.Context(), c)
		} else {
			err = r.stream(t.Context(), c, func([]byte) {})
		}
		if err != nil {
			t.Fatalf("short %t: %v", short, err)
		}
		b, err := os.ReadFile(pidFile)
		if err != nil {
			t.Fatal(err)
		}
		pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
		if err != nil {
			t.Fatal(err)
		}
		// Killed by the time the run returned; its zombie, whose parent
		// was the tool, is reaped by init soon after, so poll.
		deadline := time.Now().Add(10 * time.Second)
		for processAlive(pid) {
			if time.Now().After(deadline) {
				syscall.Kill(pid, syscall.SIGKILL)
				t.Fatalf("short %t: the tool's background process %d outlived the run", short, pid)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
}
