package main

import (
	"slices"
	"testing"
)

// ringValues lists a ring's values, oldest first.
func ringValues(r *ring[int]) []int {
	var out []int
	for i := range r.len() {
		out = append(out, *r.at(i))
	}
	return out
}

// TestRingKeepsOrderAcrossGrowthAndWrap: values come out oldest first
// whether the ring grew, wrapped around its slice, or both.
func TestRingKeepsOrderAcrossGrowthAndWrap(t *testing.T) {
	var r ring[int]
	var want []int
	for i := range 100 {
		r.push(i)
		want = append(want, i)
		if i%3 == 0 { // drop some as we go, so the start moves and pushes wrap
			if got := r.dropOldest(); got != want[0] {
				t.Fatalf("dropOldest = %d, want %d", got, want[0])
			}
			want = want[1:]
		}
		if got := ringValues(&r); !slices.Equal(got, want) {
			t.Fatalf("after pushing %d: %v, want %v", i, got, want)
		}
	}
}

// TestRingPushBounded: a bounded ring holds the newest limit values and
// never grows beyond its first capacity.
func TestRingPushBounded(t *testing.T) {
	r := newRing[int](4)
	for i := range 10 {
		r.pushBounded(i, 4)
	}
	if got := ringValues(&r); !slices.Equal(got, []int{6, 7, 8, 9}) {
		t.Errorf("values = %v, want [6 7 8 9]", got)
	}
	if len(r.buf) != 4 {
		t.Errorf("the ring grew to %d slots for 4 values", len(r.buf))
	}
}

// TestRingDropClearsSlot: a dropped value is not kept alive by the ring.
func TestRingDropClearsSlot(t *testing.T) {
	var r ring[*int]
	v := 1
	r.push(&v)
	r.dropOldest()
	for i, p := range r.buf {
		if p != nil {
			t.Errorf("slot %d still holds a dropped value", i)
		}
	}
}
