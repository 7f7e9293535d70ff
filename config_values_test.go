package main

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestSetSwitch: every boolean setting reads the same words, in any case
// and spacing; anything else is refused with an error quoting the value and
// listing the words.
func TestSetSwitch(t *testing.T) {
	for _, v := range []string{"true", "1", "YES", " on ", "On"} {
		var got bool
		if err := setSwitch(&got, v); err != nil || !got {
			t.Errorf("setSwitch(%q) = %v, %v; want true", v, got, err)
		}
	}
	for _, v := range []string{"false", "0", "No", "OFF\t", "off"} {
		got := true
		if err := setSwitch(&got, v); err != nil || got {
			t.Errorf("setSwitch(%q) = %v, %v; want false", v, got, err)
		}
	}
	for _, v := range []string{"", "2", "enabled", "t", "of"} {
		var got bool
		err := setSwitch(&got, v)
		if err == nil || !strings.Contains(err.Error(), `"`+v+`"`) ||
			!strings.Contains(err.Error(), "true, false, 1, 0, yes, no, on, off") {
			t.Errorf("setSwitch(%q) = %v, want an error quoting the value and listing the words", v, err)
		}
	}
}

// TestSetInt: integers within the bounds, bounds included; the
// error names what was wrong: not an integer, or outside the range, even
// past int64.
func TestSetInt(t *testing.T) {
	for v, want := range map[string]int64{"1": 1, " 10 ": 10, "5": 5, "1e1": 10} {
		var got int64
		if err := setInt(&got, v, 1, 10); err != nil || got != want {
			t.Errorf("setInt(%q) = %d, %v; want %d", v, got, err, want)
		}
	}
	for v, want := range map[string]string{
		"":                      `"" is not an integer`,
		"ten":                   `"ten" is not an integer`,
		"1.5":                   `"1.5" is not an integer`,
		"0":                     "0 is outside 1-10",
		"11":                    "11 is outside 1-10",
		"-3":                    "-3 is outside 1-10",
		" 99999999999999999999": "99999999999999999999 is outside 1-10",
	} {
		var got int64
		if err := setInt(&got, v, 1, 10); err == nil || err.Error() != want {
			t.Errorf("setInt(%q) = %v, want %q", v, err, want)
		}
	}
}

// TestSplitList: items trimmed, empty ones dropped, lower-cased by
// splitList and kept as written by splitListCase; the first invalid item's
// error is returned with no list.
func TestSplitList(t *testing.T) {
	accept := func(string) error { return nil }
	got, err := splitList(" Console, ,NETWORK,,state ", accept)
	if err != nil || !cmp.Equal(got, []string{"console", "network", "state"}) {
		t.Errorf("splitList = %q, %v", got, err)
	}
	got, err = splitListCase("com.Example.App , ,org.Shop", accept)
	if err != nil || !cmp.Equal(got, []string{"com.Example.App", "org.Shop"}) {
		t.Errorf("splitListCase = %q, %v", got, err)
	}
	if got, err := splitList(" , ", accept); err != nil || got != nil {
		t.Errorf("splitList of nothing = %q, %v; want none", got, err)
	}
	bad := errors.New("bad item")
	seen := []string{}
	_, err = splitList("a,B,c", func(item string) error {
		seen = append(seen, item)
		if item == "b" {
			return bad
		}
		return nil
	})
	if !errors.Is(err, bad) || !cmp.Equal(seen, []string{"a", "b"}) {
		t.Errorf("splitList with an invalid item = %v after %q; want the item's error after a, b", err, seen)
	}
}

// FuzzSplitList: splitListCase gives the input's non-blank comma-separated
// parts, trimmed, in order, none empty or holding a comma; splitList gives
// the same items lower-cased.
func FuzzSplitList(f *testing.F) {
	for _, seed := range []string{"console,network", " A , ,b,,", "com.Example.App,org.shop", ",", ""} {
		f.Add(seed)
	}
	accept := func(string) error { return nil }
	f.Fuzz(func(t *testing.T, v string) {
		kept, err := splitListCase(v, accept)
		if err != nil {
			t.Fatal(err)
		}
		var want []string
		for part := range strings.SplitSeq(v, ",") {
			if p := strings.TrimSpace(part); p != "" {
				want = append(want, p)
			}
		}
		if !cmp.Equal(kept, want) {
			t.Fatalf("splitListCase(%q) = %q, want %q", v, kept, want)
		}
		for _, item := range kept {
			if item == "" || item != strings.TrimSpace(item) || strings.Contains(item, ",") {
				t.Fatalf("item %q of %q is empty, untrimmed or holds a comma", item, v)
			}
		}
		lower, err := splitList(v, accept)
		if err != nil {
			t.Fatal(err)
		}
		if len(lower) != len(kept) {
			t.Fatalf("splitList(%q) = %q, splitListCase %q: not as many items", v, lower, kept)
		}
		for i := range kept {
			if lower[i] != strings.ToLower(kept[i]) {
				t.Fatalf("splitList item %d = %q, want %q lower-cased", i, lower[i], kept[i])
			}
		}
	})
}
