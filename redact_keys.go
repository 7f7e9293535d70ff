package main

import "fmt"

// The matcher of sensitive key names, shared by the text rules
// (redact_text.go) and the JSON walk: which names hold a secret.

// keyMatcher finds any of a set of words within a key name, ignoring case
// and the separators - _ . and space: an Aho-Corasick automaton compiled to
// a table, so a key costs one lookup per byte however many words there are.
type keyMatcher struct {
	next   []uint16 // next[state*keyClasses+class]
	accept []bool
}

// keyClasses counts the byte classes: separators (skipped), 26 letters, 10
// digits and everything else.
const keyClasses = 38

var keyClass = func() (t [256]uint8) {
	for c := range 256 {
		switch {
		case c >= 'a' && c <= 'z':
			t[c] = uint8(1 + c - 'a')
		case c >= 'A' && c <= 'Z':
			t[c] = uint8(1 + c - 'A')
		case c >= '0' && c <= '9':
			t[c] = uint8(27 + c - '0')
		case c == '-' || c == '_' || c == '.' || c == ' ':
			t[c] = 0
		default:
			t[c] = keyClasses - 1
		}
	}
	return t
}()

func newKeyMatcher(words []string) *keyMatcher {
	// The trie is built in next itself: 0 marks a missing edge, as no edge
	// leads back to the root (state 0).
	m := &keyMatcher{next: make([]uint16, keyClasses), accept: []bool{false}}
	for _, w := range words {
		s := 0
		for i := 0; i < len(w); i++ {
			cl := int(keyClass[w[i]])
			if cl == 0 {
				continue
			}
			if m.next[s*keyClasses+cl] == 0 {
				m.next[s*keyClasses+cl] = uint16(len(m.accept))
				m.next = append(m.next, make([]uint16, keyClasses)...)
				m.accept = append(m.accept, false)
			}
			s = int(m.next[s*keyClasses+cl])
		}
		if s != 0 {
			m.accept[s] = true
		}
	}
	// Breadth first, fill in the missing edges from the failure links.
	fail := make([]int, len(m.accept))
	queue := []int{}
	for cl := 1; cl < keyClasses; cl++ {
		if t := m.next[cl]; t != 0 {
			queue = append(queue, int(t))
		}
	}
	for len(queue) > 0 {
		s := queue[0]
		queue = queue[1:]
		m.accept[s] = m.accept[s] || m.accept[fail[s]]
		for cl := 1; cl < keyClasses; cl++ {
			if t := int(m.next[s*keyClasses+cl]); t != 0 {
				fail[t] = int(m.next[fail[s]*keyClasses+cl])
				queue = append(queue, t)
			} else {
				m.next[s*keyClasses+cl] = m.next[fail[s]*keyClasses+cl]
			}
		}
	}
	return m
}

// match reports whether name holds one of the words.
func (m *keyMatcher) match(name []byte) bool {
	matched, _ := m.scan(name)
	return matched
}

// scan reports whether name holds one of the words, and whether it holds
// a byte where a text rule may match, or an escape: a name without one
// needs no other look.
func (m *keyMatcher) scan(name []byte) (matched, closer bool) {
	s := 0
	for _, c := range name {
		closer = closer || textTrigger[c] || c == '\\'
		cl := keyClass[c]
		if cl == 0 {
			continue
		}
		s = int(m.next[s*keyClasses+int(cl)])
		matched = matched || m.accept[s]
	}
	return matched, closer
}

// validRedactKey checks one REDACT_KEYS item: a word of letters and digits,
// possibly with separators, as key names are matched.
func validRedactKey(k string) error {
	letters := 0
	for i := 0; i < len(k); i++ {
		switch cl := keyClass[k[i]]; {
		case cl == keyClasses-1:
			return fmt.Errorf("%q is not a key name: use letters and digits, with - _ . or space between", k)
		case cl >= 1 && cl <= 26:
			letters++
		}
	}
	if letters == 0 {
		return fmt.Errorf("%q is not a key name: it needs a letter", k)
	}
	return nil
}
