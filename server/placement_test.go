package server_test

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"testing"

	"github.com/lancens/lancens/auth"
	"github.com/lancens/lancens/internal/apitest"
	"github.com/lancens/lancens/server"
)

// TestScopesCoverStorage checks that a principal other than an admin may
// place a table (declare at a location, register) only inside the
// warehouse directories of its namespaces or a location granted to it, and
// not where a table of a namespace it may not write lay; the admin may
// anywhere. Refusals are 403 code 15 and change nothing.
func TestScopesCoverStorage(t *testing.T) {
	dir := t.TempDir()
	wh := filepath.Join(dir, "warehouse")
	ext := filepath.Join(dir, "external")
	share := filepath.Join(ext, "share")
	for _, d := range []string{wh, share, filepath.Join(ext, "other")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	keys := map[string]string{"admin": "k-admin", "alpha": "k-alpha", "beta": "k-beta", "both": "k-both", "writer": "k-writer"}
	cfg := &auth.Config{Keys: []auth.KeyConfig{
		{Name: "admin", Key: keys["admin"], Role: "admin"},
		{Name: "alpha", Key: keys["alpha"], Role: "write", Namespaces: []string{"alpha"}, Locations: []string{share}},
		{Name: "beta", Key: keys["beta"], Role: "write", Namespaces: []string{"beta"}},
		{Name: "both", Key: keys["both"], Role: "write", Namespaces: []string{"alpha", "beta"}, Locations: []string{share}},
		{Name: "writer", Key: keys["writer"], Role: "write"},
	}}
	s := apitest.Start(t, apitest.Options{Warehouse: wh, ExternalRoots: []string{ext}, Tune: func(c *server.Config) { c.Auth = cfg }})
	call := func(t *testing.T, who, path string, body map[string]any) (int, []byte) {
		t.Helper()
		b, err := json.Marshal(body)
		if err != nil {
			t.Fatal(err)
		}
		status, out, _ := s.Do(t, "POST", path, http.Header{"X-Api-Key": {keys[who]}, "Content-Type": {"application/json"}}, b)
		return status, out
	}
	must := func(t *testing.T, who, path string, body map[string]any) []byte {
		t.Helper()
		status, out := call(t, who, path, body)
		if status != http.StatusOK {
			t.Fatalf("%s %s: %d %s", who, path, status, out)
		}
		return out
	}
	for _, ns := range []string{"alpha", "beta", "gamma", "alphabet"} {
		must(t, "admin", "/v1/namespace/"+ns+"/create", nil)
	}
	// beta$t, declared where the server puts it, then deregistered: its
	// location is free, and remembered as beta's.
	var declared struct{ Location string }
	if err := json.Unmarshal(must(t, "beta", "/v1/table/beta$t/declare", nil), &declared); err != nil {
		t.Fatal(err)
	}
	must(t, "beta", "/v1/table/beta$t/deregister", nil)
	// beta$u, registered by the admin inside the share granted to alpha,
	// then deregistered.
	betaShared := filepath.Join(share, "beta-u")
	must(t, "admin", "/v1/table/beta$u/register", map[string]any{"location": betaShared})
	must(t, "admin", "/v1/table/beta$u/deregister", nil)

	for _, tc := range []struct {
		name, who, op, table, location string
		allowed                        bool
	}{
		// The audit's cases.
		{"SquatOtherNamespaceDir", "alpha", "declare", "alpha$squat", "gamma", false},
		{"SquatInsideOtherNamespace", "alpha", "declare", "alpha$squat", "beta/zz", false},
		{"StealDeregistered", "alpha", "register", "alpha$stolen", declared.Location, false},
		{"AdminSquat", "admin", "declare", "alpha$admin1", "gamma/admin1", true},
		{"AdminTakesDeregistered", "admin", "register", "alpha$admin2", declared.Location, true},
		// Inside its own namespace's directory, relative or absolute.
		{"OwnDirectory", "alpha", "declare", "alpha$mine", "alpha/mine", true},
		{"OwnDirectoryAbsolute", "alpha", "register", "alpha$mine2", filepath.Join(wh, "alpha", "mine2"), true},
		{"OwnDirectoryItself", "alpha", "declare", "alpha$whole", "alpha", false},
		{"LookAlikeDirectory", "alpha", "declare", "alpha$near", "alphabet/x", false},
		{"WarehouseRoot", "alpha", "declare", "alpha$top", "top", false},
		// Granted locations outside the warehouse.
		{"Granted", "alpha", "register", "alpha$ext", filepath.Join(share, "t1"), true},
		{"NotGranted", "alpha", "register", "alpha$ext2", filepath.Join(ext, "other", "t1"), false},
		{"UnscopedNotGranted", "writer", "register", "gamma$ext", filepath.Join(ext, "other", "t2"), false},
		{"UnscopedInWarehouse", "writer", "declare", "gamma$w", "gamma/w", true},
		{"AdminAnywhere", "admin", "register", "gamma$ext3", filepath.Join(ext, "other", "t3"), true},
		// Where another namespace's table lay: at, inside it.
		{"ReleasedByOtherNamespace", "alpha", "register", "alpha$taken", betaShared, false},
		{"InsideReleased", "alpha", "register", "alpha$taken2", filepath.Join(betaShared, "sub"), false},
		{"ReleasedWritableNamespace", "both", "register", "alpha$taken3", betaShared, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			status, out := call(t, tc.who, "/v1/table/"+tc.table+"/"+tc.op, map[string]any{"location": tc.location})
			if tc.allowed {
				if status != http.StatusOK {
					t.Fatalf("%s %s at %s: %d %s, want 200", tc.op, tc.table, tc.location, status, out)
				}
				return
			}
			if status != http.StatusForbidden || apitest.ErrorCode(out) != 15 {
				t.Fatalf("%s %s at %s: %d %s, want 403 code 15", tc.op, tc.table, tc.location, status, out)
			}
			if status, _ := call(t, "admin", "/v1/table/"+tc.table+"/exists", nil); status != http.StatusNotFound {
				t.Fatalf("refused, yet %s exists (%d)", tc.table, status)
			}
		})
	}
	// The squat refused above leaves gamma's directory to gamma.
	must(t, "admin", "/v1/table/gamma$t/declare", map[string]any{"location": "gamma/t"})
}
