package main

import (
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
// token, cookie, …: sensitiveKeyWords) are hidden, as JSON says. Strings
// that look like secrets — JWTs, Bearer and Basic credentials, sk-, gh?_,
// xox?- and AKIA keys, PEM private keys, sensitive URL query or form
// parameters, "Authorization: …" header lines and "password": … inside
// embedded JSON — have the secret part replaced wherever they appear, so a
// URL or a log line stays readable.
//
// The JSON walk is in redact_json.go; the text rules and the key name
// matcher are in redact_text.go.

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
	defaultParams = newKeyMatcher(slices.Concat(sensitiveKeyWords, sensitiveParamWords))
)

// redactor hides secrets in JSON and text. A nil *redactor, as newRedactor
// returns for REDACT=off, passes everything through unchanged. It is never
// changed after newRedactor and is safe for concurrent use.
type redactor struct {
	keys   *keyMatcher // sensitive key names
	params *keyMatcher // sensitive parameter names, in text
}

// newRedactor returns the redactor cfg asks for, or nil when redaction is
// off. REDACT_KEYS is validated by loadConfigFlags, so every extra key is a word.
func newRedactor(cfg config) *redactor {
	if !cfg.Redact {
		return nil
	}
	if len(cfg.RedactKeys) == 0 {
		return &redactor{keys: defaultKeys, params: defaultParams}
	}
	return &redactor{keys: newKeyMatcher(slices.Concat(sensitiveKeyWords, cfg.RedactKeys)),
		params: newKeyMatcher(slices.Concat(sensitiveKeyWords, sensitiveParamWords, cfg.RedactKeys))}
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
	if out, err := r.walkJSON(data, false); err == nil {
		return out
	}
	if redacted, changed := r.appendText(nil, data); changed {
		return redacted
	}
	return data
}

// Text redacts free text: a log message, a URL, a header value.
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
	if r == nil || !r.sensitiveSegments(segs) {
		return value
	}
	if hidden, err := r.walkJSON(value, true); err == nil {
		return hidden
	}
	return quotedMarker
}

func (r *redactor) sensitivePath(path string) bool {
	segs, err := parsePath(path)
	if err != nil {
		return r.keys.match([]byte(path)) // not one of ours: judge the text
	}
	return r.sensitiveSegments(segs)
}

func (r *redactor) sensitiveSegments(segs []pathSegment) bool {
	return slices.ContainsFunc(segs, func(seg pathSegment) bool { return r.keys.match([]byte(seg.Key)) })
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
