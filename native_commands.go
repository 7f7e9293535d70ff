package main

// native_commands.go is the closed list of what the native side may run:
// listing Android devices, reading their log, finding an app's pids, and
// the same three reads of booted iOS simulators. Every child process the
// server starts is built here, by one of the functions below, from one of
// nativeCommandTemplates; nothing else builds a command line, and no
// argument comes from an agent. Never install, am, input, screencap,
// reboot, a shell of anyone's choosing, or any write: docs/native.md
// ("Read only, by construction") lists the same templates, and a test holds the two together.

import (
	"errors"
	"fmt"
	"strings"
)

const (
	nativeToolADB   = "adb"
	nativeToolXcrun = "xcrun"
)

// nativeSimPredicate chooses the simulator log lines the server reads: the
// processes of apps installed in the simulator (not the system's), so that
// the device's whole traffic never reaches the parser.
const nativeSimPredicate = `processImagePath CONTAINS "/Containers/Bundle/Application/"`

// nativeCommandTemplates is every command line the server may run, with
// SERIAL, PACKAGE and UDID standing for the validated values; an argument
// with spaces stands in single quotes.
var nativeCommandTemplates = []string{
	cmdADBDevices:   "adb devices -l",
	cmdADBLogcat:    "adb -s SERIAL logcat -v threadtime -b main,system,crash -T 1",
	cmdADBPidof:     "adb -s SERIAL shell pidof PACKAGE",
	cmdSimctlList:   "xcrun simctl list devices booted -j",
	cmdSimctlStream: "xcrun simctl spawn UDID log stream --style ndjson --level debug --predicate '" + nativeSimPredicate + "'",
	cmdSimctlApps:   "xcrun simctl spawn UDID launchctl list", // read only: `launchctl list` changes nothing
}

const (
	cmdADBDevices = iota
	cmdADBLogcat
	cmdADBPidof
	cmdSimctlList
	cmdSimctlStream
	cmdSimctlApps
)

type nativeCommand struct {
	tool string // nativeToolADB or nativeToolXcrun
	args []string
}

// errNativeArgument is a device serial, udid or app id that the closed list
// refuses to put on a command line.
var errNativeArgument = errors.New("not a safe command argument")

// fromTemplate fills template i's placeholders with values (placeholder,
// value, …), each already checked, so none holds a space or a quote. One
// pass over the template alone: a value is never read again as a
// placeholder, so a serial that is literally "PACKAGE" stays the serial.
func fromTemplate(i int, values ...string) nativeCommand {
	var words []string
	for rest := strings.NewReplacer(values...).Replace(nativeCommandTemplates[i]); rest != ""; {
		rest = strings.TrimLeft(rest, " ")
		var word string
		if strings.HasPrefix(rest, "'") {
			word, rest, _ = strings.Cut(rest[1:], "'")
		} else {
			word, rest, _ = strings.Cut(rest, " ")
		}
		words = append(words, word)
	}
	return nativeCommand{tool: words[0], args: words[1:]}
}

// adbPidofCommand runs pidof on the device: its shell reads the line, so
// the package name is held to the characters a package name has.
func adbPidofCommand(serial, pkg string) (nativeCommand, error) {
	if !validNativeAppID(pkg) {
		return nativeCommand{}, fmt.Errorf("%w: package %q", errNativeArgument, pkg)
	}
	return deviceCommand(cmdADBPidof, serial, "PACKAGE", pkg)
}

// deviceCommand fills template i for one device, whose serial (adb) or
// udid (simctl) it checks, and with further values already checked.
func deviceCommand(i int, id string, values ...string) (nativeCommand, error) {
	placeholder, what := "SERIAL", "device serial"
	if strings.Contains(nativeCommandTemplates[i], "UDID") {
		placeholder, what = "UDID", "simulator udid"
	}
	if !validDeviceSerial(id) {
		return nativeCommand{}, fmt.Errorf("%w: %s %q", errNativeArgument, what, id)
	}
	return fromTemplate(i, append([]string{placeholder, id}, values...)...), nil
}

// String is the command line as the templates write it.
func (c nativeCommand) String() string {
	parts := []string{c.tool}
	for _, a := range c.args {
		if strings.ContainsAny(a, " \"") {
			a = "'" + a + "'"
		}
		parts = append(parts, a)
	}
	return strings.Join(parts, " ")
}

// validDeviceSerial accepts what adb and simctl print as a serial or udid
// (emulator-5554, 127.0.0.1:5555, R58M12345, adb-…._adb-tls-connect._tcp,
// a UUID): no spaces, no quotes, no shell characters, and never a leading
// dash, which would read as an option.
func validDeviceSerial(s string) bool {
	return s != "" && len(s) <= 128 && s[0] != '-' && onlyTokenChars(s, ".:[]%")
}

// validNativeAppID accepts an Android package name or an iOS bundle id:
// letters, digits, dots, underscores and dashes, starting with a letter.
func validNativeAppID(s string) bool {
	return s != "" && len(s) <= 255 && isLetter(s[0]) && onlyTokenChars(s, ".")
}

// onlyTokenChars reports whether s holds only ASCII letters, digits,
// underscores, dashes and the bytes of extra.
func onlyTokenChars(s, extra string) bool {
	for i := range len(s) {
		if !isTokenChar(s[i]) && strings.IndexByte(extra, s[i]) < 0 {
			return false
		}
	}
	return true
}
