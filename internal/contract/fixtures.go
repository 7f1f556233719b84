package contract

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/lancens/lancens/client"
	"github.com/lancens/lancens/internal/conformance"
	"github.com/lancens/lancens/store"
)

// call is what a valid request to one operation needs beyond what the
// spec's schemas give: the objects it names and the values that must make
// sense together.
type call struct {
	// id is the {id} path parameter; raw, when set, is sent instead (for
	// transaction ids).
	id        []string
	raw       string
	indexName string
	query     url.Values
	// body is merged over the sample of the request schema; arrow is the
	// body of an Arrow operation.
	body  map[string]any
	arrow []byte
}

// env is where the checks of one operation make their objects: a
// namespace of their own in the kit's.
type env struct {
	t       conformance.T
	tg      conformance.HTTPTarget
	ns      []string
	locRoot string
	// locs holds the locations the server chose for the tables, by name,
	// when locRoot is empty.
	locs map[string]string
}

func (e *env) id(name ...string) []string {
	return append(append([]string(nil), e.ns...), name...)
}

// setup fails the case for an error while making its objects; an
// Unsupported (0) answer is a capability gap.
func (e *env) setup(err error) {
	e.t.Helper()
	if err == nil {
		return
	}
	if store.ErrorCode(err) == store.CodeUnsupported {
		conformance.Gap(e.t, "setting up: %v", err)
	}
	e.t.Fatalf("setting up: %v", err)
}

var itemsSchema = arrow.NewSchema([]arrow.Field{
	{Name: "id", Type: arrow.PrimitiveTypes.Int64},
	{Name: "name", Type: arrow.BinaryTypes.String, Nullable: true},
	{Name: "category", Type: arrow.BinaryTypes.String, Nullable: true},
	{Name: "qty", Type: arrow.PrimitiveTypes.Int32, Nullable: true},
	{Name: "vec", Type: arrow.FixedSizeListOf(4, arrow.PrimitiveTypes.Float32), Nullable: true},
	{Name: "body", Type: arrow.BinaryTypes.String, Nullable: true},
}, nil)

// viewSchema is the output schema of the checks' materialized views.
var viewSchema = arrow.NewSchema([]arrow.Field{
	{Name: "id", Type: arrow.PrimitiveTypes.Int64},
	{Name: "qty", Type: arrow.PrimitiveTypes.Int32, Nullable: true},
}, nil)

// viewSchemaBase64 returns viewSchema as output_schema carries it.
func viewSchemaBase64() string {
	var b bytes.Buffer
	w := ipc.NewWriter(&b, ipc.WithSchema(viewSchema))
	if err := w.Close(); err != nil {
		panic(err) // writing a schema to memory cannot fail
	}
	return base64.StdEncoding.EncodeToString(b.Bytes())
}

// viewQuery returns the source query of a view of the items of table
// source with qty over 2, as lancens reads it: a QueryTableRequest.
func viewQuery(source []string) string {
	b, err := json.Marshal(map[string]any{"id": source, "filter": "qty > 2", "columns": map[string]any{"column_names": []string{"id", "qty"}}, "k": 0})
	if err != nil {
		panic(err) // a map of strings and numbers always encodes
	}
	return string(b)
}

// items returns rows first..last of the checks' managed tables.
func items(first, last int) store.Data {
	var rows []string
	for i := first; i <= last; i++ {
		rows = append(rows, fmt.Sprintf(`{"id": %d, "name": "item-%d", "category": "%c", "qty": %d, "vec": [%d, 1, 0.5, 0.25], "body": "words number %d"}`,
			i, i, 'a'+i%3, i*10, i, i))
	}
	rec, _, err := array.RecordFromJSON(memory.DefaultAllocator, itemsSchema, strings.NewReader("["+strings.Join(rows, ",")+"]"))
	if err != nil {
		panic(err) // the rows above always decode
	}
	return store.NewData(itemsSchema, rec)
}

// arrowBody encodes rows as an Arrow IPC stream.
func arrowBody(d store.Data) []byte {
	var buf bytes.Buffer
	w := ipc.NewWriter(&buf, ipc.WithSchema(d.Schema))
	for d.Batches != nil {
		b, err := d.Batches.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			panic(err) // items' stream does not fail
		}
		err = w.Write(b)
		b.Release()
		if err != nil {
			panic(err) // writing to memory does not fail
		}
	}
	if err := w.Close(); err != nil {
		panic(err)
	}
	return buf.Bytes()
}

// managed creates managed table "items" with two versions (rows 1..8, then
// 9..10), a BTREE index id_idx and a computed column; returns its id.
func (e *env) managed() []string {
	e.t.Helper()
	id := e.id("items")
	_, _, err := e.tg.CreateTable(e.t.Context(), id, store.NewTable{Data: items(1, 8)})
	e.setup(err)
	_, err = e.tg.Insert(e.t.Context(), id, store.InsertAppend, items(9, 10))
	e.setup(err)
	_, err = e.tg.CreateIndex(e.t.Context(), id, store.IndexSpec{Name: "id_idx", Column: "id", Type: store.IndexBTree})
	e.setup(err)
	return id
}

// location returns a location for table name: under the kit's root, or,
// without one, where the server put the table (declared) or one it gives
// a scratch table, declared and deregistered at once.
func (e *env) location(name string) string {
	e.t.Helper()
	if e.locRoot != "" {
		return e.locRoot + "/" + strings.Join(e.id(name), "/")
	}
	if loc, ok := e.locs[name]; ok {
		return loc
	}
	scratch := e.id("scratch_" + name)
	t, _, err := e.tg.DeclareTable(e.t.Context(), scratch, store.TableDeclaration{})
	e.setup(err)
	_, _, err = e.tg.DeregisterTable(e.t.Context(), scratch)
	e.setup(err)
	e.locs[name] = t.Location
	return t.Location
}

// manifest returns the staged manifest path of version v of table name,
// staged (see conformance.StageManifest) when the table lies where the
// server put it.
func (e *env) manifest(name string, v int) string {
	rel := fmt.Sprintf("_versions/%d.manifest-staged", v)
	if e.locRoot != "" {
		return e.location(name) + "/" + rel
	}
	return conformance.StageManifest(e.location(name), rel, 100)
}

// declared declares table name at a location of its own (under the kit's
// root, or where the server puts it) and returns its id and the
// transaction id of the declaration.
func (e *env) declared(name string) ([]string, string) {
	e.t.Helper()
	id := e.id(name)
	var loc string
	if e.locRoot != "" {
		loc = e.location(name)
	}
	t, txID, err := e.tg.DeclareTable(e.t.Context(), id, store.TableDeclaration{Location: loc})
	e.setup(err)
	if e.locRoot == "" {
		e.locs[name] = t.Location
	}
	return id, txID
}

// versioned declares table "decl", commits versions 1 and 2, tags version
// 1 as "t1" and branches "b1" from it; returns its id.
func (e *env) versioned() []string {
	e.t.Helper()
	id, _ := e.declared("decl")
	for v := 1; v <= 2; v++ {
		size := int64(100)
		_, _, err := e.tg.CommitVersion(e.t.Context(), id, store.VersionCommit{Version: int64(v), StagedPath: e.manifest("decl", v),
			ManifestPath: e.manifest("decl", v), ManifestSize: &size})
		e.setup(err)
	}
	_, err := e.tg.CreateTag(e.t.Context(), id, "t1", "", 1)
	e.setup(err)
	one := int64(1)
	_, err = e.tg.CreateBranch(e.t.Context(), id, "b1", "", &one)
	e.setup(err)
	return id
}

// namespace creates namespace name in the operation's and returns its id.
func (e *env) namespace(name string) []string {
	e.t.Helper()
	id := e.id(name)
	_, err := e.tg.CreateNamespace(e.t.Context(), id, store.ModeCreate, nil)
	e.setup(err)
	return id
}

// queryVector is a valid vector query on the checks' managed tables.
func queryVector() map[string]any {
	return map[string]any{"k": 3, "vector": map[string]any{"single_vector": []any{1, 1, 0.5, 0.25}}, "vector_column": "vec"}
}

// fixtures make the valid request of each operation, in the order of the
// spec's route table.
var fixtures = []struct {
	op   string
	make func(e *env) call
}{
	{"CreateNamespace", func(e *env) call { return call{id: e.id("new")} }},
	{"ListNamespaces", func(e *env) call { e.namespace("child"); return call{id: e.ns} }},
	{"DescribeNamespace", func(e *env) call { return call{id: e.ns} }},
	{"DropNamespace", func(e *env) call { return call{id: e.namespace("child")} }},
	{"NamespaceExists", func(e *env) call { return call{id: e.ns} }},
	{"ListTables", func(e *env) call { e.declared("t"); return call{id: e.ns} }},
	{"ListAllTables", func(e *env) call { return call{query: url.Values{"limit": {"5"}}} }},
	{"RegisterTable", func(e *env) call {
		return call{id: e.id("reg"), body: map[string]any{"location": e.location("reg")}}
	}},
	{"DescribeTable", func(e *env) call { return call{id: e.managed()} }},
	{"TableExists", func(e *env) call { return call{id: e.managed()} }},
	{"DropTable", func(e *env) call { id, _ := e.declared("victim"); return call{id: id} }},
	{"DeregisterTable", func(e *env) call { id, _ := e.declared("victim"); return call{id: id} }},
	{"RestoreTable", func(e *env) call { return call{id: e.managed(), body: map[string]any{"version": 1}} }},
	{"RenameTable", func(e *env) call {
		id, _ := e.declared("victim")
		return call{id: id, body: map[string]any{"new_table_name": "renamed"}}
	}},
	{"UpdateTableSchemaMetadata", func(e *env) call { return call{id: e.managed(), body: map[string]any{"owner": "conformance"}} }},
	{"ListTableVersions", func(e *env) call { return call{id: e.versioned(), query: url.Values{"descending": {"true"}}} }},
	{"CreateTableVersion", func(e *env) call {
		return call{id: e.versioned(), body: map[string]any{"version": 3, "manifest_path": e.manifest("decl", 3)}}
	}},
	{"DescribeTableVersion", func(e *env) call { return call{id: e.versioned(), body: map[string]any{"version": 1}} }},
	{"BatchDeleteTableVersions", func(e *env) call {
		return call{id: e.versioned(), body: map[string]any{"ranges": []any{map[string]any{"start_version": 1, "end_version": 2}}}}
	}},
	{"BatchCreateTableVersions", func(e *env) call {
		id := e.versioned()
		return call{body: map[string]any{"entries": []any{map[string]any{"id": id, "version": 3, "manifest_path": e.manifest("decl", 3)}}}}
	}},
	{"BatchCommitTables", func(e *env) call {
		id := e.versioned()
		return call{body: map[string]any{"operations": []any{map[string]any{"create_table_version": map[string]any{
			"id": id, "version": 3, "manifest_path": e.manifest("decl", 3)}}}}}
	}},
	{"AlterTableAlterColumns", func(e *env) call {
		return call{id: e.managed(), body: map[string]any{"alterations": []any{map[string]any{"path": "name", "rename": "title"}}}}
	}},
	{"UpdateFieldMetadata", func(e *env) call {
		return call{id: e.managed(), body: map[string]any{"updates": []any{map[string]any{"path": "name", "metadata": map[string]any{"k": "v"}}}}}
	}},
	{"AlterTableDropColumns", func(e *env) call { return call{id: e.managed(), body: map[string]any{"columns": []any{"body"}}} }},
	{"GetTableStats", func(e *env) call { return call{id: e.managed()} }},
	{"InsertIntoTable", func(e *env) call {
		return call{id: e.managed(), query: url.Values{"mode": {"append"}}, arrow: arrowBody(items(20, 21))}
	}},
	{"MergeInsertIntoTable", func(e *env) call {
		return call{id: e.managed(), query: url.Values{"on": {"id"}, "when_matched_update_all": {"true"}, "when_not_matched_insert_all": {"true"}},
			arrow: arrowBody(items(8, 12))}
	}},
	{"UpdateTable", func(e *env) call {
		return call{id: e.managed(), body: map[string]any{"updates": []any{[]any{"qty", "qty + 1"}}, "predicate": "id > 5"}}
	}},
	{"DeleteFromTable", func(e *env) call { return call{id: e.managed(), body: map[string]any{"predicate": "id = 1"}} }},
	{"QueryTable", func(e *env) call { return call{id: e.managed(), body: queryVector()} }},
	{"CountTableRows", func(e *env) call { return call{id: e.managed(), body: map[string]any{"predicate": "id > 2"}} }},
	{"CreateTable", func(e *env) call { return call{id: e.id("created"), arrow: arrowBody(items(1, 3))} }},
	{"ExplainTableQueryPlan", func(e *env) call { return call{id: e.managed(), body: map[string]any{"query": queryVector()}} }},
	{"AnalyzeTableQueryPlan", func(e *env) call { return call{id: e.managed(), body: queryVector()} }},
	{"AlterTableAddColumns", func(e *env) call {
		return call{id: e.managed(), body: map[string]any{"new_columns": []any{map[string]any{"name": "qty2", "expression": "qty * 2"}}}}
	}},
	{"AlterTableBackfillColumns", func(e *env) call {
		id := e.managed()
		_, err := e.tg.AddColumns(e.t.Context(), id, []store.NewColumn{{Name: "later", Expr: "qty + 1", Computed: true}})
		e.setup(err)
		return call{id: id, body: map[string]any{"column": "later"}}
	}},
	{"RefreshMaterializedView", func(e *env) call {
		view := e.id("view")
		_, err := e.tg.C.CreateMaterializedView(e.t.Context(), view, client.MaterializedView{
			Kind: client.ViewQuery, SourceQuery: viewQuery(e.managed()), OutputSchema: viewSchema})
		e.setup(err)
		return call{id: view}
	}},
	{"CreateMaterializedView", func(e *env) call {
		return call{id: e.id("view"), body: map[string]any{"kind": "query", "source_query": viewQuery(e.managed()), "output_schema": viewSchemaBase64()}}
	}},
	{"CreateTableIndex", func(e *env) call {
		return call{id: e.managed(), body: map[string]any{"column": "qty", "index_type": "BTREE", "name": "qty_idx"}}
	}},
	{"CreateTableScalarIndex", func(e *env) call {
		return call{id: e.managed(), body: map[string]any{"column": "category", "index_type": "BITMAP"}}
	}},
	{"ListTableIndices", func(e *env) call { return call{id: e.managed()} }},
	{"DescribeTableIndexStats", func(e *env) call { return call{id: e.managed(), indexName: "id_idx"} }},
	{"DropTableIndex", func(e *env) call { return call{id: e.managed(), indexName: "id_idx"} }},
	{"ListTableTags", func(e *env) call { return call{id: e.versioned()} }},
	{"GetTableTagVersion", func(e *env) call { return call{id: e.versioned(), body: map[string]any{"tag": "t1"}} }},
	{"DeclareTable", func(e *env) call { return call{id: e.id("declared")} }},
	{"CreateTableTag", func(e *env) call { return call{id: e.versioned(), body: map[string]any{"tag": "t2", "version": 2}} }},
	{"DeleteTableTag", func(e *env) call { return call{id: e.versioned(), body: map[string]any{"tag": "t1"}} }},
	{"UpdateTableTag", func(e *env) call { return call{id: e.versioned(), body: map[string]any{"tag": "t1", "version": 2}} }},
	{"ListTableBranches", func(e *env) call { return call{id: e.versioned()} }},
	{"CreateTableBranch", func(e *env) call { return call{id: e.versioned(), body: map[string]any{"name": "b2"}} }},
	{"DeleteTableBranch", func(e *env) call { return call{id: e.versioned(), body: map[string]any{"name": "b1"}} }},
	{"DescribeTransaction", func(e *env) call { _, tx := e.declared("t"); return call{raw: tx} }},
	{"AlterTransaction", func(e *env) call {
		_, tx := e.declared("t")
		return call{raw: tx, body: map[string]any{"actions": []any{map[string]any{"setPropertyAction": map[string]any{"key": "k", "value": "v"}}}}}
	}},
}
