package main

// Command-line flags: they override the environment, unknown or malformed
// ones are usage errors, and -help and -version win over invalid settings.

import (
	"log/slog"
	"testing"
	"time"
)

func TestFlagOverridesEnv(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		args   []string
		env    map[string]string
		modify func(c *config)
	}{
		{"-ws-port", []string{"-ws-port=8081"}, map[string]string{"WS_PORT": "8080"}, func(c *config) { c.WSPort = 8081 }},
		{"-ws-port separate value", []string{"-ws-port", "8082"}, map[string]string{"WS_PORT": "8080"}, func(c *config) { c.WSPort = 8082 }},
		{"--ws-port double dash", []string{"--ws-port=8083"}, map[string]string{"WS_PORT": "8080"}, func(c *config) { c.WSPort = 8083 }},
		{"-ws-port over invalid variable", []string{"-ws-port=8084"}, map[string]string{"WS_PORT": "not-a-port"}, func(c *config) { c.WSPort = 8084 }},
		{"-ws-port without variable", []string{"-ws-port=8085"}, nil, func(c *config) { c.WSPort = 8085 }},
		{"-ws-host", []string{"-ws-host=0.0.0.0"}, map[string]string{"WS_HOST": "10.0.0.1"}, func(c *config) { c.WSHost = "0.0.0.0" }},
		{"-request-timeout-ms", []string{"-request-timeout-ms=42"}, map[string]string{"REQUEST_TIMEOUT_MS": "1000"}, func(c *config) { c.RequestTimeout = 42 * time.Millisecond }},
		{"-max-payload-size", []string{"-max-payload-size=200000"}, map[string]string{"MAX_PAYLOAD_SIZE": "300000"}, func(c *config) { c.MaxPayloadSize = 200000 }},
		{"-max-result-bytes", []string{"-max-result-bytes=4096"}, map[string]string{"MAX_RESULT_BYTES": "8192"}, func(c *config) { c.MaxResultBytes = 4096 }},
		{"-log-level", []string{"-log-level=debug"}, map[string]string{"LOG_LEVEL": "error"}, func(c *config) { c.LogLevel = slog.LevelDebug }},
		{"-log-level over invalid variable", []string{"-log-level=warn"}, map[string]string{"LOG_LEVEL": "loud"}, func(c *config) { c.LogLevel = slog.LevelWarn }},
		{"-log-format", []string{"-log-format=json"}, map[string]string{"LOG_FORMAT": "text"}, func(c *config) { c.LogFormat = "json" }},
		{"-ws-token", []string{"-ws-token=from-flag"}, map[string]string{"WS_TOKEN": "from-env"}, func(c *config) { c.WSToken = "from-flag" }},
		{
			"-ws-allowed-hosts",
			[]string{"-ws-allowed-hosts= Flag.Example ,, other.test"},
			map[string]string{"WS_ALLOWED_HOSTS": "env.example"},
			func(c *config) { c.WSAllowedHosts = []string{"flag.example", "other.test"} },
		},
		{
			"-ws-allowed-origins",
			[]string{"-ws-allowed-origins=HTTPS://Flag.Example:8443, "},
			map[string]string{"WS_ALLOWED_ORIGINS": "https://env.example"},
			func(c *config) { c.WSAllowedOrigins = []string{"https://flag.example:8443"} },
		},
		{
			"flag for one setting leaves the others to variables",
			[]string{"-ws-port=7000"},
			map[string]string{"WS_PORT": "6000", "WS_HOST": "10.1.2.3", "LOG_FORMAT": "json"},
			func(c *config) { c.WSPort, c.WSHost, c.LogFormat = 7000, "10.1.2.3", "json" },
		},
		{"-demo", []string{"-demo"}, nil, func(c *config) { c.Demo = true }},
		{"-redact", []string{"-redact=off"}, map[string]string{"REDACT": "on"}, func(c *config) { c.Redact = false }},
		{"-redact-keys", []string{"-redact-keys=Pin"}, map[string]string{"REDACT_KEYS": "ssn"}, func(c *config) { c.RedactKeys = []string{"pin"} }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			want := wantDefaults()
			tt.modify(&want)
			got := mustLoadConfig(t, tt.args, tt.env)
			if diff := diffConfig(want, got); diff != "" {
				t.Errorf("loadConfig(%q, %v) mismatch (-want +got):\n%s", tt.args, tt.env, diff)
			}
		})
	}
}

func TestFlagUsageErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		args     []string
		wantName string
	}{
		{"unknown flag", []string{"-bogus"}, "-bogus"},
		{"unknown flag with value", []string{"--nope=1"}, "-nope"},
		{"unknown flag after valid ones", []string{"-ws-port=8080", "-port=1"}, "-port"},
		{"flag missing its value", []string{"-ws-port"}, "-ws-port"},
		{"bad boolean", []string{"-demo=maybe"}, "-demo"},
		{"stray positional argument", []string{"extra"}, "extra"},
		{"stray argument after flags", []string{"-ws-port=8080", "serve"}, "serve"},
		{"stray argument before flag", []string{"stdio", "-demo"}, "stdio"},
		{"stray argument with -version", []string{"-version", "now"}, "now"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := loadConfig(tt.args, envFrom(nil))
			assertUsageError(t, err, tt.wantName, "")
		})
	}
}

func TestConfigHelpVersionFlags(t *testing.T) {
	t.Parallel()
	invalidEnv := map[string]string{"WS_PORT": "0", "LOG_LEVEL": "loud"}
	tests := []struct {
		name        string
		args        []string
		env         map[string]string
		wantHelp    bool
		wantVersion bool
	}{
		{"-help", []string{"-help"}, nil, true, false},
		{"--help", []string{"--help"}, nil, true, false},
		{"-h", []string{"-h"}, nil, true, false},
		{"-version", []string{"-version"}, nil, false, true},
		{"--version", []string{"--version"}, nil, false, true},
		{"-help with invalid variables", []string{"-help"}, invalidEnv, true, false},
		{"-version with invalid variables", []string{"-version"}, invalidEnv, false, true},
		{"-version with invalid flag value", []string{"-ws-port=0", "-version"}, nil, false, true},
		{"neither", nil, nil, false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := mustLoadConfig(t, tt.args, tt.env)
			if got.Help != tt.wantHelp {
				t.Errorf("loadConfig(%q).Help = %t, want %t", tt.args, got.Help, tt.wantHelp)
			}
			if got.Version != tt.wantVersion {
				t.Errorf("loadConfig(%q).Version = %t, want %t", tt.args, got.Version, tt.wantVersion)
			}
		})
	}
}
