package main

import (
	"context"
	"encoding/json"
	"log/slog"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// answersBeforeNextRequest maps each server request of a recording to the
// app's answer that came before the server's next request, if any: a
// request the app never answered has none.
func answersBeforeNextRequest(frames []reactotronCaptured) map[string][]json.RawMessage {
	answers := map[string][]json.RawMessage{}
	for i, f := range frames {
		if f.Dir != "server" || !strings.Contains(string(f.Frame), `.request"`) {
			continue
		}
		for _, next := range frames[i+1:] {
			if next.Dir == "server" && strings.Contains(string(next.Frame), `.request"`) {
				break
			}
			if next.Dir == "app" && strings.Contains(string(next.Frame), `.response"`) {
				answers[requestKey(f.Frame)] = append(answers[requestKey(f.Frame)], next.Frame)
				break
			}
		}
	}
	return answers
}

// TestReactotronStatePathMisses replays the real client (reactotron-core-
// client + reactotron-redux, desktop.jsonl): a mistyped key is
// PATH_NOT_FOUND with the keys that exist, and a path through null is
// PATH_NOT_FOUND naming where it stopped, at once. reactotron-redux never
// answers the latter (it throws); the fence's answer says so.
func TestReactotronStatePathMisses(t *testing.T) {
	e, url := startBridgeE2E(t)
	frames := readReactotronCaptured(t, "testdata/reactotron/desktop.jsonl")
	answers := answersBeforeNextRequest(frames)
	if _, ok := answers["state.values.request auth.user.nickname.first"]; ok {
		t.Fatal("the recording answers the path through null; it should not")
	}
	answers["state.values.subscribe"] = []json.RawMessage{reduxProbeAnswer}
	app := dialReactotron(t, url, answers)
	app.send(recordedFrames(t, "app")[0])
	e.waitHealthRaw(func(h map[string]any) bool { return len(h["sessions"].([]any)) == 1 })

	got := e.toolJSON("debug_get_state_path", map[string]any{"path": "auth.user.name"})
	if got["value"] != "Ada" {
		t.Errorf("auth.user.name = %v, want Ada", got)
	}
	for _, c := range []struct {
		path    string
		details map[string]any
	}{
		{"auth.user.nmae", map[string]any{"path": "auth.user.nmae", "resolvedPrefix": "auth.user",
			"available": []any{"id", "name", "nickname", "role", "verified"}}},
		{"auth.user.nickname.first", map[string]any{"path": "auth.user.nickname.first", "resolvedPrefix": "auth.user.nickname",
			"available": []any{}}},
	} {
		res, isError := e.callTool("debug_get_state_path", map[string]any{"path": c.path})
		var out struct {
			Code    string         `json:"code"`
			Details map[string]any `json:"details"`
		}
		if err := json.Unmarshal(res, &out); err != nil || !isError || out.Code != codePathNotFound {
			t.Errorf("%s = %s, want PATH_NOT_FOUND", c.path, res)
			continue
		}
		if diff := cmp.Diff(c.details, out.Details); diff != "" {
			t.Errorf("%s details (-want +got):\n%s", c.path, diff)
		}
	}
}

// TestReactotronPortHeldSaysSoOnce: while another program holds the port,
// the bridge warns once, naming the port and the two ways out, then logs at
// DEBUG; the health check says the same; winning the port is said once.
func TestReactotronPortHeldSaysSoOnce(t *testing.T) {
	held, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	_, port, _ := net.SplitHostPort(held.Addr().String())
	cfg := testConfig(t)
	cfg.ReactotronPort = atoi(t, port)
	var logs lockedBuffer
	b := newReactotronBridge(cfg, slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug})), newTestLink(cfg, nil, nil))
	b.bindRetry = time.Millisecond
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		b.run(ctx)
	}()
	defer func() {
		cancel()
		<-done
	}()
	linkWaitFor(t, "three bind attempts", func() bool { return strings.Count(logs.String(), "still cannot listen") >= 3 })
	wantSaid := []string{"port " + port + " (REACTOTRON_PORT) is held by another program", "REACTOTRON_DESKTOP=127.0.0.1:9091",
		"start devtools-mcp before the desktop app", "address already in use"}
	for _, w := range wantSaid {
		if !strings.Contains(b.status().ListenError, w) {
			t.Errorf("listenError = %q, want it to say %q", b.status().ListenError, w)
		}
	}
	held.Close()
	// The win is logged just after status says so.
	linkWaitFor(t, "the port", func() bool {
		return b.status().Listening && strings.Contains(logs.String(), "listening for Reactotron apps")
	})
	text := logs.String()
	if n := strings.Count(text, "level=WARN"); n != 1 {
		t.Errorf("%d warnings, want 1:\n%s", n, text)
	}
	if n := strings.Count(text, "listening for Reactotron apps"); n != 1 {
		t.Errorf("the port won is said %d times, want once", n)
	}
	for _, w := range wantSaid {
		if !strings.Contains(text, w) {
			t.Errorf("stderr does not say %q:\n%s", w, text)
		}
	}
}
