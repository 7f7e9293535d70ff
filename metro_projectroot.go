package main

// metro_projectroot.go reads the project root a dev server names in its
// /status answer. Expo sends it only as X-React-Native-Project-Root,
// URI-encoded (encodeURI(projectRoot), @expo/cli's createMetroMiddleware):
// Node refuses a header value with a non-ASCII letter, so a path such as
// "/Users/ana/shop app/Café" comes as "/Users/ana/shop%20app/Caf%C3%A9".
// The React Native CLI sends the path as it is (Project-Root, and in newer
// versions X-React-Native-Project-Root too).

import (
	"cmp"
	"net/http"
	"net/url"
	"strings"
	"unicode/utf8"
)

// metroProjectRoot is the project root named by a /status answer's
// headers, "" when it names none.
func metroProjectRoot(h http.Header) string {
	return cmp.Or(decodeProjectRoot(h.Get("X-React-Native-Project-Root")), h.Get("Project-Root"))
}

// decodeProjectRoot undoes encodeURI. encodeURI escapes every '%' (as
// %25), every space and every non-ASCII letter, so a value holding any of
// these unescaped, an escape that is not two hex digits, or escapes that
// decode to no valid UTF-8 was sent as it is (a server that does not
// encode) and is kept. Unlike a query, '+' stays '+'.
func decodeProjectRoot(v string) string {
	if !strings.Contains(v, "%") || strings.ContainsFunc(v, func(r rune) bool { return r <= ' ' || r >= utf8.RuneSelf }) {
		return v
	}
	decoded, err := url.PathUnescape(v)
	if err != nil || !utf8.ValidString(decoded) {
		return v
	}
	return decoded
}
