package main

// The adapter's way in: the checks an upgrade request must pass before it
// becomes a WebSocket (wire protocol §7), and the validation of the first
// message, the handshake (§2). wire_link.go accepts the connection and,
// once the handshake is valid, makes it the live adapter.

import (
	"bytes"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/coder/websocket"
)

// admitUpgrade applies checkUpgrade for a WebSocket listener (the adapter
// port, the Reactotron port): a refused upgrade is logged, naming what, and
// answered 403.
func (l *adapterLink) admitUpgrade(w http.ResponseWriter, r *http.Request, logger *slog.Logger, what string) bool {
	reason := l.checkUpgrade(r)
	if reason == "" {
		return true
	}
	logger.Warn("refused "+what+" upgrade", "remote", r.RemoteAddr, "host", r.Host,
		"origin", r.Header.Get("Origin"), "reason", reason)
	http.Error(w, "devtools-mcp: "+reason, http.StatusForbidden)
	return false
}

// checkUpgrade applies wire protocol §7 to an upgrade request and returns why
// it is refused, or "".
func (l *adapterLink) checkUpgrade(r *http.Request) string {
	host, port, ok := splitHostHeader(r.Host)
	if !ok {
		return fmt.Sprintf("Host %q is not a valid host", r.Host)
	}
	if !l.hostAllowed(host) {
		return fmt.Sprintf("Host %q is not an IP address, localhost or in WS_ALLOWED_HOSTS", r.Host)
	}
	origins := r.Header.Values("Origin")
	if len(origins) == 0 || len(origins) == 1 && origins[0] == "" {
		return ""
	}
	if len(origins) > 1 {
		return "more than one Origin header"
	}
	origin := origins[0]
	if u, err := url.Parse(origin); err == nil && u.Scheme != "" && u.Host != "" &&
		sameHostName(u.Hostname(), host) && wireOriginPort(u) == port { // port is never ""
		return ""
	}
	if n, ok := normalizeWireOrigin(origin); ok && l.allowedOrigins[n] {
		return ""
	}
	return fmt.Sprintf("Origin %q does not match Host %q and is not in WS_ALLOWED_ORIGINS", origin, r.Host)
}

func (l *adapterLink) hostAllowed(host string) bool {
	_, err := netip.ParseAddr(host)
	return strings.EqualFold(host, "localhost") || err == nil || l.allowedHosts[strings.ToLower(host)]
}

// splitHostHeader splits a Host header into host (no brackets) and port,
// which defaults to 80: the listener speaks plain HTTP.
func splitHostHeader(hostHeader string) (host, port string, ok bool) {
	if h, p, err := net.SplitHostPort(hostHeader); err == nil {
		if h == "" || p == "" {
			return "", "", false
		}
		return h, p, true
	}
	h := hostHeader
	if strings.HasPrefix(h, "[") && strings.HasSuffix(h, "]") {
		h = h[1 : len(h)-1]
	}
	if h == "" || strings.ContainsAny(h, "[]") {
		return "", "", false
	}
	return h, "80", true
}

// wireOriginPort is the port an origin names, with the default ports of http/ws
// (80) and https/wss (443) implied; "" when unknown.
func wireOriginPort(u *url.URL) string {
	if p := u.Port(); p != "" {
		return p
	}
	switch strings.ToLower(u.Scheme) {
	case "http", "ws":
		return "80"
	case "https", "wss":
		return "443"
	}
	return ""
}

// sameHostName compares host names case-insensitively and IP literals by value.
func sameHostName(a, b string) bool {
	if strings.EqualFold(a, b) {
		return true
	}
	ia, errA := netip.ParseAddr(a)
	ib, errB := netip.ParseAddr(b)
	return errA == nil && errB == nil && ia.Unmap() == ib.Unmap()
}

// normalizeWireOrigin returns origin as lower-case scheme://host:port with the
// default port made explicit, so that configured and presented origins
// compare equal however they spell it.
func normalizeWireOrigin(origin string) (string, bool) {
	u, err := url.Parse(strings.TrimSuffix(origin, "/"))
	if err != nil || u.Scheme == "" || u.Host == "" || u.Path != "" || u.RawQuery != "" || u.User != nil {
		return "", false
	}
	port := wireOriginPort(u)
	return strings.ToLower(u.Scheme) + "://" + strings.ToLower(net.JoinHostPort(u.Hostname(), port)), true
}

// wireHandshakeRefusal is why a handshake was refused (wire protocol §2).
type wireHandshakeRefusal struct {
	code    string // INVALID_HANDSHAKE, UNSUPPORTED_PROTOCOL or UNAUTHORIZED
	close   websocket.StatusCode
	message string // names the field at fault
}

func wireInvalidHandshake(format string, args ...any) *wireHandshakeRefusal {
	return &wireHandshakeRefusal{code: "INVALID_HANDSHAKE", close: wireCloseInvalidHandshake, message: fmt.Sprintf(format, args...)}
}

// handleHandshake handles the first text message of a connection.
func (c *adapterConn) handleHandshake(data []byte) {
	l := c.link
	info, refusal := parseWireHandshake(data, l.cfg.WSToken)
	if refusal != nil {
		if !c.setPhase(phaseAwaiting, phaseRefused) {
			return
		}
		l.logger.Warn("refused app adapter handshake", "remote", c.remote, "code", refusal.code, "message", refusal.message)
		if err := c.writeSoon(map[string]string{"type": "handshake_error", "code": refusal.code, "message": refusal.message}); err != nil {
			l.logger.Debug("could not send handshake_error", "remote", c.remote, "err", err)
		}
		reason := map[websocket.StatusCode]string{
			wireCloseInvalidHandshake:    "invalid handshake",
			wireCloseUnsupportedProtocol: "unsupported protocol version",
			wireCloseUnauthorized:        "unauthorized",
		}[refusal.close]
		c.closeWith(refusal.close, reason)
		return
	}
	if !c.setPhase(phaseAwaiting, phaseAccepted) {
		return // the handshake timer fired first
	}
	c.sessionID = info.SessionID
	ack := map[string]any{
		"type":             "handshake_ack",
		"protocolVersion":  wireProtocolVersion,
		"server":           map[string]string{"name": "devtools-mcp", "version": serverVersion},
		"maxPayload":       l.cfg.MaxPayloadSize,
		"requestTimeoutMs": l.cfg.RequestTimeout.Milliseconds(),
	}
	if err := c.writeSoon(ack); err != nil {
		l.logger.Debug("could not send handshake_ack", "remote", c.remote, "err", err)
		return // the write closed the connection
	}
	// Live only once acknowledged: no request can overtake the ack.
	l.install(c, info)
	close(c.handshaken)
}

// wireStreamNamePattern is the rule for stream names (wire protocol §2),
// checked by validStreamName without a regexp, which would cost start-up time.
const wireStreamNamePattern = `^[a-z][a-z0-9_.-]{0,63}$`

func validStreamName(name string) bool {
	if len(name) == 0 || len(name) > 64 || name[0] < 'a' || name[0] > 'z' {
		return false
	}
	return !strings.ContainsFunc(name[1:], func(c rune) bool {
		return !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_' || c == '.' || c == '-')
	})
}

// parseWireHandshake validates a handshake in the order of wire protocol §2
// and returns what it says about the adapter, or the first failure; token
// is the server's WS_TOKEN ("" for none). An optional member that is null
// counts as absent; unknown members are ignored. check-adapter vets
// handshakes with it too.
func parseWireHandshake(data []byte, token string) (*adapterInfo, *wireHandshakeRefusal) {
	var m wireMessage
	if refusal := m.parseHandshakeHead(data); refusal != nil {
		return nil, refusal
	}
	info := &adapterInfo{ConnectedAt: time.Now()}
	var err error
	if info.SessionID, err = wireBoundedText(m.SessionID, 128); err != nil {
		return nil, wireInvalidHandshake("sessionId: %v", err)
	}
	if info.AdapterVersion, err = wireBoundedText(m.AdapterVersion, 64); err != nil {
		return nil, wireInvalidHandshake("adapterVersion: %v", err)
	}
	if m.Streams == nil {
		return nil, wireInvalidHandshake("streams: required")
	}
	if info.Streams, err = parseWireStreams(m.Streams); err != nil {
		return nil, wireInvalidHandshake("streams%v", err)
	}
	if !wireAbsent(m.DeviceID) {
		if info.DeviceID, err = wireBoundedText(m.DeviceID, 128); err != nil {
			return nil, wireInvalidHandshake("deviceId: %v", err)
		}
	}
	if !wireAbsent(m.Capabilities) {
		// Unique names of the stream-name form; those the server does not
		// know are kept and ignored.
		info.Capabilities, err = parseWireNames(m.Capabilities, "", maxWireCapabilities,
			"capabilities", "capability", "must match "+wireStreamNamePattern, validStreamName)
		if err != nil {
			return nil, wireInvalidHandshake("capabilities%v", err)
		}
	}
	if !wireAbsent(m.StartedAt) {
		s, ok := wireString(m.StartedAt)
		t, err := time.Parse(time.RFC3339Nano, s)
		if !ok || err != nil {
			return nil, wireInvalidHandshake("startedAt: must be an RFC 3339 time, got %s", clipJSON(m.StartedAt))
		}
		info.StartedAt = t
	}
	for _, f := range []struct {
		name string
		raw  []byte
		dst  *json.RawMessage
	}{{"app", m.App, &info.App}, {"device", m.Device, &info.Device}} {
		if wireAbsent(f.raw) {
			continue
		}
		if f.raw[0] != '{' {
			return nil, wireInvalidHandshake("%s: must be a JSON object", f.name)
		}
		*f.dst = bytes.Clone(f.raw)
	}
	if token != "" {
		got, ok := wireString(m.Token)
		if wireAbsent(m.Token) {
			return nil, &wireHandshakeRefusal{code: "UNAUTHORIZED", close: wireCloseUnauthorized, message: "token: required by this server"}
		}
		if !ok {
			return nil, &wireHandshakeRefusal{code: "UNAUTHORIZED", close: wireCloseUnauthorized, message: "token: must be a string"}
		}
		// Hashing first makes the comparison constant-time in the length too.
		gotSum, wantSum := sha256.Sum256([]byte(got)), sha256.Sum256([]byte(token))
		if subtle.ConstantTimeCompare(gotSum[:], wantSum[:]) != 1 {
			return nil, &wireHandshakeRefusal{code: "UNAUTHORIZED", close: wireCloseUnauthorized, message: "token: does not match the server's WS_TOKEN"}
		}
	}
	return info, nil
}

// parseHandshakeHead reads data into m and checks what comes first: that
// it is JSON, a handshake, and of the protocol version this server speaks.
func (m *wireMessage) parseHandshakeHead(data []byte) *wireHandshakeRefusal {
	if err := m.parse(data); err != nil {
		var dup *duplicateMemberError
		if errors.As(err, &dup) {
			return wireInvalidHandshake("%s: appears more than once", dup.member)
		}
		return wireInvalidHandshake("malformed JSON: %v", err)
	}
	if m.Type == nil {
		return wireInvalidHandshake(`type: required; the first message must be a handshake`)
	}
	if typ, ok := wireString(m.Type); !ok || typ != "handshake" {
		return wireInvalidHandshake(`type: the first message must be a handshake, got %s`, clipJSON(m.Type))
	}
	if m.ProtocolVersion == nil {
		return wireInvalidHandshake("protocolVersion: required")
	}
	pv, ok := wireInt(m.ProtocolVersion)
	if !ok {
		return wireInvalidHandshake("protocolVersion: must be an integer, got %s", clipJSON(m.ProtocolVersion))
	}
	if pv != wireProtocolVersion {
		return &wireHandshakeRefusal{code: "UNSUPPORTED_PROTOCOL", close: wireCloseUnsupportedProtocol,
			message: fmt.Sprintf("protocolVersion %d is not supported; supported versions: %d", pv, wireProtocolVersion)}
	}
	return nil
}

// wireBoundedText decodes a required string of 1 to maxLen characters (code
// points) without control characters.
func wireBoundedText(raw []byte, maxLen int) (string, error) {
	if raw == nil {
		return "", errors.New("required")
	}
	s, ok := wireString(raw)
	if !ok {
		return "", fmt.Errorf("must be a string, got %s", clipJSON(raw))
	}
	if n := utf8.RuneCountInString(s); n < 1 || n > maxLen {
		return "", fmt.Errorf("must be 1-%d characters, got %d", maxLen, n)
	}
	if strings.IndexFunc(s, unicode.IsControl) >= 0 {
		return "", errors.New("must not contain control characters")
	}
	return s, nil
}

// Bounds on what one handshake or streams push may advertise: a listing of
// them must fit a health check and a resource list.
const (
	maxWireStreams      = 256
	maxWireInstances    = 1024 // per stream
	maxWireCapabilities = 64
)

// Optional requests an adapter offers, named in the handshake's capabilities.
const (
	capSnapshotPath  = "snapshot.path"  // snapshot.get accepts a path
	capSnapshotKeys  = "snapshot.keys"  // snapshot.keys answers outlines
	capStateDispatch = "state.dispatch" // state.dispatch dispatches a Redux action
	capCommands      = "commands"       // commands.list and commands.run
)

// parseWireNames reads raw, an array of at most limit unique names that each
// pass valid. Errors start with at, the path of the array: "at most limit
// plural", "[j]: rule, got …", "[j]: duplicate noun …".
func parseWireNames(raw []byte, at string, limit int, plural, noun, rule string, valid func(string) bool) ([]string, error) {
	if raw[0] != '[' {
		return nil, fmt.Errorf("%s: must be an array, got %s", at, clipJSON(raw))
	}
	names := []string{}
	seen := make(map[string]bool)
	err := scanArray(raw, func(j int, v []byte) error {
		if j >= limit {
			return fmt.Errorf("%s: at most %d %s", at, limit, plural)
		}
		name, ok := wireString(v)
		if !ok || !valid(name) {
			return fmt.Errorf("%s[%d]: %s, got %s", at, j, rule, clipJSON(v))
		}
		if seen[name] {
			return fmt.Errorf("%s[%d]: duplicate %s %q", at, j, noun, name)
		}
		seen[name] = true
		names = append(names, name)
		return nil
	})
	return names, err
}

// parseWireStreams validates a stream list (wire protocol §2). Errors start with
// the path below "streams", e.g. "[1].name: …".
func parseWireStreams(raw []byte) ([]streamState, error) {
	if raw[0] != '[' {
		return nil, fmt.Errorf(": must be an array, got %s", clipJSON(raw))
	}
	streams := []streamState{}
	seen := make(map[string]bool)
	err := scanArray(raw, func(i int, item []byte) error {
		if i >= maxWireStreams {
			return fmt.Errorf(": at most %d streams", maxWireStreams)
		}
		if item[0] != '{' {
			return fmt.Errorf("[%d]: must be an object", i)
		}
		var name, active, instances []byte
		members := map[string]*[]byte{"name": &name, "active": &active, "instances": &instances}
		err := scanMembers(item, func(key []byte) *[]byte { return members[string(key)] })
		var dup *duplicateMemberError
		if errors.As(err, &dup) {
			return fmt.Errorf("[%d]: duplicate member %q", i, dup.member)
		}
		if err != nil {
			return err
		}
		var s streamState
		if name == nil {
			return fmt.Errorf("[%d].name: required", i)
		}
		var ok bool
		if s.Name, ok = wireString(name); !ok || !validStreamName(s.Name) {
			return fmt.Errorf("[%d].name: must match %s, got %s", i, wireStreamNamePattern, clipJSON(name))
		}
		if seen[s.Name] {
			return fmt.Errorf("[%d].name: duplicate stream %q", i, s.Name)
		}
		seen[s.Name] = true
		switch string(active) {
		case "true":
			s.Active = true
		case "false":
		case "":
			return fmt.Errorf("[%d].active: required", i)
		default:
			return fmt.Errorf("[%d].active: must be a boolean, got %s", i, clipJSON(active))
		}
		if !wireAbsent(instances) {
			at := fmt.Sprintf("[%d].instances", i)
			s.Instances, err = parseWireNames(instances, at, maxWireInstances, "instances", "instance",
				"must be a non-empty string of at most 128 characters", func(name string) bool {
					n := utf8.RuneCountInString(name)
					return n >= 1 && n <= 128
				})
			if err != nil {
				return err
			}
		}
		streams = append(streams, s)
		return nil
	})
	return streams, err
}
