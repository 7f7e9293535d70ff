package main

// lines.go is the one line reader, of MCP's stdio, the native side's
// children and the relay's event stream: a bound, and a policy per caller.

import (
	"bufio"
	"bytes"
	"errors"
	"io"
)

// errLineTooLong reports a line over the limit; it has been skipped.
var errLineTooLong = errors.New("line too long")

// A line over the limit: dropLongLines reads it through and reports
// errLineTooLong (its length in skipped); cutLongLines returns its first
// limit bytes with cut set.
const (
	dropLongLines = iota
	cutLongLines
)

// lineReader splits input into lines of at most limit bytes.
type lineReader struct {
	r       *bufio.Reader
	limit   int
	policy  int // dropLongLines or cutLongLines
	buf     []byte
	skipped int64 // the last line dropped's length
	cut     bool  // the last line returned was cut
}

func newLineReader(r io.Reader, limit, policy int) *lineReader {
	return &lineReader{r: bufio.NewReaderSize(r, min(limit+1, 64<<10)), limit: limit, policy: policy}
}

// hasLine reports whether a whole line is buffered, so that next will not block.
func (lr *lineReader) hasLine() bool {
	buffered, _ := lr.r.Peek(lr.r.Buffered())
	return bytes.IndexByte(buffered, '\n') >= 0
}

// next returns the next line without its newline. The slice is valid until
// the next call. A last line without a newline is a line; then io.EOF.
func (lr *lineReader) next() ([]byte, error) {
	if cap(lr.buf) > 1<<20 {
		lr.buf = nil // do not keep a huge line's buffer around
	}
	lr.buf, lr.cut = lr.buf[:0], false
	for {
		chunk, err := lr.r.ReadSlice('\n')
		if n := len(lr.buf) + len(chunk); n > lr.limit+1 || (err == io.EOF && n > lr.limit) { // +1: the newline
			return lr.tooLong(chunk, err)
		}
		if need := len(lr.buf) + len(chunk); need > cap(lr.buf) {
			// Grow by doubling, but never past the limit: a line at the limit
			// must not cost twice the limit.
			grown := make([]byte, len(lr.buf), min(max(2*cap(lr.buf), need), lr.limit+1))
			copy(grown, lr.buf)
			lr.buf = grown
		}
		lr.buf = append(lr.buf, chunk...)
		switch {
		case err == nil:
			return lr.buf[:len(lr.buf)-1], nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case err == io.EOF && len(lr.buf) > 0:
			return lr.buf, nil // a last line without a newline
		default:
			return nil, err
		}
	}
}

// tooLong reads the rest of a line over the limit through (chunk, its part
// just read, and on), keeping its first limit bytes when cutting.
func (lr *lineReader) tooLong(chunk []byte, err error) ([]byte, error) {
	lr.skipped = int64(len(lr.buf)) + int64(len(chunk))
	if lr.policy == cutLongLines {
		kept := min(len(lr.buf), lr.limit)
		lr.buf = append(lr.buf[:kept], chunk[:min(len(chunk), lr.limit-kept)]...)
	} else {
		lr.buf = lr.buf[:0]
	}
	for errors.Is(err, bufio.ErrBufferFull) {
		chunk, err = lr.r.ReadSlice('\n')
		lr.skipped += int64(len(chunk))
	}
	if err != nil && err != io.EOF {
		return nil, err
	}
	if err == nil {
		lr.skipped-- // the newline
	}
	if lr.policy == cutLongLines {
		lr.cut = true
		return lr.buf, nil
	}
	return nil, errLineTooLong
}
