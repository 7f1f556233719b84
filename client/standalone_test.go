package client_test

import (
	"bufio"
	"bytes"
	"go/importer"
	"go/token"
	"go/types"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
)

const (
	clientPath    = "github.com/lancens/lancens/client"
	generatedPath = "github.com/lancens/lancens/gen/apiclient"
)

// deps returns the packages the client links (go list -deps), with the
// files holding their compiled export data.
func deps(t *testing.T) map[string]string {
	t.Helper()
	cmd := exec.CommandContext(t.Context(), filepath.Join(runtime.GOROOT(), "bin", "go"), "list", "-deps", "-export",
		"-f", "{{.ImportPath}} {{.Export}}", clientPath)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, stderr.Bytes())
	}
	pkgs := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		path, export, _ := strings.Cut(sc.Text(), " ")
		pkgs[path] = export
	}
	return pkgs
}

// serverSide are the module paths a program using the client must not
// link: the HTTP server's framework and spec validation, the databases,
// the object-store SDK.
var serverSide = []string{
	"github.com/labstack/echo",
	"github.com/getkin/kin-openapi",
	"github.com/oapi-codegen/echo-middleware",
	"modernc.org/sqlite",
	"github.com/jackc/pgx",
	"github.com/aws/",
}

// TestStandalone checks that the client links no server-side package:
// of lancens only itself and the generated client, and none of the
// server's dependencies.
func TestStandalone(t *testing.T) {
	pkgs := deps(t)
	if _, ok := pkgs[clientPath]; !ok || len(pkgs) < 10 {
		t.Fatalf("go list -deps %s listed %d packages, not the client's", clientPath, len(pkgs))
	}
	var bad []string
	for path := range pkgs {
		if strings.HasPrefix(path, "github.com/lancens/lancens/") && path != clientPath && path != generatedPath {
			bad = append(bad, path)
		}
		if slices.ContainsFunc(serverSide, func(p string) bool { return strings.HasPrefix(path, p) }) {
			bad = append(bad, path)
		}
	}
	slices.Sort(bad)
	if len(bad) > 0 {
		t.Errorf("the client links server-side packages:\n%s", strings.Join(bad, "\n"))
	}
	t.Logf("the client links %d packages", len(pkgs))
}

// TestExportedAPI checks that what the client exports mentions no type of
// another lancens package: callers need no import but the client's. The
// one exception is Raw, which hands out the generated client (standalone
// too) for what the typed methods do not cover.
func TestExportedAPI(t *testing.T) {
	pkgs := deps(t)
	fset := token.NewFileSet()
	imp := importer.ForCompiler(fset, "gc", func(path string) (io.ReadCloser, error) {
		return os.Open(pkgs[path])
	})
	pkg, err := imp.Import(clientPath)
	if err != nil {
		t.Fatal(err)
	}
	foreign := func(where string, typ types.Type) []string {
		var out []string
		walkTypes(typ, map[types.Type]bool{}, func(n *types.Named) {
			if p := n.Obj().Pkg(); p != nil && strings.HasPrefix(p.Path(), "github.com/lancens/lancens/") && p.Path() != clientPath {
				out = append(out, where+" mentions "+p.Path()+"."+n.Obj().Name())
			}
		})
		return out
	}
	var bad []string
	scope := pkg.Scope()
	for _, name := range scope.Names() {
		obj := scope.Lookup(name)
		if !obj.Exported() {
			continue
		}
		bad = append(bad, foreign(name, obj.Type())...)
		named, ok := obj.Type().(*types.Named)
		if !ok {
			continue
		}
		if _, isType := obj.(*types.TypeName); !isType {
			continue
		}
		for m := range named.Methods() {
			if !m.Exported() {
				continue
			}
			where := name + "." + m.Name()
			found := foreign(where, m.Type())
			if where == "Client.Raw" {
				found = slices.DeleteFunc(found, func(s string) bool { return strings.Contains(s, generatedPath+".") })
			}
			bad = append(bad, found...)
		}
	}
	if len(bad) > 0 {
		t.Errorf("the client's exported API mentions other lancens packages:\n%s", strings.Join(bad, "\n"))
	}
}

// walkTypes calls visit for every named type typ is built from, through
// the exported parts of structs and interfaces and the parameters and
// results of functions. The named types of the client itself are entered
// (their exported fields are its API); those of other packages are
// reported and not entered.
func walkTypes(typ types.Type, seen map[types.Type]bool, visit func(*types.Named)) {
	if seen[typ] {
		return
	}
	seen[typ] = true
	switch t := typ.(type) {
	case *types.Named:
		visit(t)
		if p := t.Obj().Pkg(); p == nil || p.Path() != clientPath {
			return
		}
		for arg := range t.TypeArgs().Types() {
			walkTypes(arg, seen, visit)
		}
		walkTypes(t.Underlying(), seen, visit)
	case *types.Alias:
		walkTypes(types.Unalias(t), seen, visit)
	case *types.Pointer:
		walkTypes(t.Elem(), seen, visit)
	case *types.Slice:
		walkTypes(t.Elem(), seen, visit)
	case *types.Array:
		walkTypes(t.Elem(), seen, visit)
	case *types.Map:
		walkTypes(t.Key(), seen, visit)
		walkTypes(t.Elem(), seen, visit)
	case *types.Chan:
		walkTypes(t.Elem(), seen, visit)
	case *types.Signature:
		for v := range t.Params().Variables() {
			walkTypes(v.Type(), seen, visit)
		}
		for v := range t.Results().Variables() {
			walkTypes(v.Type(), seen, visit)
		}
	case *types.Struct:
		for f := range t.Fields() {
			if f.Exported() {
				walkTypes(f.Type(), seen, visit)
			}
		}
	case *types.Interface:
		for m := range t.Methods() {
			if m.Exported() {
				walkTypes(m.Type(), seen, visit)
			}
		}
	}
}
