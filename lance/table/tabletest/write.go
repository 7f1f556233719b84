package tabletest

import (
	"context"
	"fmt"
	"math"
	"slices"
	"testing"
	"time"

	"github.com/RoaringBitmap/roaring/v2"
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/lancens/lancens/lance/blob"
	"github.com/lancens/lancens/lance/file"
	"github.com/lancens/lancens/lance/schema"
	"github.com/lancens/lancens/lance/table"
)

// dim is the vectors' dimension, as in node/lance/rows.mjs.
const dim = 8

// rowSchema is node/lance/rows.mjs's schema: an id, a name (null for ids
// divisible by 7) and a vector.
var rowSchema = arrow.NewSchema([]arrow.Field{
	{Name: "id", Type: arrow.PrimitiveTypes.Int64},
	{Name: "name", Type: arrow.BinaryTypes.String, Nullable: true},
	{Name: "vec", Type: arrow.FixedSizeListOfField(dim, arrow.Field{Name: "item", Type: arrow.PrimitiveTypes.Float32, Nullable: true}), Nullable: true},
}, nil)

// goRows returns the rows of ids [start, start+n) that node/lance/rows.mjs
// makes: vector element j of row i is sin(i·8 + j).
func goRows(start, n int) arrow.RecordBatch {
	b := array.NewRecordBuilder(memory.DefaultAllocator, rowSchema)
	defer b.Release()
	ids := b.Field(0).(*array.Int64Builder)
	names := b.Field(1).(*array.StringBuilder)
	vecs := b.Field(2).(*array.FixedSizeListBuilder)
	vals := vecs.ValueBuilder().(*array.Float32Builder)
	for i := start; i < start+n; i++ {
		ids.Append(int64(i))
		if i%7 == 0 {
			names.AppendNull()
		} else {
			names.Append(fmt.Sprint("row ", i))
		}
		vecs.Append(true)
		for j := range dim {
			vals.Append(float32(math.Sin(float64(i*dim + j))))
		}
	}
	return b.NewRecordBatch()
}

// sdkReport is what node/lance/check-dataset.mjs reports.
type sdkReport struct {
	Version  uint64
	Rows     uint64
	IDs      []int64
	Below100 uint64
	Fields   []string
	Versions []uint64
	Tags     []struct {
		Name          string
		Version, Rows uint64
	}
	Branches []struct {
		Name                         string
		ParentVersion, Version, Rows uint64
	}
	Probe   int64
	Nearest struct {
		ID       int64
		Distance float64
	}
	IndexedNearest struct {
		ID       int64
		Distance float64
	}
	Indexes int
	After   struct {
		Version uint64
		Rows    uint64
		IDs     []int64
	}
}

// goHistory builds a dataset in root with every operation of lance/table,
// writing its data with lance/file, and returns its last version: ids
// 0–7999 (one fragment), 8000–9999 (two), an added column, deletes (a
// bitmap, an Arrow file, a whole fragment), a rename, a drop, a tag, a
// restore, a compaction and a branch. uri is the dataset's location as
// Lance names it.
func goHistory(t *testing.T, ctx context.Context, ds Dataset) *table.Dataset {
	t.Helper()
	root := ds.Store
	step := func(d *table.Dataset, err error) *table.Dataset {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	sch, err := schema.FromArrow(rowSchema)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sch.AssignIDs(0); err != nil {
		t.Fatal(err)
	}
	write := func(start, n int) []*table.Fragment {
		t.Helper()
		rec := goRows(start, n)
		defer rec.Release()
		frags, err := table.WriteFragments(ctx, root, sch, table.Batches(rec), table.WriteOptions{MaxRowsPerFile: 8000})
		if err != nil {
			t.Fatal(err)
		}
		return frags
	}
	opts := table.Options{URI: ds.URI()}
	d := step(table.Create(ctx, root, sch, write(0, 8000), table.CreateOptions{Options: opts}))
	d = step(d.Append(ctx, append(write(8000, 1000), write(9000, 1000)...)))
	d = step(d.AddColumns(ctx, []*schema.Field{{Name: "double_id", LogicalType: "int64", Nullable: true}}, doubleIDs(d, root)))
	a, b, c := d.Manifest().Fragments[0].ID, d.Manifest().Fragments[1].ID, d.Manifest().Fragments[2].ID
	bulk := roaring.New()
	bulk.AddRange(1000, 7000)
	d = step(d.Delete(ctx, map[uint64]*roaring.Bitmap{a: bulk, b: roaring.BitmapOf(0, 1, 2, 3, 4, 5, 6, 7, 8, 9)}, "id >= 1000 AND id < 7000 OR id >= 8000 AND id < 8010"))
	all := roaring.New()
	all.AddRange(0, 1000)
	d = step(d.Delete(ctx, map[uint64]*roaring.Bitmap{c: all}, "id >= 9000"))
	d = step(d.RenameColumn(ctx, "double_id", "twice"))
	d = step(d.DropColumns(ctx, "name"))
	if err := d.CreateTag(ctx, "merged", 3); err != nil {
		t.Fatal(err)
	}
	d = step(d.Restore(ctx, 6))
	d = step(d.DropColumns(ctx, "name"))
	d, stats, err := d.Compact(ctx, table.CompactOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if stats.FragmentsRemoved != 2 || stats.FragmentsAdded != 1 || d.Version() != 10 {
		t.Fatalf("compaction %+v made version %d", stats, d.Version())
	}
	if _, err := d.CreateBranch(ctx, "exp"); err != nil {
		t.Fatal(err)
	}
	return d
}

// doubleIDs is the ColumnWriter, for version d, of a column holding twice
// each row's id, deleted rows included.
func doubleIDs(d *table.Dataset, root blob.Store) table.ColumnWriter {
	return func(ctx context.Context, f *table.Fragment, fields []*schema.Field) (table.DataFile, error) {
		proj, err := d.Manifest().Schema.Project("id")
		if err != nil {
			return table.DataFile{}, err
		}
		fr, err := d.OpenFragment(ctx, f, proj, nil)
		if err != nil {
			return table.DataFile{}, err
		}
		rec, err := fr.ReadRange(ctx, 0, f.PhysicalRows)
		if err != nil {
			return table.DataFile{}, err
		}
		defer rec.Release()
		b := array.NewInt64Builder(memory.DefaultAllocator)
		defer b.Release()
		for _, v := range rec.Column(0).(*array.Int64).Int64Values() {
			b.Append(2 * v)
		}
		col := b.NewArray()
		defer col.Release()
		add := &schema.Schema{Fields: fields}
		as, err := add.ToArrow()
		if err != nil {
			return table.DataFile{}, err
		}
		out := array.NewRecordBatch(as, []arrow.Array{col}, int64(col.Len()))
		defer out.Release()
		df, _, err := table.WriteDataFile(ctx, root, add, table.Batches(out), file.WriteOptions{})
		return df, err
	}
}

// SDKReadsGoWritten writes a dataset (in newDataset's place) with every
// operation of lance/table, data included, and has the LanceDB SDK open
// it, read it (rows, a filter, a vector search, tags, a branch, the
// versions cleanup kept), index it and write on top; Go then reads the
// SDK's versions back row for row, compacts them, and the SDK reads the
// result through its index.
func SDKReadsGoWritten(t *testing.T, newDataset NewDataset) {
	ctx := context.Background()
	ds := newDataset(t)
	d := goHistory(t, ctx, ds)

	stats, err := d.Cleanup(ctx, table.CleanupOptions{Before: time.Now().Add(time.Second), DeleteUnverified: true})
	if err != nil {
		t.Fatal(err)
	}
	if stats.Versions != 8 {
		t.Errorf("cleanup removed %d versions, want 8 (all but the tagged one and the latest)", stats.Versions)
	}

	var got sdkReport
	runNodeJSON(t, &got, "check-dataset.mjs", ds.DB, ds.Name, mustJSON(t, ds.Options))
	var wantIDs []int64
	for _, r := range [][2]int64{{0, 1000}, {7000, 8000}, {8010, 9000}} {
		for id := r[0]; id < r[1]; id++ {
			wantIDs = append(wantIDs, id)
		}
	}
	if got.Version != 10 || got.Rows != uint64(len(wantIDs)) || !slices.Equal(got.IDs, wantIDs) {
		t.Errorf("the SDK reads version %d with %d rows (ids equal: %v), want version 10 with %d", got.Version, got.Rows, slices.Equal(got.IDs, wantIDs), len(wantIDs))
	}
	if got.Below100 != 100 || !slices.Equal(got.Fields, []string{"id", "vec", "twice"}) {
		t.Errorf("the SDK counts %d rows below 100 and sees fields %v", got.Below100, got.Fields)
	}
	if !slices.Equal(got.Versions, []uint64{3, 10}) {
		t.Errorf("the SDK lists versions %v, want the tagged 3 and the latest 10", got.Versions)
	}
	// Go's sin and JavaScript's may differ in the last bit of a float64,
	// which float32 rounding nearly always hides: the distance is ~0.
	if got.Nearest.ID != got.Probe || got.Nearest.Distance > 1e-9 || got.IndexedNearest.ID != got.Probe {
		t.Errorf("vector search for row %d found %+v, with an index %+v", got.Probe, got.Nearest, got.IndexedNearest)
	}
	if len(got.Tags) != 1 || got.Tags[0].Name != "merged" || got.Tags[0].Version != 3 || got.Tags[0].Rows != 10000 {
		t.Errorf("tags %+v", got.Tags)
	}
	if len(got.Branches) != 1 || got.Branches[0].Name != "exp" || got.Branches[0].ParentVersion != 10 || got.Branches[0].Rows != uint64(len(wantIDs)) {
		t.Errorf("branches %+v", got.Branches)
	}

	back, err := d.CheckoutLatest(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if back.Version() != got.After.Version || back.Manifest().Rows() != got.After.Rows {
		t.Errorf("Go reads version %d with %d rows after the SDK's writes, the SDK %d with %d", back.Version(), back.Manifest().Rows(), got.After.Version, got.After.Rows)
	}
	if ids := scanIDs(t, back); !slices.Equal(ids, got.After.IDs) {
		t.Errorf("Go reads %d ids after the SDK's writes, the SDK %d", len(ids), len(got.After.IDs))
	}
	if len(back.Manifest().Indexes) == 0 {
		t.Fatal("the SDK's index is not in the latest manifest")
	}

	// Compacting under the SDK's index: the index keeps the fragments it
	// was built on, and Lance searches the new one without it.
	compacted, stats2, err := back.Compact(ctx, table.CompactOptions{DeletedFraction: 0.01})
	if err != nil {
		t.Fatal(err)
	}
	if stats2.FragmentsRemoved == 0 {
		t.Fatalf("nothing compacted: %+v", back.Manifest().Fragments)
	}
	var after sdkReport
	runNodeJSON(t, &after, "check-dataset.mjs", ds.DB, ds.Name, mustJSON(t, ds.Options), "read")
	if after.Version != compacted.Version() || !slices.Equal(after.IDs, got.After.IDs) || after.Indexes == 0 {
		t.Errorf("after compaction the SDK reads version %d (Go committed %d), %d ids (%d before), %d indexes", after.Version, compacted.Version(), len(after.IDs), len(got.After.IDs), after.Indexes)
	}
	if after.Nearest.ID != after.Probe {
		t.Errorf("after compaction, the indexed search for row %d found %+v", after.Probe, after.Nearest)
	}

	// A dataset created without rows opens, and takes rows Go appends.
	empty := newDataset(t)
	e, err := table.Create(ctx, empty.Store, d.Manifest().Schema, nil, table.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var none sdkReport
	runNodeJSON(t, &none, "check-dataset.mjs", empty.DB, empty.Name, mustJSON(t, empty.Options), "read")
	if none.Version != 1 || none.Rows != 0 {
		t.Errorf("the SDK reads an empty dataset as version %d with %d rows", none.Version, none.Rows)
	}
	rec := goRows(0, 10)
	defer rec.Release()
	proj, _ := e.Manifest().Schema.Project("id", "vec")
	fr, err := table.WriteFragments(ctx, empty.Store, proj, table.Batches(withoutName(rec)), table.WriteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.Append(ctx, fr); err != nil {
		t.Fatal(err)
	}
	runNodeJSON(t, &none, "check-dataset.mjs", empty.DB, empty.Name, mustJSON(t, empty.Options), "read")
	if none.Version != 2 || none.Rows != 10 || none.Nearest.ID != none.Probe {
		t.Errorf("after an append the SDK reads version %d with %d rows, search %+v", none.Version, none.Rows, none.Nearest)
	}
}

// withoutName returns rec without its name column (the schema of the
// history's last versions has none; a field without values reads as null).
func withoutName(rec arrow.RecordBatch) arrow.RecordBatch {
	s := rec.Schema()
	return array.NewRecordBatch(arrow.NewSchema([]arrow.Field{s.Field(0), s.Field(2)}, nil), []arrow.Array{rec.Column(0), rec.Column(2)}, rec.NumRows())
}

// scanIDs returns the ids of d's live rows, sorted.
func scanIDs(t *testing.T, d *table.Dataset) []int64 {
	t.Helper()
	ctx := context.Background()
	proj, err := d.Manifest().Schema.Project("id")
	if err != nil {
		t.Fatal(err)
	}
	var ids []int64
	for _, f := range d.Manifest().Fragments {
		fr, err := d.OpenFragment(ctx, f, proj, nil)
		if err != nil {
			t.Fatal(err)
		}
		for b, err := range fr.Scan(ctx, 0) {
			if err != nil {
				t.Fatal(err)
			}
			ids = append(ids, b.Rows.Column(0).(*array.Int64).Int64Values()...)
			b.Rows.Release()
		}
	}
	slices.Sort(ids)
	return ids
}
