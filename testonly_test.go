package main

import (
	"go/ast"
	"go/types"
	"sort"
	"testing"
)

// unusedOnPurpose lists the product's names that no product code uses, each
// with its reason.
var unusedOnPurpose = map[string]string{}

// TestProductHoldsNoTestOnlyCode type-checks the non-test files alone and
// fails for every unexported function, method, variable or constant that
// no non-test file uses: such a name is either dead or a helper only tests
// call, which belongs in a _test.go file. A method named by an interface of
// the package that its receiver satisfies counts as used: it is called
// through the interface.
func TestProductHoldsNoTestOnlyCode(t *testing.T) {
	info := &types.Info{
		Defs:       map[*ast.Ident]types.Object{},
		Uses:       map[*ast.Ident]types.Object{},
		Selections: map[*ast.SelectorExpr]*types.Selection{},
	}
	fset, _, pkg := typeCheckProduct(t, info)
	used := map[types.Object]bool{}
	// mark counts a use of a generic type's method or field as a use of
	// its declaration, not of the instance.
	mark := func(obj types.Object) {
		switch o := obj.(type) {
		case *types.Func:
			obj = o.Origin()
		case *types.Var:
			obj = o.Origin()
		}
		used[obj] = true
	}
	for _, obj := range info.Uses {
		mark(obj)
	}
	for _, sel := range info.Selections {
		mark(sel.Obj())
	}
	var interfaces []*types.Interface
	for _, name := range pkg.Scope().Names() {
		if iface, ok := pkg.Scope().Lookup(name).Type().Underlying().(*types.Interface); ok && !iface.Empty() {
			interfaces = append(interfaces, iface)
		}
	}
	// viaInterface reports whether m is called through an interface of the
	// package that its receiver's type satisfies.
	viaInterface := func(m *types.Func) bool {
		recv := m.Type().(*types.Signature).Recv().Type()
		if p, ok := recv.(*types.Pointer); ok {
			recv = p.Elem()
		}
		for _, iface := range interfaces {
			if types.Implements(types.NewPointer(recv), iface) {
				for i := range iface.NumMethods() {
					if iface.Method(i).Name() == m.Name() {
						return true
					}
				}
			}
		}
		return false
	}
	var unused []string
	for id, obj := range info.Defs {
		if obj == nil || obj.Pkg() != pkg || used[obj] || ast.IsExported(id.Name) || id.Name == "main" || id.Name == "_" ||
			unusedOnPurpose[id.Name] != "" {
			continue
		}
		switch o := obj.(type) {
		case *types.Func:
			if o.Type().(*types.Signature).Recv() != nil && viaInterface(o) {
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
