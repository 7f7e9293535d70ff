package main

// Reading one raw JSON scalar without decoding the document around it.

import (
	"errors"
	"math"
	"strconv"
	"strings"
)

// wireInt decodes raw when it is a JSON number with an integer value that
// fits in an int64 (1 and 1.0 alike).
func wireInt(raw []byte) (int64, bool) {
	if len(raw) == 0 || raw[0] != '-' && (raw[0] < '0' || raw[0] > '9') {
		return 0, false
	}
	n, inRange, ok := decimalInteger(raw)
	if !ok || !inRange {
		return 0, false
	}
	return n, true
}

// decimalInteger is the one integer parser: it reads a decimal integer as
// JSON writes numbers. An integral value written with a fraction or an
// exponent (5.0, 5e1) counts, as JSON Schema's "integer" counts it; a
// fraction (2.5, 1e-400) does not, nor does anything but digits, signs,
// a point and an exponent. A value beyond int64 is saturated to its
// bounds, and inRange is false.
func decimalInteger(text []byte) (n int64, inRange, ok bool) {
	if len(text) == 0 {
		return 0, false, false
	}
	for _, c := range text {
		if !(c >= '0' && c <= '9' || c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E') {
			return 0, false, false
		}
	}
	n, err := strconv.ParseInt(string(text), 10, 64) // exact, beyond 2^53 too
	if err == nil {
		return n, true, true
	}
	// ParseInt stops at the first overflow, before it has seen a point or
	// an exponent (18700000000009998780e-1 fits), so its overflow decides
	// only for a plain integer; ParseFloat reads the rest below.
	beyond := errors.Is(err, strconv.ErrRange) && !strings.ContainsAny(string(text), ".eE")
	f, err := strconv.ParseFloat(string(text), 64)
	switch {
	case err != nil && !errors.Is(err, strconv.ErrRange), f != math.Trunc(f), f == 0 && nonZeroMantissa(text):
		return 0, false, false
	case f >= math.MaxInt64, beyond && f > 0:
		return math.MaxInt64, false, true
	case f < math.MinInt64, beyond:
		return math.MinInt64, false, true
	}
	return int64(f), true, true
}

// nonZeroMantissa reports whether a number's digits before any exponent
// are not all zero: 1e-400 parses as 0 but is no integer.
func nonZeroMantissa(v []byte) bool {
	mantissa, _, _ := strings.Cut(strings.ToLower(string(v)), "e")
	return strings.ContainsAny(mantissa, "123456789")
}

// clipJSON quotes a raw JSON value for an error message, shortened.
func clipJSON(raw []byte) string {
	if raw == nil {
		return "nothing"
	}
	return clipText(string(raw), 40)
}
