package table

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/RoaringBitmap/roaring/v2"
	"google.golang.org/protobuf/proto"

	"github.com/lancens/lancens/lance/blob"
	"github.com/lancens/lancens/lance/internal/pb/tablepb"
	"github.com/lancens/lancens/lance/schema"
)

// These tests need no data: the operations only read and write metadata,
// so fragments name data files that do not exist.

func testSchema() *schema.Schema {
	return &schema.Schema{Fields: []*schema.Field{
		{Name: "id", ID: -1, LogicalType: "int64"},
		{Name: "name", ID: -1, LogicalType: "string", Nullable: true},
	}}
}

// frag returns a fragment of rows rows in one data file holding fields.
func frag(name string, rows uint64, fields ...int32) *Fragment {
	cols := make([]int32, len(fields))
	for i := range cols {
		cols[i] = int32(i)
	}
	return &Fragment{PhysicalRows: rows, Files: []DataFile{{Path: name + ".lance", Fields: fields, ColumnIndices: cols, MajorVersion: 2, MinorVersion: 2}}}
}

func newTestDataset(t *testing.T, opts CreateOptions, frags ...*Fragment) (*Dataset, blob.Store) {
	t.Helper()
	root := blob.NewDir(t.TempDir())
	if frags == nil {
		frags = []*Fragment{frag("a", 10, 0, 1)}
	}
	d, err := Create(context.Background(), root, testSchema(), frags, opts)
	if err != nil {
		t.Fatal(err)
	}
	return d, root
}

func TestCreateAndAppend(t *testing.T) {
	ctx := context.Background()
	d, root := newTestDataset(t, CreateOptions{}, frag("a", 10, 0, 1), frag("b", 5, 0, 1))
	if d.Version() != 1 || d.Manifest().Rows() != 15 || d.Manifest().NextFragmentID != 2 {
		t.Fatalf("created version %d with %d rows, next fragment %d", d.Version(), d.Manifest().Rows(), d.Manifest().NextFragmentID)
	}
	if f, _ := d.Manifest().Schema.Field("name"); f == nil || f.ID != 1 {
		t.Errorf("field ids not assigned: %+v", d.Manifest().Schema)
	}
	if _, err := Create(ctx, root, testSchema(), []*Fragment{frag("c", 1, 0)}, CreateOptions{}); !errors.Is(err, ErrExists) {
		t.Errorf("creating over a dataset: %v, want ErrExists", err)
	}
	d2, err := d.Append(ctx, []*Fragment{frag("c", 7, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	if got := fragmentIDs(d2.Manifest().Fragments); !slices.Equal(got, []uint64{0, 1, 2}) || d2.Manifest().Rows() != 22 {
		t.Errorf("after append: fragments %v, %d rows", got, d2.Manifest().Rows())
	}
	if d2.Manifest().Transaction == nil || d2.Manifest().Transaction.ReadVersion != 1 {
		t.Errorf("transaction %+v", d2.Manifest().Transaction)
	}
	if _, err := root.Stat(ctx, "_transactions/"+d2.Manifest().TransactionFile); err != nil {
		t.Errorf("transaction file: %v", err)
	}
	if hint := readVersionHint(ctx, root); hint != 2 {
		t.Errorf("version hint %d", hint)
	}
	opened, err := Open(ctx, root, Options{})
	if err != nil || opened.Version() != 2 {
		t.Fatalf("Open: version %v, %v", opened, err)
	}
	for _, bad := range [][]*Fragment{nil, {frag("x", 0, 0)}, {frag("x", 3, 9)}} {
		if _, err := d2.Append(ctx, bad); !errors.Is(err, ErrInvalid) {
			t.Errorf("Append(%v): %v, want ErrInvalid", bad, err)
		}
	}
}

func TestConcurrentCommits(t *testing.T) {
	ctx := context.Background()
	schemaChange := func(d *Dataset) (*Dataset, error) { return d.RenameColumn(ctx, "name", "label") }
	appendOne := func(d *Dataset) (*Dataset, error) { return d.Append(ctx, []*Fragment{frag("n", 3, 0, 1)}) }
	deleteIn := func(id uint64, row uint32) func(d *Dataset) (*Dataset, error) {
		return func(d *Dataset) (*Dataset, error) {
			return d.Delete(ctx, map[uint64]*roaring.Bitmap{id: roaring.BitmapOf(row)}, "")
		}
	}
	overwrite := func(d *Dataset) (*Dataset, error) {
		return d.Overwrite(ctx, testSchema(), []*Fragment{frag("o", 2, 0, 1)}, nil)
	}
	addColumn := func(d *Dataset) (*Dataset, error) {
		return d.AddColumns(ctx, []*schema.Field{{Name: "x", LogicalType: "int32"}}, func(_ context.Context, f *Fragment, fields []*schema.Field) (DataFile, error) {
			return DataFile{Path: fmt.Sprintf("x%d.lance", f.ID), Fields: []int32{fields[0].ID}, ColumnIndices: []int32{0}, MajorVersion: 2, MinorVersion: 2}, nil
		})
	}
	restore := func(d *Dataset) (*Dataset, error) { return d.Restore(ctx, 1) }

	for _, tc := range []struct {
		name         string
		first, later func(*Dataset) (*Dataset, error)
		// want is nil when the later commit rebases; otherwise whether
		// its conflict is retryable.
		want *bool
	}{
		{"append after append", appendOne, appendOne, nil},
		{"delete after append", appendOne, deleteIn(0, 1), nil},
		{"append after delete", deleteIn(0, 1), appendOne, nil},
		{"deletes in different fragments", deleteIn(0, 1), deleteIn(1, 1), nil},
		{"deletes in one fragment", deleteIn(0, 1), deleteIn(0, 2), ptr(true)},
		{"append after overwrite", overwrite, appendOne, ptr(false)},
		{"delete after restore", restore, deleteIn(0, 1), ptr(false)},
		{"overwrite after append", appendOne, overwrite, nil},
		{"schema change after schema change", schemaChange, schemaChange, ptr(true)},
		{"schema change after append", appendOne, schemaChange, nil},
		{"added column after append", appendOne, addColumn, ptr(true)},
		{"append after added column", addColumn, appendOne, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d0, _ := newTestDataset(t, CreateOptions{}, frag("a", 10, 0, 1), frag("b", 10, 0, 1))
			// A second version first, so that restore has somewhere to go.
			d0, err := d0.Append(ctx, []*Fragment{frag("c", 4, 0, 1)})
			if err != nil {
				t.Fatal(err)
			}
			first, err := tc.first(d0)
			if err != nil {
				t.Fatal(err)
			}
			later, err := tc.later(d0)
			if tc.want == nil {
				if err != nil {
					t.Fatalf("the later commit: %v, want a rebase", err)
				}
				if later.Version() != first.Version()+1 {
					t.Errorf("rebased onto version %d, want %d", later.Version()-1, first.Version())
				}
				if later.Manifest().Transaction.ReadVersion != d0.Version() {
					t.Errorf("read version %d, want %d", later.Manifest().Transaction.ReadVersion, d0.Version())
				}
				checkUniqueFragmentIDs(t, later.Manifest())
				return
			}
			var ce *ConflictError
			if !errors.As(err, &ce) || !errors.Is(err, ErrConflict) {
				t.Fatalf("the later commit: %v, want a conflict", err)
			}
			if ce.Retryable != *tc.want || ce.Version != first.Version() {
				t.Errorf("conflict %+v, want retryable=%v with version %d", ce, *tc.want, first.Version())
			}
			latest, _ := d0.CheckoutLatest(ctx)
			if latest.Version() != first.Version() {
				t.Errorf("a refused commit left version %d", latest.Version())
			}
		})
	}
}

func ptr[T any](v T) *T { return &v }

func checkUniqueFragmentIDs(t *testing.T, m *Manifest) {
	t.Helper()
	ids := fragmentIDs(m.Fragments)
	if len(slices.Compact(slices.Clone(ids))) != len(ids) {
		t.Errorf("fragment ids repeat: %v", ids)
	}
	for _, id := range ids {
		if id >= m.NextFragmentID {
			t.Errorf("fragment %d is not below the next id %d", id, m.NextFragmentID)
		}
	}
}

func TestRacingAppendsAllLand(t *testing.T) {
	ctx := context.Background()
	d0, root := newTestDataset(t, CreateOptions{})
	const writers = 6
	errs := make(chan error, writers)
	for i := range writers {
		go func() {
			_, err := d0.Append(ctx, []*Fragment{frag(fmt.Sprint("w", i), uint64(i+1), 0)})
			errs <- err
		}()
	}
	for range writers {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
	d, err := Open(ctx, root, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if d.Version() != 1+writers || d.Manifest().Rows() != 10+21 {
		t.Errorf("version %d with %d rows, want %d with 31", d.Version(), d.Manifest().Rows(), 1+writers)
	}
	checkUniqueFragmentIDs(t, d.Manifest())
}

func TestDelete(t *testing.T) {
	ctx := context.Background()
	d, root := newTestDataset(t, CreateOptions{}, frag("a", 10, 0, 1), frag("b", 6000, 0, 1), frag("c", 3, 0, 1))
	for _, tc := range []struct {
		name string
		rows map[uint64]*roaring.Bitmap
	}{
		{"missing fragment", map[uint64]*roaring.Bitmap{9: roaring.BitmapOf(0)}},
		{"row beyond the fragment", map[uint64]*roaring.Bitmap{0: roaring.BitmapOf(10)}},
	} {
		if _, err := d.Delete(ctx, tc.rows, ""); !errors.Is(err, ErrInvalid) {
			t.Errorf("%s: %v, want ErrInvalid", tc.name, err)
		}
	}
	bulk := roaring.New()
	bulk.AddRange(0, 5500)
	d2, err := d.Delete(ctx, map[uint64]*roaring.Bitmap{0: roaring.BitmapOf(1, 3), 1: bulk, 2: roaring.BitmapOf(0, 1, 2)}, "x")
	if err != nil {
		t.Fatal(err)
	}
	m := d2.Manifest()
	if m.Rows() != 8+500 || m.Fragment(2) != nil {
		t.Errorf("%d rows, fragments %v", m.Rows(), fragmentIDs(m.Fragments))
	}
	if m.Fragment(0).Deletion.Kind != DeletionArrow || m.Fragment(1).Deletion.Kind != DeletionBitmap {
		t.Errorf("deletion kinds %v, %v", m.Fragment(0).Deletion.Kind, m.Fragment(1).Deletion.Kind)
	}
	if m.ReaderFeatures&FeatureDeletionFiles == 0 {
		t.Error("the deletion feature flag is not set")
	}
	// A second delete adds to the first.
	d3, err := d2.Delete(ctx, map[uint64]*roaring.Bitmap{0: roaring.BitmapOf(3, 4)}, "")
	if err != nil {
		t.Fatal(err)
	}
	dels, err := d3.Deletions(ctx, d3.Manifest().Fragment(0))
	if err != nil || !dels.Equals(roaring.BitmapOf(1, 3, 4)) {
		t.Errorf("deletions %v, %v", dels, err)
	}
	if same, err := d3.Delete(ctx, map[uint64]*roaring.Bitmap{0: roaring.BitmapOf(1)}, ""); err != nil || same.Version() != d3.Version() {
		t.Errorf("deleting deleted rows made version %v, %v", same, err)
	}
	old, err := Open(ctx, root, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if v1, _ := old.Checkout(ctx, 1); v1.Manifest().Rows() != 6013 {
		t.Errorf("time travel to version 1: %d rows", v1.Manifest().Rows())
	}
}

func TestSchemaChanges(t *testing.T) {
	ctx := context.Background()
	d, _ := newTestDataset(t, CreateOptions{}, frag("a", 10, 0, 1))
	if _, err := d.DropColumns(ctx, "nope"); !errors.Is(err, ErrInvalid) {
		t.Errorf("dropping a missing column: %v", err)
	}
	if _, err := d.DropColumns(ctx, "id", "name"); !errors.Is(err, ErrInvalid) {
		t.Errorf("dropping every column: %v", err)
	}
	if _, err := d.RenameColumn(ctx, "name", "id"); !errors.Is(err, ErrInvalid) {
		t.Errorf("renaming onto a sibling: %v", err)
	}
	d, err := d.DropColumns(ctx, "name")
	if err != nil {
		t.Fatal(err)
	}
	// The dropped field's id stays taken: the data file still holds it.
	d, err = d.AddColumns(ctx, []*schema.Field{{Name: "name", LogicalType: "string", Nullable: true}}, func(_ context.Context, f *Fragment, fields []*schema.Field) (DataFile, error) {
		return DataFile{Path: "n.lance", Fields: []int32{fields[0].ID}, ColumnIndices: []int32{0}, MajorVersion: 2, MinorVersion: 2}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if f, _ := d.Manifest().Schema.Field("name"); f == nil || f.ID != 2 {
		t.Errorf("the re-added column has id %+v, want 2", f)
	}
	if files := d.Manifest().Fragments[0].Files; len(files) != 2 {
		t.Errorf("fragment files %+v", files)
	}
	bad := func(_ context.Context, f *Fragment, fields []*schema.Field) (DataFile, error) {
		return DataFile{Path: "bad.lance", Fields: []int32{0}}, nil
	}
	if _, err := d.AddColumns(ctx, []*schema.Field{{Name: "y", LogicalType: "int8"}}, bad); !errors.Is(err, ErrInvalid) {
		t.Errorf("a written file holding an old field: %v", err)
	}
	d, err = d.RenameColumn(ctx, "name", "label")
	if err != nil {
		t.Fatal(err)
	}
	// Dropping the column whose file holds nothing else drops the file.
	d, err = d.DropColumns(ctx, "label")
	if err != nil {
		t.Fatal(err)
	}
	if files := d.Manifest().Fragments[0].Files; len(files) != 1 || files[0].Path != "a.lance" {
		t.Errorf("files after dropping the added column: %+v", files)
	}
}

func TestRestore(t *testing.T) {
	ctx := context.Background()
	d, _ := newTestDataset(t, CreateOptions{})
	d, _ = d.Append(ctx, []*Fragment{frag("b", 4, 0, 1), frag("c", 4, 0, 1)})
	if _, err := d.Restore(ctx, 7); !errors.Is(err, ErrNotFound) {
		t.Errorf("restoring a missing version: %v", err)
	}
	r, err := d.Restore(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	if r.Version() != 3 || r.Manifest().Rows() != 10 || r.Manifest().NextFragmentID != 3 {
		t.Errorf("restored version %d with %d rows, next fragment %d", r.Version(), r.Manifest().Rows(), r.Manifest().NextFragmentID)
	}
	a, err := r.Append(ctx, []*Fragment{frag("d", 1, 0)})
	if err != nil {
		t.Fatal(err)
	}
	if ids := fragmentIDs(a.Manifest().Fragments); !slices.Equal(ids, []uint64{0, 3}) {
		t.Errorf("fragment ids after restore and append %v: ids of the undone versions came back", ids)
	}
}

func TestStableRowIDs(t *testing.T) {
	ctx := context.Background()
	d, _ := newTestDataset(t, CreateOptions{StableRowIDs: true}, frag("a", 10, 0, 1))
	d, err := d.Append(ctx, []*Fragment{frag("b", 5, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	m := d.Manifest()
	if m.ReaderFeatures&FeatureStableRowIDs == 0 || m.NextRowID != 15 {
		t.Fatalf("features %v, next row id %d", m.ReaderFeatures, m.NextRowID)
	}
	var seq tablepb.RowIdSequence
	if err := proto.Unmarshal(m.Fragments[1].RowIDs.Inline, &seq); err != nil {
		t.Fatal(err)
	}
	r := seq.GetSegments()[0].GetRange()
	if r.GetStart() != 10 || r.GetEnd() != 15 {
		t.Errorf("row ids of the appended fragment: %v", &seq)
	}
	var versions tablepb.RowDatasetVersionSequence
	if err := proto.Unmarshal(m.Fragments[1].Created.Inline, &versions); err != nil || versions.GetRuns()[0].GetVersion() != 2 {
		t.Errorf("creation versions %v, %v", &versions, err)
	}
}

func TestNamingV1(t *testing.T) {
	ctx := context.Background()
	d, root := newTestDataset(t, CreateOptions{Naming: NamingV1})
	if _, err := d.Append(ctx, []*Fragment{frag("b", 1, 0)}); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"_versions/1.manifest", "_versions/2.manifest"} {
		if _, err := root.Stat(ctx, p); err != nil {
			t.Errorf("%s: %v", p, err)
		}
	}
}

func TestRefusesUnknownWriterFeature(t *testing.T) {
	ctx := context.Background()
	d, root := newTestDataset(t, CreateOptions{})
	m := d.Manifest().next()
	m.WriterFeatures |= 1 << 10
	data, err := EncodeManifest(m)
	if err != nil {
		t.Fatal(err)
	}
	if err := root.PutIfAbsent(ctx, ManifestPath(2, NamingV2), data); err != nil {
		t.Fatal(err)
	}
	d, err = Open(ctx, root, Options{})
	if err != nil {
		t.Fatalf("a dataset only writers must understand does not open: %v", err)
	}
	if _, err := d.Append(ctx, []*Fragment{frag("b", 1, 0)}); !errors.Is(err, ErrUnsupported) {
		t.Errorf("writing it: %v, want ErrUnsupported", err)
	}
}

// recordingCommitter publishes through PutIfAbsentCommitter, records what
// it was asked, and answers the newest version itself.
type recordingCommitter struct {
	commits atomic.Int32
	last    atomic.Pointer[Commit]
	latest  atomic.Uint64
}

func (c *recordingCommitter) Commit(ctx context.Context, cm *Commit) error {
	c.commits.Add(1)
	if err := (PutIfAbsentCommitter{}).Commit(ctx, cm); err != nil {
		return err
	}
	c.last.Store(cm)
	c.latest.Store(cm.Version)
	return nil
}

func (c *recordingCommitter) LatestVersion(ctx context.Context, branch string) (uint64, error) {
	if v := c.latest.Load(); v > 0 {
		return v, nil
	}
	return 0, ErrNotFound
}

func TestCommitter(t *testing.T) {
	ctx := context.Background()
	rec := &recordingCommitter{}
	root := blob.NewDir(t.TempDir())
	d, err := Create(ctx, root, testSchema(), []*Fragment{frag("a", 1, 0)}, CreateOptions{Options: Options{Committer: rec}})
	if err != nil {
		t.Fatal(err)
	}
	d, err = d.Append(ctx, []*Fragment{frag("b", 1, 0)})
	if err != nil {
		t.Fatal(err)
	}
	last := rec.last.Load()
	if rec.commits.Load() != 2 || last.Version != 2 || last.Path != ManifestPath(2, NamingV2) || last.Transaction.Operation.Name() != "Append" {
		t.Errorf("%d commits, last %+v", rec.commits.Load(), last)
	}
	if m, err := DecodeManifest(last.Manifest); err != nil || m.Version != 2 {
		t.Errorf("the committed manifest: %v", err)
	}
	// A committer that resolves versions needs no version hint.
	if _, err := root.Stat(ctx, versionHintPath); !errors.Is(err, blob.ErrNotFound) {
		t.Errorf("a version hint was written for a committer that resolves versions: %v", err)
	}
	// A manifest the committer does not know of is not the newest.
	next := d.Manifest().next()
	data, _ := EncodeManifest(next)
	if err := root.PutIfAbsent(ctx, ManifestPath(3, NamingV2), data); err != nil {
		t.Fatal(err)
	}
	if again, err := Open(ctx, root, Options{Committer: rec}); err != nil || again.Version() != 2 {
		t.Errorf("Open through the resolver: %v, %v; want version 2", again, err)
	}
	if plain, err := Open(ctx, root, Options{}); err != nil || plain.Version() != 3 {
		t.Errorf("Open without it: %v, %v; want version 3", plain, err)
	}
}

func TestTags(t *testing.T) {
	ctx := context.Background()
	d, _ := newTestDataset(t, CreateOptions{})
	d, _ = d.Append(ctx, []*Fragment{frag("b", 1, 0)})
	for _, name := range []string{"", ".x", "x.", "a..b", "x.lock", "a/b", "sp ace"} {
		if err := d.CreateTag(ctx, name, 1); !errors.Is(err, ErrInvalid) {
			t.Errorf("CreateTag(%q): %v, want ErrInvalid", name, err)
		}
	}
	if err := d.CreateTag(ctx, "v1", 9); !errors.Is(err, ErrNotFound) {
		t.Errorf("tagging a missing version: %v", err)
	}
	if err := d.CreateTag(ctx, "v1", 1); err != nil {
		t.Fatal(err)
	}
	if err := d.CreateTag(ctx, "v1", 2); !errors.Is(err, ErrExists) {
		t.Errorf("tagging twice: %v", err)
	}
	if err := d.UpdateTag(ctx, "v1", 2); err != nil {
		t.Fatal(err)
	}
	tag, err := d.Tag(ctx, "v1")
	if err != nil || tag.Version != 2 || tag.CreatedAt.IsZero() || tag.ManifestSize == 0 {
		t.Errorf("tag %+v, %v", tag, err)
	}
	if err := d.DeleteTag(ctx, "v1"); err != nil {
		t.Fatal(err)
	}
	if err := d.DeleteTag(ctx, "v1"); !errors.Is(err, ErrNotFound) {
		t.Errorf("deleting a missing tag: %v", err)
	}
	if tags, err := d.Tags(ctx); err != nil || len(tags) != 0 {
		t.Errorf("tags %+v, %v", tags, err)
	}
}

func TestCleanup(t *testing.T) {
	ctx := context.Background()
	now := time.Now()
	clock := now.Add(-time.Hour)
	opts := Options{Now: func() time.Time { return clock }}
	d, root := newTestDataset(t, CreateOptions{Options: opts})
	for _, p := range []string{"data/a.lance", "data/b.lance", "data/c.lance", "data/stray.lance"} {
		if err := blob.Put(ctx, root, p, []byte("x")); err != nil {
			t.Fatal(err)
		}
	}
	d, _ = d.Append(ctx, []*Fragment{frag("b", 1, 0)})                       // v2
	d, _ = d.Overwrite(ctx, testSchema(), []*Fragment{frag("c", 2, 0)}, nil) // v3: a and b go
	if err := d.CreateTag(ctx, "keep", 1); err != nil {
		t.Fatal(err)
	}
	clock = now
	d, _ = d.Append(ctx, []*Fragment{frag("c", 1, 0)}) // v4, recent

	stats, err := d.Cleanup(ctx, CleanupOptions{Before: now.Add(-time.Minute)})
	if err != nil {
		t.Fatal(err)
	}
	if stats.Versions != 2 {
		t.Errorf("removed %d versions, want 2 (2 and 3)", stats.Versions)
	}
	versions, _ := d.Versions(ctx)
	var kept []uint64
	for _, v := range versions {
		kept = append(kept, v.Version)
	}
	if !slices.Equal(kept, []uint64{1, 4}) {
		t.Errorf("versions kept %v, want the tagged 1 and the recent 4", kept)
	}
	for p, want := range map[string]bool{"data/a.lance": true, "data/b.lance": false, "data/c.lance": true, "data/stray.lance": true} {
		_, err := root.Stat(ctx, p)
		if (err == nil) != want {
			t.Errorf("%s present: %v, want %v", p, err == nil, want)
		}
	}
	if _, err := d.Cleanup(ctx, CleanupOptions{Before: now.Add(time.Minute), DeleteUnverified: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := root.Stat(ctx, "data/stray.lance"); !errors.Is(err, blob.ErrNotFound) {
		t.Errorf("a stray file survived a cleanup with DeleteUnverified: %v", err)
	}
	if v1, err := d.Checkout(ctx, 1); err != nil || v1.Manifest().Rows() != 10 {
		t.Errorf("the tagged version: %v", err)
	}
}

// TestCleanupChosenVersions checks CleanupOptions.Remove: the versions it
// chooses go whatever their age, except the newest and tagged ones, and
// the rows of the data files removed with them are counted.
func TestCleanupChosenVersions(t *testing.T) {
	ctx := context.Background()
	d, root := newTestDataset(t, CreateOptions{}, frag("a", 10, 0, 1))
	for _, p := range []string{"data/a.lance", "data/b.lance", "data/c.lance"} {
		if err := blob.Put(ctx, root, p, []byte("x")); err != nil {
			t.Fatal(err)
		}
	}
	d, _ = d.Overwrite(ctx, testSchema(), []*Fragment{frag("b", 4, 0)}, nil) // v2: a goes
	d, _ = d.Overwrite(ctx, testSchema(), []*Fragment{frag("c", 2, 0)}, nil) // v3: b goes
	if err := d.CreateTag(ctx, "keep", 2); err != nil {
		t.Fatal(err)
	}
	var asked []uint64
	stats, err := d.Cleanup(ctx, CleanupOptions{Remove: func(v uint64) bool {
		asked = append(asked, v)
		return true
	}})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(asked, []uint64{1, 2, 3}) || stats.Versions != 1 || stats.Rows != 10 {
		t.Errorf("asked about %v; removed %+v, want version 1 and its 10 rows", asked, stats)
	}
	for p, want := range map[string]bool{"data/a.lance": false, "data/b.lance": true, "data/c.lance": true} {
		if _, err := root.Stat(ctx, p); (err == nil) != want {
			t.Errorf("%s present: %v, want %v", p, err == nil, want)
		}
	}
}

// TestRebasedDeleteKeepsConcurrentFileChanges checks that a delete rebased
// over a projection that dropped a data file does not bring the file back.
func TestRebasedDeleteKeepsConcurrentFileChanges(t *testing.T) {
	ctx := context.Background()
	f := frag("a", 10, 0)
	f.Files = append(f.Files, DataFile{Path: "names.lance", Fields: []int32{1}, ColumnIndices: []int32{0}, MajorVersion: 2, MinorVersion: 2})
	d0, _ := newTestDataset(t, CreateOptions{}, f)
	if _, err := d0.DropColumns(ctx, "name"); err != nil {
		t.Fatal(err)
	}
	d, err := d0.Delete(ctx, map[uint64]*roaring.Bitmap{0: roaring.BitmapOf(3)}, "")
	if err != nil {
		t.Fatal(err)
	}
	got := d.Manifest().Fragments[0]
	if len(got.Files) != 1 || got.Deletion == nil || got.Deletion.NumDeleted != 1 {
		t.Errorf("rebased fragment %+v", got)
	}
}

func TestCommitOperation(t *testing.T) {
	ctx := context.Background()
	d, _ := newTestDataset(t, CreateOptions{})
	for _, op := range []Operation{&CreateIndex{}, &Overwrite{}, &Project{}, &OtherOperation{Kind: "x"}} {
		if _, err := d.CommitOperation(ctx, op); !errors.Is(err, ErrInvalid) {
			t.Errorf("CommitOperation(%s): %v, want ErrInvalid", op.Name(), err)
		}
	}
	// An update whose new fragment keeps the row ids it carries.
	s, _ := newTestDataset(t, CreateOptions{StableRowIDs: true})
	moved := frag("m", 2, 0, 1)
	moved.RowIDs = &Sequence{Inline: encodeU64Sequence([]uint64{3, 7})}
	u, err := s.CommitOperation(ctx, &Update{New: []*Fragment{moved}})
	if err != nil {
		t.Fatal(err)
	}
	got, err := decodeRowIDs(u.Manifest().Fragments[1].RowIDs.Inline, 2)
	if err != nil || !slices.Equal(got, []uint64{3, 7}) || u.Manifest().NextRowID != 10 {
		t.Errorf("row ids %v (%v), next %d", got, err, u.Manifest().NextRowID)
	}
}

func TestBranches(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	root := blob.NewDir(dir)
	opts := Options{URI: dir}
	put := func(s blob.Store, p string) {
		if err := blob.Put(ctx, s, p, []byte("x")); err != nil {
			t.Fatal(err)
		}
	}
	put(root, "data/a.lance")
	d, err := Create(ctx, root, testSchema(), []*Fragment{frag("a", 10, 0, 1)}, CreateOptions{Options: opts})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d.CreateBranch(ctx, "main"); !errors.Is(err, ErrInvalid) {
		t.Errorf("a branch called main: %v", err)
	}
	if _, err := (&Dataset{root: root, store: root, m: d.m, opts: Options{}}).CreateBranch(ctx, "x"); !errors.Is(err, ErrInvalid) {
		t.Errorf("a branch without the dataset's URI: %v", err)
	}
	a, err := d.CreateBranch(ctx, "a")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d.CreateBranch(ctx, "a"); !errors.Is(err, ErrExists) {
		t.Errorf("creating a branch twice: %v", err)
	}
	put(a.Store(), "data/b.lance")
	a, err = a.Append(ctx, []*Fragment{frag("b", 5, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	if err := a.CreateTag(ctx, "on-a", a.Version()); err != nil {
		t.Fatal(err)
	}
	ab, err := a.CreateBranch(ctx, "a/b")
	if err != nil {
		t.Fatal(err)
	}
	// Each fragment's file is reached where it was written: a's first
	// fragment at the root, its second in tree/a.
	for _, f := range ab.Manifest().Fragments {
		s, p, err := ab.DataFile(ctx, &f.Files[0])
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.Stat(ctx, p); err != nil {
			t.Errorf("fragment %d of a/b: %v", f.ID, err)
		}
	}
	if ab.Version() != 2 || ab.Manifest().Rows() != 15 {
		t.Errorf("a/b starts at version %d with %d rows", ab.Version(), ab.Manifest().Rows())
	}
	tagged, err := d.CheckoutTag(ctx, "on-a")
	if err != nil || tagged.Branch() != "a" || tagged.Version() != 2 {
		t.Errorf("the tag on branch a: %v, %v", tagged, err)
	}
	branches, _ := d.Branches(ctx)
	if len(branches) != 2 || branches[1].Name != "a/b" || branches[1].Parent != "a" || branches[1].ParentVersion != 2 {
		t.Errorf("branches %+v", branches)
	}
	if err := d.DeleteBranch(ctx, "a"); !errors.Is(err, ErrInvalid) {
		t.Errorf("deleting a branch another was made from: %v", err)
	}
	// A branch nested below another's directory, but made from main.
	if _, err := d.CreateBranch(ctx, "a/c"); err != nil {
		t.Fatal(err)
	}
	if err := d.DeleteBranch(ctx, "a/b"); err != nil {
		t.Fatal(err)
	}
	if err := d.DeleteBranch(ctx, "a"); err != nil {
		t.Fatal(err)
	}
	if _, err := OpenBranch(ctx, root, "a", opts); !errors.Is(err, ErrNotFound) {
		t.Errorf("the deleted branch opens: %v", err)
	}
	if c, err := OpenBranch(ctx, root, "a/c", opts); err != nil || c.Version() != 1 {
		t.Errorf("a branch nested in the deleted one's directory: %v, %v", c, err)
	}
	if err := d.DeleteBranch(ctx, "nope"); !errors.Is(err, ErrNotFound) {
		t.Errorf("deleting a missing branch: %v", err)
	}
}
