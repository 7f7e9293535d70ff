package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

func TestHandshakeAccepted(t *testing.T) {
	t.Parallel()
	h := startLinkHarness(t, nil, nil)
	a := h.dial(t, nil)
	a.send(testHandshake("s-1"))
	wantAck := map[string]any{
		"type": "handshake_ack", "protocolVersion": 1.0,
		"server":     map[string]any{"name": "devtools-mcp", "version": serverVersion},
		"maxPayload": 524288.0, "requestTimeoutMs": 60000.0,
	}
	if diff := cmp.Diff(a.recv(), wantAck); diff != "" {
		t.Fatalf("handshake_ack mismatch (-got +want):\n%s", diff)
	}
	linkWaitFor(t, "the adapter to be live", func() bool { return h.link.status().Connected })
	s := h.link.status()
	want := linkStatus{
		WSURL: "ws://127.0.0.1:" + h.port() + "/", Listening: true, Connected: true,
		Adapter: &adapterInfo{
			SessionID: "s-1", AdapterVersion: "0.3.1",
			StartedAt: time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC),
			App:       json.RawMessage(`{"name":"ShopApp","version":"2.4.0"}`),
			Device:    json.RawMessage(`{"isEmulator":true,"platform":"ios"}`),
			Streams: []streamState{
				{Name: "redux", Active: true},
				{Name: "navigation", Active: true},
				{Name: "mmkv", Active: true, Instances: []string{"default", "auth"}},
			},
		},
	}
	if diff := cmp.Diff(s, want, cmpopts.IgnoreFields(adapterInfo{}, "ConnectedAt"), cmpopts.EquateApproxTime(0)); diff != "" {
		t.Errorf("status mismatch (-got +want):\n%s", diff)
	}
	if s.Adapter.ConnectedAt.IsZero() {
		t.Error("ConnectedAt is zero")
	}
	h.events.waitFor(t, []linkEvent{{Kind: linkConnected, SessionID: "s-1"}})
	if !strings.Contains(h.logs.String(), `msg="adapter connected" session=s-1`) {
		t.Errorf("no connect log line in:\n%s", h.logs)
	}

	// status returns a copy.
	s.Adapter.Streams[0].Name = "changed"
	s.Adapter.App[2] = 'X'
	again := h.link.status()
	if again.Adapter.Streams[0].Name != "redux" || string(again.Adapter.App) != `{"name":"ShopApp","version":"2.4.0"}` {
		t.Errorf("status shares memory with the link: %+v", again.Adapter)
	}
}

func TestHandshakeAcceptedVariants(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("é", 128)
	name64 := "a" + strings.Repeat("b", 63)
	tests := []struct {
		name string
		msg  any
		tok  string
	}{
		{"minimal", map[string]any{"type": "handshake", "protocolVersion": 1, "sessionId": "s", "adapterVersion": "1", "streams": []any{}}, ""},
		{"protocolVersion 1.0", testHandshake("s", hsWith("protocolVersion", 1.0)), ""},
		{"unknown fields", testHandshake("s", hsWith("future", map[string]any{"x": 1}), hsWith("hello", "world")), ""},
		{"null optionals", testHandshake("s", hsWith("app", nil), hsWith("device", nil), hsWith("startedAt", nil)), ""},
		{"128 character sessionId", testHandshake(long), ""},
		{"64 character stream name and instances null", testHandshake("s", hsStreams(map[string]any{"name": name64, "active": false, "instances": nil})), ""},
		{"right token", testHandshake("s", hsWith("token", "s3cret")), "s3cret"},
		{"token ignored when not required", testHandshake("s", hsWith("token", 42)), ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			h := startLinkHarness(t, func(c *config) { c.WSToken = tt.tok }, nil)
			a := h.dial(t, nil)
			a.sendBinary([]byte("binary frames before the handshake are ignored"))
			a.send(tt.msg)
			if got := a.recv(); got["type"] != "handshake_ack" {
				t.Fatalf("got %v, want a handshake_ack", got)
			}
			linkWaitFor(t, "the adapter to be live", func() bool { return h.link.status().Connected })
		})
	}
}

func TestHandshakeRefused(t *testing.T) {
	t.Parallel()
	type refusal struct {
		code    string
		message string
		close   websocket.StatusCode
	}
	invalid := func(msg string) refusal { return refusal{"INVALID_HANDSHAKE", msg, 4001} }
	name65, instance129 := "a"+strings.Repeat("b", 64), strings.Repeat("i", 129)
	stream := func(kv ...any) any {
		m := map[string]any{"name": "redux", "active": true}
		for i := 0; i < len(kv); i += 2 {
			if kv[i+1] == "<delete>" {
				delete(m, kv[i].(string))
			} else {
				m[kv[i].(string)] = kv[i+1]
			}
		}
		return m
	}
	tests := []struct {
		name  string
		token string // server's WS_TOKEN
		msg   any    // string: sent as is
		want  refusal
	}{
		{"truncated JSON", "", `{"type":"handshake",`, invalid("malformed JSON: unexpected end of JSON input")},
		{"not an object", "", `[1]`, invalid("malformed JSON: invalid character '[' looking for beginning of object at offset 0")},
		{"trailing garbage", "", `{"type":"handshake"} x`, invalid("malformed JSON: invalid character 'x' after top-level value at offset 21")},
		{"missing type", "", `{"protocolVersion":1}`, invalid("type: required; the first message must be a handshake")},
		{"other type first", "", `{"type":"event","event":{}}`, invalid(`type: the first message must be a handshake, got "event"`)},
		{"type not a string", "", `{"type":1}`, invalid(`type: the first message must be a handshake, got 1`)},
		{"type key case matters", "", `{"Type":"handshake","protocolVersion":1}`, invalid("type: required; the first message must be a handshake")},
		{"duplicate member", "", `{"type":"handshake","protocolVersion":1,"sessionId":"a","sessionId":"b"}`, invalid("sessionId: appears more than once")},
		{"protocolVersion missing", "", testHandshake("s", hsWithout("protocolVersion")), invalid("protocolVersion: required")},
		{"protocolVersion string", "", testHandshake("s", hsWith("protocolVersion", "1")), invalid(`protocolVersion: must be an integer, got "1"`)},
		{"protocolVersion fraction", "", testHandshake("s", hsWith("protocolVersion", 1.5)), invalid("protocolVersion: must be an integer, got 1.5")},
		{"protocolVersion 2", "", testHandshake("s", hsWith("protocolVersion", 2)), refusal{"UNSUPPORTED_PROTOCOL", "protocolVersion 2 is not supported; supported versions: 1", 4002}},
		{"protocolVersion 0 before field errors", "", testHandshake("", hsWith("protocolVersion", 0)), refusal{"UNSUPPORTED_PROTOCOL", "protocolVersion 0 is not supported; supported versions: 1", 4002}},
		{"sessionId missing", "", testHandshake("s", hsWithout("sessionId")), invalid("sessionId: required")},
		{"sessionId empty", "", testHandshake(""), invalid("sessionId: must be 1-128 characters, got 0")},
		{"sessionId too long", "", testHandshake(strings.Repeat("é", 129)), invalid("sessionId: must be 1-128 characters, got 129")},
		{"sessionId control character", "", testHandshake("a\x07b"), invalid("sessionId: must not contain control characters")},
		{"sessionId number", "", testHandshake("s", hsWith("sessionId", 5)), invalid("sessionId: must be a string, got 5")},
		{"adapterVersion missing", "", testHandshake("s", hsWithout("adapterVersion")), invalid("adapterVersion: required")},
		{"adapterVersion too long", "", testHandshake("s", hsWith("adapterVersion", strings.Repeat("1", 65))), invalid("adapterVersion: must be 1-64 characters, got 65")},
		{"adapterVersion control character", "", testHandshake("s", hsWith("adapterVersion", "1.0\n")), invalid("adapterVersion: must not contain control characters")},
		{"streams missing", "", testHandshake("s", hsWithout("streams")), invalid("streams: required")},
		{"streams object", "", testHandshake("s", hsWith("streams", map[string]any{})), invalid("streams: must be an array, got {}")},
		{"streams null", "", testHandshake("s", hsWith("streams", nil)), invalid("streams: must be an array, got null")},
		{"stream not an object", "", testHandshake("s", hsStreams(stream(), 1)), invalid("streams[1]: must be an object")},
		{"stream name missing", "", testHandshake("s", hsStreams(stream("name", "<delete>"))), invalid("streams[0].name: required")},
		{"stream name upper case", "", testHandshake("s", hsStreams(stream(), stream("name", "Nav"))), invalid(`streams[1].name: must match ^[a-z][a-z0-9_.-]{0,63}$, got "Nav"`)},
		{"stream name starts with digit", "", testHandshake("s", hsStreams(stream("name", "1x"))), invalid(`streams[0].name: must match ^[a-z][a-z0-9_.-]{0,63}$, got "1x"`)},
		{"stream name too long", "", testHandshake("s", hsStreams(stream("name", name65))), invalid(`streams[0].name: must match ^[a-z][a-z0-9_.-]{0,63}$, got ` + clipJSON([]byte(`"`+name65+`"`)))},
		{"stream name not a string", "", testHandshake("s", hsStreams(stream("name", true))), invalid(`streams[0].name: must match ^[a-z][a-z0-9_.-]{0,63}$, got true`)},
		{"stream name duplicate", "", testHandshake("s", hsStreams(stream(), stream("name", "mmkv"), stream())), invalid(`streams[2].name: duplicate stream "redux"`)},
		{"stream member duplicate", "", `{"type":"handshake","protocolVersion":1,"sessionId":"s","adapterVersion":"1","streams":[{"name":"a","name":"b","active":true}]}`, invalid(`streams[0]: duplicate member "name"`)},
		{"stream active missing", "", testHandshake("s", hsStreams(stream("active", "<delete>"))), invalid("streams[0].active: required")},
		{"stream active string", "", testHandshake("s", hsStreams(stream("active", "yes"))), invalid(`streams[0].active: must be a boolean, got "yes"`)},
		{"instances not an array", "", testHandshake("s", hsStreams(stream("instances", "x"))), invalid(`streams[0].instances: must be an array, got "x"`)},
		{"instance empty", "", testHandshake("s", hsStreams(stream("instances", []any{"a", ""}))), invalid(`streams[0].instances[1]: must be a non-empty string of at most 128 characters, got ""`)},
		{"instance not a string", "", testHandshake("s", hsStreams(stream("instances", []any{1}))), invalid(`streams[0].instances[0]: must be a non-empty string of at most 128 characters, got 1`)},
		{"instance too long", "", testHandshake("s", hsStreams(stream("instances", []any{instance129}))), invalid(`streams[0].instances[0]: must be a non-empty string of at most 128 characters, got ` + clipJSON([]byte(`"`+instance129+`"`)))},
		{"instance duplicate", "", testHandshake("s", hsStreams(stream("instances", []any{"auth", "default", "auth"}))), invalid(`streams[0].instances[2]: duplicate instance "auth"`)},
		{"startedAt not a time", "", testHandshake("s", hsWith("startedAt", "yesterday")), invalid(`startedAt: must be an RFC 3339 time, got "yesterday"`)},
		{"startedAt number", "", testHandshake("s", hsWith("startedAt", 1700000000)), invalid(`startedAt: must be an RFC 3339 time, got 1700000000`)},
		{"app string", "", testHandshake("s", hsWith("app", "ShopApp")), invalid("app: must be a JSON object")},
		{"device array", "", testHandshake("s", hsWith("device", []any{1})), invalid("device: must be a JSON object")},
		{"token missing", "s3cret", testHandshake("s"), refusal{"UNAUTHORIZED", "token: required by this server", 4003}},
		{"token wrong", "s3cret", testHandshake("s", hsWith("token", "s3cre")), refusal{"UNAUTHORIZED", "token: does not match the server's WS_TOKEN", 4003}},
		{"token not a string", "s3cret", testHandshake("s", hsWith("token", 7)), refusal{"UNAUTHORIZED", "token: must be a string", 4003}},
		{"field errors before token", "s3cret", testHandshake("", hsWith("token", "nope")), invalid("sessionId: must be 1-128 characters, got 0")},
		{"protocol before token", "s3cret", testHandshake("s", hsWith("protocolVersion", 3)), refusal{"UNSUPPORTED_PROTOCOL", "protocolVersion 3 is not supported; supported versions: 1", 4002}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			h := startLinkHarness(t, func(c *config) { c.WSToken = tt.token }, nil)
			a := h.dial(t, nil)
			if s, ok := tt.msg.(string); ok {
				a.sendText(s)
			} else {
				a.send(tt.msg)
			}
			got := a.recv()
			want := map[string]any{"type": "handshake_error", "code": tt.want.code, "message": tt.want.message}
			if diff := cmp.Diff(got, want); diff != "" {
				t.Errorf("handshake_error mismatch (-got +want):\n%s", diff)
			}
			a.expectClose(tt.want.close)
			if s := h.link.status(); s.Connected || s.Reason != linkReasonNeverConnected {
				t.Errorf("status = %+v, want never connected", s)
			}
			if !strings.Contains(h.logs.String(), "refused app adapter handshake") {
				t.Errorf("no log line for the refusal in:\n%s", h.logs)
			}
			if ev := h.events.all(); len(ev) != 0 {
				t.Errorf("events = %v, want none", ev)
			}
		})
	}
}

func TestHandshakeTimeout(t *testing.T) {
	t.Parallel()
	h := startLinkHarness(t, nil, func(l *adapterLink) { l.handshakeTimeout = 50 * time.Millisecond })
	a := h.dial(t, nil)
	a.sendBinary([]byte{1, 2, 3}) // binary frames do not stop the clock
	a.expectClose(4004)
	if !strings.Contains(h.logs.String(), "adapter sent no handshake in time") {
		t.Errorf("no log line for the timeout in:\n%s", h.logs)
	}
	if s := h.link.status(); s.Connected || s.Reason != linkReasonNeverConnected {
		t.Errorf("status = %+v, want never connected", s)
	}
}

func TestFailedHandshakesReplaceNothing(t *testing.T) {
	t.Parallel()
	// Only the silent adapter's handshake time runs out, and only once the
	// link has read what it sent: the test says when, so neither the live
	// adapter's handshake on a loaded machine nor the silent one's frames
	// race a timer.
	var silentAddr atomic.Value // the silent adapter's local address, once dialled
	silentExpired := make(chan time.Time)
	h := startLinkHarness(t, nil, func(l *adapterLink) {
		l.handshakeClock = func(remote string) <-chan time.Time {
			if addr, _ := silentAddr.Load().(string); remote == addr {
				return silentExpired
			}
			return nil
		}
	})
	live := h.connect(t, "live")

	silent := h.dial(t, &websocket.DialOptions{HTTPClient: &http.Client{Transport: &http.Transport{
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			conn, err := (&net.Dialer{}).DialContext(ctx, network, addr)
			if err == nil {
				silentAddr.Store(conn.LocalAddr().String())
			}
			return conn, err
		},
	}}})
	silent.sendBinary([]byte("no handshake"))
	silent.sendText(`{"type":"response","id":"1","result":` + strings.Repeat(" ", 600<<10) + `1}`)
	linkWaitFor(t, "the silent adapter's frames read", func() bool {
		logs := h.logs.String()
		return strings.Contains(logs, "ignoring binary frame from app adapter") &&
			strings.Contains(logs, "discarded an app adapter message over MAX_PAYLOAD_SIZE")
	})
	close(silentExpired)
	silent.expectClose(4004)
	invalid := h.dial(t, nil)
	invalid.send(testHandshake("intruder", hsWith("protocolVersion", 9)))
	if got := invalid.recv(); got["code"] != "UNSUPPORTED_PROTOCOL" {
		t.Fatalf("got %v, want UNSUPPORTED_PROTOCOL", got)
	}
	invalid.expectClose(4002)

	ch := requestInBackground(t.Context(), h.link, "streams.list", nil)
	req := live.recvRequest()
	live.respond(req.ID, map[string]any{"streams": []any{}})
	if o := awaitOutcome(t, ch); o.err != nil || string(o.result) != `{"streams":[]}` {
		t.Fatalf("request = %s, %v; want the live adapter's answer", o.result, o.err)
	}
	if s := h.link.status(); !s.Connected || s.Adapter.SessionID != "live" {
		t.Errorf("status = %+v, want adapter live connected", s)
	}
	h.events.waitFor(t, []linkEvent{{Kind: linkConnected, SessionID: "live"}})
}

func TestUpgradeChecks(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name           string
		allowedHosts   []string
		allowedOrigins []string
		host           string // Host header; "" is the dialled address; "{port}" is replaced by the port
		origin         string // Origin header; "{port}" is replaced by the port
		wantBody       string // "" when the upgrade must succeed
	}{
		{name: "IP literal"},
		{name: "localhost", host: "localhost:{port}"},
		{name: "localhost any case", host: "LocalHost:{port}"},
		{name: "IPv6 literal", host: "[::1]:{port}"},
		{name: "IP literal without port", host: "10.0.2.2"},
		{name: "DNS name", host: "evil.example:{port}", wantBody: `Host "evil.example:{port}" is not an IP address, localhost or in WS_ALLOWED_HOSTS`},
		{name: "DNS name resolving to loopback", host: "localtest.me", wantBody: `Host "localtest.me" is not an IP address`},
		{name: "allowed host", allowedHosts: []string{"devbox.lan"}, host: "DevBox.LAN:{port}"},
		{name: "not the allowed host", allowedHosts: []string{"devbox.lan"}, host: "other.lan:{port}", wantBody: "not an IP address"},
		{name: "Origin equal to the URL", origin: "http://127.0.0.1:{port}"},
		{name: "Origin with ws scheme", origin: "ws://127.0.0.1:{port}"},
		{name: "Origin case-insensitive", host: "localhost:{port}", origin: "HTTP://LOCALHOST:{port}"},
		{name: "Origin default port implied", host: "localhost", origin: "http://localhost"},
		{name: "Origin explicit default port", host: "localhost", origin: "ws://localhost:80"},
		{name: "Host explicit default port", host: "localhost:80", origin: "http://localhost"},
		{name: "Origin https default port differs", host: "localhost", origin: "https://localhost", wantBody: `Origin "https://localhost" does not match Host "localhost" and is not in WS_ALLOWED_ORIGINS`},
		{name: "Origin other local port", origin: "http://127.0.0.1:3000", wantBody: `Origin "http://127.0.0.1:3000" does not match Host`},
		{name: "Origin other site", origin: "https://evil.example", wantBody: `Origin "https://evil.example" does not match Host`},
		{name: "Origin null", origin: "null", wantBody: `Origin "null" does not match Host`},
		{name: "allowed origin", allowedOrigins: []string{"https://tools.example"}, origin: "https://tools.example"},
		{name: "allowed origin default port", allowedOrigins: []string{"https://tools.example"}, origin: "HTTPS://Tools.Example:443"},
		{name: "allowed origin other port", allowedOrigins: []string{"https://tools.example"}, origin: "https://tools.example:8443", wantBody: "not in WS_ALLOWED_ORIGINS"},
		{name: "allowed origin other scheme", allowedOrigins: []string{"https://tools.example"}, origin: "http://tools.example:443", wantBody: "not in WS_ALLOWED_ORIGINS"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			h := startLinkHarness(t, func(c *config) {
				c.WSAllowedHosts = tt.allowedHosts
				c.WSAllowedOrigins = tt.allowedOrigins
			}, nil)
			port := h.port()
			opts := &websocket.DialOptions{
				Host:       strings.ReplaceAll(tt.host, "{port}", port),
				HTTPHeader: http.Header{},
				HTTPClient: &http.Client{Transport: &http.Transport{DisableKeepAlives: true}},
			}
			if tt.origin != "" {
				opts.HTTPHeader.Set("Origin", strings.ReplaceAll(tt.origin, "{port}", port))
			}
			ctx, cancel := context.WithTimeout(t.Context(), linkWaitLimit)
			defer cancel()
			ws, resp, err := websocket.Dial(ctx, "ws://"+h.addr+"/", opts)
			if tt.wantBody == "" {
				if err != nil {
					t.Fatalf("dial: %v", err)
				}
				ws.CloseNow()
				return
			}
			if err == nil {
				ws.CloseNow()
				t.Fatal("upgrade succeeded, want 403")
			}
			if resp == nil || resp.StatusCode != http.StatusForbidden {
				t.Fatalf("dial: %v, response %v; want 403", err, resp)
			}
			body, _ := io.ReadAll(resp.Body)
			if want := strings.ReplaceAll(tt.wantBody, "{port}", port); !strings.Contains(string(body), want) {
				t.Errorf("403 body = %q, want it to contain %q", body, want)
			}
			if !strings.Contains(h.logs.String(), "refused adapter upgrade") {
				t.Errorf("no log line for the refusal in:\n%s", h.logs)
			}
		})
	}
}

// TestHandshakeSessionFields: deviceId and capabilities, both optional,
// reach the session; the stream and instance bounds are inclusive.
func TestHandshakeSessionFields(t *testing.T) {
	t.Parallel()
	streams := make([]any, maxWireStreams)
	for i := range streams {
		streams[i] = map[string]any{"name": fmt.Sprintf("s%d", i), "active": true}
	}
	instances := make([]any, maxWireInstances)
	for i := range instances {
		instances[i] = fmt.Sprintf("i%d", i)
	}
	caps := make([]any, maxWireCapabilities)
	for i := range caps {
		caps[i] = fmt.Sprintf("cap%d", i)
	}
	tests := []struct {
		name     string
		msg      map[string]any
		deviceID string
		caps     []string
		streams  int
	}{
		{"no deviceId or capabilities", testHandshake("s"), "", nil, 3},
		{"null deviceId and capabilities", testHandshake("s", hsWith("deviceId", nil), hsWith("capabilities", nil)), "", nil, 3},
		{"deviceId", testHandshake("s", hsWith("deviceId", "iPhone-16 ABC/é")), "iPhone-16 ABC/é", nil, 3},
		{"128 character deviceId", testHandshake("s", hsWith("deviceId", strings.Repeat("é", 128))), strings.Repeat("é", 128), nil, 3},
		{"capabilities", testHandshake("s", hsWith("capabilities", []any{capSnapshotPath, "future.thing"})), "", []string{capSnapshotPath, "future.thing"}, 3},
		{"empty capabilities", testHandshake("s", hsWith("capabilities", []any{})), "", []string{}, 3},
		{"64 capabilities", testHandshake("s", hsWith("capabilities", caps)), "", nil, 3},
		{"256 streams", testHandshake("s", hsWith("streams", streams)), "", nil, maxWireStreams},
		{"1024 instances", testHandshake("s", hsStreams(map[string]any{"name": "mmkv", "active": true, "instances": instances})), "", nil, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			h := startLinkHarness(t, nil, nil)
			a := h.dial(t, nil)
			a.send(tt.msg)
			if got := a.recv(); got["type"] != "handshake_ack" {
				t.Fatalf("got %v, want a handshake_ack", got)
			}
			linkWaitFor(t, "the adapter to be live", func() bool { return h.link.status().Connected })
			info := h.link.status().Adapter
			if info.DeviceID != tt.deviceID || len(info.Streams) != tt.streams {
				t.Errorf("deviceId %q with %d streams, want %q with %d", info.DeviceID, len(info.Streams), tt.deviceID, tt.streams)
			}
			if tt.caps != nil && !cmp.Equal(info.Capabilities, tt.caps) {
				t.Errorf("capabilities %q, want %q", info.Capabilities, tt.caps)
			}
		})
	}
}

// TestHandshakeSessionFieldsRefused: a bad deviceId or capabilities, or a
// handshake over the stream, instance or capability bounds, is refused
// with 4001 and a message naming the field or the bound.
func TestHandshakeSessionFieldsRefused(t *testing.T) {
	t.Parallel()
	many := func(n int, item func(i int) any) []any {
		out := make([]any, n)
		for i := range out {
			out[i] = item(i)
		}
		return out
	}
	streams := many(maxWireStreams+1, func(i int) any { return map[string]any{"name": fmt.Sprintf("s%d", i), "active": true} })
	instances := many(maxWireInstances+1, func(i int) any { return fmt.Sprintf("i%d", i) })
	caps := many(maxWireCapabilities+1, func(i int) any { return fmt.Sprintf("cap%d", i) })
	tests := []struct {
		name, message string
		msg           map[string]any
	}{
		{"deviceId empty", "deviceId: must be 1-128 characters, got 0", testHandshake("s", hsWith("deviceId", ""))},
		{"deviceId too long", "deviceId: must be 1-128 characters, got 129", testHandshake("s", hsWith("deviceId", strings.Repeat("é", 129)))},
		{"deviceId control character", "deviceId: must not contain control characters", testHandshake("s", hsWith("deviceId", "phone\x00"))},
		{"deviceId DEL", "deviceId: must not contain control characters", testHandshake("s", hsWith("deviceId", "a\x7fb"))},
		{"deviceId number", "deviceId: must be a string, got 42", testHandshake("s", hsWith("deviceId", 42))},
		{"capabilities object", "capabilities: must be an array, got {}", testHandshake("s", hsWith("capabilities", map[string]any{}))},
		{"capabilities string", `capabilities: must be an array, got "snapshot.path"`, testHandshake("s", hsWith("capabilities", capSnapshotPath))},
		{"capability not a string", `capabilities[1]: must match ^[a-z][a-z0-9_.-]{0,63}$, got 7`, testHandshake("s", hsWith("capabilities", []any{"a", 7}))},
		{"capability empty", `capabilities[0]: must match ^[a-z][a-z0-9_.-]{0,63}$, got ""`, testHandshake("s", hsWith("capabilities", []any{""}))},
		{"capability upper case", `capabilities[2]: must match ^[a-z][a-z0-9_.-]{0,63}$, got "Commands"`, testHandshake("s", hsWith("capabilities", []any{"a", "b", "Commands"}))},
		{"capability duplicate", `capabilities[2]: duplicate capability "commands"`, testHandshake("s", hsWith("capabilities", []any{"commands", "snapshot.path", "commands"}))},
		{"65 capabilities", "capabilities: at most 64 capabilities", testHandshake("s", hsWith("capabilities", caps))},
		{"257 streams", "streams: at most 256 streams", testHandshake("s", hsWith("streams", streams))},
		{"1025 instances", "streams[0].instances: at most 1024 instances", testHandshake("s", hsStreams(map[string]any{"name": "mmkv", "active": true, "instances": instances}))},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			h := startLinkHarness(t, nil, nil)
			a := h.dial(t, nil)
			a.send(tt.msg)
			want := map[string]any{"type": "handshake_error", "code": "INVALID_HANDSHAKE", "message": tt.message}
			if diff := cmp.Diff(a.recv(), want); diff != "" {
				t.Errorf("handshake_error mismatch (-got +want):\n%s", diff)
			}
			a.expectClose(4001)
			if n := registryOf(h.link).count(); n != 0 {
				t.Errorf("%d sessions after a refused handshake, want none", n)
			}
		})
	}
}
