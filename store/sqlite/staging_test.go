package sqlite

import (
	"bufio"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/lancens/lancens/store"
)

// testChunk is the chunk size of the staged-write tests: a write of a few
// dozen rows spans many chunks.
const testChunk = 10

var stagedSchema = arrow.NewSchema([]arrow.Field{
	{Name: "id", Type: arrow.PrimitiveTypes.Int64},
	{Name: "text", Type: arrow.BinaryTypes.String, Nullable: true},
	{Name: "labels", Type: arrow.ListOf(arrow.BinaryTypes.String), Nullable: true},
	{Name: "vec", Type: arrow.FixedSizeListOf(4, arrow.PrimitiveTypes.Float32), Nullable: true},
}, nil)

// rowsData returns n rows with ids from `from` on: text "<word> row <id>",
// labels word and l<id mod 3>, and a vector derived from the id, in two
// batches (slices of one record, so offsets are exercised).
func rowsData(from, n int, word string) store.Data {
	return store.NewData(stagedSchema, rowsBatches(from, n, word)...)
}

// rowsBatches returns the batches of rowsData.
func rowsBatches(from, n int, word string) []arrow.RecordBatch {
	b := array.NewRecordBuilder(memory.DefaultAllocator, stagedSchema)
	defer b.Release()
	lb := b.Field(2).(*array.ListBuilder)
	vb := b.Field(3).(*array.FixedSizeListBuilder)
	for i := from; i < from+n; i++ {
		b.Field(0).(*array.Int64Builder).Append(int64(i))
		b.Field(1).(*array.StringBuilder).Append(fmt.Sprintf("%s row %d", word, i))
		lb.Append(true)
		lb.ValueBuilder().(*array.StringBuilder).AppendValues([]string{word, fmt.Sprint("l", i%3)}, nil)
		vb.Append(true)
		vb.ValueBuilder().(*array.Float32Builder).AppendValues([]float32{float32(i), float32(i % 7), float32(len(word)), 1}, nil)
	}
	rec := b.NewRecordBatch()
	cut := int64(n / 3)
	return []arrow.RecordBatch{rec.NewSlice(0, cut), rec.NewSlice(cut, int64(n))}
}

// openStaged opens a database whose writes stage in chunks of chunkRows.
func openStaged(t *testing.T, path string, chunkRows int) *DB {
	t.Helper()
	db, err := Open(context.Background(), path, Options{Synchronous: "NORMAL", WriteChunkRows: chunkRows})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// render lists the rows of a result as text, a row a line.
func render(res *store.Result) []string {
	out := []string{}
	for _, b := range res.Batches {
		for i := range int(b.NumRows()) {
			var sb strings.Builder
			for j, col := range b.Columns() {
				fmt.Fprintf(&sb, "%s=%s ", b.ColumnName(j), col.ValueStr(i))
			}
			out = append(out, sb.String())
		}
	}
	return out
}

// query runs q on table id. A query the table has no index for answers
// its error code, so tables with and without indexes compare.
func query(t *testing.T, db *DB, id string, q store.Query) []string {
	t.Helper()
	res, err := db.Query(t.Context(), []string{id}, q)
	if code := store.ErrorCode(err); code == store.CodeInvalidInput {
		return []string{fmt.Sprint("error code ", code)}
	}
	if err != nil {
		t.Fatalf("query %s: %v", id, err)
	}
	return render(res)
}

// ids returns the ids a query finds, in order.
func ids(t *testing.T, db *DB, id string, q store.Query) []string {
	q.Projection = store.Projection{Columns: []string{"id"}}
	return query(t, db, id, q)
}

func textQuery(terms string) store.Query {
	return store.Query{Limit: 1000, Text: &store.TextSearch{Query: store.FtsQuery{Match: &store.FtsMatch{Terms: terms}}}}
}

// state is what readers see of a table: its latest version, every row
// with its row id, and what its indexes find.
func state(t *testing.T, db *DB, id string) string {
	t.Helper()
	v, err := db.DescribeVersion(t.Context(), []string{id}, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	d, err := db.Describe(t.Context(), []string{id}, nil)
	if err != nil {
		t.Fatal(err)
	}
	st, err := db.Stats(t.Context(), []string{id})
	if err != nil {
		t.Fatal(err)
	}
	parts := []string{
		fmt.Sprintf("version %d rows %d deleted %d fragments %d stats %+v", v.Version, d.NumRows, d.Deleted, d.Fragments, *st),
		strings.Join(query(t, db, id, store.Query{WithRowID: true}), "\n"),
		strings.Join(query(t, db, id, textQuery("staged zebra")), "\n"),
		strings.Join(ids(t, db, id, store.Query{Filter: "array_has_any(labels, ['staged', 'zebra'])"}), "\n"),
		strings.Join(ids(t, db, id, store.Query{Filter: "id >= 40"}), "\n"),
		strings.Join(query(t, db, id, store.Query{Limit: 5, Vector: &store.VectorSearch{Vectors: [][]float32{{45, 3, 5, 1}}}}), "\n"),
	}
	return strings.Join(parts, "\n--\n")
}

// withIndexes creates table id from data with full-text, label-list, btree
// and vector indexes, the vector index built.
func withIndexes(t *testing.T, db *DB, id string, data store.Data) {
	t.Helper()
	ctx := t.Context()
	if _, _, err := db.CreateTable(ctx, []string{id}, store.NewTable{Data: data}); err != nil {
		t.Fatal(err)
	}
	for _, spec := range []store.IndexSpec{
		{Column: "text", Type: store.IndexInverted},
		{Column: "labels", Type: store.IndexLabelList},
		{Column: "id", Type: store.IndexBTree},
		{Column: "vec", Type: store.IndexIVFFlat, Vector: store.VectorIndexParams{NumPartitions: 2}},
	} {
		if _, err := db.CreateIndex(ctx, []string{id}, spec); err != nil {
			t.Fatal(err)
		}
	}
	job, err := db.ClaimJob(ctx, store.JobBuildIndex)
	if err != nil || job == nil {
		t.Fatalf("claim index build: %v %v", job, err)
	}
	var build store.BuildIndex
	if err := json.Unmarshal(job.Payload, &build); err != nil {
		t.Fatal(err)
	}
	if err := db.BuildIndex(ctx, build); err != nil {
		t.Fatal(err)
	}
	if err := db.FinishJob(ctx, job.TransactionID, nil); err != nil {
		t.Fatal(err)
	}
}

// stagedWrites are the writes that stage their rows, on table "t" made by
// withIndexes from rowsData(0, 50, "base"); each adds rows with the word
// "staged".
var stagedWrites = []struct {
	name  string
	table string // the table the write changes
	run   func(ctx context.Context, db *DB) (store.WriteResult, error)
}{
	{"Append", "t", func(ctx context.Context, db *DB) (store.WriteResult, error) {
		return db.Insert(ctx, []string{"t"}, store.InsertAppend, rowsData(100, 95, "staged"))
	}},
	{"Overwrite", "t", func(ctx context.Context, db *DB) (store.WriteResult, error) {
		return db.Insert(ctx, []string{"t"}, store.InsertOverwrite, rowsData(100, 95, "staged"))
	}},
	{"OverwriteNewSchema", "t", func(ctx context.Context, db *DB) (store.WriteResult, error) {
		schema := arrow.NewSchema(append(slices.Clone(stagedSchema.Fields()), arrow.Field{Name: "extra", Type: arrow.PrimitiveTypes.Int32, Nullable: true}), nil)
		var batches []arrow.RecordBatch
		for _, b := range rowsBatches(100, 95, "staged") {
			extra := array.MakeArrayOfNull(memory.DefaultAllocator, arrow.PrimitiveTypes.Int32, int(b.NumRows()))
			batches = append(batches, array.NewRecordBatch(schema, append(slices.Clone(b.Columns()), extra), b.NumRows()))
		}
		return db.Insert(ctx, []string{"t"}, store.InsertOverwrite, store.NewData(schema, batches...))
	}},
	{"Merge", "t", func(ctx context.Context, db *DB) (store.WriteResult, error) {
		return db.MergeInsert(ctx, []string{"t"}, store.Merge{On: []string{"id"}, WhenMatchedUpdateAll: true,
			WhenNotMatchedInsertAll: true, WhenNotMatchedBySourceDeleteFilter: "id < 5", Data: rowsData(30, 95, "staged")})
	}},
	{"CreateOverwrite", "t", func(ctx context.Context, db *DB) (store.WriteResult, error) {
		_, res, err := db.CreateTable(ctx, []string{"t"}, store.NewTable{Mode: store.ModeOverwrite, Data: rowsData(100, 95, "staged"),
			Properties: map[string]string{"k": "v"}})
		return res, err
	}},
	{"Create", "fresh", func(ctx context.Context, db *DB) (store.WriteResult, error) {
		_, res, err := db.CreateTable(ctx, []string{"fresh"}, store.NewTable{Data: rowsData(100, 95, "staged")})
		return res, err
	}},
}

// TestStagedMatchesSingle runs every staged write, and writes after it,
// against a database that writes in one transaction and one that stages
// in chunks of 10 rows, and checks that readers see the same: rows, row
// ids, versions, statistics, and what the full-text, label-list, scalar
// and vector indexes find (now and at every earlier version).
func TestStagedMatchesSingle(t *testing.T) {
	for _, w := range stagedWrites {
		t.Run(w.name, func(t *testing.T) {
			dbs := map[string]*DB{
				"single": openStaged(t, filepath.Join(t.TempDir(), "single.db"), 1000),
				"staged": openStaged(t, filepath.Join(t.TempDir(), "staged.db"), testChunk),
			}
			seen := map[string][]string{}
			for name, db := range dbs {
				ctx := t.Context()
				withIndexes(t, db, "t", rowsData(0, 50, "base"))
				res, err := w.run(ctx, db)
				if err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				res.TransactionID = ""
				after, err := db.Insert(ctx, []string{w.table}, store.InsertAppend, rowsData(300, 25, "zebra"))
				if err != nil {
					t.Fatalf("%s: insert after: %v", name, err)
				}
				after.TransactionID = ""
				views := []string{fmt.Sprintf("%+v %+v", res, after)}
				for v := range after.Version {
					views = append(views, strings.Join(query(t, db, w.table, store.Query{Version: &[]int64{v + 1}[0], WithRowID: true}), "\n"))
				}
				views = append(views, state(t, db, w.table))
				seen[name] = views
			}
			if !slices.Equal(seen["single"], seen["staged"]) {
				for i := range seen["single"] {
					if seen["single"][i] != seen["staged"][i] {
						t.Fatalf("view %d differs:\nsingle:\n%s\nstaged:\n%s", i, seen["single"][i], seen["staged"][i])
					}
				}
			}
			if !strings.Contains(seen["staged"][len(seen["staged"])-1], "staged row 110") {
				t.Fatal("the staged rows are not visible after the write")
			}
		})
	}
}

// garbage counts what a failed staged write could leave in table id's
// rows: rows past the latest version, index entries of rows that do not
// exist, and staging tables.
func garbage(t *testing.T, db *DB, id string) string {
	t.Helper()
	ctx := t.Context()
	var rowID, latest int64
	// queryRow runs a one-row query in a read and scans its values.
	queryRow := func(q string, args ...any) scanner {
		return scanner(func(dst ...any) error {
			return db.read(ctx, func(tx *Tx) error { return tx.QueryRow(ctx, q, args...).Scan(dst...) })
		})
	}
	if err := queryRow(`SELECT t.id, max(v.version) FROM tables t JOIN table_versions v ON v.table_id = t.id
		WHERE t.name = ?`, id).Scan(&rowID, &latest); err != nil {
		t.Fatal(err)
	}
	rows := fmt.Sprintf("rows_%d", rowID)
	count := func(q string, args ...any) int {
		var n int
		if err := queryRow(q, args...).Scan(&n); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		return n
	}
	staged := count(`SELECT count(*) FROM `+rows+` WHERE _from > ? AND _to <> ?`, latest, tombstoneVersion)
	orphans := 0
	for _, ix := range []struct{ typ, col string }{{store.IndexInverted, "rowid"}, {store.IndexLabelList, "row"}} {
		var n int64
		if err := queryRow(`SELECT id FROM table_indexes WHERE table_id = ? AND index_type = ?`, rowID, ix.typ).Scan(&n); err != nil {
			t.Fatal(err)
		}
		orphans += count(fmt.Sprintf(`SELECT count(*) FROM %s_i%d WHERE %s NOT IN (SELECT _rowid FROM %s)`, rows, n, ix.col, rows))
	}
	staging := count(`SELECT count(*) FROM sqlite_schema WHERE type = 'table' AND name LIKE 'staging\_%' ESCAPE '\'`)
	return fmt.Sprintf("staged rows %d, orphan index entries %d, staging tables %d", staged, orphans, staging)
}

// scanner scans the values of a row into dst.
type scanner func(dst ...any) error

// Scan scans the row's values into dst.
func (s scanner) Scan(dst ...any) error { return s(dst...) }

const noGarbage = "staged rows 0, orphan index entries 0, staging tables 0"

// TestStagedWriteFailure fails every staged write in the middle, by an
// error and by cancelling its request, and checks that nothing of it is
// visible or left behind, and that the table takes writes again, indexed
// right (the full-text postings searched during the failed write included).
func TestStagedWriteFailure(t *testing.T) {
	injected := errors.New("injected failure")
	for _, w := range stagedWrites {
		for _, cancel := range []bool{false, true} {
			name := w.name + "/Error"
			if cancel {
				name = w.name + "/Cancel"
			}
			t.Run(name, func(t *testing.T) {
				db := openStaged(t, filepath.Join(t.TempDir(), "lancens.db"), testChunk)
				withIndexes(t, db, "t", rowsData(0, 50, "base"))
				before := state(t, db, "t")
				ctx, stop := context.WithCancel(t.Context())
				defer stop()
				db.staging.hooks.chunk = func(n int) error {
					switch n {
					case 2:
						// Searching now loads the postings of the rows
						// staged so far.
						if got := ids(t, db, "t", textQuery("staged")); len(got) != 0 {
							t.Errorf("staged rows visible to a search: %v", got)
						}
					case 5:
						if cancel {
							stop()
							return nil
						}
						return injected
					}
					return nil
				}
				_, err := w.run(ctx, db)
				if want := map[bool]error{false: injected, true: context.Canceled}[cancel]; !errors.Is(err, want) {
					t.Fatalf("write failed with %v, want %v", err, want)
				}
				db.staging.hooks.chunk = nil
				if got := state(t, db, "t"); got != before {
					t.Fatalf("after the failed write readers see\n%s\nwant\n%s", got, before)
				}
				if _, err := db.DescribeTable(t.Context(), []string{"fresh"}); store.ErrorCode(err) != store.CodeTableNotFound {
					t.Fatalf("describe the table a failed create made: %v", err)
				}
				if got := garbage(t, db, "t"); got != noGarbage {
					t.Fatal(got)
				}
				// The table takes writes again, and its indexes find them.
				if _, err := db.Insert(t.Context(), []string{"t"}, store.InsertAppend, rowsData(300, 25, "zebra")); err != nil {
					t.Fatal(err)
				}
				if got := ids(t, db, "t", textQuery("zebra")); len(got) != 25 {
					t.Fatalf("full-text search finds %d of 25 new rows: %v", len(got), got)
				}
				if got := ids(t, db, "t", store.Query{Filter: "array_has_any(labels, ['zebra'])"}); len(got) != 25 {
					t.Fatalf("label filter finds %d of 25 new rows", len(got))
				}
				if got := ids(t, db, "t", textQuery("staged")); len(got) != 0 {
					t.Fatalf("full-text search finds rows of the failed write: %v", got)
				}
			})
		}
	}
}

// TestStagedWriteInterleaves runs a staged insert and, each time one of
// its chunks has committed, has another goroutine create a namespace,
// insert into another table and read both tables: those writes commit
// while the staged insert is in progress, and readers never see part of it.
func TestStagedWriteInterleaves(t *testing.T) {
	db := openStaged(t, filepath.Join(t.TempDir(), "lancens.db"), testChunk)
	ctx := t.Context()
	withIndexes(t, db, "big", rowsData(0, 50, "base"))
	if _, _, err := db.CreateTable(ctx, []string{"other"}, store.NewTable{Data: rowsData(0, 5, "other")}); err != nil {
		t.Fatal(err)
	}
	before := state(t, db, "big")
	turn, done := make(chan int), make(chan error)
	go func() {
		for n := range turn {
			_, err := db.CreateNamespace(ctx, []string{fmt.Sprint("ns", n)}, store.ModeCreate, nil)
			if err == nil {
				_, err = db.Insert(ctx, []string{"other"}, store.InsertAppend, rowsData(100+n, 1, "other"))
			}
			done <- err
		}
	}()
	var chunks []int
	db.staging.hooks.chunk = func(n int) error {
		chunks = append(chunks, n)
		turn <- n
		if err := <-done; err != nil {
			return err
		}
		if got := state(t, db, "big"); got != before {
			t.Errorf("after chunk %d readers see\n%s", n, got)
		}
		if n, _, err := db.CountRows(ctx, []string{"other"}, nil, ""); err != nil || n != int64(5+len(chunks)) {
			t.Errorf("other has %d rows: %v", n, err)
		}
		return nil
	}
	res, err := db.Insert(ctx, []string{"big"}, store.InsertAppend, rowsData(100, 95, "staged"))
	close(turn)
	if err != nil {
		t.Fatal(err)
	}
	if want := []int{1, 2, 3, 4, 5, 6, 7, 8, 9}; !slices.Equal(chunks, want) {
		t.Fatalf("chunks %v, want %v", chunks, want)
	}
	if res.Inserted != 95 || res.Version != 2 {
		t.Fatalf("insert %+v", res)
	}
	names, _, err := db.ListNamespaces(ctx, nil, store.Page{})
	if err != nil || len(names) != len(chunks) {
		t.Fatalf("namespaces %v %v", names, err)
	}
	if n, _, err := db.CountRows(ctx, []string{"other"}, nil, ""); err != nil || n != int64(5+len(chunks)) {
		t.Fatalf("other has %d rows: %v", n, err)
	}
	if n, _, err := db.CountRows(ctx, []string{"big"}, nil, ""); err != nil || n != 145 {
		t.Fatalf("big has %d rows: %v", n, err)
	}
}

// TestStagedWriteSerialises checks that writes to a table a staged write
// holds wait for it and then see its rows: a delete, a second staged
// insert, and an index creation each start while a staged insert is half
// done.
func TestStagedWriteSerialises(t *testing.T) {
	db := openStaged(t, filepath.Join(t.TempDir(), "lancens.db"), testChunk)
	ctx := t.Context()
	if _, _, err := db.CreateTable(ctx, []string{"t"}, store.NewTable{Data: rowsData(0, 50, "base")}); err != nil {
		t.Fatal(err)
	}
	waiting := make(chan struct{}, 8)
	db.staging.hooks.waiting = func() { waiting <- struct{}{} }
	type result struct {
		name string
		res  store.WriteResult
		err  error
	}
	results := make(chan result, 3)
	started := false
	db.staging.hooks.chunk = func(n int) error {
		if n != 2 || started {
			return nil
		}
		started = true
		go func() {
			res, err := db.Delete(ctx, []string{"t"}, "id % 2 = 0")
			results <- result{"delete", res, err}
		}()
		go func() {
			_, err := db.CreateIndex(ctx, []string{"t"}, store.IndexSpec{Column: "text", Type: store.IndexInverted})
			results <- result{"index", store.WriteResult{}, err}
		}()
		go func() {
			res, err := db.Insert(ctx, []string{"t"}, store.InsertAppend, rowsData(200, 35, "second"))
			results <- result{"second", res, err}
		}()
		for range 3 {
			select {
			case <-waiting:
			case <-time.After(time.Minute):
				return errors.New("the other writes did not reach the held table")
			}
		}
		return nil
	}
	first, err := db.Insert(ctx, []string{"t"}, store.InsertAppend, rowsData(100, 95, "staged"))
	if err != nil {
		t.Fatal(err)
	}
	if first.Version != 2 {
		t.Fatalf("first insert made version %d", first.Version)
	}
	got := map[string]result{}
	for range 3 {
		r := <-results
		if r.err != nil {
			t.Fatalf("%s: %v", r.name, r.err)
		}
		got[r.name] = r
	}
	// The delete ran after the first insert: it saw its rows.
	if d := got["delete"].res; d.Version <= 2 || d.Deleted < 25+48 {
		t.Fatalf("delete %+v ran before the staged insert committed", d)
	}
	if s := got["second"].res; s.Version <= 2 || s.Inserted != 35 {
		t.Fatalf("second insert %+v", s)
	}
	if n, _, err := db.CountRows(ctx, []string{"t"}, nil, ""); err != nil || n != 50+95+35-got["delete"].res.Deleted {
		t.Fatalf("count %d %v", n, err)
	}
	if found := ids(t, db, "t", textQuery("staged")); len(found) == 0 {
		t.Fatal("the index made during the staged insert misses its rows")
	}
}

// TestStagedCleanupFailure makes removing a failed write's rows fail: the
// table stays held, a write to it answers ServiceUnavailable while the
// rows cannot be removed, and the first write after that removes them and
// goes on.
func TestStagedCleanupFailure(t *testing.T) {
	db := openStaged(t, filepath.Join(t.TempDir(), "lancens.db"), testChunk)
	ctx := t.Context()
	withIndexes(t, db, "t", rowsData(0, 50, "base"))
	before := state(t, db, "t")
	injected := errors.New("injected failure")
	diskFull := errors.New("disk full")
	db.staging.hooks.chunk = func(n int) error {
		if n == 3 {
			return injected
		}
		return nil
	}
	db.staging.hooks.cleanup = func() error { return diskFull }
	if _, err := db.Insert(ctx, []string{"t"}, store.InsertAppend, rowsData(100, 95, "staged")); !errors.Is(err, injected) {
		t.Fatalf("insert: %v", err)
	}
	if got := state(t, db, "t"); got != before {
		t.Fatalf("readers see\n%s", got)
	}
	// Other tables are not held.
	if _, _, err := db.CreateTable(ctx, []string{"other"}, store.NewTable{Data: rowsData(0, 5, "other")}); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Delete(ctx, []string{"t"}, "true"); store.ErrorCode(err) != store.CodeServiceUnavailable {
		t.Fatalf("delete while the rows cannot be removed: %v", err)
	}
	db.staging.hooks.cleanup = nil
	res, err := db.Insert(ctx, []string{"t"}, store.InsertAppend, rowsData(300, 25, "zebra"))
	if err != nil || res.Version != 2 {
		t.Fatalf("insert after the disk came back: %+v %v", res, err)
	}
	if got := garbage(t, db, "t"); got != noGarbage {
		t.Fatal(got)
	}
	if got := ids(t, db, "t", textQuery("zebra staged")); len(got) != 25 {
		t.Fatalf("full-text search finds %d rows, want the 25 new ones", len(got))
	}
}

// crashEnv names the database a TestStagedWriteCrash child writes to.
const crashEnv = "LANCENS_STAGED_CRASH_DB"

// TestStagedWriteCrash kills a process (SIGKILL) while it stages writes: an
// insert into an indexed table and the creation of a new table, each with
// chunks committed. Reopening the database removes what they staged; the
// table then takes writes and finds them through its indexes.
func TestStagedWriteCrash(t *testing.T) {
	if path := os.Getenv(crashEnv); path != "" {
		crashChild(path)
		return
	}
	path := filepath.Join(t.TempDir(), "lancens.db")
	db, err := Open(t.Context(), path, Options{WriteChunkRows: testChunk})
	if err != nil {
		t.Fatal(err)
	}
	withIndexes(t, db, "t", rowsData(0, 50, "base"))
	before := state(t, db, "t")
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}

	cmd := exec.Command(os.Args[0], "-test.run=^TestStagedWriteCrash$", "-test.count=1")
	cmd.Env = append(os.Environ(), crashEnv+"="+path)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	if err != nil || line != "staged\n" {
		t.Fatalf("the child did not stage its writes: %q %v", line, err)
	}

	// The child left staged rows and a staging table behind.
	raw, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(10000)&_pragma=query_only(ON)")
	if err != nil {
		t.Fatal(err)
	}
	var staged, staging int
	if err := raw.QueryRow(`SELECT (SELECT count(*) FROM rows_1 WHERE _from > 1),
		(SELECT count(*) FROM sqlite_schema WHERE type = 'table' AND name LIKE 'staging\_%' ESCAPE '\')`).Scan(&staged, &staging); err != nil {
		t.Fatal(err)
	}
	raw.Close()
	if staged != 3*testChunk || staging != 1 {
		t.Fatalf("the child left %d staged rows and %d staging tables", staged, staging)
	}

	db = openStaged(t, path, testChunk)
	if got := state(t, db, "t"); got != before {
		t.Fatalf("after the crash readers see\n%s\nwant\n%s", got, before)
	}
	if got := garbage(t, db, "t"); got != noGarbage {
		t.Fatal(got)
	}
	if _, err := db.DescribeTable(t.Context(), []string{"fresh"}); store.ErrorCode(err) != store.CodeTableNotFound {
		t.Fatalf("describe the table the crashed create made: %v", err)
	}
	if _, err := db.Insert(t.Context(), []string{"t"}, store.InsertAppend, rowsData(300, 25, "zebra")); err != nil {
		t.Fatal(err)
	}
	if got := ids(t, db, "t", textQuery("zebra staged")); len(got) != 25 {
		t.Fatalf("full-text search finds %d rows, want the 25 new ones", len(got))
	}
	if got := ids(t, db, "t", store.Query{Filter: "array_has_any(labels, ['zebra', 'staged'])"}); len(got) != 25 {
		t.Fatalf("label filter finds %d rows, want the 25 new ones", len(got))
	}
}

// crashChild stages an insert into table t and the creation of table
// fresh, each stopping after its third chunk, prints "staged" and waits to
// be killed.
func crashChild(path string) {
	ctx := context.Background()
	db, err := Open(ctx, path, Options{WriteChunkRows: testChunk})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	arrived := make(chan struct{})
	db.staging.hooks.chunk = func(n int) error {
		if n == 3 {
			arrived <- struct{}{}
			select {}
		}
		return nil
	}
	go db.Insert(ctx, []string{"t"}, store.InsertAppend, rowsData(100, 95, "staged"))
	go db.CreateTable(ctx, []string{"fresh"}, store.NewTable{Data: rowsData(100, 95, "staged")})
	<-arrived
	<-arrived
	fmt.Println("staged")
	select {}
}
