package main

// stack_sourcemap.go reads a source map (version 3) and looks positions
// up in it, as the `source-map` npm package's originalPositionFor does
// (version 0.5, the one metro-symbolicate uses): plain maps, Hermes'
// composed maps (one line, the column a bytecode offset), index maps
// (`sections`); members it does not need (sourcesContent,
// x_facebook_sources, x_hermes_function_offsets…) are skipped unread.
//
// A release build's map runs to hundreds of MB, most of it sourcesContent.
// Reading keeps only the mappings text, the sources and the names, and
// indexes the mappings once: every mapMarkEvery-th segment is kept decoded
// as a mark, with the running values VLQ deltas continue from. A lookup
// decodes from the nearest mark before the position, never more than
// mapMarkEvery segments plus the line's end.

import (
	"cmp"
	"errors"
	"math"
	"path"
	"slices"
	"sort"
	"strings"
)

const mapMarkEvery = 64

// maxSourceMapSections bounds an index map's sections.
const maxSourceMapSections = 1 << 16

var errNotSourceMap = errors.New("not a source map")

// sourceMap is a map read for lookups; a plain map is one section at 0,0.
type sourceMap struct {
	sections []mapSection
	indexed  bool // read from `sections`
}

// mapSection is one section of an index map: its offset (0-based line and
// column in the generated code) and its map.
type mapSection struct {
	line, column int
	m            *plainMap
}

// plainMap is a map without sections: its mappings as the map has them,
// and marks into them.
type plainMap struct {
	sources   []string // sourceRoot applied
	names     []string
	functions []functionMap // per source, from x_facebook_sources; nil without
	mappings  string
	marks     []mapMark
	sorted    bool // every line's segments come in column order
}

// mapSegment is one decoded segment: generated line (0-based) and column,
// and, when fields is 4 or 5, the source index, original line and column
// (0-based) and, when 5, the name index.
type mapSegment struct {
	line, col, src, oline, ocol, name int32
	fields                            uint8
}

// mapMark is a segment kept decoded (the file header says why); at is the
// offset in mappings just past it.
type mapMark struct {
	mapSegment
	at uint32
}

// mapPosition is what a lookup answers: the source (with sourceRoot), its
// 1-based line and 0-based column, the name, "" when the segment has
// none, and the enclosing function's name from the map's function maps,
// "" without them.
type mapPosition struct {
	Source   string
	Line     int
	Column   int
	Name     string
	Function string
}

// label is how metro-symbolicate names the position: function, else name.
func (p mapPosition) label() string {
	return cmp.Or(p.Function, p.Name)
}

// readSourceMap reads a map's JSON text. The answer keeps no part of data.
func readSourceMap(data []byte) (*sourceMap, error) {
	if rawKind(data) != "object" || nestingExceeds(data, 64) {
		return nil, errNotSourceMap
	}
	if sections, found, err := member(data, "sections"); err != nil {
		return nil, errNotSourceMap
	} else if found {
		return readIndexMap(sections)
	}
	m, err := readPlainMap(data)
	if err != nil {
		return nil, err
	}
	return &sourceMap{sections: []mapSection{{m: m}}}, nil
}

// readIndexMap reads the sections of an index map, which must come in
// order and each hold its map (a section naming a url is not followed).
// Every way a map is malformed is errNotSourceMap.
func readIndexMap(sections []byte) (*sourceMap, error) {
	sm := &sourceMap{indexed: true}
	bad := false
	err := eachElement(sections, func(i int, v []byte) bool {
		offset := rawMember(v, "offset")
		line, okL := wireInt(rawMember(offset, "line"))
		col, okC := wireInt(rawMember(offset, "column"))
		inner := rawMember(v, "map")
		bad = i >= maxSourceMapSections || !okL || !okC || line < 0 || col < 0 ||
			line >= math.MaxInt32 || col >= math.MaxInt32 || rawKind(inner) != "object"
		if n := len(sm.sections); n > 0 && !bad {
			prev := sm.sections[n-1]
			bad = int64(prev.line) > line || (int64(prev.line) == line && int64(prev.column) > col)
		}
		if bad {
			return false
		}
		m, err := readPlainMap(inner)
		bad = err != nil
		if bad {
			return false
		}
		sm.sections = append(sm.sections, mapSection{line: int(line), column: int(col), m: m})
		return true
	})
	if err != nil || bad {
		return nil, errNotSourceMap
	}
	return sm, nil
}

func readPlainMap(data []byte) (*plainMap, error) {
	var rawSources, rawNames, rawMappings, rawRoot, rawFunctions []byte
	err := eachMember(data, func(name string, v []byte) bool {
		switch name {
		case "sources":
			rawSources = v
		case "names":
			rawNames = v
		case "mappings":
			rawMappings = v
		case "sourceRoot":
			rawRoot = v
		case "x_facebook_sources":
			rawFunctions = v
		}
		return true
	})
	if err != nil {
		return nil, errNotSourceMap
	}
	mappings, ok := wireString(rawMappings)
	if !ok || len(mappings) >= math.MaxUint32 {
		return nil, errNotSourceMap
	}
	root, _ := wireString(rawRoot)
	m := &plainMap{mappings: strings.Clone(mappings)}
	if m.sources, ok = stringArray(rawSources); !ok {
		return nil, errNotSourceMap
	}
	if rawNames != nil && rawKind(rawNames) != "null" {
		if m.names, ok = stringArray(rawNames); !ok {
			return nil, errNotSourceMap
		}
	}
	for i, s := range m.sources {
		m.sources[i] = withSourceRoot(root, s)
	}
	m.functions = readFunctionMaps(rawFunctions, len(m.sources))
	if err := m.index(); err != nil {
		return nil, err
	}
	return m, nil
}

// stringArray reads an array of strings; a null element reads as "".
func stringArray(raw []byte) ([]string, bool) {
	if rawKind(raw) != "array" {
		return nil, false
	}
	var out []string
	ok := true
	err := eachElement(raw, func(_ int, v []byte) bool {
		s, good := wireString(v)
		if rawKind(v) == "null" {
			s, good = "", true
		}
		ok = good
		out = append(out, strings.Clone(s))
		return good
	})
	return out, ok && err == nil
}

// withSourceRoot names a source as source-map does: normalised, and
// joined to the sourceRoot when there is one and the source is relative.
func withSourceRoot(root, source string) string {
	if source != "" && !strings.Contains(source, "://") {
		source = cleanMapPath(source)
	}
	if root == "" || strings.Contains(source, "://") || strings.HasPrefix(source, "/") {
		return source
	}
	if strings.Contains(root, "://") {
		return strings.TrimRight(root, "/") + "/" + source
	}
	return cleanMapPath(strings.TrimRight(root, "/") + "/" + source)
}

// cleanMapPath removes `.` and `..` segments and doubled slashes, keeping
// a trailing slash as source-map's normalize does.
func cleanMapPath(p string) string {
	clean := path.Clean(p)
	if strings.HasSuffix(p, "/") && clean != "/" {
		clean += "/"
	}
	return clean
}

// index checks the mappings and marks them.
func (m *plainMap) index() error {
	d := mapDecoder{s: m.mappings}
	m.sorted = true
	count := 0
	lastLine, lastCol := int32(-1), int32(-1)
	for {
		seg, ok, err := d.next()
		if err != nil {
			return err
		}
		if !ok {
			break
		}
		if seg.line == lastLine && seg.col < lastCol {
			m.sorted = false
		}
		lastLine, lastCol = seg.line, seg.col
		if seg.fields >= 4 && (int(seg.src) >= len(m.sources) || seg.oline < 0 || seg.ocol < 0) {
			return errNotSourceMap
		}
		if seg.fields == 5 && int(seg.name) >= len(m.names) {
			return errNotSourceMap
		}
		if count%mapMarkEvery == 0 {
			m.marks = append(m.marks, mapMark{mapSegment: seg, at: uint32(d.at)})
		}
		count++
	}
	m.marks = m.marks[:len(m.marks):len(m.marks)]
	return nil
}

// lookup answers the original position of a generated one (1-based line,
// 0-based column), as originalPositionFor does with its default bias
// (GREATEST_LOWER_BOUND): the segment of that line at the greatest column
// not after it. ok is false when there is none, or it names no source.
func (sm *sourceMap) lookup(line1, column0 int) (mapPosition, bool) {
	if line1 < 1 || column0 < 0 || line1 > math.MaxInt32 || column0 > math.MaxInt32 {
		return mapPosition{}, false
	}
	if !sm.indexed {
		return sm.sections[0].m.lookup(line1-1, column0)
	}
	// source-map keeps a section's offset as (line+1, column+1) and
	// compares the 0-based column to it: a position at a section's very
	// first column still falls in the section before. Kept, to answer
	// what metro-symbolicate answers.
	i := sort.Search(len(sm.sections), func(i int) bool {
		s := sm.sections[i]
		return s.line+1 > line1 || (s.line+1 == line1 && s.column+1 > column0)
	}) - 1
	if i < 0 {
		return mapPosition{}, false
	}
	s := sm.sections[i]
	line, col := line1-s.line, column0
	if s.line+1 == line1 {
		col -= s.column
	}
	return s.m.lookup(line-1, col)
}

// lookup finds the segment for a 0-based line and column.
func (m *plainMap) lookup(line0, col0 int) (mapPosition, bool) {
	l, c := int32(line0), int32(col0)
	var from mapMark
	found := false
	// Decode from the last mark not after the position in sorted mappings,
	// else from the last one on an earlier line; from the start without one.
	k := sort.Search(len(m.marks), func(i int) bool {
		k := m.marks[i]
		if m.sorted {
			return k.line > l || (k.line == l && k.col > c)
		}
		return k.line >= l
	}) - 1
	if k >= 0 {
		from = m.marks[k]
		found = from.line == l && from.col <= c
	}
	best := from.mapSegment
	d := mapDecoder{s: m.mappings, at: int(from.at), seg: from.mapSegment} // zero: from the start
	for {
		seg, ok, err := d.next()
		if err != nil || !ok || seg.line > l {
			break
		}
		if seg.line < l || seg.col > c {
			if seg.line == l && m.sorted {
				break
			}
			continue
		}
		if !found || seg.col > best.col || (seg.col == best.col && sortsBefore(seg, best)) {
			best, found = seg, true
		}
	}
	if !found || best.fields < 4 {
		return mapPosition{}, false
	}
	pos := mapPosition{Source: m.sources[best.src], Line: int(best.oline) + 1, Column: int(best.ocol)}
	if best.fields == 5 {
		pos.Name = m.names[best.name]
	}
	if int(best.src) < len(m.functions) {
		pos.Function = m.functions[best.src].functionAt(pos.Line, pos.Column)
	}
	return pos, true
}

// sortsBefore orders two segments at the same generated position as
// source-map's sort does: by source, original line and column, name.
func sortsBefore(a, b mapSegment) bool {
	ka := [4]int32{a.src, a.oline, a.ocol, a.name}
	kb := [4]int32{b.src, b.oline, b.ocol, b.name}
	if a.fields < 4 || b.fields < 4 {
		return false // no order source-map defines: the first stays
	}
	if a.fields < 5 {
		ka[3] = -1
	}
	if b.fields < 5 {
		kb[3] = -1
	}
	return slices.Compare(ka[:], kb[:]) < 0
}

// mapDecoder reads the segments of a mappings text one at a time,
// carrying the running values; seg is the last segment read.
type mapDecoder struct {
	s   string
	at  int
	seg mapSegment
}

// next reads the next segment; ok is false at the end.
func (d *mapDecoder) next() (mapSegment, bool, error) {
	for d.at < len(d.s) {
		switch d.s[d.at] {
		case ';':
			if d.seg.line == math.MaxInt32 {
				return mapSegment{}, false, errNotSourceMap
			}
			d.seg.line++
			d.seg.col = 0
			d.at++
			continue
		case ',':
			d.at++
			continue
		}
		var deltas [5]int64
		n, err := d.values(deltas[:])
		if err != nil {
			return mapSegment{}, false, err
		}
		seg := d.seg
		fields := [...]*int32{&seg.col, &seg.src, &seg.oline, &seg.ocol, &seg.name}
		for i, delta := range deltas[:n] {
			sum := int64(*fields[i]) + delta
			if sum < math.MinInt32 || sum > math.MaxInt32 {
				return mapSegment{}, false, errNotSourceMap
			}
			*fields[i] = int32(sum)
		}
		if n == 2 || n == 3 || seg.col < 0 || (n >= 4 && seg.src < 0) || (n == 5 && seg.name < 0) {
			return mapSegment{}, false, errNotSourceMap
		}
		seg.fields = uint8(n)
		d.seg = seg
		return seg, true, nil
	}
	return mapSegment{}, false, nil
}

// values reads the VLQ numbers of the segment at d.at into v and says how
// many there were; more than len(v) is malformed.
func (d *mapDecoder) values(v []int64) (int, error) {
	n := 0
	for d.at < len(d.s) && d.s[d.at] != ',' && d.s[d.at] != ';' {
		x, err := d.vlq()
		if err != nil || n == len(v) {
			return 0, errNotSourceMap
		}
		v[n] = x
		n++
	}
	return n, nil
}

func (d *mapDecoder) vlq() (int64, error) {
	var v int64
	for shift := uint(0); ; shift += 5 {
		if d.at >= len(d.s) || shift > 30 {
			return 0, errNotSourceMap
		}
		digit := int64(base64Digits[d.s[d.at]])
		d.at++
		if digit < 0 {
			return 0, errNotSourceMap
		}
		v |= (digit & 31) << shift
		if digit&32 == 0 {
			break
		}
	}
	if v&1 != 0 {
		return -(v >> 1), nil
	}
	return v >> 1, nil
}

// base64Digits is the value of each base64 character, -1 for another byte.
var base64Digits = func() (t [256]int8) {
	for i := range t {
		t[i] = -1
	}
	for i, c := range "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/" {
		t[c] = int8(i)
	}
	return t
}()
