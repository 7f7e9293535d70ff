package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"runtime"
	"runtime/metrics"
	"strconv"
	"syscall"
	"testing"
	"time"
)

// Benchmarks of memory and ingest: heap and resident size under a stream
// of pushed events and under many sessions.

// benchHeapSampler records, while it runs, the peak of the heap in use (as
// HeapInuse: live and not yet collected objects, and free slots in their
// spans) and of the live heap as of the last collection.
type benchHeapSampler struct {
	stop chan struct{}
	done chan [2]uint64 // peak heap in use, peak live heap
}

var benchHeapMetrics = []string{
	"/memory/classes/heap/objects:bytes", // these two add up to HeapInuse
	"/memory/classes/heap/unused:bytes",
	"/gc/heap/live:bytes",
}

// benchReadHeap returns HeapInuse and the live heap. metrics.Read does not stop
// the world, unlike runtime.ReadMemStats.
func benchReadHeap(samples []metrics.Sample) (inuse, live uint64) {
	metrics.Read(samples)
	return samples[0].Value.Uint64() + samples[1].Value.Uint64(), samples[2].Value.Uint64()
}

func benchHeapSamples() []metrics.Sample {
	samples := make([]metrics.Sample, len(benchHeapMetrics))
	for i, name := range benchHeapMetrics {
		samples[i].Name = name
	}
	return samples
}

// benchSampleHeap samples every millisecond until stopped.
func benchSampleHeap() *benchHeapSampler {
	h := &benchHeapSampler{stop: make(chan struct{}), done: make(chan [2]uint64, 1)}
	go func() {
		samples := benchHeapSamples()
		var peak [2]uint64
		sample := func() {
			inuse, live := benchReadHeap(samples)
			peak = [2]uint64{max(peak[0], inuse), max(peak[1], live)}
		}
		sample()
		ticker := time.NewTicker(time.Millisecond)
		defer ticker.Stop()
		for {
			select {
			case <-h.stop:
				sample()
				h.done <- peak
				return
			case <-ticker.C:
				sample()
			}
		}
	}()
	return h
}

// peaks stops the sampler and returns the peak heap in use and live heap.
func (h *benchHeapSampler) peaks() (inuse, live uint64) {
	close(h.stop)
	p := <-h.done
	return p[0], p[1]
}

func benchCPUTime(tb testing.TB) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		tb.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkIngest: one op is one Redux action pushed by the connected
// simulated app and handled by the server; the app pushes all b.N at once.
// Target: ≥ 100 000 events/s with no memory growth; run it with
// -benchtime=100000x for the stated workload (at -benchtime=1x it pushes
// one event, cheap enough for CI).
//
// The timed part ends with a debug_list_streams call: its streams.list
// request reaches the app after pushEvents returned, that is after every
// push was written to the socket, and the server reads one connection's
// messages in order and handles each event before reading the next, so the
// answer arrives only after all events were handled. The latestSeq it
// reports is checked against the app's.
//
// Metrics besides ns/op (per event) and allocs/op (of the whole process):
// events/s; cpu-ns/event, the CPU time (user+sys, getrusage) of the whole
// test process per event, the simulated app and this client included;
// peak-heap-MB, the peak growth of HeapInuse over its level after a
// collection before the pushes (this depends on GC pacing: with other
// benchmarks' states cached in the process, garbage piles up longer; run it
// alone); peak-live-MB, the same for the live heap found by the collections
// during the pushes; retained-KB, the live heap after a collection at the
// end less that before the pushes.
func BenchmarkIngest(b *testing.B) {
	c := benchStartServer(b, benchConfig(b))
	app := benchConnectApp(b, c, nil)
	ctx := b.Context()

	runtime.GC()
	samples := benchHeapSamples()
	inuseBefore, liveBefore := benchReadHeap(samples)
	sampler := benchSampleHeap()
	cpuBefore := benchCPUTime(b)
	b.ReportAllocs()
	b.ResetTimer()
	start := time.Now()

	if err := app.pushEvents(ctx, b.N); err != nil {
		b.Fatal(err)
	}
	res := c.structured(c.tool("debug_list_streams", ""))

	elapsed := time.Since(start)
	b.StopTimer()
	cpu := benchCPUTime(b) - cpuBefore
	peakInuse, peakLive := sampler.peaks()
	var streams struct {
		Streams []struct {
			Name      string `json:"name"`
			LatestSeq int64  `json:"latestSeq"`
		} `json:"streams"`
	}
	if err := json.Unmarshal(res, &streams); err != nil {
		b.Fatal(err)
	}
	app.mu.Lock()
	wantSeq := app.reduxStream.seq
	app.mu.Unlock()
	if len(streams.Streams) == 0 || streams.Streams[0].Name != "redux" || streams.Streams[0].LatestSeq != wantSeq {
		b.Fatalf("streams after the pushes: %s; want redux at seq %d", res, wantSeq)
	}
	reportIngest(b, samples, elapsed, cpu, peakInuse, inuseBefore, peakLive, liveBefore)
}

// BenchmarkMetroIngest is BenchmarkIngest for the Metro link: a Metro
// stand-in's page sends b.N console.log calls over CDP (a string, a number
// and an object preview, as Hermes sends them), and the server turns each
// into a console event of the app's session; the op ends when the session
// holds the last. Metrics as BenchmarkIngest's (cpu-ns/event includes the
// stand-in's writes).
func BenchmarkMetroIngest(b *testing.B) {
	m := startMetroStandIn(b)
	m.setPages(standInPage("1", "com.example.shop", "Pixel 8", "dev-a", true))
	cfg := benchConfig(b)
	cfg.MetroURL = m.srv.URL
	cfg.Tune.MetroPoll = 5 * time.Millisecond
	c := benchStartServer(b, cfg)
	waitUntil(b, "the page attached", func() bool {
		return bytes.Contains(c.tool("debug_health_check", ""), []byte(`"attached":true`))
	})
	frame := []byte(`{"method":"Runtime.consoleAPICalled","params":{"type":"log","args":[{"type":"string","value":"cart updated"},` +
		`{"type":"number","value":3,"description":"3"},{"type":"object","className":"Object","description":"Object","objectId":"7",` +
		`"preview":{"type":"object","description":"Object","overflow":false,"properties":[{"name":"id","type":"number","value":"42"},` +
		`{"name":"sku","type":"string","value":"A-1"}]}}],"executionContextId":1,"timestamp":1795777202511.0}}`)
	consoleSeq := func() int64 {
		var streams struct {
			Streams []struct {
				Name      string `json:"name"`
				LatestSeq int64  `json:"latestSeq"`
			} `json:"streams"`
		}
		if err := json.Unmarshal(c.structured(c.tool("debug_list_streams", "")), &streams); err != nil {
			b.Fatal(err)
		}
		for _, s := range streams.Streams {
			if s.Name == "console" {
				return s.LatestSeq
			}
		}
		return 0
	}
	base := consoleSeq()

	runtime.GC()
	samples := benchHeapSamples()
	inuseBefore, liveBefore := benchReadHeap(samples)
	sampler := benchSampleHeap()
	cpuBefore := benchCPUTime(b)
	b.ReportAllocs()
	b.ResetTimer()
	start := time.Now()

	m.pushEach("1", b.N, func(int) []byte { return frame })
	want := base + int64(b.N)
	waitUntil(b, "every console event held", func() bool { return consoleSeq() >= want })

	elapsed := time.Since(start)
	b.StopTimer()
	cpu := benchCPUTime(b) - cpuBefore
	peakInuse, peakLive := sampler.peaks()
	if got := consoleSeq(); got != want {
		b.Fatalf("console at seq %d, want %d", got, want)
	}
	reportIngest(b, samples, elapsed, cpu, peakInuse, inuseBefore, peakLive, liveBefore)
}

// benchMixedCalls is n cheap tool calls, all answered by the app, with ids from
// first on: what an agent asks between reads of big states.
func benchMixedCalls(first int64, n int) ([]byte, []int64) {
	calls := []struct{ name, args string }{
		{"debug_health_check", ""},
		{"debug_list_streams", ""},
		{"debug_get_snapshot", `{"stream":"navigation"}`},
		{"debug_query_events", `{"stream":"navigation","limit":5}`},
	}
	var lines []byte
	ids := make([]int64, n)
	for i := range n {
		ids[i] = first + int64(i)
		call := calls[i%len(calls)]
		lines = benchAppendToolCall(lines, ids[i], call.name, call.args)
	}
	return lines, ids
}

// benchResidentSizes are resident sizes of the binary in MB (2^20 bytes),
// read from /proc/<pid>/status.
type benchResidentSizes struct {
	idle, serving, peak, rss1k, rss10k float64
}

func (s *benchResidentSizes) add(o benchResidentSizes) {
	s.idle += o.idle
	s.serving += o.serving
	s.peak += o.peak
	s.rss1k += o.rss1k
	s.rss10k += o.rss10k
}

// benchResidentSession runs the built binary through the session
// BenchmarkResidentMemory describes and returns its resident sizes.
func benchResidentSession(b *testing.B, bin string, state json.RawMessage) benchResidentSizes {
	var sizes benchResidentSizes
	p := benchStartBinary(b, bin, "-ws-port", benchFreePort(b),
		"-max-payload-size", strconv.Itoa(benchMaxPayload), "-max-result-bytes", strconv.Itoa(benchMaxPayload))
	pid := p.cmd.Process.Pid
	rss := func(field string) float64 { return float64(benchProcStatusKB(b, pid, field)) / 1024 }
	p.initialize()
	url := p.waitHealth(func(h healthOut) bool { return h.Server.Listening }).Server.WSURL
	sizes.idle = rss("VmRSS")

	app := newDemoApp(demoOptions{Seed: 7, WithoutPathRequests: true}) // the server holds whole states
	app.setReduxState(state)
	ctx, cancel := context.WithCancel(context.Background())
	appDone := make(chan error, 1)
	go func() { appDone <- app.connect(ctx, url) }()
	appStopped := false
	stopApp := func() {
		if !appStopped {
			appStopped = true
			cancel()
			if err := <-appDone; err != nil {
				b.Errorf("demo app: %v", err)
			}
		}
	}
	defer stopApp()
	p.waitHealth(func(h healthOut) bool { return h.Connected })
	for range 10 {
		p.tool("debug_get_snapshot", `{"stream":"redux","scope":"`+benchScopePath+`"}`)
	}
	sizes.serving, sizes.peak = rss("VmRSS"), rss("VmHWM")

	lines, ids := benchMixedCalls(1, 1000)
	p.pipeline(lines, ids)
	sizes.rss1k = rss("VmRSS")
	lines, ids = benchMixedCalls(1001, 9000)
	p.pipeline(lines, ids)
	sizes.rss10k = rss("VmRSS")

	stopApp() // first: the server closing the connection would be an error
	p.stop()
	return sizes
}

// BenchmarkResidentMemory: one op runs the built binary through a session
// and reports its resident size at each stage: idle-MB (VmRSS) after
// initialize; serving5MB-MB (VmRSS) and peak5MB-MB (VmHWM) after ten
// debug_get_snapshot calls scoped to a 260 KB subtree of a 5 MB Redux
// state, with MAX_PAYLOAD_SIZE and MAX_RESULT_BYTES at 16 MiB (a 5 MB state
// does not fit the default 512 KiB); rss1k-MB and rss10k-MB after 1 000 and
// 10 000 further pipelined cheap calls (health check, stream list,
// navigation snapshot, navigation events), and growth-MB, the difference.
// The simulated app runs in this process. Run it with -benchtime=1x; ns/op
// is the whole session.
func BenchmarkResidentMemory(b *testing.B) {
	if _, err := os.Stat("/proc/self/status"); err != nil {
		b.Skip("needs /proc/<pid>/status")
	}
	bin := benchBuildBinary(b)
	state := benchStateOfSize(b, 5<<20).baseJSON
	var sum benchResidentSizes
	ops := 0
	for b.Loop() {
		sum.add(benchResidentSession(b, bin, state))
		ops++
	}
	n := float64(ops)
	b.ReportMetric(sum.idle/n, "idle-MB")
	b.ReportMetric(sum.serving/n, "serving5MB-MB")
	b.ReportMetric(sum.peak/n, "peak5MB-MB")
	b.ReportMetric(sum.rss1k/n, "rss1k-MB")
	b.ReportMetric(sum.rss10k/n, "rss10k-MB")
	b.ReportMetric((sum.rss10k-sum.rss1k)/n, "growth-MB")
}

// reportIngest reports an ingest benchmark's figures: rate, CPU per event,
// heap growth at the peak and what stayed live after a collection.
func reportIngest(b *testing.B, samples []metrics.Sample, elapsed, cpu time.Duration, peakInuse, inuseBefore, peakLive, liveBefore uint64) {
	runtime.GC()
	_, liveAfter := benchReadHeap(samples)
	growth := func(peak, base uint64) float64 { return float64(max(peak, base)-base) / (1 << 20) }
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "events/s")
	b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N), "cpu-ns/event")
	b.ReportMetric(growth(peakInuse, inuseBefore), "peak-heap-MB")
	b.ReportMetric(growth(peakLive, liveBefore), "peak-live-MB")
	b.ReportMetric(float64(int64(liveAfter)-int64(liveBefore))/(1<<10), "retained-KB")
}
