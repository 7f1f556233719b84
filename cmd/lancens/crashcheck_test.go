package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/lancens/lancens/lance/blob"
	"github.com/lancens/lancens/lance/file"
	"github.com/lancens/lancens/lance/table"
	"github.com/lancens/lancens/store"
	"github.com/lancens/lancens/store/sqlite"
	"github.com/lancens/lancens/warehouse"
)

// The warehouse check: after a crash, every version the catalog records
// must still be readable, so every file its manifest refers to must be
// there, whole. checkWarehouse walks the catalog (every table with data,
// every branch, every recorded version), opens each version's manifest
// with lance/table and checks the files it names: each data file exists,
// has the size the manifest records and a footer that lance/file reads,
// for as many rows as the fragment has; each deletion file exists and
// decodes to as many deleted rows as the manifest says; the directory of
// each index of the manifest's index section holds files. It also checks
// the files of every index build the catalog records for the table
// (store.DatasetIndexes: the engine keeps them under
// _lancens/indices/<uuid>/, outside the manifest): there, of the size the
// record says, readable to its last byte.
//
// It reads the catalog through a store.Backend opened on the database,
// so it runs while no server holds the database (between a kill and the
// restart). What it finds wrong is a list of problems, each naming the
// table, branch, version and path; an error is a catalog that cannot be
// read at all.

// checkedCatalog is the part of the catalog the check reads.
type checkedCatalog interface {
	ListAllTables(ctx context.Context, includeDeclared bool, page store.Page) ([][]string, string, error)
	DescribeTable(ctx context.Context, id []string) (*store.Table, error)
	ListBranches(ctx context.Context, id []string, page store.Page) ([]store.Branch, string, error)
	ListVersions(ctx context.Context, id []string, branch string, descending bool, page store.Page) ([]store.TableVersion, string, error)
	ListDatasetIndexes(ctx context.Context, id []string) ([]store.DatasetIndex, error)
}

// fileProblem is a file a recorded version or index needs that is missing
// or unreadable.
type fileProblem struct {
	table   []string
	branch  string // "" for main
	version int64  // 0 for an index build's file
	kind    fileKind
	path    string // below the table's (or the branch's) root
	err     error
}

func (p fileProblem) String() string {
	at := fmt.Sprintf("version %d of %s", p.version, store.BranchName(p.branch))
	if p.version == 0 {
		at = "its index records"
	}
	return fmt.Sprintf("table %s, %s: %s file %s: %v", strings.Join(p.table, "/"), at, p.kind, p.path, p.err)
}

// fileKind says what a checked file is.
type fileKind string

const (
	kindManifest  fileKind = "manifest"
	kindData      fileKind = "data"
	kindDeletion  fileKind = "deletion"
	kindIndex     fileKind = "index"       // a catalog-recorded index build
	kindLanceIndx fileKind = "lance index" // an index of the manifest's section
)

// warehouseCheck is what one check looked at and found.
type warehouseCheck struct {
	checks           int // 1 for one check; more once added up
	tables, versions int
	// files counts the distinct files checked, by kind; refs counts the
	// references to them the versions' manifests make.
	files    map[fileKind]int
	refs     int
	problems []fileProblem
}

func (c warehouseCheck) String() string {
	return fmt.Sprintf("%d checks of %d tables, %d recorded versions, %d file references: %d data, %d deletion, %d index files checked; %d problems",
		c.checks, c.tables, c.versions, c.refs, c.files[kindData], c.files[kindDeletion], c.files[kindIndex]+c.files[kindLanceIndx], len(c.problems))
}

// add adds another check's counts and problems.
func (c *warehouseCheck) add(o warehouseCheck) {
	c.checks += o.checks
	c.tables += o.tables
	c.versions += o.versions
	c.refs += o.refs
	if c.files == nil {
		c.files = map[fileKind]int{}
	}
	for k, n := range o.files {
		c.files[k] += n
	}
	c.problems = append(c.problems, o.problems...)
}

// checkWarehouse checks the files of every table of cat with data whose
// files wh reaches, except those skip names (tables whose versions are not
// Lance datasets: the trials' namespace-mode commits of made-up
// manifests). It returns an error only when the catalog cannot be read.
func checkWarehouse(ctx context.Context, cat checkedCatalog, wh *warehouse.Warehouse, skip func(id []string) bool) (warehouseCheck, error) {
	chk := warehouseCheck{checks: 1, files: map[fileKind]int{}}
	ids, err := collect(func(p store.Page) ([][]string, string, error) { return cat.ListAllTables(ctx, false, p) })
	if err != nil {
		return chk, fmt.Errorf("list tables: %w", err)
	}
	for _, id := range ids {
		if skip != nil && skip(id) {
			continue
		}
		t, err := cat.DescribeTable(ctx, id)
		if err != nil {
			return chk, fmt.Errorf("describe %q: %w", id, err)
		}
		if t.Kind == store.Managed || t.Declared {
			continue // rows in the row store, or no data yet
		}
		root, ok, err := wh.Blobs(t.Location)
		if err != nil || !ok {
			return chk, fmt.Errorf("table %q at %s: the warehouse does not reach its files (%v)", id, t.Location, err)
		}
		tc := &tableCheck{cat: cat, wh: wh, t: t, root: root, chk: &chk, seen: map[string]bool{}}
		if err := tc.run(ctx); err != nil {
			return chk, err
		}
		chk.tables++
	}
	return chk, nil
}

// collect reads every page of a listing.
func collect[T any](list func(store.Page) ([]T, string, error)) ([]T, error) {
	var out []T
	page := store.Page{}
	for {
		items, next, err := list(page)
		if err != nil {
			return nil, err
		}
		out = append(out, items...)
		if next == "" {
			return out, nil
		}
		page.Token = next
	}
}

// tableCheck is the check of one table.
type tableCheck struct {
	cat  checkedCatalog
	wh   *warehouse.Warehouse
	t    *store.Table
	root blob.Store
	chk  *warehouseCheck
	// seen holds the files checked already (by fileKey): versions share
	// most of their files.
	seen map[string]bool
}

func (tc *tableCheck) problem(branch string, version int64, kind fileKind, path string, err error) {
	tc.chk.problems = append(tc.chk.problems, fileProblem{table: tc.t.ID, branch: branch, version: version, kind: kind, path: path, err: err})
}

func (tc *tableCheck) run(ctx context.Context) error {
	id := tc.t.ID
	branches, err := collect(func(p store.Page) ([]store.Branch, string, error) { return tc.cat.ListBranches(ctx, id, p) })
	if err != nil {
		return fmt.Errorf("list branches of %q: %w", id, err)
	}
	names := []string{""}
	for _, b := range branches {
		names = append(names, b.Name)
	}
	opts := table.Options{URI: tc.t.Location, OpenBase: tc.openBase}
	for _, branch := range names {
		versions, err := collect(func(p store.Page) ([]store.TableVersion, string, error) {
			return tc.cat.ListVersions(ctx, id, branch, false, p)
		})
		if err != nil {
			return fmt.Errorf("list versions of %q on %s: %w", id, store.BranchName(branch), err)
		}
		for _, v := range versions {
			tc.chk.versions++
			tc.version(ctx, branch, v, opts)
		}
	}
	return tc.indexRecords(ctx)
}

// openBase opens a base path of a manifest (a branch's parent's root).
func (tc *tableCheck) openBase(_ context.Context, p string) (blob.Store, error) {
	s, ok, err := tc.wh.Blobs(p)
	if err == nil && !ok {
		err = fmt.Errorf("base path %s is outside the warehouse", p)
	}
	return s, err
}

// version checks the files of one recorded version.
func (tc *tableCheck) version(ctx context.Context, branch string, v store.TableVersion, opts table.Options) {
	ds, err := table.OpenVersion(ctx, tc.root, branch, uint64(v.Version), opts)
	if err != nil {
		tc.problem(branch, v.Version, kindManifest, v.ManifestPath, err)
		return
	}
	if v.ManifestSize != nil && *v.ManifestSize != ds.ManifestInfo().Size {
		tc.problem(branch, v.Version, kindManifest, ds.ManifestInfo().Path,
			fmt.Errorf("%d bytes, the catalog records %d", ds.ManifestInfo().Size, *v.ManifestSize))
	}
	m := ds.Manifest()
	for _, f := range m.Fragments {
		for i := range f.Files {
			df := &f.Files[i]
			key := tc.fileKey(m, branch, df.BaseID, "data/"+df.Path)
			if tc.once(key, kindData) {
				if err := checkDataFile(ctx, ds, df, f.PhysicalRows); err != nil {
					tc.problem(branch, v.Version, kindData, "data/"+df.Path, err)
				}
			}
		}
		if d := f.Deletion; d != nil {
			rel := deletionPath(f.ID, d)
			if tc.once(tc.fileKey(m, branch, d.BaseID, rel), kindDeletion) {
				if _, err := ds.Deletions(ctx, f); err != nil {
					tc.problem(branch, v.Version, kindDeletion, rel, err)
				}
			}
		}
	}
	for _, ix := range m.Indexes {
		rel := "_indices/" + ix.UUID + "/"
		if tc.once(tc.fileKey(m, branch, ix.BaseID, rel), kindLanceIndx) {
			if err := checkIndexDir(ctx, ds, ix); err != nil {
				tc.problem(branch, v.Version, kindLanceIndx, rel, err)
			}
		}
	}
}

// deletionPath returns the path of fragment id's deletion file d below
// its root, as the format names it.
func deletionPath(id uint64, d *table.DeletionFile) string {
	return fmt.Sprintf("_deletions/%d-%d-%d.%s", id, d.ReadVersion, d.ID, d.Kind.Ext())
}

// once counts a reference to the file key names and reports whether it
// is the first, which is then checked.
func (tc *tableCheck) once(key string, kind fileKind) bool {
	tc.chk.refs++
	if tc.seen[key] {
		return false
	}
	tc.seen[key] = true
	tc.chk.files[kind]++
	return true
}

// fileKey names the file at rel below the root of the base path base of
// manifest m (the branch's own root when nil), the same way whichever
// version or branch refers to it.
func (tc *tableCheck) fileKey(m *table.Manifest, branch string, base *uint32, rel string) string {
	root := strings.TrimRight(tc.t.Location, "/")
	if branch != "" {
		root += "/tree/" + branch
	}
	if base != nil {
		root = fmt.Sprintf("base %d?", *base)
		for _, bp := range m.BasePaths {
			if bp.ID == *base {
				root = strings.TrimRight(strings.TrimPrefix(bp.Path, "file://"), "/")
				if !bp.IsDatasetRoot {
					rel = rel[strings.Index(rel, "/")+1:]
				}
			}
		}
	}
	return root + "/" + rel
}

// checkDataFile checks that data file df of a fragment of ds is there, of
// the size the manifest records (when it records one), with a footer and
// metadata lance/file reads, for rows rows.
func checkDataFile(ctx context.Context, ds *table.Dataset, df *table.DataFile, rows uint64) error {
	s, p, err := ds.DataFile(ctx, df)
	if err != nil {
		return err
	}
	info, err := s.Stat(ctx, p)
	if err != nil {
		return err
	}
	if df.Size != 0 && uint64(info.Size) != df.Size {
		return fmt.Errorf("%d bytes, the manifest records %d", info.Size, df.Size)
	}
	r, err := file.Open(ctx, s, p, &file.ReadOptions{Size: info.Size})
	if err != nil {
		return err
	}
	if r.NumRows() != rows {
		return fmt.Errorf("holds %d rows, the fragment has %d", r.NumRows(), rows)
	}
	return nil
}

// checkIndexDir checks that the directory of index ix of the manifest's
// section holds files.
func checkIndexDir(ctx context.Context, ds *table.Dataset, ix *table.Index) error {
	s, dir, err := ds.IndexDir(ctx, ix)
	if err != nil {
		return err
	}
	for _, err := range s.List(ctx, dir) {
		return err // one object (or a listing error) settles it
	}
	return errors.New("no file")
}

// recordedBuild is what the check reads of the Build of an index record:
// the engine's file of the build, below the table's root, and its size.
type recordedBuild struct {
	File string `json:"file"`
	Size int64  `json:"size"`
}

// indexRecords checks the file of the last build of every index the
// catalog records for the table.
func (tc *tableCheck) indexRecords(ctx context.Context) error {
	records, err := tc.cat.ListDatasetIndexes(ctx, tc.t.ID)
	if err != nil {
		return fmt.Errorf("list the indexes of %q: %w", tc.t.ID, err)
	}
	for _, ix := range records {
		if ix.Build == "" {
			continue // not built yet
		}
		var b recordedBuild
		if err := json.Unmarshal([]byte(ix.Build), &b); err != nil || b.File == "" {
			tc.problem("", 0, kindIndex, "(index "+ix.Name+")", fmt.Errorf("a build record that names no file: %q (%v)", ix.Build, err))
			continue
		}
		tc.chk.files[kindIndex]++
		if !strings.HasPrefix(b.File, "_lancens/indices/"+ix.UUID+"/") {
			tc.problem("", 0, kindIndex, b.File, fmt.Errorf("index %s (%s) has its file outside its directory", ix.Name, ix.UUID))
		}
		if err := checkRecordedFile(ctx, tc.root, b); err != nil {
			tc.problem("", 0, kindIndex, b.File, fmt.Errorf("index %s: %w", ix.Name, err))
		}
	}
	return nil
}

// checkRecordedFile checks that the file of build b is there, of the size
// recorded, readable to its last byte.
func checkRecordedFile(ctx context.Context, root blob.Store, b recordedBuild) error {
	info, err := root.Stat(ctx, b.File)
	if err != nil {
		return err
	}
	if info.Size != b.Size {
		return fmt.Errorf("%d bytes, the record says %d", info.Size, b.Size)
	}
	if b.Size > 0 {
		if _, err := root.ReadRange(ctx, b.File, b.Size-1, 1); err != nil {
			return err
		}
	}
	return nil
}

// problemsOf returns the problems of a check, one a line, at most n.
func problemsOf(c warehouseCheck, n int) string {
	lines := make([]string, 0, min(n, len(c.problems)))
	for _, p := range c.problems[:min(n, len(c.problems))] {
		lines = append(lines, p.String())
	}
	if len(c.problems) > n {
		lines = append(lines, fmt.Sprintf("… and %d more", len(c.problems)-n))
	}
	return strings.Join(lines, "\n")
}

// checkFiles runs the warehouse check on the files of the trial in dir,
// between a kill and the restart: the server holds the database while it
// runs, and the engine changes no file when it starts, so what is checked
// is what the restarted server serves. It fails the test with each file a
// recorded version or index needs that is missing or unreadable.
func (w *workload) checkFiles(t *testing.T, dir string) {
	t.Helper()
	ctx := t.Context()
	db, err := sqlite.Open(ctx, filepath.Join(dir, "lancens.db"), sqlite.Options{})
	if err != nil {
		t.Fatalf("open the trial's catalog: %v", err)
	}
	defer db.Close()
	wh, err := warehouse.Open(filepath.Join(dir, "warehouse"))
	if err != nil {
		t.Fatal(err)
	}
	chk, err := checkWarehouse(ctx, db, wh, w.notDataset)
	if err != nil {
		t.Fatalf("check the warehouse: %v", err)
	}
	w.stats.files.add(chk)
	if len(chk.problems) > 0 {
		t.Errorf("after a kill, %d files that recorded versions or indexes need are missing or unreadable:\n%s", len(chk.problems), problemsOf(chk, 20))
	}
}

// notDataset reports whether table id is one whose versions are not Lance
// datasets: the versionWorkers' tables, committed with made-up manifests.
func (w *workload) notDataset(id []string) bool {
	for _, v := range w.versions {
		for _, d := range v.tables {
			if slices.Equal(d.id, id) {
				return true
			}
		}
	}
	return false
}
