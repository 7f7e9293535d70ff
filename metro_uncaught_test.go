package main

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestRNUncaughtReport: React Native's handler reporting an uncaught error
// through console.error (its frames reportException, handleException,
// and reportFatalError for a fatal one) reads as uncaught, fatal where the
// frames show it, pointing at the app's LogBox, without the handler's
// frames; the app's own console.error, and a report that holds the Error
// itself, keep their stacks and get no note.
func TestRNUncaughtReport(t *testing.T) {
	t.Parallel()
	frame := func(name string, line int) string {
		return `{"functionName":"` + name + `","url":"http://localhost:8081/index.bundle?platform=ios","lineNumber":` + strings.Repeat("1", line) + `,"columnNumber":4}`
	}
	call := func(frames ...string) map[string]any {
		ev, err := metroConsoleEvent([]byte(`{"type":"error","args":[{"type":"string","value":"TypeError: Cannot read property 'data' of undefined"}],`+
			`"stackTrace":{"callFrames":[`+strings.Join(frames, ",")+`]}}`), testNow)
		if err != nil {
			t.Fatal(err)
		}
		var p map[string]any
		if err := json.Unmarshal(ev.Payload, &p); err != nil {
			t.Fatal(err)
		}
		return p
	}
	fatal := call(frame("reportException", 1), frame("handleException", 2), frame("handleError", 3), frame("reportFatalError", 4), frame("loadOrders", 5))
	if msg := fatal["message"].(string); !strings.HasPrefix(msg, "TypeError: Cannot read property 'data' of undefined\n(uncaught, fatal: ") ||
		!strings.Contains(msg, "LogBox") || fatal["stack"] != nil {
		t.Errorf("the fatal report: %v", fatal)
	}
	soft := call(frame("reportException", 1), frame("handleException", 2), frame("onCaughtError", 3))
	if msg := soft["message"].(string); !strings.Contains(msg, "\n(uncaught: ") || strings.Contains(msg, "fatal") || soft["stack"] != nil {
		t.Errorf("the non-fatal report: %v", soft)
	}
	ev, err := metroConsoleEvent([]byte(`{"type":"error","args":[{"type":"object","subtype":"error","description":"Error: boom\n    at onCheckout (http://h/b:4:13)"}],`+
		`"stackTrace":{"callFrames":[`+frame("reportException", 1)+`,`+frame("handleException", 2)+`]}}`), testNow)
	if err != nil || strings.Contains(string(ev.Payload), "uncaught") || !strings.Contains(string(ev.Payload), `"stack":`) {
		t.Errorf("a report that holds the Error itself, whose stack is the throw site, was changed: %s %v", ev.Payload, err)
	}
	own := call(frame("loadOrders", 1), frame("onPress", 2), frame("reportException", 3))
	if own["message"] != "TypeError: Cannot read property 'data' of undefined" || !strings.Contains(own["stack"].(string), "loadOrders") {
		t.Errorf("the app's own console.error: %v", own)
	}
}
