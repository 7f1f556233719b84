package table

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"testing"

	"github.com/RoaringBitmap/roaring/v2"
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/lancens/lancens/lance/blob"
	"github.com/lancens/lancens/lance/file"
	"github.com/lancens/lancens/lance/schema"
)

// rowsSchema is the Arrow schema of the rows these tests write: an id, a
// name with nulls and a vector.
var rowsSchema = arrow.NewSchema([]arrow.Field{
	{Name: "id", Type: arrow.PrimitiveTypes.Int64},
	{Name: "name", Type: arrow.BinaryTypes.String, Nullable: true},
	{Name: "vec", Type: arrow.FixedSizeListOf(4, arrow.PrimitiveTypes.Float32), Nullable: true},
}, nil)

// makeRows returns rows with ids [start, start+n).
func makeRows(start, n int) arrow.RecordBatch {
	b := array.NewRecordBuilder(memory.DefaultAllocator, rowsSchema)
	defer b.Release()
	ids := b.Field(0).(*array.Int64Builder)
	names := b.Field(1).(*array.StringBuilder)
	vecs := b.Field(2).(*array.FixedSizeListBuilder)
	vals := vecs.ValueBuilder().(*array.Float32Builder)
	for i := start; i < start+n; i++ {
		ids.Append(int64(i))
		if i%5 == 0 {
			names.AppendNull()
		} else {
			names.Append(fmt.Sprint("row ", i))
		}
		vecs.Append(true)
		for j := range 4 {
			vals.Append(float32(math.Sin(float64(i*4 + j))))
		}
	}
	return b.NewRecordBatch()
}

// datasetSchema returns the Lance schema of rowsSchema, with ids.
func datasetSchema(t *testing.T) *schema.Schema {
	t.Helper()
	s, err := schema.FromArrow(rowsSchema)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.AssignIDs(0); err != nil {
		t.Fatal(err)
	}
	return s
}

// scanIDs returns the ids of every live row of d, in fragment order, and
// checks each row's name and vector against its id.
func scanIDs(t *testing.T, d *Dataset) []int64 {
	t.Helper()
	ctx := context.Background()
	var ids []int64
	for _, f := range d.Manifest().Fragments {
		fr, err := d.OpenFragment(ctx, f, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		for b, err := range fr.Scan(ctx, 700) {
			if err != nil {
				t.Fatal(err)
			}
			rec := b.Rows
			col := rec.Column(rec.Schema().FieldIndices("id")[0]).(*array.Int64)
			for i := range int(rec.NumRows()) {
				id := col.Value(i)
				ids = append(ids, id)
				if j := rec.Schema().FieldIndices("name"); len(j) == 1 {
					names := rec.Column(j[0]).(*array.String)
					if (id%5 == 0) != names.IsNull(i) || !names.IsNull(i) && names.Value(i) != fmt.Sprint("row ", id) {
						t.Fatalf("row %d: name %q", id, names.Value(i))
					}
				}
			}
			rec.Release()
		}
	}
	return ids
}

func seqIDs(lo, hi int64) []int64 {
	var out []int64
	for i := lo; i < hi; i++ {
		out = append(out, i)
	}
	return out
}

func TestWriteAndReadRows(t *testing.T) {
	ctx := context.Background()
	root := blob.NewDir(t.TempDir())
	sch := datasetSchema(t)
	r1, r2 := makeRows(0, 2500), makeRows(2500, 1000)
	defer r1.Release()
	defer r2.Release()
	frags, err := WriteFragments(ctx, root, sch, Batches(r1, r2), WriteOptions{MaxRowsPerFile: 1500})
	if err != nil {
		t.Fatal(err)
	}
	if len(frags) != 3 || frags[0].PhysicalRows != 1500 || frags[2].PhysicalRows != 500 {
		t.Fatalf("fragments %+v", frags)
	}
	d, err := Create(ctx, root, sch, frags, CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if d.Manifest().DataFormat.Version != "2.0" {
		t.Errorf("data format %+v", d.Manifest().DataFormat)
	}
	if got := scanIDs(t, d); !slices.Equal(got, seqIDs(0, 3500)) {
		t.Fatalf("scanned %d ids", len(got))
	}

	// Delete by offset, then read: deleted rows are skipped.
	first := d.Manifest().Fragments[0]
	gone := roaring.New()
	gone.AddRange(100, 1400)
	d, err = d.Delete(ctx, map[uint64]*roaring.Bitmap{first.ID: gone}, "")
	if err != nil {
		t.Fatal(err)
	}
	want := append(seqIDs(0, 100), seqIDs(1400, 3500)...)
	if got := scanIDs(t, d); !slices.Equal(got, want) {
		t.Fatalf("after delete: %d ids", len(got))
	}

	// Add a column computed from each fragment's ids (all physical rows,
	// deleted ones too).
	idOnly, _ := d.Manifest().Schema.Project("id")
	d, err = d.AddColumns(ctx, []*schema.Field{{Name: "twice", LogicalType: "int64", Nullable: true}}, func(ctx context.Context, f *Fragment, fields []*schema.Field) (DataFile, error) {
		fr, err := d.OpenFragment(ctx, f, idOnly, nil)
		if err != nil {
			return DataFile{}, err
		}
		rec, err := fr.ReadRange(ctx, 0, f.PhysicalRows)
		if err != nil {
			return DataFile{}, err
		}
		defer rec.Release()
		b := array.NewInt64Builder(memory.DefaultAllocator)
		for _, v := range rec.Column(0).(*array.Int64).Int64Values() {
			b.Append(2 * v)
		}
		col := b.NewArray()
		defer col.Release()
		add := &schema.Schema{Fields: fields}
		as, _ := add.ToArrow()
		out := array.NewRecordBatch(as, []arrow.Array{col}, int64(col.Len()))
		defer out.Release()
		df, _, err := WriteDataFile(ctx, root, add, Batches(out), file.WriteOptions{})
		return df, err
	})
	if err != nil {
		t.Fatal(err)
	}
	proj, _ := d.Manifest().Schema.Project("twice", "id")
	for _, f := range d.Manifest().Fragments {
		fr, err := d.OpenFragment(ctx, f, proj, nil)
		if err != nil {
			t.Fatal(err)
		}
		for b, err := range fr.Scan(ctx, 0) {
			if err != nil {
				t.Fatal(err)
			}
			tw, id := b.Rows.Column(0).(*array.Int64), b.Rows.Column(1).(*array.Int64)
			for i := range tw.Len() {
				if tw.Value(i) != 2*id.Value(i) {
					t.Fatalf("row %d: twice %d", id.Value(i), tw.Value(i))
				}
			}
			b.Rows.Release()
		}
	}

	missing := d.Manifest().Schema.Clone()
	missing.Fields = append(missing.Fields, &schema.Field{Name: "nope", ID: 99, LogicalType: "float", Nullable: true})
	if _, err := d.OpenFragment(ctx, d.Manifest().Fragments[0], missing, nil); !errors.Is(err, ErrInvalid) {
		t.Errorf("projecting a field the schema lacks: %v", err)
	}
}

func TestFieldWithoutDataReadsAsNulls(t *testing.T) {
	ctx := context.Background()
	root := blob.NewDir(t.TempDir())
	sch := datasetSchema(t)
	rec := makeRows(0, 10)
	defer rec.Release()
	frags, err := WriteFragments(ctx, root, sch, Batches(rec), WriteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	wide := sch.Clone()
	wide.Fields = append(wide.Fields, &schema.Field{Name: "score", ID: -1, LogicalType: "double", Nullable: true})
	d, err := Create(ctx, root, wide, frags, CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	fr, err := d.OpenFragment(ctx, d.Manifest().Fragments[0], nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	got, err := fr.Take(ctx, []uint64{7, 2})
	if err != nil {
		t.Fatal(err)
	}
	defer got.Release()
	if got.NumCols() != 4 || got.Column(3).NullN() != 2 || got.Column(0).(*array.Int64).Value(0) != 7 {
		t.Errorf("read %v", got)
	}
}

func TestCompact(t *testing.T) {
	for _, stable := range []bool{false, true} {
		t.Run(fmt.Sprint("stable row ids ", stable), func(t *testing.T) {
			ctx := context.Background()
			root := blob.NewDir(t.TempDir())
			sch := datasetSchema(t)
			var frags []*Fragment
			for i := range 5 {
				rec := makeRows(i*400, 400)
				fs, err := WriteFragments(ctx, root, sch, Batches(rec), WriteOptions{})
				rec.Release()
				if err != nil {
					t.Fatal(err)
				}
				frags = append(frags, fs...)
			}
			d, err := Create(ctx, root, sch, frags[:1], CreateOptions{StableRowIDs: stable})
			if err != nil {
				t.Fatal(err)
			}
			for _, f := range frags[1:] {
				if d, err = d.Append(ctx, []*Fragment{f}); err != nil {
					t.Fatal(err)
				}
			}
			gone := roaring.New()
			gone.AddRange(0, 300)
			d, err = d.Delete(ctx, map[uint64]*roaring.Bitmap{1: gone, 3: roaring.BitmapOf(5)}, "")
			if err != nil {
				t.Fatal(err)
			}
			before := scanIDs(t, d)
			idsBefore := rowIDs(t, d)

			c, stats, err := d.Compact(ctx, CompactOptions{TargetRows: 1000})
			if err != nil {
				t.Fatal(err)
			}
			if stats.FragmentsRemoved != 5 || stats.FragmentsAdded != 2 {
				t.Errorf("stats %+v", stats)
			}
			m := c.Manifest()
			if len(m.Fragments) != 2 || m.Fragments[0].Deletion != nil || m.Rows() != uint64(len(before)) {
				t.Errorf("fragments %v with %d rows", fragmentIDs(m.Fragments), m.Rows())
			}
			if got := scanIDs(t, c); !slices.Equal(got, before) {
				t.Errorf("compaction changed the rows: %d before, %d after", len(before), len(got))
			}
			if stable && !slices.Equal(rowIDs(t, c), idsBefore) {
				t.Error("compaction changed the stable row ids")
			}
			if _, ok := m.Transaction.Operation.(*Rewrite); !ok || m.NextFragmentID != 7 {
				t.Errorf("transaction %s, next fragment id %d", m.Transaction.Operation.Name(), m.NextFragmentID)
			}
			again, stats, err := c.Compact(ctx, CompactOptions{TargetRows: 1000})
			if err != nil || again != c || stats != (CompactStats{}) {
				t.Errorf("compacting a compact dataset: %+v, %v", stats, err)
			}
		})
	}
}

// rowIDs returns the stable row ids of d's live rows, in order (nil when
// it has none).
func rowIDs(t *testing.T, d *Dataset) []uint64 {
	t.Helper()
	if d.Manifest().ReaderFeatures&FeatureStableRowIDs == 0 {
		return nil
	}
	var out []uint64
	for _, f := range d.Manifest().Fragments {
		seqs, err := d.liveSequences(context.Background(), f)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, seqs[0]...)
	}
	return out
}

func TestAppendRefusesOtherFormats(t *testing.T) {
	ctx := context.Background()
	root := blob.NewDir(t.TempDir())
	d, err := Create(ctx, root, datasetSchema(t), []*Fragment{frag("a", 10, 0, 1, 2)}, CreateOptions{}) // files of format 2.2
	if err != nil {
		t.Fatal(err)
	}
	rec := makeRows(0, 3)
	defer rec.Release()
	frags, err := WriteFragments(ctx, root, datasetSchema(t), Batches(rec), WriteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d.Append(ctx, frags); !errors.Is(err, ErrUnsupported) {
		t.Errorf("appending 2.0 files to a 2.2 dataset: %v", err)
	}
	if _, _, err := d.Compact(ctx, CompactOptions{TargetRows: 100}); err != nil {
		t.Errorf("compacting one fragment without deletions (nothing to do): %v", err)
	}
}
