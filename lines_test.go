package main

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
)

// TestLineReaderDoesNotHoldLongLines: a line over the limit is read
// through without being held, and, dropped, reported with its length; the
// next line follows; a line of exactly the limit is a line.
func TestLineReaderDoesNotHoldLongLines(t *testing.T) {
	const limit = 1 << 20
	lr := newLineReader(io.MultiReader(&endlessReader{n: 8 * limit}, strings.NewReader("\nok\n")), limit, dropLongLines)
	if _, err := lr.next(); !errors.Is(err, errLineTooLong) {
		t.Fatalf("next: %v, want errLineTooLong", err)
	}
	if lr.skipped != 8*limit {
		t.Errorf("skipped = %d, want %d", lr.skipped, 8*limit)
	}
	if cap(lr.buf) > limit+64<<10 {
		t.Errorf("buffer grew to %d bytes for a %d-byte limit", cap(lr.buf), limit)
	}
	line, err := lr.next()
	if err != nil || string(line) != "ok" {
		t.Errorf("next after long line = %q, %v; want \"ok\"", line, err)
	}
	lr = newLineReader(io.MultiReader(&endlessReader{n: limit}, strings.NewReader("\n")), limit, dropLongLines)
	if line, err := lr.next(); err != nil || len(line) != limit {
		t.Errorf("line at the limit: len %d, %v", len(line), err)
	}
}

// TestLineReaderCutsLongLines: with cutLongLines a longer line is its
// first limit bytes, marked cut, whatever the buffer's chunks; the rest is
// not held, and the lines around it are whole.
func TestLineReaderCutsLongLines(t *testing.T) {
	const limit = 100
	for _, n := range []int{limit + 1, limit + 2, 3*limit + 7, 1 << 20} {
		long := strings.Repeat("x", n)
		lr := newLineReader(strings.NewReader("short\n"+long+"\nnext\nlast"), limit, cutLongLines)
		var got []string
		var cuts []bool
		for {
			b, err := lr.next()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			got, cuts = append(got, string(b)), append(cuts, lr.cut)
		}
		if len(got) != 4 || got[0] != "short" || got[1] != long[:limit] || got[2] != "next" || got[3] != "last" ||
			cuts[0] || !cuts[1] || cuts[2] || cuts[3] {
			t.Errorf("a line of %d: got %.30q, cut %v", n, got, cuts)
		}
		if cap(lr.buf) > 2*limit+64 {
			t.Errorf("a line of %d: buffer of %d bytes", n, cap(lr.buf))
		}
	}
}

// FuzzLineReader: whatever the input and limit, no line is longer than the
// limit, and each policy gives back every line within it, in order.
func FuzzLineReader(f *testing.F) {
	f.Add([]byte("a\nbb\n\nccc"), 2)
	f.Add([]byte(strings.Repeat("x", 300)+"\ny\n"), 16)
	f.Fuzz(func(t *testing.T, input []byte, limit int) {
		if limit < 1 || limit > 1<<12 {
			return
		}
		var want [][]byte
		if len(input) > 0 {
			want = bytes.Split(bytes.TrimSuffix(input, []byte("\n")), []byte("\n"))
		}
		for _, policy := range []int{dropLongLines, cutLongLines} {
			lr := newLineReader(bytes.NewReader(input), limit, policy)
			i := 0
			for ; ; i++ {
				b, err := lr.next()
				if err == io.EOF {
					break
				}
				if i >= len(want) {
					t.Fatalf("policy %d: more lines than the input has", policy)
				}
				w := want[i]
				switch {
				case len(w) <= limit:
					if err != nil || !bytes.Equal(b, w) || lr.cut {
						t.Fatalf("policy %d: line %d = %q, %v; want %q", policy, i, b, err, w)
					}
				case policy == dropLongLines:
					if !errors.Is(err, errLineTooLong) || lr.skipped != int64(len(w)) {
						t.Fatalf("line %d of %d bytes: %v, skipped %d", i, len(w), err, lr.skipped)
					}
				default:
					if err != nil || !bytes.Equal(b, w[:limit]) || !lr.cut {
						t.Fatalf("line %d cut: %q, %v", i, b, err)
					}
				}
			}
			if i != len(want) {
				t.Fatalf("policy %d: %d lines, want %d", policy, i, len(want))
			}
		}
	})
}
