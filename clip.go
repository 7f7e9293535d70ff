package main

// clip.go is the one text clipper: every long text an answer, an event or a
// log line carries is cut here, at a character boundary, saying how much
// was left out.

import (
	"fmt"
	"unicode/utf8"
)

// clipText cuts s to its first max characters (runes; an invalid byte
// counts as one), adding how many were left out. It never cuts inside a
// character.
func clipText(s string, max int) string {
	if len(s) <= max {
		return s
	}
	cut := 0
	for n := 0; n < max && cut < len(s); n++ {
		_, size := utf8.DecodeRuneInString(s[cut:])
		cut += size
	}
	if cut == len(s) {
		return s
	}
	return s[:cut] + fmt.Sprintf("… (%d more characters)", utf8.RuneCountInString(s[cut:]))
}
