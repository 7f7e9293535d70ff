package main

import (
	"errors"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestNativeCommandsAreTheTemplates: each builder makes one of the
// templates, with its values in the placeholders' places.
func TestNativeCommandsAreTheTemplates(t *testing.T) {
	t.Parallel()
	logcat, _ := deviceCommand(cmdADBLogcat, "emulator-5554")
	pidof, _ := adbPidofCommand("127.0.0.1:5555", "com.example.shop")
	simlog, _ := deviceCommand(cmdSimctlStream, "6F1B1C5E-2A6B-4A6E-9C1D-1D2E3F4A5B6C")
	got := []string{fromTemplate(cmdADBDevices).String(), logcat.String(), pidof.String(), fromTemplate(cmdSimctlList).String(), simlog.String()}
	want := []string{
		"adb devices -l",
		"adb -s emulator-5554 logcat -v threadtime -b main,system,crash -T 1",
		"adb -s 127.0.0.1:5555 shell pidof com.example.shop",
		"xcrun simctl list devices booted -j",
		"xcrun simctl spawn 6F1B1C5E-2A6B-4A6E-9C1D-1D2E3F4A5B6C log stream --style ndjson --level debug --predicate '" + nativeSimPredicate + "'",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	for i, c := range got {
		tmpl := strings.NewReplacer("emulator-5554", "SERIAL", "127.0.0.1:5555", "SERIAL", "com.example.shop", "PACKAGE",
			"6F1B1C5E-2A6B-4A6E-9C1D-1D2E3F4A5B6C", "UDID").Replace(c)
		if tmpl != nativeCommandTemplates[i] {
			t.Errorf("command %q is not template %q", c, nativeCommandTemplates[i])
		}
	}
}

// TestNativeCommandArguments: nothing that could read as an option or a
// shell word reaches a command line.
func TestNativeCommandArguments(t *testing.T) {
	t.Parallel()
	for _, serial := range []string{"", "-d", "a b", "x;reboot", "$(id)", "a'b", strings.Repeat("a", 200)} {
		if _, err := deviceCommand(cmdADBLogcat, serial); !errors.Is(err, errNativeArgument) {
			t.Errorf("serial %q: %v", serial, err)
		}
		if _, err := deviceCommand(cmdSimctlStream, serial); !errors.Is(err, errNativeArgument) {
			t.Errorf("udid %q: %v", serial, err)
		}
	}
	for _, pkg := range []string{"", "com.example.shop;reboot", "com.example shop", "-f", "1com", "com.example.shop|x", "a`b`"} {
		if _, err := adbPidofCommand("emulator-5554", pkg); !errors.Is(err, errNativeArgument) {
			t.Errorf("package %q: %v", pkg, err)
		}
	}
}

// TestReadmeListsNativeCommands: docs/native.md's table of the commands run is
// nativeCommandTemplates, no more and no less.
func TestReadmeListsNativeCommands(t *testing.T) {
	t.Parallel()
	readme, err := os.ReadFile("docs/native.md")
	if err != nil {
		t.Fatal(err)
	}
	_, rest, found := strings.Cut(string(readme), "| command | what for |")
	table, _, _ := strings.Cut(rest, "\n\n")
	if !found {
		t.Fatal("docs/native.md does not list the native commands")
	}
	var listed []string
	for _, m := range regexp.MustCompile("(?m)^\\| `(.+?)` \\|").FindAllStringSubmatch(table, -1) {
		listed = append(listed, m[1])
	}
	if diff := cmp.Diff(nativeCommandTemplates, listed); diff != "" {
		t.Errorf("docs/native.md's commands differ from nativeCommandTemplates (-code +docs):\n%s", diff)
	}
}

// TestTemplateValueNamedLikePlaceholder: a value that is literally a
// placeholder's name stays the value; it is not filled again.
func TestTemplateValueNamedLikePlaceholder(t *testing.T) {
	t.Parallel()
	for _, serial := range []string{"PACKAGE", "SERIAL", "UDID"} {
		pidof, err := adbPidofCommand(serial, "com.example.shop")
		if err != nil {
			t.Fatal(err)
		}
		want := []string{"-s", serial, "shell", "pidof", "com.example.shop"}
		if diff := cmp.Diff(want, pidof.args); diff != "" {
			t.Errorf("serial %q (-want +got):\n%s", serial, diff)
		}
	}
	pidof, _ := adbPidofCommand("emulator-5554", "SERIAL")
	if diff := cmp.Diff([]string{"-s", "emulator-5554", "shell", "pidof", "SERIAL"}, pidof.args); diff != "" {
		t.Errorf("package SERIAL (-want +got):\n%s", diff)
	}
}

// FuzzNativeCommandValues: whatever serial and package pass validation,
// each lands in its own placeholder's place, once, and nothing else of
// the template changes.
func FuzzNativeCommandValues(f *testing.F) {
	for _, s := range [][2]string{{"emulator-5554", "com.example.shop"}, {"PACKAGE", "SERIAL"}, {"SERIAL", "PACKAGE"}, {"UDID", "UDID"}} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, serial, pkg string) {
		if c, err := adbPidofCommand(serial, pkg); err == nil {
			if want := []string{"-s", serial, "shell", "pidof", pkg}; !slicesEqual(c.args, want) || c.tool != nativeToolADB {
				t.Errorf("pidof of %q on %q: %q", pkg, serial, c)
			}
		}
		if c, err := deviceCommand(cmdADBLogcat, serial); err == nil {
			if want := []string{"-s", serial, "logcat", "-v", "threadtime", "-b", "main,system,crash", "-T", "1"}; !slicesEqual(c.args, want) {
				t.Errorf("logcat of %q: %q", serial, c)
			}
		}
		if c, err := deviceCommand(cmdSimctlStream, serial); err == nil && (len(c.args) < 3 || c.args[2] != serial || c.args[len(c.args)-1] != nativeSimPredicate) {
			t.Errorf("simulator log of %q: %q", serial, c)
		}
	})
}

func slicesEqual(a, b []string) bool { return cmp.Equal(a, b) }
