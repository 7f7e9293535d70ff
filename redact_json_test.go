package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// testRedactor is the redactor of the default configuration, with one extra
// key as REDACT_KEYS would add it.
func testRedactor(t testing.TB) *redactor {
	t.Helper()
	r := newRedactor(config{Redact: true, RedactKeys: []string{"ssn"}})
	if r == nil {
		t.Fatal("newRedactor returned nil with Redact set")
	}
	return r
}

// Secret-looking test values, built so that no scanner of the repository
// mistakes this file for one holding real credentials.
var (
	testJWT    = "eyJhbGciOiJIUzI1NiJ9" + ".eyJzdWIiOiJhZGEifQ." + "c2lnbmF0dXJlLWJ5dGVz"
	testSK     = "sk-" + "proj-Q7fT2mXk9LpZr4Wd8Ns1Vb"
	testGHP    = "ghp" + "_A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
	testXOX    = "xox" + "b-1234567890-abcdefghij"
	testAKIA   = "AKIA" + "IOSFODNN7EXAMPLE"
	testPEM    = "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA7x\n-----END RSA PRIVATE KEY-----"
	testBearer = "Bearer " + "abc123DEF456ghi789JKL"
)

func TestRedactJSON(t *testing.T) {
	t.Parallel()
	r := testRedactor(t)
	tests := []struct {
		name, in, want string
	}{
		{"nothing to hide comes back as is", `{"a":1,"b":[true,null,"x"]}`, `{"a":1,"b":[true,null,"x"]}`},
		{"white space is kept", "{ \"a\" : [ 1 , 2 ] }\n", "{ \"a\" : [ 1 , 2 ] }\n"},
		{"password string", `{"password":"hunter2"}`, `{"password":"[REDACTED]"}`},
		{"key matched within, any case", `{"userPassword":"x","PASSWD":"y","clientSecret":"z","accessToken":"t"}`,
			`{"userPassword":"[REDACTED]","PASSWD":"[REDACTED]","clientSecret":"[REDACTED]","accessToken":"[REDACTED]"}`},
		{"api key spellings", `{"apikey":"a","api_key":"b","api-key":"c","X-Api-Key":"d","apiKey":"e"}`,
			`{"apikey":"[REDACTED]","api_key":"[REDACTED]","api-key":"[REDACTED]","X-Api-Key":"[REDACTED]","apiKey":"[REDACTED]"}`},
		{"private key, cookie, authorization, credential", `{"private_key":"a","Set-Cookie":"b","Authorization":"c","credentials":"d"}`,
			`{"private_key":"[REDACTED]","Set-Cookie":"[REDACTED]","Authorization":"[REDACTED]","credentials":"[REDACTED]"}`},
		{"extra key from REDACT_KEYS", `{"SSN":"123-45-6789","user_ssn":42}`, `{"SSN":"[REDACTED]","user_ssn":"[REDACTED]"}`},
		{"number under a sensitive key", `{"pinToken":1234}`, `{"pinToken":"[REDACTED]"}`},
		{"null, booleans and empty strings stay", `{"token":null,"cookieConsent":true,"secret":false,"password":""}`,
			`{"token":null,"cookieConsent":true,"secret":false,"password":""}`},
		{"object under a sensitive key keeps its keys", `{"credentials":{"user":"ada","pin":7,"remember":true,"x":null}}`,
			`{"credentials":{"user":"[REDACTED]","pin":"[REDACTED]","remember":true,"x":null}}`},
		{"array under a sensitive key keeps its length", `{"tokens":["a",["b",3],{}]}`,
			`{"tokens":["[REDACTED]",["[REDACTED]","[REDACTED]"],{}]}`},
		{"keys that only look alike stay", `{"author":"ada","auth":{"user":"ada"},"key":"Home-x1","keyboard":"qwerty"}`,
			`{"author":"ada","auth":{"user":"ada"},"key":"Home-x1","keyboard":"qwerty"}`},
		{"escaped key name", `{"pass\u0077ord":"x"}`, `{"pass\u0077ord":"[REDACTED]"}`},
		{"already redacted stays", `{"token":"[REDACTED]"}`, `{"token":"[REDACTED]"}`},
		{"nested deep", `{"a":{"b":[{"c":{"secret":"s"}}]}}`, `{"a":{"b":[{"c":{"secret":"[REDACTED]"}}]}}`},
		{"name/value pair, name first", `{"name":"Authorization","value":"opaque"}`, `{"name":"Authorization","value":"[REDACTED]"}`},
		{"name/value pair, value first", `{"value":{"a":[1,"b",true]},"op":"set","key":"token"}`, `{"value":{"a":["[REDACTED]","[REDACTED]",true]},"op":"set","key":"token"}`},
		{"name/value pair, values before and after", `{"value":"a","x":{"value":"keep"},"key":"password","value":"b"}`,
			`{"value":"[REDACTED]","x":{"value":"keep"},"key":"password","value":"[REDACTED]"}`},
		{"name/value pair, harmless name", `{"key":"theme","value":"dark"}`, `{"key":"theme","value":"dark"}`},
		{"look-alike JWT anywhere", `{"note":"` + testJWT + `"}`, `{"note":"[REDACTED]"}`},
		{"look-alike in an array", `["` + testSK + `"]`, `["sk-[REDACTED]"]`},
		{"look-alike in a key", `{"` + testGHP + `":1}`, `{"ghp_[REDACTED]":1}`},
		{"look-alike behind escapes", `{"u":"https://x.test/?a=1\u0026token=abc\u0026b=2"}`, `{"u":"https://x.test/?a=1&token=[REDACTED]&b=2"}`},
		{"embedded JSON body", `{"body":"{\"user\":\"ada\",\"password\":\"hunter2\"}"}`,
			`{"body":"{\"user\":\"ada\",\"password\":\"[REDACTED]\"}"}`},
		{"top-level string", `"` + testBearer + `"`, `"Bearer [REDACTED]"`},
		{"top-level number", `42`, `42`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := string(r.JSON([]byte(tt.in)))
			if got != tt.want {
				t.Errorf("JSON(%s)\n got %s\nwant %s", tt.in, got, tt.want)
			}
			if !json.Valid([]byte(got)) {
				t.Errorf("JSON(%s) = %s, not valid JSON", tt.in, got)
			}
			if again := string(r.JSON([]byte(got))); again != got {
				t.Errorf("JSON is not idempotent: %s became %s", got, again)
			}
		})
	}
}

func TestRedactJSONUnchangedIsNotCopied(t *testing.T) {
	t.Parallel()
	in := []byte(`{"a":"b","c":[1,2,{"d":"https://x.test/p?q=1"}]}`)
	got := testRedactor(t).JSON(in)
	if &got[0] != &in[0] {
		t.Error("JSON copied a text with nothing to hide")
	}
}

func TestRedactJSONMalformed(t *testing.T) {
	t.Parallel()
	r := testRedactor(t)
	for _, in := range []string{``, `{`, `{"a":}`, `{"a" 1}`, `[1,]x`, `{"password":"x"`, `"` + testJWT} {
		got := string(r.JSON([]byte(in)))
		if strings.Contains(got, "hunter2") || strings.Contains(got, testJWT[20:]) {
			t.Errorf("JSON(%q) = %q: a secret passed", in, got)
		}
	}
	// Malformed text falls back to the text rules, which see embedded JSON.
	if got, want := string(r.JSON([]byte(`{"password":"hunter2",`))), `{"password":"[REDACTED]",`; got != want {
		t.Errorf("malformed JSON = %s, want %s", got, want)
	}
	deep := []byte(strings.Repeat("[", scanMaxDepth+1) + `"` + testSK + `"` + strings.Repeat("]", scanMaxDepth+1))
	if got := r.JSON(deep); bytes.Contains(got, []byte(testSK)) {
		t.Error("a secret nested too deep passed")
	}
}

func TestRedactOff(t *testing.T) {
	t.Parallel()
	var r *redactor = newRedactor(config{Redact: false})
	in := `{"password":"hunter2","note":"` + testJWT + `"}`
	if got := string(r.JSON([]byte(in))); got != in {
		t.Errorf("off: JSON = %s, want it unchanged", got)
	}
	if got := r.Text(testBearer); got != testBearer {
		t.Errorf("off: Text = %s", got)
	}
	if got := r.Mode(); got != "off" {
		t.Errorf("off: Mode = %q", got)
	}
	if got := testRedactor(t).Mode(); got != "on" {
		t.Errorf("on: Mode = %q", got)
	}
	err := errors.New("x " + testBearer)
	if got := r.Err(err); got != err {
		t.Errorf("off: Err = %v", got)
	}
}

func TestRedactErr(t *testing.T) {
	t.Parallel()
	r := testRedactor(t)
	te := newToolError(codeAdapterError, map[string]any{"adapterMessage": "bad " + testBearer, "token": "t0"}, "adapter said %s", testSK)
	got := toolErrorOf(r.Err(te))
	if got == nil || got.Code != codeAdapterError {
		t.Fatalf("Err(toolError) = %v, want a toolError with the same code", got)
	}
	details, _ := json.Marshal(got.Details)
	want := `{"adapterMessage":"bad Bearer [REDACTED]","token":"[REDACTED]"}`
	if string(details) != want || got.Message != "adapter said sk-[REDACTED]" {
		t.Errorf("Err = %q %s, want %q %s", got.Message, details, "adapter said sk-[REDACTED]", want)
	}
	if got := r.Err(fmt.Errorf("dial: %s", testJWT)).Error(); got != "dial: [REDACTED]" {
		t.Errorf("Err(plain) = %q", got)
	}
	if te.Message == got.Message {
		t.Error("Err changed its argument")
	}
}

func TestRedactValue(t *testing.T) {
	t.Parallel()
	r := testRedactor(t)
	got, _ := json.Marshal(r.Value(map[string]string{"event": "x", "cookie": "c"}))
	if want := `{"cookie":"[REDACTED]","event":"x"}`; string(got) != want {
		t.Errorf("Value = %s, want %s", got, want)
	}
	if got := r.Value(func() {}); !strings.Contains(fmt.Sprint(got), "unencodable") {
		t.Errorf("Value(func) = %v", got)
	}
}

// TestRedactChanges runs the diff tool's own diff and redaction: a token
// that changed must still be reported as changed, with both values hidden,
// which a diff of redacted states could not do.
func TestRedactChanges(t *testing.T) {
	t.Parallel()
	r := testRedactor(t)
	base := decodeStateJSON(t, `{"auth":{"token":"t-old","user":{"name":"ada"},"creds":null},"keys":{"a":1},"list":[{"password":"p1"}]}`)
	target := decodeStateJSON(t, `{"auth":{"token":"t-new","user":{"name":"bob"},"creds":{"password":"p2","n":3}},"keys":{"a":2},"list":[{"password":"p3"}]}`)
	changes, _ := diffValues(base, target, 100)
	r.Changes(changes)
	body, err := json.Marshal(changes)
	if err != nil {
		t.Fatal(err)
	}
	got := string(r.JSON(body))
	want := `[{"path":"auth.creds","type":"changed","oldValue":null,"newValue":{"n":3,"password":"[REDACTED]"}},` +
		`{"path":"auth.token","type":"changed","oldValue":"[REDACTED]","newValue":"[REDACTED]"},` +
		`{"path":"auth.user.name","type":"changed","oldValue":"ada","newValue":"bob"},` +
		`{"path":"keys.a","type":"changed","oldValue":1,"newValue":2},` +
		`{"path":"list.0.password","type":"changed","oldValue":"[REDACTED]","newValue":"[REDACTED]"}]`
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("redacted changes (-want +got):\n%s", diff)
	}
	for _, secret := range []string{"t-old", "t-new", "p1", "p2", "p3"} {
		if strings.Contains(got, secret) {
			t.Errorf("%s passed", secret)
		}
	}
}

// plantedSecret returns a secret-looking text built around a random body,
// and the part of it that must never pass redaction.
func plantedSecret(seed uint64) (text, body string) {
	rng := rand.New(rand.NewPCG(seed, 0x5ec7e7))
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
	b := make([]byte, 24)
	for i := range b {
		b[i] = alphabet[rng.IntN(len(alphabet))]
	}
	body = string(b)
	switch seed % 10 {
	case 0:
		return "eyJ" + body + ".eyJ" + body[:8] + "." + body[8:], body
	case 1:
		return "Bearer " + body, body
	case 2:
		return "sk-" + body, body
	case 3:
		return "ghp_" + body, body
	case 4:
		return "xoxb-" + body, body
	case 5:
		return "AKIA" + body[:16], body[:16]
	case 6:
		return "https://api.example.test/cb?page=2&access_token=" + body + "&x=1", body
	case 7:
		return "-----BEGIN PRIVATE KEY-----\n" + body + "\n-----END PRIVATE KEY-----", body
	case 8:
		return "Authorization: Basic " + body, body
	}
	return `{"user":"ada","password":"` + body + `"}`, body
}

// plantedKeys are sensitive key names of every spelling, the last added by
// REDACT_KEYS.
var plantedKeys = []string{"password", "X-Api-Key", "clientSecret", "Set-Cookie", "authorization",
	"refresh_token", "privateKey", "passwd", "CREDENTIALS", "api key", "ssn"}

// jsonShape lists the structure of a JSON text as encoding/json reads it,
// independently of the redactor's walk: delimiters, keys (through keyName)
// and, for values, their literal when true, false or null and "v" for any
// string or number, since redaction may turn a number into a string.
func jsonShape(t *testing.T, data []byte, keyName func(string) string) []string {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var shape []string
	var stack []byte   // '{' or '['
	var wantKey []bool // per object: the next string is a key
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			return shape
		}
		if err != nil {
			t.Fatalf("decode %q: %v", data, err)
		}
		inObject := len(stack) > 0 && stack[len(stack)-1] == '{'
		if d, ok := tok.(json.Delim); ok {
			if inObject && (d == '{' || d == '[') {
				wantKey[len(wantKey)-1] = true
			}
			switch d {
			case '{', '[':
				stack = append(stack, byte(d))
				wantKey = append(wantKey, d == '{')
			default:
				stack, wantKey = stack[:len(stack)-1], wantKey[:len(wantKey)-1]
			}
			shape = append(shape, d.String())
			continue
		}
		if inObject && wantKey[len(wantKey)-1] {
			shape = append(shape, "key:"+keyName(tok.(string)))
			wantKey[len(wantKey)-1] = false
			continue
		}
		if inObject {
			wantKey[len(wantKey)-1] = true
		}
		switch tok.(type) {
		case string, json.Number:
			shape = append(shape, "v")
		default:
			shape = append(shape, fmt.Sprint(tok))
		}
	}
}

// FuzzRedactJSON plants a secret under a sensitive key and a secret-looking
// string in arbitrary JSON, in the object the fuzzer picks, and checks that
// neither passes, that the output is valid JSON with the input's keys in the
// input's order, and that redacting again changes nothing.
func FuzzRedactJSON(f *testing.F) {
	for _, seed := range []string{
		`{}`, `[]`, `null`, `{"a":{"b":[1,{"c":"d"}]}}`, `{"password":"x","n":[1,2]}`,
		`{"auth":{"token":"t","user":{"name":"ada"}},"value":3,"key":"k"}`,
		`[{"name":"Cookie","value":"a=b"},{"value":{"x":1},"key":"token"}]`,
		`{"u":"https://x.test/?a=1\u0026sig=2","e":"\"esc\"\n"}`, `"text"`, `12.5e3`,
	} {
		f.Add([]byte(seed), uint16(0), uint8(0), uint64(1), "note")
	}
	f.Add([]byte(`{"a":{},"b":{"c":{}}}`), uint16(2), uint8(7), uint64(9), "x\ny")
	r := testRedactor(f)
	f.Fuzz(func(t *testing.T, data []byte, where uint16, kind uint8, seed uint64, note string) {
		wrapped := append(append([]byte(`{"in":`), data...), '}')
		if !json.Valid(wrapped) || nestingExceeds(wrapped, 1000) {
			if out := r.JSON(data); len(data) > 0 && out == nil {
				t.Fatal("JSON returned nil for non-empty input")
			}
			return
		}
		lookalike, body := plantedSecret(seed)
		secret := body + "Z"
		// The objects of the input, by the offset just after their '{'.
		var objects []int
		dec := json.NewDecoder(bytes.NewReader(wrapped))
		for {
			tok, err := dec.Token()
			if err != nil {
				break
			}
			if tok == json.Delim('{') {
				objects = append(objects, int(dec.InputOffset()))
			}
		}
		at := objects[int(where)%len(objects)]
		var value string
		switch kind % 4 {
		case 0:
			value = `"` + secret + `"`
		case 1:
			value = fmt.Sprintf("%d", 1_000_000_000_000_000+seed%100_000_000_000_000) // a secret number
			secret = value
		case 2:
			value = `{"inner":"` + secret + `","list":["` + secret + `"]}`
		case 3:
			value = `["` + secret + `",1]`
		}
		// A secret the input already held, under any key, is no leak when
		// it comes out again: only what was planted is looked for. The
		// note is looked at as JSON writes it too: "\u0010" and zeros
		// spell a secret number's digits that no string holds.
		escapedNote, _ := json.Marshal(note)
		if bytes.Contains(data, []byte(body[:12])) || bytes.Contains(escapedNote, []byte(body[:12])) ||
			bytes.Contains(data, []byte(secret)) || bytes.Contains(escapedNote, []byte(secret)) {
			return
		}
		key := plantedKeys[int(kind/4)%len(plantedKeys)]
		noteJSON, _ := json.Marshal(note + " " + lookalike + " " + note)
		member := fmt.Sprintf(`"%s":%s,"note":%s,"hdr":{"value":"%s","name":"Cookie"}`, key, value, noteJSON, secret)
		rest := bytes.TrimLeft(wrapped[at:], " \t\r\n")
		if rest[0] != '}' {
			member += ","
		}
		planted := slices.Concat(wrapped[:at], []byte(member), wrapped[at:])

		out := r.JSON(planted)
		if !json.Valid(out) {
			t.Fatalf("output is not valid JSON:\n in %s\nout %s", planted, out)
		}
		if bytes.Contains(out, []byte(secret)) || bytes.Contains(out, []byte(body)) {
			t.Fatalf("a secret passed:\n in %s\nout %s", planted, out)
		}
		wantShape := jsonShape(t, planted, r.Text)
		if diff := cmp.Diff(wantShape, jsonShape(t, out, func(k string) string { return k })); diff != "" {
			t.Fatalf("structure changed (-want +got):\n%s\n in %s\nout %s", diff, planted, out)
		}
		if again := r.JSON(out); !bytes.Equal(again, out) {
			t.Fatalf("not idempotent:\n once %s\ntwice %s", out, again)
		}
	})
}

// FuzzRedactText plants a secret-looking string in arbitrary text, set off
// by spaces, and checks it never passes, that redacting again changes
// nothing, and that valid UTF-8 stays valid.
// demoSecrets returns the demo app's password and every token it has held,
// read from the app itself rather than through the server.
func demoSecrets(t *testing.T, a *demoApp) []string {
	t.Helper()
	var raw []byte
	for _, stream := range []string{"redux", "mmkv"} {
		for _, e := range demoAllEvents(t, a, stream) {
			raw = append(raw, e.Payload...)
		}
	}
	tokens := regexp.MustCompile(`eyJ[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+`).FindAllString(string(raw), -1)
	slices.Sort(tokens)
	tokens = slices.Compact(tokens)
	if len(tokens) < 2 {
		t.Fatalf("the demo held %d tokens; want a refresh or relogin to have happened", len(tokens))
	}
	if !strings.Contains(string(raw), demoPassword) {
		t.Fatal("the demo's events never held its password")
	}
	return append(tokens, demoPassword)
}

// demoSessionOutput runs a whole session against the simulated app — every
// tool, every resource, subscriptions and log notifications — and returns
// everything the server wrote to stdout from the first call on, and the
// demo's secrets.
func demoSessionOutput(t *testing.T, cfg config) (string, []string) {
	e := startE2E(t, cfg, 80)
	var out strings.Builder
	id := 1000
	call := func(method string, params any) map[string]any {
		t.Helper()
		id++
		req, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
		e.send(string(req))
		for {
			line := e.next()
			out.WriteString(line + "\n")
			var msg map[string]any
			if err := json.Unmarshal([]byte(line), &msg); err != nil {
				t.Fatalf("stdout line is not JSON: %q", line)
			}
			if msg["id"] == float64(id) {
				return msg
			}
		}
	}
	tool := func(name string, args map[string]any) string {
		reply := call("tools/call", map[string]any{"name": name, "arguments": args})
		data, _ := json.Marshal(reply["result"])
		return string(data)
	}
	snapshotSeqs := func(stream, eventType string) []int64 {
		var res struct {
			StructuredContent struct {
				Events []struct{ Seq int64 } `json:"events"`
			} `json:"structuredContent"`
		}
		_ = json.Unmarshal([]byte(tool("debug_query_events", map[string]any{"stream": stream, "event_type": eventType, "limit": 200})), &res)
		var seqs []int64
		for _, ev := range res.StructuredContent.Events {
			seqs = append(seqs, ev.Seq)
		}
		if len(seqs) < 2 {
			t.Fatalf("want two %s snapshots, got %v", stream, seqs)
		}
		return seqs
	}

	call("logging/setLevel", map[string]any{"level": "debug"})
	for _, uri := range []string{uriSession, uriRedux, uriNavigation, uriMMKVPrefix + "auth"} {
		call("resources/subscribe", map[string]any{"uri": uri})
	}
	tool("debug_health_check", nil)
	tool("debug_list_streams", nil)
	for _, stream := range []string{"redux", "navigation", "mmkv"} {
		tool("debug_get_snapshot", map[string]any{"stream": stream})
		tool("debug_query_events", map[string]any{"stream": stream, "limit": 200})
		seqs := snapshotSeqs(stream, map[string]string{"redux": "state_snapshot", "navigation": "navigation_snapshot", "mmkv": "mmkv_snapshot"}[stream])
		for i := 1; i < len(seqs); i++ {
			tool("debug_diff_snapshots", map[string]any{"stream": stream, "base_seq": seqs[i-1], "target_seq": seqs[i]})
		}
		tool("debug_diff_snapshots", map[string]any{"stream": stream, "base_seq": seqs[0], "target_seq": seqs[len(seqs)-1]})
	}
	for _, scope := range []string{"auth", "auth.token", "auth.rememberedLogin", "auth.nope"} {
		tool("debug_get_snapshot", map[string]any{"stream": "redux", "scope": scope})
	}
	tool("debug_get_snapshot", map[string]any{"stream": "mmkv", "scope": "auth"})
	for _, path := range []string{"", "auth", "auth.token", "auth.rememberedLogin.password", "auth.token.x"} {
		tool("debug_get_state_path", map[string]any{"path": path})
	}
	call("resources/list", nil)
	call("resources/templates/list", nil)
	for _, uri := range []string{uriSession, uriRedux, uriNavigation, uriMMKVPrefix + "auth", uriMMKVPrefix + "default", uriMMKVPrefix + "nope"} {
		call("resources/read", map[string]any{"uri": uri})
	}
	call("completion/complete", map[string]any{"ref": map[string]any{"type": "ref/resource", "uri": uriMMKVPrefix + "{instance}"},
		"argument": map[string]any{"name": "instance", "value": ""}})
	// More app activity while subscribed, then a ping so that the
	// notifications it caused are read too.
	for range 5 {
		e.app.step()
	}
	call("ping", nil)
	return out.String(), demoSecrets(t, e.app)
}

// TestRedactDemoSession scans everything a whole demo session writes to
// stdout for the demo's tokens and password: with redaction on none may
// appear; with it off they do, which shows the scan finds them.
func TestRedactDemoSession(t *testing.T) {
	t.Parallel()
	on, secrets := demoSessionOutput(t, testConfig(t))
	for _, s := range secrets {
		if i := strings.Index(on, s); i >= 0 {
			t.Errorf("secret %q passed: …%s…", s, on[max(0, i-200):min(len(on), i+len(s)+50)])
		}
	}
	if !strings.Contains(on, `"password":"[REDACTED]"`) || !strings.Contains(on, `"redaction":"on"`) {
		t.Error("the session shows no redacted password, or health does not say redaction is on")
	}

	cfg := testConfig(t)
	cfg.Redact = false
	off, secrets := demoSessionOutput(t, cfg)
	found := 0
	for _, s := range secrets {
		if strings.Contains(off, s) {
			found++
		}
	}
	if found < 2 || !strings.Contains(off, demoPassword) || !strings.Contains(off, `"redaction":"off"`) {
		t.Errorf("with REDACT=off only %d of %d secrets appear; the scan would miss leaks", found, len(secrets))
	}
}

func TestRedactAt(t *testing.T) {
	t.Parallel()
	r := testRedactor(t)
	tests := []struct{ path, value, want string }{
		{"auth.user.name", `"ada"`, `"ada"`},
		{"auth.rememberedLogin.password", `"hunter2"`, `"[REDACTED]"`},
		{"auth.credentials", `{"user":"ada","remember":true}`, `{"user":"[REDACTED]","remember":true}`},
		{`headers["X-Api-Key"]`, `"k"`, `"[REDACTED]"`},
		{"auth.token", `null`, `null`},
		{"", `{"token":"t"}`, `{"token":"[REDACTED]"}`},
	}
	for _, tt := range tests {
		segs, err := parsePath(tt.path)
		if err != nil {
			t.Fatal(err)
		}
		got := string(r.JSON(r.At(segs, []byte(tt.value))))
		if got != tt.want {
			t.Errorf("At(%s, %s) = %s, want %s", tt.path, tt.value, got, tt.want)
		}
	}
}

// BenchmarkRedactJSON measures redaction of a whole generated state (which
// holds one session token to hide) against a plain copy of the same bytes,
// the least any answer costs.
func BenchmarkRedactJSON(b *testing.B) {
	r := newRedactor(config{Redact: true})
	for _, size := range []struct {
		name  string
		bytes int
	}{{"512KB", 512 << 10}, {"5MB", 5 << 20}} {
		data := benchStateOfSize(b, size.bytes).baseJSON
		b.Run(size.name+"/copy", func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			for b.Loop() {
				_ = append([]byte(nil), data...)
			}
		})
		b.Run(size.name+"/validate", func(b *testing.B) {
			// What receiving the frame costs: the validating scan.
			b.SetBytes(int64(len(data)))
			for b.Loop() {
				if err := scanObject(data, func(_, _ []byte) error { return nil }); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(size.name+"/redact", func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			for b.Loop() {
				if out := r.JSON(data); len(out) == 0 {
					b.Fatal("empty output")
				}
			}
		})
	}
}

// TestErrorResultRedacted: a tool error's message and details can quote
// the app's data (an adapter's message, a path's neighbours); the encoded
// result must not carry its secrets.
func TestErrorResultRedacted(t *testing.T) {
	t.Parallel()
	err := newToolError(codeAdapterError, map[string]any{"adapterMessage": "refused " + testBearer, "cookie": "sid=1"},
		"the adapter said %s", testSK)
	got := string(errorResult(err, testRedactor(t)))
	for _, secret := range []string{testBearer[7:], testSK[3:], "sid=1"} {
		if strings.Contains(got, secret) {
			t.Errorf("errorResult carries %q: %s", secret, got)
		}
	}
	if !strings.Contains(got, `Bearer [REDACTED]`) || !strings.Contains(got, `isError`) {
		t.Errorf("errorResult = %s, want the redacted error", got)
	}
	if off := string(errorResult(err, nil)); !strings.Contains(off, testSK) {
		t.Errorf("with redaction off the message must stay whole: %s", off)
	}
}
