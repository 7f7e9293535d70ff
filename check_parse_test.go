package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

// FuzzParseWireEvent: whatever the input, parseWireEvent either names what
// is missing or returns a stream and a seq >= 1 that an event written from
// them reads back as.
func FuzzParseWireEvent(f *testing.F) {
	for _, seed := range []string{
		`{"stream":"redux","seq":42,"type":"action_dispatched","timestamp":"2026-11-21T09:15:10.084Z","payload":{}}`,
		`{"stream":"","seq":1}`, `{"stream":"a","seq":0}`, `{"stream":"a","seq":1.0}`, `{"seq":"1"}`, `[]`, `null`, `{"stream":"a\u0000","seq":9e3}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		head, err := parseWireEvent(data)
		if err != nil {
			return
		}
		if head.Stream == "" || head.Seq < 1 {
			t.Fatalf("accepted stream %q seq %d", head.Stream, head.Seq)
		}
		again, err := json.Marshal(map[string]any{"stream": head.Stream, "seq": head.Seq, "type": head.Type})
		if err != nil {
			t.Fatal(err)
		}
		back, err := parseWireEvent(again)
		if err != nil || back.Stream != head.Stream || back.Seq != head.Seq || back.Type != head.Type {
			t.Fatalf("%s read back as %+v, %v; want %+v", again, back, err, head)
		}
	})
}

// FuzzParseWireAnswerError: an accepted error member has a code, and the
// same code, message and details read back from its re-encoding.
func FuzzParseWireAnswerError(f *testing.F) {
	for _, seed := range []string{
		`{"code":"PATH_NOT_FOUND","message":"users.byId has no 9999","details":{"resolvedPrefix":["users","byId"]}}`,
		`{"code":""}`, `{"code":1}`, `{"code":"X","message":null}`, `{"code":"X","message":7}`, `"oops"`, `{"code":"X","details":null}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		ae, err := parseWireAnswerError(data)
		if err != nil {
			return
		}
		if ae.Code == "" {
			t.Fatal("accepted an empty code")
		}
		m := map[string]any{"code": ae.Code, "message": ae.Message}
		if ae.Details != nil {
			m["details"] = json.RawMessage(ae.Details)
		}
		again, err := json.Marshal(m)
		if err != nil {
			return // details the scanner took but encoding/json does not
		}
		back, err := parseWireAnswerError(again)
		if err != nil || back.Code != ae.Code || back.Message != ae.Message || (ae.Details == nil) != (back.Details == nil) {
			t.Fatalf("%s read back as %+v, %v; want %+v", again, back, err, ae)
		}
	})
}

// checkMissKinds are the kinds of path pickPaths picks to miss.
var checkMissKinds = map[string]bool{
	"a missing key": true, "an index past the end": true, `"-0" on an array`: true,
	`"0" as a string on an array`: true, "a step into a scalar": true,
}

// FuzzPickPaths: every path picked from a state resolves there or not as
// its kind says, by the server's resolver, and the hits come first.
func FuzzPickPaths(f *testing.F) {
	for _, seed := range []string{
		`{"cart":{"items":[{"sku":"A-1","qty":2}],"total":3.5},"users":{"byId":{"1000":{"name":"x"}}},"a.b":1,"":[]}`,
		`[1,[2,[3]],{"-0":0}]`, `"scalar"`, `{}`, `{"0":{"01":[null]}}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		root, err := decodeState(data)
		if err != nil {
			return
		}
		missing := false
		for _, p := range pickPaths(root) {
			_, miss := resolvePath(root, pathFromWire(p.wire))
			if (miss != nil) != checkMissKinds[p.why] {
				t.Fatalf("%s %v: miss %v", p.why, p.wire, miss)
			}
			if checkMissKinds[p.why] {
				missing = true
			} else if missing {
				t.Fatalf("%s %v comes after a path that misses", p.why, p.wire)
			}
		}
	})
}

func TestCheckHasMillis(t *testing.T) {
	for ts, want := range map[string]bool{
		"2026-11-21T09:15:10.084Z": true, "2026-11-21T09:15:10.084123+01:00": true,
		"2026-11-21T09:15:10Z": false, "2026-11-21T09:15:10.08Z": false,
	} {
		if got := checkHasMillis(ts); got != want {
			t.Errorf("checkHasMillis(%q) = %v, want %v", ts, got, want)
		}
	}
}

func TestSelectChecks(t *testing.T) {
	names := func(cases []checkCase) string {
		var out []string
		for _, c := range cases {
			out = append(out, c.name)
		}
		return strings.Join(out, " ")
	}
	for only, want := range map[string]string{
		"§5":           "handshake push.event push.streams",
		"5":            "handshake push.event push.streams",
		"events.query": "handshake events.query events.query.limit events.query.since_seq events.query.event_type events.query.params",
		"max-payload":  "handshake liveness.reconnect max-payload",
		"8":            "handshake",
	} {
		if got := names(selectChecks(only)); got != want {
			t.Errorf("-only %q runs %q, want %q", only, got, want)
		}
	}
	if got := len(selectChecks("")); got != len(checkCases) {
		t.Errorf("no -only runs %d checks, want all %d", got, len(checkCases))
	}
}

func TestLoadCheckConfig(t *testing.T) {
	env := map[string]string{"WS_TOKEN": "secret", "REQUEST_TIMEOUT_MS": "700"}
	_, opts, err := loadCheckConfig([]string{"-ws-port", "19861", "-json", "-only", "4", "-allow-actions", "-wait", "3s"},
		func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	if opts.Port != 19861 || opts.Token != "secret" || opts.RequestTimeout.Milliseconds() != 700 || !opts.JSON ||
		opts.Only != "4" || !opts.AllowActions || opts.WaitTimeout.Seconds() != 3 || opts.SmallPayload != checkSmallPayload {
		t.Errorf("options %+v", opts)
	}
	for _, args := range [][]string{{"-demo"}, {"-wait", "0s"}, {"-nope"}, {"extra"}, {"-only", "§9"}} {
		if _, _, err := loadCheckConfig(args, func(string) string { return "" }); !errors.Is(err, errUsage) {
			t.Errorf("check-adapter %v: %v, want a usage error", args, err)
		}
	}
	var out bytes.Buffer
	if err := run(t.Context(), []string{"check-adapter", "-help"}, strings.NewReader(""), &out, &out); err != nil ||
		!strings.Contains(out.String(), "check-adapter [flags]") || !strings.Contains(out.String(), "-allow-actions") {
		t.Errorf("check-adapter -help: %v\n%s", err, out.String())
	}
}

func TestCheckReportTable(t *testing.T) {
	results := []checkResult{
		{Name: "handshake", Result: checkPass, Section: "§2 Handshake", Required: true},
		{Name: "snapshot.path", Result: checkFail, Section: "§4 Paths in requests", Required: true,
			Sent: `snapshot.get {"path":["auth"]}`, Got: "the whole state\n(12 bytes)", Requires: "the value at path"},
		{Name: "push.streams", Result: checkSkipped, Section: "§5 Pushed messages", Required: true, Note: "nothing pushed"},
		{Name: "events.query.params", Result: checkFail, Section: "§4", Required: false, Sent: "x", Got: "y", Requires: "z"},
	}
	var out bytes.Buffer
	if err := writeCheckTable(&out, &adapterInfo{AdapterVersion: "1.2", SessionID: "s-1", Capabilities: []string{"snapshot.path"}}, results); err != nil {
		t.Fatal(err)
	}
	want := `adapter 1.2, session s-1, capabilities [snapshot.path]

CHECK                RESULT   docs/protocol.md      LEVEL
handshake            pass     §2 Handshake          MUST
snapshot.path        fail     §4 Paths in requests  MUST
    sent snapshot.get {"path":["auth"]}, got the whole state (12 bytes)
    docs/protocol.md requires: the value at path
push.streams         skipped  §5 Pushed messages    MUST
    nothing pushed
events.query.params  fail     §4                    SHOULD
    sent x, got y
    docs/protocol.md requires: z

1 passed, 1 failed, 1 skipped, 0 not run; 1 SHOULD not met
`
	if out.String() != want {
		t.Errorf("table:\n%s\nwant:\n%s", out.String(), want)
	}
	out.Reset()
	if err := writeCheckJSON(&out, nil, results); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Passed bool
		Checks []checkResult
	}
	if err := json.Unmarshal(out.Bytes(), &doc); err != nil || doc.Passed || len(doc.Checks) != len(results) {
		t.Errorf("JSON report %s: %v", out.String(), err)
	}
}
