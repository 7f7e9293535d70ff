package main

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

const mb = 1 << 20

// TestReclaimerDecisions feeds the reclaimer one sample per tick and
// checks when it returns memory: only once a burst is over (little
// allocated since the previous tick), only above the floor, and not again
// until the held memory doubles what it was after the last return.
func TestReclaimerDecisions(t *testing.T) {
	type tick struct {
		allocated, retained uint64
		after               uint64 // retained once released, when released
	}
	for _, tc := range []struct {
		name  string
		ticks []tick
		want  []bool
	}{
		{"idle from the start", []tick{{1 * mb, 6 * mb, 0}, {1 * mb, 6 * mb, 0}, {1 * mb, 6 * mb, 0}}, []bool{false, false, false}},
		{"first sample cannot tell idle", []tick{{0, 90 * mb, 0}}, []bool{false}},
		{"burst, then idle", []tick{
			{1 * mb, 6 * mb, 0},
			{200 * mb, 90 * mb, 0}, // burst in progress
			{400 * mb, 95 * mb, 0}, // still
			{400*mb + 1000, 95 * mb, 7 * mb},
			{400*mb + 2000, 7 * mb, 0},
		}, []bool{false, false, false, true, false}},
		{"a trickle counts as idle", []tick{{0, 30 * mb, 0}, {reclaimIdleBytes - 1, 30 * mb, 7 * mb}}, []bool{false, true}},
		{"an interval of reclaimIdleBytes is busy", []tick{{0, 30 * mb, 0}, {reclaimIdleBytes, 30 * mb, 0}}, []bool{false, false}},
		{"under the floor", []tick{{0, reclaimFloor, 0}, {0, reclaimFloor, 0}}, []bool{false, false}},
		{"a large live heap is not returned again and again", []tick{
			{0, 100 * mb, 0},
			{0, 100 * mb, 40 * mb}, // returned; 40 MB is really needed
			{300 * mb, 79 * mb, 0}, // busy
			{300 * mb, 79 * mb, 0}, // idle, but under twice 40 MB
			{600 * mb, 81 * mb, 0}, // busy
			{600 * mb, 81 * mb, 40 * mb},
		}, []bool{false, true, false, false, false, true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var r reclaimer
			var got []bool
			for _, tk := range tc.ticks {
				samples := []memSample{{tk.allocated, tk.retained}, {tk.allocated, tk.after}}
				release := false
				r.tick(func() memSample {
					s := samples[0]
					samples = samples[1:]
					return s
				}, func() { release = true })
				got = append(got, release)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("releases per tick (-want +got):\n%s", diff)
			}
		})
	}
}

// TestReclaimerTick drives the ticks with injected samples: it releases
// after the burst and samples again just after.
func TestReclaimerTick(t *testing.T) {
	var samples []memSample
	sample := func() memSample {
		s := samples[0]
		samples = samples[1:]
		return s
	}
	released := 0
	var r reclaimer
	for _, tick := range [][]memSample{
		{{0, 6 * mb}},
		{{300 * mb, 90 * mb}},
		{{300 * mb, 90 * mb}, {300 * mb, 7 * mb}}, // idle: release, then the sample after it
		{{300 * mb, 7 * mb}},                      // idle and small: nothing to do
	} {
		samples = tick
		r.tick(sample, func() { released++ })
		if len(samples) != 0 {
			t.Fatalf("%d samples of tick %v left unread", len(samples), tick)
		}
	}
	if released != 1 {
		t.Errorf("released %d times, want once, after the burst", released)
	}
}

// TestReadMemSample checks the runtime's figures are read: something was
// allocated and something is held, and allocating more moves the count.
func TestReadMemSample(t *testing.T) {
	before := readMemSample()
	sink := make([]byte, 4*mb)
	sink[0] = 1
	after := readMemSample()
	if before.retained == 0 || after.allocated < before.allocated+4*mb {
		t.Errorf("samples %+v then %+v after allocating 4 MB", before, after)
	}
}
