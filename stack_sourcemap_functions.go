package main

// stack_sourcemap_functions.go reads the function maps Metro writes into a
// source map's x_facebook_sources: per source, where each function starts
// and its name (`loadOrders`, `CartButton.handleAdd`). metro-symbolicate
// names a mapped frame by the function enclosing its original position
// when the map has them, else by the segment's name; so do we.

import (
	"math"
	"sort"
)

// functionMap is one source's function map as the map has it: decoded on
// each lookup (one file's functions), not held decoded.
type functionMap struct {
	names    []string
	mappings string
}

// readFunctionMaps reads x_facebook_sources: one element per source, each
// null or an array whose first element is the function map. Anything else
// is left out: a map is no less readable without its function names.
func readFunctionMaps(raw []byte, sources int) []functionMap {
	if rawKind(raw) != "array" {
		return nil
	}
	out := make([]functionMap, sources)
	_ = eachElement(raw, func(i int, v []byte) bool {
		if i >= sources {
			return false
		}
		var fm []byte
		if rawKind(v) == "array" {
			_ = eachElement(v, func(_ int, first []byte) bool {
				fm = first
				return false
			})
		}
		mappings, ok := wireString(rawMember(fm, "mappings"))
		names, okNames := stringArray(rawMember(fm, "names"))
		if ok && okNames {
			out[i] = functionMap{names: names, mappings: string([]byte(mappings))}
		}
		return true
	})
	return out
}

// functionAt names the function that encloses a source's position
// (1-based line, 0-based column), as metro-symbolicate's
// findEnclosingMapping does: the last function start not after it. ""
// when there is none, or the map is malformed.
func (fm functionMap) functionAt(line1, column0 int) string {
	type start struct{ line, col, name int }
	var starts []start
	line, name := 1, 0
	col := 0
	d := mapDecoder{s: fm.mappings}
	for d.at < len(d.s) {
		switch d.s[d.at] {
		case ';':
			col = 0
			d.at++
			continue
		case ',':
			d.at++
			continue
		}
		var f [3]int64
		if n, err := d.values(f[:]); err != nil || n < 2 {
			return ""
		}
		c, nm, l := int64(col)+f[0], int64(name)+f[1], int64(line)+f[2]
		if c < 0 || c > math.MaxInt32 || nm < 0 || nm > math.MaxInt32 || l < 0 || l > math.MaxInt32 {
			return ""
		}
		col, name, line = int(c), int(nm), int(l)
		starts = append(starts, start{line, col, name})
	}
	i := sort.Search(len(starts), func(i int) bool {
		s := starts[i]
		return s.line > line1 || (s.line == line1 && s.col > column0)
	})
	if i == 0 || starts[i-1].name >= len(fm.names) {
		return ""
	}
	return fm.names[starts[i-1].name]
}
