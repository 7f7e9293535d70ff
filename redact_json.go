package main

// JSON is redacted while it is copied, with the walking helpers of
// json_raw.go: nothing is decoded but the few strings that hold escapes. What
// is hidden, and the redactor that callers hold, are in redact_redactor.go.

import (
	"bytes"
	"fmt"
	"slices"
)

// jsonRedaction is one pass of JSON over data. Output is built lazily: out
// stays nil until the first replacement, and data[last:] is what has not
// been copied to it yet, so an output offset is known for every input
// offset at or after last.
type jsonRedaction struct {
	r       *redactor
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

// walkJSON redacts data; with all set, as if it were under a sensitive key.
func (r *redactor) walkJSON(data []byte, all bool) ([]byte, error) {
	w := jsonRedaction{r: r, data: data}
	if err := w.run(all); err != nil {
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

// pend notes, in the innermost frame, the output range of a "value" member
// walked before its sibling name was known (hidePending).
func (w *jsonRedaction) pend(start, end int) {
	top := w.top()
	top.pending = append(top.pending, [2]int{start, end})
}

func (w *jsonRedaction) run(all bool) error {
	d := w.data
	i := skipSpace(d, 0)
	ctx := memberCtx{sensitive: all}
	for {
		if i >= len(d) {
			return errMalformedJSON
		}
		var err error
		if c := d[i]; c == '{' || c == '[' {
			if len(w.frames) >= scanMaxDepth {
				return errRedactTooDeep
			}
			f := redactFrame{object: c == '{', sensitive: ctx.sensitive, valueStart: -1}
			if ctx.pairValue {
				f.valueStart = w.outPos(i)
			}
			w.frames = append(w.frames, f)
			i = skipSpace(d, i+1)
			if closer, _, _ := container(c); i < len(d) && d[i] != closer {
				if i, ctx, err = w.member(i); err != nil {
					return err
				}
				continue
			}
		} else if i, err = w.scalar(i, ctx); err != nil {
			return err
		}
		var done bool
		if i, ctx, done, err = w.next(i); err != nil || done {
			return err
		}
	}
}

// scalar walks the string, number or literal at data[i], hiding it as ctx
// says, and returns the offset after it.
func (w *jsonRedaction) scalar(i int, ctx memberCtx) (int, error) {
	d := w.data
	start := w.outPos(i)
	var end int
	if d[i] == '"' {
		if end = skipString(d, i); end < 0 {
			return 0, errMalformedJSON
		}
		if err := w.stringValue(i, end, ctx); err != nil {
			return 0, err
		}
	} else {
		if end = skipValue(d, i); end <= i {
			return 0, errMalformedJSON
		}
		if c := d[i]; ctx.sensitive && c != 't' && c != 'f' && c != 'n' {
			w.replace(i, end, quotedMarker)
		}
	}
	if ctx.pairValue {
		w.pend(start, w.outPos(end))
	}
	return end, nil
}

// next goes on from the end of a value at data[i]: it leaves the containers
// that end there and returns the offset and context of the next element or
// member, or done at the end of the document.
func (w *jsonRedaction) next(i int) (_ int, _ memberCtx, done bool, _ error) {
	d := w.data
	for {
		i = skipSpace(d, i)
		if len(w.frames) == 0 {
			if i != len(d) {
				return 0, memberCtx{}, false, errMalformedJSON
			}
			return i, memberCtx{}, true, nil
		}
		if i >= len(d) {
			return 0, memberCtx{}, false, errMalformedJSON
		}
		switch c, top := d[i], w.top(); {
		case c == ',':
			i, ctx, err := w.member(skipSpace(d, i+1))
			return i, ctx, false, err
		case c == '}' && top.object || c == ']' && !top.object:
			i++
			closed := w.frames[len(w.frames)-1]
			w.frames = w.frames[:len(w.frames)-1]
			if closed.valueStart >= 0 && len(w.frames) > 0 {
				w.pend(closed.valueStart, w.outPos(i))
			}
		default:
			return 0, memberCtx{}, false, errMalformedJSON
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
// hides the "value" members already copied, as redactor.JSON says.
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
