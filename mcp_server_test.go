package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

var update = flag.Bool("update", false, "rewrite golden files with the current output")

// TestTranscripts replays each testdata/transcripts/*.txt file: lines
// starting with "> " go to the server's stdin, then stdin ends; the server's
// stdout must hold exactly the "< " lines, in any order (replies to
// concurrent requests may come in any order), compared as normalised JSON.
func TestTranscripts(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob("testdata/transcripts/*.txt")
	if err != nil || len(files) == 0 {
		t.Fatalf("no transcripts: %v", err)
	}
	for _, file := range files {
		t.Run(strings.TrimSuffix(filepath.Base(file), ".txt"), func(t *testing.T) {
			data, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			var header, input []string
			var want []string
			for line := range strings.SplitSeq(strings.TrimRight(string(data), "\n"), "\n") {
				switch {
				case strings.HasPrefix(line, "> "):
					input = append(input, line[2:])
					header = append(header, line)
				case strings.HasPrefix(line, "< "):
					want = append(want, line[2:])
				default:
					header = append(header, line)
				}
			}
			got := runTranscript(t, input)
			if *update {
				var out strings.Builder
				for _, l := range header {
					out.WriteString(l + "\n")
				}
				// The version depends on the build: golden files hold the
				// placeholder that normaliseValue compares it as.
				placeholder := strings.NewReplacer(
					`"version":"`+serverVersion+`"`, `"version":"<version>"`,
					`\"version\":\"`+serverVersion+`\"`, `\"version\":\"<version>\"`)
				for _, l := range got {
					out.WriteString("< " + placeholder.Replace(l) + "\n")
				}
				if err := os.WriteFile(file, []byte(out.String()), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			if diff := cmp.Diff(normaliseLines(t, want), normaliseLines(t, got)); diff != "" {
				t.Errorf("server output mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// runTranscript feeds the lines to a fresh server, ends stdin and returns
// every stdout line written until the server stopped.
func runTranscript(t *testing.T, input []string) []string {
	t.Helper()
	var stdout, stderr bytes.Buffer
	stdin := strings.NewReader(strings.Join(input, "\n") + "\n")
	if err := serve(context.Background(), testConfig(t), stdin, &stdout, &stderr); err != nil {
		t.Fatalf("serve: %v\nstderr:\n%s", err, stderr.String())
	}
	if stdout.Len() == 0 {
		return nil
	}
	return strings.Split(strings.TrimSuffix(stdout.String(), "\n"), "\n")
}

// normaliseLines parses each line as JSON and re-encodes it canonically,
// then sorts the lines.
func normaliseLines(t *testing.T, lines []string) []string {
	t.Helper()
	out := make([]string, len(lines))
	for i, l := range lines {
		out[i] = normaliseJSON(t, l)
	}
	slices.Sort(out)
	return out
}

var (
	portInURL      = regexp.MustCompile(`^ws://127\.0\.0\.1:\d+/$`)
	portInSentence = regexp.MustCompile(`(port |tcp:|127\.0\.0\.1:)\d+`)
)

// normaliseJSON re-encodes one JSON text with sorted keys, replacing values
// that differ from run to run (ports, clocks) or build to build (the
// server's version) and expanding tool results'
// text items that hold JSON so that golden files show their structure.
func normaliseJSON(t *testing.T, line string) string {
	t.Helper()
	var v any
	dec := json.NewDecoder(strings.NewReader(line))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("not JSON: %v: %q", err, line)
	}
	data, err := json.Marshal(normaliseValue(v))
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

func normaliseValue(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, child := range x {
			switch k {
			case "uptime":
				x[k] = "<uptime>"
				continue
			case "version":
				// The server's own version depends on the build (stamped,
				// from the build info, or devVersion under go test).
				if s, ok := child.(string); ok && s == serverVersion {
					x[k] = "<version>"
					continue
				}
			case "connectedAt":
				x[k] = "<time>"
				continue
			case "waitedMs":
				x[k] = json.Number("0") // how long a wait took
				continue
			case "wsUrl":
				if s, ok := child.(string); ok && portInURL.MatchString(s) {
					x[k] = "ws://127.0.0.1:<port>/"
					continue
				}
			case "suggestion", "message":
				if str, ok := child.(string); ok {
					x[k] = portInSentence.ReplaceAllString(str, "${1}<port>")
					continue
				}
			case "text":
				if s, ok := child.(string); ok && strings.HasPrefix(s, "{") {
					var inner any
					dec := json.NewDecoder(strings.NewReader(s))
					dec.UseNumber()
					if dec.Decode(&inner) == nil {
						x[k] = map[string]any{"<json>": normaliseValue(inner)}
						continue
					}
				}
			}
			x[k] = normaliseValue(child)
		}
	case []any:
		for i := range x {
			x[i] = normaliseValue(x[i])
		}
	}
	return v
}

// TestHealthCheckAnswersWithEveryWorkerStalled fills every worker with a
// call that the adapter never answers and the queue to its bound behind
// them: debug_health_check must still answer, within its own bound (the
// adapter does not answer its streams.list either, so the figures are
// stale), before any of the stalled calls.
func TestHealthCheckAnswersWithEveryWorkerStalled(t *testing.T) {
	t.Parallel()
	cfg := testConfig(t)
	cfg.RequestTimeout = 10 * time.Minute          // the stalled calls end only when the adapter leaves
	cfg.Tune.HealthStreams = 20 * time.Millisecond // the health check's own bound on the unanswered streams.list
	ts := startServer(t, cfg)
	// The stalled calls fail once the adapter leaves at cleanup; their
	// replies must not fill the harness's buffer while it waits for the end.
	defer func() {
		go func() {
			for range ts.lines {
			}
		}()
	}()
	ts.initialize()
	e := &e2e{testServer: ts}
	url := e.waitHealth(func(h healthOut) bool { return h.Server.Listening }).Server.WSURL
	var mu sync.Mutex
	stalled := 0
	allBusy := make(chan struct{})
	scriptedAdapter(t, url, func(id, method string) []byte {
		mu.Lock()
		defer mu.Unlock()
		if method == "snapshot.get" {
			if stalled++; stalled == maxInFlight {
				close(allBusy)
			}
		}
		return nil
	})
	e.waitHealth(func(h healthOut) bool { return h.Connected })

	var burst strings.Builder
	for i := range maxInFlight + maxQueued {
		fmt.Fprintf(&burst, `{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"debug_get_snapshot","arguments":{"stream":"redux"}}}`+"\n", 10000+i)
	}
	ts.send(strings.TrimSuffix(burst.String(), "\n"))
	select {
	case <-allBusy:
	case <-time.After(20 * time.Second):
		t.Fatal("the workers never all reached the adapter")
	}
	ts.call(1, "ping", nil) // answered in arrival order: every stalled call has been read

	reply := ts.call(2, "tools/call", map[string]any{"name": "debug_health_check"})
	var res struct {
		StructuredContent struct {
			Connected bool `json:"connected"`
			Stale     bool `json:"stale"`
		} `json:"structuredContent"`
		IsError bool `json:"isError"`
	}
	raw, _ := json.Marshal(reply["result"])
	if err := json.Unmarshal(raw, &res); err != nil || res.IsError || !res.StructuredContent.Connected || !res.StructuredContent.Stale {
		t.Errorf("health check with every worker stalled: %s, want connected with stale figures", raw)
	}
}
