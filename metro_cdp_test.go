package main

import (
	"encoding/json"
	"errors"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseCDPFrame(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, frame string
		want        cdpFrame
		bad         bool
	}{
		{"event", `{"method":"Runtime.consoleAPICalled","params":{"type":"log"}}`, cdpFrame{Method: "Runtime.consoleAPICalled", Params: json.RawMessage(`{"type":"log"}`)}, false},
		{"event without params", `{"method":"Runtime.executionContextsCleared"}`, cdpFrame{Method: "Runtime.executionContextsCleared"}, false},
		{"answer", `{"id":7,"result":{}}`, cdpFrame{ID: 7}, false},
		{"error answer", `{"id":7,"error":{"code":-32601}}`, cdpFrame{ID: 7, Error: json.RawMessage(`{"code":-32601}`)}, false},
		{"not an object", `[1]`, cdpFrame{}, true},
		{"not JSON", `{"method":`, cdpFrame{}, true},
		{"no id, no method", `{"result":{}}`, cdpFrame{}, true},
		{"id zero", `{"id":0,"result":{}}`, cdpFrame{}, true},
		{"id a string", `{"id":"7","result":{}}`, cdpFrame{}, true},
		{"method not a string", `{"method":5}`, cdpFrame{}, true},
		{"params not an object", `{"method":"Runtime.consoleAPICalled","params":[1]}`, cdpFrame{}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseCDPFrame([]byte(tt.frame))
			if tt.bad {
				if !errors.Is(err, errCDPFrame) {
					t.Errorf("parseCDPFrame(%s) = %+v, %v; want an errCDPFrame", tt.frame, got, err)
				}
				return
			}
			if err != nil || got.ID != tt.want.ID || got.Method != tt.want.Method ||
				string(got.Params) != string(tt.want.Params) || string(got.Error) != string(tt.want.Error) {
				t.Errorf("parseCDPFrame(%s) = %+v, %v; want %+v", tt.frame, got, err, tt.want)
			}
		})
	}
}

// FuzzParseCDPFrame: any frame is read or refused with an errCDPFrame, and
// what is read round-trips: re-encoded, it reads the same.
func FuzzParseCDPFrame(f *testing.F) {
	for _, frame := range readMetroFrames(f, "testdata/metro/session.jsonl") {
		f.Add(frame)
	}
	f.Add([]byte(`{"id":1,"result":{}}`))
	f.Add([]byte(`{"id":1.0,"method":"x","error":null}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		got, err := parseCDPFrame(data)
		if err != nil {
			if !errors.Is(err, errCDPFrame) {
				t.Fatalf("error %v is not an errCDPFrame", err)
			}
			return
		}
		if (got.ID == 0) == (got.Method == "") {
			t.Fatalf("%+v is neither an answer nor an event", got)
		}
		var o jsonObject
		if got.ID != 0 {
			o.value("id", got.ID)
		} else {
			o.value("method", got.Method)
		}
		if got.Params != nil {
			o.raw("params", got.Params)
		}
		again, err := parseCDPFrame(o.close())
		if err != nil || again.ID != got.ID || again.Method != got.Method || string(again.Params) != string(got.Params) {
			t.Fatalf("round trip of %+v: %+v, %v", got, again, err)
		}
		if got.Method != "" && got.Params != nil {
			// The event readers take any params, and what they keep is JSON.
			var n metroNetwork
			for _, read := range []func() (metroEvent, error){
				func() (metroEvent, error) { return metroConsoleEvent(got.Params, testNow) },
				func() (metroEvent, error) { return metroExceptionEvent(got.Params, testNow) },
				func() (metroEvent, error) {
					ev, _, err := n.handle("Network.requestWillBeSent", got.Params, testNow, false)
					if err == nil {
						ev, _, err = n.handle("Network.loadingFailed", got.Params, testNow, false)
					}
					return ev, err
				},
			} {
				if ev, err := read(); err == nil && ev.Payload != nil && !json.Valid(ev.Payload) {
					t.Fatalf("event payload is not JSON: %q", ev.Payload)
				}
			}
		}
	})
}

func TestMetroRequestFrame(t *testing.T) {
	t.Parallel()
	for _, method := range metroSentMethods {
		frame, err := metroRequestFrame(3, method)
		if err != nil {
			t.Fatalf("%s: %v", method, err)
		}
		var req map[string]any
		if err := json.Unmarshal(frame, &req); err != nil || len(req) != 2 || req["id"] != 3.0 || req["method"] != method {
			t.Errorf("frame of %s = %s, want {id, method} and no params", method, frame)
		}
	}
	if _, err := metroRequestFrame(1, "Runtime.evaluate"); !errors.Is(err, errMetroNotAllowed) {
		t.Errorf("Runtime.evaluate: %v, want errMetroNotAllowed", err)
	}
}

// TestReadmeListsSentMethods: docs/metro.md's list of the CDP methods sent is
// metroSentMethods, no more and no less.
func TestReadmeListsSentMethods(t *testing.T) {
	t.Parallel()
	readme, err := os.ReadFile("docs/metro.md")
	if err != nil {
		t.Fatal(err)
	}
	_, rest, found := strings.Cut(string(readme), "The CDP methods the server sends")
	paragraph, _, _ := strings.Cut(rest, "Never")
	if !found {
		t.Fatal("docs/metro.md does not list the CDP methods the server sends")
	}
	var listed []string
	for _, m := range regexp.MustCompile("`([A-Za-z]+\\.[A-Za-z]+)`").FindAllStringSubmatch(paragraph, -1) {
		listed = append(listed, m[1])
	}
	if diff := cmp.Diff(slices.Sorted(slices.Values(metroSentMethods)), slices.Sorted(slices.Values(listed))); diff != "" {
		t.Errorf("docs/metro.md's methods differ from metroSentMethods (-code +docs):\n%s", diff)
	}
}
