package main

// Reading one raw JSON scalar without decoding the document around it.

import (
	"math"
	"strconv"
)

// wireInt decodes raw when it is a JSON number with an integer value that
// fits in an int64 (1 and 1.0 alike).
func wireInt(raw []byte) (int64, bool) {
	if len(raw) == 0 || raw[0] != '-' && (raw[0] < '0' || raw[0] > '9') {
		return 0, false
	}
	if n, err := strconv.ParseInt(string(raw), 10, 64); err == nil {
		return n, true
	}
	f, err := strconv.ParseFloat(string(raw), 64)
	if err != nil || f != math.Trunc(f) || f < math.MinInt64 || f >= math.MaxInt64 {
		return 0, false
	}
	return int64(f), true
}

// clipJSON quotes a raw JSON value for an error message, shortened.
func clipJSON(raw []byte) string {
	if raw == nil {
		return "nothing"
	}
	if len(raw) > 40 {
		return string(raw[:40]) + "…"
	}
	return string(raw)
}
