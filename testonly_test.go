package main

import (
	"go/ast"
	"go/types"
	"sort"
	"testing"
)

// unusedOnPurpose lists the product's names that no product code uses, each
// with its reason.
var unusedOnPurpose = map[string]string{
	"errMissingRequiredClientCapability": "reserves 2026-07-28's -32021 beside the codes the server sends",
}

// TestProductHoldsNoTestOnlyCode type-checks the non-test files alone and
// fails for every unexported function, method, variable or constant that
// no non-test file uses: such a name is either dead or a helper only tests
// call, which belongs in a _test.go file. A method named by an interface of
// the package counts as used: it is called through the interface.
func TestProductHoldsNoTestOnlyCode(t *testing.T) {
	info := &types.Info{
		Defs:       map[*ast.Ident]types.Object{},
		Uses:       map[*ast.Ident]types.Object{},
		Selections: map[*ast.SelectorExpr]*types.Selection{},
	}
	fset, _, pkg := typeCheckProduct(t, info)
	used := map[types.Object]bool{}
	for _, obj := range info.Uses {
		used[obj] = true
	}
	for _, sel := range info.Selections {
		used[sel.Obj()] = true
	}
	viaInterface := map[string]bool{}
	for _, name := range pkg.Scope().Names() {
		if iface, ok := pkg.Scope().Lookup(name).Type().Underlying().(*types.Interface); ok {
			for i := range iface.NumMethods() {
				viaInterface[iface.Method(i).Name()] = true
			}
		}
	}
	var unused []string
	for id, obj := range info.Defs {
		if obj == nil || obj.Pkg() != pkg || used[obj] || ast.IsExported(id.Name) || id.Name == "main" || id.Name == "_" ||
			unusedOnPurpose[id.Name] != "" {
			continue
		}
		switch o := obj.(type) {
		case *types.Func:
			if o.Type().(*types.Signature).Recv() != nil && viaInterface[o.Name()] {
				continue
			}
		case *types.Var, *types.Const, *types.TypeName:
			if obj.Parent() != pkg.Scope() {
				continue // a local, a parameter or a field
			}
		default:
			continue
		}
		unused = append(unused, fset.Position(id.Pos()).String()+": "+id.Name)
	}
	sort.Strings(unused)
	for _, u := range unused {
		t.Errorf("%s is used by no non-test file: move it to a _test.go file, or delete it", u)
	}
}
