package main

import (
	"encoding/json"
	"errors"
	"testing"
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
			// The event readers take any params without panicking.
			metroConsoleEvent(got.Params, testNow)
			metroExceptionEvent(got.Params, testNow)
			var n metroNetwork
			n.handle(got.Method, got.Params, testNow)
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
