package convert_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/lancens/lancens/engine"
	"github.com/lancens/lancens/lance/table"
	"github.com/lancens/lancens/store"
	"github.com/lancens/lancens/store/sqlite"
	"github.com/lancens/lancens/store/sqlite/legacy"
	"github.com/lancens/lancens/store/sqlite/legacy/convert"
	"github.com/lancens/lancens/warehouse"
)

// The fixture (testdata/f365447) is a database the row store of lancens
// f365447 made, with the answers it gave about every version of every
// branch of its tables; make.sh there rebuilds it from that revision.

const fixtureDir = "testdata/f365447"

type fixture struct {
	Tables  []fixtureTable `json:"tables"`
	Queries []fixtureQuery `json:"queries"`
}

type fixtureTable struct {
	ID            []string                    `json:"id"`
	Branches      map[string]map[int64]string `json:"branches"`
	Tags          map[string]int64            `json:"tags"`
	Indexes       []fixtureIndex              `json:"indexes"`
	View          bool                        `json:"view"`
	Unconvertible string                      `json:"unconvertible"`
}

type fixtureIndex struct {
	Name   string `json:"name"`
	Type   string `json:"type"`
	Column string `json:"column"`
}

type fixtureQuery struct {
	Table   []string    `json:"table"`
	Branch  string      `json:"branch"`
	Query   store.Query `json:"query"`
	Answer  string      `json:"answer"`
	Comment string      `json:"comment"`
}

func loadFixture(t *testing.T) *fixture {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(fixtureDir, "fixture.json"))
	check(t, err)
	var fx fixture
	check(t, json.Unmarshal(b, &fx))
	return &fx
}

// answer reads a recorded answer.
func answer(t *testing.T, file string) *store.Result {
	t.Helper()
	f, err := os.Open(filepath.Join(fixtureDir, "answers", file))
	check(t, err)
	defer f.Close()
	r, err := ipc.NewReader(f)
	check(t, err)
	defer r.Release()
	res := &store.Result{Schema: r.Schema()}
	for r.Next() {
		rec := r.RecordBatch()
		rec.Retain()
		res.Batches = append(res.Batches, rec)
	}
	check(t, r.Err())
	return res
}

// env is a copy of the fixture database opened with the store, a
// warehouse, and the engine over both.
type env struct {
	dir string
	db  *sqlite.DB
	wh  *warehouse.Warehouse
	e   *engine.Engine
}

// newEnv copies the fixture database into a new directory and opens it,
// with a warehouse beside it.
func newEnv(t *testing.T) *env {
	t.Helper()
	dir := t.TempDir()
	check(t, os.Mkdir(filepath.Join(dir, "wh"), 0o755))
	wh, err := warehouse.Open(filepath.Join(dir, "wh"))
	check(t, err)
	return newEnvOn(t, dir, wh)
}

// newEnvOn copies the fixture database into dir and opens it, with the
// warehouse wh.
func newEnvOn(t *testing.T, dir string, wh *warehouse.Warehouse) *env {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(fixtureDir, "fixture.db"))
	check(t, err)
	check(t, os.WriteFile(filepath.Join(dir, "lancens.db"), b, 0o644))
	db, err := sqlite.Open(context.Background(), filepath.Join(dir, "lancens.db"), sqlite.Options{Synchronous: "NORMAL"})
	check(t, err)
	t.Cleanup(func() { db.Close() })
	e, err := engine.New(engine.Options{Catalog: db, Warehouse: wh})
	check(t, err)
	return &env{dir: dir, db: db, wh: wh, e: e}
}

// pages returns the database's pages and how many of them are free.
func (v *env) pages(t *testing.T) (pages, free int64) {
	t.Helper()
	check(t, v.db.ReadLegacy(t.Context(), func(tx legacy.Tx) error {
		if err := tx.QueryRow(t.Context(), `PRAGMA page_count`).Scan(&pages); err != nil {
			return err
		}
		return tx.QueryRow(t.Context(), `PRAGMA freelist_count`).Scan(&free)
	}))
	return pages, free
}

func (v *env) run(t *testing.T, opts convert.Options) (convert.Summary, error) {
	t.Helper()
	opts.Warehouse, opts.Indexes = v.wh, v.e
	return convert.Run(t.Context(), v.db, opts)
}

// TestConvertFixture converts the fixture and checks every version of
// every branch of every table, row for row, against f365447's answers,
// and what the catalog keeps; a second run changes nothing.
func TestConvertFixture(t *testing.T) {
	fx := loadFixture(t)
	v := newEnv(t)
	pages, free := v.pages(t)
	sum, err := v.run(t, convert.Options{})
	checkOnlyUnconvertible(t, fx, sum, err)
	if sum.Tables != len(fx.Tables)-1 {
		t.Errorf("%d tables converted, want %d", sum.Tables, len(fx.Tables)-1)
	}
	checkConverted(t, v, fx)
	// The pages of the rows dropped go back to the file system.
	if after, freeAfter := v.pages(t); after >= pages || freeAfter != 0 {
		t.Errorf("the database has %d pages (%d free) after the conversion, %d (%d free) before: want fewer, none free", after, freeAfter, pages, free)
	}

	again, err := v.run(t, convert.Options{})
	checkOnlyUnconvertible(t, fx, again, err)
	if again.Tables != 0 || again.Rows != 0 {
		t.Errorf("a second run converted %d tables (%d rows), want none", again.Tables, again.Rows)
	}
	checkConverted(t, v, fx)
}

// checkOnlyUnconvertible checks that the conversion failed for the
// fixture's unconvertible table alone, and said so.
func checkOnlyUnconvertible(t *testing.T, fx *fixture, sum convert.Summary, err error) {
	t.Helper()
	var want [][]string
	for _, ft := range fx.Tables {
		if ft.Unconvertible != "" {
			want = append(want, ft.ID)
		}
	}
	var got [][]string
	for _, f := range sum.Failed {
		got = append(got, f.Table)
		if !strings.Contains(f.Err.Error(), "map") {
			t.Errorf("table %v failed with %v, want the map column named", f.Table, f.Err)
		}
	}
	if !slices.EqualFunc(got, want, slices.Equal) {
		t.Errorf("failed tables %v, want %v", got, want)
	}
	if err != nil {
		t.Errorf("Run: %v", err)
	}
}

// checkConverted checks the converted fixture against its answers.
func checkConverted(t *testing.T, v *env, fx *fixture) {
	t.Helper()
	ctx := t.Context()
	pending, err := legacy.PendingIndexes(ctx, v.db)
	check(t, err)
	for _, ft := range fx.Tables {
		name := strings.Join(ft.ID, "$")
		tbl, err := v.db.DescribeTable(ctx, ft.ID)
		check(t, err)
		if ft.Unconvertible != "" {
			if tbl.Kind != store.Managed {
				t.Errorf("%s: kind %v, want the unconvertible table left managed", name, tbl.Kind)
			}
			// The engine refuses it, and its rows stay in the file for a
			// later conversion.
			if _, err := v.e.Query(ctx, ft.ID, store.Query{}); store.ErrorCode(err) != store.CodeInvalidTableState {
				t.Errorf("%s: query of the unconverted table: %v, want code 19", name, err)
			}
			refs, err := legacy.Managed(ctx, v.db)
			check(t, err)
			kept := false
			for _, r := range refs {
				if slices.Equal(r.ID, ft.ID) {
					lt, err := legacy.Load(ctx, v.db, r)
					check(t, err)
					kept = len(lt.Lines) > 0 && lt.Lines[0].HasRows()
				}
			}
			if !kept {
				t.Errorf("%s: the rows of the unconverted table are gone", name)
			}
			continue
		}
		if tbl.Kind != store.External || !tbl.Owned || !tbl.ManagedVersioning || tbl.Declared {
			t.Errorf("%s: converted entry %+v, want an owned table with managed versioning", name, tbl)
		}
		if !strings.HasPrefix(tbl.Location, v.wh.Root()+"/") || !strings.HasSuffix(tbl.Location, ".lance") {
			t.Errorf("%s: location %s, want a dataset in the warehouse %s", name, tbl.Location, v.wh.Root())
		}
		for branch, versions := range ft.Branches {
			b := branch
			if b == "main" {
				b = ""
			}
			recorded, _, err := v.db.ListVersions(ctx, ft.ID, b, false, store.Page{Limit: 1000})
			check(t, err)
			var got, want []int64
			root, _, err := v.wh.Blobs(tbl.Location)
			check(t, err)
			for _, r := range recorded {
				got = append(got, r.Version)
				rel, inside := relativeTo(tbl.Location, r.ManifestPath)
				if !inside || r.ManifestSize == nil || *r.ManifestSize <= 0 {
					t.Errorf("%s@%s:%d: manifest %s (size %v), want one in the dataset", name, branch, r.Version, r.ManifestPath, r.ManifestSize)
					continue
				}
				if info, err := root.Stat(ctx, rel); err != nil || info.Size != *r.ManifestSize {
					t.Errorf("%s@%s:%d: manifest %s: %v, %+v, want %d bytes", name, branch, r.Version, rel, err, info, *r.ManifestSize)
				}
			}
			for ver, file := range versions {
				want = append(want, ver)
				res, err := v.e.OnBranch(b).Query(ctx, ft.ID, store.Query{Version: &ver})
				check(t, err)
				sameRows(t, fmt.Sprintf("%s@%s:%d", name, branch, ver), answer(t, file), res)
			}
			slices.Sort(want)
			if !slices.Equal(got, want) {
				t.Errorf("%s@%s: versions %v, want %v", name, branch, got, want)
			}
			// Lance finds the newest version by itself too.
			ds, err := table.OpenBranch(ctx, root, b, table.Options{URI: tbl.Location})
			check(t, err)
			if ds.Version() != uint64(want[len(want)-1]) {
				t.Errorf("%s@%s: Lance opens version %d, want %d", name, branch, ds.Version(), want[len(want)-1])
			}
		}
		tags, _, err := v.db.ListTags(ctx, ft.ID, store.Page{Limit: 100})
		check(t, err)
		gotTags := map[string]int64{}
		for _, tg := range tags {
			gotTags[tg.Name] = tg.Version
		}
		if len(gotTags) != len(ft.Tags) {
			t.Errorf("%s: tags %v, want %v", name, gotTags, ft.Tags)
		}
		for tag, ver := range ft.Tags {
			if gotTags[tag] != ver {
				t.Errorf("%s: tag %s at %d, want %d", name, tag, gotTags[tag], ver)
			}
		}
		// Every index definition is the engine's, or kept until it
		// builds indexes.
		listed, _, err := v.e.ListIndices(ctx, ft.ID, nil, store.Page{Limit: 100})
		check(t, err)
		for _, ix := range ft.Indexes {
			kept := slices.ContainsFunc(pending, func(d legacy.IndexDef) bool {
				return slices.Equal(d.Table, ft.ID) && d.Spec.Name == ix.Name && d.Spec.Type == ix.Type && d.Spec.Column == ix.Column
			})
			built := slices.ContainsFunc(listed, func(i store.IndexInfo) bool { return i.Name == ix.Name && i.Type == ix.Type })
			if !kept && !built {
				t.Errorf("%s: index %s (%s on %s) is neither built nor kept", name, ix.Name, ix.Type, ix.Column)
			}
		}
	}
	// The rows tables of converted tables are gone, and a view keeps its
	// definition.
	check(t, v.db.ReadLegacy(ctx, func(tx legacy.Tx) error {
		rows, err := tx.Query(ctx, `SELECT m.name FROM sqlite_master m WHERE m.type = 'table' AND m.name LIKE 'rows\_%' ESCAPE '\'
			AND NOT EXISTS (SELECT 1 FROM tables t WHERE t.kind = 'managed' AND (m.name = 'rows_' || t.id OR m.name LIKE 'rows\_' || t.id || '\_%' ESCAPE '\'))`)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var n string
			if err := rows.Scan(&n); err != nil {
				return err
			}
			t.Errorf("rows table %s of a converted table is left", n)
		}
		var views int
		if err := tx.QueryRow(ctx, `SELECT count(*) FROM materialized_views m JOIN tables t ON t.id = m.table_id`).Scan(&views); err != nil {
			return err
		}
		want := 0
		for _, ft := range fx.Tables {
			if ft.View {
				want++
			}
		}
		if views != want {
			t.Errorf("%d materialized view definitions, want %d", views, want)
		}
		return rows.Err()
	}))
}

// relativeTo returns where the manifest path the catalog recorded lies
// below location (a local directory, whose manifest paths are object-store
// paths without the leading "/", or an s3:// URI, whose are keys in the
// bucket), and whether it is inside it.
func relativeTo(location, manifestPath string) (string, bool) {
	prefix := strings.TrimPrefix(location, "/")
	if u, err := url.Parse(location); err == nil && u.Scheme == "s3" {
		prefix = strings.TrimPrefix(u.Path, "/")
	}
	return strings.CutPrefix(manifestPath, prefix+"/")
}

// sameRows checks that got has the rows of want, in order. A decimal the
// dataset widened to 128 bits compares by value.
func sameRows(t *testing.T, what string, want, got *store.Result) {
	t.Helper()
	if want.Schema.NumFields() != got.Schema.NumFields() {
		t.Errorf("%s: schema\n%s\nwant\n%s", what, got.Schema, want.Schema)
		return
	}
	w := array.NewTableFromRecords(want.Schema, want.Batches)
	defer w.Release()
	g := array.NewTableFromRecords(got.Schema, got.Batches)
	defer g.Release()
	if w.NumRows() != g.NumRows() {
		t.Errorf("%s: %d rows, want %d", what, g.NumRows(), w.NumRows())
		return
	}
	if w.NumRows() == 0 {
		return
	}
	for i := range want.Schema.NumFields() {
		wf, gf := want.Schema.Field(i), got.Schema.Field(i)
		widened := isNarrowDecimal(wf.Type) && gf.Type.ID() == arrow.DECIMAL128
		if wf.Name != gf.Name || !arrow.TypeEqual(wf.Type, gf.Type) && !widened {
			t.Errorf("%s: field %d is %s %s, want %s %s", what, i, gf.Name, gf.Type, wf.Name, wf.Type)
			continue
		}
		wc, err := array.Concatenate(w.Column(i).Data().Chunks(), memory.DefaultAllocator)
		check(t, err)
		gc, err := array.Concatenate(g.Column(i).Data().Chunks(), memory.DefaultAllocator)
		check(t, err)
		if widened {
			for r := range wc.Len() {
				if wc.ValueStr(r) != gc.ValueStr(r) {
					t.Errorf("%s: %s row %d is %s, want %s", what, wf.Name, r, gc.ValueStr(r), wc.ValueStr(r))
				}
			}
			continue
		}
		if !array.ApproxEqual(wc, gc, array.WithNaNsEqual(true)) {
			t.Errorf("%s: column %s\n%v\nwant\n%v", what, wf.Name, gc, wc)
		}
	}
}

func isNarrowDecimal(dt arrow.DataType) bool {
	return dt.ID() == arrow.DECIMAL32 || dt.ID() == arrow.DECIMAL64
}

func check(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
