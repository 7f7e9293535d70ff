package main

// run as a user meets it: -help, -version and usage errors on its output,
// and how the version it prints is found.

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"regexp"
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
	for _, args := range [][]string{{"-version"}, {"--version"}, {"check-adapter", "-version"}} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
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

// TestVersionStampedAtBuild holds what the release build relies on
// without building a second binary here (that would compile another
// standard library, -trimpath and CGO_ENABLED=0, on a fresh machine's first
// go test): npm/build.sh stamps main.version with -ldflags -X, which the
// linker can only do to a package-level string variable with no value of
// its own, and -version prints what serverVersion makes of it. npm/check.sh,
// which .ci/run runs, builds the release binaries that way and checks that
// -version prints the stamp.
func TestVersionStampedAtBuild(t *testing.T) {
	t.Parallel()
	script, err := os.ReadFile("npm/build.sh")
	if err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`go build [^\n]*-ldflags "[^"]*-X main\.version=\$version"`).Match(script) {
		t.Error("npm/build.sh does not stamp the release with -ldflags \"-X main.version=$version\"")
	}
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "version.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, decl := range f.Decls {
		gen, ok := decl.(*ast.GenDecl)
		if !ok {
			continue
		}
		for _, spec := range gen.Specs {
			vs, ok := spec.(*ast.ValueSpec)
			if !ok || len(vs.Names) != 1 || vs.Names[0].Name != "version" {
				continue
			}
			found = true
			if ident, _ := vs.Type.(*ast.Ident); gen.Tok != token.VAR || ident == nil || ident.Name != "string" || len(vs.Values) != 0 {
				t.Errorf("version.go declares %s version %v = %v: -X can only set a var of type string with no value", gen.Tok, vs.Type, vs.Values)
			}
		}
	}
	if !found {
		t.Error("version.go declares no package-level version for -X main.version to set")
	}
	if got := resolveVersion("7.8.9-test.1", debug.ReadBuildInfo); got != "7.8.9-test.1" {
		t.Errorf("a stamped 7.8.9-test.1 resolves to %q", got)
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
