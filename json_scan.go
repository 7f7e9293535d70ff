package main

import (
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"
)

// json_scan.go is the validating JSON scanner: it checks a whole value as
// RFC 8259 and encoding/json do (exact members, depth bound, string escapes)
// while handing out members and elements, without decoding anything.

// scanMaxDepth bounds the nesting the validating scanner accepts, as
// encoding/json bounds it.
const scanMaxDepth = 10000

// scanObject validates data as exactly one JSON object (surrounding
// whitespace allowed) and calls fn with each member's key, unescaped, and
// raw value until fn returns an error. Both slices alias data.
func scanObject(data []byte, fn func(key, value []byte) error) error {
	return scanTop(data, '{', fn)
}

// scanArray is scanObject for a JSON array: fn gets each element's index
// and raw value.
func scanArray(data []byte, fn func(i int, value []byte) error) error {
	i := -1
	return scanTop(data, '[', func(_, value []byte) error { i++; return fn(i, value) })
}

// scanTop walks the container data holds and checks that nothing follows.
func scanTop(data []byte, open byte, fn func(key, value []byte) error) error {
	s := jsonScanner{data: data}
	if err := s.items(open, fn); err != nil {
		return err
	}
	s.skipSpace()
	if s.pos < len(s.data) {
		return s.syntaxError("after top-level value")
	}
	return nil
}

// jsonScanner validates JSON and finds value boundaries in one forward
// pass, without recursion and without allocating.
type jsonScanner struct {
	data []byte
	pos  int
}

var errJSONEnd = errors.New("unexpected end of JSON input")

func (s *jsonScanner) syntaxError(context string) error {
	if s.pos >= len(s.data) {
		return errJSONEnd
	}
	return fmt.Errorf("invalid character %q %s at offset %d", s.data[s.pos], context, s.pos)
}

func (s *jsonScanner) skipSpace() {
	for s.pos < len(s.data) {
		switch s.data[s.pos] {
		case ' ', '\t', '\n', '\r':
			s.pos++
		default:
			return
		}
	}
}

func (s *jsonScanner) expect(c byte, context string) error {
	if s.pos < len(s.data) && s.data[s.pos] == c {
		s.pos++
		return nil
	}
	return s.syntaxError(context)
}

// container returns the closer of the container that open starts ('{' or
// '[') and the words of encoding/json's syntax errors at its start and
// after each of its values.
func container(open byte) (closer byte, begin, after string) {
	if open == '{' {
		return '}', "looking for beginning of object", "after object key:value pair"
	}
	return ']', "looking for beginning of array", "after array element"
}

// items walks the object or array (open) at s.pos, after optional
// whitespace, calling fn with each member's key (nil in an array) and value.
func (s *jsonScanner) items(open byte, fn func(key, value []byte) error) error {
	closer, begin, after := container(open)
	s.skipSpace()
	if err := s.expect(open, begin); err != nil {
		return err
	}
	s.skipSpace()
	if s.pos < len(s.data) && s.data[s.pos] == closer {
		s.pos++
		return nil
	}
	for {
		var key []byte
		if open == '{' {
			var err error
			if key, err = s.key(); err != nil {
				return err
			}
		}
		s.skipSpace()
		start := s.pos
		if err := s.skipValue(); err != nil {
			return err
		}
		if err := fn(key, s.data[start:s.pos]); err != nil {
			return err
		}
		s.skipSpace()
		if s.pos < len(s.data) && s.data[s.pos] == ',' {
			s.pos++
			continue
		}
		return s.expect(closer, after)
	}
}

// key reads `"key" :` and returns the key, unescaped.
func (s *jsonScanner) key() ([]byte, error) {
	s.skipSpace()
	start := s.pos
	raw, escaped, err := s.str()
	if err != nil {
		if s.pos == start {
			return nil, s.syntaxError("looking for beginning of object key string")
		}
		return nil, err
	}
	if escaped || !utf8.Valid(raw) {
		k, _ := wireString(s.data[start:s.pos]) // str has validated it
		raw = []byte(k)
	}
	s.skipSpace()
	if err := s.expect(':', "after object key"); err != nil {
		return nil, err
	}
	return raw, nil
}

// str consumes the string at s.pos and returns what is between its quotes
// and whether it holds escapes.
func (s *jsonScanner) str() ([]byte, bool, error) {
	if s.pos >= len(s.data) || s.data[s.pos] != '"' {
		return nil, false, s.syntaxError("looking for beginning of string")
	}
	start := s.pos + 1
	escaped := false
	d := s.data
	for i := start; i < len(d); {
		// Most bytes of a large state are plain string content.
		for i < len(d) && !jsonStringStop[d[i]] {
			i++
		}
		if i >= len(d) {
			break
		}
		c := d[i]
		switch {
		case c == '"':
			s.pos = i + 1
			return d[start:i], escaped, nil
		case c == '\\':
			escaped = true
			if i+1 >= len(d) {
				s.pos = len(d)
				return nil, false, errJSONEnd
			}
			switch e := d[i+1]; {
			case jsonUnescape[e] != 0:
				i += 2
			case e == 'u':
				for j := i + 2; j < i+6; j++ {
					if j >= len(d) {
						s.pos = len(d)
						return nil, false, errJSONEnd
					}
					if strings.IndexByte("0123456789abcdefABCDEF", d[j]) < 0 {
						s.pos = j
						return nil, false, s.syntaxError("in \\u hexadecimal character escape")
					}
				}
				i += 6
			default:
				s.pos = i + 1
				return nil, false, s.syntaxError("in string escape code")
			}
		default: // a control character
			s.pos = i
			return nil, false, s.syntaxError("in string literal")
		}
	}
	s.pos = len(d)
	return nil, false, errJSONEnd
}

// jsonStringStop marks the bytes that end a run of plain string content.
var jsonStringStop = func() (t [256]bool) {
	for c := range 0x20 {
		t[c] = true
	}
	t['"'], t['\\'] = true, true
	return t
}()

// skipValue consumes and validates the value at s.pos.
func (s *jsonScanner) skipValue() error {
	// open holds the containers entered and not yet left: '{' or '['.
	var openBuf [64]byte
	open := openBuf[:0]
	d := s.data
	for {
		s.skipSpace()
		if s.pos >= len(d) {
			return errJSONEnd
		}
		if c := d[s.pos]; c == '{' || c == '[' {
			if len(open) >= scanMaxDepth {
				return fmt.Errorf("JSON nested deeper than %d levels at offset %d", scanMaxDepth, s.pos)
			}
			s.pos++
			s.skipSpace()
			if closer, _, _ := container(c); s.pos < len(d) && d[s.pos] == closer {
				s.pos++ // an empty container is a complete value
			} else {
				open = append(open, c)
				if c == '{' {
					if _, err := s.key(); err != nil {
						return err
					}
				}
				continue
			}
		} else if err := s.scalar(); err != nil {
			return err
		}
		var more bool
		var err error
		if open, more, err = s.next(open); err != nil || !more {
			return err
		}
	}
}

func (s *jsonScanner) scalar() error {
	switch c := s.data[s.pos]; {
	case c == '"':
		_, _, err := s.str()
		return err
	case c == 't':
		return s.literal("true")
	case c == 'f':
		return s.literal("false")
	case c == 'n':
		return s.literal("null")
	case c == '-' || '0' <= c && c <= '9':
		return s.number()
	}
	return s.syntaxError("looking for beginning of value")
}

// next goes on from the end of a value: it leaves the containers of open
// that end there, and more says an element or member follows (with its key
// read) in the innermost one left.
func (s *jsonScanner) next(open []byte) (_ []byte, more bool, _ error) {
	d := s.data
	for len(open) > 0 {
		s.skipSpace()
		if s.pos >= len(d) {
			return open, false, errJSONEnd
		}
		top := open[len(open)-1]
		closer, _, after := container(top)
		switch d[s.pos] {
		case ',':
			s.pos++
			if top == '{' {
				if _, err := s.key(); err != nil {
					return open, false, err
				}
			}
			return open, true, nil
		case closer:
			s.pos++
			open = open[:len(open)-1]
		default:
			return open, false, s.syntaxError(after)
		}
	}
	return open, false, nil
}

func (s *jsonScanner) literal(lit string) error {
	for i := 0; i < len(lit); i++ {
		if s.pos >= len(s.data) {
			return errJSONEnd
		}
		if s.data[s.pos] != lit[i] {
			return s.syntaxError("in literal " + lit)
		}
		s.pos++
	}
	return nil
}

func (s *jsonScanner) number() error {
	d := s.data
	digits := func() bool {
		start := s.pos
		for s.pos < len(d) && '0' <= d[s.pos] && d[s.pos] <= '9' {
			s.pos++
		}
		return s.pos > start
	}
	if d[s.pos] == '-' {
		s.pos++
	}
	switch {
	case s.pos >= len(d):
		return errJSONEnd
	case d[s.pos] == '0':
		s.pos++
	case '1' <= d[s.pos] && d[s.pos] <= '9':
		digits()
	default:
		return s.syntaxError("in numeric literal")
	}
	if s.pos < len(d) && d[s.pos] == '.' {
		s.pos++
		if !digits() {
			return s.syntaxError("after decimal point in numeric literal")
		}
	}
	if s.pos < len(d) && (d[s.pos] == 'e' || d[s.pos] == 'E') {
		s.pos++
		if s.pos < len(d) && (d[s.pos] == '+' || d[s.pos] == '-') {
			s.pos++
		}
		if !digits() {
			return s.syntaxError("in exponent of numeric literal")
		}
	}
	return nil
}
