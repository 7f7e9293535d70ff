package main

// run as a user meets it: -help, -version and usage errors on its output,
// and how the version it prints is found.

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"
)

// runOutput calls run with empty stdin and returns its output and error.
func runOutput(t *testing.T, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	var out, errOut bytes.Buffer
	err = run(t.Context(), args, strings.NewReader(""), &out, &errOut)
	return out.String(), errOut.String(), err
}

func TestRunVersion(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{{"-version"}, {"--version"}} {
		t.Run(args[0], func(t *testing.T) {
			t.Parallel()
			stdout, stderr, err := runOutput(t, args...)
			if err != nil {
				t.Fatalf("run(%q) error = %v, want nil", args, err)
			}
			if want := fmt.Sprintf("devtools-mcp %s\n", serverVersion); stdout != want {
				t.Errorf("run(%q) stdout = %q, want %q", args, stdout, want)
			}
			if serverVersion == "" {
				t.Errorf("version is empty")
			}
			if stderr != "" {
				t.Errorf("run(%q) stderr = %q, want empty", args, stderr)
			}
		})
	}
}

func TestResolveVersion(t *testing.T) {
	t.Parallel()
	info := func(v string) func() (*debug.BuildInfo, bool) {
		return func() (*debug.BuildInfo, bool) {
			return &debug.BuildInfo{Main: debug.Module{Path: "devtools-mcp", Version: v}}, true
		}
	}
	none := func() (*debug.BuildInfo, bool) { return nil, false }
	tests := []struct {
		name, stamped string
		buildInfo     func() (*debug.BuildInfo, bool)
		want          string
	}{
		{"stamped wins over the build info", "1.2.3", info("v9.9.9"), "1.2.3"},
		{"stamped pre-release", "1.2.3-rc.1", none, "1.2.3-rc.1"},
		{"stamped with spaces around", " 1.2.3\n", none, "1.2.3"},
		{"tag from go install", "", info("v1.4.0"), "1.4.0"},
		{"pseudo-version from a checkout", "", info("v0.0.0-20261125142804-5f17da8b1c2d+dirty"), "0.0.0-20261125142804-5f17da8b1c2d+dirty"},
		{"devel build", "", info("(devel)"), devVersion},
		{"empty module version", "", info(""), devVersion},
		{"no build info", "", none, devVersion},
		{"blank stamp falls back", "  ", info("v1.4.0"), "1.4.0"},
	}
	for _, tt := range tests {
		if got := resolveVersion(tt.stamped, tt.buildInfo); got != tt.want {
			t.Errorf("%s: resolveVersion(%q) = %q, want %q", tt.name, tt.stamped, got, tt.want)
		}
	}
}

// TestVersionStampedAtBuild builds the program as npm/build.sh does, with
// the version stamped through -ldflags -X, and runs -version.
func TestVersionStampedAtBuild(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds the program")
	}
	goCmd, err := exec.LookPath("go")
	if err != nil {
		t.Skipf("no go command to build the binary with: %v", err)
	}
	bin := filepath.Join(t.TempDir(), "devtools-mcp")
	const stamp = "7.8.9-test.1"
	build := exec.CommandContext(t.Context(), goCmd, "build", "-trimpath", "-ldflags", "-X main.version="+stamp, "-o", bin, ".")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	out, err := exec.CommandContext(t.Context(), bin, "-version").Output()
	if err != nil {
		t.Fatalf("%s -version: %v", bin, err)
	}
	if want := "devtools-mcp " + stamp + "\n"; string(out) != want {
		t.Errorf("-version printed %q, want %q", out, want)
	}
}

func TestRunHelp(t *testing.T) {
	t.Parallel()
	wantNames := []string{
		"WS_PORT", "-ws-port",
		"WS_HOST", "-ws-host",
		"REQUEST_TIMEOUT_MS", "-request-timeout-ms",
		"MAX_PAYLOAD_SIZE", "-max-payload-size",
		"MAX_RESULT_BYTES", "-max-result-bytes",
		"LOG_LEVEL", "-log-level",
		"LOG_FORMAT", "-log-format",
		"WS_TOKEN", "-ws-token",
		"WS_ALLOWED_HOSTS", "-ws-allowed-hosts",
		"WS_ALLOWED_ORIGINS", "-ws-allowed-origins",
		"READ_ONLY", "-read-only",
		"MCP_TRANSPORT", "-transport",
		"MCP_HTTP_ADDR", "-http-addr",
		"MCP_HTTP_TOKEN", "-http-token",
		"-demo", "-version", "-help", "127.0.0.1:3100",
		"19850", "127.0.0.1", "5000", "524288", "100000",
	}
	for _, args := range [][]string{{"-help"}, {"-h"}} {
		t.Run(args[0], func(t *testing.T) {
			t.Parallel()
			stdout, stderr, err := runOutput(t, args...)
			if err != nil {
				t.Fatalf("run(%q) error = %v, want nil", args, err)
			}
			if !strings.HasPrefix(stdout, "Usage: devtools-mcp") {
				t.Errorf("run(%q) stdout starts %q, want \"Usage: devtools-mcp\"", args, firstLine(stdout))
			}
			for _, name := range wantNames {
				if !strings.Contains(stdout, name) {
					t.Errorf("run(%q) stdout does not mention %q:\n%s", args, name, stdout)
				}
			}
			if stderr != "" {
				t.Errorf("run(%q) stderr = %q, want empty", args, stderr)
			}
		})
	}
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

func TestRunFlagErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		args     []string
		wantName string
	}{
		{"unknown flag", []string{"-bogus"}, "-bogus"},
		{"stray argument", []string{"extra"}, "extra"},
		// WS_PORT is checked first, so no variable in the environment can
		// fail earlier and change the message.
		{"invalid flag value", []string{"-ws-port=0"}, "-ws-port"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			stdout, _, err := runOutput(t, tt.args...)
			assertUsageError(t, err, tt.wantName, "")
			if stdout != "" {
				t.Errorf("run(%q) stdout = %q, want empty", tt.args, stdout)
			}
		})
	}
}
