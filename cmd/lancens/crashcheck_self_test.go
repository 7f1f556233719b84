package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/lancens/lancens/engine"
	"github.com/lancens/lancens/lance/blob"
	"github.com/lancens/lancens/lance/table"
	"github.com/lancens/lancens/store"
	"github.com/lancens/lancens/store/sqlite"
	"github.com/lancens/lancens/warehouse"
)

// checkEnv is a warehouse with one engine table ("t": versions 1–4 on
// main, the last deleting rows, a BTREE index, and a branch "b" with a
// version of its own), for the warehouse check to check.
type checkEnv struct {
	db   *sqlite.DB
	wh   *warehouse.Warehouse
	id   []string
	root string // the table's directory
}

func newCheckEnv(t *testing.T) *checkEnv {
	t.Helper()
	ctx := t.Context()
	dir := t.TempDir()
	db, err := sqlite.Open(ctx, filepath.Join(dir, "lancens.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	wh, err := warehouse.Open(filepath.Join(dir, "warehouse"))
	if err != nil {
		t.Fatal(err)
	}
	e, err := engine.New(engine.Options{Catalog: db, Warehouse: wh})
	if err != nil {
		t.Fatal(err)
	}
	env := &checkEnv{db: db, wh: wh, id: []string{"t"}}
	rows := func(from, to int64) store.Data {
		m := map[int64]string{}
		for i := from; i < to; i++ {
			m[i] = "v"
		}
		return store.NewData(managedSchema, managedRecord(m))
	}
	tbl, _, err := e.CreateTable(ctx, env.id, store.NewTable{Data: rows(0, 30)}) // version 1
	if err != nil {
		t.Fatal(err)
	}
	var ok bool
	if env.root, ok = warehouse.LocalPath(tbl.Location); !ok {
		t.Fatalf("table at %s, not on local disk", tbl.Location)
	}
	steps := []func() error{
		func() error { _, err := e.Insert(ctx, env.id, store.InsertAppend, rows(30, 40)); return err }, // 2
		func() error {
			_, err := e.CreateIndex(ctx, env.id, store.IndexSpec{Column: "id", Type: "BTREE"})
			return err
		}, // no version
		func() error { _, err := e.Insert(ctx, env.id, store.InsertAppend, rows(40, 50)); return err }, // 3
		func() error { _, err := e.Delete(ctx, env.id, "id % 5 = 0"); return err },                     // 4
		func() error { _, err := db.CreateBranch(ctx, env.id, "b", "", nil); return err },
		func() error {
			_, err := e.OnBranch("b").Insert(ctx, env.id, store.InsertAppend, rows(100, 110))
			return err
		},
	}
	for i, step := range steps {
		if err := step(); err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
	}
	return env
}

func (env *checkEnv) check(t *testing.T) warehouseCheck {
	t.Helper()
	chk, err := checkWarehouse(t.Context(), env.db, env.wh, nil)
	if err != nil {
		t.Fatal(err)
	}
	return chk
}

// latest returns the manifest of version 4 of main.
func (env *checkEnv) latest(t *testing.T) *table.Manifest {
	t.Helper()
	ds, err := table.OpenVersion(t.Context(), blob.NewDir(env.root), "", 4, table.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return ds.Manifest()
}

// TestCheckWarehouseFindsMissingFiles damages one file a recorded version
// or index needs, of each kind, and checks that the warehouse check names
// it: its kind, its path and a version that needs it.
func TestCheckWarehouseFindsMissingFiles(t *testing.T) {
	intact := newCheckEnv(t).check(t)
	if len(intact.problems) != 0 {
		t.Fatalf("the intact warehouse has problems:\n%s", problemsOf(intact, 10))
	}
	// Main's 4 versions and the branch's fork and insert.
	if intact.tables != 1 || intact.versions != 6 || intact.files[kindData] < 4 || intact.files[kindDeletion] == 0 || intact.files[kindIndex] != 1 {
		t.Fatalf("the check of the intact warehouse looked at too little: %s", intact)
	}
	cases := []struct {
		name string
		kind fileKind
		// damage damages a file of the table and returns its path below
		// the table's root and a version of main that needs it.
		damage func(t *testing.T, env *checkEnv) (string, int64)
	}{
		{"data file removed", kindData, func(t *testing.T, env *checkEnv) (string, int64) {
			p := "data/" + env.latest(t).Fragments[0].Files[0].Path
			remove(t, env, p)
			return p, 1
		}},
		{"data file cut short", kindData, func(t *testing.T, env *checkEnv) (string, int64) {
			m := env.latest(t)
			p := "data/" + m.Fragments[len(m.Fragments)-1].Files[0].Path
			if err := os.Truncate(filepath.Join(env.root, p), 100); err != nil {
				t.Fatal(err)
			}
			return p, 3
		}},
		{"deletion file removed", kindDeletion, func(t *testing.T, env *checkEnv) (string, int64) {
			f := env.latest(t).Fragments[0]
			if f.Deletion == nil {
				t.Fatal("fragment 0 of version 4 has no deletion file")
			}
			p := deletionPath(f.ID, f.Deletion)
			remove(t, env, p)
			return p, 4
		}},
		{"index file removed", kindIndex, func(t *testing.T, env *checkEnv) (string, int64) {
			records, err := env.db.ListDatasetIndexes(t.Context(), env.id)
			if err != nil || len(records) != 1 {
				t.Fatalf("index records: %v %v", records, err)
			}
			var b recordedBuild
			if err := json.Unmarshal([]byte(records[0].Build), &b); err != nil {
				t.Fatal(err)
			}
			remove(t, env, b.File)
			return b.File, 0
		}},
		{"manifest removed", kindManifest, func(t *testing.T, env *checkEnv) (string, int64) {
			p := table.ManifestPath(2, table.NamingV2)
			remove(t, env, p)
			return "", 2
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			env := newCheckEnv(t)
			path, version := tc.damage(t, env)
			chk := env.check(t)
			found := false
			for _, p := range chk.problems {
				if p.kind != tc.kind || !slices.Equal(p.table, env.id) {
					t.Errorf("unexpected problem: %s", p)
					continue
				}
				if (path == "" || p.path == path) && p.version == version && p.branch == "" {
					found = true
				}
			}
			if !found {
				t.Errorf("no %s problem for %s at version %d; found:\n%s", tc.kind, path, version, problemsOf(chk, 20))
			}
		})
	}
}

// TestCheckWarehouseReadsBranchFiles checks that a branch's versions are
// checked too: removing the data file of the branch's own insert is a
// problem of its last version, at its path below the branch's root.
func TestCheckWarehouseReadsBranchFiles(t *testing.T) {
	env := newCheckEnv(t)
	ds, err := table.OpenBranch(t.Context(), blob.NewDir(env.root), "b", table.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var own string
	for _, f := range ds.Manifest().Fragments {
		if f.Files[0].BaseID == nil {
			own = "data/" + f.Files[0].Path
		}
	}
	if own == "" {
		t.Fatal("branch b has no data file of its own")
	}
	remove(t, env, "tree/b/"+own)
	chk := env.check(t)
	if len(chk.problems) != 1 || chk.problems[0].branch != "b" || chk.problems[0].path != own || chk.problems[0].version != int64(ds.Version()) {
		t.Errorf("want one problem, with %s at version %d of b; found:\n%s", own, ds.Version(), problemsOf(chk, 20))
	}
}

func remove(t *testing.T, env *checkEnv, p string) {
	t.Helper()
	if err := os.Remove(filepath.Join(env.root, p)); err != nil {
		t.Fatal(err)
	}
}
