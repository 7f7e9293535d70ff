package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The frames in testdata/metro/real/ are what Metro's real inspector proxy
// (@react-native/dev-middleware) delivered to a debugger from a page backed
// by V8's own inspector, recorded by .ci/metro-inspector.sh (RECORD_DIR). The
// app code behind them is in .ci/metro-inspector/runtime.js, compiled under
// the proxy's bundle URL; re-recording changes the port and ids, not the
// lines asserted here.

func readRealFrame(t *testing.T, name string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "metro", "real", name))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func TestRealMetroListParses(t *testing.T) {
	pages, err := parseMetroList(readRealFrame(t, "json_list.json"))
	if err != nil {
		t.Fatal(err)
	}
	if len(pages) != 1 {
		t.Fatalf("got %d pages, want 1: %+v", len(pages), pages)
	}
	p := pages[0]
	if p.AppID != "com.example.metrocheck" || p.DeviceName != "Check Phone" || p.LogicalDeviceID != "metro-check-device" {
		t.Errorf("page app/device = %q/%q/%q, want com.example.metrocheck/Check Phone/metro-check-device", p.AppID, p.DeviceName, p.LogicalDeviceID)
	}
	if !p.MultipleDebuggers {
		t.Error("the page declares supportsMultipleDebuggers and the proxy passed it through, but it was read as false")
	}
	if !strings.HasPrefix(p.DebuggerURL, "ws://127.0.0.1:") || !strings.Contains(p.DebuggerURL, "/inspector/debug?device=metro-check-device&page=1") {
		t.Errorf("debugger URL %q is not the proxy's /inspector/debug URL for device and page", p.DebuggerURL)
	}
}

// realLog replays one recorded event frame through the frame reader and the
// console reader it names, and answers the log it makes.
func realLog(t *testing.T, name string) (level, message, stack string) {
	t.Helper()
	f, err := parseCDPFrame(readRealFrame(t, name))
	if err != nil {
		t.Fatal(err)
	}
	var ev metroEvent
	switch f.Method {
	case "Runtime.consoleAPICalled":
		ev, err = metroConsoleEvent(f.Params, time.Now())
	case "Runtime.exceptionThrown":
		ev, err = metroExceptionEvent(f.Params, time.Now())
	default:
		t.Fatalf("%s: method %q is not a console event", name, f.Method)
	}
	if err != nil {
		t.Fatal(err)
	}
	if ev.Stream != "console" || ev.Type != "log" {
		t.Errorf("%s: stream/type %s/%s, want console/log", name, ev.Stream, ev.Type)
	}
	var p struct{ Level, Message, Stack string }
	if err := json.Unmarshal(ev.Payload, &p); err != nil {
		t.Fatal(err)
	}
	return p.Level, p.Message, p.Stack
}

func TestRealConsoleLogString(t *testing.T) {
	level, message, stack := realLog(t, "console_log_string.json")
	if level != "info" || message != "metro-check: cart loaded with 3 items" {
		t.Errorf("got %s %q, want info %q", level, message, "metro-check: cart loaded with 3 items")
	}
	if stack != "" {
		t.Errorf("a console.log keeps no stack, got %q", stack)
	}
}

func TestRealConsoleErrorWithObject(t *testing.T) {
	level, message, stack := realLog(t, "console_error_object.json")
	want := `metro-check: payment failed {code: "E_CARD_DECLINED", amount: 42.5, retry: Object}`
	if level != "error" || message != want {
		t.Errorf("got %s %q, want error %q", level, message, want)
	}
	// V8 counts CDP lines and columns from 0; the stack shows them from 1,
	// as the engine prints them (pay is at line 9, column 13 of the bundle).
	first, _, _ := strings.Cut(stack, "\n")
	if !strings.HasPrefix(first, "at pay (http://127.0.0.1:") || !strings.HasSuffix(first, "/index.bundle?platform=ios&dev=true&minify=false:9:13)") {
		t.Errorf("first frame %q, want pay at the bundle's 9:13", first)
	}
}

func TestRealExceptionThrown(t *testing.T) {
	level, message, stack := realLog(t, "exception_thrown.json")
	want := "Uncaught TypeError: Cannot read properties of undefined (reading 'total')"
	if level != "error" || message != want {
		t.Errorf("got %s %q, want error %q", level, message, want)
	}
	lines := strings.Split(stack, "\n")
	// The exception's own description says ":21:22" for this frame, as V8
	// prints it: the CDP frame's 0-based 20/21 must come out the same.
	if !strings.HasPrefix(lines[0], "at onPressCheckout (http://127.0.0.1:") || !strings.HasSuffix(lines[0], "/index.bundle?platform=ios&dev=true&minify=false:21:22)") {
		t.Errorf("first frame %q, want onPressCheckout at the bundle's 21:22", lines[0])
	}
	if len(lines) != 3 {
		t.Errorf("stack has %d frames, want the 3 V8 reported: %q", len(lines), stack)
	}
}
