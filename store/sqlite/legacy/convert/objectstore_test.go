package convert_test

import (
	"strings"
	"testing"

	"github.com/lancens/lancens/internal/testkit/s3test"
	"github.com/lancens/lancens/store"
	"github.com/lancens/lancens/store/sqlite/legacy/convert"
	"github.com/lancens/lancens/warehouse"
)

// TestConvertFixtureOnS3 converts the fixture into a warehouse on object
// storage (a Versity S3 gateway), a first time stopped by a crash midway
// through the table with branches: the rerun removes the objects the
// stopped conversion wrote, converts every table (each version with
// f365447's rows), and leaves no object outside the tables' locations.
func TestConvertFixtureOnS3(t *testing.T) {
	g := s3test.Start(t)
	g.CreateBucket(t, "lance-wh")
	wh, err := warehouse.OpenStore(t.Context(), "s3://lance-wh/root", g.Options())
	check(t, err)
	fx := loadFixture(t)
	v := newEnvOn(t, t.TempDir(), wh)
	if !runUntilCrash(t, v, 5) {
		t.Fatal("the conversion did not reach its fifth step")
	}
	stopped := g.Keys(t, "lance-wh", "root/fx/")
	sum, err := v.run(t, convert.Options{})
	checkOnlyUnconvertible(t, fx, sum, err)
	checkConverted(t, v, fx)
	// The stopped conversion's objects are gone: only the datasets the
	// catalog names are left.
	tbl, err := v.db.DescribeTable(t.Context(), []string{"fx", "docs"})
	check(t, err)
	if !strings.HasPrefix(tbl.Location, "s3://lance-wh/root/fx/docs-") {
		t.Fatalf("location %s", tbl.Location)
	}
	for _, k := range g.Keys(t, "lance-wh", "root/") {
		if !isConverted(t, v, "s3://lance-wh/"+k) {
			t.Errorf("object %s belongs to no converted table", k)
		}
	}
	if len(stopped) == 0 {
		t.Error("the stopped conversion wrote no object")
	}
}

// isConverted reports whether uri lies inside the location of a table of
// the catalog.
func isConverted(t *testing.T, v *env, uri string) bool {
	t.Helper()
	ids, _, err := v.db.ListAllTables(t.Context(), false, store.Page{Limit: 1000})
	check(t, err)
	for _, id := range ids {
		tbl, err := v.db.DescribeTable(t.Context(), id)
		check(t, err)
		if strings.HasPrefix(uri, tbl.Location+"/") {
			return true
		}
	}
	return false
}
