package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"slices"
	"strconv"
	"unicode/utf8"
)

// This file reads JSON text without decoding it. An adapter's snapshot can be
// megabytes, and most answers need one subtree of it: walking the bytes and
// slicing out that subtree costs a fraction of decoding the whole state into
// maps and encoding the part again. Every function here is safe on any input:
// malformed JSON yields errMalformedJSON, never a panic or a loop.

var errMalformedJSON = errors.New("malformed JSON")

func skipSpace(data []byte, i int) int {
	for i < len(data) && (data[i] == ' ' || data[i] == '\t' || data[i] == '\n' || data[i] == '\r') {
		i++
	}
	return i
}

// skipValue returns the end of the JSON value that starts at data[i], or -1
// when there is none. Strings and nesting are tracked; scalars are taken to
// run to the next delimiter, so full validation is left to json.Valid.
func skipValue(data []byte, i int) int {
	depth := 0
	for ; i < len(data); i++ {
		switch data[i] {
		case '"':
			i = skipString(data, i)
			if i < 0 {
				return -1
			}
			if depth == 0 {
				return i
			}
			i--
		case '{', '[':
			depth++
		case '}', ']':
			depth--
			if depth < 0 {
				return i // a scalar ending at its container's close
			}
			if depth == 0 {
				return i + 1
			}
		case ',', ' ', '\t', '\n', '\r', ':':
			if depth == 0 {
				return i
			}
		}
	}
	if depth != 0 {
		return -1
	}
	return i
}

// skipString returns the index after the string that starts at data[i], or -1.
func skipString(data []byte, i int) int {
	for i++; i < len(data); i++ {
		switch data[i] {
		case '\\':
			i++
		case '"':
			return i + 1
		}
	}
	return -1
}

// nestingExceeds reports whether data nests arrays and objects deeper than
// limit. It runs before any decoder so that deep input is never recursed into.
func nestingExceeds(data []byte, limit int) bool {
	depth := 0
	for i := 0; i < len(data); i++ {
		switch data[i] {
		case '"':
			if i = skipString(data, i); i < 0 {
				return false
			}
			i--
		case '{', '[':
			if depth++; depth > limit {
				return true
			}
		case '}', ']':
			depth--
		}
	}
	return false
}

// eachMember calls fn for each member of the JSON object data, in order,
// until fn returns false. The name is decoded; value holds the raw bytes.
func eachMember(data []byte, fn func(name string, value []byte) bool) error {
	i := skipSpace(data, 0)
	if i >= len(data) || data[i] != '{' {
		return errMalformedJSON
	}
	i = skipSpace(data, i+1)
	if i < len(data) && data[i] == '}' {
		return nil
	}
	for {
		if i >= len(data) || data[i] != '"' {
			return errMalformedJSON
		}
		end := skipString(data, i)
		if end < 0 {
			return errMalformedJSON
		}
		name, ok := decodeName(data[i:end])
		if !ok {
			return errMalformedJSON
		}
		i = skipSpace(data, end)
		if i >= len(data) || data[i] != ':' {
			return errMalformedJSON
		}
		i = skipSpace(data, i+1)
		end = skipValue(data, i)
		if end <= i {
			return errMalformedJSON
		}
		if !fn(name, data[i:end:end]) {
			return nil
		}
		i = skipSpace(data, end)
		if i >= len(data) {
			return errMalformedJSON
		}
		if data[i] == '}' {
			return nil
		}
		if data[i] != ',' {
			return errMalformedJSON
		}
		i = skipSpace(data, i+1)
	}
}

// eachElement calls fn for each element of the JSON array data until fn
// returns false.
func eachElement(data []byte, fn func(index int, value []byte) bool) error {
	i := skipSpace(data, 0)
	if i >= len(data) || data[i] != '[' {
		return errMalformedJSON
	}
	i = skipSpace(data, i+1)
	if i < len(data) && data[i] == ']' {
		return nil
	}
	for n := 0; ; n++ {
		end := skipValue(data, i)
		if end <= i {
			return errMalformedJSON
		}
		if !fn(n, data[i:end:end]) {
			return nil
		}
		i = skipSpace(data, end)
		if i >= len(data) {
			return errMalformedJSON
		}
		if data[i] == ']' {
			return nil
		}
		if data[i] != ',' {
			return errMalformedJSON
		}
		i = skipSpace(data, i+1)
	}
}

// decodeName decodes a quoted JSON string, cheaply when it has no escapes.
func decodeName(quoted []byte) (string, bool) {
	if bytes.IndexByte(quoted, '\\') < 0 {
		return string(quoted[1 : len(quoted)-1]), true
	}
	var s string
	return s, json.Unmarshal(quoted, &s) == nil
}

// rawKind names the JSON type of the raw value.
func rawKind(v []byte) string {
	i := skipSpace(v, 0)
	if i >= len(v) {
		return "nothing"
	}
	switch v[i] {
	case '{':
		return "object"
	case '[':
		return "array"
	case '"':
		return "string"
	case 't', 'f':
		return "boolean"
	case 'n':
		return "null"
	}
	return "number"
}

// member returns the value of the named member of a JSON object. Like
// encoding/json, the last of duplicate members wins.
func member(object []byte, name string) (value []byte, found bool, err error) {
	err = eachMember(object, func(n string, v []byte) bool {
		if n == name {
			value, found = v, true
		}
		return true
	})
	return value, found, err
}

// resolveRaw finds the value at path in the JSON text data, by the rules of
// resolvePath, without decoding anything but the object names on the way.
func resolveRaw(data []byte, segs []pathSegment) ([]byte, *pathMiss, error) {
	current := data
	for depth, seg := range segs {
		var next []byte
		found := false
		switch rawKind(current) {
		case "object":
			var err error
			if next, found, err = member(current, seg.Key); err != nil {
				return nil, nil, err
			}
		case "array":
			if index, ok := arrayIndex(seg); ok {
				if err := eachElement(current, func(i int, v []byte) bool {
					if i == index {
						next, found = v, true
					}
					return i < index
				}); err != nil {
					return nil, nil, err
				}
			}
		}
		if !found {
			miss, err := rawMiss(current, segs[:depth], seg)
			return nil, miss, err
		}
		current = next
	}
	return current, nil, nil
}

// arrayIndex reports whether seg indexes an array: a bare canonical decimal.
func arrayIndex(seg pathSegment) (int, bool) {
	if seg.Quoted || seg.Key == "" || (len(seg.Key) > 1 && seg.Key[0] == '0') || len(seg.Key) > 9 {
		return 0, false
	}
	n, err := strconv.Atoi(seg.Key)
	return n, err == nil && n >= 0 && seg.Key[0] != '+'
}

// rawMiss describes where resolving stopped, as resolvePath's pathMiss does.
func rawMiss(at []byte, prefix []pathSegment, failed pathSegment) (*pathMiss, error) {
	miss := &pathMiss{ResolvedPrefix: formatPath(prefix), Segment: formatPath([]pathSegment{failed})}
	switch rawKind(at) {
	case "object":
		var keys []string
		if err := eachMember(at, func(name string, _ []byte) bool {
			keys = append(keys, name)
			return true
		}); err != nil {
			return nil, err
		}
		slices.Sort(keys)
		keys = slices.Compact(keys)
		miss.AvailableTotal = len(keys)
		miss.Available = keys[:min(len(keys), maxAvailableKeys)]
	case "array":
		n := 0
		if err := eachElement(at, func(int, []byte) bool { n++; return true }); err != nil {
			return nil, err
		}
		miss.Available = map[string]int{"length": n}
	}
	return miss, nil
}

// outlineEntry is one child of a value too large to return: where it is and
// how many bytes of JSON it holds.
type outlineEntry struct {
	Path string `json:"path"`
	Type string `json:"type"`
	Size int    `json:"size"`
}

const maxOutlineEntries = 30

// rawOutline lists the children of the JSON value data at path, largest
// first, at most maxOutlineEntries, so an agent can pick a narrower path.
func rawOutline(data []byte, path []pathSegment) ([]outlineEntry, error) {
	var entries []outlineEntry
	prefix := []byte(formatPath(path))
	add := func(p []byte, v []byte) {
		entries = append(entries, outlineEntry{Path: string(p), Type: rawKind(v), Size: len(v)})
	}
	var err error
	switch rawKind(data) {
	case "object":
		err = eachMember(data, func(name string, v []byte) bool {
			add(appendPathKey(slices.Clip(prefix), name), v)
			return true
		})
	case "array":
		err = eachElement(data, func(i int, v []byte) bool {
			add(appendPathIndex(slices.Clip(prefix), i), v)
			return true
		})
	}
	slices.SortStableFunc(entries, func(a, b outlineEntry) int { return b.Size - a.Size })
	return entries[:min(len(entries), maxOutlineEntries)], err
}

// compactJSON returns data without insignificant white space, copying only
// when there is some.
func compactJSON(data []byte) []byte {
	for i := 0; i < len(data); i++ {
		switch data[i] {
		case '"':
			if i = skipString(data, i); i < 0 {
				return data
			}
			i--
		case ' ', '\t', '\n', '\r':
			var buf bytes.Buffer
			buf.Grow(len(data))
			if json.Compact(&buf, data) != nil {
				return data
			}
			return buf.Bytes()
		}
	}
	return data
}

// appendJSONString appends s as a JSON string. Invalid UTF-8 becomes U+FFFD
// so that output stays valid UTF-8, unless verbatim is set: path keys keep
// their bytes so that formatting and parsing a path round-trips exactly.
func appendJSONString[S ~string | ~[]byte](buf []byte, s S, verbatim bool) []byte {
	const hex = "0123456789abcdef"
	buf = append(buf, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' && c < utf8.RuneSelf {
			i++
			continue
		}
		if c >= utf8.RuneSelf {
			r, size := utf8.DecodeRuneInString(string(s[i:min(i+utf8.UTFMax, len(s))]))
			if r != utf8.RuneError || size != 1 || verbatim {
				i += size
				continue
			}
			buf = append(buf, s[start:i]...)
			buf = append(buf, `\ufffd`...)
			i++
			start = i
			continue
		}
		buf = append(buf, s[start:i]...)
		switch c {
		case '"', '\\':
			buf = append(buf, '\\', c)
		case '\b':
			buf = append(buf, '\\', 'b')
		case '\f':
			buf = append(buf, '\\', 'f')
		case '\n':
			buf = append(buf, '\\', 'n')
		case '\r':
			buf = append(buf, '\\', 'r')
		case '\t':
			buf = append(buf, '\\', 't')
		default:
			buf = append(buf, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
		}
		i++
		start = i
	}
	buf = append(buf, s[start:]...)
	return append(buf, '"')
}
