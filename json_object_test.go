package main

import (
	"encoding/json"
	"testing"
)

// FuzzJSONObjectValue: value's fast paths write what encoding/json writes.
func FuzzJSONObjectValue(f *testing.F) {
	for _, s := range []string{"console", "log", "2026-11-27T10:00:00.000Z", `a"b`, "<&>", "é", "\x00", "\xff"} {
		f.Add(s, int64(len(s)))
	}
	f.Add("", int64(-9223372036854775808))
	f.Fuzz(func(t *testing.T, s string, n int64) {
		var o jsonObject
		o.value("s", s)
		o.value("n", n)
		ws, _ := json.Marshal(s)
		wn, _ := json.Marshal(n)
		if got, want := string(o.close()), `{"s":`+string(ws)+`,"n":`+string(wn)+`}`; got != want {
			t.Errorf("value wrote %s, encoding/json %s", got, want)
		}
	})
}
