package main

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"go/types"
	"os"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
)

// The package is flat, but its files are layered (see main.go's package map
// and docs/development.md, "For contributors"). Data flows down the list below and
// answers come back up; a file may use names declared in its own layer and
// in the layers below, never in one above. The order is written once, here,
// as data, the way Go's go/build deps_test.go holds the standard library's
// import rules.
var layers = []struct {
	name  string
	files []string // exact file names or prefixes ending in "_"
}{
	{"entry", []string{"main.go", "config.go", "config_values.go", "memory.go"}},
	{"check", []string{"check_"}},
	{"transports", []string{"rpc_"}},
	{"mcp core", []string{"mcp_"}},
	{"answers", []string{"tool_", "resource_", "errors.go"}},
	{"sessions", []string{"session_"}},
	{"links", []string{"wire_", "rtron_", "metro_", "symbolicate_", "native_"}},
	// settings.go is the configuration as plain values: every layer is
	// handed its settings, and config.go (entry) only parses them.
	// version.go is the version every layer reports; ring.go the one
	// queue, clip.go the one clipper, wait.go the one backoff, lines.go the
	// one line reader, which the demo may use too.
	{"base", []string{"json_", "redact_", "stack_", "jsonrpc.go", "ring.go", "clip.go", "wait.go", "lines.go", "settings.go", "version.go"}},
}

// The demo app stands beside the server, not in its stack: it talks to the
// server only over its WebSocket, so it may use the base layer alone.
const demoLayer = "demo"

// layerUses narrows what a layer may use to the layers named, besides its
// own: check-adapter (check_*) is an entry point beside the server, and
// reads the wire as the links do without knowing sessions, answers or MCP.
var layerUses = map[string][]string{"check": {"links", "base"}}

// layerExceptions lists the uses that cross the order on purpose, each with
// its reason. Keep it short: a new entry is a design question first.
var layerExceptions = map[string]string{}

// fileLayer gives a non-test file's layer, by rank (0 is the top) or the
// demo's rank of -1; ok is false for a file no layer names.
func fileLayer(name string) (rank int, layer string, ok bool) {
	if strings.HasPrefix(name, "demo_") || name == "demo.go" {
		return -1, demoLayer, true
	}
	for i, l := range layers {
		for _, f := range l.files {
			if f == name || (strings.HasSuffix(f, "_") && strings.HasPrefix(name, f)) {
				return i, l.name, true
			}
		}
	}
	return 0, "", false
}

// layerViolations type-checks the package's non-test files (imports are
// stubbed: only the package's own names matter) and lists every use of a
// package-level name, field or method declared in a layer above the using
// file's own.
func layerViolations(t *testing.T) []string {
	t.Helper()
	info := &types.Info{Uses: map[*ast.Ident]types.Object{}}
	fset, files, pkg := typeCheckProduct(t, info)
	for _, f := range files {
		if name := filepath.Base(fset.Position(f.Pos()).Filename); !layerKnown(name) {
			t.Errorf("%s belongs to no layer: name it with a layer's prefix, or add it to the list", name)
		}
	}
	seen := map[string]bool{}
	var out []string
	for id, obj := range info.Uses {
		if obj == nil || obj.Pkg() != pkg || !obj.Pos().IsValid() {
			continue
		}
		if v, ok := obj.(*types.Var); ok && !v.IsField() && obj.Parent() != pkg.Scope() {
			continue // a local variable or parameter
		}
		if obj.Parent() != nil && obj.Parent() != pkg.Scope() {
			continue // a local type, constant or label
		}
		user := filepath.Base(fset.Position(id.Pos()).Filename)
		owner := filepath.Base(fset.Position(obj.Pos()).Filename)
		if user == owner {
			continue
		}
		ur, ul, uok := fileLayer(user)
		or, ol, ook := fileLayer(owner)
		if !uok || !ook {
			continue
		}
		var bad bool
		switch {
		case ul == demoLayer:
			bad = ol != demoLayer && ol != layers[len(layers)-1].name
		case ol == demoLayer:
			bad = ur != 0 // only the entry starts the demo
		case layerUses[ul] != nil && ul != ol:
			bad = !slices.Contains(layerUses[ul], ol)
		default:
			bad = or < ur
		}
		if !bad {
			continue
		}
		key := fmt.Sprintf("%s -> %s.%s", user, owner, obj.Name())
		if _, ok := layerExceptions[key]; ok || seen[key] {
			continue
		}
		seen[key] = true
		out = append(out, fmt.Sprintf("%s (%s) uses %s from %s (%s)", user, ul, obj.Name(), owner, ol))
	}
	sort.Strings(out)
	return out
}

func layerKnown(name string) bool {
	_, _, ok := fileLayer(name)
	return ok
}

// typeCheckProduct parses the package's non-test files and type-checks them
// with imports stubbed (only the package's own names matter), filling info.
func typeCheckProduct(t *testing.T, info *types.Info) (*token.FileSet, []*ast.File, *types.Package) {
	t.Helper()
	fset := token.NewFileSet()
	names, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	var files []*ast.File
	for _, name := range names {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		src, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		f, err := parser.ParseFile(fset, name, src, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	conf := types.Config{
		Importer: stubImporter{},
		Error:    func(error) {}, // uses of stubbed imports do not resolve; that is expected
	}
	pkg, _ := conf.Check("devtools-mcp", fset, files, info)
	return fset, files, pkg
}

type stubImporter struct{}

func (stubImporter) Import(p string) (*types.Package, error) {
	name := path.Base(p)
	if strings.HasPrefix(name, "v") && strings.Trim(name[1:], "0123456789") == "" && len(name) > 1 {
		name = path.Base(path.Dir(p))
	}
	pkg := types.NewPackage(p, name)
	pkg.MarkComplete()
	return pkg, nil
}

func TestLayers(t *testing.T) {
	t.Parallel()
	if len(layerExceptions) > 3 {
		t.Errorf("%d layer exceptions; at most three are allowed", len(layerExceptions))
	}
	for _, v := range layerViolations(t) {
		t.Error(v)
	}
}
