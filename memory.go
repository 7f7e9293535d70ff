package main

import (
	"context"
	"runtime/debug"
	"runtime/metrics"
	"time"
)

// After a burst (hundreds of 100 KB requests, a huge listing) the heap falls
// back under a megabyte, but the process keeps the pages it grew into: an
// idle server allocates nothing, so no collection runs to lower the heap
// goal, and the runtime's background scavenger returns memory slowly. The
// resident size then stays at its peak for minutes. runReclaimer returns
// it once the burst is over.

const (
	reclaimInterval  = 2 * time.Second // how often the heap is looked at
	reclaimIdleBytes = 1 << 20         // allocated within an interval below which the server counts as idle
	reclaimFloor     = 8 << 20         // held memory below which nothing is worth returning; an idle server holds about 6 MB
)

// memSample is what the reclaimer reads of the runtime's memory.
type memSample struct {
	allocated uint64 // bytes allocated since the program started
	retained  uint64 // bytes the runtime holds from the system: all it mapped, less the heap pages it released
}

// reclaimer decides when to return memory: when nothing much was
// allocated during the last interval (the burst is over) and the runtime
// holds more than reclaimFloor and more than twice what it held after the
// last return, so that a server that really needs the memory is not made
// to give it back again and again.
type reclaimer struct {
	sampled       bool
	lastAllocated uint64
	baseline      uint64 // retained just after the last return
}

// tick takes the sample of one tick and, after a burst, once the server is
// idle, calls release and records the sample taken just after it. Tests
// inject the samples and the release.
func (r *reclaimer) tick(sample func() memSample, release func()) {
	s := sample()
	idle := r.sampled && s.allocated-r.lastAllocated < reclaimIdleBytes
	r.sampled, r.lastAllocated = true, s.allocated
	if idle && s.retained > max(reclaimFloor, 2*r.baseline) {
		release()
		s = sample()
		r.baseline, r.lastAllocated = s.retained, s.allocated
	}
}

// runReclaimer looks at the heap every reclaimInterval until ctx ends, with
// the real runtime: it collects and returns every free page
// (debug.FreeOSMemory), which costs one collection of a heap that is small
// by then.
func runReclaimer(ctx context.Context) {
	var r reclaimer
	every(ctx, reclaimInterval, func() bool { r.tick(readMemSample, debug.FreeOSMemory); return true })
}

func readMemSample() memSample {
	samples := []metrics.Sample{
		{Name: "/gc/heap/allocs:bytes"},
		{Name: "/memory/classes/total:bytes"},
		{Name: "/memory/classes/heap/released:bytes"},
	}
	metrics.Read(samples)
	v := func(i int) uint64 {
		if samples[i].Value.Kind() != metrics.KindUint64 {
			return 0 // unknown to this runtime: count as nothing
		}
		return samples[i].Value.Uint64()
	}
	return memSample{allocated: v(0), retained: v(1) - min(v(1), v(2))}
}
