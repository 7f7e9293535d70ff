package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
)

// rpcHarness runs an rpcConn with a test handler over pipes.
type rpcHarness struct {
	t     *testing.T
	in    *io.PipeWriter
	lines chan string
	done  chan error
}

// echoHandler answers every request with {"method": m, "params": p}; the
// methods "block" and "panic" wait for the context or panic.
func echoHandler(started chan<- string, release <-chan struct{}) handlerFunc {
	return func(ctx context.Context, req *request) (any, error) {
		switch req.Method {
		case "block":
			if started != nil {
				started <- string(req.ID)
			}
			select {
			case <-ctx.Done():
				return nil, ctx.Err()
			case <-release:
			}
		case "panic":
			panic("boom")
		}
		return map[string]any{"method": req.Method, "params": req.Params}, nil
	}
}

func admitAll(*request) error { return nil }

func inlineNamed(name string) bool { return name == "inline" || name == "ping" }

func startRPC(t *testing.T, handle handlerFunc) *rpcHarness {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	h := &rpcHarness{t: t, in: inW, lines: make(chan string, 64<<10), done: make(chan error, 1)}
	conn := newRPCConn(outW, handle, inlineNamed, admitAll, slog.New(slog.DiscardHandler))
	go func() {
		err := conn.serve(context.Background(), inR)
		outW.Close()
		h.done <- err
	}()
	readDone := make(chan struct{})
	go func() {
		defer close(readDone)
		defer close(h.lines)
		sc := bufio.NewScanner(outR)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			h.lines <- sc.Text()
		}
	}()
	t.Cleanup(func() {
		inW.Close()
		<-h.done
		for range h.lines {
		}
		<-readDone
	})
	return h
}

func (h *rpcHarness) send(s string) {
	h.t.Helper()
	if _, err := io.WriteString(h.in, s); err != nil {
		h.t.Fatal(err)
	}
}

// finish ends stdin and returns everything written until serve returned.
func (h *rpcHarness) finish() []string {
	h.t.Helper()
	h.in.Close()
	if err := <-h.done; err != nil {
		h.t.Errorf("serve: %v", err)
	}
	h.done <- nil // for the cleanup
	var out []string
	for l := range h.lines {
		out = append(out, l)
	}
	return out
}

func replyID(t *testing.T, line string) string {
	t.Helper()
	var msg struct {
		ID json.RawMessage `json:"id"`
	}
	if err := json.Unmarshal([]byte(line), &msg); err != nil {
		t.Fatalf("reply is not JSON: %v: %q", err, line)
	}
	return string(msg.ID)
}

func replyCode(t *testing.T, line string) int {
	t.Helper()
	var msg struct {
		Error *rpcError `json:"error"`
	}
	if err := json.Unmarshal([]byte(line), &msg); err != nil {
		t.Fatalf("reply is not JSON: %v: %q", err, line)
	}
	if msg.Error == nil {
		return 0
	}
	return msg.Error.Code
}

// endlessReader yields n bytes of 'x' without holding them.
type endlessReader struct{ n int64 }

func (r *endlessReader) Read(p []byte) (int, error) {
	if r.n <= 0 {
		return 0, io.EOF
	}
	k := min(int64(len(p)), r.n)
	for i := range k {
		p[i] = 'x'
	}
	r.n -= k
	return int(k), nil
}

func TestLineTooLongIsSkipped(t *testing.T) {
	t.Parallel()
	const size = 40 << 20
	in := io.MultiReader(
		strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"a"}`+"\n"),
		&endlessReader{n: size}, strings.NewReader("\n"),
		strings.NewReader(`{"jsonrpc":"2.0","id":2,"method":"b"}`+"\n"))
	var out bytes.Buffer
	conn := newRPCConn(&out, echoHandler(nil, nil), inlineNamed, admitAll, slog.New(slog.DiscardHandler))
	if err := conn.serve(context.Background(), in); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 3 {
		t.Fatalf("got %d lines, want 3: %q", len(lines), lines)
	}
	ids := map[string]bool{}
	for _, l := range lines {
		ids[replyID(t, l)] = true
		if replyID(t, l) == "" {
			if got := replyCode(t, l); got != -32600 {
				t.Errorf("long line: code %d, want -32600", got)
			}
			if !strings.Contains(l, fmt.Sprint(size)) || !strings.Contains(l, "16 MiB") {
				t.Errorf("long line error should name the size and the bound: %s", l)
			}
		}
	}
	if !ids["1"] || !ids["2"] || !ids[""] {
		t.Errorf("want replies to 1, 2 and the long line, got %v", ids)
	}
}

func TestDeepNestingIsRefused(t *testing.T) {
	h := startRPC(t, echoHandler(nil, nil))
	deep := strings.Repeat("[", 200000) + strings.Repeat("]", 200000)
	h.send(deep + "\n")
	deepObj := `{"jsonrpc":"2.0","id":1,"method":"a","params":{"x":` + strings.Repeat(`{"a":`, 200) + "1" + strings.Repeat("}", 200) + "}}"
	h.send(deepObj + "\n")
	// Brackets inside strings do not count.
	h.send(`{"jsonrpc":"2.0","id":2,"method":"a","params":{"x":"` + strings.Repeat("[", 1000) + `"}}` + "\n")
	got := h.finish()
	if len(got) != 3 {
		t.Fatalf("got %d replies, want 3: %q", len(got), got)
	}
	for _, l := range got {
		switch replyID(t, l) {
		case "", "1":
			if code := replyCode(t, l); code != -32600 || !strings.Contains(l, "nesting deeper than 128") {
				t.Errorf("deep message: %s, want -32600 naming the bound", l)
			}
		case "2":
			if code := replyCode(t, l); code != 0 {
				t.Errorf("brackets in a string were counted: %s", l)
			}
		}
	}
}

func TestPipelinedPingsAllAnswered(t *testing.T) {
	t.Parallel()
	const n = 20000
	var in strings.Builder
	for i := range n {
		fmt.Fprintf(&in, `{"jsonrpc":"2.0","id":%d,"method":"ping"}`+"\n", i)
	}
	var out bytes.Buffer
	err := serve(context.Background(), testConfig(t), strings.NewReader(in.String()), &out, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	seen := make(map[string]bool, n)
	for l := range strings.SplitSeq(strings.TrimSpace(out.String()), "\n") {
		id := replyID(t, l)
		if seen[id] {
			t.Fatalf("id %s answered twice", id)
		}
		seen[id] = true
		if !strings.Contains(l, `"result":{}`) {
			t.Fatalf("ping reply %s", l)
		}
	}
	if len(seen) != n {
		t.Errorf("got %d replies, want %d", len(seen), n)
	}
}

func TestEOFWaitsForEveryReply(t *testing.T) {
	const n = 50
	started := make(chan string, n)
	release := make(chan struct{})
	h := startRPC(t, echoHandler(started, release))
	for i := range n {
		h.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"block"}`+"\n", i))
	}
	for range n {
		<-started
	}
	h.in.Close()
	select {
	case err := <-h.done:
		t.Fatalf("serve returned (%v) with %d requests in flight", err, n)
	default:
	}
	close(release)
	h.in = nil
	if err := <-h.done; err != nil {
		t.Fatal(err)
	}
	h.done <- nil
	var got []string
	for l := range h.lines {
		got = append(got, l)
	}
	if len(got) != n {
		t.Errorf("got %d replies after EOF, want %d", len(got), n)
	}
}

func TestCancelledRequestGetsNoReply(t *testing.T) {
	started := make(chan string, 1)
	h := startRPC(t, echoHandler(started, nil))
	h.send(`{"jsonrpc":"2.0","id":"slow","method":"block"}` + "\n")
	<-started
	h.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"slow","reason":"user"}}` + "\n")
	h.send(`{"jsonrpc":"2.0","id":2,"method":"a"}` + "\n")
	got := h.finish()
	if len(got) != 1 || replyID(t, got[0]) != "2" {
		t.Errorf("replies = %q, want only the one to id 2", got)
	}
}

func TestCancelledWithAnIDIsARequest(t *testing.T) {
	h := startRPC(t, echoHandler(nil, nil))
	h.send(`{"jsonrpc":"2.0","id":5,"method":"notifications/cancelled","params":{"requestId":1}}` + "\n")
	got := h.finish()
	if len(got) != 1 || replyID(t, got[0]) != "5" {
		t.Errorf("replies = %q, want one to id 5", got)
	}
}

func TestSlowRequestDoesNotDelayPing(t *testing.T) {
	started := make(chan string, 1)
	release := make(chan struct{})
	h := startRPC(t, echoHandler(started, release))
	h.send(`{"jsonrpc":"2.0","id":"slow","method":"block"}` + "\n")
	<-started
	h.send(`{"jsonrpc":"2.0","id":"p","method":"ping"}` + "\n")
	if l := <-h.lines; replyID(t, l) != `"p"` {
		t.Fatalf("first reply %s, want the ping's", l)
	}
	close(release)
	if l := <-h.lines; replyID(t, l) != `"slow"` {
		t.Fatalf("second reply %s, want the slow one's", l)
	}
}

func TestPanickingHandlerIsAnInternalError(t *testing.T) {
	h := startRPC(t, echoHandler(nil, nil))
	h.send(`{"jsonrpc":"2.0","id":1,"method":"panic"}` + "\n" + `{"jsonrpc":"2.0","id":2,"method":"a"}` + "\n")
	got := h.finish()
	codes := map[string]int{}
	for _, l := range got {
		codes[replyID(t, l)] = replyCode(t, l)
	}
	if diff := cmp.Diff(map[string]int{"1": -32603, "2": 0}, codes); diff != "" {
		t.Errorf("codes by id (-want +got):\n%s", diff)
	}
}

func TestFramingTolerance(t *testing.T) {
	h := startRPC(t, echoHandler(nil, nil))
	h.send("\n\r\n   \n" + `{"jsonrpc":"2.0","id":1,"method":"a"}` + "\r\n")
	h.send("\t" + `{"jsonrpc":"2.0","id":2,"method":"a"}` + " \r\n")
	// Invalid UTF-8 in a string id and in params never breaks the stream.
	h.send(`{"jsonrpc":"2.0","id":"bad` + "\xff\xfe" + `","method":"a","params":{"x":"` + "\xc3" + `"}}` + "\n")
	h.send(`{"jsonrpc":"2.0","id":3,"method":"a"}`) // last line without a newline
	got := h.finish()
	if len(got) != 4 {
		t.Fatalf("got %d replies, want 4: %q", len(got), got)
	}
	for _, l := range got {
		if !utf8.ValidString(l) {
			t.Errorf("reply is not valid UTF-8: %q", l)
		}
		if replyCode(t, l) != 0 {
			t.Errorf("unexpected error reply %s", l)
		}
	}
}

// FuzzDecodeMessage feeds arbitrary lines to the server and checks each gets
// exactly the answer the rules give, worked out here independently with
// encoding/json's token reader.
func FuzzDecodeMessage(f *testing.F) {
	for _, seed := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"a"}`,
		`{"jsonrpc":"2.0","method":"a"}`,
		`{"jsonrpc":"2.0","id":"x","method":"a","params":{"k":[1,2]}}`,
		`{"jsonrpc":"2.0","id":null,"method":"a"}`,
		`{"jsonrpc":"2.0","ID":1,"method":"a"}`,
		`{"jsonrpc":"2.0","id":1,"method":"a","method":"b"}`,
		`{"jsonrpc":"2.0","id":1,"result":{}}`,
		`{"jsonrpc":"2.0","id":1,"method":"a","params":[]}`,
		`[{"jsonrpc":"2.0","id":1,"method":"a"},{"jsonrpc":"2.0","method":"b"},3]`,
		`[]`, `[{"jsonrpc":"2.0","method":"b"}]`, `{`, `garbage`, `"s"`, `1e400`,
		`{"jsonrpc":"2.0","id":123456789012345678901234567890,"method":"a"}`,
		`{"jsonrpc":"2.0","id":"\u00e9\"","method":"a"}`,
		strings.Repeat("[", 130) + strings.Repeat("]", 130),
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, line string) {
		line = strings.Map(func(r rune) rune {
			if r == '\n' || r == '\r' {
				return ' '
			}
			return r
		}, line)
		var out bytes.Buffer
		conn := newRPCConn(&out, echoHandler(nil, nil), func(string) bool { return false }, admitAll, slog.New(slog.DiscardHandler))
		if err := conn.serve(context.Background(), strings.NewReader(line+"\n")); err != nil {
			t.Fatal(err)
		}
		got := strings.TrimSuffix(out.String(), "\n")
		want := expectedReply([]byte(strings.TrimSpace(line)), true)
		if want.none {
			if got != "" {
				t.Fatalf("line %q: want no reply, got %s", line, got)
			}
			return
		}
		if strings.Count(got, "\n") != 0 || got == "" {
			t.Fatalf("line %q: want exactly one reply line, got %q", line, got)
		}
		checkReply(t, line, []byte(got), want)
	})
}

// wantReply is what the rules say one message should get.
type wantReply struct {
	none  bool
	codes []int // acceptable error codes; empty means a result
	id    string
	batch []wantReply // for a batch: the replies, in order
	isArr bool
}

func checkReply(t *testing.T, line string, got []byte, want wantReply) {
	t.Helper()
	if !utf8.Valid(got) || !json.Valid(got) {
		t.Fatalf("line %q: reply is not valid UTF-8 JSON: %q", line, got)
	}
	if want.isArr {
		var elems []json.RawMessage
		if err := json.Unmarshal(got, &elems); err != nil {
			t.Fatalf("line %q: want an array reply, got %s", line, got)
		}
		if len(elems) != len(want.batch) {
			t.Fatalf("line %q: batch reply has %d elements, want %d: %s", line, len(elems), len(want.batch), got)
		}
		for i := range elems {
			checkReply(t, line, elems[i], want.batch[i])
		}
		return
	}
	var msg struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Result  json.RawMessage `json:"result"`
		Error   *rpcError       `json:"error"`
	}
	if err := json.Unmarshal(got, &msg); err != nil || msg.JSONRPC != "2.0" {
		t.Fatalf("line %q: malformed reply %s", line, got)
	}
	if string(msg.ID) != want.id {
		t.Fatalf("line %q: reply id %s, want %q", line, msg.ID, want.id)
	}
	if len(want.codes) == 0 {
		if msg.Error != nil || msg.Result == nil {
			t.Fatalf("line %q: want a result, got %s", line, got)
		}
		return
	}
	if msg.Error == nil || !containsInt(want.codes, msg.Error.Code) || msg.Error.Message == "" {
		t.Fatalf("line %q: want error %v, got %s", line, want.codes, got)
	}
}

func containsInt(list []int, v int) bool {
	for _, x := range list {
		if x == v {
			return true
		}
	}
	return false
}

// expectedReply classifies one message by the JSON-RPC rules.
func expectedReply(data []byte, top bool) wantReply {
	if top && len(data) == 0 {
		return wantReply{none: true}
	}
	if top && !json.Valid(data) {
		codes := []int{-32700}
		if bracketDepth(data) > maxNestingDepth {
			codes = append(codes, -32600)
		}
		return wantReply{codes: codes}
	}
	if top && tokenDepth(data) > maxNestingDepth {
		return wantReply{codes: []int{-32600}}
	}
	if top && data[0] == '[' {
		var elems []json.RawMessage
		_ = json.Unmarshal(data, &elems)
		if len(elems) == 0 {
			return wantReply{codes: []int{-32600}}
		}
		w := wantReply{isArr: true}
		for _, e := range elems {
			if r := expectedReply(e, false); !r.none {
				w.batch = append(w.batch, r)
			}
		}
		if len(w.batch) == 0 {
			return wantReply{none: true}
		}
		return w
	}
	members, dup, isObject := tokenMembers(data)
	if !isObject || dup {
		return wantReply{codes: []int{-32600}}
	}
	id, hasID := members["id"]
	idText := ""
	if hasID {
		var v any
		_ = json.Unmarshal(id, &v)
		switch v.(type) {
		case string, float64:
			idText = string(id)
			if !utf8.Valid(id) {
				var s string
				_ = json.Unmarshal(id, &s)
				b, _ := json.Marshal(s)
				idText = string(b)
			}
		default:
			if _, isNumber := v.(json.Number); !isNumber && !bytes.HasPrefix(id, []byte("-")) && !(id[0] >= '0' && id[0] <= '9') {
				return wantReply{codes: []int{-32600}}
			}
			idText = string(id)
		}
	}
	var version string
	if json.Unmarshal(members["jsonrpc"], &version) != nil || version != "2.0" || string(members["jsonrpc"]) != `"2.0"` {
		return wantReply{codes: []int{-32600}, id: idText}
	}
	method, hasMethod := members["method"]
	if !hasMethod {
		_, r := members["result"]
		_, e := members["error"]
		if r || e {
			return wantReply{none: true}
		}
		return wantReply{codes: []int{-32600}, id: idText}
	}
	var name string
	if json.Unmarshal(method, &name) != nil {
		return wantReply{codes: []int{-32600}, id: idText}
	}
	if params, ok := members["params"]; ok && string(params) != "null" && params[0] != '{' {
		return wantReply{codes: []int{-32600}, id: idText}
	}
	if !hasID {
		return wantReply{none: true}
	}
	if name == "block" {
		return wantReply{codes: []int{-32603}, id: idText} // no release: never reached in practice
	}
	if name == "panic" {
		return wantReply{codes: []int{-32603}, id: idText}
	}
	return wantReply{id: idText}
}

// tokenMembers reads a JSON object's members with encoding/json's tokenizer.
func tokenMembers(data []byte) (members map[string]json.RawMessage, dup, isObject bool) {
	dec := json.NewDecoder(bytes.NewReader(data))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, false, false
	}
	members = map[string]json.RawMessage{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, false, false
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, false, false
		}
		name := tok.(string)
		if _, seen := members[name]; seen {
			dup = true
		}
		members[name] = bytes.TrimSpace(v)
	}
	return members, dup, true
}

func tokenDepth(data []byte) int {
	dec := json.NewDecoder(bytes.NewReader(data))
	depth, deepest := 0, 0
	for {
		tok, err := dec.Token()
		if err != nil {
			return deepest
		}
		switch tok {
		case json.Delim('{'), json.Delim('['):
			depth++
			deepest = max(deepest, depth)
		case json.Delim('}'), json.Delim(']'):
			depth--
		}
	}
}

// bracketDepth counts bracket nesting outside strings, for invalid JSON.
func bracketDepth(data []byte) int {
	depth, deepest, inString := 0, 0, false
	for i := 0; i < len(data); i++ {
		switch c := data[i]; {
		case inString && c == '\\':
			i++
		case c == '"':
			inString = !inString
		case inString:
		case c == '{' || c == '[':
			depth++
			deepest = max(deepest, depth)
		case c == '}' || c == ']':
			depth--
		}
	}
	return deepest
}

// TestInlineReplyIsNotHeldBack sends a cheap request together with a line
// that writes nothing, keeps stdin open, and expects the reply: a reply may
// never wait in the buffer for input that does not come.
func TestInlineReplyIsNotHeldBack(t *testing.T) {
	for name, next := range map[string]string{
		"blank line":        "\n",
		"notification":      `{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n",
		"cancel":            `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":9}}` + "\n",
		"client response":   `{"jsonrpc":"2.0","id":9,"result":{}}` + "\n",
		"slow request":      `{"jsonrpc":"2.0","id":"slow","method":"block"}` + "\n",
		"partial next line": `{"jsonrpc":"2.0","id":3,`,
	} {
		t.Run(name, func(t *testing.T) {
			release := make(chan struct{})
			defer close(release)
			h := startRPC(t, echoHandler(nil, release))
			h.send(`{"jsonrpc":"2.0","id":"p","method":"ping"}` + "\n" + next)
			select {
			case l := <-h.lines:
				if replyID(t, l) != `"p"` {
					t.Errorf("first reply %s, want the ping's", l)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("the ping's reply was held back")
			}
		})
	}
}

func TestBatchIsBounded(t *testing.T) {
	h := startRPC(t, echoHandler(nil, nil))
	var batch strings.Builder
	batch.WriteString("[")
	for i := range maxBatch + 1 {
		if i > 0 {
			batch.WriteString(",")
		}
		fmt.Fprintf(&batch, `{"jsonrpc":"2.0","id":%d,"method":"a"}`, i)
	}
	batch.WriteString("]\n")
	h.send(batch.String())
	got := h.finish()
	if len(got) != 1 || replyCode(t, got[0]) != -32600 || !strings.Contains(got[0], "exceeds the limit of 100") {
		t.Errorf("batch of %d: %q, want one -32600 naming the limit", maxBatch+1, got)
	}
}

// TestPingAnsweredWithEveryWorkerBusy fills every worker with a request
// that blocks, queues more, and still expects ping and cancellation to work.
func TestPingAnsweredWithEveryWorkerBusy(t *testing.T) {
	started := make(chan string, maxInFlight+10)
	release := make(chan struct{})
	h := startRPC(t, echoHandler(started, release))
	var burst strings.Builder
	for i := range maxInFlight + 10 {
		fmt.Fprintf(&burst, `{"jsonrpc":"2.0","id":%d,"method":"block"}`+"\n", i)
	}
	h.send(burst.String())
	for range maxInFlight {
		<-started // every worker is busy; 10 requests wait in the queue
	}
	h.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":3}}` + "\n")
	h.send(`{"jsonrpc":"2.0","id":"p","method":"ping"}` + "\n")
	select {
	case l := <-h.lines:
		if replyID(t, l) != `"p"` {
			t.Fatalf("first reply %s, want the ping's", l)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("ping not answered while every worker was busy")
	}
	close(release)
	got := h.finish()
	seen := map[string]bool{}
	for _, l := range got {
		seen[replyID(t, l)] = true
	}
	if len(got) != maxInFlight+10-1 || seen["3"] {
		t.Errorf("got %d replies (cancelled id 3 answered: %v), want %d", len(got), seen["3"], maxInFlight+10-1)
	}
}
