package sqlite_test

import (
	"context"
	"path/filepath"
	"sync"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/lancens/lancens/internal/progress"
	"github.com/lancens/lancens/store"
	"github.com/lancens/lancens/store/sqlite"
)

// TestBackfillProgress backfills a computed column over rows spread across
// several chunks of row ids and checks the progress reported (rows done of
// the rows the filter matches, ending whole) and that the result is the
// one of a backfill in one statement: every matching row filled, the
// others left, no row duplicated, one new version.
func TestBackfillProgress(t *testing.T) {
	sqlite.SetUpdateChunkRows(t, 300)
	ctx := context.Background()
	db := mustOpen(t, filepath.Join(t.TempDir(), "lancens.db"))
	defer db.Close()
	const rows = 2000
	schema := arrow.NewSchema([]arrow.Field{{Name: "x", Type: arrow.PrimitiveTypes.Int64}}, nil)
	b := array.NewInt64Builder(memory.DefaultAllocator)
	for i := range rows {
		b.Append(int64(i))
	}
	rec := array.NewRecordBatch(schema, []arrow.Array{b.NewArray()}, rows)
	id := []string{"t"}
	if _, _, err := db.CreateTable(ctx, id, store.NewTable{Data: store.NewData(schema, rec)}); err != nil {
		t.Fatal(err)
	}
	if _, err := db.AddColumns(ctx, id, []store.NewColumn{{Name: "doubled", Expr: "x * 2", Computed: true}}); err != nil {
		t.Fatal(err)
	}
	if _, err := db.QueueBackfill(ctx, id, "doubled", "x >= 100"); err != nil {
		t.Fatal(err)
	}
	tbl, err := db.DescribeTable(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var reports [][2]int64
	pctx := progress.With(ctx, func(stage string, done, total int64) {
		if stage != "backfill" {
			t.Errorf("stage %q", stage)
		}
		mu.Lock()
		reports = append(reports, [2]int64{done, total})
		mu.Unlock()
	})
	res, err := db.Backfill(pctx, store.BackfillColumn{TableUUID: tbl.UUID, Column: "doubled", Where: "x >= 100"})
	if err != nil {
		t.Fatal(err)
	}
	const matching = rows - 100
	if res.Updated != matching {
		t.Fatalf("backfill updated %d rows, want %d", res.Updated, matching)
	}
	// One report at the start and one per chunk of 300 row ids.
	if len(reports) != 1+(rows+299)/300 || reports[0] != [2]int64{0, matching} || reports[len(reports)-1] != [2]int64{matching, matching} {
		t.Fatalf("progress reports %v", reports)
	}
	for _, tc := range []struct {
		filter string
		want   int64
	}{
		{"", rows},
		{"doubled = x * 2", matching},
		{"doubled IS NULL", 100},
		{"doubled IS NULL AND x < 100", 100},
	} {
		n, _, err := db.CountRows(ctx, id, nil, tc.filter)
		if err != nil {
			t.Fatal(err)
		}
		if n != tc.want {
			t.Errorf("count(%q) = %d, want %d", tc.filter, n, tc.want)
		}
	}
}
