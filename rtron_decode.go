package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"
)

// Decoding the values inside Reactotron frames, bounded in depth.

// decodeReactotronValue returns data, one JSON value as a Reactotron client
// serialises it, with every "~~~ … ~~~" encoding decoded (see the opening
// comment of rtron_protocol.go) and insignificant space removed. Strings
// keep their bytes unless they hold escapes or invalid UTF-8, which are
// rewritten (invalid UTF-8 as U+FFFD), as encoding/json would. Malformed
// JSON, trailing data, nesting deeper than reactotronMaxDepth and input
// over reactotronMaxFrameBytes are errors.
func decodeReactotronValue(data []byte) (json.RawMessage, error) {
	if len(data) > reactotronMaxFrameBytes {
		return nil, fmt.Errorf("%w: %d bytes is over the limit of %d", errReactotronMessage, len(data), reactotronMaxFrameBytes)
	}
	d := reactotronDecoder{jsonScanner: jsonScanner{data: data}, out: make([]byte, 0, len(data))}
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
// with encoding/json costs several times more. The validating scanner
// (json_scan.go) checks each token; the decoder writes it out.
type reactotronDecoder struct {
	jsonScanner
	out []byte
}

func reactotronMalformed(err error) error {
	return fmt.Errorf("%w: malformed JSON: %v", errReactotronMessage, err)
}

// value copies one value to d.out, decoded. It writes nothing and reports
// undefined for "~~~ undefined ~~~", whose meaning depends on the position.
func (d *reactotronDecoder) value(depth int) (undefined bool, err error) {
	d.skipSpace()
	if d.pos >= len(d.data) {
		return false, reactotronMalformed(errJSONEnd)
	}
	switch c := d.data[d.pos]; c {
	case '{', '[':
		if depth >= reactotronMaxDepth {
			return false, fmt.Errorf("%w: nested deeper than %d levels", errReactotronMessage, reactotronMaxDepth)
		}
		if c == '{' {
			return false, d.object(depth)
		}
		return false, d.array(depth)
	case '"':
		return d.stringValue()
	}
	start := d.pos
	if err := d.scalar(); err != nil {
		return false, reactotronMalformed(err)
	}
	d.out = append(d.out, d.data[start:d.pos]...) // a number as written, or a literal
	return false, nil
}

// stringValue copies a string value, decoding it if it is an encoding.
func (d *reactotronDecoder) stringValue() (undefined bool, err error) {
	start := d.pos
	inner, escaped, err := d.str()
	if err != nil {
		return false, reactotronMalformed(err)
	}
	raw := d.data[start:d.pos]
	// Only a string that starts "~~~ can be an encoding: skip the rest
	// without allocating.
	plain := !escaped && utf8.Valid(inner)
	if plain && !bytes.HasPrefix(inner, []byte("~~~ ")) {
		d.out = append(d.out, raw...)
		return false, nil
	}
	s := string(inner)
	if !plain {
		_ = json.Unmarshal(raw, &s) // checked by the scanner; invalid UTF-8 becomes U+FFFD
	}
	lit, s, undefined := decodeReactotronString(s)
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
	return d.copyContainer('}', "after object key:value pair", func(sep bool) (bool, error) {
		key, err := d.key() // unescaped: written back as sent, or escaped anew
		if err != nil {
			return false, reactotronMalformed(err)
		}
		mark := len(d.out)
		if sep {
			d.out = append(d.out, ',')
		}
		d.out = append(appendJSONString(d.out, key, false), ':')
		undefined, err := d.value(depth + 1)
		if undefined {
			d.out = d.out[:mark] // JSON.stringify would have left the member out
		}
		return !undefined, err
	})
}

func (d *reactotronDecoder) array(depth int) error {
	return d.copyContainer(']', "after array element", func(sep bool) (bool, error) {
		if sep {
			d.out = append(d.out, ',')
		}
		undefined, err := d.value(depth + 1)
		if undefined {
			d.out = append(d.out, "null"...) // as JSON.stringify writes undefined in an array
		}
		return true, err
	})
}

// copyContainer copies the object or array at d.pos up to its closer. elem
// copies one member or element, after a comma when sep, and reports
// whether it wrote one.
func (d *reactotronDecoder) copyContainer(closer byte, after string, elem func(sep bool) (wrote bool, err error)) error {
	d.out = append(d.out, d.data[d.pos])
	d.pos++
	if d.skipSpace(); d.pos < len(d.data) && d.data[d.pos] == closer {
		d.pos++
		d.out = append(d.out, closer)
		return nil
	}
	for sep := false; ; {
		wrote, err := elem(sep)
		if err != nil {
			return err
		}
		sep = sep || wrote
		if d.skipSpace(); d.pos < len(d.data) && d.data[d.pos] == ',' {
			d.pos++
			continue
		}
		if err := d.expect(closer, after); err != nil {
			return reactotronMalformed(err)
		}
		d.out = append(d.out, closer)
		return nil
	}
}

// reactotronEncodedStrings are the encodings, lower-cased, that decode to
// a string.
var reactotronEncodedStrings = map[string]string{
	"empty string": "", "infinity": "Infinity", "-infinity": "-Infinity", "nan": "NaN",
	"circular reference": "[circular]", "anonymous function": "[function]",
}

// decodeReactotronString decodes one string value: undefined, or a JSON
// literal to write (lit), or a string to write (str).
func decodeReactotronString(s string) (lit, str string, undefined bool) {
	inner, ok := reactotronEncoding(s)
	if !ok {
		return "", s, false
	}
	switch lower := strings.ToLower(inner); lower {
	case "undefined":
		return "", "", true
	case "null", "false", "true":
		return lower, "", false
	case "zero":
		return "0", "", false
	default:
		if str, ok := reactotronEncodedStrings[lower]; ok {
			return "", str, false
		}
	}
	if name, ok := strings.CutSuffix(inner, "()"); ok && name != "" {
		return "", "[function " + name + "]", false
	}
	return "", "[" + inner + "]", false
}
