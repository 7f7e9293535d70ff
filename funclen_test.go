package main

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strings"
	"testing"
)

// maxFuncLines bounds a product function or method, from the line of its
// opening brace to that of its closing one: a reader holds it at once.
const maxFuncLines = 80

func TestFunctionLength(t *testing.T) {
	t.Parallel()
	names, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	for _, name := range names {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok || fn.Body == nil {
				continue
			}
			start := fset.Position(fn.Body.Lbrace)
			if n := fset.Position(fn.Body.Rbrace).Line - start.Line + 1; n > maxFuncLines {
				t.Errorf("%s:%d: %s spans %d lines; split it into named steps of at most %d", name, start.Line, funcName(fn), n, maxFuncLines)
			}
		}
	}
}

// funcName is fn's name as a reader looks it up: Name, or (T).Name for a
// method.
func funcName(fn *ast.FuncDecl) string {
	if fn.Recv == nil || len(fn.Recv.List) == 0 {
		return fn.Name.Name
	}
	recv := fn.Recv.List[0].Type
	if star, ok := recv.(*ast.StarExpr); ok {
		recv = star.X
	}
	if g, ok := recv.(*ast.IndexExpr); ok { // a generic type's method
		recv = g.X
	}
	if g, ok := recv.(*ast.IndexListExpr); ok {
		recv = g.X
	}
	if id, ok := recv.(*ast.Ident); ok {
		return "(" + id.Name + ")." + fn.Name.Name
	}
	return fn.Name.Name
}
