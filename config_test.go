package main

import (
	"encoding/json"
	"errors"
	"log/slog"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// loadConfig is loadConfigFlags with the server's flags only.
func loadConfig(args []string, getenv func(string) string) (config, error) {
	return loadConfigFlags(args, getenv, nil)
}

// wantDefaults is the configuration of spec §5 with nothing set. It is
// spelled out here, not derived from settings, so a changed default fails.
func wantDefaults() config {
	return config{
		WSPort:         19850,
		WSHost:         "127.0.0.1",
		RequestTimeout: 5000 * time.Millisecond,
		MaxPayloadSize: 524288,
		MaxResultBytes: 100000,
		LogLevel:       slog.LevelInfo,
		LogFormat:      "text",
		Reactotron:     true,
		ReactotronPort: 9090,
		EventBuffer:    1000,
		Redact:         true,
		Transport:      "stdio",
		HTTPAddr:       "127.0.0.1:3100",
		MetroURL:       "http://127.0.0.1:8081",
		NativeLogs:     true,
	}
}

// envFrom returns a getenv that answers from m and "" for anything else.
func envFrom(m map[string]string) func(string) string {
	return func(name string) string { return m[name] }
}

// mustLoadConfig calls loadConfig and fails the test on an error.
func mustLoadConfig(t *testing.T, args []string, env map[string]string) config {
	t.Helper()
	got, err := loadConfig(args, envFrom(env))
	if err != nil {
		t.Fatalf("loadConfig(%q, %v) error = %v, want nil", args, env, err)
	}
	return got
}

// diffConfig compares configurations, treating nil and empty lists alike.
func diffConfig(want, got config) string {
	return cmp.Diff(want, got, cmpopts.EquateEmpty())
}

func TestConfigDefaults(t *testing.T) {
	t.Parallel()
	allEmpty := map[string]string{}
	for _, s := range []string{
		"WS_PORT", "WS_HOST", "REQUEST_TIMEOUT_MS", "MAX_PAYLOAD_SIZE", "MAX_RESULT_BYTES",
		"LOG_LEVEL", "LOG_FORMAT", "WS_TOKEN", "WS_ALLOWED_HOSTS", "WS_ALLOWED_ORIGINS",
		"REDACT", "REDACT_KEYS",
		"MCP_TRANSPORT", "MCP_HTTP_ADDR", "MCP_HTTP_TOKEN",
	} {
		allEmpty[s] = ""
	}
	tests := []struct {
		name string
		args []string
		env  map[string]string
	}{
		{"nil args, no variables", nil, nil},
		{"empty args, no variables", []string{}, map[string]string{}},
		{"every variable set to empty", nil, allEmpty},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := mustLoadConfig(t, tt.args, tt.env)
			if diff := diffConfig(wantDefaults(), got); diff != "" {
				t.Errorf("loadConfig defaults mismatch (-want +got):\n%s", diff)
			}
			if got.WSAllowedHosts != nil || got.WSAllowedOrigins != nil {
				t.Errorf("lists = %q, %q; want nil, nil", got.WSAllowedHosts, got.WSAllowedOrigins)
			}
		})
	}
}

func TestConfigFromEnv(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		env    map[string]string
		modify func(c *config)
	}{
		{"WS_PORT", map[string]string{"WS_PORT": "8080"}, func(c *config) { c.WSPort = 8080 }},
		{"WS_PORT lowest", map[string]string{"WS_PORT": "1"}, func(c *config) { c.WSPort = 1 }},
		{"WS_PORT highest", map[string]string{"WS_PORT": "65535"}, func(c *config) { c.WSPort = 65535 }},
		{"WS_HOST any", map[string]string{"WS_HOST": "0.0.0.0"}, func(c *config) { c.WSHost = "0.0.0.0" }},
		{"WS_HOST name", map[string]string{"WS_HOST": "localhost"}, func(c *config) { c.WSHost = "localhost" }},
		{"WS_HOST ipv6", map[string]string{"WS_HOST": "::1"}, func(c *config) { c.WSHost = "::1" }},
		{"REQUEST_TIMEOUT_MS", map[string]string{"REQUEST_TIMEOUT_MS": "250"}, func(c *config) { c.RequestTimeout = 250 * time.Millisecond }},
		{"REQUEST_TIMEOUT_MS lowest", map[string]string{"REQUEST_TIMEOUT_MS": "1"}, func(c *config) { c.RequestTimeout = time.Millisecond }},
		{"REQUEST_TIMEOUT_MS highest", map[string]string{"REQUEST_TIMEOUT_MS": "600000"}, func(c *config) { c.RequestTimeout = 10 * time.Minute }},
		{"MAX_PAYLOAD_SIZE", map[string]string{"MAX_PAYLOAD_SIZE": "1048576"}, func(c *config) { c.MaxPayloadSize = 1048576 }},
		{"MAX_PAYLOAD_SIZE highest", map[string]string{"MAX_PAYLOAD_SIZE": "67108864"}, func(c *config) { c.MaxPayloadSize = 67108864 }},
		{
			"MAX_PAYLOAD_SIZE and MAX_RESULT_BYTES lowest",
			map[string]string{"MAX_PAYLOAD_SIZE": "1024", "MAX_RESULT_BYTES": "1024"},
			func(c *config) { c.MaxPayloadSize, c.MaxResultBytes = 1024, 1024 },
		},
		{"MAX_RESULT_BYTES", map[string]string{"MAX_RESULT_BYTES": "2048"}, func(c *config) { c.MaxResultBytes = 2048 }},
		{"MAX_RESULT_BYTES equal to default MAX_PAYLOAD_SIZE", map[string]string{"MAX_RESULT_BYTES": "524288"}, func(c *config) { c.MaxResultBytes = 524288 }},
		{
			"MAX_RESULT_BYTES highest",
			map[string]string{"MAX_PAYLOAD_SIZE": "67108864", "MAX_RESULT_BYTES": "67108864"},
			func(c *config) { c.MaxPayloadSize, c.MaxResultBytes = 67108864, 67108864 },
		},
		{"LOG_LEVEL debug", map[string]string{"LOG_LEVEL": "debug"}, func(c *config) { c.LogLevel = slog.LevelDebug }},
		{"LOG_LEVEL info", map[string]string{"LOG_LEVEL": "info"}, func(c *config) { c.LogLevel = slog.LevelInfo }},
		{"LOG_LEVEL warn", map[string]string{"LOG_LEVEL": "warn"}, func(c *config) { c.LogLevel = slog.LevelWarn }},
		{"LOG_LEVEL error", map[string]string{"LOG_LEVEL": "error"}, func(c *config) { c.LogLevel = slog.LevelError }},
		{"LOG_FORMAT json", map[string]string{"LOG_FORMAT": "json"}, func(c *config) { c.LogFormat = "json" }},
		{"LOG_FORMAT text", map[string]string{"LOG_FORMAT": "text"}, func(c *config) { c.LogFormat = "text" }},
		{"WS_TOKEN", map[string]string{"WS_TOKEN": "s3cret-Token"}, func(c *config) { c.WSToken = "s3cret-Token" }},
		{"WS_ALLOWED_HOSTS one", map[string]string{"WS_ALLOWED_HOSTS": "dev.example.com"}, func(c *config) { c.WSAllowedHosts = []string{"dev.example.com"} }},
		{
			"WS_ALLOWED_HOSTS trimmed, lower-cased, empty items dropped",
			map[string]string{"WS_ALLOWED_HOSTS": " Dev.Example.COM , ,MyHost,,\tbox.local "},
			func(c *config) { c.WSAllowedHosts = []string{"dev.example.com", "myhost", "box.local"} },
		},
		{"WS_ALLOWED_HOSTS only separators", map[string]string{"WS_ALLOWED_HOSTS": " , ,, "}, func(c *config) {}},
		{"WS_ALLOWED_ORIGINS one", map[string]string{"WS_ALLOWED_ORIGINS": "http://localhost:3000"}, func(c *config) { c.WSAllowedOrigins = []string{"http://localhost:3000"} }},
		{
			"WS_ALLOWED_ORIGINS trimmed, lower-cased, empty items dropped",
			map[string]string{"WS_ALLOWED_ORIGINS": " HTTP://LocalHost:3000 ,, ,https://App.Example.com "},
			func(c *config) { c.WSAllowedOrigins = []string{"http://localhost:3000", "https://app.example.com"} },
		},
		{"WS_ALLOWED_ORIGINS only separators", map[string]string{"WS_ALLOWED_ORIGINS": ",,"}, func(c *config) {}},
		{"METRO_URL off", map[string]string{"METRO_URL": " OFF "}, func(c *config) { c.MetroURL = "" }},
		{"METRO_URL trailing slash, host lower-cased", map[string]string{"METRO_URL": "http://LocalHost:19000/"}, func(c *config) { c.MetroURL = "http://localhost:19000" }},
		{"METRO_URL without a port", map[string]string{"METRO_URL": "http://127.0.0.1"}, func(c *config) { c.MetroURL = "http://127.0.0.1" }},
		{
			"METRO_URL on an allowed host",
			map[string]string{"METRO_URL": "http://DevBox.test:8081", "METRO_ALLOWED_HOSTS": "devbox.test"},
			func(c *config) { c.MetroURL, c.MetroAllowedHosts = "http://devbox.test:8081", []string{"devbox.test"} },
		},
		{"METRO_ATTACH_EXCLUSIVE", map[string]string{"METRO_ATTACH_EXCLUSIVE": "true"}, func(c *config) { c.MetroAttachExclusive = true }},
		{"REDACT off", map[string]string{"REDACT": "off"}, func(c *config) { c.Redact = false }},
		{"NATIVE_LOGS off", map[string]string{"NATIVE_LOGS": "OFF"}, func(c *config) { c.NativeLogs = false }},
		// Every boolean setting reads the same words.
		{"NATIVE_LOGS false", map[string]string{"NATIVE_LOGS": "false"}, func(c *config) { c.NativeLogs = false }},
		{"REDACT 0", map[string]string{"REDACT": "0"}, func(c *config) { c.Redact = false }},
		{"METRO_ATTACH_EXCLUSIVE on", map[string]string{"METRO_ATTACH_EXCLUSIVE": "on"}, func(c *config) { c.MetroAttachExclusive = true }},
		{"READ_ONLY yes", map[string]string{"READ_ONLY": "yes"}, func(c *config) { c.ReadOnly = true }},
		{
			"ADB, XCRUN and NATIVE_APPS, ids keeping their case",
			map[string]string{"ADB": " /opt/sdk/platform-tools/adb ", "XCRUN": "/usr/bin/xcrun", "NATIVE_APPS": " com.example.Shop ,, org.x.y "},
			func(c *config) {
				c.ADBPath, c.XcrunPath, c.NativeApps = "/opt/sdk/platform-tools/adb", "/usr/bin/xcrun", []string{"com.example.Shop", "org.x.y"}
			},
		},
		{"REDACT on, any case, trimmed", map[string]string{"REDACT": " ON "}, func(c *config) { c.Redact = true }},
		{
			"REDACT_KEYS trimmed, lower-cased, empty items dropped",
			map[string]string{"REDACT_KEYS": " SSN ,, card number,x-pin_code.v2 "},
			func(c *config) { c.RedactKeys = []string{"ssn", "card number", "x-pin_code.v2"} },
		},
		{"REDACT_KEYS with REDACT off", map[string]string{"REDACT": "off", "REDACT_KEYS": "ssn"}, func(c *config) { c.Redact, c.RedactKeys = false, []string{"ssn"} }},
		{
			"all at once",
			map[string]string{
				"WS_PORT": "9000", "WS_HOST": "192.168.1.5", "REQUEST_TIMEOUT_MS": "1500",
				"MAX_PAYLOAD_SIZE": "2048", "MAX_RESULT_BYTES": "1500", "LOG_LEVEL": "error",
				"LOG_FORMAT": "json", "WS_TOKEN": "tok", "WS_ALLOWED_HOSTS": "a.test",
				"WS_ALLOWED_ORIGINS": "https://b.test", "REACTOTRON_PORT": "0", "EVENT_BUFFER": "50", "REDACT": "off", "REDACT_KEYS": "ssn",
				"MCP_TRANSPORT": "http", "MCP_HTTP_ADDR": "127.0.0.1:4000", "MCP_HTTP_TOKEN": "ht",
				"METRO_URL": "http://metro.test:8082", "METRO_ALLOWED_HOSTS": "metro.test", "METRO_ATTACH_EXCLUSIVE": "true",
				"NATIVE_LOGS": "off", "ADB": "/a/adb", "XCRUN": "/a/xcrun", "NATIVE_APPS": "com.example.shop",
			},
			func(c *config) {
				*c = config{
					WSPort: 9000, WSHost: "192.168.1.5", RequestTimeout: 1500 * time.Millisecond,
					MaxPayloadSize: 2048, MaxResultBytes: 1500, LogLevel: slog.LevelError,
					LogFormat: "json", WSToken: "tok", WSAllowedHosts: []string{"a.test"},
					WSAllowedOrigins: []string{"https://b.test"}, ReactotronPort: 0, EventBuffer: 50, Redact: false, RedactKeys: []string{"ssn"},
					Transport: "http", HTTPAddr: "127.0.0.1:4000", HTTPToken: "ht",
					MetroURL: "http://metro.test:8082", MetroAllowedHosts: []string{"metro.test"}, MetroAttachExclusive: true,
					ADBPath: "/a/adb", XcrunPath: "/a/xcrun", NativeApps: []string{"com.example.shop"},
				}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			want := wantDefaults()
			tt.modify(&want)
			got := mustLoadConfig(t, nil, tt.env)
			if diff := diffConfig(want, got); diff != "" {
				t.Errorf("loadConfig(nil, %v) mismatch (-want +got):\n%s", tt.env, diff)
			}
		})
	}
}

func TestConfigInvalid(t *testing.T) {
	t.Parallel()
	type env = map[string]string
	tests := []struct {
		name string
		args []string
		env  env
		// wantName is the variable or flag the message must name.
		wantName string
		// notName, when set, must not appear: the value came from elsewhere.
		notName string
	}{
		// WS_PORT
		{"WS_PORT 0", nil, env{"WS_PORT": "0"}, "WS_PORT", ""},
		{"WS_PORT 65536", nil, env{"WS_PORT": "65536"}, "WS_PORT", ""},
		{"WS_PORT negative", nil, env{"WS_PORT": "-1"}, "WS_PORT", ""},
		{"WS_PORT not an integer", nil, env{"WS_PORT": "http"}, "WS_PORT", ""},
		{"WS_PORT fraction", nil, env{"WS_PORT": "80.5"}, "WS_PORT", ""},
		{"WS_PORT trailing junk", nil, env{"WS_PORT": "8080x"}, "WS_PORT", ""},
		{"-ws-port 0", []string{"-ws-port=0"}, env{"WS_PORT": "8080"}, "-ws-port", "WS_PORT"},
		{"-ws-port 65536", []string{"-ws-port=65536"}, nil, "-ws-port", "WS_PORT"},
		{"-ws-port not an integer", []string{"-ws-port", "abc"}, nil, "-ws-port", "WS_PORT"},
		// WS_HOST
		{"WS_HOST with scheme", nil, env{"WS_HOST": "http://127.0.0.1"}, "WS_HOST", ""},
		{"WS_HOST with path", nil, env{"WS_HOST": "127.0.0.1/ws"}, "WS_HOST", ""},
		{"-ws-host with scheme", []string{"-ws-host=ws://0.0.0.0"}, nil, "-ws-host", "WS_HOST"},
		// REQUEST_TIMEOUT_MS
		{"REQUEST_TIMEOUT_MS 0", nil, env{"REQUEST_TIMEOUT_MS": "0"}, "REQUEST_TIMEOUT_MS", ""},
		{"REQUEST_TIMEOUT_MS 600001", nil, env{"REQUEST_TIMEOUT_MS": "600001"}, "REQUEST_TIMEOUT_MS", ""},
		{"REQUEST_TIMEOUT_MS negative", nil, env{"REQUEST_TIMEOUT_MS": "-5"}, "REQUEST_TIMEOUT_MS", ""},
		{"REQUEST_TIMEOUT_MS duration", nil, env{"REQUEST_TIMEOUT_MS": "5s"}, "REQUEST_TIMEOUT_MS", ""},
		{"REQUEST_TIMEOUT_MS fraction", nil, env{"REQUEST_TIMEOUT_MS": "1.5"}, "REQUEST_TIMEOUT_MS", ""},
		{"-request-timeout-ms 0", []string{"-request-timeout-ms=0"}, nil, "-request-timeout-ms", "REQUEST_TIMEOUT_MS"},
		{"-request-timeout-ms 600001", []string{"-request-timeout-ms=600001"}, nil, "-request-timeout-ms", "REQUEST_TIMEOUT_MS"},
		// MAX_PAYLOAD_SIZE
		{"MAX_PAYLOAD_SIZE 1023", nil, env{"MAX_PAYLOAD_SIZE": "1023", "MAX_RESULT_BYTES": "1024"}, "MAX_PAYLOAD_SIZE", ""},
		{"MAX_PAYLOAD_SIZE 67108865", nil, env{"MAX_PAYLOAD_SIZE": "67108865"}, "MAX_PAYLOAD_SIZE", ""},
		{"MAX_PAYLOAD_SIZE 0", nil, env{"MAX_PAYLOAD_SIZE": "0"}, "MAX_PAYLOAD_SIZE", ""},
		{"MAX_PAYLOAD_SIZE with unit", nil, env{"MAX_PAYLOAD_SIZE": "512k"}, "MAX_PAYLOAD_SIZE", ""},
		{"-max-payload-size 1023", []string{"-max-payload-size=1023"}, nil, "-max-payload-size", "MAX_PAYLOAD_SIZE"},
		{"-max-payload-size 67108865", []string{"-max-payload-size=67108865"}, nil, "-max-payload-size", "MAX_PAYLOAD_SIZE"},
		// MAX_RESULT_BYTES
		{"MAX_RESULT_BYTES 1023", nil, env{"MAX_RESULT_BYTES": "1023"}, "MAX_RESULT_BYTES", ""},
		{"MAX_RESULT_BYTES 0", nil, env{"MAX_RESULT_BYTES": "0"}, "MAX_RESULT_BYTES", ""},
		{"MAX_RESULT_BYTES not an integer", nil, env{"MAX_RESULT_BYTES": "lots"}, "MAX_RESULT_BYTES", ""},
		{"MAX_RESULT_BYTES above default MAX_PAYLOAD_SIZE", nil, env{"MAX_RESULT_BYTES": "524289"}, "MAX_RESULT_BYTES", ""},
		{"MAX_RESULT_BYTES above set MAX_PAYLOAD_SIZE", nil, env{"MAX_PAYLOAD_SIZE": "2048", "MAX_RESULT_BYTES": "2049"}, "MAX_RESULT_BYTES", ""},
		{"MAX_RESULT_BYTES above 67108864", nil, env{"MAX_PAYLOAD_SIZE": "67108864", "MAX_RESULT_BYTES": "67108865"}, "MAX_RESULT_BYTES", ""},
		{"-max-result-bytes 1023", []string{"-max-result-bytes=1023"}, nil, "-max-result-bytes", "MAX_RESULT_BYTES"},
		{"MAX_RESULT_BYTES above -max-payload-size", []string{"-max-payload-size=4096"}, env{"MAX_RESULT_BYTES": "8192"}, "MAX_RESULT_BYTES", ""},
		// LOG_LEVEL
		{"LOG_LEVEL unknown", nil, env{"LOG_LEVEL": "verbose"}, "LOG_LEVEL", ""},
		{"LOG_LEVEL trace", nil, env{"LOG_LEVEL": "trace"}, "LOG_LEVEL", ""},
		{"LOG_LEVEL number", nil, env{"LOG_LEVEL": "0"}, "LOG_LEVEL", ""},
		{"-log-level unknown", []string{"-log-level=loud"}, env{"LOG_LEVEL": "debug"}, "-log-level", "LOG_LEVEL"},
		// LOG_FORMAT
		{"LOG_FORMAT xml", nil, env{"LOG_FORMAT": "xml"}, "LOG_FORMAT", ""},
		{"LOG_FORMAT logfmt", nil, env{"LOG_FORMAT": "logfmt"}, "LOG_FORMAT", ""},
		{"-log-format unknown", []string{"-log-format=yaml"}, nil, "-log-format", "LOG_FORMAT"},
		// WS_ALLOWED_HOSTS
		{"WS_ALLOWED_HOSTS with port", nil, env{"WS_ALLOWED_HOSTS": "example.com:8080"}, "WS_ALLOWED_HOSTS", ""},
		{"WS_ALLOWED_HOSTS localhost with port", nil, env{"WS_ALLOWED_HOSTS": "localhost:3000"}, "WS_ALLOWED_HOSTS", ""},
		{"WS_ALLOWED_HOSTS with scheme", nil, env{"WS_ALLOWED_HOSTS": "http://example.com"}, "WS_ALLOWED_HOSTS", ""},
		{"WS_ALLOWED_HOSTS bad second item", nil, env{"WS_ALLOWED_HOSTS": "ok.test, bad.test:80"}, "WS_ALLOWED_HOSTS", ""},
		{"-ws-allowed-hosts with scheme", []string{"-ws-allowed-hosts=https://x.test"}, nil, "-ws-allowed-hosts", "WS_ALLOWED_HOSTS"},
		{"-ws-allowed-hosts with port", []string{"-ws-allowed-hosts=x.test:443"}, nil, "-ws-allowed-hosts", "WS_ALLOWED_HOSTS"},
		// WS_ALLOWED_ORIGINS
		{"WS_ALLOWED_ORIGINS without scheme", nil, env{"WS_ALLOWED_ORIGINS": "example.com"}, "WS_ALLOWED_ORIGINS", ""},
		{"WS_ALLOWED_ORIGINS host:port without scheme", nil, env{"WS_ALLOWED_ORIGINS": "localhost:3000"}, "WS_ALLOWED_ORIGINS", ""},
		{"WS_ALLOWED_ORIGINS with path", nil, env{"WS_ALLOWED_ORIGINS": "https://example.com/app"}, "WS_ALLOWED_ORIGINS", ""},
		{"WS_ALLOWED_ORIGINS with deep path", nil, env{"WS_ALLOWED_ORIGINS": "http://localhost:3000/a/b"}, "WS_ALLOWED_ORIGINS", ""},
		{"WS_ALLOWED_ORIGINS with query", nil, env{"WS_ALLOWED_ORIGINS": "https://example.com?x=1"}, "WS_ALLOWED_ORIGINS", ""},
		{"WS_ALLOWED_ORIGINS scheme only", nil, env{"WS_ALLOWED_ORIGINS": "https://"}, "WS_ALLOWED_ORIGINS", ""},
		{"WS_ALLOWED_ORIGINS bad second item", nil, env{"WS_ALLOWED_ORIGINS": "https://ok.test,evil.test"}, "WS_ALLOWED_ORIGINS", ""},
		{"-ws-allowed-origins without scheme", []string{"-ws-allowed-origins=example.com"}, nil, "-ws-allowed-origins", "WS_ALLOWED_ORIGINS"},
		{"-ws-allowed-origins with path", []string{"-ws-allowed-origins=https://x.test/p"}, nil, "-ws-allowed-origins", "WS_ALLOWED_ORIGINS"},
		// REDACT
		{"NATIVE_LOGS enabled", nil, env{"NATIVE_LOGS": "enabled"}, "NATIVE_LOGS", ""},
		{"NATIVE_APPS with a shell word", nil, env{"NATIVE_APPS": "com.example.shop;reboot"}, "NATIVE_APPS", ""},
		{"-native-apps with a space", []string{"-native-apps=com.example shop"}, nil, "-native-apps", "NATIVE_APPS"},
		{"-redact unknown", []string{"-redact=maybe"}, env{"REDACT": "on"}, "-redact", "REDACT"},
		// REDACT_KEYS
		{"REDACT_KEYS with a slash", nil, env{"REDACT_KEYS": "ssn, pin/code"}, "REDACT_KEYS", ""},
		{"REDACT_KEYS digits only", nil, env{"REDACT_KEYS": "1234"}, "REDACT_KEYS", ""},
		{"REDACT_KEYS not ASCII", nil, env{"REDACT_KEYS": "geheimnis,schlüssel"}, "REDACT_KEYS", ""},
		{"REDACT_KEYS too long", nil, env{"REDACT_KEYS": strings.Repeat("abcdefg,", 600)}, "REDACT_KEYS", ""},
		{"-redact-keys bad", []string{"-redact-keys=a:b"}, nil, "-redact-keys", "REDACT_KEYS"},
		// MCP_TRANSPORT, MCP_HTTP_ADDR, MCP_HTTP_TOKEN
		{"MCP_TRANSPORT sse", nil, env{"MCP_TRANSPORT": "sse"}, "MCP_TRANSPORT", ""},
		{"-transport websocket", []string{"-transport=websocket"}, env{"MCP_TRANSPORT": "http"}, "-transport", "MCP_TRANSPORT"},
		{"MCP_HTTP_ADDR without port", nil, env{"MCP_HTTP_ADDR": "127.0.0.1"}, "MCP_HTTP_ADDR", ""},
		{"MCP_HTTP_ADDR port 0", nil, env{"MCP_HTTP_ADDR": "127.0.0.1:0"}, "MCP_HTTP_ADDR", ""},
		{"MCP_HTTP_ADDR port 65536", nil, env{"MCP_HTTP_ADDR": "127.0.0.1:65536"}, "MCP_HTTP_ADDR", ""},
		{"MCP_HTTP_ADDR with scheme", nil, env{"MCP_HTTP_ADDR": "http://127.0.0.1:3100"}, "MCP_HTTP_ADDR", ""},
		{"-http-addr with path", []string{"-http-addr=127.0.0.1:3100/mcp"}, nil, "-http-addr", "MCP_HTTP_ADDR"},
		{"HTTP on all interfaces without a token", nil, env{"MCP_TRANSPORT": "http", "MCP_HTTP_ADDR": "0.0.0.0:3100"}, "MCP_HTTP_TOKEN", ""},
		{"-http-addr on a LAN address without a token", []string{"-transport=http", "-http-addr=192.168.1.5:3100"}, nil, "-http-addr", ""},
		// METRO_URL, METRO_ALLOWED_HOSTS, METRO_ATTACH_EXCLUSIVE
		{"METRO_URL without scheme", nil, env{"METRO_URL": "127.0.0.1:8081"}, "METRO_URL", ""},
		{"METRO_URL ws scheme", nil, env{"METRO_URL": "ws://127.0.0.1:8081"}, "METRO_URL", ""},
		{"METRO_URL with path", nil, env{"METRO_URL": "http://127.0.0.1:8081/json/list"}, "METRO_URL", ""},
		{"METRO_URL port 0", nil, env{"METRO_URL": "http://127.0.0.1:0"}, "METRO_URL", ""},
		{"METRO_URL another machine", nil, env{"METRO_URL": "http://192.168.1.5:8081"}, "METRO_ALLOWED_HOSTS", ""},
		{"-metro-url another machine", []string{"-metro-url=http://devbox.test:8081"}, nil, "-metro-url", ""},
		{"METRO_ALLOWED_HOSTS with port", nil, env{"METRO_ALLOWED_HOSTS": "devbox.test:8081"}, "METRO_ALLOWED_HOSTS", ""},
		{"METRO_ATTACH_EXCLUSIVE maybe", nil, env{"METRO_ATTACH_EXCLUSIVE": "maybe"}, "METRO_ATTACH_EXCLUSIVE", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := loadConfig(tt.args, envFrom(tt.env))
			assertUsageError(t, err, tt.wantName, tt.notName)
		})
	}
}

// TestConfigInvalidResultBytesFlagAbovePayload is the cross-field check with
// MAX_RESULT_BYTES coming from its flag: the message must name the flag.
func TestConfigInvalidResultBytesFlagAbovePayload(t *testing.T) {
	t.Parallel()
	_, err := loadConfig([]string{"-max-result-bytes=600000"}, envFrom(nil))
	assertUsageError(t, err, "-max-result-bytes", "MAX_RESULT_BYTES")
}

// assertUsageError checks err wraps errUsage and its message names wantName
// and, when notName is set, does not name notName.
func assertUsageError(t *testing.T, err error, wantName, notName string) {
	t.Helper()
	if err == nil {
		t.Fatalf("error = nil, want an error wrapping errUsage naming %s", wantName)
	}
	if !errors.Is(err, errUsage) {
		t.Errorf("error = %v, want it to wrap errUsage", err)
	}
	if msg := err.Error(); !strings.Contains(msg, wantName) {
		t.Errorf("error = %q, want it to name %s", msg, wantName)
	}
	if notName != "" && strings.Contains(err.Error(), notName) {
		t.Errorf("error = %q, want it not to name %s (the value came from %s)", err, notName, wantName)
	}
}

func TestIsLoopbackHost(t *testing.T) {
	t.Parallel()
	tests := []struct {
		host string
		want bool
	}{
		{"localhost", true},
		{"LocalHost", true},
		{"127.0.0.1", true},
		{"127.0.0.53", true},
		{"127.255.255.254", true},
		{"::1", true},
		{"[::1]", true},
		{"0:0:0:0:0:0:0:1", true},
		{"::ffff:127.0.0.1", true},
		{"", false},
		{"0.0.0.0", false},
		{"::", false},
		{"[::]", false},
		{"10.0.0.1", false},
		{"192.168.1.10", false},
		{"128.0.0.1", false},
		{"::2", false},
		{"example.com", false},
		{"localhost.example.com", false},
		{"mylocalhost", false},
		{"127.0.0.1.nip.io", false},
		{"127.0.0.1:8080", false},
		{"localhost:3000", false},
	}
	for _, tt := range tests {
		t.Run(tt.host, func(t *testing.T) {
			t.Parallel()
			if got := isLoopbackHost(tt.host); got != tt.want {
				t.Errorf("isLoopbackHost(%q) = %t, want %t", tt.host, got, tt.want)
			}
		})
	}
}

func TestConfigTightenedValues(t *testing.T) {
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	// Lowering only the payload limit lowers the result budget with it.
	cfg, err := loadConfig(nil, env(map[string]string{"MAX_PAYLOAD_SIZE": "4096"}))
	if err != nil || cfg.MaxResultBytes != 4096 {
		t.Errorf("MAX_PAYLOAD_SIZE=4096 alone: MaxResultBytes = %d, %v; want 4096, nil", cfg.MaxResultBytes, err)
	}
	for _, tc := range []struct {
		env  map[string]string
		args []string
		name string
	}{
		{env: map[string]string{"WS_HOST": "127.0.0.1:8080"}, name: "WS_HOST"},
		{env: map[string]string{"WS_ALLOWED_ORIGINS": "https://a.test#x"}, name: "WS_ALLOWED_ORIGINS"},
		{env: map[string]string{"WS_ALLOWED_ORIGINS": "https://a.test:99999"}, name: "WS_ALLOWED_ORIGINS"},
		{env: map[string]string{"WS_ALLOWED_HOSTS": "a*b.test"}, name: "WS_ALLOWED_HOSTS"},
		{args: []string{"-max-payload-size", "4096", "-max-result-bytes", "5000"}, name: "-max-result-bytes"},
	} {
		_, err := loadConfig(tc.args, env(tc.env))
		if !errors.Is(err, errUsage) || !strings.Contains(err.Error(), tc.name) {
			t.Errorf("env %v args %v: err = %v, want errUsage naming %s", tc.env, tc.args, err, tc.name)
		}
	}
	for _, host := range []string{"::1", "[::1]", "0.0.0.0", "dev-box.local"} {
		if _, err := loadConfig(nil, env(map[string]string{"WS_HOST": host})); err != nil {
			t.Errorf("WS_HOST=%s: %v", host, err)
		}
	}
	cfg, err = loadConfig(nil, env(map[string]string{"LOG_LEVEL": " Debug ", "LOG_FORMAT": " JSON"}))
	if err != nil || cfg.LogLevel != slog.LevelDebug || cfg.LogFormat != "json" {
		t.Errorf("padded LOG_LEVEL/LOG_FORMAT: %v %q %v", cfg.LogLevel, cfg.LogFormat, err)
	}
}

func TestConfigBracketedIPv6Host(t *testing.T) {
	cfg, err := loadConfig([]string{"-ws-host", "[::1]"}, func(string) string { return "" })
	if err != nil || cfg.WSHost != "::1" {
		t.Errorf("-ws-host [::1]: WSHost = %q, %v; want ::1 stored bare", cfg.WSHost, err)
	}
	if _, err := loadConfig([]string{"-ws-host", "[not-an-ip]"}, func(string) string { return "" }); !errors.Is(err, errUsage) {
		t.Errorf("-ws-host [not-an-ip]: %v, want errUsage", err)
	}
}

// TestConfigReadOnly: READ_ONLY is a switch; its flag may stand alone, and
// an explicit flag value beats the environment either way.
func TestConfigReadOnly(t *testing.T) {
	t.Parallel()
	type env = map[string]string
	for _, tc := range []struct {
		args []string
		env  env
		want bool
	}{
		{nil, nil, false},
		{nil, env{"READ_ONLY": "true"}, true},
		{nil, env{"READ_ONLY": "1"}, true},
		{nil, env{"READ_ONLY": "ON"}, true},
		{nil, env{"READ_ONLY": "false"}, false},
		{nil, env{"READ_ONLY": "no"}, false},
		{[]string{"-read-only"}, nil, true},
		{[]string{"-read-only", "-demo"}, nil, true},
		{[]string{"-read-only=false"}, env{"READ_ONLY": "true"}, false},
		{[]string{"--read-only=true"}, env{"READ_ONLY": "false"}, true},
	} {
		got := mustLoadConfig(t, tc.args, tc.env)
		if got.ReadOnly != tc.want {
			t.Errorf("loadConfig(%q, %v).ReadOnly = %t, want %t", tc.args, tc.env, got.ReadOnly, tc.want)
		}
		if tc.want {
			continue
		}
		want := wantDefaults()
		if diff := diffConfig(want, got); diff != "" && len(tc.args) == 0 {
			t.Errorf("loadConfig(%q, %v) (-want +got):\n%s", tc.args, tc.env, diff)
		}
	}
	for _, tc := range []struct {
		args     []string
		env      env
		wantName string
	}{
		{nil, env{"READ_ONLY": "maybe"}, "READ_ONLY"},
		{[]string{"-read-only=sometimes"}, nil, "-read-only"},
	} {
		_, err := loadConfig(tc.args, envFrom(tc.env))
		if !errors.Is(err, errUsage) || !strings.Contains(err.Error(), tc.wantName) {
			t.Errorf("loadConfig(%q, %v) error = %v, want a usage error naming %s", tc.args, tc.env, err, tc.wantName)
		}
	}
}

// TestConfigHTTPTransport pins the HTTP settings: a non-loopback address is
// accepted with a token, and the address is kept as host:port.
func TestConfigHTTPTransport(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		args []string
		env  map[string]string
		want func(*config)
	}{
		{"http on loopback", []string{"-transport", "HTTP"}, nil, func(c *config) { c.Transport = "http" }},
		{"http on localhost", nil, map[string]string{"MCP_TRANSPORT": "http", "MCP_HTTP_ADDR": "localhost:8080"},
			func(c *config) { c.Transport, c.HTTPAddr = "http", "localhost:8080" }},
		{"IPv6 loopback", nil, map[string]string{"MCP_TRANSPORT": "http", "MCP_HTTP_ADDR": "[::1]:3100"},
			func(c *config) { c.Transport, c.HTTPAddr = "http", "[::1]:3100" }},
		{"all interfaces with a token", []string{"-http-token", "s3cret"}, map[string]string{"MCP_TRANSPORT": "http", "MCP_HTTP_ADDR": "0.0.0.0:3100"},
			func(c *config) { c.Transport, c.HTTPAddr, c.HTTPToken = "http", "0.0.0.0:3100", "s3cret" }},
		{"stdio ignores a non-loopback HTTP address", nil, map[string]string{"MCP_HTTP_ADDR": "0.0.0.0:3100"},
			func(c *config) { c.HTTPAddr = "0.0.0.0:3100" }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			want := wantDefaults()
			tt.want(&want)
			if diff := diffConfig(want, mustLoadConfig(t, tt.args, tt.env)); diff != "" {
				t.Errorf("loadConfig mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// TestServerJSONListsTheSettings keeps server.json, the MCP Registry entry,
// in step with the settings and with npm/package.json: every setting a user
// of the stdio package may set is listed with its default (the HTTP
// transport's are not: that package is the stdio server), and the entry
// names the npm package by the name and mcpName that package.json gives.
func TestServerJSONListsTheSettings(t *testing.T) {
	t.Parallel()
	var server struct {
		Name     string `json:"name"`
		Packages []struct {
			RegistryType string `json:"registryType"`
			Identifier   string `json:"identifier"`
			Transport    struct {
				Type string `json:"type"`
			} `json:"transport"`
			EnvironmentVariables []struct {
				Name    string  `json:"name"`
				Default *string `json:"default"`
			} `json:"environmentVariables"`
		} `json:"packages"`
	}
	var pkg struct {
		Name    string `json:"name"`
		MCPName string `json:"mcpName"`
	}
	for file, v := range map[string]any{"server.json": &server, "npm/package.json": &pkg} {
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(data, v); err != nil {
			t.Fatalf("%s: %v", file, err)
		}
	}
	if server.Name != pkg.MCPName {
		t.Errorf("server.json name %q, npm/package.json mcpName %q: the registry wants them equal", server.Name, pkg.MCPName)
	}
	if len(server.Packages) != 1 || server.Packages[0].RegistryType != "npm" || server.Packages[0].Identifier != pkg.Name ||
		server.Packages[0].Transport.Type != "stdio" {
		t.Fatalf("server.json packages = %+v, want the one npm package %q over stdio", server.Packages, pkg.Name)
	}
	listed := map[string]*string{}
	for _, v := range server.Packages[0].EnvironmentVariables {
		listed[v.Name] = v.Default
	}
	httpOnly := map[string]bool{"MCP_TRANSPORT": true, "MCP_HTTP_ADDR": true, "MCP_HTTP_TOKEN": true}
	for _, s := range settings {
		def, ok := listed[s.env]
		delete(listed, s.env)
		switch {
		case httpOnly[s.env]:
			if ok {
				t.Errorf("server.json lists %s, a setting of the HTTP transport", s.env)
			}
		case !ok:
			t.Errorf("server.json does not list %s", s.env)
		case s.def == "" && def != nil:
			t.Errorf("server.json gives %s the default %q, want none", s.env, *def)
		case s.def != "" && (def == nil || *def != s.def):
			t.Errorf("server.json gives %s the default %v, want %q", s.env, def, s.def)
		}
	}
	for name := range listed {
		t.Errorf("server.json lists %s, which is no setting", name)
	}
}
