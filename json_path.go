package main

// Paths name a value inside a decoded JSON document (spec §2 "Paths"). The
// same notation is used for the `scope` and `path` tool arguments and for the
// paths a diff reports, so an agent can feed any reported path straight back.
//
// Canonical form: dot-separated keys; a canonical decimal after a dot indexes
// an array (routes.0.name); a key that is empty, made only of digits, or
// contains '.', '[', ']' or '"' is written ["…"] with JSON string escaping
// (settings["theme.dark"], byId["42"]). Any other key is written bare, whatever
// it contains (spaces, '-', '$', non-ASCII, control characters).
//
// Keys that are not valid UTF-8 cannot come out of encoding/json (it
// substitutes U+FFFD) but can be in a Go-built map. Their bytes are copied
// verbatim and parsed literally, so formatting then parsing gives back the
// same key; only JSON-encoding the path string makes them U+FFFD.

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

type pathSegment struct {
	Key string // the object key, or the decimal text of an index
	// Quoted marks a canonical decimal written ["42"]: an object key, never
	// an index. parsePath sets it only then (["x"] and x mean the same), so
	// that parsePath(formatPath(segs)) is segs.
	Quoted bool
}

// maxAvailableKeys bounds pathMiss.Available for objects so that a miss on a
// map with a hundred thousand entries still yields a small error.
const maxAvailableKeys = 100

// pathMiss says where resolving a path stopped, so an agent can pick its next step.
type pathMiss struct {
	// ResolvedPrefix is the canonical path of the longest prefix that
	// resolved ("" is the root). It is formatted from what each step actually
	// named, so a bare digit that selected an object key reads ["42"].
	ResolvedPrefix string `json:"resolvedPrefix"`
	// Available describes the value at ResolvedPrefix: the keys of an object
	// as a sorted []string (at most maxAvailableKeys of them, the first in
	// byte order), map[string]int{"length": n} for an array, nil for a scalar.
	Available any `json:"available"`
	// AvailableTotal is the object's key count when Available was truncated
	// to maxAvailableKeys, and 0 otherwise.
	AvailableTotal int `json:"availableTotal,omitempty"`
	// Segment is the segment that failed, formatted canonically on its own.
	Segment string `json:"segment"`
}

// parsePath parses a path written in the notation above. "" is the root and
// yields no segments. Leniency stops where a reading could be ambiguous: a
// bare digit segment is kept as written (on an object resolveRaw lets it
// name that key, on an array a canonical one names that index), and a.["b"]
// reads as a["b"].
// Every other deviation is an error of the form "at byte N: problem", N being
// the 0-based offset of the offending byte (len(s) when the path ends early).
func parsePath(s string) ([]pathSegment, error) {
	if s == "" {
		return nil, nil
	}
	if s[0] == '.' {
		return nil, pathSyntaxError(0, `a path cannot start with "." (the root is "")`)
	}
	segs := make([]pathSegment, 0, 1+strings.Count(s, ".")+strings.Count(s, "[")) // allocated once
	i := 0
	for {
		var seg pathSegment
		var err error
		if s[i] == '[' {
			seg, i, err = parseQuotedSegment(s, i)
		} else {
			seg, i, err = parseBareSegment(s, i)
		}
		if err != nil {
			return nil, err
		}
		segs = append(segs, seg)
		if i == len(s) {
			return segs, nil
		}
		switch s[i] {
		case '.':
			i++
			if i == len(s) || s[i] == '.' {
				return nil, pathSyntaxError(i, `expected a key after "."`)
			}
		case '[':
			// A bracket segment follows directly: a["b"].
		default:
			// Only a quoted segment can stop before an unexpected byte.
			return nil, pathSyntaxError(i, fmt.Sprintf(`expected "." or "[" after "]", found %s`, quoteByte(s[i])))
		}
	}
}

func pathSyntaxError(offset int, problem string) error {
	return fmt.Errorf("at byte %d: %s", offset, problem)
}

func quoteByte(b byte) string {
	if b < utf8.RuneSelf {
		return strconv.QuoteRune(rune(b))
	}
	return fmt.Sprintf("byte 0x%02x", b)
}

// parseBareSegment reads a bare key starting at s[i] up to the next '.' or
// '[' and returns the offset just past it.
func parseBareSegment(s string, i int) (pathSegment, int, error) {
	end := len(s)
	if j := strings.IndexAny(s[i:], `.[]"`); j >= 0 {
		end = i + j
	}
	switch {
	case end < len(s) && s[end] == ']':
		return pathSegment{}, 0, pathSyntaxError(end, `unexpected "]" in a key (write such a key as ["…"])`)
	case end < len(s) && s[end] == '"':
		return pathSegment{}, 0, pathSyntaxError(end, `unexpected '"' in a key (write such a key as ["…"])`)
	}
	return pathSegment{Key: s[i:end]}, end, nil
}

// parseQuotedSegment reads ["…"] starting at the '[' at s[i] and returns the
// offset just past the ']'. The text between the quotes follows JSON string
// syntax, except that bytes which are not valid UTF-8 stand for themselves.
func parseQuotedSegment(s string, i int) (pathSegment, int, error) {
	open := i
	i++
	if i == len(s) || s[i] != '"' {
		return pathSegment{}, 0, pathSyntaxError(i, `expected '"' after "[" (an index is written .0, a key ["…"])`)
	}
	i++
	start := i
	var buf []byte // nil until the first escape: most quoted keys have none
	for {
		if i == len(s) {
			return pathSegment{}, 0, pathSyntaxError(open+1, "unterminated quoted key")
		}
		c := s[i]
		switch {
		case c == '"':
			key := s[start:i]
			if buf != nil {
				key = string(buf)
			}
			i++
			if i == len(s) || s[i] != ']' {
				return pathSegment{}, 0, pathSyntaxError(i, `expected "]" after the quoted key`)
			}
			return pathSegment{Key: key, Quoted: isCanonicalDecimal(key)}, i + 1, nil
		case c < 0x20:
			return pathSegment{}, 0, pathSyntaxError(i, fmt.Sprintf("control character 0x%02x in a quoted key (escape it)", c))
		case c == '\\':
			if buf == nil {
				buf = append(make([]byte, 0, len(s)-start), s[start:i]...)
			}
			var err error
			buf, i, err = appendUnescaped(buf, s, i)
			if err != nil {
				return pathSegment{}, 0, err
			}
		default:
			if buf != nil {
				buf = append(buf, c)
			}
			i++
		}
	}
}

// appendUnescaped decodes the JSON escape at s[i] (a backslash) onto buf and
// returns the offset after it. Lone surrogates become U+FFFD, as
// encoding/json decodes them.
func appendUnescaped(buf []byte, s string, i int) ([]byte, int, error) {
	if i+1 == len(s) {
		return nil, 0, pathSyntaxError(i, "unterminated escape in a quoted key")
	}
	switch c := s[i+1]; {
	case jsonUnescape[c] != 0:
		return append(buf, jsonUnescape[c]), i + 2, nil
	case c == 'u':
		r, ok := hex4(s, i+2)
		if !ok {
			return nil, 0, pathSyntaxError(i, `invalid \u escape in a quoted key (want \u and four hex digits)`)
		}
		i += 6
		if utf16.IsSurrogate(r) {
			// A pair is two escapes in a row; anything else is a lone half.
			lo, ok := rune(0), false
			if i+1 < len(s) && s[i] == '\\' && s[i+1] == 'u' {
				lo, ok = hex4(s, i+2)
			}
			if pair := utf16.DecodeRune(r, lo); ok && pair != utf8.RuneError {
				r = pair
				i += 6
			} else {
				r = utf8.RuneError
			}
		}
		return utf8.AppendRune(buf, r), i, nil
	case c < utf8.RuneSelf:
		return nil, 0, pathSyntaxError(i, fmt.Sprintf(`invalid escape "\%c" in a quoted key`, c))
	}
	return nil, 0, pathSyntaxError(i, "invalid escape in a quoted key")
}

func hex4(s string, i int) (rune, bool) {
	if i+4 > len(s) {
		return 0, false
	}
	r, err := strconv.ParseUint(s[i:i+4], 16, 16)
	return rune(r), err == nil
}

// formatPath writes segs in canonical form. A segment that is not Quoted and
// whose key is a canonical decimal is written as an index; every other
// segment as a key. So formatPath(parsePath(s)) is the canonical spelling of
// s. For segments built by hand: {Key: k} for an object key k, with Quoted
// set when k is a canonical decimal, and {Key: strconv.Itoa(i)} for an index i.
func formatPath(segs []pathSegment) string {
	if len(segs) == 0 {
		return ""
	}
	n := 0
	for _, seg := range segs {
		n += len(seg.Key) + 1
	}
	buf := make([]byte, 0, n+4)
	for _, seg := range segs {
		buf = appendPathSegment(buf, seg)
	}
	return string(buf)
}

func appendPathSegment(buf []byte, seg pathSegment) []byte {
	if !seg.Quoted && isCanonicalDecimal(seg.Key) {
		if len(buf) > 0 {
			buf = append(buf, '.')
		}
		return append(buf, seg.Key...)
	}
	return appendPathKey(buf, seg.Key)
}

// appendPathKey appends the object key: ".key", or "key" first, or ["key"]
// when the key needs quoting.
func appendPathKey(buf []byte, key string) []byte {
	if !needsQuoting(key) {
		if len(buf) > 0 {
			buf = append(buf, '.')
		}
		return append(buf, key...)
	}
	buf = append(buf, '[')
	buf = appendJSONString(buf, key, true)
	return append(buf, ']')
}

// appendPathIndex appends the array index i (i ≥ 0): ".17", or "17" first.
func appendPathIndex(buf []byte, i int) []byte {
	if len(buf) > 0 {
		buf = append(buf, '.')
	}
	return strconv.AppendInt(buf, int64(i), 10)
}

// needsQuoting reports whether key must be written ["…"]: written bare it
// would be empty, read as an index, or split at a separator.
func needsQuoting(key string) bool {
	return key == "" || allDigits(key) || strings.ContainsAny(key, `.[]"`)
}

func allDigits(s string) bool { return s != "" && strings.Trim(s, "0123456789") == "" }

// isCanonicalDecimal reports whether s is how an index is written: digits
// with no leading zero except "0" itself.
func isCanonicalDecimal(s string) bool {
	return allDigits(s) && (s[0] != '0' || len(s) == 1)
}

// parseIndex returns the array index a segment names, if it names one. The
// notation has exactly one spelling per index, so that a path read by any
// resolver means the same thing: an unquoted canonical decimal. "-0", "+1",
// "01", "1e0", " 1" and ["1"] are keys, never indexes; on an array they miss.
// A canonical decimal past the range of int is an index no array has, so it
// misses too, but as an index: the miss names the array's length.
func parseIndex(seg pathSegment) (int, bool) {
	if seg.Quoted || !isCanonicalDecimal(seg.Key) {
		return 0, false
	}
	n, err := strconv.Atoi(seg.Key)
	if err != nil { // only the range can fail for a canonical decimal
		return indexPastInt, true
	}
	return n, true
}

// indexPastInt stands for an index past the range of int: it always misses.
const indexPastInt = int(^uint(0) >> 1)

// smallestKeys returns the first limit keys of m in sorted order; never
// nil, so that an empty object's keys encode as [].
func smallestKeys(m map[string]any, limit int) []string {
	keys := slices.AppendSeq(make([]string, 0, len(m)), maps.Keys(m))
	slices.Sort(keys)
	return keys[:min(len(keys), limit)]
}

// maxWirePathSegments bounds a path read from the wire: an app's
// resolvedPrefix, or a path the demo app is asked for.
const maxWirePathSegments = 256

// maxWireIndex bounds the indexes sent as integers: an app in JavaScript
// reads every integer below it exactly. A longer bare decimal is sent as
// its key string, which misses on an array as the index would (no array
// is that long) and names the same key on an object.
const maxWireIndex = 1_000_000_000

// wirePath encodes parsed segments as a wire path: an index that a bare
// canonical decimal may name becomes an int64 (on an object the app takes
// it as the key of its decimal spelling, as resolveRaw does), every other
// segment the key string. The root is nil, so it is left out of params.
func wirePath(segs []pathSegment) []any {
	if len(segs) == 0 {
		return nil
	}
	out := make([]any, len(segs))
	for i, seg := range segs {
		if idx, ok := parseIndex(seg); ok && idx < maxWireIndex {
			out[i] = int64(idx)
		} else {
			out[i] = seg.Key
		}
	}
	return out
}

// pathFromWire turns wirePath's segments (or a resolved prefix built the
// same way) back into pathSegments: a string is a key, any other value
// (an int64 index) the key of its decimal spelling.
func pathFromWire(path []any) []pathSegment {
	segs := make([]pathSegment, len(path))
	for i, v := range path {
		switch v := v.(type) {
		case string:
			segs[i] = pathSegment{Key: v, Quoted: isCanonicalDecimal(v)}
		case int64:
			segs[i] = pathSegment{Key: strconv.FormatInt(v, 10)}
		default:
			segs[i] = pathSegment{Key: fmt.Sprint(v)}
		}
	}
	return segs
}

// parseWirePath reads a wire path as wirePath writes it: a JSON array of
// strings and non-negative integers.
func parseWirePath(raw []byte) ([]pathSegment, error) {
	if len(raw) == 0 || raw[0] != '[' {
		return nil, fmt.Errorf("must be an array of keys and indexes, got %s", clipJSON(raw))
	}
	var segs []pathSegment
	err := scanArray(raw, func(i int, v []byte) error {
		if i >= maxWirePathSegments {
			return fmt.Errorf("at most %d segments", maxWirePathSegments)
		}
		if s, ok := wireString(v); ok {
			segs = append(segs, pathSegment{Key: s, Quoted: isCanonicalDecimal(s)})
			return nil
		}
		if n, ok := wireInt(v); ok && n >= 0 {
			segs = append(segs, pathSegment{Key: strconv.FormatInt(n, 10)})
			return nil
		}
		return fmt.Errorf("[%d]: must be a string or a non-negative integer, got %s", i, clipJSON(v))
	})
	return segs, err
}
