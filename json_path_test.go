package main

import (
	"encoding/json"
	"fmt"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// seg and quoted shorten the tables.
func seg(key string) pathSegment    { return pathSegment{Key: key} }
func quoted(key string) pathSegment { return pathSegment{Key: key, Quoted: true} }

func TestParsePath(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want []pathSegment
	}{
		{"root", "", nil},
		{"one key", "a", []pathSegment{seg("a")}},
		{"keys and index", "routes.0.name", []pathSegment{seg("routes"), seg("0"), seg("name")}},
		{"index at the root", "0.name", []pathSegment{seg("0"), seg("name")}},
		{"big index", "list.12345678901234567890", []pathSegment{seg("list"), seg("12345678901234567890")}},
		// Quoted is set only where it changes the meaning: on a quoted
		// canonical decimal, which must not index an array.
		{"quoted key with a dot", `settings["theme.dark"]`, []pathSegment{seg("settings"), seg("theme.dark")}},
		{"quoted digits", `byId["42"]`, []pathSegment{seg("byId"), quoted("42")}},
		{"quoted zero", `a["0"]`, []pathSegment{seg("a"), quoted("0")}},
		{"quoted leading zero needs no flag", `a["007"]`, []pathSegment{seg("a"), seg("007")}},
		{"quoted first", `["x"].y`, []pathSegment{seg("x"), seg("y")}},
		{"quoted twice", `["x"]["y"]`, []pathSegment{seg("x"), seg("y")}},
		{"quoted then index", `["a.b"].3`, []pathSegment{seg("a.b"), seg("3")}},
		{"empty key", `a[""]`, []pathSegment{seg("a"), seg("")}},
		{"only an empty key", `[""]`, []pathSegment{seg("")}},
		{"lenient dot before bracket", `a.["b"]`, []pathSegment{seg("a"), seg("b")}},
		{"lenient dot before quoted digits", `a.["1"]`, []pathSegment{seg("a"), quoted("1")}},
		{"lenient dot before bracket, then more", `a.["b"].c`, []pathSegment{seg("a"), seg("b"), seg("c")}},
		{"bare digits stay unquoted", "byId.42", []pathSegment{seg("byId"), seg("42")}},
		{"leading zero is a plain key", "a.007", []pathSegment{seg("a"), seg("007")}},
		{"zero is an index", "a.0", []pathSegment{seg("a"), seg("0")}},
		{"negative is a key", "a.-1", []pathSegment{seg("a"), seg("-1")}},
		{"exponent is a key", "a.1e3", []pathSegment{seg("a"), seg("1e3")}},
		{"other characters are bare", "a b.c-d.$x.ünï.a\\b.😀", []pathSegment{seg("a b"), seg("c-d"), seg("$x"), seg("ünï"), seg(`a\b`), seg("😀")}},
		{"control character bare", "a\tb", []pathSegment{seg("a\tb")}},
		{"brackets inside quotes", `["]"]["["]`, []pathSegment{seg("]"), seg("[")}},
		{"escapes", `["q\"b\\s\/n\nt\tr\rb\bf\f"]`, []pathSegment{seg("q\"b\\s/n\nt\tr\rb\bf\f")}},
		{"escaped digits", `["\u0031\u0032"]`, []pathSegment{quoted("12")}},
		{"unicode escapes", `["\u00e9\u00E9\ud83d\ude00"]`, []pathSegment{seg("éé😀")}},
		{"lone high surrogate", `["\ud800x"]`, []pathSegment{seg("\uFFFDx")}},
		{"lone low surrogate", `["\udc00"]`, []pathSegment{seg("\uFFFD")}},
		{"high surrogate then other escape", `["\ud800\u0041"]`, []pathSegment{seg("\uFFFDA")}},
		{"NUL escape", `["\u0000"]`, []pathSegment{seg("\x00")}},
		{"invalid UTF-8 bare", "a.\xff\xfe", []pathSegment{seg("a"), seg("\xff\xfe")}},
		{"invalid UTF-8 quoted", "[\"\xff.\"]", []pathSegment{seg("\xff.")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parsePath(tt.in)
			if err != nil {
				t.Fatalf("parsePath(%q) error: %v", tt.in, err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("parsePath(%q) mismatch (-want +got):\n%s", tt.in, diff)
			}
		})
	}
}

func TestParsePathErrors(t *testing.T) {
	tests := []struct {
		in      string
		wantErr string
	}{
		{"a..b", `at byte 2: expected a key after "."`},
		{".a", `at byte 0: a path cannot start with "." (the root is "")`},
		{".", `at byte 0: a path cannot start with "." (the root is "")`},
		{`.["a"]`, `at byte 0: a path cannot start with "." (the root is "")`},
		{"a.", `at byte 2: expected a key after "."`},
		{`["a"].`, `at byte 6: expected a key after "."`},
		{"a[b]", `at byte 2: expected '"' after "[" (an index is written .0, a key ["…"])`},
		{"a[0]", `at byte 2: expected '"' after "[" (an index is written .0, a key ["…"])`},
		{"a[", `at byte 2: expected '"' after "[" (an index is written .0, a key ["…"])`},
		{"a.[", `at byte 3: expected '"' after "[" (an index is written .0, a key ["…"])`},
		{`a["b"`, `at byte 5: expected "]" after the quoted key`},
		{`a["b"x]`, `at byte 5: expected "]" after the quoted key`},
		{`a["b"]c`, `at byte 6: expected "." or "[" after "]", found 'c'`},
		{`a["b"]]`, `at byte 6: expected "." or "[" after "]", found ']'`},
		{`a["b"]` + "\xff", `at byte 6: expected "." or "[" after "]", found byte 0xff`},
		{`["bad \x escape"]`, `at byte 6: invalid escape "\x" in a quoted key`},
		{"[\"\\\xff\"]", `at byte 2: invalid escape in a quoted key`},
		{`["\u12"]`, `at byte 2: invalid \u escape in a quoted key (want \u and four hex digits)`},
		{`["\u12g4"]`, `at byte 2: invalid \u escape in a quoted key (want \u and four hex digits)`},
		{`["a\`, `at byte 3: unterminated escape in a quoted key`},
		{`["a`, `at byte 1: unterminated quoted key`},
		{`a["b`, `at byte 2: unterminated quoted key`},
		{`["`, `at byte 1: unterminated quoted key`},
		{"[\"a\nb\"]", `at byte 3: control character 0x0a in a quoted key (escape it)`},
		{`a"b`, `at byte 1: unexpected '"' in a key (write such a key as ["…"])`},
		{`a."c"`, `at byte 2: unexpected '"' in a key (write such a key as ["…"])`},
		{"a]b", `at byte 1: unexpected "]" in a key (write such a key as ["…"])`},
		{"]", `at byte 0: unexpected "]" in a key (write such a key as ["…"])`},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := parsePath(tt.in)
			if err == nil {
				t.Fatalf("parsePath(%q) = %v, want error %q", tt.in, got, tt.wantErr)
			}
			if err.Error() != tt.wantErr {
				t.Errorf("parsePath(%q) error:\n got %s\nwant %s", tt.in, err, tt.wantErr)
			}
		})
	}
}

func TestFormatPath(t *testing.T) {
	tests := []struct {
		name string
		in   []pathSegment
		want string
	}{
		{"root", nil, ""},
		{"key", []pathSegment{seg("a")}, "a"},
		{"index at the root", []pathSegment{seg("0")}, "0"},
		{"key then index", []pathSegment{seg("routes"), seg("17"), seg("name")}, "routes.17.name"},
		{"quoted digits are a key", []pathSegment{seg("byId"), quoted("42")}, `byId["42"]`},
		{"quoted digits first", []pathSegment{quoted("42"), seg("a")}, `["42"].a`},
		{"digits with a leading zero are a key", []pathSegment{seg("a"), seg("007")}, `a["007"]`},
		{"quoted plain key is written bare", []pathSegment{quoted("a"), quoted("b")}, "a.b"},
		{"empty key", []pathSegment{seg("a"), seg("")}, `a[""]`},
		{"dot", []pathSegment{seg("settings"), seg("theme.dark")}, `settings["theme.dark"]`},
		{"brackets", []pathSegment{seg("a[0]"), seg("]")}, `["a[0]"]["]"]`},
		{"quote", []pathSegment{seg(`say "hi"`)}, `["say \"hi\""]`},
		{"backslash alone stays bare", []pathSegment{seg(`a\b`)}, `a\b`},
		{"backslash escaped when quoted", []pathSegment{seg(`a.b\c`)}, `["a.b\\c"]`},
		{"control characters escaped when quoted", []pathSegment{seg("a.\n\t\r\b\f\x01\x1f")}, `["a.\n\t\r\b\f\u0001\u001f"]`},
		{"control character bare", []pathSegment{seg("line\nbreak")}, "line\nbreak"},
		{"other characters bare", []pathSegment{seg("a b"), seg("$x"), seg("-"), seg("ünï"), seg("-1")}, "a b.$x.-.ünï.-1"},
		{"non-ASCII quoted verbatim", []pathSegment{seg("é.😀")}, `["é.😀"]`},
		{"invalid UTF-8 bare", []pathSegment{seg("\xff")}, "\xff"},
		{"invalid UTF-8 quoted", []pathSegment{seg("\xff.")}, "[\"\xff.\"]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := formatPath(tt.in); got != tt.want {
				t.Errorf("formatPath(%v) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestAppendPath(t *testing.T) {
	tests := []struct {
		name string
		got  []byte
		want string
	}{
		{"key at the start", appendPathKey(nil, "a"), "a"},
		{"key after a key", appendPathKey([]byte("x"), "a"), "x.a"},
		{"quoted key at the start", appendPathKey(nil, "a.b"), `["a.b"]`},
		{"quoted key after a key", appendPathKey([]byte("x"), "a.b"), `x["a.b"]`},
		{"digit key", appendPathKey([]byte("byId"), "42"), `byId["42"]`},
		{"index at the start", appendPathIndex(nil, 3), "3"},
		{"index after a key", appendPathIndex([]byte("x"), 17), "x.17"},
		{"index after an index", appendPathIndex([]byte("x.0"), 0), "x.0.0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if string(tt.got) != tt.want {
				t.Errorf("got %q, want %q", tt.got, tt.want)
			}
		})
	}
}

// resolveTestDoc covers every kind of step a path can take.
const resolveTestDoc = `{
	"routes": [{"name": "Home", "params": {"id": "7"}}, {"name": "Cart"}],
	"byId": {"42": {"title": "x"}, "007": "bond"},
	"settings": {"theme.dark": true, "": "empty"},
	"nothing": null,
	"count": 3,
	"empty": {}
}`

func TestResolvePath(t *testing.T) {
	doc := decodeStateJSON(t, resolveTestDoc)
	tests := []struct {
		path string
		want any
	}{
		{"", doc},
		{"routes.0.name", "Home"},
		{"routes.1", map[string]any{"name": "Cart"}},
		{"routes.0.params.id", "7"},
		{"byId.42.title", "x"}, // a bare digit on an object names that key
		{`byId["42"].title`, "x"},
		{"byId.007", "bond"},
		{`byId["007"]`, "bond"},
		{`settings["theme.dark"]`, true},
		{`settings.["theme.dark"]`, true},
		{`settings[""]`, "empty"},
		{"nothing", nil},
		{"count", json.Number("3")},
		{"empty", map[string]any{}},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			segs, err := parsePath(tt.path)
			if err != nil {
				t.Fatal(err)
			}
			got, miss := resolvePath(doc, segs)
			if miss != nil {
				t.Fatalf("resolvePath(%q) missed: %+v", tt.path, miss)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("resolvePath(%q) mismatch (-want +got):\n%s", tt.path, diff)
			}
		})
	}
}

func TestResolvePathMiss(t *testing.T) {
	doc := decodeStateJSON(t, resolveTestDoc)
	topKeys := []string{"byId", "count", "empty", "nothing", "routes", "settings"}
	tests := []struct {
		path string
		want pathMiss
	}{
		{"missing", pathMiss{ResolvedPrefix: "", Available: topKeys, Segment: "missing"}},
		{"0", pathMiss{ResolvedPrefix: "", Available: topKeys, Segment: "0"}},
		{"routes.2", pathMiss{ResolvedPrefix: "routes", Available: map[string]int{"length": 2}, Segment: "2"}},
		// A quoted digit is always a key, so it never indexes an array.
		{`routes["0"]`, pathMiss{ResolvedPrefix: "routes", Available: map[string]int{"length": 2}, Segment: `["0"]`}},
		{"routes.00", pathMiss{ResolvedPrefix: "routes", Available: map[string]int{"length": 2}, Segment: `["00"]`}},
		{`routes["1"].name`, pathMiss{ResolvedPrefix: "routes", Available: map[string]int{"length": 2}, Segment: `["1"]`}},
		{"routes.name", pathMiss{ResolvedPrefix: "routes", Available: map[string]int{"length": 2}, Segment: "name"}},
		{"routes.99999999999999999999", pathMiss{ResolvedPrefix: "routes", Available: map[string]int{"length": 2}, Segment: "99999999999999999999"}},
		{"routes.0.missing", pathMiss{ResolvedPrefix: "routes.0", Available: []string{"name", "params"}, Segment: "missing"}},
		{"byId.43", pathMiss{ResolvedPrefix: "byId", Available: []string{"007", "42"}, Segment: "43"}},
		// The prefix is canonical: the bare 42 named a key, so it reads ["42"].
		{"byId.42.title.x", pathMiss{ResolvedPrefix: `byId["42"].title`, Available: nil, Segment: "x"}},
		{"routes.0.params.id.0", pathMiss{ResolvedPrefix: "routes.0.params.id", Available: nil, Segment: "0"}},
		{"nothing.x", pathMiss{ResolvedPrefix: "nothing", Available: nil, Segment: "x"}},
		{"count.0", pathMiss{ResolvedPrefix: "count", Available: nil, Segment: "0"}},
		{`settings.["theme.dark"].x`, pathMiss{ResolvedPrefix: `settings["theme.dark"]`, Available: nil, Segment: "x"}},
		{`settings["a.b"]`, pathMiss{ResolvedPrefix: "settings", Available: []string{"", "theme.dark"}, Segment: `["a.b"]`}},
		{"empty.x", pathMiss{ResolvedPrefix: "empty", Available: []string{}, Segment: "x"}},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			segs, err := parsePath(tt.path)
			if err != nil {
				t.Fatal(err)
			}
			got, miss := resolvePath(doc, segs)
			if miss == nil {
				t.Fatalf("resolvePath(%q) = %v, want a miss", tt.path, got)
			}
			if diff := cmp.Diff(&tt.want, miss); diff != "" {
				t.Errorf("resolvePath(%q) miss mismatch (-want +got):\n%s", tt.path, diff)
			}
		})
	}
}

func TestResolvePathRootArray(t *testing.T) {
	doc := decodeStateJSON(t, `[{"a": 1}, 2]`)
	got, miss := resolvePath(doc, []pathSegment{seg("0"), seg("a")})
	if miss != nil || got != json.Number("1") {
		t.Errorf(`resolvePath(0.a) = %v, %+v; want 1, nil`, got, miss)
	}
	_, miss = resolvePath(doc, []pathSegment{seg("2")})
	want := &pathMiss{ResolvedPrefix: "", Available: map[string]int{"length": 2}, Segment: "2"}
	if diff := cmp.Diff(want, miss); diff != "" {
		t.Errorf("resolvePath(2) miss mismatch (-want +got):\n%s", diff)
	}
}

func TestResolvePathAvailableSmallest(t *testing.T) {
	// Keys in no particular order, many more than the bound: Available must
	// hold exactly the smallest ones, sorted.
	big := map[string]any{}
	var all []string
	for i := range 5000 {
		k := strconv.Itoa(i * 7919 % 10007)
		big[k] = nil
		all = append(all, k)
	}
	slices.Sort(all)
	for range 5 { // map iteration order differs each time
		_, miss := resolvePath(big, []pathSegment{seg("x")})
		if diff := cmp.Diff(all[:maxAvailableKeys], miss.Available); diff != "" || miss.AvailableTotal != 5000 {
			t.Fatalf("available mismatch (total %d) (-want +got):\n%s", miss.AvailableTotal, diff)
		}
	}
}

func TestResolvePathAvailableBound(t *testing.T) {
	big := map[string]any{}
	var all []string
	for i := range maxAvailableKeys + 50 {
		k := fmt.Sprintf("k%03d", i)
		big[k] = i
		all = append(all, k)
	}
	_, miss := resolvePath(map[string]any{"big": big}, []pathSegment{seg("big"), seg("nope")})
	want := &pathMiss{
		ResolvedPrefix: "big",
		Available:      all[:maxAvailableKeys],
		AvailableTotal: maxAvailableKeys + 50,
		Segment:        "nope",
	}
	if diff := cmp.Diff(want, miss); diff != "" {
		t.Errorf("miss mismatch (-want +got):\n%s", diff)
	}
	// Exactly at the bound nothing is cut, so no total is reported.
	delete(big, "k149")
	for i := maxAvailableKeys; i < maxAvailableKeys+49; i++ {
		delete(big, all[i])
	}
	_, miss = resolvePath(map[string]any{"big": big}, []pathSegment{seg("big"), seg("nope")})
	if len(miss.Available.([]string)) != maxAvailableKeys || miss.AvailableTotal != 0 {
		t.Errorf("at the bound: %d keys, total %d; want %d keys, total 0", len(miss.Available.([]string)), miss.AvailableTotal, maxAvailableKeys)
	}
}

// pathErrorPattern is the shape every parse error must have.
var pathErrorPattern = regexp.MustCompile(`^at byte (\d+): .+`)

// fuzzPathSeeds are real paths from the spec and the tables above.
var fuzzPathSeeds = []string{
	"", "a", "routes.0.name", `settings["theme.dark"]`, `byId["42"]`, `["x"].y`, `a.["b"]`,
	"a.007", `[""]`, `["q\"\\\u00e9\ud800"]`, "a..b", ".a", "a.", "a[b]", `a["b"`, `a["b"]c`,
	`["bad \x escape"]`, "catalog.byId.sku-000001.stock[\"warehouse.berlin\"]", "users.byId.1000.orders.0",
	"a.\xff", "[\"\xff.\"]",
}

func FuzzPathRoundTrip(f *testing.F) {
	for _, s := range fuzzPathSeeds {
		f.Add(s, "theme.dark", uint(3))
	}
	f.Add("x", "", uint(0))
	f.Add("x", "42", uint(1))
	f.Add("x", "\xff[", uint(12))
	f.Fuzz(func(t *testing.T, s, key string, index uint) {
		// Property 1: keys and indexes written with appendPathKey and
		// appendPathIndex come back exactly, and keys never read as indexes.
		idx := int(index % (1 << 31))
		built := appendPathKey(nil, key)
		built = appendPathIndex(built, idx)
		built = appendPathKey(built, key)
		segs, err := parsePath(string(built))
		if err != nil {
			t.Fatalf("parsePath(%q) built from key %q: %v", built, key, err)
		}
		if len(segs) != 3 || segs[0].Key != key || segs[2].Key != key || segs[1] != seg(strconv.Itoa(idx)) {
			t.Fatalf("parsePath(%q) = %+v, want key %q, index %d, key %q", built, segs, key, idx, key)
		}
		for _, s := range []pathSegment{segs[0], segs[2]} {
			if _, isIndex := parseIndex(s); isIndex {
				t.Errorf("key %q parsed from %q could index an array", key, built)
			}
		}
		if got := formatPath(segs); got != string(built) {
			t.Errorf("formatPath(parsePath(%q)) = %q, want it unchanged", built, got)
		}

		// Property 2: any string either fails with a located error or has a
		// canonical form that parses to the same segments and is a fixed
		// point of formatting.
		segs, err = parsePath(s)
		if err != nil {
			m := pathErrorPattern.FindStringSubmatch(err.Error())
			if m == nil {
				t.Fatalf("parsePath(%q) error %q lacks its byte offset", s, err)
			}
			if off, _ := strconv.Atoi(m[1]); off > len(s) {
				t.Fatalf("parsePath(%q) error %q points past the end", s, err)
			}
			return
		}
		canonical := formatPath(segs)
		again, err := parsePath(canonical)
		if err != nil {
			t.Fatalf("parsePath(formatPath(parsePath(%q)) = %q): %v", s, canonical, err)
		}
		if diff := cmp.Diff(segs, again); diff != "" {
			t.Fatalf("%q re-formatted as %q parses differently (-first +second):\n%s", s, canonical, diff)
		}
		if got := formatPath(again); got != canonical {
			t.Fatalf("canonical %q re-formats as %q", canonical, got)
		}
	})
}

// fuzzResolveDoc is a real shape with the awkward keys paths must handle.
const fuzzResolveDoc = `{"catalog":{"byId":{"42":{"title":"x","tags":["a","b"]},"sku-1":{"stock":{"warehouse.berlin":3}}}},` +
	`"ui":{"":null,"theme.dark":true,"007":[1,[2,{"x":null}]]},"list":[0,{"a":[]},"s"]}`

func FuzzResolve(f *testing.F) {
	for _, p := range append(fuzzPathSeeds, "catalog.byId.42.tags.1", `ui["007"].1.1.x`, "list.1.a.0", "ui[\"\"]", "catalog.byId.43") {
		f.Add(p, []byte(fuzzResolveDoc))
	}
	f.Add("0.a", []byte(`[{"a":1}]`))
	f.Add("", []byte(`null`))
	f.Fuzz(func(t *testing.T, path string, data []byte) {
		root, err := decodeState(data)
		if err != nil {
			return
		}
		segs, err := parsePath(path)
		if err != nil {
			return
		}
		got, miss := resolvePath(root, segs)

		// The canonical spelling of the path resolves the same way.
		canon, err := parsePath(formatPath(segs))
		if err != nil {
			t.Fatalf("canonical form of %q does not parse: %v", path, err)
		}
		got2, miss2 := resolvePath(root, canon)
		// reflect.DeepEqual, not cmp: cmp takes seconds on deeply nested
		// values, long enough for the fuzzer to take a worker for hung.
		if !reflect.DeepEqual(got, got2) || (miss == nil) != (miss2 == nil) {
			t.Fatalf("%q and its canonical form resolve differently: %v/%+v vs %v/%+v", path, got, miss, got2, miss2)
		}

		if miss == nil {
			// Every prefix of a hit is a hit, and the last step leads to got.
			for i := range segs {
				if _, m := resolvePath(root, segs[:i]); m != nil {
					t.Fatalf("%q hits but its prefix %q misses: %+v", path, formatPath(segs[:i]), m)
				}
			}
			return
		}

		// The miss names a prefix that resolves to the node where the
		// walk stopped, one step short of the failing segment.
		prefixSegs, err := parsePath(miss.ResolvedPrefix)
		if err != nil {
			t.Fatalf("resolvedPrefix %q does not parse: %v", miss.ResolvedPrefix, err)
		}
		n := len(prefixSegs)
		if n >= len(segs) {
			t.Fatalf("resolvedPrefix %q of %q is not a proper prefix", miss.ResolvedPrefix, path)
		}
		node, m := resolvePath(root, prefixSegs)
		if m != nil {
			t.Fatalf("resolvedPrefix %q does not resolve: %+v", miss.ResolvedPrefix, m)
		}
		if viaInput, m := resolvePath(root, segs[:n]); m != nil || !reflect.DeepEqual(node, viaInput) {
			t.Fatalf("resolvedPrefix %q and the input's first %d segments lead to different nodes", miss.ResolvedPrefix, n)
		}
		if failing, err := parsePath(miss.Segment); err != nil || len(failing) != 1 || failing[0] != segs[n] {
			t.Fatalf("segment %q does not spell the failing segment %+v (err %v)", miss.Segment, segs[n], err)
		}
		switch node := node.(type) {
		case map[string]any:
			if _, ok := node[segs[n].Key]; ok {
				t.Fatalf("%q missed at %q although the key %q exists", path, miss.ResolvedPrefix, segs[n].Key)
			}
			keys, ok := miss.Available.([]string)
			if !ok || !slices.IsSorted(keys) || len(keys) != min(len(node), maxAvailableKeys) {
				t.Fatalf("available at an object of %d keys = %#v", len(node), miss.Available)
			}
			listed := map[string]bool{}
			for _, k := range keys {
				if _, ok := node[k]; !ok {
					t.Fatalf("available lists %q, which the object lacks", k)
				}
				listed[k] = true
			}
			for k := range node {
				if !listed[k] && k < keys[len(keys)-1] {
					t.Fatalf("available left out %q, which sorts before the listed %q", k, keys[len(keys)-1])
				}
			}
		case []any:
			if i, ok := parseIndex(segs[n]); ok && i < len(node) {
				t.Fatalf("%q missed at %q although index %d exists", path, miss.ResolvedPrefix, i)
			}
			if diff := cmp.Diff(map[string]int{"length": len(node)}, miss.Available); diff != "" {
				t.Fatalf("available at an array mismatch (-want +got):\n%s", diff)
			}
		default:
			if miss.Available != nil {
				t.Fatalf("available at a scalar = %#v, want nil", miss.Available)
			}
		}
	})
}

func BenchmarkResolve(b *testing.B) {
	for _, size := range benchSizes {
		if size.name != "512KB" && size.name != "5MB" {
			continue
		}
		b.Run(size.name, func(b *testing.B) {
			state := benchStateOfSize(b, size.bytes).base
			// A deep hit, and a miss at the biggest object, which must
			// gather and sort its keys for Available.
			for _, bc := range []struct{ name, path string }{
				{"hit", `catalog.byId.sku-000123.stock["warehouse.berlin"]`},
				{"miss", "catalog.byId.sku-999999.title"},
			} {
				b.Run(bc.name, func(b *testing.B) {
					b.ReportAllocs()
					for b.Loop() {
						segs, err := parsePath(bc.path)
						if err != nil {
							b.Fatal(err)
						}
						_, miss := resolvePath(state, segs)
						if (miss == nil) != strings.HasSuffix(bc.name, "hit") {
							b.Fatalf("%s: miss = %+v", bc.path, miss)
						}
					}
				})
			}
		})
	}
}
