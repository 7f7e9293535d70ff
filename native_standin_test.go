//go:build unix

package main

// native_standin_test.go is a stand-in adb and xcrun: the test binary,
// re-executed through a small script with nativeStandinEnv set to
// "TOOL:DIR". It records every command line in DIR/commands and its pid in
// DIR/pids, answers from files the test writes in DIR, and streams a log
// file as it grows, as `logcat` and `log stream` do:
//
//	devices              `adb devices -l`
//	pidof-PACKAGE        `adb shell pidof PACKAGE` (absent or empty: exit 1)
//	logcat-SERIAL        the device's log; `gone-SERIAL` makes logcat exit 1
//	die-SERIAL           logcat exits 1 once, and removes the file (the adb server restarted);
//	                     logcat honours -T N (the last N lines, then what follows)
//	simctl-list          `simctl list devices booted -j`
//	simlog-UDID          the simulator's log, streamed by a child `log`
//	                     process that `simctl spawn` starts, as the real one does

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

const nativeStandinEnv = "DEVTOOLS_MCP_NATIVE_STANDIN"

// nativeStandin makes the scripts that run the stand-ins: paths to give
// the server as ADB and XCRUN, and the directory they read and record in.
func nativeStandin(t *testing.T) (adb, xcrun, dir string) {
	t.Helper()
	dir = t.TempDir()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	for _, tool := range []string{"adb", "xcrun"} {
		script := fmt.Sprintf("#!/bin/sh\n%s='%s:%s' exec '%s' \"$@\"\n", nativeStandinEnv, tool, dir, exe)
		if err := os.WriteFile(filepath.Join(dir, tool), []byte(script), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return filepath.Join(dir, "adb"), filepath.Join(dir, "xcrun"), dir
}

// runNativeStandin is the stand-in's main.
func runNativeStandin(spec string, args []string) int {
	tool, dir, _ := strings.Cut(spec, ":")
	appendFile(filepath.Join(dir, "pids"), strconv.Itoa(os.Getpid())+"\n")
	if tool == "log" {
		return standinTail(filepath.Join(dir, args[0]), "", "", -1)
	}
	appendFile(filepath.Join(dir, "commands"), tool+" "+strings.Join(args, " ")+"\n")
	if code, ok := standinFault(tool, dir, args); ok { // adb's own failures: native_faults_standin_test.go
		return code
	}
	line := strings.Join(args, " ")
	switch {
	case tool == "adb" && line == "devices -l":
		return standinCat(filepath.Join(dir, "devices"))
	case tool == "adb" && len(args) == 5 && args[0] == "-s" && args[2] == "shell" && args[3] == "pidof":
		data, _ := os.ReadFile(filepath.Join(dir, "pidof-"+args[4]))
		if strings.TrimSpace(string(data)) == "" {
			return 1
		}
		os.Stdout.Write(data)
		return 0
	case tool == "adb" && len(args) > 2 && args[0] == "-s" && args[2] == "logcat":
		return standinTail(filepath.Join(dir, "logcat-"+args[1]), filepath.Join(dir, "gone-"+args[1]), filepath.Join(dir, "die-"+args[1]), lastLines(args))
	case tool == "xcrun" && line == "simctl list devices booted -j":
		return standinCat(filepath.Join(dir, "simctl-list"))
	// ---- the simulator's running apps (launchctl-UDID): native_simapps_test.go ----
	case tool == "xcrun" && len(args) == 5 && args[0] == "simctl" && args[1] == "spawn" && args[3] == "launchctl" && args[4] == "list":
		return standinLaunchctl(dir, args[2])
	// ---- end of the simulator's running apps ----
	case tool == "xcrun" && len(args) > 3 && args[0] == "simctl" && args[1] == "spawn":
		// The real simctl spawn runs `log` as its child: so does this one.
		exe, _ := os.Executable()
		cmd := exec.Command(exe, "simlog-"+args[2])
		cmd.Env = append(os.Environ(), nativeStandinEnv+"=log:"+dir)
		cmd.Stdout = os.Stdout
		if cmd.Run() != nil {
			return 1
		}
		return 0
	}
	fmt.Fprintf(os.Stderr, "stand-in %s: unknown command %q\n", tool, line)
	return 2
}

func appendFile(path, text string) {
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return
	}
	f.WriteString(text)
	f.Close()
}

func standinCat(path string) int {
	data, _ := os.ReadFile(path)
	os.Stdout.Write(data)
	return 0
}

// lastLines reads logcat's -T N: start N lines from the end; -1 for all.
func lastLines(args []string) int {
	for i, a := range args {
		if a == "-T" && i+1 < len(args) {
			n, _ := strconv.Atoi(args[i+1])
			return n
		}
	}
	return -1
}

// standinTail writes path (its last n lines; all for -1) and what is
// appended to it, until gone exists (exit 1), die exists (removed, exit 1)
// or stdout is closed.
func standinTail(path, gone, die string, n int) int {
	var offset int64
	if data, err := os.ReadFile(path); err == nil && n >= 0 {
		lines := strings.SplitAfter(string(data), "\n")
		if lines[len(lines)-1] == "" {
			lines = lines[:len(lines)-1]
		}
		offset = int64(len(data) - len(strings.Join(lines[max(0, len(lines)-n):], "")))
	}
	appendFile(path+".reading", "started\n") // from here on, what is appended is streamed
	for {
		if gone != "" {
			if _, err := os.Stat(gone); err == nil {
				return 1
			}
		}
		if die != "" && os.Remove(die) == nil {
			return 1
		}
		if f, err := os.Open(path); err == nil {
			f.Seek(offset, io.SeekStart)
			n, _ := io.Copy(os.Stdout, f)
			offset += n
			f.Close()
		}
		time.Sleep(5 * time.Millisecond) // the stand-in polls its file; the tests never wait on time
	}
}

// standinPIDs are the pids of every stand-in process started.
func standinPIDs(t *testing.T, dir string) []int {
	t.Helper()
	data, _ := os.ReadFile(filepath.Join(dir, "pids"))
	var pids []int
	for _, f := range strings.Fields(string(data)) {
		if n, err := strconv.Atoi(f); err == nil {
			pids = append(pids, n)
		}
	}
	return pids
}

// processAlive reports whether pid runs (a zombie has ended).
func processAlive(pid int) bool {
	if err := syscall.Kill(pid, 0); err != nil {
		return false
	}
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return true // no /proc: the signal's answer stands
	}
	_, rest, _ := strings.Cut(string(stat), ") ")
	return !strings.HasPrefix(rest, "Z") && !strings.HasPrefix(rest, "X")
}

// waitNoStandin fails unless every stand-in process has ended within a
// generous deadline.
func waitNoStandin(t *testing.T, dir string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		var alive []int
		for _, pid := range standinPIDs(t, dir) {
			if processAlive(pid) {
				alive = append(alive, pid)
			}
		}
		if len(alive) == 0 {
			return
		}
		if time.Now().After(deadline) {
			for _, pid := range alive {
				syscall.Kill(pid, syscall.SIGKILL)
			}
			t.Fatalf("stand-in processes outlived the server: %v", alive)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// standinCommands are the command lines the stand-ins ran.
func standinCommands(t *testing.T, dir string) []string {
	t.Helper()
	data, _ := os.ReadFile(filepath.Join(dir, "commands"))
	return strings.Split(strings.TrimSpace(string(data)), "\n")
}

// checkListedCommands fails for any command line that is not one of
// nativeCommandTemplates with its placeholders filled.
func checkListedCommands(t *testing.T, commands []string) {
	t.Helper()
	for _, c := range commands {
		if c == "" {
			continue
		}
		listed := false
		for _, tmpl := range nativeCommandTemplates {
			if commandMatches(strings.ReplaceAll(tmpl, "'", ""), c) {
				listed = true
			}
		}
		if !listed {
			t.Errorf("a command outside the closed list was run: %q", c)
		}
	}
}

func commandMatches(tmpl, c string) bool {
	tw, cw := strings.Fields(tmpl), strings.Fields(c)
	if len(tw) != len(cw) {
		return false
	}
	for i := range tw {
		switch tw[i] {
		case "SERIAL", "UDID":
			if !validDeviceSerial(cw[i]) {
				return false
			}
		case "PACKAGE":
			if !validNativeAppID(cw[i]) {
				return false
			}
		default:
			if tw[i] != cw[i] {
				return false
			}
		}
	}
	return true
}
