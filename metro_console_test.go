package main

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"
)

// testNow is the receipt time of the events these tests read.
var testNow = time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC)

func TestMetroConsoleMessages(t *testing.T) {
	t.Parallel()
	str := func(s string) string { b, _ := json.Marshal(s); return `{"type":"string","value":` + string(b) + `}` }
	tests := []struct {
		name, typ, args string
		level, message  string
	}{
		{"strings raw, joined by spaces", "log", str("a") + "," + str("b c"), "info", "a b c"},
		{"numbers, booleans, null, undefined", "info", `{"type":"number","value":1.5},{"type":"boolean","value":true},{"type":"object","subtype":"null","value":null},{"type":"undefined"}`, "info", "1.5 true null undefined"},
		{"unserializable number", "log", `{"type":"number","unserializableValue":"NaN","description":"NaN"}`, "info", "NaN"},
		{"an object by value is JSON", "debug", `{"type":"object","value":{"a":[1,2]}}`, "debug", `{"a":[1,2]}`},
		{"an array preview", "log", `{"type":"object","subtype":"array","description":"Array(3)","preview":{"subtype":"array","overflow":true,"properties":[{"name":"0","type":"number","value":"1"},{"name":"1","type":"object","value":""}]}}`, "info", "[1, {…}, …]"},
		{"an object without preview", "log", `{"type":"object","className":"Object","description":"Object"}`, "info", "Object"},
		{"an error shows its description", "error", `{"type":"object","subtype":"error","description":"Error: boom\n    at f (x:1:2)","preview":{"properties":[]}}`, "error", "Error: boom\n    at f (x:1:2)"},
		{"an error's stack ends its line", "error", str("failed:") + `,{"type":"object","subtype":"error","description":"Error: a\n    at f (x:1:2)"},{"type":"object","subtype":"error","description":"Error: b\n    at g (x:3:4)"},` + str("done"),
			"error", "failed: Error: a\n    at f (x:1:2)\nError: b\n    at g (x:3:4)\ndone"},
		{"printf directives", "warning", str("%s has %d items (%o)%c, 100%%") + "," + str("cart") + `,{"type":"number","value":2.7},{"type":"object","value":{"x":1}},` + str("color: red") + "," + str("extra"), "warn", `cart has 2 items ({"x":1}), 100% extra`},
		{"a directive without an argument stays", "log", str("%s and %d"), "info", "%s and %d"},
		{"a function", "log", `{"type":"function","description":"function f() {}"}`, "info", "function f() {}"},
		{"an unreadable argument", "log", `{"type":5}`, "info", "(unreadable value)"},
		{"assert is an error, trace debug", "assert", str("x"), "error", "x"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ev, err := metroConsoleEvent([]byte(`{"type":"`+tt.typ+`","args":[`+tt.args+`]}`), testNow)
			if err != nil {
				t.Fatal(err)
			}
			var p struct{ Level, Message string }
			json.Unmarshal(ev.Payload, &p)
			if p.Level != tt.level || p.Message != tt.message {
				t.Errorf("level %q message %q, want %q %q", p.Level, p.Message, tt.level, tt.message)
			}
			if ev.Stream != "console" || ev.Type != "log" || !ev.Time.Equal(testNow) {
				t.Errorf("event %s %s at %v, want console log at receipt", ev.Stream, ev.Type, ev.Time)
			}
		})
	}
}

// TestMetroConsoleBounds: huge and deep arguments and many of them are cut,
// saying so.
func TestMetroConsoleBounds(t *testing.T) {
	t.Parallel()
	deep := strings.Repeat(`{"a":`, 5000) + "1" + strings.Repeat("}", 5000)
	var args []string
	for range 100 {
		args = append(args, `{"type":"object","value":`+deep+`}`)
	}
	args = append([]string{`{"type":"string","value":"` + strings.Repeat("é", 10000) + `"}`}, args...)
	ev, err := metroConsoleEvent([]byte(`{"type":"log","args":[`+strings.Join(args, ",")+`]}`), testNow)
	if err != nil {
		t.Fatal(err)
	}
	var p struct{ Message string }
	json.Unmarshal(ev.Payload, &p)
	if n := len([]rune(p.Message)); n > maxMetroMessageChars+64 {
		t.Errorf("message of %d characters, want at most about %d", n, maxMetroMessageChars)
	}
	if !strings.Contains(p.Message, "more characters") {
		t.Errorf("the message does not say it was cut: …%s", p.Message[len(p.Message)-80:])
	}
	if len(ev.Payload) > 4*maxMetroMessageChars {
		t.Errorf("payload of %d bytes", len(ev.Payload))
	}
}

func TestMetroException(t *testing.T) {
	t.Parallel()
	tests := []struct{ name, params, message, stack string }{
		{"Hermes: stack in frames", `{"exceptionDetails":{"text":"Uncaught","stackTrace":{"callFrames":[{"functionName":"","url":"http://h/index.bundle?platform=ios","lineNumber":0,"columnNumber":9}]},"exception":{"type":"object","subtype":"error","description":"Error: boom\n    at x"}}}`,
			"Uncaught Error: boom", "at http://h/index.bundle?platform=ios:1:10"},
		{"stack only in the description", `{"exceptionDetails":{"text":"Uncaught","exception":{"type":"object","subtype":"error","description":"Error: boom\n    at f (http://h/b:3:4)"}}}`,
			"Uncaught Error: boom", "at f (http://h/b:3:4)"},
		{"made in one place, thrown in another: both kept", `{"exceptionDetails":{"text":"Uncaught","stackTrace":{"callFrames":[{"functionName":"retry","url":"http://h/b","lineNumber":8,"columnNumber":1}]},"exception":{"type":"object","subtype":"error","description":"Error: boom\n    at f (http://h/b:3:4)\n    at g (http://h/b:5:6)"}}}`,
			"Uncaught Error: boom\n    at f (http://h/b:3:4)\n    at g (http://h/b:5:6)", "at retry (http://h/b:9:2)"},
		{"thrown where it was made: the stack once", `{"exceptionDetails":{"text":"Uncaught","stackTrace":{"callFrames":[{"functionName":"f","url":"http://h/b","lineNumber":2,"columnNumber":3}]},"exception":{"type":"object","subtype":"error","description":"Error: boom\n    at Object.f (http://h/b:3:4)\n    at g (http://h/b:5:6)"}}}`,
			"Uncaught Error: boom", "at f (http://h/b:3:4)"},
		{"a thrown string", `{"exceptionDetails":{"text":"Uncaught","exception":{"type":"string","value":"oops"}}}`, "Uncaught oops", ""},
		{"text only", `{"exceptionDetails":{"text":"Uncaught SyntaxError: x"}}`, "Uncaught SyntaxError: x", ""},
		{"nothing", `{}`, "Uncaught exception", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ev, err := metroExceptionEvent([]byte(tt.params), testNow)
			if err != nil {
				t.Fatal(err)
			}
			var p struct{ Level, Message, Stack string }
			json.Unmarshal(ev.Payload, &p)
			if p.Level != "error" || p.Message != tt.message || p.Stack != tt.stack {
				t.Errorf("got %+v, want error %q stack %q", p, tt.message, tt.stack)
			}
		})
	}
	if _, err := metroExceptionEvent([]byte(`{"exceptionDetails":5}`), testNow); err == nil {
		t.Error("mistyped exceptionDetails read without an error")
	}
}

// A console call's CDP stack is read as every frame object is (lines and
// columns from 0, shown from 1) and cut at maxMetroStackFrames, saying how
// many frames were left out in Hermes's form.
func TestMetroConsoleStack(t *testing.T) {
	t.Parallel()
	var frames []string
	for i := range maxMetroStackFrames + 6 {
		frames = append(frames, fmt.Sprintf(`{"functionName":"f%d","url":"http://h/b.bundle?platform=ios","lineNumber":%d,"columnNumber":0}`, i, i))
	}
	ev, err := metroConsoleEvent([]byte(`{"type":"error","args":[],"stackTrace":{"callFrames":[`+strings.Join(frames, ",")+`]}}`), testNow)
	if err != nil {
		t.Fatal(err)
	}
	var p struct{ Stack string }
	json.Unmarshal(ev.Payload, &p)
	lines := strings.Split(p.Stack, "\n")
	if len(lines) != maxMetroStackFrames+1 || lines[0] != "at f0 (http://h/b.bundle?platform=ios:1:1)" || lines[len(lines)-1] != "... skipping 6 frames" {
		t.Errorf("%d lines, first %q, last %q", len(lines), lines[0], lines[len(lines)-1])
	}
}
