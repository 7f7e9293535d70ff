package main

// json_object.go handles JSON objects without decoding them: reading one
// member, and building answers member by member, with timestamps in the
// wire protocol's form.

import (
	"encoding/json"
	"strconv"
	"time"
)

// timeFormat is RFC 3339 with milliseconds, as the wire protocol's timestamps.
const timeFormat = "2006-01-02T15:04:05.000Z07:00"

// formatTime formats t for a JSON answer; the zero time is null.
func formatTime(t time.Time) *string {
	if t.IsZero() {
		return nil
	}
	s := t.UTC().Format(timeFormat)
	return &s
}

// jsonObject builds a JSON object by appending members, so that large raw
// values are copied once instead of re-encoded.
type jsonObject struct{ buf []byte }

func (o *jsonObject) key(name string) {
	if len(o.buf) == 0 {
		o.buf = append(o.buf, '{')
	} else {
		o.buf = append(o.buf, ',')
	}
	o.buf = appendJSONString(o.buf, name, false)
	o.buf = append(o.buf, ':')
}

// raw adds a member whose value is already JSON.
func (o *jsonObject) raw(name string, value []byte) {
	o.key(name)
	o.buf = append(o.buf, value...)
}

// value adds a member encoded with encoding/json. Integers, and strings
// that encoding/json would write as they are, skip its reflection: events
// are numbered and stamped on this path, once each.
func (o *jsonObject) value(name string, v any) {
	switch x := v.(type) {
	case int64:
		o.key(name)
		o.buf = strconv.AppendInt(o.buf, x, 10)
		return
	case string:
		if plainJSONString(x) {
			o.key(name)
			o.buf = append(append(append(o.buf, '"'), x...), '"')
			return
		}
	}
	data, err := json.Marshal(v)
	if err != nil {
		data = []byte("null")
	}
	o.raw(name, data)
}

func (o *jsonObject) close() []byte {
	if len(o.buf) == 0 {
		return []byte("{}")
	}
	return append(o.buf, '}')
}

// plainJSONString reports whether s is written in JSON as it is, between
// quotes: printable ASCII without quotes, backslashes or the characters
// encoding/json escapes for HTML.
func plainJSONString(s string) bool {
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c < 0x20 || c >= 0x7f, c == '"', c == '\\', c == '<', c == '>', c == '&':
			return false
		}
	}
	return true
}

// rawMember returns the value of the first member named name, or nil.
func rawMember(obj []byte, name string) []byte {
	var v []byte
	_ = eachMember(obj, func(n string, value []byte) bool {
		if n == name {
			v = value
			return false
		}
		return true
	})
	return v
}

// nullable is s, or nil (JSON null) when s is empty.
func nullable(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// orNull is the JSON value v, compacted, or null when v is absent (nil).
func orNull(v []byte) json.RawMessage {
	if v == nil {
		return json.RawMessage("null")
	}
	return compactJSON(v)
}
