package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
)

// This file hides secrets in everything the server sends to a client. An
// app's state holds tokens and passwords, and an agent's transcript is
// stored and shared far more widely than the app's memory, so redaction is
// on unless REDACT=off.
//
// Two kinds of rule apply. Values under a sensitive key name (password,
// token, cookie, … matched within any key, ignoring case and the separators
// - _ . and space) are hidden, objects and arrays keeping their shape. Strings that look like secrets — JWTs,
// Bearer and Basic credentials, sk-, gh?_, xox?- and AKIA keys, PEM private
// keys, sensitive URL query or form parameters, "Authorization: …" header
// lines and "password": … inside embedded JSON — have the secret part
// replaced wherever they appear, so a URL or a log line stays readable.
//
// JSON is redacted while it is copied, with the walking helpers of
// rawjson.go: nothing is decoded but the few strings that hold escapes, and
// text without a secret is returned as it came, without a copy. The text
// rules and the key name matcher are in redact_text.go.

// redactedMarker replaces every hidden value.
const redactedMarker = "[REDACTED]"

// sensitiveKeyWords are matched within key names after lower-casing them and
// dropping separators: "X-Api-Key", "api_key" and "apiKey" all hold
// "apikey", "Set-Cookie" holds "cookie", "clientSecret" holds "secret".
var sensitiveKeyWords = []string{
	"password", "passwd", "passphrase", "secret", "token", "authorization", "cookie",
	"apikey", "credential", "privatekey",
}

// sensitiveParamWords are the further names hidden as URL query or form
// parameters (?key=…, &sig=…), where short names are conventional; as JSON
// keys they would hide too much ("key" names every route of a navigation
// state, "session" the adapter's session id).
var (
	sensitiveParamWords = []string{"signature", "session"}
	sensitiveParamNames = []string{"key", "sig", "sid", "auth"}
)

// defaultKeys and defaultParams are the matchers without REDACT_KEYS:
// immutable tables, built once, as jsonStringStop is.
var (
	defaultKeys   = newKeyMatcher(sensitiveKeyWords)
	defaultParams = newKeyMatcher(append(slices.Clone(sensitiveKeyWords), sensitiveParamWords...))
)

// redactor hides secrets in JSON and text. A nil *redactor, as newRedactor
// returns for REDACT=off, passes everything through unchanged. It is never
// changed after newRedactor and is safe for concurrent use.
type redactor struct {
	keys   *keyMatcher // sensitive key names
	params *keyMatcher // sensitive parameter names, in text
}

// newRedactor returns the redactor cfg asks for, or nil when redaction is
// off. REDACT_KEYS is validated by loadConfig, so every extra key is a word.
func newRedactor(cfg config) *redactor {
	if !cfg.Redact {
		return nil
	}
	r := &redactor{keys: defaultKeys, params: defaultParams}
	if len(cfg.RedactKeys) > 0 {
		r.keys = newKeyMatcher(append(slices.Clone(sensitiveKeyWords), cfg.RedactKeys...))
		words := append(slices.Clone(sensitiveKeyWords), sensitiveParamWords...)
		r.params = newKeyMatcher(append(words, cfg.RedactKeys...))
	}
	return r
}

// Mode is "on" or "off", as debug_health_check reports it.
func (r *redactor) Mode() string {
	if r == nil {
		return "off"
	}
	return "on"
}

// JSON returns the JSON text data with its secrets hidden: values under
// sensitive keys and secret-looking strings. Keys, their order and the
// nesting stay as they are. A value under a sensitive key becomes the
// string "[REDACTED]", except null, true, false and "", which hold no
// secret and tell whether one is set; an object or array under a sensitive
// key keeps its keys and length, with every value inside hidden the same
// way. In an object with a "key" or "name" member naming a sensitive key
// ({"name": "Authorization", "value": "…"}), the "value" member is hidden
// as if it were under that key, whichever member comes first.
//
// data is returned itself when nothing is hidden. Text that is not valid
// JSON gets the text rules over the whole of it (Text), so nothing passes
// unredacted.
func (r *redactor) JSON(data []byte) []byte {
	if r == nil {
		return data
	}
	out, err := r.redactJSON(data)
	if err != nil {
		redacted, _ := r.appendText(nil, data)
		if redacted == nil {
			return data
		}
		return redacted
	}
	return out
}

// Text returns free text — a log message, a URL, a header value — with the
// secret-looking parts replaced by "[REDACTED]".
func (r *redactor) Text(s string) string {
	if r == nil {
		return s
	}
	out, changed := r.appendText(nil, []byte(s))
	if !changed {
		return s
	}
	return string(out)
}

// Value returns v, encoded as JSON, redacted, for a payload built from Go
// values (a notification's data). A value that cannot be encoded becomes a
// string saying so.
func (r *redactor) Value(v any) any {
	if r == nil {
		return v
	}
	data, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprintf("unencodable value: %v", err)
	}
	return json.RawMessage(r.JSON(data))
}

// Changes hides the values of diff changes whose path passes through a
// sensitive key. It must run on the diff of the unredacted states: two
// different tokens both redact to "[REDACTED]", and a diff of redacted
// states would not see that the token changed. Values elsewhere are left to
// JSON, which the encoded result goes through like any other.
func (r *redactor) Changes(changes []change) {
	if r == nil {
		return
	}
	for i := range changes {
		if !r.sensitivePath(changes[i].Path) {
			continue
		}
		changes[i].OldValue = redactDecoded(changes[i].OldValue)
		changes[i].NewValue = redactDecoded(changes[i].NewValue)
	}
}

// At redacts value, the JSON found at path segs of a state: when the path
// passes through a sensitive key, all of value is under it, though the
// answer ({"path": "auth.password", "value": …}) no longer shows that key.
func (r *redactor) At(segs []pathSegment, value []byte) []byte {
	if r == nil {
		return value
	}
	for _, seg := range segs {
		if r.keys.match([]byte(seg.Key)) {
			if hidden, err := r.walkJSON(value, true); err == nil {
				return hidden
			}
			return quotedMarker
		}
	}
	return value
}

// sensitivePath reports whether a canonical path has a sensitive key in it.
func (r *redactor) sensitivePath(path string) bool {
	segs, err := parsePath(path)
	if err != nil {
		return r.keys.match([]byte(path)) // not one of ours: judge the text
	}
	for _, seg := range segs {
		if r.keys.match([]byte(seg.Key)) {
			return true
		}
	}
	return false
}

// redactDecoded is the decoded-value counterpart of a value under a
// sensitive key in JSON: a copy with every string and number hidden.
func redactDecoded(v any) any {
	switch v := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, e := range v {
			out[k] = redactDecoded(e)
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = redactDecoded(e)
		}
		return out
	case nil, bool:
		return v
	case string:
		if v == "" {
			return v
		}
	}
	return redactedMarker
}

// ---------------------------------------------------------------------------
// JSON.

// jsonRedaction is one pass of JSON over data. Output is built lazily: out
// stays nil until the first replacement, and data[last:] is what has not
// been copied to it yet, so an output offset is known for every input
// offset at or after last.
type jsonRedaction struct {
	r       *redactor
	all     bool // everything is under a sensitive key
	data    []byte
	out     []byte
	last    int
	frames  []redactFrame
	scratch []byte
}

// redactFrame is an object or array being walked.
type redactFrame struct {
	object    bool
	sensitive bool // under a sensitive key: every value inside is hidden
	// pairSensitive: a "key" or "name" member named a sensitive key, so
	// "value" members are hidden; pending holds the output ranges of
	// "value" members walked before that was known.
	pairSensitive bool
	pending       [][2]int
	// valueStart is the output offset of this container when it is a
	// "value" member of its parent that may still need hiding, else -1.
	valueStart int
}

// memberCtx says how to treat the value about to be walked.
type memberCtx struct {
	sensitive bool // hide it
	pairValue bool // a "value" member whose sibling name is not known yet
	pairName  bool // a "key" or "name" member: its string may name a sensitive key
}

var errRedactTooDeep = fmt.Errorf("JSON nested deeper than %d levels", scanMaxDepth)

func (r *redactor) redactJSON(data []byte) ([]byte, error) {
	return r.walkJSON(data, false)
}

// walkJSON redacts data; with all set, as if it were under a sensitive key.
func (r *redactor) walkJSON(data []byte, all bool) ([]byte, error) {
	w := jsonRedaction{r: r, all: all, data: data}
	if err := w.run(); err != nil {
		return nil, err
	}
	if w.out == nil {
		return data, nil
	}
	return append(w.out, data[w.last:]...), nil
}

// outPos is the output offset that data[p] will have, for p ≥ w.last.
func (w *jsonRedaction) outPos(p int) int { return len(w.out) + p - w.last }

// flush copies the input up to p to the output.
func (w *jsonRedaction) flush(p int) {
	if w.out == nil {
		w.out = make([]byte, 0, len(w.data)+len(w.data)/32+64)
	}
	w.out = append(w.out, w.data[w.last:p]...)
	w.last = p
}

// replace puts parts in place of data[start:end].
func (w *jsonRedaction) replace(start, end int, parts ...[]byte) {
	w.flush(start)
	for _, p := range parts {
		w.out = append(w.out, p...)
	}
	w.last = end
}

var (
	quotedMarker = []byte(`"` + redactedMarker + `"`)
	quoteBytes   = []byte(`"`)
)

func (w *jsonRedaction) top() *redactFrame { return &w.frames[len(w.frames)-1] }

func (w *jsonRedaction) run() error {
	d := w.data
	i := skipSpace(d, 0)
	ctx := memberCtx{sensitive: w.all}
	for {
		if i >= len(d) {
			return errMalformedJSON
		}
		start := w.outPos(i)
		switch c := d[i]; c {
		case '{', '[':
			if len(w.frames) >= scanMaxDepth {
				return errRedactTooDeep
			}
			f := redactFrame{object: c == '{', sensitive: ctx.sensitive, valueStart: -1}
			if ctx.pairValue {
				f.valueStart = start
			}
			w.frames = append(w.frames, f)
			i = skipSpace(d, i+1)
			closer := byte(']')
			if f.object {
				closer = '}'
			}
			if i < len(d) && d[i] != closer {
				var err error
				if i, ctx, err = w.member(i); err != nil {
					return err
				}
				continue
			}
		case '"':
			end := skipString(d, i)
			if end < 0 {
				return errMalformedJSON
			}
			if err := w.stringValue(i, end, ctx); err != nil {
				return err
			}
			i = end
			if ctx.pairValue {
				top := w.top()
				top.pending = append(top.pending, [2]int{start, w.outPos(i)})
			}
		default:
			end := skipValue(d, i)
			if end <= i {
				return errMalformedJSON
			}
			if ctx.sensitive && c != 't' && c != 'f' && c != 'n' {
				w.replace(i, end, quotedMarker)
			}
			i = end
			if ctx.pairValue {
				top := w.top()
				top.pending = append(top.pending, [2]int{start, w.outPos(i)})
			}
		}
		// The value is complete: leave finished containers, or go on to the
		// next element or member.
		for {
			i = skipSpace(d, i)
			if len(w.frames) == 0 {
				if i != len(d) {
					return errMalformedJSON
				}
				return nil
			}
			if i >= len(d) {
				return errMalformedJSON
			}
			top := w.top()
			c := d[i]
			if c == ',' {
				var err error
				if i, ctx, err = w.member(skipSpace(d, i+1)); err != nil {
					return err
				}
				break
			}
			if c == '}' && top.object || c == ']' && !top.object {
				i++
				done := w.frames[len(w.frames)-1]
				w.frames = w.frames[:len(w.frames)-1]
				if done.valueStart >= 0 && len(w.frames) > 0 {
					parent := w.top()
					parent.pending = append(parent.pending, [2]int{done.valueStart, w.outPos(i)})
				}
				continue
			}
			return errMalformedJSON
		}
	}
}

// member reads what comes before the next value of the innermost container:
// for an object, its key and colon.
func (w *jsonRedaction) member(i int) (int, memberCtx, error) {
	top := w.top()
	if !top.object {
		return i, memberCtx{sensitive: top.sensitive}, nil
	}
	d := w.data
	if i >= len(d) || d[i] != '"' {
		return 0, memberCtx{}, errMalformedJSON
	}
	end := skipString(d, i)
	if end < 0 {
		return 0, memberCtx{}, errMalformedJSON
	}
	name := d[i+1 : end-1]
	// One pass over the raw name tells whether it is sensitive and whether
	// the text rules or an escape need a closer look.
	sensitive, closer := w.r.keys.scan(name)
	if closer && bytes.IndexByte(name, '\\') >= 0 {
		s, ok := wireString(d[i:end])
		if !ok {
			return 0, memberCtx{}, errMalformedJSON
		}
		name = []byte(s)
		sensitive = w.r.keys.match(name)
	}
	ctx := memberCtx{sensitive: top.sensitive || sensitive}
	// Most keys are of other lengths: compare only those that may match.
	switch {
	case ctx.sensitive || len(name) < 3 || len(name) > 5:
	case len(name) == 5 && bytes.EqualFold(name, []byte("value")):
		ctx.sensitive = top.pairSensitive
		ctx.pairValue = !top.pairSensitive
	case len(name) == 3 && bytes.EqualFold(name, []byte("key")) || len(name) == 4 && bytes.EqualFold(name, []byte("name")):
		ctx.pairName = !top.pairSensitive
	}
	if closer {
		if err := w.text(i, end); err != nil {
			return 0, memberCtx{}, err
		}
	}
	i = skipSpace(d, end)
	if i >= len(d) || d[i] != ':' {
		return 0, memberCtx{}, errMalformedJSON
	}
	return skipSpace(d, i+1), ctx, nil
}

// stringValue handles the string value data[i:end].
func (w *jsonRedaction) stringValue(i, end int, ctx memberCtx) error {
	d := w.data
	content := d[i+1 : end-1]
	if ctx.sensitive {
		if len(content) > 0 && string(content) != redactedMarker {
			w.replace(i, end, quotedMarker)
		}
		return nil
	}
	if err := w.text(i, end); err != nil {
		return err
	}
	if ctx.pairName {
		name := content
		if bytes.IndexByte(name, '\\') >= 0 {
			if s, ok := wireString(d[i:end]); ok {
				name = []byte(s)
			}
		}
		if w.r.keys.match(name) {
			w.hidePending(end)
		}
	}
	return nil
}

// hidePending marks the innermost object as naming a sensitive key and
// hides the "value" members already copied, as if they had been under a
// sensitive key: an object or array keeps its keys and length.
func (w *jsonRedaction) hidePending(cur int) {
	top := w.top()
	top.pairSensitive = true
	if len(top.pending) == 0 {
		return
	}
	w.flush(cur)
	for k := len(top.pending) - 1; k >= 0; k-- {
		r := top.pending[k]
		hidden, err := w.r.walkJSON(bytes.Clone(w.out[r[0]:r[1]]), true)
		if err != nil {
			hidden = quotedMarker // it was copied from valid JSON: cannot happen
		}
		w.out = slices.Replace(w.out, r[0], r[1], hidden...)
	}
	top.pending = nil
}

// text applies the text rules to the string data[i:end], key or value.
func (w *jsonRedaction) text(i, end int) error {
	d := w.data
	content := d[i+1 : end-1]
	if bytes.IndexByte(content, '\\') < 0 {
		out, changed := w.r.appendText(w.scratch[:0], content)
		w.scratch = out[:0]
		if changed {
			w.replace(i, end, quoteBytes, out, quoteBytes)
		}
		return nil
	}
	// Escapes could hide a secret's characters, and embedded JSON's quotes
	// are escaped: judge the decoded text.
	s, ok := wireString(d[i:end])
	if !ok {
		return errMalformedJSON
	}
	out, changed := w.r.appendText(nil, []byte(s))
	if changed {
		w.replace(i, end, appendJSONString(w.scratch[:0], out, false))
	}
	return nil
}
