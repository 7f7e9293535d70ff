package main

import (
	"errors"
	"math"
	"math/big"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

func TestDecimalInteger(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		text        string
		want        int64
		inRange, ok bool
	}{
		{"0", 0, true, true},
		{"-3", -3, true, true},
		{"9007199254740993", 9007199254740993, true, true}, // beyond 2^53, exact
		{"9223372036854775807", math.MaxInt64, true, true},
		{"-9223372036854775808", math.MinInt64, true, true},
		{"5.0", 5, true, true},
		{"5e1", 50, true, true},
		{"5E+1", 50, true, true},
		{"-2.0e0", -2, true, true},
		{"9223372036854775808", math.MaxInt64, false, true},
		{"1e19", math.MaxInt64, false, true},
		{"1e400", math.MaxInt64, false, true},
		{"-1e30", math.MinInt64, false, true},
		{"18700000000009998780e-1", 1870000000000999936, true, true}, // digits overflow, the value does not
		{"-18700000000009998780e-1", -1870000000000999936, true, true},
		{"18446744073709551616.0", math.MaxInt64, false, true},
		{"+5", 5, true, true},  // settings are text, where a sign is no mistake
		{"007", 7, true, true}, // and neither is a leading zero
		{"2.5", 0, false, false},
		{"1e-400", 0, false, false},
		{"0e-400", 0, true, true},
		{"", 0, false, false},
		{"-", 0, false, false},
		{"1.", 1, true, true}, // strconv reads it, and it is integral
		{" 1", 0, false, false},
		{`"1"`, 0, false, false},
		{"true", 0, false, false},
		{"inf", 0, false, false},
		{"NaN", 0, false, false},
		{"0x10", 0, false, false},
		{"1_000", 0, false, false},
	} {
		n, inRange, ok := decimalInteger([]byte(tt.text))
		if n != tt.want || inRange != tt.inRange || ok != tt.ok {
			t.Errorf("decimalInteger(%q) = %d, %t, %t; want %d, %t, %t", tt.text, n, inRange, ok, tt.want, tt.inRange, tt.ok)
		}
	}
}

// jsonNumberSyntax is RFC 8259's number grammar.
var jsonNumberSyntax = regexp.MustCompile(`^-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][-+]?[0-9]+)?$`)

// FuzzDecimalInteger holds decimalInteger to the exact value of a JSON
// number, computed with math/big: an integral value is read (saturated
// when beyond int64), a fraction is refused. Off the JSON grammar it must
// only never accept what strconv would not read at all.
func FuzzDecimalInteger(f *testing.F) {
	for _, seed := range []string{"0", "-1", "5.0", "5e1", "1e-400", "2.5", "1e400", "9223372036854775808",
		"-9223372036854775809", "1.00000000000000000001", "+5", "007", "inf", ""} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, text string) {
		n, inRange, ok := decimalInteger([]byte(text))
		if !ok && (n != 0 || inRange) {
			t.Fatalf("decimalInteger(%q) = %d, %t, false: a refusal carries no value", text, n, inRange)
		}
		if !jsonNumberSyntax.MatchString(text) || len(text) > 64 {
			if _, err := strconv.ParseFloat(text, 64); ok && err != nil && !errors.Is(err, strconv.ErrRange) {
				t.Fatalf("decimalInteger(%q) accepted what strconv cannot read: %v", text, err)
			}
			return
		}
		if m := jsonNumberSyntax.FindStringSubmatch(text); len(strings.TrimLeft(m[3], "eE+-")) > 4 {
			return // an exponent math/big would spend long on, or refuse
		}
		exact, good := new(big.Rat).SetString(text)
		if !good {
			t.Fatalf("math/big cannot read the JSON number %q", text)
		}
		limit := new(big.Rat).SetInt64(math.MaxInt64)
		fits := exact.Cmp(limit) < 0 && exact.Cmp(new(big.Rat).SetInt64(math.MinInt64)) >= 0
		switch {
		case exact.IsInt() && !ok:
			t.Fatalf("decimalInteger(%q) refused an integer", text)
		case !ok:
			return
		case !exact.IsInt():
			// Digits past float64's precision may round to an integer, as
			// they do for every JSON reader that decodes to float64: the
			// value read must then be the nearest.
			if got := new(big.Rat).SetInt64(n); new(big.Rat).Sub(got, exact).Abs(new(big.Rat).Sub(got, exact)).Cmp(big.NewRat(1, 1)) >= 0 &&
				fits && exact.Cmp(new(big.Rat).SetInt64(1<<53)) < 0 && exact.Cmp(new(big.Rat).SetInt64(-1<<53)) > 0 {
				t.Fatalf("decimalInteger(%q) = %d, not the nearest integer to a fraction", text, n)
			}
		case inRange != fits && !nearInt64Bounds(exact):
			t.Fatalf("decimalInteger(%q) inRange = %t, want %t", text, inRange, fits)
		case inRange && exact.Cmp(new(big.Rat).SetInt64(1<<53)) < 0 && exact.Cmp(new(big.Rat).SetInt64(-1<<53)) > 0 &&
			new(big.Rat).SetInt64(n).Cmp(exact) != 0:
			t.Fatalf("decimalInteger(%q) = %d, want %s", text, n, exact.RatString())
		case !inRange && (n != math.MaxInt64 && n != math.MinInt64):
			t.Fatalf("decimalInteger(%q) = %d out of range, not saturated", text, n)
		}
	})
}

// nearInt64Bounds reports whether r lies where float64 cannot tell a
// value just inside int64 from one just outside: 2^62 <= |r| <= 2^64.
func nearInt64Bounds(r *big.Rat) bool {
	abs := new(big.Rat).Abs(r)
	lo := new(big.Rat).SetInt(new(big.Int).Lsh(big.NewInt(1), 62))
	hi := new(big.Rat).SetInt(new(big.Int).Lsh(big.NewInt(1), 64))
	return abs.Cmp(lo) >= 0 && abs.Cmp(hi) <= 0
}
