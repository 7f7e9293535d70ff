package main

import (
	"encoding/json"
	"math/big"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// num shortens json.Number in the tables.
func num(s string) json.Number { return json.Number(s) }

func TestDiffValues(t *testing.T) {
	tests := []struct {
		name         string
		base, target string
		limit        int // 0: no truncation
		want         []change
		wantTotal    int // 0: len(want)
	}{
		{name: "equal", base: `{"a":1,"b":[true,null,"s"],"c":{}}`, target: `{"c":{},"b":[true,null,"s"],"a":1}`},
		{name: "equal scalars", base: `"x"`, target: `"x"`},
		{
			name: "root scalar", base: `1`, target: `2`,
			want: []change{{Path: "", Type: changeChanged, OldValue: num("1"), NewValue: num("2")}},
		},
		{
			name: "added removed changed, in key order", base: `{"z":1,"m":1,"a":1}`, target: `{"b":1,"m":2,"z":1}`,
			want: []change{
				{Path: "a", Type: changeRemoved, OldValue: num("1")},
				{Path: "b", Type: changeAdded, NewValue: num("1")},
				{Path: "m", Type: changeChanged, OldValue: num("1"), NewValue: num("2")},
			},
		},
		{
			name: "nested", base: `{"a":{"b":{"c":1,"d":"x"}}}`, target: `{"a":{"b":{"c":1,"d":"y"}}}`,
			want: []change{{Path: "a.b.d", Type: changeChanged, OldValue: "x", NewValue: "y"}},
		},
		{
			name: "added subtree is one change", base: `{}`, target: `{"a":{"b":[1,2]}}`,
			want: []change{{Path: "a", Type: changeAdded, NewValue: map[string]any{"b": []any{num("1"), num("2")}}}},
		},
		{
			name: "array grows", base: `{"l":[1]}`, target: `{"l":[1,2,3]}`,
			want: []change{
				{Path: "l.1", Type: changeAdded, NewValue: num("2")},
				{Path: "l.2", Type: changeAdded, NewValue: num("3")},
			},
		},
		{
			name: "array shrinks", base: `{"l":[1,2,3]}`, target: `{"l":[1]}`,
			want: []change{
				{Path: "l.1", Type: changeRemoved, OldValue: num("2")},
				{Path: "l.2", Type: changeRemoved, OldValue: num("3")},
			},
		},
		{
			name: "array element nested change", base: `[{"x":1},{"x":1}]`, target: `[{"x":1},{"x":2}]`,
			want: []change{{Path: "1.x", Type: changeChanged, OldValue: num("1"), NewValue: num("2")}},
		},
		{
			name: "array compared by index, not by content", base: `[1,2]`, target: `[2,1]`,
			want: []change{
				{Path: "0", Type: changeChanged, OldValue: num("1"), NewValue: num("2")},
				{Path: "1", Type: changeChanged, OldValue: num("2"), NewValue: num("1")},
			},
		},
		{
			name: "type change does not recurse", base: `{"a":{"b":1},"c":[1],"d":1,"e":true}`, target: `{"a":[1],"c":{"0":1},"d":"1","e":"true"}`,
			want: []change{
				{Path: "a", Type: changeChanged, OldValue: map[string]any{"b": num("1")}, NewValue: []any{num("1")}},
				{Path: "c", Type: changeChanged, OldValue: []any{num("1")}, NewValue: map[string]any{"0": num("1")}},
				{Path: "d", Type: changeChanged, OldValue: num("1"), NewValue: "1"},
				{Path: "e", Type: changeChanged, OldValue: true, NewValue: "true"},
			},
		},
		{
			name: "null values", base: `{"gone":null,"was":null,"now":1,"same":null}`, target: `{"was":1,"now":null,"new":null,"same":null}`,
			want: []change{
				{Path: "gone", Type: changeRemoved, OldValue: nil},
				{Path: "new", Type: changeAdded, NewValue: nil},
				{Path: "now", Type: changeChanged, OldValue: num("1"), NewValue: nil},
				{Path: "was", Type: changeChanged, OldValue: nil, NewValue: num("1")},
			},
		},
		{
			name: "object to null", base: `{"a":{}}`, target: `{"a":null}`,
			want: []change{{Path: "a", Type: changeChanged, OldValue: map[string]any{}, NewValue: nil}},
		},
		{name: "equal numbers in other spellings", base: `[1,100,0,-0.5,1.5e300]`, target: `[1.0,1e2,-0,-5E-1,15e299]`},
		{
			name: "numbers beyond float64 precision", base: `[9007199254740993, 0.30000000000000004]`, target: `[9007199254740992, 0.3]`,
			want: []change{
				{Path: "0", Type: changeChanged, OldValue: num("9007199254740993"), NewValue: num("9007199254740992")},
				{Path: "1", Type: changeChanged, OldValue: num("0.30000000000000004"), NewValue: num("0.3")},
			},
		},
		{
			name: "keys that need quoting", base: `{"byId":{"42":{"n":1}},"ui":{"theme.dark":true,"":1}}`, target: `{"byId":{"42":{"n":2}},"ui":{"theme.dark":false,"":2}}`,
			want: []change{
				{Path: `byId["42"].n`, Type: changeChanged, OldValue: num("1"), NewValue: num("2")},
				{Path: `ui[""]`, Type: changeChanged, OldValue: num("1"), NewValue: num("2")},
				{Path: `ui["theme.dark"]`, Type: changeChanged, OldValue: true, NewValue: false},
			},
		},
		{
			name: "keys sort by bytes", base: `{"b":1,"B":1,"é":1,"a":1}`, target: `{"b":2,"B":2,"é":2,"a":2}`,
			want: []change{
				{Path: "B", Type: changeChanged, OldValue: num("1"), NewValue: num("2")},
				{Path: "a", Type: changeChanged, OldValue: num("1"), NewValue: num("2")},
				{Path: "b", Type: changeChanged, OldValue: num("1"), NewValue: num("2")},
				{Path: "é", Type: changeChanged, OldValue: num("1"), NewValue: num("2")},
			},
		},
		{
			name: "truncated at the limit, total counts all", base: `{"a":1,"b":[1,2],"c":{"d":1}}`, target: `{"a":2,"b":[],"c":{"d":2},"e":1}`, limit: 2,
			want: []change{
				{Path: "a", Type: changeChanged, OldValue: num("1"), NewValue: num("2")},
				{Path: "b.0", Type: changeRemoved, OldValue: num("1")},
			},
			wantTotal: 5,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			limit := tt.limit
			if limit == 0 {
				limit = 1 << 30
			}
			wantTotal := tt.wantTotal
			if wantTotal == 0 {
				wantTotal = len(tt.want)
			}
			base, target := decodeStateJSON(t, tt.base), decodeStateJSON(t, tt.target)
			got, total := diffValues(base, target, limit)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("changes mismatch (-want +got):\n%s", diff)
			}
			if total != wantTotal {
				t.Errorf("total = %d, want %d", total, wantTotal)
			}
		})
	}
}

func TestDiffValuesLimitZeroOnlyCounts(t *testing.T) {
	got, total := diffValues(decodeStateJSON(t, `[1,2,3]`), decodeStateJSON(t, `[4,5,6]`), 0)
	if len(got) != 0 || total != 3 {
		t.Errorf("diffValues(limit 0) = %d changes, total %d; want 0, 3", len(got), total)
	}
}

func TestDiffValuesDeterministic(t *testing.T) {
	t.Parallel()
	base := largeReduxState(128<<10, 5)
	target := mutateLeaves(base, 0.05, 6)
	// Add and remove keys too, so the object walk takes its slower branch.
	target.(map[string]any)["catalog"].(map[string]any)["byId"].(map[string]any)["sku-new"] = "x"
	delete(target.(map[string]any)["catalog"].(map[string]any)["byId"].(map[string]any), "sku-000003")
	first, firstTotal := diffValues(base, target, 1<<20)
	if firstTotal < 100 {
		t.Fatalf("only %d changes; the test needs many to be meaningful", firstTotal)
	}
	for range 20 {
		// Fresh copies get fresh map iteration orders.
		got, total := diffValues(cloneDecoded(base), cloneDecoded(target), 1<<20)
		if total != firstTotal {
			t.Fatalf("total = %d, first run %d", total, firstTotal)
		}
		if diff := cmp.Diff(first, got); diff != "" {
			t.Fatalf("runs differ (-first +later):\n%s", diff)
		}
	}
}

func TestChangeMarshalJSON(t *testing.T) {
	tests := []struct {
		name string
		in   change
		want string
	}{
		{"added", change{Path: "a", Type: changeAdded, NewValue: num("1")}, `{"path":"a","type":"added","newValue":1}`},
		{"added null", change{Path: "a", Type: changeAdded}, `{"path":"a","type":"added","newValue":null}`},
		{"removed", change{Path: "a.0", Type: changeRemoved, OldValue: "x"}, `{"path":"a.0","type":"removed","oldValue":"x"}`},
		{"removed null", change{Path: "a", Type: changeRemoved}, `{"path":"a","type":"removed","oldValue":null}`},
		{"changed from null", change{Path: "a", Type: changeChanged, NewValue: true}, `{"path":"a","type":"changed","oldValue":null,"newValue":true}`},
		{"changed to null", change{Path: "a", Type: changeChanged, OldValue: map[string]any{"b": []any{}}}, `{"path":"a","type":"changed","oldValue":{"b":[]},"newValue":null}`},
		{"root path", change{Path: "", Type: changeChanged, OldValue: num("1"), NewValue: num("2")}, `{"path":"","type":"changed","oldValue":1,"newValue":2}`},
		{"quoted path", change{Path: `ui["theme.dark"]`, Type: changeAdded, NewValue: "<b>"}, `{"path":"ui[\"theme.dark\"]","type":"added","newValue":"<b>"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.in.MarshalJSON()
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tt.want {
				t.Errorf("MarshalJSON:\n got %s\nwant %s", got, tt.want)
			}
			// Inside a larger value the encoder applies its own HTML
			// escaping; the result must still be valid and equal.
			outer, err := json.Marshal([]change{tt.in})
			if err != nil {
				t.Fatal(err)
			}
			var gotAny, wantAny any
			if err := json.Unmarshal(outer, &gotAny); err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal([]byte("["+tt.want+"]"), &wantAny); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(wantAny, gotAny); diff != "" {
				t.Errorf("inside json.Marshal mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestNumbersEqual(t *testing.T) {
	tests := []struct {
		a, b string
		want bool
	}{
		{"1", "1", true},
		{"1", "1.0", true},
		{"1", "1e0", true},
		{"1", "10e-1", true},
		{"1", "0.1E+1", true},
		{"100", "1e2", true},
		{"0", "-0", true},
		{"0", "0.000e5", true},
		{"-0.0", "0e-7", true},
		{"123.4500", "1234.5e-1", true},
		{"-1.5", "-15e-1", true},
		{"1", "2", false},
		{"1", "-1", false},
		{"1", "10", false},
		{"1", "1.0000000000000001", false},
		{"9007199254740993", "9007199254740992", false},
		{"12", "21", false},
		{"1e400", "10e399", true},
		{"1e400", "1e401", false},
		{"1e999999999999999999", "1e999999999999999999", true}, // same text
		{"1e999999999999999999", "10e999999999999999998", false},
		{"01", "1", false},   // not JSON number text: compared as text
		{"1.", "1", false},   // likewise
		{"abc", "abc", true}, // likewise, and equal as text
	}
	for _, tt := range tests {
		t.Run(tt.a+"_"+tt.b, func(t *testing.T) {
			if got := numbersEqual(tt.a, tt.b); got != tt.want {
				t.Errorf("numbersEqual(%q, %q) = %v, want %v", tt.a, tt.b, got, tt.want)
			}
			if got := numbersEqual(tt.b, tt.a); got != tt.want {
				t.Errorf("numbersEqual(%q, %q) = %v, want %v", tt.b, tt.a, got, tt.want)
			}
		})
	}
}

// FuzzNumbersEqual checks numbersEqual against exact rational arithmetic,
// for exponents small enough for big.Rat to expand.
func FuzzNumbersEqual(f *testing.F) {
	for _, seed := range [][2]string{{"1", "1.0"}, {"100", "1e2"}, {"0", "-0"}, {"9007199254740993", "9007199254740992"}, {"0.5", "5e-1"}} {
		f.Add(seed[0], seed[1])
	}
	f.Fuzz(func(t *testing.T, a, b string) {
		if !isSmallJSONNumber(a) || !isSmallJSONNumber(b) {
			return
		}
		x, _ := new(big.Rat).SetString(a)
		y, _ := new(big.Rat).SetString(b)
		if want := x.Cmp(y) == 0; numbersEqual(a, b) != want {
			t.Errorf("numbersEqual(%q, %q) = %v, want %v", a, b, !want, want)
		}
	})
}

// isSmallJSONNumber reports whether s is JSON number text that encoding/json
// accepts, with an exponent big.Rat can expand quickly.
func isSmallJSONNumber(s string) bool {
	var n json.Number
	if json.Unmarshal([]byte(s), &n) != nil || string(n) != s {
		return false
	}
	if i := strings.IndexAny(s, "eE"); i >= 0 {
		exp, err := strconv.Atoi(s[i+1:])
		return err == nil && -1000 < exp && exp < 1000
	}
	return true
}

// applyChanges applies changes, as diffValues reported them, to root (which
// it modifies) and returns the new root. It fails the test when a change
// does not fit: an added key that exists, an array element added anywhere
// but at the end, a path that does not resolve.
func applyChanges(t testing.TB, root any, changes []change) any {
	t.Helper()
	// Elements removed from the end of an array must go last first, so
	// each is the last element when its turn comes.
	var arrayRemovals []change
	for _, c := range changes {
		segs, err := parsePath(c.Path)
		if err != nil {
			t.Fatalf("change path %q: %v", c.Path, err)
		}
		if c.Type == changeRemoved {
			parent, miss := resolvePath(root, segs[:len(segs)-1])
			if miss != nil {
				t.Fatalf("parent of removed %q does not resolve: %+v", c.Path, miss)
			}
			if _, ok := parent.([]any); ok {
				arrayRemovals = append(arrayRemovals, c)
				continue
			}
		}
		root = applyChange(t, root, segs, c)
	}
	for i := len(arrayRemovals) - 1; i >= 0; i-- {
		segs, _ := parsePath(arrayRemovals[i].Path)
		root = applyChange(t, root, segs, arrayRemovals[i])
	}
	return root
}

func applyChange(t testing.TB, node any, segs []pathSegment, c change) any {
	t.Helper()
	if len(segs) == 0 {
		if c.Type != changeChanged {
			t.Fatalf("%s change at the root; only changed can be", c.Type)
		}
		return c.NewValue
	}
	seg, last := segs[0], len(segs) == 1
	switch n := node.(type) {
	case map[string]any:
		old, exists := n[seg.Key]
		switch {
		case !last:
			if !exists {
				t.Fatalf("change %q: no key %q on the way", c.Path, seg.Key)
			}
			n[seg.Key] = applyChange(t, old, segs[1:], c)
		case c.Type == changeAdded:
			if exists {
				t.Fatalf("added %q already exists", c.Path)
			}
			n[seg.Key] = c.NewValue
		case c.Type == changeRemoved:
			if !exists {
				t.Fatalf("removed %q does not exist", c.Path)
			}
			delete(n, seg.Key)
		default:
			if !exists {
				t.Fatalf("changed %q does not exist", c.Path)
			}
			n[seg.Key] = c.NewValue
		}
		return n
	case []any:
		i, ok := parseIndex(seg)
		switch {
		case !ok:
			t.Fatalf("change %q: segment %+v on an array is no index", c.Path, seg)
		case c.Type == changeAdded && last:
			if i != len(n) {
				t.Fatalf("added %q is not at the end of an array of %d", c.Path, len(n))
			}
			return append(n, c.NewValue)
		case i >= len(n):
			t.Fatalf("change %q: index %d beyond an array of %d", c.Path, i, len(n))
		case !last:
			n[i] = applyChange(t, n[i], segs[1:], c)
		case c.Type == changeRemoved:
			if i != len(n)-1 {
				t.Fatalf("removed %q is not the last of an array of %d", c.Path, len(n))
			}
			return n[:i]
		default:
			n[i] = c.NewValue
		}
		return n
	}
	t.Fatalf("change %q steps into a %T", c.Path, node)
	return nil
}

// numbersByValue makes cmp treat numerically equal numbers as equal, as the
// diff does.
var numbersByValue = cmp.Comparer(func(x, y json.Number) bool { return numbersEqual(string(x), string(y)) })

// fuzzDiffSeeds are pairs of real snapshot-like documents.
var fuzzDiffSeeds = [][2]string{
	{`{"a":1}`, `{"a":2}`},
	{`{"a":null}`, `{}`},
	{`[1,2,3]`, `[1]`},
	{`[1]`, `[1,{"b":[null]},3]`},
	{`{"byId":{"42":{"n":1}},"ui":{"theme.dark":true,"":[]}}`, `{"byId":{"42":{"n":1.0},"43":{}},"ui":{"theme.dark":"yes"}}`},
	{`{"routes":[{"name":"Home"},{"name":"Cart","params":{"id":7}}],"index":1}`, `{"routes":[{"name":"Home"}],"index":0}`},
	{`1`, `"1"`},
	{`null`, `{}`},
	{`{"a\"b":{"[x]":1}}`, `{"a\"b":{"[x]":2,"\u00e9":3}}`},
}

func FuzzDiff(f *testing.F) {
	for _, s := range fuzzDiffSeeds {
		f.Add([]byte(s[0]), []byte(s[1]))
	}
	small := mustMarshalState(largeReduxState(4<<10, 1))
	f.Add(small, mustMarshalState(mutateLeaves(largeReduxState(4<<10, 1), 0.1, 1)))
	f.Fuzz(func(t *testing.T, baseJSON, targetJSON []byte) {
		base, err := decodeState(baseJSON)
		if err != nil {
			return
		}
		target, err := decodeState(targetJSON)
		if err != nil {
			return
		}

		changes, total := diffValues(base, target, 1<<30)
		if len(changes) != total {
			t.Fatalf("%d changes but total %d with no limit in reach", len(changes), total)
		}

		// A diff against itself or a copy is empty.
		if c, n := diffValues(base, base, 10); len(c) != 0 || n != 0 {
			t.Fatalf("diff of a value with itself: %d changes %+v", n, c)
		}
		if c, n := diffValues(base, cloneDecoded(base), 10); len(c) != 0 || n != 0 {
			t.Fatalf("diff of a value with its copy: %d changes %+v", n, c)
		}

		for i, c := range changes {
			segs, err := parsePath(c.Path)
			if err != nil {
				t.Fatalf("change path %q does not parse: %v", c.Path, err)
			}
			if canon := formatPath(segs); canon != c.Path {
				t.Fatalf("change path %q is not canonical (%q)", c.Path, canon)
			}
			on, want := target, c.NewValue
			if c.Type == changeRemoved {
				on, want = base, c.OldValue
			}
			got, miss := resolvePath(on, segs)
			if miss != nil {
				t.Fatalf("%s path %q does not resolve: %+v", c.Type, c.Path, miss)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Fatalf("%s %q: value at path differs from the change's (-change +resolved):\n%s", c.Type, c.Path, diff)
			}
			if c.Type == changeChanged {
				if old, miss := resolvePath(base, segs); miss != nil || !cmp.Equal(old, c.OldValue) {
					t.Fatalf("changed %q: oldValue is not the base's value", c.Path)
				}
			}
			if i > 0 && comparePaths(changes[i-1].Path, c.Path) >= 0 {
				t.Fatalf("changes out of order: %q then %q", changes[i-1].Path, c.Path)
			}
			checkChangeJSON(t, c)
		}

		// Applying the changes to a copy of base gives target.
		got := applyChanges(t, cloneDecoded(base), changes)
		if diff := cmp.Diff(target, got, numbersByValue); diff != "" {
			t.Fatalf("base with the changes applied differs from target (-target +applied):\n%s", diff)
		}

		// A limit keeps a prefix of the full list and the full total.
		for _, limit := range []int{0, 1, total / 2, total, total + 1} {
			c, n := diffValues(base, target, limit)
			if n != total || len(c) != min(limit, total) {
				t.Fatalf("limit %d: %d changes, total %d; want %d, %d", limit, len(c), n, min(limit, total), total)
			}
			if diff := cmp.Diff(changes[:len(c)], c); len(c) > 0 && diff != "" {
				t.Fatalf("limit %d: not a prefix of the full list (-full +limited):\n%s", limit, diff)
			}
		}
	})
}

// comparePaths orders two change paths as the diff walk visits them: step by
// step, object keys by bytes and array indexes by number.
func comparePaths(a, b string) int {
	x, _ := parsePath(a)
	y, _ := parsePath(b)
	for i := range min(len(x), len(y)) {
		if x[i] == y[i] {
			continue
		}
		xi, xIsIndex := parseIndex(x[i])
		yi, yIsIndex := parseIndex(y[i])
		if xIsIndex && yIsIndex {
			return xi - yi
		}
		return strings.Compare(x[i].Key, y[i].Key)
	}
	return len(x) - len(y)
}

// checkChangeJSON checks that a change's JSON carries exactly the values
// its type calls for, null included.
func checkChangeJSON(t *testing.T, c change) {
	t.Helper()
	data, err := json.Marshal(c)
	if err != nil {
		t.Fatalf("marshal %+v: %v", c, err)
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(data, &fields); err != nil {
		t.Fatalf("change JSON %s: %v", data, err)
	}
	want := map[string]bool{"path": true, "type": true, "oldValue": c.Type != changeAdded, "newValue": c.Type != changeRemoved}
	for name, present := range want {
		if _, ok := fields[name]; ok != present {
			t.Fatalf("change JSON %s: field %s present=%v, want %v", data, name, ok, present)
		}
	}
	if len(fields) != 2+btoi(want["oldValue"])+btoi(want["newValue"]) {
		t.Fatalf("change JSON %s has extra fields", data)
	}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

func BenchmarkDiff(b *testing.B) {
	for _, size := range benchSizes {
		if size.name != "1MB" && size.name != "10MB" {
			continue
		}
		b.Run(size.name, func(b *testing.B) {
			s := benchStateOfSize(b, size.bytes)
			b.SetBytes(int64(len(s.baseJSON)))
			b.ReportAllocs()
			for b.Loop() {
				changes, total := diffValues(s.base, s.target, 500)
				if total != s.leafChanges || len(changes) != min(total, 500) {
					b.Fatalf("got %d changes of %d, want %d", len(changes), total, s.leafChanges)
				}
			}
			b.ReportMetric(float64(s.leafChanges), "changes")
		})
	}
}
