package main

// Fuzz targets for what native logs read from adb and simctl besides the
// log lines themselves: the device lists, pidof's answer, and the pid and
// package that ActivityManager's `Start proc`, libc's `Fatal signal` and a
// tombstone's header tell. Seeded from the real outputs (and the logcat
// files under testdata/native/adb).

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// logcatMessageSeeds is every message of the recorded logcat files.
func logcatMessageSeeds(f *testing.F) []string {
	f.Helper()
	files, err := filepath.Glob(filepath.Join("testdata", "native", "adb", "*.logcat"))
	if err != nil || len(files) == 0 {
		f.Fatalf("no logcat files: %v", err)
	}
	var msgs []string
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		for line := range strings.SplitSeq(string(data), "\n") {
			if l, err := parseLogcatLine(line); err == nil {
				msgs = append(msgs, l.Message)
			}
		}
	}
	return msgs
}

// oneLine keeps s on one line, as a logcat message is.
func oneLine(s string) string {
	return strings.NewReplacer("\n", " ", "\r", " ").Replace(s)
}

var adbDevicesSeeds = []string{
	"List of devices attached\nemulator-5554          device product:sdk_gphone64_x86_64 model:sdk_gphone64_x86_64 device:emu64xa transport_id:1\n\n",
	"List of devices attached\n\n",
	"* daemon not running; starting now at tcp:5037\n* daemon started successfully\nList of devices attached\n" +
		"emulator-5554          device product:sdk_gphone64_x86_64 model:sdk_gphone64_x86_64 device:emu64xa transport_id:1\n" +
		"127.0.0.1:5555         offline transport_id:2\n" +
		"R58M12345              unauthorized usb:1-1 transport_id:3\n" +
		"-bad                   device\n\n",
	"List of devices attached\nemulator-5554\tdevice product:sdk_gphone64_x86_64 model:sdk_gphone64_x86_64 device:emu64xa transport_id:1\n" +
		"emulator-5556\tdevice product:sdk_gphone64_x86_64 model:sdk_gphone64_x86_64 device:emu64xa transport_id:2\n\n",
	"List of devices attached\n0123456789ABCDEF       no permissions (user in plugdev group; are your udev rules wrong?); see [http://developer.android.com/tools/device.html] usb:1-1 transport_id:4\n\n",
	"List of devices attached\nadb-R58M12345-AbCdEf._adb-tls-connect._tcp device product:a52qnsxx model:SM_A525F device:a52q transport_id:5\n\n",
}

// FuzzParseADBDevices: whatever adb prints, at most maxNativeDevices come
// back, each with a serial validDeviceSerial accepts that begins a line of
// the output, a state, and a clean model name; and the devices printed
// back as `adb devices -l` does read back the same.
func FuzzParseADBDevices(f *testing.F) {
	for _, s := range adbDevicesSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, out string) {
		devices := parseADBDevices(out)
		if len(devices) > maxNativeDevices {
			t.Fatalf("%d devices, more than %d", len(devices), maxNativeDevices)
		}
		var back strings.Builder
		back.WriteString("List of devices attached\n")
		for _, d := range devices {
			if !validDeviceSerial(d.ID) || d.Platform != nativeAndroid {
				t.Fatalf("%q: device %+v", out, d)
			}
			if !slices.ContainsFunc(strings.Split(out, "\n"), func(line string) bool {
				fields := strings.Fields(line)
				return len(fields) > 0 && fields[0] == d.ID
			}) {
				t.Fatalf("%q: serial %q begins no line", out, d.ID)
			}
			if d.State == "" || strings.ContainsAny(d.State, "\n\r") || cleanLogText(d.Name) != d.Name {
				t.Fatalf("%q: device %+v", out, d)
			}
			fmt.Fprintf(&back, "%s\t%s", d.ID, d.State)
			if d.Said != "" {
				fmt.Fprintf(&back, " (%s)", d.Said)
			}
			if d.Name != "" {
				fmt.Fprintf(&back, " model:%s", d.Name)
			}
			back.WriteString("\n")
		}
		again := parseADBDevices(back.String())
		if diff := cmp.Diff(devices, again); diff != "" {
			t.Fatalf("%q printed back as %q (-first +again):\n%s", out, back.String(), diff)
		}
	})
}

var simctlDevicesSeeds = []string{
	`{"devices":{"com.apple.CoreSimulator.SimRuntime.iOS-18-0":[{"lastBootedAt":"2026-11-27T05:00:00Z","dataPath":"/x","udid":"6F1B1C5E-2A6B-4A6E-9C1D-1D2E3F4A5B6C","isAvailable":true,"deviceTypeIdentifier":"com.apple.CoreSimulator.SimDeviceType.iPhone-15-Pro","state":"Booted","name":"iPhone 15 Pro"},{"udid":"-rm","state":"Booted","name":"bad"},{"udid":"AAAA","state":"Shutdown","name":"off"}]}}`,
	`{"devices":{"com.apple.CoreSimulator.SimRuntime.iOS-18-0":[{"udid":"6F1B1C5E-2A6B-4A6E-9C1D-1D2E3F4A5B6C","state":"Booted","name":"iPhone 15 Pro"}],` +
		`"com.apple.CoreSimulator.SimRuntime.iOS-17-5":[{"udid":"0D4C2A47-93D3-4C0B-8C8E-5B8F7E6A1C2D","state":"Booted","name":"iPad Air (5th generation)"}]}}`,
	`{"devices":{}}`,
	`{"devices":{"com.apple.CoreSimulator.SimRuntime.iOS-18-0":[]}}`,
	"{\n  \"devices\" : {\n    \"com.apple.CoreSimulator.SimRuntime.iOS-18-0\" : [\n      {\n        \"udid\" : \"6F1B1C5E-2A6B-4A6E-9C1D-1D2E3F4A5B6C\",\n        \"state\" : \"Booted\",\n        \"name\" : \"iPhone 15 Pro\"\n      }\n    ]\n  }\n}\n",
	`not json`,
}

// FuzzParseSimctlDevices: whatever simctl prints, at most maxSimulators
// come back, each with a udid validDeviceSerial accepts and a clean name;
// the same output always reads as the same list (the same simulators
// followed, in the same order); and the list written back as simctl's JSON
// reads back the same.
func FuzzParseSimctlDevices(f *testing.F) {
	for _, s := range simctlDevicesSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, out []byte) {
		sims, err := parseSimctlDevices(out)
		if err != nil {
			if sims != nil {
				t.Fatalf("%q: %v and simulators %+v", out, err, sims)
			}
			return
		}
		if len(sims) > maxSimulators {
			t.Fatalf("%d simulators, more than %d", len(sims), maxSimulators)
		}
		type device struct {
			UDID  string `json:"udid"`
			Name  string `json:"name"`
			State string `json:"state"`
		}
		var list []device
		for _, s := range sims {
			if !validDeviceSerial(s.ID) || s.Platform != nativeIOS || s.State != "device" || cleanLogText(s.Name) != s.Name {
				t.Fatalf("%q: simulator %+v", out, s)
			}
			list = append(list, device{UDID: s.ID, Name: s.Name, State: "Booted"})
		}
		for range 3 {
			again, err := parseSimctlDevices(out)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(sims, again); diff != "" {
				t.Fatalf("%q read twice differs (-first +again):\n%s", out, diff)
			}
		}
		back, _ := json.Marshal(map[string]map[string][]device{"devices": {"com.apple.CoreSimulator.SimRuntime.iOS-18-0": list}})
		again, err := parseSimctlDevices(back)
		if err != nil {
			t.Fatalf("%q written back as %s: %v", out, back, err)
		}
		if diff := cmp.Diff(sims, again); diff != "" {
			t.Fatalf("%q written back as %s (-first +again):\n%s", out, back, diff)
		}
	})
}

// FuzzParsePidof: whatever pidof prints, at most 64 pids come back, each
// positive and one of the output's words; and pids printed back as pidof
// does read back the same.
func FuzzParsePidof(f *testing.F) {
	for _, s := range []string{"4242\n", "4242 4300\n", "", "\n", "4300 4242 612\n", "pidof: not found\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, out string) {
		pids := parsePidof(out)
		if len(pids) > 64 {
			t.Fatalf("%d pids", len(pids))
		}
		words := strings.Fields(out)
		words2 := make([]string, 0, len(pids))
		for _, pid := range pids {
			found := false
			for _, w := range words {
				if n, err := strconv.Atoi(w); err == nil && n == pid {
					found = true
					break
				}
			}
			if pid <= 0 || !found {
				t.Fatalf("%q: pid %d", out, pid)
			}
			words2 = append(words2, strconv.Itoa(pid))
		}
		back := strings.Join(words2, " ") + "\n"
		if diff := cmp.Diff(pids, parsePidof(back)); diff != "" {
			t.Fatalf("%q printed back as %q (-first +again):\n%s", out, back, diff)
		}
	})
}

// FuzzTombstoneProcess: a tombstone header read gives a positive pid
// written in it and the package between `>>> ` and ` <<<` (a :process
// suffix aside); and a header written as debuggerd does, whatever the
// crashing thread's name, reads back its pid and package.
func FuzzTombstoneProcess(f *testing.F) {
	for _, msg := range logcatMessageSeeds(f) {
		f.Add(msg, 4300, "mqt_js", "com.example.shop")
	}
	f.Add("pid: 4300, tid: 4321, name: mqt_js  >>> com.example.shop:remote <<<", 4300, "RenderThread", "com.example.shop")
	f.Fuzz(func(t *testing.T, msg string, pid int, thread, pkg string) {
		if p, name, ok := tombstoneProcess(msg); ok {
			if p <= 0 || !strings.Contains(msg, strconv.Itoa(p)) {
				t.Fatalf("%q: pid %d", msg, p)
			}
			if name == "" || strings.Contains(name, ":") || !strings.Contains(msg, ">>> "+name) {
				t.Fatalf("%q: package %q", msg, name)
			}
		}
		if pid <= 0 || !validNativeAppID(pkg) {
			return
		}
		header := fmt.Sprintf("pid: %d, tid: %d, name: %s  >>> %s <<<", pid, pid+1, oneLine(thread), pkg)
		p, name, ok := tombstoneProcess(header)
		if !ok || p != pid || name != pkg {
			t.Fatalf("%q read as pid %d, package %q, ok %v", header, p, name, ok)
		}
	})
}

// FuzzActivityStartProc: a `Start proc` line read gives a positive pid
// written in it and a valid package id that follows it; and a line written
// as ActivityManager does reads back its pid and package.
func FuzzActivityStartProc(f *testing.F) {
	for _, msg := range logcatMessageSeeds(f) {
		f.Add(msg, 4242, "com.example.shop", "next-top-activity {com.example.shop/com.example.shop.MainActivity}")
	}
	f.Add("Start proc 4300:com.example.shop/u0a123 for pre-top-activity {com.example.shop/com.example.shop.MainActivity}", 4300, "com.example.shop", "service {com.example.shop/com.example.shop.Sync}")
	f.Add("Start proc 4301:com.example.shop:remote/u0a123 for service {com.example.shop/com.example.shop.Remote}", 4301, "com.example.shop", "broadcast {com.example.shop/com.example.shop.Boot}")
	f.Fuzz(func(t *testing.T, msg string, pid int, pkg, reason string) {
		if p, name, ok := activityStartProc(msg); ok {
			if p <= 0 || !validNativeAppID(name) || !strings.Contains(msg, strconv.Itoa(p)+":"+name) {
				t.Fatalf("%q read as pid %d, package %q", msg, p, name)
			}
		}
		if pid <= 0 || !validNativeAppID(pkg) {
			return
		}
		line := fmt.Sprintf("Start proc %d:%s/u0a%d for %s", pid, pkg, pid%1000, oneLine(reason))
		p, name, ok := activityStartProc(line)
		if !ok || p != pid || name != pkg {
			t.Fatalf("%q read as pid %d, package %q, ok %v", line, p, name, ok)
		}
	})
}

// FuzzFatalSignalProcess: the process name read from a `Fatal signal`
// line is written in it in parentheses after ` pid `; and a line written
// as libc does, whatever the signal and the thread's name, reads back its
// package.
func FuzzFatalSignalProcess(f *testing.F) {
	for _, msg := range logcatMessageSeeds(f) {
		f.Add(msg, 4300, "mqt_js", "11 (SIGSEGV), code 1 (SEGV_MAPERR), fault addr 0x0", "com.example.shop")
	}
	f.Add("Fatal signal 6 (SIGABRT), code -1 (SI_QUEUE) in tid 4300 (com.example.shop), pid 4300 (com.example.shop)", 4300, "com.example.shop", "6 (SIGABRT), code -1 (SI_QUEUE)", "com.example.shop")
	f.Fuzz(func(t *testing.T, msg string, pid int, thread, signal, pkg string) {
		if name := fatalSignalProcess(msg); name != "" {
			if strings.Contains(name, ")") || !strings.Contains(msg, " pid ") || !strings.Contains(msg, "("+name) {
				t.Fatalf("%q read as %q", msg, name)
			}
		}
		if pid <= 0 || !validNativeAppID(pkg) {
			return
		}
		line := fmt.Sprintf("Fatal signal %s in tid %d (%s), pid %d (%s)", oneLine(signal), pid+1, oneLine(thread), pid, pkg)
		if name := fatalSignalProcess(line); name != pkg {
			t.Fatalf("%q read as %q, want %q", line, name, pkg)
		}
	})
}
