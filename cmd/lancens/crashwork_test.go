package main

import (
	"context"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/lancens/lancens/client"
	"github.com/lancens/lancens/gen/apiclient"
	"github.com/lancens/lancens/store"
	"github.com/lancens/lancens/warehouse"
)

// A workload is the writes of one crash trial and the model of what the
// catalog must hold: every write is applied to the model when it is
// acknowledged; a write in flight at a kill stays pending until the check
// after the restart finds whether it committed (whole) or not (at all).
type workload struct {
	r        *rand.Rand
	stats    crashStats
	ns       *namespaceWorker
	versions []*versionWorker
	managed  []*managedWorker
	hot      *hotTable
}

// crashWorker is one kind of writes of the workload.
type crashWorker interface {
	// run sends writes until the server dies (or ctx ends); it returns at
	// its first write without an answer.
	run(ctx context.Context, t *testing.T, c *crashConn, srv *crashServer, r *rand.Rand)
	// verify checks the catalog against the model after a restart,
	// resolves the pending writes and adds to st.
	verify(t *testing.T, c *crashConn, st *crashStats)
}

func newWorkload(r *rand.Rand) *workload {
	return &workload{
		r:        r,
		ns:       &namespaceWorker{},
		versions: []*versionWorker{{name: "declared"}, {name: "other"}, {name: "third"}},
		managed:  []*managedWorker{newManagedWorker("m0"), newManagedWorker("m1")},
		hot:      &hotTable{verified: 1, rows: map[int64]bool{}},
	}
}

// workers returns every worker; the hot table has two.
func (w *workload) workers() []crashWorker {
	out := []crashWorker{w.ns, &hotWorker{w.hot}, &hotWorker{w.hot}}
	for _, v := range w.versions {
		out = append(out, v)
	}
	for _, m := range w.managed {
		out = append(out, m)
	}
	return out
}

// setup creates the tables the workers write to.
func (w *workload) setup(t *testing.T, c *crashConn) {
	t.Helper()
	for _, v := range w.versions {
		v.setup(t, c)
	}
	for _, m := range w.managed {
		m.setup(t, c)
	}
	w.hot.setup(t, c)
}

// run runs every worker against srv for d, then kills srv.
func (w *workload) run(t *testing.T, c *crashConn, srv *crashServer, d time.Duration) {
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	var wg sync.WaitGroup
	for _, wk := range w.workers() {
		r := rand.New(rand.NewPCG(w.r.Uint64(), w.r.Uint64()))
		wg.Go(func() { wk.run(ctx, t, c, srv, r) })
	}
	time.Sleep(d)
	srv.kill(t)
	cancel()
	wg.Wait()
}

// verify checks every worker's writes after a restart.
func (w *workload) verify(t *testing.T, c *crashConn) {
	// The hot workers share one table, checked once.
	w.hot.verify(t, c, &w.stats)
	for _, wk := range w.workers() {
		if _, ok := wk.(*hotWorker); !ok {
			wk.verify(t, c, &w.stats)
		}
	}
}

// finish waits for the index builds the trial started, after its last
// restart.
func (w *workload) finish(t *testing.T, c *crashConn) {
	t.Helper()
	for _, m := range w.managed {
		m.waitIndexes(t, c)
	}
}

// namespaceWorker creates namespaces (at the root and nested) and declares
// tables in them.
type namespaceWorker struct {
	n       int
	entries []*catalogEntry
	newAcks int
}

// catalogEntry is a namespace or declared table the worker created, or
// sent at a kill (pending).
type catalogEntry struct {
	id       []string
	table    bool
	props    map[string]string
	location string // of an acknowledged table
	pending  bool
}

func (w *namespaceWorker) parents() [][]string {
	var out [][]string
	for _, e := range w.entries {
		if !e.table && !e.pending {
			out = append(out, e.id)
		}
	}
	return out
}

func (w *namespaceWorker) run(ctx context.Context, t *testing.T, c *crashConn, srv *crashServer, r *rand.Rand) {
	for ctx.Err() == nil {
		w.n++
		name := fmt.Sprintf("n%d_%x", w.n, r.Uint32())
		e := &catalogEntry{id: []string{name}, props: map[string]string{"n": name, "x": fmt.Sprint(r.Uint64())}}
		parents := w.parents()
		if len(parents) > 0 && r.IntN(2) == 0 {
			e.id = append(slices.Clone(parents[r.IntN(len(parents))]), name)
			e.table = r.IntN(2) == 0
		}
		var err error
		if e.table {
			var info *client.TableInfo
			info, err = c.c.DeclareTable(ctx, e.id, &client.DeclareTableOptions{Properties: e.props})
			if err == nil {
				e.location = info.Location
			}
		} else {
			_, err = c.c.CreateNamespace(ctx, e.id, &client.CreateNamespaceOptions{Properties: e.props})
		}
		switch checkOutcome(t, srv, fmt.Sprintf("create %q", e.id), err) {
		case acked:
			w.entries = append(w.entries, e)
			w.newAcks++
		case uncertain:
			e.pending = true
			w.entries = append(w.entries, e)
			return
		}
	}
}

func (w *namespaceWorker) verify(t *testing.T, c *crashConn, st *crashStats) {
	st.acked += w.newAcks
	w.newAcks = 0
	kept := w.entries[:0]
	for _, e := range w.entries {
		var props map[string]string
		var location string
		var err error
		if e.table {
			var d *client.TableDescription
			if d, err = c.c.DescribeTable(t.Context(), e.id, nil); err == nil {
				props, location = d.Properties, d.Location
			}
		} else {
			props, err = c.c.DescribeNamespace(t.Context(), e.id)
		}
		code := store.ErrorCode(err)
		switch {
		case err != nil && e.pending && (code == store.CodeNamespaceNotFound || code == store.CodeTableNotFound):
			st.uncertain++
			continue // it did not commit
		case err != nil:
			t.Errorf("%q (pending: %v) after the restart: %v", e.id, e.pending, err)
		case !maps.Equal(props, e.props):
			t.Errorf("%q has properties %v, want %v", e.id, props, e.props)
		case e.table && !e.pending && location != e.location:
			t.Errorf("table %q is at %q, declared at %q", e.id, location, e.location)
		}
		if e.pending {
			st.uncertain++
			st.applied++
			e.pending, e.location = false, location
		}
		kept = append(kept, e)
	}
	w.entries = kept
}

// versionWorker commits versions of two declared tables as a Lance client
// does (stage a manifest in the table's location, then version/create),
// one table at a time or both in one batch-create. Several run at once,
// each on tables of its own, whose names start with name.
type versionWorker struct {
	name    string
	tables  [2]*declaredTable
	pending []pendingCommit
	newAcks int
}

// declaredTable is a declared table and the manifest content of each of
// its committed versions (contents[v-1] for version v).
type declaredTable struct {
	id       []string
	location string
	contents []string
}

// pendingCommit is a version sent at a kill.
type pendingCommit struct {
	table   *declaredTable
	content string
}

func (w *versionWorker) setup(t *testing.T, c *crashConn) {
	t.Helper()
	for i := range w.tables {
		id := []string{fmt.Sprintf("%s%d", w.name, i)}
		info, err := c.c.DeclareTable(t.Context(), id, nil)
		if err != nil {
			t.Fatal(err)
		}
		w.tables[i] = &declaredTable{id: id, location: info.Location}
	}
}

// stage writes the manifest of the table's next version and returns the
// commit of it.
func (d *declaredTable) stage(r *rand.Rand) (client.VersionCommit, string, error) {
	v := int64(len(d.contents) + 1)
	content := fmt.Sprintf("%s version %d %x", d.id[0], v, r.Uint64())
	path := filepath.Join(d.location, "_versions", fmt.Sprintf("staged-%d-%x.manifest", v, r.Uint64()))
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return client.VersionCommit{}, "", err
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		return client.VersionCommit{}, "", err
	}
	size := int64(len(content))
	return client.VersionCommit{Version: v, ManifestPath: warehouse.ObjectPath(path), ManifestSize: &size}, content, nil
}

func (w *versionWorker) run(ctx context.Context, t *testing.T, c *crashConn, srv *crashServer, r *rand.Rand) {
	for ctx.Err() == nil {
		var tables []*declaredTable
		switch r.IntN(3) {
		case 0, 1:
			tables = []*declaredTable{w.tables[r.IntN(2)]}
		default:
			tables = w.tables[:]
		}
		var commits []client.TableCommit
		var pending []pendingCommit
		for _, d := range tables {
			vc, content, err := d.stage(r)
			if err != nil {
				t.Error(err)
				return
			}
			commits = append(commits, client.TableCommit{ID: d.id, VersionCommit: vc})
			pending = append(pending, pendingCommit{d, content})
		}
		var err error
		if len(commits) == 1 {
			_, _, err = c.c.CreateTableVersion(ctx, commits[0].ID, commits[0].VersionCommit)
		} else {
			_, _, err = c.c.CommitVersions(ctx, commits...)
		}
		switch checkOutcome(t, srv, fmt.Sprintf("commit of %d versions", len(commits)), err) {
		case acked:
			for _, p := range pending {
				p.table.contents = append(p.table.contents, p.content)
			}
			w.newAcks++
		case uncertain:
			w.pending = pending
			return
		case refused:
			return
		}
	}
}

func (w *versionWorker) verify(t *testing.T, c *crashConn, st *crashStats) {
	st.acked += w.newAcks
	st.commits += w.newAcks
	w.newAcks = 0
	committed := map[*declaredTable]bool{}
	for _, d := range w.tables {
		var p *pendingCommit
		for i := range w.pending {
			if w.pending[i].table == d {
				p = &w.pending[i]
			}
		}
		var versions []client.TableVersion
		for v, err := range c.c.ListTableVersions(t.Context(), d.id, "") {
			if err != nil {
				t.Fatalf("list versions of %q: %v", d.id, err)
			}
			versions = append(versions, v)
		}
		a := len(d.contents)
		if len(versions) != a && (p == nil || len(versions) != a+1) {
			t.Errorf("%q has %d versions; %d acknowledged, pending: %v", d.id, len(versions), a, p != nil)
			continue
		}
		for i, v := range versions {
			want := ""
			if i < a {
				want = d.contents[i]
			} else {
				want = p.content
			}
			got, err := os.ReadFile("/" + v.ManifestPath)
			switch {
			case v.Version != int64(i+1):
				t.Errorf("%q: version %d listed at position %d", d.id, v.Version, i+1)
			case err != nil:
				t.Errorf("%q version %d: manifest %s: %v", d.id, v.Version, v.ManifestPath, err)
			case string(got) != want:
				t.Errorf("%q version %d: manifest holds %q, want %q", d.id, v.Version, got, want)
			case v.ManifestSize != nil && *v.ManifestSize != int64(len(want)):
				t.Errorf("%q version %d: manifest_size %d, want %d", d.id, v.Version, *v.ManifestSize, len(want))
			}
		}
		committed[d] = len(versions) == a+1
	}
	if len(w.pending) > 0 {
		st.uncertain++
		first := committed[w.pending[0].table]
		for _, p := range w.pending {
			if committed[p.table] != first {
				t.Errorf("a batch commit was half applied: %q committed %v, %q committed %v",
					w.pending[0].table.id, first, p.table.id, committed[p.table])
			}
			if committed[p.table] {
				p.table.contents = append(p.table.contents, p.content)
			}
		}
		if first {
			st.applied++
		}
		w.pending = nil
	}
	// The next version commits, whatever a commit cut short left behind
	// in the table's files.
	for _, d := range w.tables {
		vc, content, err := d.stage(rand.New(rand.NewPCG(uint64(len(d.contents)), 7)))
		if err != nil {
			t.Fatal(err)
		}
		if _, _, err := c.c.CreateTableVersion(t.Context(), d.id, vc); err != nil {
			t.Errorf("commit of %q version %d after the restart: %v", d.id, vc.Version, err)
			continue
		}
		d.contents = append(d.contents, content)
		st.acked++
		st.commits++
	}
}

// managedSchema is the schema of the managed tables.
var managedSchema = arrow.NewSchema([]arrow.Field{
	{Name: "id", Type: arrow.PrimitiveTypes.Int64},
	{Name: "val", Type: arrow.BinaryTypes.String, Nullable: true},
	{Name: "vec", Type: arrow.FixedSizeListOf(4, arrow.PrimitiveTypes.Float32), Nullable: true},
}, nil)

// vectorOf is the vector stored with row id.
func vectorOf(id int64) [4]float32 {
	return [4]float32{float32(id % 13), float32(id % 7), float32(id % 3), 1}
}

// managedRecord returns the rows with the given ids and values.
func managedRecord(rows map[int64]string) arrow.RecordBatch {
	ids := array.NewInt64Builder(memory.DefaultAllocator)
	vals := array.NewStringBuilder(memory.DefaultAllocator)
	vecs := array.NewFixedSizeListBuilder(memory.DefaultAllocator, 4, arrow.PrimitiveTypes.Float32)
	elems := vecs.ValueBuilder().(*array.Float32Builder)
	for _, id := range slices.Sorted(maps.Keys(rows)) {
		ids.Append(id)
		vals.Append(rows[id])
		vecs.Append(true)
		v := vectorOf(id)
		elems.AppendValues(v[:], nil)
	}
	return array.NewRecordBatch(managedSchema, []arrow.Array{ids.NewArray(), vals.NewArray(), vecs.NewArray()}, int64(len(rows)))
}

// managedWorker inserts, updates and deletes rows of its own managed
// table, tags its versions and builds indexes on it.
type managedWorker struct {
	id       []string
	versions map[int64]map[int64]string // rows (id → val) of each version
	latest   int64
	verified int64 // versions up to here were checked after a restart
	nextID   int64
	tags     map[string]int64
	indexes  map[string]bool
	seq      int
	newAcks  int
	// newKinds counts the writes acknowledged since the last check by
	// kind, and what optimizes did.
	newKinds map[string]int
	// What was in flight at the kill: a data write (with the rows it
	// makes), a tag or an index.
	pendingRows  map[int64]string
	pendingTag   string
	pendingIndex string
	// branches are the branches made of the table; pendingBranch one
	// whose creation was in flight at the kill.
	branches      map[string]*branchModel
	pendingBranch *pendingBranch
	// optimized is set with pendingRows when what may have made a
	// version is an optimize, and compacted when that optimize was
	// acknowledged (the worker did not learn its version before the
	// kill): the cleanup may have removed every version before the one
	// it made.
	optimized, compacted bool
}

// managedIndexes are the indexes the worker builds, in order: a scalar, a
// full-text and a vector index (whose build is a background job).
var managedIndexes = []apiclient.CreateTableIndexRequest{
	{Name: ptr("id_idx"), Column: "id", IndexType: "BTREE"},
	{Name: ptr("val_idx"), Column: "val", IndexType: "INVERTED"},
	{Name: ptr("vec_idx"), Column: "vec", IndexType: "IVF_FLAT", NumPartitions: ptr(2)},
}

func ptr[T any](v T) *T { return &v }

func newManagedWorker(name string) *managedWorker {
	return &managedWorker{id: []string{name}, versions: map[int64]map[int64]string{}, tags: map[string]int64{}, indexes: map[string]bool{}}
}

func (w *managedWorker) setup(t *testing.T, c *crashConn) {
	t.Helper()
	rows := map[int64]string{}
	for ; w.nextID < 20; w.nextID++ {
		rows[w.nextID] = fmt.Sprintf("row %d", w.nextID)
	}
	res, err := c.c.CreateTable(t.Context(), w.id, managedSchema, []arrow.RecordBatch{managedRecord(rows)}, nil)
	if err != nil {
		t.Fatal(err)
	}
	w.latest = res.Version
	w.versions[w.latest] = rows
}

func (w *managedWorker) run(ctx context.Context, t *testing.T, c *crashConn, srv *crashServer, r *rand.Rand) {
	for ctx.Err() == nil {
		w.seq++
		rows := maps.Clone(w.versions[w.latest])
		var res *client.WriteResult
		var err error
		var what string
		switch k := r.IntN(26); {
		case k < 8:
			add := map[int64]string{}
			for range 1 + r.IntN(40) {
				add[w.nextID] = fmt.Sprintf("row %d", w.nextID)
				w.nextID++
			}
			maps.Copy(rows, add)
			what = fmt.Sprintf("insert of %d rows", len(add))
			res, err = c.c.Insert(ctx, w.id, managedSchema, []arrow.RecordBatch{managedRecord(add)}, "")
		case k < 13:
			mod, rem := int64(2+r.IntN(6)), int64(r.IntN(2))
			val := fmt.Sprintf("update %d", w.seq)
			for id := range rows {
				if id%mod == rem {
					rows[id] = val
				}
			}
			what = "update"
			res, err = c.c.Update(ctx, w.id, [][2]string{{"val", "'" + val + "'"}}, fmt.Sprintf("id %% %d = %d", mod, rem))
		case k < 16:
			mod, rem := int64(5+r.IntN(10)), int64(r.IntN(5))
			for id := range rows {
				if id%mod == rem {
					delete(rows, id)
				}
			}
			what = "delete"
			res, err = c.c.Delete(ctx, w.id, fmt.Sprintf("id %% %d = %d", mod, rem))
		case k < 18:
			name := fmt.Sprintf("tag%d", w.seq)
			_, err = c.c.CreateTableTag(ctx, w.id, name, w.latest, "")
			switch checkOutcome(t, srv, "tag create", err) {
			case acked:
				w.tags[name] = w.latest
				w.acked("tag", 1)
				continue
			case uncertain:
				w.pendingTag = name
			}
			return
		case k < 20:
			if len(w.indexes) == len(managedIndexes) {
				continue
			}
			req := managedIndexes[len(w.indexes)]
			var resp *apiclient.CreateTableIndexHTTPResponse
			resp, err = c.api.CreateTableIndexWithResponse(ctx, w.id[0], &apiclient.CreateTableIndexParams{}, req)
			if err == nil && resp.StatusCode() != 200 {
				t.Errorf("create index %s was refused: %d %s", *req.Name, resp.StatusCode(), resp.Body)
				return
			}
			switch checkOutcome(t, srv, "create index "+*req.Name, err) {
			case acked:
				w.indexes[*req.Name] = true
				w.acked("index", 1)
				continue
			case uncertain:
				w.pendingIndex = *req.Name
			}
			return
		case k < 22:
			what = "merge_insert"
			res, err = w.mergeInsert(ctx, c, r, rows)
		case k < 24:
			if w.optimize(ctx, t, c, srv, rows) {
				continue
			}
			return
		default:
			if w.branchWrite(ctx, t, c, srv, r) {
				continue
			}
			return
		}
		switch checkOutcome(t, srv, what, err) {
		case acked:
			if res.Version != w.latest && res.Version != w.latest+1 {
				t.Errorf("%s of %q made version %d after version %d", what, w.id, res.Version, w.latest)
				return
			}
			if res.Version == w.latest && !maps.Equal(rows, w.versions[w.latest]) {
				t.Errorf("%s of %q changed rows without a new version", what, w.id)
				return
			}
			w.latest = res.Version
			w.versions[w.latest] = rows
			w.acked(strings.Fields(what)[0], 1)
		case uncertain:
			w.pendingRows = rows
			return
		case refused:
			return
		}
	}
}

// rowsAt returns the rows (id → val) of version v of table id, checking
// each row's vector.
func rowsAt(t *testing.T, c *crashConn, id []string, v int64) (map[int64]string, error) {
	return queryRows(t, c.c, id, &v, fmt.Sprintf("version %d", v))
}

// queryRows returns the rows (id → val) of version v of table id (nil:
// the latest) on cl's branch, checking each row's vector; at names what
// is read in errors.
func queryRows(t *testing.T, cl *client.Client, id []string, v *int64, at string) (map[int64]string, error) {
	res, err := cl.Query(t.Context(), id, client.QueryRequest{Version: v})
	if err != nil {
		return nil, err
	}
	out := map[int64]string{}
	for _, rec := range res.Batches {
		idx := func(name string) arrow.Array { return rec.Column(rec.Schema().FieldIndices(name)[0]) }
		ids, vals := idx("id").(*array.Int64), idx("val").(*array.String)
		var vecs *array.Float32
		if vc := rec.Schema().FieldIndices("vec"); len(vc) > 0 {
			vecs = rec.Column(vc[0]).(*array.FixedSizeList).ListValues().(*array.Float32)
		}
		for i := range ids.Len() {
			rowID := ids.Value(i)
			if _, dup := out[rowID]; dup {
				return nil, fmt.Errorf("%s holds id %d twice", at, rowID)
			}
			out[rowID] = vals.Value(i)
			if vecs != nil {
				want := vectorOf(rowID)
				if got := vecs.Float32Values()[4*i : 4*i+4]; !slices.Equal(got, want[:]) {
					return nil, fmt.Errorf("%s: row %d has vector %v, want %v", at, rowID, got, want)
				}
			}
		}
	}
	return out, nil
}

// latestVersion returns the latest version of managed table id.
func latestVersion(t *testing.T, c *crashConn, id []string) int64 {
	t.Helper()
	d, err := c.c.DescribeTable(t.Context(), id, nil)
	if err != nil || d.Version == nil {
		t.Fatalf("describe %q: %+v %v", id, d, err)
	}
	return *d.Version
}

func (w *managedWorker) verify(t *testing.T, c *crashConn, st *crashStats) {
	st.acked += w.newAcks
	st.addKinds(w.newKinds)
	w.newAcks, w.newKinds = 0, nil
	latest := latestVersion(t, c, w.id)
	a := w.latest
	if latest != a && (w.pendingRows == nil || latest != a+1) {
		t.Errorf("%q is at version %d; %d acknowledged, a write pending: %v", w.id, latest, a, w.pendingRows != nil)
		return
	}
	if w.pendingRows != nil {
		if !w.compacted {
			st.uncertain++
		}
		if latest == a+1 {
			if !w.compacted {
				st.applied++
			}
			w.versions[latest], w.latest = w.pendingRows, latest
		}
		if w.optimized {
			w.forgetUntagged(w.latest)
		}
		w.pendingRows, w.optimized, w.compacted = nil, false, false
	}
	for _, v := range w.versionsToCheck(latest) {
		rows, err := rowsAt(t, c, w.id, v)
		switch {
		case err != nil:
			t.Errorf("%q version %d: %v", w.id, v, err)
		case !maps.Equal(rows, w.versions[v]):
			t.Errorf("%q version %d holds %d rows, want %d: %s", w.id, v, len(rows), len(w.versions[v]), diffRows(rows, w.versions[v]))
		}
	}
	w.verified = latest
	w.verifyBranches(t, c, st)
	if w.pendingTag != "" {
		st.uncertain++
		if tag, err := c.c.GetTableTag(t.Context(), w.id, w.pendingTag); err == nil {
			st.applied++
			w.tags[w.pendingTag] = tag.Version
		} else if store.ErrorCode(err) != store.CodeTableTagNotFound {
			t.Errorf("tag %s of %q: %v", w.pendingTag, w.id, err)
		}
		w.pendingTag = ""
	}
	for name, v := range w.tags {
		tag, err := c.c.GetTableTag(t.Context(), w.id, name)
		if err != nil || tag.Version != v {
			t.Errorf("tag %s of %q: %+v %v, want version %d", name, w.id, tag, err, v)
		}
	}
	listed := w.listIndexes(t, c)
	if w.pendingIndex != "" {
		st.uncertain++
		if _, ok := listed[w.pendingIndex]; ok {
			st.applied++
			w.indexes[w.pendingIndex] = true
		}
		w.pendingIndex = ""
	}
	for name := range w.indexes {
		if _, ok := listed[name]; !ok {
			t.Errorf("index %s of %q is gone (listed: %v)", name, w.id, listed)
		}
	}
	if len(listed) != len(w.indexes) {
		t.Errorf("%q lists indexes %v, want %v", w.id, listed, w.indexes)
	}
}

// listIndexes returns the status of each index of the table, by name.
func (w *managedWorker) listIndexes(t *testing.T, c *crashConn) map[string]string {
	t.Helper()
	resp, err := c.api.ListTableIndicesWithResponse(t.Context(), w.id[0], &apiclient.ListTableIndicesParams{}, apiclient.ListTableIndicesRequest{})
	if err != nil || resp.JSON200 == nil {
		t.Fatalf("list indexes of %q: %v %s", w.id, err, resp.Body)
	}
	out := map[string]string{}
	for _, ix := range resp.JSON200.Indexes {
		out[ix.IndexName] = ix.Status
	}
	return out
}

// waitIndexes waits until every index of the table is built: an index
// build a kill interrupted resumes after the restart.
func (w *managedWorker) waitIndexes(t *testing.T, c *crashConn) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for {
		listed := w.listIndexes(t, c)
		building := false
		for name, status := range listed {
			switch status {
			case store.IndexSucceeded:
			case store.IndexBuilding:
				building = true
			default:
				t.Fatalf("index %s of %q is %s", name, w.id, status)
			}
		}
		if !building {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("indexes of %q still building after 2 minutes: %v", w.id, listed)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// diffRows describes how got differs from want.
func diffRows(got, want map[int64]string) string {
	var b strings.Builder
	n := 0
	for _, id := range slices.Sorted(maps.Keys(want)) {
		if g, ok := got[id]; !ok || g != want[id] {
			if n++; n <= 5 {
				fmt.Fprintf(&b, "id %d: got %q (present %v), want %q; ", id, g, ok, want[id])
			}
		}
	}
	for _, id := range slices.Sorted(maps.Keys(got)) {
		if _, ok := want[id]; !ok {
			if n++; n <= 10 {
				fmt.Fprintf(&b, "id %d: unexpected; ", id)
			}
		}
	}
	return fmt.Sprintf("%d differences: %s", n, b.String())
}

// hotTable is one managed table that several workers append to at once:
// each version must add exactly the rows of one insert.
type hotTable struct {
	id       []string
	mu       sync.Mutex
	batches  []*hotBatch
	next     int64          // the number of the next insert
	verified int64          // the last version checked
	rows     map[int64]bool // the rows of that version
	newAcks  int
}

// hotBatch is one insert into the hot table.
type hotBatch struct {
	ids     []int64
	version int64 // the version its answer named; 0 while pending
	pending bool
	found   bool // seen at its version by the last check
}

func (h *hotTable) setup(t *testing.T, c *crashConn) {
	t.Helper()
	h.id = []string{"hot"}
	res, err := c.c.CreateTable(t.Context(), h.id, managedSchema, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	h.verified = res.Version
	resp, err := c.api.CreateTableIndexWithResponse(t.Context(), h.id[0], &apiclient.CreateTableIndexParams{}, managedIndexes[0])
	if err != nil || resp.StatusCode() != 200 {
		t.Fatalf("index on hot: %v %s", err, resp.Body)
	}
}

// hotWorker is one of the workers appending to the hot table.
type hotWorker struct{ h *hotTable }

func (w *hotWorker) run(ctx context.Context, t *testing.T, c *crashConn, srv *crashServer, r *rand.Rand) {
	for ctx.Err() == nil {
		b := &hotBatch{}
		rows := map[int64]string{}
		w.h.mu.Lock()
		w.h.next++
		base := w.h.next << 8
		w.h.mu.Unlock()
		for i := range 1 + r.IntN(30) {
			rows[base+int64(i)] = "hot"
			b.ids = append(b.ids, base+int64(i))
		}
		res, err := c.c.Insert(ctx, w.h.id, managedSchema, []arrow.RecordBatch{managedRecord(rows)}, "")
		o := checkOutcome(t, srv, "insert into hot", err)
		w.h.mu.Lock()
		switch o {
		case acked:
			b.version = res.Version
			w.h.batches = append(w.h.batches, b)
			w.h.newAcks++
		case uncertain:
			b.pending = true
			w.h.batches = append(w.h.batches, b)
		}
		w.h.mu.Unlock()
		if o != acked {
			return
		}
	}
}

// verify is done by the hot table, once for both workers.
func (w *hotWorker) verify(*testing.T, *crashConn, *crashStats) {}

func (h *hotTable) verify(t *testing.T, c *crashConn, st *crashStats) {
	st.acked += h.newAcks
	h.newAcks = 0
	latest := latestVersion(t, c, h.id)
	byVersion := map[int64]*hotBatch{}
	for _, b := range h.batches {
		if !b.pending && b.version > h.verified {
			if byVersion[b.version] != nil {
				t.Errorf("two inserts into hot were answered with version %d", b.version)
			}
			byVersion[b.version] = b
		}
	}
	prev := h.rows
	for v := h.verified + 1; v <= latest; v++ {
		rows, err := rowsAt(t, c, h.id, v)
		if err != nil {
			t.Errorf("hot version %d: %v", v, err)
			return
		}
		cur := map[int64]bool{}
		var added []int64
		for id := range rows {
			cur[id] = true
			if !prev[id] {
				added = append(added, id)
			}
		}
		if len(cur) != len(prev)+len(added) {
			t.Errorf("hot version %d lost rows of version %d", v, v-1)
		}
		slices.Sort(added)
		b := byVersion[v]
		if b == nil {
			// Only an insert without an answer can have made it.
			for _, p := range h.batches {
				if p.pending && !p.found && slices.Equal(slices.Sorted(slices.Values(p.ids)), added) {
					b = p
				}
			}
		}
		switch {
		case b == nil:
			t.Errorf("hot version %d added %d rows that no one insert sent", v, len(added))
		case !slices.Equal(slices.Sorted(slices.Values(b.ids)), added):
			t.Errorf("hot version %d added %d rows; the insert answered with it sent %d", v, len(added), len(b.ids))
		default:
			b.found = true
		}
		prev = cur
	}
	for _, b := range h.batches {
		if !b.pending && b.version > h.verified && !b.found {
			t.Errorf("the insert into hot answered with version %d is missing", b.version)
		}
	}
	for _, b := range h.batches {
		if b.pending {
			st.uncertain++
			if b.found {
				st.applied++
			}
		}
	}
	// Every insert is now accounted for, at a version up to latest.
	h.batches, h.verified, h.rows = nil, latest, prev
	if n, err := c.c.CountRows(t.Context(), h.id, "id > 0", nil); err != nil || n != int64(len(prev)) {
		t.Errorf("hot counts %d rows (%v), want %d", n, err, len(prev))
	}
}
