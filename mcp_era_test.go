package main

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzRequestMeta checks readRequestMeta against encoding/json as an
// independent reader of the same params: a request is 2026-07-28 exactly
// when the last _meta is an object whose protocol version is 2026-07-28,
// with an object of client capabilities, an object (or no) client info and
// a valid (or no) log level; a missing version makes it legacy; every
// other case is refused with -32602 or -32022.
func FuzzRequestMeta(f *testing.F) {
	for _, seed := range []string{
		`{}`,
		`{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}`,
		`{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/logLevel":"debug"}}`,
		`{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}`,
		`{"_meta":{"io.modelcontextprotocol/protocolVersion":"2025-11-25","io.modelcontextprotocol/clientCapabilities":{}}}`,
		`{"_meta":{"io.modelcontextprotocol/protocolVersion":1}}`,
		`{"_meta":[],"name":"x"}`,
		`{"_meta":{"progressToken":1},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":"x"}}`,
		`{"\u005fmeta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}`,
	} {
		f.Add(seed, false)
	}
	f.Fuzz(func(t *testing.T, params string, initialized bool) {
		var top map[string]json.RawMessage
		if json.Unmarshal([]byte(params), &top) != nil || nestingExceeds([]byte(params), maxNestingDepth) {
			return // decodeMessage hands over only valid objects
		}
		meta, err := readRequestMeta(json.RawMessage(params), initialized)

		var fields map[string]json.RawMessage
		if json.Unmarshal(top["_meta"], &fields) != nil || fields == nil {
			if meta != nil || err != nil {
				t.Fatalf("no _meta object, got %+v, %v", meta, err)
			}
			return
		}
		rawVersion, has := fields[metaProtocolVersion]
		if !has {
			if meta != nil || err != nil {
				t.Fatalf("no protocol version, got %+v, %v", meta, err)
			}
			return
		}
		var version string
		isString := json.Unmarshal(rawVersion, &version) == nil && rawKind(rawVersion) == "string"
		legacy := isString && slices.Contains(protocolVersions, version)
		if legacy && initialized {
			if meta != nil || err != nil {
				t.Fatalf("legacy version after initialize, got %+v, %v", meta, err)
			}
			return
		}
		if isString && !slices.Contains(modernVersions, version) {
			if !errors.Is(err, errUnsupportedProtocolVersion) {
				t.Fatalf("version %q: got %+v, %v; want -32022", version, meta, err)
			}
			return
		}
		valid := isString && rawKind(fields[metaClientCapabilities]) == "object"
		if info, ok := fields[metaClientInfo]; ok && rawKind(info) != "object" {
			valid = false
		}
		if level, ok := fields[metaLogLevel]; ok {
			var s string
			if json.Unmarshal(level, &s) != nil || rawKind(level) != "string" || !slices.Contains(logLevels, s) {
				valid = false
			}
		}
		switch {
		case valid && (meta == nil || err != nil || meta.version != version):
			t.Fatalf("valid 2026-07-28 _meta refused: %+v, %v", meta, err)
		case !valid && !errors.Is(err, errInvalidParams):
			t.Fatalf("invalid _meta accepted or misreported: %+v, %v", meta, err)
		}
	})
}

// FuzzHeaderValue checks the =?base64?…?= sentinel both ways: what the relay
// encodes decodes to the name it came from, a plain value comes back as it
// is, and a decoded one is valid UTF-8.
func FuzzHeaderValue(f *testing.F) {
	for _, seed := range []string{"debug_health_check", "débug", " padded ", "=?base64?literal?=", "a\nb", "=?base64?!!?=", ""} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, ok := decodeHeaderValue(s)
		sentinel := strings.HasPrefix(s, "=?base64?") && strings.HasSuffix(s[len("=?base64?"):], "?=")
		switch {
		case !sentinel && (!ok || got != s):
			t.Fatalf("decodeHeaderValue(%q) = %q, %v; a plain value must come back as it is", s, got, ok)
		case sentinel && ok && !utf8.ValidString(got):
			t.Fatalf("decodeHeaderValue(%q) = %q, not UTF-8", s, got)
		}
		if !utf8.ValidString(s) {
			return
		}
		raw, _ := json.Marshal(s)
		header, ok := relayName("tools/call", map[string]json.RawMessage{"name": raw})
		if !ok {
			t.Fatalf("relayName(%q) gave no header", s)
		}
		for _, b := range []byte(header) {
			if b < 0x20 || b > 0x7e {
				t.Fatalf("relayName(%q) = %q, not visible ASCII", s, header)
			}
		}
		if back, ok := decodeHeaderValue(header); !ok || back != s {
			t.Fatalf("relayName(%q) = %q decodes to %q, %v", s, header, back, ok)
		}
		if want := "=?base64?" + base64.StdEncoding.EncodeToString([]byte(s)) + "?="; header != s && header != want {
			t.Fatalf("relayName(%q) = %q, neither the name nor its encoding", s, header)
		}
	})
}
