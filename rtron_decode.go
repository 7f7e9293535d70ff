package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"
)

// Decoding the values inside Reactotron frames: JSON as Reactotron's
// client writes it, with its own spellings of undefined, functions and
// other values JSON cannot hold, bounded in depth.

// decodeReactotronValue returns data, one JSON value as a Reactotron client
// serialises it, with every "~~~ … ~~~" encoding decoded (see the opening
// comment of rtron_protocol.go) and insignificant space removed. Strings
// keep their bytes unless they hold escapes or invalid UTF-8, which are
// rewritten (invalid UTF-8 as U+FFFD), as encoding/json would. Malformed JSON, trailing data,
// nesting deeper than reactotronMaxDepth and input over
// reactotronMaxFrameBytes are errors.
func decodeReactotronValue(data []byte) (json.RawMessage, error) {
	if len(data) > reactotronMaxFrameBytes {
		return nil, fmt.Errorf("%w: %d bytes is over the limit of %d", errReactotronMessage, len(data), reactotronMaxFrameBytes)
	}
	d := reactotronDecoder{data: data, out: make([]byte, 0, len(data))}
	undefined, err := d.value(0)
	if err != nil {
		return nil, err
	}
	if undefined {
		d.out = append(d.out, "null"...)
	}
	if d.skipSpace(); d.pos < len(d.data) {
		return nil, fmt.Errorf("%w: data after the JSON value at offset %d", errReactotronMessage, d.pos)
	}
	return d.out, nil
}

// reactotronDecoder validates and decodes in one pass over the bytes: a
// backup of a large store arrives as one frame, and token-by-token decoding
// with encoding/json costs several times more.
type reactotronDecoder struct {
	data []byte
	pos  int
	out  []byte
}

func (d *reactotronDecoder) skipSpace() {
	for d.pos < len(d.data) {
		switch d.data[d.pos] {
		case ' ', '\t', '\n', '\r':
			d.pos++
		default:
			return
		}
	}
}

func (d *reactotronDecoder) syntaxError(what string) error {
	if d.pos >= len(d.data) {
		return fmt.Errorf("%w: malformed JSON: unexpected end in %s", errReactotronMessage, what)
	}
	return fmt.Errorf("%w: malformed JSON: unexpected %q at offset %d in %s", errReactotronMessage, d.data[d.pos], d.pos, what)
}

// value copies one value to d.out, decoded. It writes nothing and reports
// undefined for "~~~ undefined ~~~", whose meaning depends on the position.
func (d *reactotronDecoder) value(depth int) (undefined bool, err error) {
	d.skipSpace()
	if d.pos >= len(d.data) {
		return false, d.syntaxError("a value")
	}
	switch c := d.data[d.pos]; {
	case c == '{' || c == '[':
		if depth >= reactotronMaxDepth {
			return false, fmt.Errorf("%w: nested deeper than %d levels", errReactotronMessage, reactotronMaxDepth)
		}
		if c == '{' {
			return false, d.object(depth)
		}
		return false, d.array(depth)
	case c == '"':
		return d.str()
	case c == 't':
		return false, d.literal("true")
	case c == 'f':
		return false, d.literal("false")
	case c == 'n':
		return false, d.literal("null")
	case c == '-' || c >= '0' && c <= '9':
		return false, d.number()
	}
	return false, d.syntaxError("a value")
}

func (d *reactotronDecoder) literal(lit string) error {
	if !bytes.HasPrefix(d.data[d.pos:], []byte(lit)) {
		return d.syntaxError("a literal")
	}
	d.out = append(d.out, lit...)
	d.pos += len(lit)
	return nil
}

// number copies a number as written, after checking its grammar.
func (d *reactotronDecoder) number() error {
	start := d.pos
	digits := func() bool {
		n := d.pos
		for d.pos < len(d.data) && d.data[d.pos] >= '0' && d.data[d.pos] <= '9' {
			d.pos++
		}
		return d.pos > n
	}
	if d.data[d.pos] == '-' {
		d.pos++
	}
	if d.pos < len(d.data) && d.data[d.pos] == '0' {
		d.pos++
	} else if !digits() {
		return d.syntaxError("a number")
	}
	if d.pos < len(d.data) && d.data[d.pos] == '.' {
		d.pos++
		if !digits() {
			return d.syntaxError("a number")
		}
	}
	if d.pos < len(d.data) && (d.data[d.pos] == 'e' || d.data[d.pos] == 'E') {
		d.pos++
		if d.pos < len(d.data) && (d.data[d.pos] == '+' || d.data[d.pos] == '-') {
			d.pos++
		}
		if !digits() {
			return d.syntaxError("a number")
		}
	}
	d.out = append(d.out, d.data[start:d.pos]...)
	return nil
}

// scanString checks the string at d.pos and moves past it. raw is the
// string with its quotes; plain reports that it holds no escape and only
// valid UTF-8, so that raw is already how it is written out.
func (d *reactotronDecoder) scanString() (raw []byte, plain bool, err error) {
	start := d.pos
	d.pos++
	plain = true
	for d.pos < len(d.data) {
		c := d.data[d.pos]
		switch {
		case c == '"':
			d.pos++
			raw = d.data[start:d.pos]
			if plain && !utf8.Valid(raw) {
				plain = false
			}
			return raw, plain, nil
		case c < 0x20:
			return nil, false, d.syntaxError("a string")
		case c == '\\':
			plain = false
			d.pos++
			if d.pos >= len(d.data) {
				return nil, false, d.syntaxError("a string")
			}
			switch d.data[d.pos] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				d.pos++
			case 'u':
				for range 4 {
					d.pos++
					if d.pos >= len(d.data) || !isHexDigit(d.data[d.pos]) {
						return nil, false, d.syntaxError("a \\u escape")
					}
				}
				d.pos++
			default:
				return nil, false, d.syntaxError("a string escape")
			}
		default:
			d.pos++
		}
	}
	return nil, false, d.syntaxError("a string")
}

// reactotronUnquote decodes a checked string.
func reactotronUnquote(raw []byte, plain bool) string {
	if plain {
		return string(raw[1 : len(raw)-1])
	}
	var s string
	_ = json.Unmarshal(raw, &s) // checked by scanString; invalid UTF-8 becomes U+FFFD
	return s
}

// str copies a string value, decoding it if it is an encoding.
func (d *reactotronDecoder) str() (undefined bool, err error) {
	raw, plain, err := d.scanString()
	if err != nil {
		return false, err
	}
	// Only a string that starts "~~~ can be an encoding: skip the rest
	// without allocating.
	if plain && !bytes.HasPrefix(raw, []byte(`"~~~ `)) {
		d.out = append(d.out, raw...)
		return false, nil
	}
	lit, s, undefined := decodeReactotronString(reactotronUnquote(raw, plain))
	switch {
	case undefined:
		return true, nil
	case lit != "":
		d.out = append(d.out, lit...)
	default:
		d.out = appendJSONString(d.out, s, false)
	}
	return false, nil
}

func (d *reactotronDecoder) object(depth int) error {
	d.pos++ // '{'
	d.out = append(d.out, '{')
	if d.skipSpace(); d.pos < len(d.data) && d.data[d.pos] == '}' {
		d.pos++
		d.out = append(d.out, '}')
		return nil
	}
	first := true
	for {
		if d.skipSpace(); d.pos >= len(d.data) || d.data[d.pos] != '"' {
			return d.syntaxError("an object key")
		}
		raw, plain, err := d.scanString()
		if err != nil {
			return err
		}
		mark := len(d.out)
		if !first {
			d.out = append(d.out, ',')
		}
		if plain {
			d.out = append(d.out, raw...)
		} else {
			d.out = appendJSONString(d.out, reactotronUnquote(raw, false), false)
		}
		if d.skipSpace(); d.pos >= len(d.data) || d.data[d.pos] != ':' {
			return d.syntaxError("an object")
		}
		d.pos++
		d.out = append(d.out, ':')
		undefined, err := d.value(depth + 1)
		if err != nil {
			return err
		}
		if undefined {
			d.out = d.out[:mark] // JSON.stringify would have left the member out
		} else {
			first = false
		}
		d.skipSpace()
		if d.pos < len(d.data) && d.data[d.pos] == ',' {
			d.pos++
			continue
		}
		if d.pos < len(d.data) && d.data[d.pos] == '}' {
			d.pos++
			d.out = append(d.out, '}')
			return nil
		}
		return d.syntaxError("an object")
	}
}

func (d *reactotronDecoder) array(depth int) error {
	d.pos++ // '['
	d.out = append(d.out, '[')
	if d.skipSpace(); d.pos < len(d.data) && d.data[d.pos] == ']' {
		d.pos++
		d.out = append(d.out, ']')
		return nil
	}
	for i := 0; ; i++ {
		if i > 0 {
			d.out = append(d.out, ',')
		}
		undefined, err := d.value(depth + 1)
		if err != nil {
			return err
		}
		if undefined {
			d.out = append(d.out, "null"...) // as JSON.stringify writes undefined in an array
		}
		d.skipSpace()
		if d.pos < len(d.data) && d.data[d.pos] == ',' {
			d.pos++
			continue
		}
		if d.pos < len(d.data) && d.data[d.pos] == ']' {
			d.pos++
			d.out = append(d.out, ']')
			return nil
		}
		return d.syntaxError("an array")
	}
}

// decodeReactotronString decodes one string value: undefined, or a JSON
// literal to write (lit), or a string to write (str).
func decodeReactotronString(s string) (lit, str string, undefined bool) {
	inner, ok := reactotronEncoding(s)
	if !ok {
		return "", s, false
	}
	switch strings.ToLower(inner) {
	case "undefined":
		return "", "", true
	case "null":
		return "null", "", false
	case "false":
		return "false", "", false
	case "true":
		return "true", "", false
	case "zero":
		return "0", "", false
	case "empty string":
		return "", "", false
	case "infinity":
		return "", "Infinity", false
	case "-infinity":
		return "", "-Infinity", false
	case "nan":
		return "", "NaN", false
	case "circular reference":
		return "", "[circular]", false
	case "anonymous function":
		return "", "[function]", false
	}
	if name, ok := strings.CutSuffix(inner, "()"); ok && name != "" {
		return "", "[function " + name + "]", false
	}
	return "", "[" + inner + "]", false
}
