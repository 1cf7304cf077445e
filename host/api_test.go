package host_test

import (
	"bytes"
	"flag"
	"go/ast"
	"go/parser"
	"go/printer"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

var updateAPI = flag.Bool("update-api", false, "rewrite testdata/api.txt from the package's exported API")

// TestAPI holds host's exported surface, what the doors see, to
// testdata/api.txt: every exported top-level name with its signature and
// every exported method of an exported type. A change to it shows in the
// diff of that file; go test -run TestAPI ./host -args -update-api rewrites it.
func TestAPI(t *testing.T) {
	got := exportedAPI(t, ".")
	path := filepath.Join("testdata", "api.txt")
	if *updateAPI {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (go test -run TestAPI ./host -args -update-api writes it)", err)
	}
	if got != string(want) {
		t.Errorf("host's exported API differs from %s; review the change and run go test -run TestAPI ./host -args -update-api:\n%s", path, lineDiff(string(want), got))
	}
}

// exportedAPI lists the exported API of the package in dir, one sorted
// line per name, after a line that counts the top-level names.
func exportedAPI(t *testing.T, dir string) string {
	t.Helper()
	fset := token.NewFileSet()
	pkgs, err := parser.ParseDir(fset, dir, func(fi os.FileInfo) bool { return !strings.HasSuffix(fi.Name(), "_test.go") }, 0)
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	top := 0
	src := func(n ast.Node) string {
		var b bytes.Buffer
		_ = printer.Fprint(&b, fset, n)
		return strings.Join(strings.Fields(b.String()), " ")
	}
	for _, pkg := range pkgs {
		for _, f := range pkg.Files {
			for _, d := range f.Decls {
				switch d := d.(type) {
				case *ast.FuncDecl:
					if !d.Name.IsExported() {
						continue
					}
					if d.Recv == nil {
						top++
						lines = append(lines, "func "+d.Name.Name+strings.TrimPrefix(src(d.Type), "func"))
						continue
					}
					recv := src(d.Recv.List[0].Type)
					if !ast.IsExported(strings.TrimLeft(recv, "*")) {
						continue
					}
					lines = append(lines, "method ("+recv+") "+d.Name.Name+strings.TrimPrefix(src(d.Type), "func"))
				case *ast.GenDecl:
					for _, s := range d.Specs {
						switch s := s.(type) {
						case *ast.TypeSpec:
							if s.Name.IsExported() {
								top++
								kind := "type"
								if s.Assign != 0 {
									kind = "alias"
								}
								lines = append(lines, kind+" "+s.Name.Name+" "+typeKind(s.Type))
							}
						case *ast.ValueSpec:
							for _, n := range s.Names {
								if n.IsExported() {
									top++
									lines = append(lines, d.Tok.String()+" "+n.Name)
								}
							}
						}
					}
				}
			}
		}
	}
	slices.Sort(lines)
	return "exported top-level names: " + itoa(top) + "\n" + strings.Join(lines, "\n") + "\n"
}

// typeKind is what kind of type e declares, without its fields.
func typeKind(e ast.Expr) string {
	switch e := e.(type) {
	case *ast.StructType:
		return "struct"
	case *ast.InterfaceType:
		return "interface"
	case *ast.FuncType:
		return "func"
	case *ast.Ident:
		return e.Name
	case *ast.SelectorExpr:
		return typeKind(e.X) + "." + e.Sel.Name
	case *ast.MapType:
		return "map"
	case *ast.ArrayType:
		return "slice"
	case *ast.IndexExpr, *ast.IndexListExpr:
		return "generic"
	}
	return "other"
}

func itoa(n int) string {
	var b []byte
	for n >= 10 {
		b = append([]byte{byte('0' + n%10)}, b...)
		n /= 10
	}
	return string(append([]byte{byte('0' + n)}, b...))
}

// lineDiff lists the lines only in want (-) and only in got (+).
func lineDiff(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	var out []string
	for _, l := range w {
		if !slices.Contains(g, l) {
			out = append(out, "- "+l)
		}
	}
	for _, l := range g {
		if !slices.Contains(w, l) {
			out = append(out, "+ "+l)
		}
	}
	return strings.Join(out, "\n")
}
