package main

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// TestClipText: text within the bound is kept as is, whatever its bytes;
// longer text is cut at a character boundary and says how many characters
// were left out.
func TestClipText(t *testing.T) {
	for _, tc := range []struct {
		s    string
		max  int
		want string
	}{
		{"hello", 5, "hello"},
		{"héllo", 5, "héllo"}, // six bytes, five characters
		{"hello world", 5, "hello… (6 more characters)"},
		{"ééééé", 2, "éé… (3 more characters)"},
		{"日本語テキスト", 3, "日本語… (4 more characters)"},
		{"ab", 0, "… (2 more characters)"},
		{"a\xffbc", 2, "a\xff… (2 more characters)"},
	} {
		if got := clipText(tc.s, tc.max); got != tc.want {
			t.Errorf("clipText(%q, %d) = %q, want %q", tc.s, tc.max, got, tc.want)
		}
	}
}

func FuzzClipText(f *testing.F) {
	f.Add("hello world", 3)
	f.Add("日本語テキスト", 2)
	f.Add("a\xff\xfeé", 1)
	f.Fuzz(func(t *testing.T, s string, max int) {
		if max < 0 || max > 1<<16 {
			return
		}
		got := clipText(s, max)
		if utf8.RuneCountInString(s) <= max {
			if got != s {
				t.Fatalf("clipText(%q, %d) = %q, want it unchanged", s, max, got)
			}
			return
		}
		kept, _, ok := strings.Cut(got, "… (")
		if !ok || !strings.HasPrefix(s, kept) || utf8.RuneCountInString(kept) != max {
			t.Fatalf("clipText(%q, %d) = %q: want the first %d characters and a note", s, max, got, max)
		}
		if utf8.ValidString(s) && !utf8.ValidString(got) {
			t.Fatalf("clipText(%q, %d) = %q cut inside a character", s, max, got)
		}
	})
}
