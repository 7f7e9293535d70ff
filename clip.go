package main

// clip.go is the one text clipper: long texts are cut here, at a character
// boundary, saying how much was left out.

import (
	"fmt"
	"unicode/utf8"
)

// clipText cuts s to its first max characters (an invalid byte counts as
// one), never inside one, adding how many were left out.
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
