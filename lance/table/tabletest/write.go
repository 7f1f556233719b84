package tabletest

import (
	"context"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/RoaringBitmap/roaring/v2"

	"github.com/lancens/lancens/lance/blob"
	"github.com/lancens/lancens/lance/schema"
	"github.com/lancens/lancens/lance/table"
)

// sourceFiles are the data files of the dataset node/lance/write-source.mjs
// writes, copied into another dataset: per fragment (ids 0–7999,
// 8000–8999, 9000–9999), its file of id, name and vec and its file of
// double_id, and the schema of the first three fields.
type sourceFiles struct {
	schema *schema.Schema
	base   [3]*table.Fragment // one data file each: id, name, vec
	extra  [3]table.DataFile  // double_id
}

// copySource writes the source dataset with the SDK (in storage options
// opts) and copies its data files into dst's data/.
func copySource(t *testing.T, ctx context.Context, dst blob.Store, opts map[string]string) sourceFiles {
	t.Helper()
	dir := t.TempDir()
	RunNode(t, "write-source.mjs", dir, "s", mustJSON(t, opts))
	src, err := table.Open(ctx, blob.NewDir(filepath.Join(dir, "s.lance")), table.Options{})
	if err != nil {
		t.Fatal(err)
	}
	m := src.Manifest()
	if len(m.Fragments) != 3 {
		t.Fatalf("the source has %d fragments", len(m.Fragments))
	}
	var out sourceFiles
	out.schema = m.Schema.Clone()
	out.schema.Fields = slices.DeleteFunc(out.schema.Fields, func(f *schema.Field) bool { return f.Name == "double_id" })
	for i, f := range m.Fragments {
		if len(f.Files) != 2 {
			t.Fatalf("source fragment %d has %d data files", f.ID, len(f.Files))
		}
		for _, df := range f.Files {
			s, p, err := src.DataFile(ctx, &df)
			if err != nil {
				t.Fatal(err)
			}
			data, err := blob.ReadAll(ctx, s, p, 1<<30)
			if err != nil {
				t.Fatal(err)
			}
			if err := blob.Put(ctx, dst, "data/"+df.Path, data); err != nil {
				t.Fatal(err)
			}
		}
		out.base[i] = &table.Fragment{PhysicalRows: f.PhysicalRows, Files: []table.DataFile{f.Files[0]}}
		out.extra[i] = f.Files[1]
	}
	return out
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
	After struct {
		Version uint64
		Rows    uint64
		IDs     []int64
	}
}

// goHistory builds a dataset in root with every operation of this
// package, from the source's data files, and returns the ids of its rows
// at the end. uri is the dataset's location as Lance names it.
func goHistory(t *testing.T, ctx context.Context, root blob.Store, uri string, src sourceFiles) *table.Dataset {
	t.Helper()
	opts := table.Options{URI: uri}
	step := func(d *table.Dataset, err error) *table.Dataset {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	d := step(table.Create(ctx, root, src.schema, []*table.Fragment{src.base[0]}, table.CreateOptions{Options: opts}))
	d = step(d.Append(ctx, []*table.Fragment{src.base[1], src.base[2]}))
	fragIndex := map[uint64]int{}
	for i, f := range d.Manifest().Fragments {
		fragIndex[f.ID] = i
	}
	d = step(d.AddColumns(ctx, []*schema.Field{{Name: "double_id", LogicalType: "int64", Nullable: true}},
		func(_ context.Context, f *table.Fragment, fields []*schema.Field) (table.DataFile, error) {
			df := src.extra[fragIndex[f.ID]]
			df.Fields = []int32{fields[0].ID}
			return df, nil
		}))
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
	if _, err := d.CreateBranch(ctx, "exp"); err != nil {
		t.Fatal(err)
	}
	return d
}

// SDKReadsGoWritten writes a dataset (in newDataset's place) with every
// operation of lance/table and has the LanceDB SDK open it, read it (rows,
// a filter, a vector search, tags, a branch, the versions cleanup kept),
// index it and write on top; Go then reads the SDK's versions back.
func SDKReadsGoWritten(t *testing.T, newDataset NewDataset) {
	ctx := context.Background()
	ds := newDataset(t)
	root := ds.Store
	src := copySource(t, ctx, root, map[string]string{})
	d := goHistory(t, ctx, root, ds.URI(), src)

	stats, err := d.Cleanup(ctx, table.CleanupOptions{Before: time.Now().Add(time.Second), DeleteUnverified: true})
	if err != nil {
		t.Fatal(err)
	}
	if stats.Versions != 7 {
		t.Errorf("cleanup removed %d versions, want 7 (all but the tagged one and the latest)", stats.Versions)
	}

	var got sdkReport
	runNodeJSON(t, &got, "check-dataset.mjs", ds.DB, ds.Name, mustJSON(t, ds.Options))
	var wantIDs []int64
	for _, r := range [][2]int64{{0, 1000}, {7000, 8000}, {8010, 9000}} {
		for id := r[0]; id < r[1]; id++ {
			wantIDs = append(wantIDs, id)
		}
	}
	if got.Version != 9 || got.Rows != uint64(len(wantIDs)) || !slices.Equal(got.IDs, wantIDs) {
		t.Errorf("the SDK reads version %d with %d rows (ids equal: %v), want version 9 with %d", got.Version, got.Rows, slices.Equal(got.IDs, wantIDs), len(wantIDs))
	}
	if got.Below100 != 100 || !slices.Equal(got.Fields, []string{"id", "vec", "twice"}) {
		t.Errorf("the SDK counts %d rows below 100 and sees fields %v", got.Below100, got.Fields)
	}
	if !slices.Equal(got.Versions, []uint64{3, 9}) {
		t.Errorf("the SDK lists versions %v, want the tagged 3 and the latest 9", got.Versions)
	}
	if got.Nearest.ID != got.Probe || got.Nearest.Distance != 0 || got.IndexedNearest.ID != got.Probe {
		t.Errorf("vector search for row %d found %+v, with an index %+v", got.Probe, got.Nearest, got.IndexedNearest)
	}
	if len(got.Tags) != 1 || got.Tags[0].Name != "merged" || got.Tags[0].Version != 3 || got.Tags[0].Rows != 10000 {
		t.Errorf("tags %+v", got.Tags)
	}
	if len(got.Branches) != 1 || got.Branches[0].Name != "exp" || got.Branches[0].ParentVersion != 9 || got.Branches[0].Rows != uint64(len(wantIDs)) {
		t.Errorf("branches %+v", got.Branches)
	}

	back, err := d.CheckoutLatest(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if back.Version() != got.After.Version || back.Manifest().Rows() != got.After.Rows {
		t.Errorf("Go reads version %d with %d rows after the SDK's writes, the SDK %d with %d", back.Version(), back.Manifest().Rows(), got.After.Version, got.After.Rows)
	}
	for v := d.Version() + 1; v <= back.Version(); v++ {
		m, err := back.ReadVersion(ctx, v)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range m.Fragments {
			if _, err := back.Deletions(ctx, f); err != nil {
				t.Errorf("version %d fragment %d: %v", v, f.ID, err)
			}
		}
	}
	if len(back.Manifest().Indexes) == 0 {
		t.Error("the SDK's index is not in the latest manifest")
	}
}
