// Command makefixture writes the fixture of the conversion tests: a
// database made by the row store of lancens f365447 (fixture.db), and the
// answers that code gave, recorded as it made the database (answers/, and
// fixture.json saying what each answer is). It builds against f365447's
// tree, not the current one: make.sh copies it there and runs it.
//
//	go run ./cmd/makefixture -out DIR
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/lancens/lancens/store"
	"github.com/lancens/lancens/store/sqlite"
)

// Fixture is fixture.json: what the database holds and what f365447
// answered about it.
type Fixture struct {
	Tables []Table `json:"tables"`
	// Queries are answers to queries other than full scans.
	Queries []Query `json:"queries"`
}

// Table is one managed table.
type Table struct {
	ID []string `json:"id"`
	// Branches maps each branch ("main" too) to its versions, each to the
	// file of its rows (a full scan of the version).
	Branches map[string]map[int64]string `json:"branches"`
	Tags     map[string]int64            `json:"tags"`
	Indexes  []Index                     `json:"indexes"`
	View     bool                        `json:"view"`
	// Unconvertible says why the conversion must leave the table as it is.
	Unconvertible string `json:"unconvertible,omitempty"`
}

// Index is an index definition.
type Index struct {
	Name   string `json:"name"`
	Type   string `json:"type"`
	Column string `json:"column"`
}

// Query is one query and the file of its answer.
type Query struct {
	Table   []string    `json:"table"`
	Branch  string      `json:"branch,omitempty"`
	Query   store.Query `json:"query"`
	Answer  string      `json:"answer"`
	Comment string      `json:"comment"`
}

var (
	out   = flag.String("out", "", "directory to write fixture.db, fixture.json and answers/ into")
	clock = time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)
)

// now is the database's clock: a minute passes at every call, so that
// every version has its own time and the fixture is the same each run.
func now() time.Time {
	clock = clock.Add(time.Minute)
	return clock
}

func main() {
	flag.Parse()
	if *out == "" {
		log.Fatal("-out is required")
	}
	ctx := context.Background()
	dbPath := filepath.Join(*out, "fixture.db")
	for _, p := range []string{dbPath, dbPath + "-wal", dbPath + "-shm", filepath.Join(*out, "answers")} {
		if err := os.RemoveAll(p); err != nil {
			log.Fatal(err)
		}
	}
	db, err := sqlite.Open(ctx, dbPath, sqlite.Options{Now: now})
	if err != nil {
		log.Fatal(err)
	}
	f := &fixture{ctx: ctx, db: db, fx: &Fixture{}}
	f.build()
	f.record()
	if err := db.Close(); err != nil {
		log.Fatal(err)
	}
	b, err := json.MarshalIndent(f.fx, "", "  ")
	if err != nil {
		log.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(*out, "fixture.json"), append(b, '\n'), 0o644); err != nil {
		log.Fatal(err)
	}
}

type fixture struct {
	ctx context.Context
	db  *sqlite.DB
	fx  *Fixture
}

func check(err error) {
	if err != nil {
		log.Panic(err)
	}
}

func must[T any](v T, err error) T {
	check(err)
	return v
}

func batch(s *arrow.Schema, rows []map[string]any) arrow.RecordBatch {
	b, err := json.Marshal(rows)
	check(err)
	rec, _, err := array.RecordFromJSON(memory.DefaultAllocator, s, strings.NewReader(string(b)))
	check(err)
	return rec
}

func data(s *arrow.Schema, rows []map[string]any) store.Data {
	return store.Data{Schema: s, Batches: []arrow.RecordBatch{batch(s, rows)}}
}

var docsSchema = arrow.NewSchema([]arrow.Field{
	{Name: "id", Type: arrow.PrimitiveTypes.Int64},
	{Name: "text", Type: arrow.BinaryTypes.String, Nullable: true},
	{Name: "category", Type: arrow.BinaryTypes.String, Nullable: true},
	{Name: "tags", Type: arrow.ListOf(arrow.BinaryTypes.String), Nullable: true},
	{Name: "vector", Type: arrow.FixedSizeListOf(8, arrow.PrimitiveTypes.Float32), Nullable: true},
	{Name: "meta", Type: arrow.StructOf(
		arrow.Field{Name: "score", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
		arrow.Field{Name: "source", Type: arrow.BinaryTypes.String, Nullable: true},
		arrow.Field{Name: "inner", Type: arrow.StructOf(arrow.Field{Name: "n", Type: arrow.PrimitiveTypes.Int32, Nullable: true}), Nullable: true},
	), Nullable: true},
}, &docsMetadata)

var docsMetadata = arrow.NewMetadata([]string{"owner"}, []string{"fixture"})

var words = []string{"river", "mountain", "lake", "forest", "desert", "ocean", "valley", "glacier", "meadow", "canyon"}

// docRows returns deterministic rows ids [from, to).
func docRows(from, to int) []map[string]any {
	r := rand.New(rand.NewPCG(uint64(from), uint64(to)))
	var out []map[string]any
	for id := from; id < to; id++ {
		row := map[string]any{"id": id}
		if id%11 != 5 {
			row["text"] = fmt.Sprintf("%s %s %d", words[id%len(words)], words[(id*3)%len(words)], id)
		}
		if id%13 != 7 {
			row["category"] = []string{"alpha", "beta", "gamma"}[id%3]
		}
		if id%9 != 4 {
			row["tags"] = []string{words[id%len(words)], words[(id+1)%len(words)]}[:1+id%2]
		}
		if id%17 != 8 {
			v := make([]float32, 8)
			for i := range v {
				v[i] = float32(math.Round(r.Float64()*1000) / 1000)
			}
			row["vector"] = v
		}
		if id%6 != 1 {
			meta := map[string]any{"score": float64(id) / 4, "inner": map[string]any{"n": id * 3}}
			if id%4 != 0 {
				meta["source"] = "src-" + words[id%len(words)]
			}
			row["meta"] = meta
		}
		out = append(out, row)
	}
	return out
}

// renamedRows returns docRows with the columns the docs table has after
// version 7: category renamed kind, double_id added.
func renamedRows(from, to int) []map[string]any {
	rows := docRows(from, to)
	for _, row := range rows {
		row["kind"], row["double_id"] = row["category"], row["id"].(int)*2
		delete(row, "category")
	}
	return rows
}

func (f *fixture) build() {
	ctx, db := f.ctx, f.db
	must(db.CreateNamespace(ctx, []string{"fx"}, store.ModeCreate, map[string]string{"purpose": "fixture"}))
	docs := []string{"fx", "docs"}

	// main: v1 create, v2 insert, v3 update, v4 delete.
	must3(db.CreateTable(ctx, docs, store.NewTable{Data: data(docsSchema, docRows(0, 100)), Properties: map[string]string{"team": "search"}}))
	must(db.Insert(ctx, docs, store.InsertAppend, data(docsSchema, docRows(100, 140))))
	must(db.Update(ctx, docs, []store.ColumnUpdate{{Path: "text", Expr: "concat(text, ' (edited)')"}, {Path: "category", Expr: "'delta'"}}, "id % 7 = 0"))
	must(db.Delete(ctx, docs, "id % 10 = 3"))
	must(db.CreateTag(ctx, docs, "early", "", 2))
	// Indexes of every kind; the vector one is built by its job.
	for _, spec := range []store.IndexSpec{
		{Name: "id_idx", Column: "id", Type: store.IndexBTree},
		{Name: "category_idx", Column: "category", Type: store.IndexBitmap},
		{Name: "tags_idx", Column: "tags", Type: store.IndexLabelList},
		{Name: "text_idx", Column: "text", Type: store.IndexInverted},
		{Name: "vector_idx", Column: "vector", Type: store.IndexIVFPQ, Metric: "cosine", Vector: store.VectorIndexParams{NumPartitions: 2, NumSubVectors: 2}},
	} {
		must(db.CreateIndex(ctx, docs, spec))
	}
	f.runJobs()
	// v5 merge_insert: updates ids 5..15, inserts 200..209.
	src := append(docRows(5, 16), docRows(200, 210)...)
	for _, row := range src {
		row["text"] = fmt.Sprintf("merged %v", row["id"])
	}
	must(db.MergeInsert(ctx, docs, store.Merge{On: []string{"id"}, WhenMatchedUpdateAll: true, WhenNotMatchedInsertAll: true, Data: data(docsSchema, src)}))
	must(db.CreateTag(ctx, docs, "before-schema", "", 5))
	// v6 add a column, v7 rename one, v8 drop a nested field, v9 change
	// a column's type, v10 delete.
	must(db.AddColumns(ctx, docs, []store.NewColumn{{Name: "double_id", Expr: "id * 2"}}))
	renamed := "kind"
	must(db.AlterColumns(ctx, docs, []store.ColumnAlteration{{Path: "category", Rename: &renamed}}))
	// The dev branch forks from v7 and writes three versions; exp forks
	// from dev's second.
	must(db.CreateBranch(ctx, docs, "dev", "", ptr(int64(7))))
	dev := db.OnBranch("dev")
	devSchema := must(db.OnBranch("dev").Describe(ctx, docs, nil)).Schema
	must(dev.Insert(ctx, docs, store.InsertAppend, data(devSchema, renamedRows(300, 305))))
	must(dev.Update(ctx, docs, []store.ColumnUpdate{{Path: "text", Expr: "'on dev'"}}, "id < 30"))
	must(db.CreateBranch(ctx, docs, "exp", "dev", ptr(int64(9))))
	must(dev.Delete(ctx, docs, "id >= 300"))
	must(db.OnBranch("exp").Insert(ctx, docs, store.InsertAppend, data(devSchema, renamedRows(400, 402))))
	must(db.OnBranch("exp").Delete(ctx, docs, "id < 10"))
	must(db.DropColumns(ctx, docs, []string{"meta.source"}))
	must(db.AlterColumns(ctx, docs, []store.ColumnAlteration{{Path: "double_id", Type: arrow.PrimitiveTypes.Float64}}))
	must(db.Delete(ctx, docs, "id < 20"))
	must(db.CreateTag(ctx, docs, "v10", "", 10))
	// v11 restore v4, v12 insert.
	must(db.Restore(ctx, docs, 4))
	must(db.Insert(ctx, docs, store.InsertAppend, data(docsSchema, docRows(500, 503))))

	// A view of docs, refreshed twice.
	viewSchema := arrow.NewSchema([]arrow.Field{{Name: "id", Type: arrow.PrimitiveTypes.Int64}, {Name: "text", Type: arrow.BinaryTypes.String, Nullable: true}}, nil)
	must4(db.CreateView(ctx, []string{"fx", "docs_view"}, store.ViewDefinition{Kind: store.ViewQuery, SourceQuery: "SELECT id, text FROM docs WHERE id < 50",
		Source: docs, Query: store.Query{Filter: "id < 50", Projection: store.Projection{Columns: []string{"id", "text"}}}, Schema: viewSchema}, true))
	f.runJobs()
	must(db.Update(ctx, docs, []store.ColumnUpdate{{Path: "text", Expr: "'refreshed'"}}, "id = 21"))
	must(db.QueueRefresh(ctx, []string{"fx", "docs_view"}, nil))
	f.runJobs()

	f.buildTypes()

	// A table created with its schema only.
	must3(db.CreateTable(ctx, []string{"fx", "empty"}, store.NewTable{Data: store.Data{Schema: arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64}, {Name: "v", Type: arrow.FixedSizeListOf(2, arrow.PrimitiveTypes.Float32), Nullable: true}}, nil)}}))

	// A table in the root namespace, with a float16 vector index.
	plain := []string{"plain"}
	ps := arrow.NewSchema([]arrow.Field{{Name: "id", Type: arrow.PrimitiveTypes.Int32}, {Name: "v", Type: arrow.FixedSizeListOf(4, arrow.FixedWidthTypes.Float16)}}, nil)
	var prows []map[string]any
	for i := range 64 {
		prows = append(prows, map[string]any{"id": i, "v": []float64{float64(i%4) / 2, float64(i%5) / 4, float64(i%3) / 2, 1}})
	}
	must3(db.CreateTable(ctx, plain, store.NewTable{Data: data(ps, prows)}))
	must(db.CreateIndex(ctx, plain, store.IndexSpec{Name: "v_idx", Column: "v", Type: store.IndexIVFFlat, Vector: store.VectorIndexParams{NumPartitions: 2}}))
	f.runJobs()
	must(db.Delete(ctx, plain, "id % 8 = 0"))

	// A table with a map column, which a Lance dataset cannot hold.
	ms := arrow.NewSchema([]arrow.Field{{Name: "id", Type: arrow.PrimitiveTypes.Int64}, {Name: "attrs", Type: arrow.MapOf(arrow.BinaryTypes.String, arrow.PrimitiveTypes.Int32), Nullable: true}}, nil)
	must3(db.CreateTable(ctx, []string{"fx", "mapped"}, store.NewTable{Data: data(ms, []map[string]any{
		{"id": 1, "attrs": []map[string]any{{"key": "a", "value": 1}}}, {"id": 2}})}))

	// Retention: every version before the exp branch was made goes, but
	// for what keeps it (latest, tagged, forked from).
	for _, id := range [][]string{docs, {"fx", "types"}, {"fx", "docs_view"}} {
		must3(db.CleanupVersions(ctx, id, cutoff))
	}
}

// cutoff is the time retention removes versions before: every version
// of docs and its view is older, the types table's are not.
var cutoff time.Time

func (f *fixture) buildTypes() {
	ctx, db := f.ctx, f.db
	cutoff = clock
	id := []string{"fx", "types"}
	s := arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64},
		{Name: "b", Type: arrow.FixedWidthTypes.Boolean, Nullable: true},
		{Name: "i8", Type: arrow.PrimitiveTypes.Int8, Nullable: true},
		{Name: "i16", Type: arrow.PrimitiveTypes.Int16, Nullable: true},
		{Name: "i32", Type: arrow.PrimitiveTypes.Int32, Nullable: true},
		{Name: "u8", Type: arrow.PrimitiveTypes.Uint8, Nullable: true},
		{Name: "u16", Type: arrow.PrimitiveTypes.Uint16, Nullable: true},
		{Name: "u32", Type: arrow.PrimitiveTypes.Uint32, Nullable: true},
		{Name: "u64", Type: arrow.PrimitiveTypes.Uint64, Nullable: true},
		{Name: "f16", Type: arrow.FixedWidthTypes.Float16, Nullable: true},
		{Name: "f32", Type: arrow.PrimitiveTypes.Float32, Nullable: true},
		{Name: "f64", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
		{Name: "s", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "ls", Type: arrow.BinaryTypes.LargeString, Nullable: true},
		{Name: "bin", Type: arrow.BinaryTypes.Binary, Nullable: true},
		{Name: "lbin", Type: arrow.BinaryTypes.LargeBinary, Nullable: true},
		{Name: "fbin", Type: &arrow.FixedSizeBinaryType{ByteWidth: 3}, Nullable: true},
		{Name: "d32", Type: arrow.FixedWidthTypes.Date32, Nullable: true},
		{Name: "d64", Type: arrow.FixedWidthTypes.Date64, Nullable: true},
		{Name: "ts", Type: &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}, Nullable: true},
		{Name: "t64", Type: arrow.FixedWidthTypes.Time64us, Nullable: true},
		{Name: "t32", Type: arrow.FixedWidthTypes.Time32ms, Nullable: true},
		{Name: "dur", Type: arrow.FixedWidthTypes.Duration_ms, Nullable: true},
		{Name: "dec", Type: &arrow.Decimal128Type{Precision: 10, Scale: 2}, Nullable: true},
		{Name: "bigdec", Type: &arrow.Decimal256Type{Precision: 40, Scale: 5}, Nullable: true},
		{Name: "dec64", Type: &arrow.Decimal64Type{Precision: 12, Scale: 3}, Nullable: true},
		{Name: "li", Type: arrow.ListOf(arrow.PrimitiveTypes.Int32), Nullable: true},
		{Name: "lls", Type: arrow.LargeListOf(arrow.BinaryTypes.String), Nullable: true},
		{Name: "fli", Type: arrow.FixedSizeListOf(3, arrow.PrimitiveTypes.Int16), Nullable: true},
		{Name: "vu8", Type: arrow.FixedSizeListOf(4, arrow.PrimitiveTypes.Uint8), Nullable: true},
		{Name: "vf64", Type: arrow.FixedSizeListOf(2, arrow.PrimitiveTypes.Float64), Nullable: true},
		{Name: "los", Type: arrow.ListOf(arrow.StructOf(arrow.Field{Name: "k", Type: arrow.BinaryTypes.String, Nullable: true},
			arrow.Field{Name: "n", Type: arrow.PrimitiveTypes.Float64, Nullable: true})), Nullable: true},
		{Name: "deep", Type: arrow.StructOf(arrow.Field{Name: "a", Type: arrow.StructOf(
			arrow.Field{Name: "b", Type: arrow.ListOf(arrow.PrimitiveTypes.Int64), Nullable: true},
			arrow.Field{Name: "c", Type: arrow.BinaryTypes.Binary, Nullable: true}), Nullable: true}), Nullable: true},
	}, nil)
	rows := []map[string]any{
		{"id": 1, "b": true, "i8": -8, "i16": -16, "i32": -32, "u8": 8, "u16": 16, "u32": 4000000000, "u64": "18446744073709551615",
			"f16": 1.5, "f32": 3.25, "f64": math.Pi, "s": "héllo", "ls": "large", "bin": "AAEC", "lbin": "/w==", "fbin": "YWJj",
			"d32": "2024-02-29", "d64": 1709164800000, "ts": 1709210096789012, "t64": 45296789012, "t32": 45296789, "dur": 1500,
			"dec": "12345678.90", "bigdec": "-123456789012345678901234567890.12345", "dec64": "123456789.123",
			"li": []any{1, nil, 3}, "lls": []any{"x", "y"}, "fli": []any{1, 2, 3}, "vu8": []any{0, 127, 200, 255}, "vf64": []any{1e-300, -2.5},
			"los":  []any{map[string]any{"k": "a", "n": 1.5}, map[string]any{"k": nil, "n": nil}},
			"deep": map[string]any{"a": map[string]any{"b": []any{7, 8}, "c": "Zm9v"}}},
		{"id": 2, "f32": "NaN", "f64": "-Inf", "li": []any{}, "deep": map[string]any{"a": nil}},
		{"id": 3, "deep": map[string]any{"a": map[string]any{}}, "s": "", "bin": "", "f64": "+Inf"},
		{"id": 4},
	}
	must3(db.CreateTable(ctx, id, store.NewTable{Data: data(s, rows)}))
	must(db.Update(ctx, id, []store.ColumnUpdate{{Path: "i32", Expr: "i32 * 2"}, {Path: "s", Expr: "'updated'"}}, "id = 1"))
	must(db.Update(ctx, id, []store.ColumnUpdate{{Path: "f32", Expr: "1.0"}}, "id = 4"))
}

// runJobs runs the queued jobs (index builds, view refreshes) as the job
// runner would.
func (f *fixture) runJobs() {
	ctx, db := f.ctx, f.db
	for {
		job, err := db.ClaimJob(ctx, store.JobBuildIndex, store.JobRefreshView)
		check(err)
		if job == nil {
			return
		}
		var jerr error
		switch job.Kind {
		case store.JobBuildIndex:
			var p store.BuildIndex
			check(json.Unmarshal(job.Payload, &p))
			jerr = db.BuildIndex(ctx, p)
		case store.JobRefreshView:
			var p store.RefreshView
			check(json.Unmarshal(job.Payload, &p))
			_, jerr = db.RefreshView(ctx, p)
		}
		check(jerr)
		check(db.FinishJob(ctx, job.TransactionID, nil))
	}
}

// record writes the answers: every version of every branch of every
// table, read whole, and a few other queries.
func (f *fixture) record() {
	ctx, db := f.ctx, f.db
	ids, _, err := db.ListAllTables(ctx, false, store.Page{Limit: 1000})
	check(err)
	for _, id := range ids {
		t := Table{ID: id, Branches: map[string]map[int64]string{}, Tags: map[string]int64{}}
		if id[len(id)-1] == "mapped" {
			t.Unconvertible = "map column"
		}
		branches := []string{""}
		bs, _, err := db.ListBranches(ctx, id, store.Page{Limit: 100})
		check(err)
		for _, b := range bs {
			branches = append(branches, b.Name)
		}
		for _, b := range branches {
			name := b
			if name == "" {
				name = "main"
			}
			t.Branches[name] = map[int64]string{}
			versions, _, err := db.ListVersions(ctx, id, b, false, store.Page{Limit: 1000})
			check(err)
			for _, v := range versions {
				file := filepath.Join(strings.Join(id, "$"), name, fmt.Sprintf("%d.arrow", v.Version))
				res, err := db.OnBranch(b).Query(ctx, id, store.Query{Version: &v.Version})
				check(err)
				f.write(file, res)
				t.Branches[name][v.Version] = file
			}
		}
		tags, _, err := db.ListTags(ctx, id, store.Page{Limit: 100})
		check(err)
		for _, tg := range tags {
			t.Tags[tg.Name] = tg.Version
		}
		ixs, _, err := db.ListIndices(ctx, id, nil, store.Page{Limit: 100})
		check(err)
		for _, ix := range ixs {
			t.Indexes = append(t.Indexes, Index{Name: ix.Name, Type: ix.Type, Column: strings.Join(ix.Columns, ",")})
		}
		d, err := db.Describe(ctx, id, nil)
		check(err)
		t.View = d.View != nil
		f.fx.Tables = append(f.fx.Tables, t)
	}
	docs := []string{"fx", "docs"}
	for i, q := range []Query{
		{Table: docs, Query: store.Query{Filter: "id BETWEEN 20 AND 60 AND category = 'beta'", Projection: store.Projection{Columns: []string{"id", "text", "category"}}},
			Comment: "a filtered scan of the latest version"},
		{Table: docs, Query: store.Query{Version: ptr(int64(5)), Filter: "array_has_any(tags, ['lake'])", Projection: store.Projection{Columns: []string{"id", "tags"}}},
			Comment: "a label-list filter on a tagged version"},
		{Table: docs, Branch: "dev", Query: store.Query{Filter: "text = 'on dev'", Projection: store.Projection{Columns: []string{"id", "text"}}},
			Comment: "a scan of a branch"},
		{Table: docs, Query: store.Query{Vector: &store.VectorSearch{Column: "vector", Vectors: [][]float32{{0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5}}, Metric: "cosine", BypassIndex: true},
			Limit: 5, Projection: store.Projection{Columns: []string{"id"}}}, Comment: "an exact vector search"},
		{Table: []string{"plain"}, Query: store.Query{Filter: "id > 40", OrderBy: []store.SortKey{{Column: "id", Descending: true}}, Limit: 3},
			Comment: "an ordered scan with a limit"},
	} {
		res, err := db.OnBranch(q.Branch).Query(ctx, q.Table, q.Query)
		check(err)
		q.Answer = filepath.Join("queries", fmt.Sprintf("%d.arrow", i))
		f.write(q.Answer, res)
		f.fx.Queries = append(f.fx.Queries, q)
	}
}

// write stores a result as an Arrow IPC stream at file, below answers/,
// uncompressed, so that every Arrow library reads it (arrow-js does not
// decompress).
func (f *fixture) write(file string, res *store.Result) {
	p := filepath.Join(*out, "answers", file)
	check(os.MkdirAll(filepath.Dir(p), 0o755))
	w, err := os.Create(p)
	check(err)
	iw := ipc.NewWriter(w, ipc.WithSchema(res.Schema))
	for _, b := range res.Batches {
		check(iw.Write(b))
	}
	check(iw.Close())
	check(w.Close())
}

func ptr[T any](v T) *T { return &v }

func must3[A, B any](a A, b B, err error) A {
	check(err)
	return a
}

func must4[A, B, C any](a A, b B, c C, err error) A {
	check(err)
	return a
}
