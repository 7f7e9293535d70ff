package main

import "testing"

// TestURLContainsReadsTheURL: url_contains looks through a request's URL
// as its summary shows it, in any case; a URL that is not a string shows
// as none, so no search finds it (the text "null" of a null URL included).
func TestURLContainsReadsTheURL(t *testing.T) {
	ts := &toolSet{}
	keep, err := ts.eventFilter(networkStream, toolArgs{strings: map[string]string{"url_contains": "UL"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		event string
		want  bool
	}{
		{`{"payload":{"url":"https://example.com/ultra"}}`, true},
		{`{"payload":{"url":"https://example.com/\u0055Lt"}}`, true},
		{`{"payload":{"url":"https://example.com/other"}}`, false},
		{`{"payload":{"url":null}}`, false},
		{`{"payload":{"url":{"href":"https://example.com/ultra"}}}`, false},
		{`{"payload":{"url":["ul"]}}`, false},
		{`{"payload":{}}`, false},
	} {
		if got := keep([]byte(tc.event)); got != tc.want {
			t.Errorf("url_contains UL on %s = %t, want %t", tc.event, got, tc.want)
		}
	}
}
