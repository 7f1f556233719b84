package server

import (
	"path/filepath"
	"testing"

	"github.com/lancens/lancens/auth"
	"github.com/lancens/lancens/warehouse"
)

// TestVendsWrite checks who gets read-write credentials for a table's
// location: a writer within its reach (its namespaces' directories, its
// granted locations) or at a location the server allocates in the table's
// namespace directory; not a writer whose table lies in another
// namespace's directory (the audit's alpha$stolen at beta's old location).
func TestVendsWrite(t *testing.T) {
	wh, err := warehouse.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	s := &Server{warehouse: wh}
	root := wh.Root()
	alpha := auth.Principal{Name: "alpha", Role: auth.RoleWrite, Scoped: true, Scopes: [][]string{{"alpha"}}, Locations: []string{"s3://shared/alpha"}}
	table := auth.Principal{Name: "t", Role: auth.RoleWrite, Scoped: true, Scopes: [][]string{{"alpha", "t"}}}
	admin := auth.Principal{Name: "admin", Role: auth.RoleAdmin, Scoped: true, Scopes: [][]string{{"alpha"}}}
	for _, tc := range []struct {
		name     string
		p        auth.Principal
		id       []string
		location string
		want     bool
	}{
		{"OwnNamespace", alpha, []string{"alpha", "t"}, filepath.Join(root, "alpha", "t-1.lance"), true},
		{"Granted", alpha, []string{"alpha", "t"}, "s3://shared/alpha/t", true},
		{"OtherNamespaceDirectory", alpha, []string{"alpha", "stolen"}, filepath.Join(root, "beta", "t-1.lance"), false},
		{"NotGranted", alpha, []string{"alpha", "t"}, "s3://shared/beta/t", false},
		{"TableScopeAllocated", table, []string{"alpha", "t"}, filepath.Join(root, "alpha", "t-1.lance"), true},
		{"TableScopeElsewhere", table, []string{"alpha", "t"}, filepath.Join(root, "alpha", "team", "x"), false},
		{"Admin", admin, []string{"alpha", "t"}, filepath.Join(root, "beta", "x"), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := s.vendsWrite(tc.p, tc.id, tc.location); got != tc.want {
				t.Fatalf("vendsWrite = %v, want %v", got, tc.want)
			}
		})
	}
}
