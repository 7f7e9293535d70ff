package main

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
)

// TestInvalidUTF8FromAdapterOneRule sends adapter data with bytes that are
// not UTF-8 in keys and values through every tool that copies adapter text,
// and checks what reaches stdout: valid UTF-8, each invalid byte one U+FFFD
// (encoding/json's rule), and structuredContent byte for byte the JSON that
// the text item holds. Issue 11: FF FE once became one U+FFFD in
// structuredContent and two in the text item.
func TestInvalidUTF8FromAdapterOneRule(t *testing.T) {
	ts := startServer(t, testConfig(t))
	ts.initialize()
	e := &e2e{testServer: ts, nextID: 100}
	url := e.waitHealth(func(h healthOut) bool { return h.Server.Listening }).Server.WSURL
	app := make(queuedAnswers, 4)
	scriptedAdapter(t, url, app.answer(t))
	e.waitHealth(func(h healthOut) bool { return h.Connected })

	// One state, with invalid bytes in keys and values, nested and at the
	// top: FF FE (two invalid bytes in a row), a lone continuation byte, a
	// truncated three-byte sequence and an encoded surrogate.
	const state = "{\"ke\xff\xfey\":\"va\xff\xfelue\",\"nest\":{\"n\x80m\":[\"x\xe6\x97\",\"\xed\xa0\x80\"]},\"ok\":\"\xef\xbf\xbd\"}"
	const stateFixed = "{\"ke\uFFFD\uFFFDy\":\"va\uFFFD\uFFFDlue\",\"nest\":{\"n\uFFFDm\":[\"x\uFFFD\uFFFD\",\"\uFFFD\uFFFD\uFFFD\"]},\"ok\":\"\uFFFD\"}"
	snapshot := `{"seq":7,"timestamp":"2026-11-21T10:00:00.000Z","state":` + state + `}`
	snapshot2 := `{"seq":8,"timestamp":"2026-11-21T10:00:01.000Z","state":{"ke` + "\xff\xfe" + `y":"other"}}`
	events := `{"events":[{"stream":"redux","seq":7,"type":"action_dispatched","timestamp":"2026-11-21T10:00:00.000Z",` +
		`"payload":` + state + `}],"hasMore":false,"oldestSeq":7,"latestSeq":7}`

	for _, tc := range []struct {
		name    string
		tool    string
		args    map[string]any
		answers []string // the adapter's results, one per request, in order
		want    string   // what stdout's structuredContent holds
	}{
		{"whole snapshot", "debug_get_snapshot", map[string]any{"stream": "redux"}, []string{snapshot},
			`{"stream":"redux","seq":7,"timestamp":"2026-11-21T10:00:00.000Z","state":` + stateFixed + `}`},
		{"scoped snapshot", "debug_get_snapshot", map[string]any{"stream": "redux", "scope": "nest"}, []string{snapshot},
			"{\"stream\":\"redux\",\"seq\":7,\"timestamp\":\"2026-11-21T10:00:00.000Z\",\"scope\":\"nest\",\"state\":{\"n\uFFFDm\":[\"x\uFFFD\uFFFD\",\"\uFFFD\uFFFD\uFFFD\"]}}"},
		{"state path through an invalid key", "debug_get_state_path", map[string]any{"path": "ke\uFFFD\uFFFDy"}, []string{snapshot},
			"{\"path\":\"ke\uFFFD\uFFFDy\",\"value\":\"va\uFFFD\uFFFDlue\"}"},
		{"events", "debug_query_events", map[string]any{"stream": "redux", "limit": 1}, []string{events}, ""},
		{"diff", "debug_diff_snapshots", map[string]any{"stream": "redux", "base_seq": 7, "target_seq": 8}, []string{snapshot, snapshot2}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			line := callToolRaw(t, e, app, tc.tool, tc.args, tc.answers...)
			var reply struct {
				Result struct {
					Content []struct {
						Text string `json:"text"`
					} `json:"content"`
					StructuredContent json.RawMessage `json:"structuredContent"`
					IsError           bool            `json:"isError"`
				} `json:"result"`
			}
			if err := json.Unmarshal([]byte(line), &reply); err != nil || len(reply.Result.Content) != 1 {
				t.Fatalf("reply %q: %v", line, err)
			}
			if reply.Result.IsError {
				t.Fatalf("tool failed: %s\n%s", reply.Result.Content[0].Text, e.stderr.String())
			}
			structured, text := string(reply.Result.StructuredContent), reply.Result.Content[0].Text
			if structured != text {
				t.Errorf("structuredContent and the text item differ:\nstructured %q\ntext       %q", structured, text)
			}
			if tc.want != "" && structured != tc.want {
				t.Errorf("structuredContent = %q\nwant             %q", structured, tc.want)
			}
			if strings.Contains(text, "\uFFFD") != true {
				t.Errorf("no U+FFFD in %q: the invalid bytes did not reach the result", text)
			}
		})
	}

	t.Run("miss lists invalid keys by the same rule", func(t *testing.T) {
		line := callToolRaw(t, e, app, "debug_get_state_path", map[string]any{"path": "absent"}, snapshot)
		var reply struct {
			Result struct {
				Content []struct {
					Text string `json:"text"`
				} `json:"content"`
				IsError bool `json:"isError"`
			} `json:"result"`
		}
		if err := json.Unmarshal([]byte(line), &reply); err != nil || len(reply.Result.Content) != 1 || !reply.Result.IsError {
			t.Fatalf("want a tool error, got %q (%v)", line, err)
		}
		_, details, _ := decodeToolError(t, json.RawMessage(reply.Result.Content[0].Text))
		want := []any{"ke\uFFFD\uFFFDy", "nest", "ok"}
		if diff := cmp.Diff(want, details["available"]); diff != "" {
			t.Errorf("available (-want +got):\n%s", diff)
		}
	})
}

// queuedAnswers answers a scriptedAdapter's requests: streams.list (the
// health check asks it) with no streams, every other request with the next
// queued result, raw JSON text the test chose.
type queuedAnswers chan string

func (q queuedAnswers) answer(t *testing.T) func(id, method string) []byte {
	return func(id, method string) []byte {
		result := `{"streams":[]}`
		if method != "streams.list" {
			select {
			case result = <-q:
			default:
				t.Errorf("unexpected %s request", method)
				return nil
			}
		}
		return fmt.Appendf(nil, `{"type":"response","id":%q,"result":%s}`, id, result)
	}
}

// callToolRaw calls a tool while app holds answers (each a result's raw JSON
// text) for its adapter requests, and returns the raw stdout line of the
// reply, checked to be valid UTF-8.
func callToolRaw(t *testing.T, e *e2e, app queuedAnswers, tool string, args map[string]any, answers ...string) string {
	t.Helper()
	for _, answer := range answers {
		app <- answer
	}
	e.nextID++
	req, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": e.nextID, "method": "tools/call",
		"params": map[string]any{"name": tool, "arguments": args}})
	e.send(string(req))
	prefix := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,`, e.nextID)
	for {
		line := e.next()
		if !utf8.ValidString(line) {
			t.Fatalf("stdout line is not valid UTF-8: %q", line)
		}
		if strings.HasPrefix(line, prefix) {
			if n := len(app); n > 0 {
				t.Errorf("%s asked the adapter fewer times than expected: %d answers left", tool, n)
			}
			return line
		}
		if !strings.Contains(line, `"method":`) {
			t.Fatalf("reply to another request while waiting for id %d: %s", e.nextID, line)
		}
	}
}
