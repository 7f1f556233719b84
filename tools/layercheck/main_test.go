package main

import (
	"strings"
	"testing"
)

// TestAllowed: each rule of the layering, both ways.
func TestAllowed(t *testing.T) {
	m := func(p string) string { return module + "/" + p }
	for _, tc := range []struct {
		from, to string
		ok       bool
	}{
		{"cmd/lancens", "server", true},
		{"cmd/lancens", "internal/conformance", true},
		{"server", "coord", true},
		{"server", "gen", true},
		{"server", "cmd/lancens", false},
		{"server/mcptools", "client", true},
		{"coord", "client", false},
		{"store/sqlite", "client", false},
		{"server", "internal/testkit/apitest", false},
		{"coord", "store", true},
		{"coord", "warehouse", true},
		{"coord", "server", false},
		{"coord", "store/sqlite", false},
		{"store/sqlite", "store/sqlcatalog", true},
		{"store/sqlite", "store/sqlite/internal/sqlitedb", true},
		{"store/sqlite", "vecindex", true},
		{"store/sqlite", "coord", false},
		{"store/sqlite", "gen", false},
		{"coord", "gen", false},
		{"vecindex", "vecindex/internal/simd", true},
		{"store/postgres", "store/sqlite", false},
		{"store/sqlcatalog", "store", true},
		{"store/sqlcatalog", "expr", false},
		{"store", "expr", false},
		{"expr", "store", true},
		{"warehouse", "objstore", true},
		{"warehouse", "coord", false},
		{"warehouse", "store/sqlite", false},
		{"client", "gen/apiclient", true},
		{"client", "store", false},
		{"client", "gen", false},
		{"gen/apiclient", "store", false},
		{"internal/testkit/apitest", "client", true},
		{"internal/conformance", "client", true},
		{"lance/table", "lance/file", true},
		{"lance/table", "internal/arrowin", true},
		{"lance/table", "store", false},
		{"lance/file", "internal/progress", false},
		{"objstore", "lance/blob", true},
	} {
		ok, why := allowed(m(tc.from), m(tc.to))
		if ok != tc.ok {
			t.Errorf("%s → %s allowed %v (%s), want %v", tc.from, tc.to, ok, why, tc.ok)
		}
	}
}

// TestViolations: only imports of lancens that climb are reported, one
// line each, naming the rule.
func TestViolations(t *testing.T) {
	got := violations([]pkg{
		{ImportPath: module + "/coord", Imports: []string{"context", module + "/store", module + "/server"}},
		{ImportPath: module + "/client", Imports: []string{"github.com/apache/arrow-go/v18/arrow", module + "/gen/apiclient"}},
	})
	if len(got) != 1 || !strings.Contains(got[0], "coord imports "+module+"/server") || !strings.Contains(got[0], "imports only") {
		t.Fatalf("violations = %q, want coord's import of server alone", got)
	}
}

// TestTree: the packages of lancens keep the layering.
func TestTree(t *testing.T) {
	pkgs, err := load("../..", "./...")
	if err != nil {
		t.Fatal(err)
	}
	if len(pkgs) < 50 {
		t.Fatalf("go list found %d packages", len(pkgs))
	}
	for _, v := range violations(pkgs) {
		t.Error(v)
	}
}
