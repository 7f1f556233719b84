package convert_test

import (
	"fmt"
	"testing"

	"github.com/lancens/lancens/store"
	"github.com/lancens/lancens/store/sqlite/legacy"
)

// TestUnconvertedTables checks what the catalog does with a managed table
// of an earlier release before it is converted: removing its versions and
// creating a branch answer 19 and change nothing, and dropping it drops
// its rows tables with its entry.
func TestUnconvertedTables(t *testing.T) {
	v := newEnv(t)
	ctx := t.Context()
	refs, err := legacy.Managed(ctx, v.db)
	check(t, err)
	if len(refs) == 0 {
		t.Fatal("the fixture has no managed table")
	}
	r := refs[0]
	rowsTables := func() int {
		t.Helper()
		var n int
		check(t, v.db.ReadLegacy(ctx, func(tx legacy.Tx) error {
			return tx.QueryRow(ctx, `SELECT count(*) FROM sqlite_master WHERE type = 'table' AND (name = ? OR name LIKE ? ESCAPE '\')`,
				fmt.Sprintf("rows_%d", r.RowID), fmt.Sprintf(`rows\_%d\_%%`, r.RowID)).Scan(&n)
		}))
		return n
	}
	if rowsTables() == 0 {
		t.Fatalf("table %v has no rows table in the fixture", r.ID)
	}
	latest, err := v.db.DescribeVersion(ctx, r.ID, "", nil)
	check(t, err)
	if _, _, err := v.db.DeleteVersions(ctx, r.ID, "", []store.VersionRange{{Start: 0, End: latest.Version}}); store.ErrorCode(err) != store.CodeInvalidTableState {
		t.Errorf("removing versions of an unconverted table: %v, want code 19", err)
	}
	if _, err := v.db.DescribeVersion(ctx, r.ID, "", &latest.Version); err != nil {
		t.Errorf("a refused removal changed the versions: %v", err)
	}
	if _, err := v.db.CreateBranch(ctx, r.ID, "unconverted-branch", "", nil); store.ErrorCode(err) != store.CodeInvalidTableState {
		t.Errorf("a branch of an unconverted table: %v, want code 19", err)
	}
	if _, _, err := v.db.DropTable(ctx, r.ID); err != nil {
		t.Fatal(err)
	}
	if n := rowsTables(); n != 0 {
		t.Fatalf("%d rows tables of the dropped table are left", n)
	}
}
