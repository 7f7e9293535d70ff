package main

// The diff of debug_diff_snapshots (spec §2): a deterministic recursive
// comparison of two decoded snapshots that reports what changed as canonical
// paths (json_path.go).

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"slices"
	"strconv"
)

const (
	changeAdded   = "added"
	changeRemoved = "removed"
	changeChanged = "changed"
)

// change is one difference between two snapshots. Path resolves with
// resolveRaw on the target for added and changed, on the base for removed.
type change struct {
	Path     string
	Type     string // changeAdded, changeRemoved or changeChanged
	OldValue any    // set for removed and changed; nil may be JSON null
	NewValue any    // set for added and changed; nil may be JSON null
}

// MarshalJSON writes {"path","type","oldValue"?,"newValue"?}. Which values
// appear follows from Type, not from nil-ness: a key removed while it held
// null must still say "oldValue":null. HTML characters are left unescaped so
// the enclosing encoder's own setting decides.
func (c change) MarshalJSON() ([]byte, error) {
	out := struct {
		Path     string `json:"path"`
		Type     string `json:"type"`
		OldValue *any   `json:"oldValue,omitempty"` // a nil pointer is left out, a pointer to nil is null
		NewValue *any   `json:"newValue,omitempty"`
	}{Path: c.Path, Type: c.Type}
	if c.Type != changeAdded {
		out.OldValue = &c.OldValue
	}
	if c.Type != changeRemoved {
		out.NewValue = &c.NewValue
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	err := enc.Encode(out)
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), err // Encode ends with a newline
}

// diffValues compares base with target, values as encoding/json decodes them
// into any with UseNumber. It returns the first limit changes in order (limit
// ≤ 0 returns none) and the total number of changes.
//
// The order is deterministic: a depth-first walk visiting object keys in
// sorted (byte) order and array elements by index. An object key on one side
// only is one added or removed change holding the whole value; an array
// longer on one side adds or removes its extra elements one by one at their
// index; values of different JSON types are one changed change, with no
// recursion; equal scalars produce nothing.
//
// Numbers compare by value, exactly, not through float64: 1, 1.0, 10e-1 and
// 1E0 are equal and 0 equals -0, while 9007199254740993 differs from
// 9007199254740992. A number that is not valid JSON number text compares by
// its text.
func diffValues(base, target any, limit int) (changes []change, total int) {
	d := differ{limit: max(limit, 0)}
	d.diff(base, target)
	return d.changes, d.total
}

// differ holds the walk's reusable state: the path is kept as a stack of
// segments and formatted only when a change is recorded, and the object
// entries that need visiting share one stack, so an unchanged subtree costs
// no allocation.
type differ struct {
	limit   int
	changes []change
	total   int
	path    []diffStep
	entries []diffEntry
	buf     []byte
}

// diffStep is one step of the path to the node being compared.
type diffStep struct {
	key   string // an object key, when isIdx is false
	index int    // an array index, when isIdx is true
	isIdx bool
}

// diffEntry is an object key whose values need a closer look.
type diffEntry struct {
	key      string
	old, new any
	typ      string // changeAdded, changeRemoved, or "" when on both sides
}

func (d *differ) record(typ string, old, new any) {
	d.total++
	if len(d.changes) >= d.limit {
		return
	}
	buf := d.buf[:0]
	for _, step := range d.path {
		if step.isIdx {
			buf = appendPathIndex(buf, step.index)
		} else {
			buf = appendPathKey(buf, step.key)
		}
	}
	d.buf = buf
	// An added change's old value and a removed one's new value are nil.
	d.changes = append(d.changes, change{Path: string(buf), Type: typ, OldValue: old, NewValue: new})
}

func (d *differ) diff(a, b any) {
	switch av := a.(type) {
	case map[string]any:
		if bv, ok := b.(map[string]any); ok {
			d.diffObjects(av, bv)
			return
		}
	case []any:
		if bv, ok := b.([]any); ok {
			d.diffArrays(av, bv)
			return
		}
	default:
		if scalarsEqual(a, b) {
			return
		}
	}
	d.record(changeChanged, a, b)
}

func (d *differ) diffObjects(a, b map[string]any) {
	// Gather the keys that need a look in map order, skipping equal scalars
	// at once: most keys of a state's records are those, and leaving them out
	// keeps the sort below small.
	start := len(d.entries)
	// Grow once to the most this object can need rather than by doubling,
	// which on a map of ten thousand records copies the stack many times.
	d.entries = slices.Grow(d.entries, len(a))
	common := 0
	for k, av := range a {
		bv, ok := b[k]
		if !ok {
			d.entries = append(d.entries, diffEntry{key: k, old: av, typ: changeRemoved})
			continue
		}
		common++
		if scalarsEqual(av, bv) {
			continue
		}
		d.entries = append(d.entries, diffEntry{key: k, old: av, new: bv})
	}
	// common counts the keys of b that a has too. When that is all of them,
	// b has no key of its own and need not be ranged over: the usual case,
	// as snapshots of one store mostly keep their shape.
	if common < len(b) {
		for k, bv := range b {
			if _, ok := a[k]; !ok {
				d.entries = append(d.entries, diffEntry{key: k, new: bv, typ: changeAdded})
			}
		}
	}
	end := len(d.entries)
	if end-start > 1 {
		slices.SortFunc(d.entries[start:end], func(x, y diffEntry) int { return cmp.Compare(x.key, y.key) })
	}
	for i := start; i < end; i++ {
		// Copy the entry: the recursion appends to d.entries and may move it.
		e := d.entries[i]
		d.path = append(d.path, diffStep{key: e.key})
		if e.typ == "" {
			d.diff(e.old, e.new)
		} else {
			d.record(e.typ, e.old, e.new)
		}
		d.path = d.path[:len(d.path)-1]
	}
	// Stale entries past the new length keep subtrees of base and target
	// reachable, but only while the walk over those same values runs.
	d.entries = d.entries[:start]
}

func (d *differ) diffArrays(a, b []any) {
	for i := range max(len(a), len(b)) {
		d.path = append(d.path, diffStep{index: i, isIdx: true})
		switch {
		case i >= len(b):
			d.record(changeRemoved, a[i], nil)
		case i >= len(a):
			d.record(changeAdded, nil, b[i])
		case !scalarsEqual(a[i], b[i]):
			d.diff(a[i], b[i])
		}
		d.path = d.path[:len(d.path)-1]
	}
}

// scalarsEqual reports whether a and b are the same JSON scalar. Objects and
// arrays are never "equal scalars", so callers recurse into them.
func scalarsEqual(a, b any) bool {
	switch av := a.(type) {
	case string, bool, nil:
		return a == b // false, never a panic, when b is of another type
	case json.Number:
		bv, ok := b.(json.Number)
		return ok && (av == bv || numbersEqual(string(av), string(bv)))
	}
	return false
}

// numbersEqual reports whether two JSON number texts denote the same value,
// exactly: each is reduced to sign, significant digits and exponent without
// converting to a float, so no precision is lost and no memory allocated.
func numbersEqual(a, b string) bool {
	if a == b {
		return true
	}
	x, okA := parseDecimal(a)
	y, okB := parseDecimal(b)
	if !okA || !okB {
		return false
	}
	if x.zero() || y.zero() {
		return x.zero() && y.zero()
	}
	if x.neg != y.neg || x.exp != y.exp || x.digitCount() != y.digitCount() {
		return false
	}
	for i := range x.digitCount() {
		if x.digit(i) != y.digit(i) {
			return false
		}
	}
	return true
}

// decimal is a JSON number as digits·10^exp, the digits being the
// significant ones (no leading or trailing zeros) of intPart followed by
// fracPart, kept as slices of the text to avoid allocating.
type decimal struct {
	neg               bool
	intPart, fracPart string
	// lead and trail count the zeros dropped from the front of intPart+fracPart
	// and from its end.
	lead, trail int
	exp         int64 // of the last significant digit
}

func (d decimal) zero() bool      { return d.lead == len(d.intPart)+len(d.fracPart) }
func (d decimal) digitCount() int { return len(d.intPart) + len(d.fracPart) - d.lead - d.trail }
func (d decimal) digit(i int) byte {
	i += d.lead
	if i < len(d.intPart) {
		return d.intPart[i]
	}
	return d.fracPart[i-len(d.intPart)]
}

// parseDecimal parses s as JSON number text. It fails on anything else, and
// on exponents too long to add safely, leaving those to compare by text.
func parseDecimal(s string) (decimal, bool) {
	var d decimal
	i := 0
	digits := func() string {
		start := i
		for i < len(s) && '0' <= s[i] && s[i] <= '9' {
			i++
		}
		return s[start:i]
	}
	if i < len(s) && s[i] == '-' {
		d.neg = true
		i++
	}
	d.intPart = digits()
	if d.intPart == "" || (len(d.intPart) > 1 && d.intPart[0] == '0') {
		return d, false
	}
	if i < len(s) && s[i] == '.' {
		i++
		if d.fracPart = digits(); d.fracPart == "" {
			return d, false
		}
	}
	var exp int64
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		expNeg := i < len(s) && s[i] == '-'
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		var err error
		if exp, err = strconv.ParseInt(digits(), 10, 64); err != nil || exp > 1e15 {
			return d, false
		}
		if expNeg {
			exp = -exp
		}
	}
	if i != len(s) {
		return d, false
	}
	n := len(d.intPart) + len(d.fracPart)
	for d.lead < n && d.digit(0) == '0' {
		d.lead++
	}
	for d.trail < n-d.lead && d.digit(d.digitCount()-1) == '0' {
		d.trail++
	}
	d.exp = exp - int64(len(d.fracPart)) + int64(d.trail)
	return d, true
}

// decodeState decodes a state for diffing; numbers stay exact as json.Number.
func decodeState(data []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if dec.More() {
		return nil, errors.New("trailing data after the JSON value")
	}
	return v, nil
}
