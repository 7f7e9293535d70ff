package main

import (
	"encoding/json"
	"testing"
)

// TestDescribeListener pins how debug_health_check reports the Reactotron
// bridge's listener: the URL apps dial, or null when the bridge is off.
func TestDescribeListener(t *testing.T) {
	for _, tc := range []struct {
		name string
		st   listenerStatus
		want string
	}{
		{"off", listenerStatus{ListenError: "the Reactotron bridge is off (REACTOTRON_PORT=0)"},
			`{"listenError":"the Reactotron bridge is off (REACTOTRON_PORT=0)","listening":false,"url":null}`},
		{"listening", listenerStatus{URL: "ws://127.0.0.1:9090/", Listening: true},
			`{"listening":true,"url":"ws://127.0.0.1:9090/"}`},
		{"port held", listenerStatus{URL: "ws://127.0.0.1:9090/", ListenError: "port 9090 is in use"},
			`{"listenError":"port 9090 is in use","listening":false,"url":"ws://127.0.0.1:9090/"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := json.Marshal(describeListener(tc.st))
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tc.want {
				t.Errorf("got  %s\nwant %s", got, tc.want)
			}
		})
	}
}
