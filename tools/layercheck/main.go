// Command layercheck fails when a package of lancens imports one above it
// in the layering that store/doc.go and the README state:
//
//	cmd (and examples, tools, the test and conformance kits)
//	  → server → engine (the Lance engine, which commits through coord)
//	  → coord → store's backends → store/sqlcatalog
//	  → the engines and libraries (expr, fts, vecindex, lance, objstore,
//	    warehouse, vend, auth, console, gen, internal/...)
//	  → store, the domain, which imports nothing of lancens
//
// Data flows down: a package imports the layers below its own (and, in
// the libraries' layer and inside one backend, its own). Besides:
//
//   - client stands alone: it imports only gen/apiclient, which imports
//     nothing of lancens, and only the top layer imports either, and
//     server, whose MCP tools (server/mcptools) call the API through the
//     client, in process;
//   - lance/ is the Lance format alone: it imports nothing of lancens
//     outside lance/ but the hardened Arrow decoder, internal/arrowin;
//   - gen, the server's generated API types, is imported by server (and
//     the top layer) only: the store and coord never see them;
//   - store/sqlcatalog imports only store; a backend never another.
//
// Test files are not checked: a package's tests may use the kits above it.
// `make lint` runs it (go run ./tools/layercheck); it prints each import
// that climbs and exits 1, or prints nothing.
package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"strings"
)

const module = "github.com/lancens/lancens"

// A layer is a rank in the layering; a package's is found by its path.
type layer int

const (
	domain      layer = iota // store
	library                  // engines and libraries
	sqlcatalog               // store/sqlcatalog
	backend                  // store/sqlite, store/postgres
	coordLayer               // coord
	engineLayer              // engine
	serverLayer              // server
	top                      // commands, examples, tools, kits
	standalone               // client and the generated client
	api                      // gen: the server's generated API types
)

var layerNames = [...]string{"the domain (store)", "the libraries", "store/sqlcatalog", "a store backend", "coord", "engine", "server", "the top layer",
	"the standalone client", "the generated server API (gen)"}

func (l layer) String() string { return layerNames[l] }

// mayImport are the layers each layer imports from (besides itself, see
// sameLayer).
var mayImport = map[layer][]layer{
	domain:      nil,
	library:     {domain},
	sqlcatalog:  {domain},
	backend:     {domain, library, sqlcatalog},
	coordLayer:  {domain, library},
	engineLayer: {domain, library, coordLayer},
	serverLayer: {domain, library, coordLayer, api, standalone},
	top:         {domain, library, sqlcatalog, backend, coordLayer, engineLayer, serverLayer, standalone, api},
	standalone:  nil,
	api:         nil,
}

// kits are the packages of the top layer outside cmd/, examples/ and
// tools/: the test kits, and the conformance kit `lancens conformance`
// runs.
var kits = []string{
	module + "/internal/testkit/apitest",
	module + "/internal/testkit/arrowtest",
	module + "/internal/testkit/authtest",
	module + "/internal/testkit/pgtest",
	module + "/internal/testkit/s3test",
	module + "/internal/testkit/ststest",
	module + "/internal/testkit/testlines",
	module + "/internal/conformance",
	module + "/internal/contract",
}

// layerOf returns the layer of a package of lancens and its room: the
// package tree it belongs to (a backend's, lance's, or its own path).
func layerOf(path string) (layer, string) {
	rel := strings.TrimPrefix(strings.TrimPrefix(path, module), "/")
	under := func(prefix string) bool { return rel == prefix || strings.HasPrefix(rel, prefix+"/") }
	switch {
	case slices.Contains(kits, path) || under("cmd") || under("examples") || under("tools"):
		return top, rel
	case under("client"):
		return standalone, "client"
	case under("gen/apiclient"):
		return standalone, "gen/apiclient"
	case rel == "gen":
		return api, "gen"
	case under("server"):
		return serverLayer, "server"
	case under("coord"):
		return coordLayer, "coord"
	case under("engine"):
		return engineLayer, "engine"
	case under("store/sqlite"):
		return backend, "store/sqlite"
	case under("store/postgres"):
		return backend, "store/postgres"
	case under("store/sqlcatalog"):
		return sqlcatalog, "store/sqlcatalog"
	case rel == "store":
		return domain, "store"
	case under("lance"):
		return library, "lance"
	}
	return library, rel
}

// allowed reports whether the package from may import the package to,
// both of lancens, and if not, why.
func allowed(from, to string) (bool, string) {
	fl, froom := layerOf(from)
	tl, troom := layerOf(to)
	switch {
	case froom == "client":
		return troom == "gen/apiclient", "client imports only gen/apiclient"
	case froom == "gen/apiclient":
		return false, "gen/apiclient imports nothing of lancens"
	case froom == "lance" && troom != "lance":
		return to == module+"/internal/arrowin", "lance/ imports nothing of lancens outside lance/ but internal/arrowin"
	case fl == tl:
		// A layer imports itself in the libraries' and the top layer, and
		// inside one room (a backend's internal packages).
		return fl == library || fl == top || froom == troom, fmt.Sprintf("%s does not import another part of %s", froom, fl)
	}
	return slices.Contains(mayImport[fl], tl), fmt.Sprintf("%s (%s) imports only %s", froom, fl, layerList(mayImport[fl]))
}

func layerList(ls []layer) string {
	if len(ls) == 0 {
		return "nothing of lancens"
	}
	var names []string
	for _, l := range ls {
		names = append(names, l.String())
	}
	return strings.Join(names, ", ")
}

// pkg is what go list says of a package.
type pkg struct {
	ImportPath string
	Imports    []string
}

// load lists the packages matching patterns, in dir.
func load(dir string, patterns ...string) ([]pkg, error) {
	cmd := exec.Command("go", append([]string{"list", "-json=ImportPath,Imports"}, patterns...)...)
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("go list: %v\n%s", err, stderr.Bytes())
	}
	var pkgs []pkg
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p pkg
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			return pkgs, nil
		} else if err != nil {
			return nil, err
		}
		pkgs = append(pkgs, p)
	}
}

// violations returns one line for each import of lancens by a package of
// pkgs that the layering does not allow.
func violations(pkgs []pkg) []string {
	var out []string
	for _, p := range pkgs {
		for _, imp := range p.Imports {
			if imp != module && !strings.HasPrefix(imp, module+"/") {
				continue
			}
			if ok, why := allowed(p.ImportPath, imp); !ok {
				out = append(out, fmt.Sprintf("%s imports %s: %s", p.ImportPath, imp, why))
			}
		}
	}
	return out
}

func main() {
	pkgs, err := load(".", "./...")
	if err != nil {
		fmt.Fprintln(os.Stderr, "layercheck:", err)
		os.Exit(2)
	}
	if v := violations(pkgs); len(v) > 0 {
		fmt.Fprintln(os.Stderr, "imports that climb the layering (see tools/layercheck):")
		for _, line := range v {
			fmt.Fprintln(os.Stderr, "  "+line)
		}
		os.Exit(1)
	}
}
