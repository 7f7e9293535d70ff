package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"slices"
	"unicode/utf8"
)

// This file reads JSON text without decoding it. An adapter's snapshot can be
// megabytes, and most answers need one subtree of it: walking the bytes and
// slicing out that subtree costs a fraction of decoding the whole state into
// maps and encoding the part again. Every function here is safe on any input:
// malformed JSON yields errMalformedJSON, never a panic or a loop. They skip
// through JSON already validated (json_scan.go's scanner reads untrusted
// frames in one pass, or json.Valid), two to three times faster on a large
// state than validating again.

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

// skipString returns the index after the string that starts at data[i], or
// -1. It jumps from quote to quote (IndexByte is vectorised) and counts the
// backslashes before each to tell an escaped quote from the closing one.
func skipString(data []byte, i int) int {
	open := i
	for i++; i < len(data); i++ {
		j := bytes.IndexByte(data[i:], '"')
		if j < 0 {
			return -1
		}
		i += j
		backslashes := 0
		for k := i - 1; k > open && data[k] == '\\'; k-- {
			backslashes++
		}
		if backslashes%2 == 0 {
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

// eachMember calls fn with each member of the JSON object data, its name
// decoded, until fn returns false.
func eachMember(data []byte, fn func(name string, value []byte) bool) error {
	var bad bool
	err := eachMemberRaw(data, func(quoted, value []byte) bool {
		name, ok := wireString(quoted)
		if !ok {
			bad = true
			return false
		}
		return fn(name, value)
	})
	if bad {
		return errMalformedJSON
	}
	return err
}

// eachMemberRaw is eachMember with each name left quoted and undecoded.
func eachMemberRaw(data []byte, fn func(quotedName, value []byte) bool) error {
	return eachItem(data, '{', fn)
}

func eachElement(data []byte, fn func(index int, value []byte) bool) error {
	n := -1
	return eachItem(data, '[', func(_, value []byte) bool { n++; return fn(n, value) })
}

// eachItem walks the object or the array (open) that data holds; in an
// array the quoted name is nil.
func eachItem(data []byte, open byte, fn func(quotedName, value []byte) bool) error {
	closer, _, _ := container(open)
	i := skipSpace(data, 0)
	if i >= len(data) || data[i] != open {
		return errMalformedJSON
	}
	i = skipSpace(data, i+1)
	if i < len(data) && data[i] == closer {
		return nil
	}
	for {
		var quoted []byte
		if open == '{' {
			if i >= len(data) || data[i] != '"' {
				return errMalformedJSON
			}
			end := skipString(data, i)
			if end < 0 {
				return errMalformedJSON
			}
			quoted = data[i:end]
			if i = skipSpace(data, end); i >= len(data) || data[i] != ':' {
				return errMalformedJSON
			}
			i = skipSpace(data, i+1)
		}
		end := skipValue(data, i)
		if end <= i {
			return errMalformedJSON
		}
		if !fn(quoted, data[i:end:end]) {
			return nil
		}
		switch i = skipSpace(data, end); {
		case i < len(data) && data[i] == closer:
			return nil
		case i >= len(data) || data[i] != ',':
			return errMalformedJSON
		}
		i = skipSpace(data, i+1)
	}
}

// wireString decodes raw when it is a JSON string. Invalid UTF-8 becomes
// U+FFFD, as with encoding/json.
func wireString(raw []byte) (string, bool) {
	if len(raw) < 2 || raw[0] != '"' {
		return "", false
	}
	inner := raw[1 : len(raw)-1]
	if bytes.IndexByte(inner, '\\') < 0 && utf8.Valid(inner) {
		return string(inner), true
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", false
	}
	return s, true
}

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
// encoding/json, the last of duplicate members wins. Names without escapes
// are compared as bytes, so a lookup allocates nothing.
func member(object []byte, name string) (value []byte, found bool, err error) {
	err = eachMemberRaw(object, func(quoted, v []byte) bool {
		plain := quoted[1 : len(quoted)-1]
		match := string(plain) == name
		if bytes.IndexByte(plain, '\\') >= 0 || !utf8.Valid(plain) {
			decoded, ok := wireString(quoted)
			match = ok && decoded == name
		}
		if match {
			value, found = v, true
		}
		return true
	})
	return value, found, err
}

// resolveRaw finds the value at path in the JSON text data, without decoding
// anything but the object names on the way. The tests' decoding oracle
// (resolvePath) must agree with it on every input, hit or miss
// (FuzzResolveRaw), so both take indexes from parseIndex.
func resolveRaw(data []byte, segs []pathSegment) ([]byte, *pathMiss, error) {
	current := data
	for depth, seg := range segs {
		next, found, err := rawStep(current, seg)
		if err != nil {
			return nil, nil, err
		}
		if !found {
			miss, err := rawMiss(data, segs[:depth], current, seg)
			return nil, miss, err
		}
		current = next
	}
	return current, nil, nil
}

// rawStep takes one step of resolveRaw; a scalar has no next.
func rawStep(current []byte, seg pathSegment) (next []byte, found bool, err error) {
	switch rawKind(current) {
	case "object":
		return member(current, seg.Key)
	case "array":
		index, ok := parseIndex(seg)
		if !ok {
			return nil, false, nil
		}
		err = eachElement(current, func(i int, v []byte) bool {
			if i == index {
				next, found = v, true
			}
			return i < index
		})
		return next, found, err
	}
	return nil, false, nil
}

// rawMiss describes where resolveRaw stopped, at node after the steps
// resolved led from root, as a pathMiss does. Its prefix needs
// the kinds along the way, so the prefix is walked again, which only a miss
// pays for.
func rawMiss(root []byte, resolved []pathSegment, node []byte, failed pathSegment) (*pathMiss, error) {
	var prefix []byte
	at := root
	for _, seg := range resolved {
		if rawKind(at) == "array" {
			index, _ := parseIndex(seg)
			prefix = appendPathIndex(prefix, index)
		} else {
			prefix = appendPathKey(prefix, seg.Key)
		}
		next, _, err := rawStep(at, seg)
		if err != nil {
			return nil, err
		}
		at = next
	}
	miss := &pathMiss{ResolvedPrefix: string(prefix), Segment: string(appendPathSegment(nil, failed))}
	switch rawKind(node) {
	case "object":
		keys := []string{}
		if err := eachMember(node, func(name string, _ []byte) bool {
			keys = append(keys, name)
			return true
		}); err != nil {
			return nil, err
		}
		slices.Sort(keys)
		keys = slices.Compact(keys)
		if len(keys) > maxAvailableKeys {
			miss.AvailableTotal = len(keys)
			keys = keys[:maxAvailableKeys]
		}
		miss.Available = keys
	case "array":
		n := 0
		if err := eachElement(node, func(int, []byte) bool { n++; return true }); err != nil {
			return nil, err
		}
		miss.Available = map[string]int{"length": n}
	}
	return miss, nil
}

// outlineEntry is one child of a value too large to return.
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

// Adapter text is not always UTF-8, and MCP output must be. Wherever the
// server re-encodes adapter text, each byte that does not start a valid
// UTF-8 sequence becomes one U+FFFD (FF FE becomes two): encoding/json's
// rule, which already decides for every decoded value (diffs, keys listed
// in a miss), so a value read raw and read decoded come out identical. One
// U+FFFD per run (bytes.ToValidUTF8, WHATWG) would make structuredContent
// differ from its text item. appendJSONString applies the rule to the
// strings it writes, validUTF8 to whole messages on their way out.

// validUTF8 applies the rule above to data, copying only when it must.
func validUTF8(data []byte) []byte {
	if utf8.Valid(data) {
		return data
	}
	out := make([]byte, 0, len(data)+len(data)/8+2)
	// Ranging over a string yields U+FFFD for such a byte and steps one byte.
	for _, r := range string(data) {
		out = utf8.AppendRune(out, r)
	}
	return out
}

// jsonEscape holds the letter of each byte's short escape (\n), and
// jsonUnescape the byte each letter stands for; 0 where there is none.
var (
	jsonEscape   = [256]byte{'"': '"', '\\': '\\', '\b': 'b', '\f': 'f', '\n': 'n', '\r': 'r', '\t': 't'}
	jsonUnescape = [256]byte{'"': '"', '\\': '\\', '/': '/', 'b': '\b', 'f': '\f', 'n': '\n', 'r': '\r', 't': '\t'}
)

// appendJSONString appends s as a JSON string, each invalid UTF-8 byte as
// U+FFFD (the rule above) unless verbatim is set (path keys, json_path.go).
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
		if e := jsonEscape[c]; e != 0 {
			buf = append(buf, '\\', e)
		} else {
			buf = append(buf, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
		}
		i++
		start = i
	}
	buf = append(buf, s[start:]...)
	return append(buf, '"')
}
