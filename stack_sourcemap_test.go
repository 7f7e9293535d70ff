package main

import (
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// readFixtureMap reads a map of testdata/sourcemaps.
func readFixtureMap(t testing.TB, name string) *sourceMap {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "sourcemaps", name))
	if err != nil {
		t.Fatal(err)
	}
	sm, err := readSourceMap(data)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return sm
}

// TestSourceMapMatchesSourceMapPackage: across the bundle the real Metro
// wrote, our lookups answer what the source-map package answered
// (positions.json), in Metro's index map (sections, x_facebook_sources)
// and in the same map without sections.
func TestSourceMapMatchesSourceMapPackage(t *testing.T) {
	data, err := os.ReadFile("testdata/sourcemaps/positions.json")
	if err != nil {
		t.Fatal(err)
	}
	var rows [][]any
	if err := json.Unmarshal(data, &rows); err != nil {
		t.Fatal(err)
	}
	indexed, plain := readFixtureMap(t, "index.android.bundle.map"), readFixtureMap(t, "index.plain.map")
	mapped := 0
	for _, r := range rows {
		line, col := int(r[0].(float64)), int(r[1].(float64))
		for _, c := range []struct {
			name string
			sm   *sourceMap
			want []any
		}{{"sections", indexed, r[2:6]}, {"plain", plain, r[6:10]}} {
			got, ok := c.sm.lookup(line, col)
			if want := expectedPosition(c.want); want != positionText(got, ok) {
				t.Errorf("%s %d:%d = %s, source-map says %s", c.name, line, col, positionText(got, ok), want)
			}
			if ok {
				mapped++
			}
		}
	}
	if mapped < 100 {
		t.Fatalf("only %d positions mapped: the fixture tests too little", mapped)
	}
}

func expectedPosition(v []any) string {
	if v[0] == nil {
		return "null"
	}
	name := ""
	if v[3] != nil {
		name = v[3].(string)
	}
	return v[0].(string) + ":" + strconv.Itoa(int(v[1].(float64))) + ":" + strconv.Itoa(int(v[2].(float64))) + ":" + name
}

func positionText(p mapPosition, ok bool) string {
	if !ok {
		return "null"
	}
	return p.Source + ":" + strconv.Itoa(p.Line) + ":" + strconv.Itoa(p.Column) + ":" + p.Name
}

// TestSourceMapFrames: the frames the real bundle threw, read as React
// Native writes them (name@line:column, the column from 0), map as the
// source-map package maps them (expected.json), the one at a section's
// first column included (source-map puts it in the section before, where
// nothing maps).
func TestSourceMapFrames(t *testing.T) {
	data, err := os.ReadFile("testdata/sourcemaps/expected.json")
	if err != nil {
		t.Fatal(err)
	}
	var fixture struct {
		Frames []struct {
			Frame            string
			Source           *string
			Line             *int
			Column           *int
			Name             *string
			MetroSymbolicate string
		}
	}
	if err := json.Unmarshal(data, &fixture); err != nil {
		t.Fatal(err)
	}
	sm := readFixtureMap(t, "index.android.bundle.map")
	for _, f := range fixture.Frames {
		frame, ok := parseFrameLine(f.Frame)
		if !ok || frame.Kind != frameBundle {
			t.Fatalf("%q read as %+v, %v", f.Frame, frame, ok)
		}
		_, line, col, ok := releasePosition(frame, androidBundle)
		if !ok {
			t.Fatalf("%q: no release position", f.Frame)
		}
		got, ok := sm.lookup(line, col)
		want := "null"
		if f.Source != nil {
			name := ""
			if f.Name != nil {
				name = *f.Name
			}
			want = *f.Source + ":" + strconv.Itoa(*f.Line) + ":" + strconv.Itoa(*f.Column) + ":" + name
		}
		if positionText(got, ok) != want {
			t.Errorf("%s = %s, source-map says %s", f.Frame, positionText(got, ok), want)
		}
		// metro-symbolicate prints source:line:name, the name the
		// function map's (x_facebook_sources) when it has one.
		printed := "null:null:null"
		if ok {
			printed = got.Source + ":" + strconv.Itoa(got.Line) + ":" + got.label()
		}
		if printed != f.MetroSymbolicate {
			t.Errorf("%s printed %s, metro-symbolicate prints %s", f.Frame, printed, f.MetroSymbolicate)
		}
	}
}

// vlqText writes segments as a mappings text, for maps made in tests:
// each line is a list of segments, each segment its absolute fields.
func vlqText(lines [][][]int) string {
	var b strings.Builder
	prev := make([]int, 5)
	for i, segs := range lines {
		if i > 0 {
			b.WriteByte(';')
		}
		prev[0] = 0
		for j, seg := range segs {
			if j > 0 {
				b.WriteByte(',')
			}
			for k, v := range seg {
				b.WriteString(vlqEncode(v - prev[k]))
				prev[k] = v
			}
		}
	}
	return b.String()
}

func vlqEncode(v int) string {
	const digits = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
	u := v << 1
	if v < 0 {
		u = (-v << 1) | 1
	}
	var b strings.Builder
	for {
		d := u & 31
		u >>= 5
		if u > 0 {
			d |= 32
		}
		b.WriteByte(digits[d])
		if u == 0 {
			return b.String()
		}
	}
}

// TestSourceMapHermesComposed: a Hermes composed map is one line whose
// columns are bytecode offsets, with far more segments than one mark
// covers; a lookup lands on the greatest offset not after the one asked,
// found from the marks.
func TestSourceMapHermesComposed(t *testing.T) {
	var segs [][]int
	for i := 0; i < 10*mapMarkEvery; i++ {
		segs = append(segs, []int{i * 10, 0, i + 1, i % 7, i % 3})
	}
	mapping := vlqText([][][]int{segs})
	doc := `{"version":3,"sources":["src/a.js"],"names":["n0","n1","n2"],"mappings":"` + mapping + `","x_facebook_sources":[null],"x_hermes_function_offsets":{"0":[1,2]}}`
	sm, err := readSourceMap([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		col  int
		want string
	}{
		{0, "src/a.js:2:0:n0"},
		{9, "src/a.js:2:0:n0"},
		{10, "src/a.js:3:1:n1"},
		{5765, "src/a.js:578:2:n0"}, // segment 576: a mark
		{5759, "src/a.js:577:1:n2"}, // the segment before it
		{6395, "src/a.js:641:2:n0"},
		{99999, "src/a.js:641:2:n0"},
	} {
		got, ok := sm.lookup(1, c.col)
		if positionText(got, ok) != c.want {
			t.Errorf("1:%d = %s, want %s", c.col, positionText(got, ok), c.want)
		}
	}
	if _, ok := sm.lookup(2, 0); ok {
		t.Error("line 2 maps, but the map has one line")
	}
}

// TestSourceMapShapes: sourceRoot joins relative sources, an unsorted
// line is searched whole, a one-field segment maps to nothing, sections
// add their offsets, and text that is no map is refused.
func TestSourceMapShapes(t *testing.T) {
	root := `{"version":3,"sourceRoot":"/app/","sources":["src/./x.js","/abs/y.js"],"names":["a"],"mappings":"` +
		vlqText([][][]int{{{0, 0, 4, 2, 0}, {8, 1, 9, 1}, {12}}}) + `"}`
	sm, err := readSourceMap([]byte(root))
	if err != nil {
		t.Fatal(err)
	}
	got := []string{}
	for _, col := range []int{0, 9, 12, 13} {
		p, ok := sm.lookup(1, col)
		got = append(got, positionText(p, ok))
	}
	if diff := cmp.Diff([]string{"/app/src/x.js:5:2:a", "/abs/y.js:10:1:", "null", "null"}, got); diff != "" {
		t.Errorf("sourceRoot and one-field segments (-want +got):\n%s", diff)
	}

	var segs [][]int
	for i := 0; i < 3*mapMarkEvery; i++ {
		segs = append(segs, []int{(3*mapMarkEvery - i) * 2, 0, i, 0})
	}
	unsorted := `{"version":3,"sources":["u.js"],"names":[],"mappings":"` + vlqText([][][]int{segs}) + `"}`
	sm, err = readSourceMap([]byte(unsorted))
	if err != nil {
		t.Fatal(err)
	}
	if p, ok := sm.lookup(1, 5); positionText(p, ok) != "u.js:"+strconv.Itoa(3*mapMarkEvery-2+1)+":0:" {
		t.Errorf("unsorted line: 1:5 = %s", positionText(p, ok))
	}

	inner := `{"version":3,"sources":["s.js"],"names":[],"mappings":"` + vlqText([][][]int{{{0, 0, 0, 0}}, {{0, 0, 1, 0}}}) + `"}`
	sections := `{"version":3,"sections":[{"offset":{"line":0,"column":0},"map":` + inner + `},{"offset":{"line":3,"column":5},"map":` + inner + `}]}`
	sm, err = readSourceMap([]byte(sections))
	if err != nil {
		t.Fatal(err)
	}
	got = got[:0]
	for _, pos := range [][2]int{{2, 0}, {4, 5}, {4, 6}, {5, 0}, {6, 0}} {
		p, ok := sm.lookup(pos[0], pos[1])
		got = append(got, positionText(p, ok))
	}
	// 4:5 is the second section's first column: source-map looks it up in
	// the first section, whose line 4 maps nothing.
	if diff := cmp.Diff([]string{"s.js:2:0:", "null", "s.js:1:0:", "s.js:2:0:", "null"}, got); diff != "" {
		t.Errorf("sections (-want +got):\n%s", diff)
	}

	for _, bad := range []string{
		``, `[]`, `{"mappings":"AAAA"}`, `{"sources":[],"mappings":"AAAA"}`,
		`{"sources":["a"],"mappings":"AA"}`, `{"sources":["a"],"names":[],"mappings":"AAAAC"}`,
		`{"sources":["a"],"mappings":"A!"}`, `{"sections":[{"offset":{"line":2,"column":0},"map":{"sources":[],"mappings":""}},{"offset":{"line":1,"column":0},"map":{"sources":[],"mappings":""}}]}`,
		`{"sources":["a"],"mappings":"gggggggggggggA"}`,
	} {
		if _, err := readSourceMap([]byte(bad)); err == nil {
			t.Errorf("%q read as a map", bad)
		}
	}
}

// maxFuzzMapBytes caps FuzzSourceMap's input. The engine minimises each
// new input it finds by trying every cut of it, about n*n/2 runs of ~10 µs
// (the package's coverage counters are compared on each): a few seconds
// for 1 KB, its 60 s limit from 4 KB, and inputs grown from a whole real
// map (tens of KB) kept it there, at a few runs in 15 s. A few hundred
// bytes cover every shape the reader knows.
const maxFuzzMapBytes = 1 << 10

// fuzzMapSeeds are small maps of every shape: the real Metro's index map
// (sections, x_facebook_sources) without its sourcesContent and with its
// small sections only, those sections as plain maps, a Hermes composed
// line of more segments than a mark covers, an unsorted line, a few made
// by hand, and one over the cap, so that the cap's early return is known
// from the start and never an input to minimise.
func fuzzMapSeeds(f *testing.F) [][]byte {
	data, err := os.ReadFile("testdata/sourcemaps/index.android.bundle.map")
	if err != nil {
		f.Fatal(err)
	}
	var real struct {
		Sections []struct {
			Offset json.RawMessage
			Map    map[string]json.RawMessage
		}
	}
	if err := json.Unmarshal(data, &real); err != nil {
		f.Fatal(err)
	}
	var sections []string
	var seeds [][]byte
	for _, sec := range real.Sections {
		delete(sec.Map, "sourcesContent")
		m, err := json.Marshal(sec.Map)
		if err != nil {
			f.Fatal(err)
		}
		if len(m) <= 300 {
			sections = append(sections, `{"offset":`+string(sec.Offset)+`,"map":`+string(m)+`}`)
		}
		if len(m) <= 400 && sec.Map["x_facebook_sources"] != nil {
			seeds = append(seeds, m)
		}
	}
	// A Hermes line: mostly column-only segments, the shortest, so that
	// a few hundred bytes hold two marks.
	var hermes, unsorted [][]int
	for i := 0; i < 2*mapMarkEvery+3; i++ {
		if hermes = append(hermes, []int{i * 7}); i%16 == 0 {
			hermes[i] = []int{i * 7, i % 2, i/3 + 1, i % 5, i % 3}
		}
	}
	for i := 0; i < 24; i++ {
		unsorted = append(unsorted, []int{(24 - i) * 2, 0, i, 0})
	}
	functions := `"x_facebook_sources":[[{"names":["<global>","loadOrders","<global>"],"mappings":"AAA;ECC;CCG"}],null]`
	seeds = append(seeds,
		[]byte(`{"version":3,"sections":[`+strings.Join(sections, ",")+`]}`),
		[]byte(`{"version":3,"sources":["a.js","b.js"],"names":["n0","n1","n2"],"mappings":"`+vlqText([][][]int{hermes})+`",`+functions+`}`),
		[]byte(`{"version":3,"sourceRoot":"/app/","sources":["u.js"],"names":[],"mappings":"`+vlqText([][][]int{unsorted})+`"}`),
		[]byte(`{"version":3,"sections":[{"offset":{"line":0,"column":0},"map":{"sources":["a"],"names":["n"],"mappings":"AAAAA,CAAC;AACA",`+
			`"x_facebook_sources":[[{"names":["f","g"],"mappings":"AAA;CCC"}]]}},{"offset":{"line":1,"column":5},"map":{"sources":["b"],"names":[],"mappings":"AAAA"}}]}`),
		[]byte(`{"sources":["a"],"names":[],"mappings":"AAAA,gBAAgB;;;E"}`),
	)
	over := []byte(`{"sources":["a"],"names":[],"mappings":"` + strings.Repeat("A", maxFuzzMapBytes) + `"}`)
	shapes := map[string]bool{}
	for _, seed := range seeds {
		sm, err := readSourceMap(seed)
		if len(seed) > maxFuzzMapBytes || err != nil {
			f.Fatalf("a seed of %d bytes (%d fuzzed) does not read: %v\n%s", len(seed), maxFuzzMapBytes, err, seed)
		}
		shapes["sections"] = shapes["sections"] || len(sm.sections) > 1
		for _, sec := range sm.sections {
			shapes["functions"] = shapes["functions"] || len(sec.m.functions) > 0
			shapes["marks"] = shapes["marks"] || len(sec.m.marks) > 1
			shapes["unsorted"] = shapes["unsorted"] || !sec.m.sorted
		}
	}
	if len(shapes) != 4 || slices.Contains(slices.Collect(maps.Values(shapes)), false) {
		f.Fatalf("the seeds lack a shape: %v", shapes)
	}
	return append(seeds, over)
}

// FuzzSourceMap: any text read as a map, and any lookup in it (sections'
// offsets, the function maps of x_facebook_sources), neither panics nor
// loops, and a position found is a position.
func FuzzSourceMap(f *testing.F) {
	for _, seed := range fuzzMapSeeds(f) {
		f.Add(seed, 1, 100)
	}
	f.Fuzz(func(t *testing.T, data []byte, line, col int) {
		if len(data) > maxFuzzMapBytes {
			return
		}
		sm, err := readSourceMap(data)
		if err != nil {
			return
		}
		check := func(line, col int) {
			p, ok := sm.lookup(line, col)
			if ok && (p.Line < 1 || p.Column < 0) {
				t.Fatalf("lookup %d:%d answered %+v", line, col, p)
			}
		}
		check(line, col)
		for i, s := range sm.sections {
			if i == 8 {
				break
			}
			check(s.line+1, s.column)
			check(s.line+1, s.column+col)
			for _, fm := range s.m.functions {
				fm.functionAt(line, col)
			}
		}
	})
}

// BenchmarkSourceMapMemory reads a map the size of a large release build's
// (its mappings; sourcesContent, which is most of a real one's bytes, is
// skipped unread) and reports the bytes the read map holds, and per
// lookup.
func BenchmarkSourceMapMemory(b *testing.B) {
	var segs [][]int
	for i := 0; i < 2_000_000; i++ {
		segs = append(segs, []int{i * 3, i % 50, i % 40000, i % 80, i % 900})
	}
	var names []string
	for i := 0; i < 900; i++ {
		names = append(names, `"n`+strconv.Itoa(i)+`"`)
	}
	var sources []string
	for i := 0; i < 50; i++ {
		sources = append(sources, `"src/f`+strconv.Itoa(i)+`.js"`)
	}
	doc := []byte(`{"version":3,"sources":[` + strings.Join(sources, ",") + `],"names":[` + strings.Join(names, ",") +
		`],"mappings":"` + vlqText([][][]int{segs}) + `"}`)
	start := time.Now()
	sm, err := readSourceMap(doc)
	if err != nil {
		b.Fatal(err)
	}
	read := time.Since(start)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, ok := sm.lookup(1, (i*7919)%6_000_000); !ok {
			b.Fatal("no position")
		}
	}
	// ResetTimer drops metrics reported before it.
	b.ReportMetric(float64(sm.heldBytes()), "bytes-held")
	b.ReportMetric(float64(len(doc)), "bytes-of-map")
	b.ReportMetric(float64(len(sm.sections[0].m.marks)*mapMarkSize)/2_000_000, "mark-bytes/segment")
	b.ReportMetric(float64(read.Milliseconds()), "read-ms")
}

// TestSourceMapFunctionNames: with x_facebook_sources a position is named
// by its enclosing function, as metro-symbolicate names it; without them,
// or with ones that cannot be read, by its segment's name.
func TestSourceMapFunctionNames(t *testing.T) {
	mappings := vlqText([][][]int{{{0, 0, 0, 0, 0}, {10, 0, 2, 4, 0}, {20, 0, 6, 0, 0}}})
	// <global> from 1:0, loadOrders from 2:2 to 5:1, <global> again after.
	functions := `[[{"names":["<global>","loadOrders","<global>"],"mappings":"AAA;ECC;CCG"}]]`
	for _, c := range []struct {
		extra string
		want  []string
	}{
		{`,"x_facebook_sources":` + functions, []string{"<global>", "loadOrders", "<global>"}},
		{``, []string{"x", "x", "x"}},
		{`,"x_facebook_sources":5`, []string{"x", "x", "x"}},
		{`,"x_facebook_sources":[[{"names":[],"mappings":"!!"}]]`, []string{"x", "x", "x"}},
		{`,"x_facebook_sources":[null]`, []string{"x", "x", "x"}},
	} {
		sm, err := readSourceMap([]byte(`{"version":3,"sources":["a.js"],"names":["x"],"mappings":"` + mappings + `"` + c.extra + `}`))
		if err != nil {
			t.Fatalf("%s: %v", c.extra, err)
		}
		var got []string
		for _, col := range []int{0, 10, 20} {
			p, ok := sm.lookup(1, col)
			if !ok {
				t.Fatalf("%s: 1:%d maps nothing", c.extra, col)
			}
			got = append(got, p.label())
		}
		if diff := cmp.Diff(c.want, got); diff != "" {
			t.Errorf("%s (-want +got):\n%s", c.extra, diff)
		}
	}
}

// heldBytes is about how much memory the map holds, for the benchmark.
func (sm *sourceMap) heldBytes() int {
	n := 0
	for _, s := range sm.sections {
		m := s.m
		n += len(m.mappings) + len(m.marks)*int(mapMarkSize)
		for _, x := range m.sources {
			n += len(x) + 16
		}
		for _, x := range m.names {
			n += len(x) + 16
		}
		for _, f := range m.functions {
			n += len(f.mappings) + 40
			for _, x := range f.names {
				n += len(x) + 16
			}
		}
	}
	return n
}

// mapMarkSize is a mark's size in memory.
const mapMarkSize = 7*4 + 4 + 4 // seven int32 with the field count, and the offset (padded)
