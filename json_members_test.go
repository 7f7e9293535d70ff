package main

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestScanMembers(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name, data string
		want       map[string]string // the slots read: "a" and "b"
		dup        string            // the member refused as repeated
		invalid    bool
	}{
		{"both", `{"a":1,"b":[2]}`, map[string]string{"a": "1", "b": "[2]"}, "", false},
		{"others skipped", `{"x":0,"a":"s","x":1}`, map[string]string{"a": `"s"`}, "", false},
		{"escaped name", `{"\u0061":true}`, map[string]string{"a": "true"}, "", false},
		{"repeat", `{"a":1,"b":2,"a":3}`, nil, "a", false},
		{"repeat by escape", `{"b":1,"\u0062":2}`, nil, "b", false},
		{"repeat of null", `{"a":null,"a":null}`, nil, "a", false},
		{"not an object", `[1]`, nil, "", true},
		{"trailing data", `{"a":1} x`, nil, "", true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var a, b []byte
			err := scanMembers([]byte(tt.data), func(name []byte) *[]byte {
				switch string(name) {
				case "a":
					return &a
				case "b":
					return &b
				}
				return nil
			})
			var dup *duplicateMemberError
			switch {
			case tt.dup != "":
				if !errors.As(err, &dup) || dup.member != tt.dup {
					t.Fatalf("error = %v, want a repeat of %q", err, tt.dup)
				}
				return
			case tt.invalid:
				if err == nil || errors.As(err, &dup) {
					t.Fatalf("error = %v, want a syntax error", err)
				}
				return
			case err != nil:
				t.Fatal(err)
			}
			got := map[string]string{}
			if a != nil {
				got["a"] = string(a)
			}
			if b != nil {
				got["b"] = string(b)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("members (-want +got):\n%s", diff)
			}
		})
	}
}
