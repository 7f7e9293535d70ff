package main

import "strings"

// text prints the stack again, frames in Hermes's form, so that parsing
// the text gives the same stack.
func (st jsStack) text() string {
	lines := append([]string(nil), st.Message...)
	for _, f := range st.Frames {
		lines = append(lines, "    "+f.text())
	}
	return strings.Join(lines, "\n")
}
