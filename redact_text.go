package main

import (
	"bytes"
	"slices"
	"strings"
)

// The text rules of redaction (redact_redactor.go applies them): what a
// secret looks like in a string.

// textTrigger marks the bytes at which a text rule may match: each rule is
// checked only where its rarest fixed character is.
var textTrigger = func() (t [256]bool) {
	for _, c := range []byte("JBb-_A=:") {
		t[c] = true
	}
	return t
}()

// appendText appends s to dst with every secret found replaced, and reports
// whether any was; when none was, dst is returned as it came.
func (r *redactor) appendText(dst, s []byte) ([]byte, bool) {
	last, changed := 0, false
	for i := 0; i < len(s); i++ {
		// Most text has no trigger: test eight bytes per branch.
		for i+8 <= len(s) && !(textTrigger[s[i]] || textTrigger[s[i+1]] || textTrigger[s[i+2]] || textTrigger[s[i+3]] ||
			textTrigger[s[i+4]] || textTrigger[s[i+5]] || textTrigger[s[i+6]] || textTrigger[s[i+7]]) {
			i += 8
		}
		if i >= len(s) || !textTrigger[s[i]] {
			continue
		}
		start, end, marker, ok := r.secretAt(s, i)
		if !ok {
			continue
		}
		// A match may overlap the one before it; only its new part counts.
		start = max(start, last)
		if start >= end || string(s[start:end]) == marker {
			continue
		}
		changed = true
		dst = append(dst, s[last:start]...)
		dst = append(dst, marker...)
		last = end
		// Look again inside what was hidden: a rule that stopped early
		// ("password=Bearer" of "password=Bearer xyz") must not leave the
		// rest of a secret behind. Matches there only extend past last.
		// Long matches reach a delimiter or the end, and are not looked
		// into again, so that the work stays linear.
		i = end - 1
		if end-start <= 256 {
			i = start - 1
		}
	}
	if !changed {
		return dst, false
	}
	return append(dst, s[last:]...), true
}

// secretAt checks the rules whose trigger is s[i] and returns the part to
// replace, s[start:end], and what to replace it with.
func (r *redactor) secretAt(s []byte, i int) (start, end int, marker string, ok bool) {
	// sk- and sk_ keys: where one is found, no other rule for - or _ matches.
	if (s[i] == '-' || s[i] == '_') && prefixedAt(s, i, "sk") {
		if start, end, marker, ok := tokenAfter(s, i+1, 16); ok {
			return start, end, marker, ok
		}
	}
	switch s[i] {
	case 'J':
		return jwtAt(s, i)
	case 'B', 'b':
		return authSchemeAt(s, i)
	case '-':
		if start, end, ok := pemAt(s, i); ok {
			return start, end, redactedMarker, true
		}
		if i >= 4 && prefixedAt(s, i-1, "xox") && isLetter(s[i-1]) {
			return tokenAfter(s, i+1, 10)
		}
	case '_':
		if i >= 3 && prefixedAt(s, i-1, "gh") && strings.IndexByte("pousr", s[i-1]) >= 0 {
			return tokenAfter(s, i+1, 20)
		}
		if prefixedAt(s, i, "github") && bytes.HasPrefix(s[i:], []byte("_pat_")) {
			return tokenAfter(s, i+5, 20)
		}
	case 'A':
		if (bytes.HasPrefix(s[i:], []byte("AKIA")) || bytes.HasPrefix(s[i:], []byte("ASIA"))) && boundaryAt(s, i) {
			e := i + 4
			for e < len(s) && (s[e] >= 'A' && s[e] <= 'Z' || s[e] >= '0' && s[e] <= '9') {
				e++
			}
			if e-(i+4) >= 16 {
				return i + 4, e, redactedMarker, true
			}
		}
	case '=':
		return r.paramAt(s, i)
	case ':':
		return r.colonAt(s, i)
	}
	return 0, 0, "", false
}

func isTokenChar(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-'
}

func isLetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

// boundaryAt reports whether a token may start at s[p]: nothing of a token
// precedes it ("task-…" holds no sk- key).
func boundaryAt(s []byte, p int) bool { return p == 0 || !isTokenChar(s[p-1]) }

// prefixedAt reports whether prefix ends just before s[i] and starts a token.
func prefixedAt(s []byte, i int, prefix string) bool {
	p := i - len(prefix)
	return p >= 0 && string(s[p:i]) == prefix && boundaryAt(s, p)
}

func tokenRun(s []byte, j int) int {
	for j < len(s) && isTokenChar(s[j]) {
		j++
	}
	return j
}

// tokenAfter hides the token starting at s[j] when it has at least n
// characters: the key prefix before it stays, to say what kind it was.
func tokenAfter(s []byte, j, n int) (int, int, string, bool) {
	e := tokenRun(s, j)
	if e-j < n {
		return 0, 0, "", false
	}
	return j, e, redactedMarker, true
}

// jwtAt finds a JWT whose "eyJ" ends at s[i]: base64url header, '.', a
// payload and an optional signature. Two parts are enough: a token cut
// after its payload still carries it.
func jwtAt(s []byte, i int) (int, int, string, bool) {
	p := i - 2
	if p < 0 || s[p] != 'e' || s[p+1] != 'y' || !boundaryAt(s, p) {
		return 0, 0, "", false
	}
	e1 := tokenRun(s, p)
	if e1-p < 10 || e1 >= len(s) || s[e1] != '.' {
		return 0, 0, "", false
	}
	e2 := tokenRun(s, e1+1)
	if e2-(e1+1) < 4 {
		return 0, 0, "", false
	}
	if e2 < len(s) && s[e2] == '.' {
		e2 = tokenRun(s, e2+1)
	}
	return p, e2, redactedMarker, true
}

// authSchemeAt finds "Bearer <credentials>" or "Basic <credentials>" (the
// scheme in any case) and hides the credentials. Short ones must look
// random, so that "basic settings" stays prose.
func authSchemeAt(s []byte, i int) (int, int, string, bool) {
	if i+1 >= len(s) || s[i+1]|0x20 != 'e' && s[i+1]|0x20 != 'a' || !boundaryAt(s, i) {
		return 0, 0, "", false
	}
	j := -1
	for _, scheme := range []string{"bearer", "basic"} {
		if len(s)-i > len(scheme) && bytes.EqualFold(s[i:i+len(scheme)], []byte(scheme)) {
			j = i + len(scheme)
			break
		}
	}
	if j < 0 || (s[j] != ' ' && s[j] != '\t') {
		return 0, 0, "", false
	}
	for j < len(s) && (s[j] == ' ' || s[j] == '\t') {
		j++
	}
	e := j
	for e < len(s) && (isTokenChar(s[e]) || strings.IndexByte(".~+/", s[e]) >= 0) {
		e++
	}
	for e < len(s) && s[e] == '=' {
		e++
	}
	if n := e - j; n < 8 || n < 20 && !looksRandom(s[j:e]) {
		return 0, 0, "", false
	}
	return j, e, redactedMarker, true
}

// looksRandom reports whether a credential mixes at least two of lower
// case, upper case, digits and symbols, as generated ones do.
func looksRandom(t []byte) bool {
	var lower, upper, digit, other int
	for _, c := range t {
		switch {
		case c >= 'a' && c <= 'z':
			lower = 1
		case c >= 'A' && c <= 'Z':
			upper = 1
		case c >= '0' && c <= '9':
			digit = 1
		default:
			other = 1
		}
	}
	return lower+upper+digit+other >= 2
}

// pemAt finds a PEM private key block starting at s[i] and returns its body,
// between the BEGIN and END lines; without an END line, everything after
// BEGIN is the body.
func pemAt(s []byte, i int) (int, int, bool) {
	const begin = "-----BEGIN "
	if !bytes.HasPrefix(s[i:], []byte(begin)) {
		return 0, 0, false
	}
	rest := s[i+len(begin):]
	j := bytes.Index(rest, []byte("-----"))
	if j < 0 || !bytes.Contains(rest[:j], []byte("PRIVATE KEY")) {
		return 0, 0, false
	}
	body := i + len(begin) + j + 5
	end := bytes.Index(s[body:], []byte("-----END"))
	if end < 0 {
		return body, len(s), true
	}
	return body, body + end, true
}

// paramAt finds name=value at the '=' at s[i], the name starting the text
// or following one of ? & # ; , or white space, as in URLs, form bodies and
// cookies; a sensitive name's value is hidden up to the next delimiter.
func (r *redactor) paramAt(s []byte, i int) (int, int, string, bool) {
	// The whole name counts, however long (see embeddedMemberAt): a name
	// that a redacted key inside it shortens must match on the first pass.
	p := i
	for p > 0 && (isTokenChar(s[p-1]) || s[p-1] == '.' || s[p-1] == '[' || s[p-1] == ']') {
		p--
	}
	if p == i || (p > 0 && strings.IndexByte("?&#;, \t\r\n", s[p-1]) < 0) {
		return 0, 0, "", false
	}
	if name := s[p:i]; !r.params.match(name) &&
		!slices.ContainsFunc(sensitiveParamNames, func(n string) bool { return bytes.EqualFold(name, []byte(n)) }) {
		return 0, 0, "", false
	}
	e := i + 1
	for e < len(s) && strings.IndexByte("&#; \t\r\n,\"'<>", s[e]) < 0 {
		e++
	}
	if e == i+1 {
		return 0, 0, "", false
	}
	return i + 1, e, redactedMarker, true
}

// colonAt handles a ':' at s[i]: a sensitive "name": value of JSON embedded
// in text (also with its quotes escaped, as in JSON inside a JSON string),
// or a header line "Authorization: …" at the start of a line.
func (r *redactor) colonAt(s []byte, i int) (int, int, string, bool) {
	j := i - 1
	for j >= 0 && (s[j] == ' ' || s[j] == '\t') {
		j--
	}
	if j >= 0 && s[j] == '"' {
		return r.embeddedMemberAt(s, i, j)
	}
	if i+1 >= len(s) || (s[i+1] != ' ' && s[i+1] != '\t') || j != i-1 {
		return 0, 0, "", false
	}
	p := i
	for p > 0 && i-p < 64 && isTokenChar(s[p-1]) {
		p--
	}
	if p == i || (p > 0 && s[p-1] != '\n') || !r.keys.match(s[p:i]) {
		return 0, 0, "", false
	}
	v := i + 1
	for v < len(s) && (s[v] == ' ' || s[v] == '\t') {
		v++
	}
	e := v
	for e < len(s) && s[e] != '\n' && s[e] != '\r' {
		e++
	}
	if e == v {
		return 0, 0, "", false
	}
	return v, e, redactedMarker, true
}

// embeddedMemberAt handles "name": value in text, where s[q] is the quote
// closing the name and s[i] the colon.
func (r *redactor) embeddedMemberAt(s []byte, i, q int) (int, int, string, bool) {
	quote := `"`
	if q > 0 && s[q-1] == '\\' {
		quote = `\"`
	}
	// The name reaches back to the quote before it, however far: a bound
	// here would let a first pass miss a name that redacting a secret
	// inside it shortens, and a second pass then hide its value. Each
	// look-back stops at the quote of the member before, so the work over
	// a whole text stays linear.
	nameEnd := q + 1 - len(quote)
	open := bytes.LastIndex(s[:nameEnd], []byte(quote))
	if open < 0 || !r.keys.match(s[open+len(quote):nameEnd]) {
		return 0, 0, "", false
	}
	v := skipSpace(s, i+1)
	if v >= len(s) {
		return 0, 0, "", false
	}
	marker := quote + redactedMarker + quote
	switch c := s[v]; {
	case c == 't' || c == 'f' || c == 'n':
		return 0, 0, "", false
	case quote == `"` && c == '"':
		e := skipString(s, v)
		if e < 0 {
			e = len(s)
		}
		if e-v == 2 {
			return 0, 0, "", false
		}
		return v, e, marker, true
	case quote == `\"` && bytes.HasPrefix(s[v:], []byte(quote)):
		k := bytes.Index(s[v+2:], []byte(quote))
		if k == 0 {
			return 0, 0, "", false
		}
		e := len(s)
		if k > 0 {
			e = v + 2 + k + 2
		}
		return v, e, marker, true
	case c == '{' || c == '[':
		e := -1
		if quote == `"` {
			e = skipValue(s, v)
		}
		if e < 0 {
			e = len(s) // unsure where it ends: hide all of it
		}
		return v, e, marker, true
	}
	// Not JSON: hide up to the next member or line, spaces included, so that
	// "token": Bearer xyz loses all of it.
	e := v
	for e < len(s) && strings.IndexByte(",}]\r\n\\\"", s[e]) < 0 {
		e++
	}
	if e == v {
		return 0, 0, "", false
	}
	return v, e, marker, true
}
