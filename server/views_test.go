package server_test

import (
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/lancens/lancens/client"
	"github.com/lancens/lancens/gen"
	"github.com/lancens/lancens/internal/testkit/apitest"
	"github.com/lancens/lancens/internal/testkit/arrowtest"
	"github.com/lancens/lancens/store"
)

// viewSchema is the output schema of the views the tests make over
// people: id and name.
var viewSchema = arrowtest.Schema("id", arrow.PrimitiveTypes.Int64, "name", arrow.BinaryTypes.String)

// adultsQuery is the source query of a view of the people of src older
// than 26.
const adultsQuery = `{"id": ["src"], "filter": "age > 26", "columns": {"column_names": ["id", "name"]}, "k": 0}`

// viewIDs returns the ids a view shows, in id order.
func viewIDs(t *testing.T, c *client.Client, view string) string {
	t.Helper()
	return column(t, query(t, c, view, gen.QueryTableRequest{}), "id")
}

// refreshAndWait refreshes view (from source version v, 0: the latest) and
// waits for the job, which must succeed.
func refreshAndWait(t *testing.T, c *client.Client, view string, v int) {
	t.Helper()
	job, err := c.RefreshMaterializedView(t.Context(), []string{view}, &client.RefreshOptions{SourceVersion: v})
	if err != nil {
		t.Fatal(err)
	}
	if tx := waitTransaction(t, c, job); tx.Status != "Succeeded" {
		t.Fatalf("refresh of %s ended %s: %+v", view, tx.Status, tx)
	}
}

// TestMaterializedViews checks a query view through its life: created with
// data (a first refresh job), read like a table, refreshed after its source
// changes and from an older source version, each refresh one new version
// recording the source version it reflects; writes other than refreshes
// are refused, and it drops like a table.
func TestMaterializedViews(t *testing.T) {
	s := apitest.Start(t, apitest.Options{})
	ctx := t.Context()
	c := s.Client
	createPeople(t, c, "src")

	created, err := c.CreateMaterializedView(ctx, []string{"v"}, client.MaterializedView{
		Kind: client.ViewQuery, SourceQuery: adultsQuery, OutputSchema: viewSchema, WithData: true})
	if err != nil || created.Version != 1 || created.JobID == "" {
		t.Fatalf("create: %+v %v", created, err)
	}
	if tx := waitTransaction(t, c, created.JobID); tx.Status != "Succeeded" {
		t.Fatalf("first refresh ended %s", tx.Status)
	}
	if got := viewIDs(t, c, "v"); got != "[1,4]" {
		t.Fatalf("view rows %s, want [1,4]", got)
	}
	describe := func(want map[string]string) {
		t.Helper()
		d, err := c.DescribeTable(ctx, []string{"v"}, nil)
		if err != nil {
			t.Fatal(err)
		}
		for k, v := range want {
			if d.Metadata[k] != v {
				t.Errorf("describe: %s = %q, want %q (metadata %v)", k, d.Metadata[k], v, d.Metadata)
			}
		}
	}
	describe(map[string]string{"materialized_view.kind": "query", "materialized_view.source": `["src"]`,
		"materialized_view.source_version": "1", "materialized_view.source_query": adultsQuery})

	if _, err := c.Insert(ctx, []string{"src"}, peopleSchema, []arrow.RecordBatch{arrowtest.Record(t, peopleSchema, `[{"id":5,"name":"eve","age":50}]`)}, ""); err != nil {
		t.Fatal(err)
	}
	if got := viewIDs(t, c, "v"); got != "[1,4]" {
		t.Fatalf("a view changed before its refresh: %s", got)
	}
	refreshAndWait(t, c, "v", 0)
	if got := viewIDs(t, c, "v"); got != "[1,4,5]" {
		t.Fatalf("after refresh %s, want [1,4,5]", got)
	}
	describe(map[string]string{"materialized_view.source_version": "2"})
	refreshAndWait(t, c, "v", 1)
	if got := viewIDs(t, c, "v"); got != "[1,4]" {
		t.Fatalf("refresh from source version 1 shows %s, want [1,4]", got)
	}
	describe(map[string]string{"materialized_view.source_version": "1"})
	// Each refresh made one version; the old ones read as they were.
	for v, want := range map[int64]int64{1: 0, 2: 2, 3: 3, 4: 2} {
		if n, err := c.CountRows(ctx, []string{"v"}, "", &v); err != nil || n != want {
			t.Errorf("view rows at version %d = %d %v, want %d", v, n, err, want)
		}
	}

	// A view made without data is empty until refreshed.
	empty, err := c.CreateMaterializedView(ctx, []string{"later"}, client.MaterializedView{Kind: client.ViewQuery, SourceQuery: adultsQuery, OutputSchema: viewSchema})
	if err != nil || empty.JobID != "" {
		t.Fatalf("create with no data: %+v %v", empty, err)
	}
	if n, err := c.CountRows(ctx, []string{"later"}, "", nil); err != nil || n != 0 {
		t.Fatalf("rows of a view with no data: %d %v", n, err)
	}

	// A view with auto_refresh follows its source's writes on its own.
	auto := true
	if _, err := c.CreateMaterializedView(ctx, []string{"auto"}, client.MaterializedView{Kind: client.ViewQuery, SourceQuery: adultsQuery,
		OutputSchema: viewSchema, AutoRefresh: &auto}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Delete(ctx, []string{"src"}, "id = 4"); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if got := viewIDs(t, c, "auto"); got == "[1,5]" {
			break
		} else if time.Now().After(deadline) {
			t.Fatalf("auto-refreshed view shows %s, want [1,5]", got)
		}
	}

	if _, err := c.Insert(ctx, []string{"v"}, viewSchema, []arrow.RecordBatch{arrowtest.Record(t, viewSchema, `[{"id":9,"name":"x"}]`)}, ""); store.ErrorCode(err) != store.CodeInvalidTableState {
		t.Fatalf("insert into a view: %v, want code 19", err)
	}
	if _, err := c.Delete(ctx, []string{"v"}, "true"); store.ErrorCode(err) != store.CodeInvalidTableState {
		t.Fatalf("delete from a view: %v, want code 19", err)
	}
	if _, err := c.DropTable(ctx, []string{"later"}); err != nil {
		t.Fatalf("drop a view: %v", err)
	}
	// With its source dropped, a view keeps its rows and refuses refreshes.
	if _, err := c.DropTable(ctx, []string{"src"}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.RefreshMaterializedView(ctx, []string{"v"}, nil); store.ErrorCode(err) != store.CodeTableNotFound {
		t.Fatalf("refresh with the source dropped: %v, want code 4", err)
	}
	if got := viewIDs(t, c, "v"); got != "[1,4]" {
		t.Fatalf("view rows after its source was dropped: %s", got)
	}
}

// TestMaterializedViewErrors checks the refusals of CreateMaterializedView
// and RefreshMaterializedView: each answers its code and changes nothing.
func TestMaterializedViewErrors(t *testing.T) {
	s := apitest.Start(t, apitest.Options{})
	ctx := t.Context()
	c := s.Client
	createPeople(t, c, "src")
	if _, err := c.CreateMaterializedView(ctx, []string{"v"}, client.MaterializedView{Kind: client.ViewQuery, SourceQuery: adultsQuery, OutputSchema: viewSchema}); err != nil {
		t.Fatal(err)
	}
	create := func(name, kind, query string, schema *arrow.Schema) func() error {
		return func() error {
			_, err := c.CreateMaterializedView(ctx, []string{name}, client.MaterializedView{Kind: client.ViewKind(kind), SourceQuery: query, OutputSchema: schema, WithData: true})
			return err
		}
	}
	wrongType := arrowtest.Schema("id", arrow.BinaryTypes.String, "name", arrow.BinaryTypes.String)
	extra := arrowtest.Schema("id", arrow.PrimitiveTypes.Int64, "name", arrow.BinaryTypes.String, "nope", arrow.PrimitiveTypes.Int32)
	for _, tc := range []struct {
		name string
		call func() error
		want store.Code
	}{
		{"MissingSource", create("w", "query", `{"id": ["nope"], "k": 0}`, viewSchema), store.CodeTableNotFound},
		{"KindUDTF", create("w", "udtf", adultsQuery, viewSchema), store.CodeUnsupported},
		{"KindChunker", create("w", "chunker", adultsQuery, viewSchema), store.CodeUnsupported},
		{"SQLMissingSource", create("w", "query", "SELECT id, name FROM nope", viewSchema), store.CodeTableNotFound},
		{"SQLMissingColumn", create("w", "query", "SELECT id, nosuch AS name FROM src", viewSchema), store.CodeTableColumnNotFound},
		{"SQLMissingFilterColumn", create("w", "query", "SELECT id, name FROM src WHERE nosuch > 1", viewSchema), store.CodeTableColumnNotFound},
		{"QueryOnBranch", create("w", "query", `{"id": ["src"], "k": 0, "branch": "dev"}`, viewSchema), store.CodeInvalidInput},
		{"QueryWithVersion", create("w", "query", `{"id": ["src"], "k": 0, "version": 1}`, viewSchema), store.CodeInvalidInput},
		{"BadFilter", create("w", "query", `{"id": ["src"], "k": 0, "filter": "age >"}`, viewSchema), store.CodeInvalidInput},
		{"SchemaWrongType", create("w", "query", adultsQuery, wrongType), store.CodeTableSchemaValidationError},
		{"SchemaExtraColumn", create("w", "query", adultsQuery, extra), store.CodeTableSchemaValidationError},
		{"NameTaken", create("src", "query", adultsQuery, viewSchema), store.CodeTableAlreadyExists},
		{"RefreshPlainTable", func() error { _, err := c.RefreshMaterializedView(ctx, []string{"src"}, nil); return err }, store.CodeInvalidInput},
		{"RefreshMissing", func() error { _, err := c.RefreshMaterializedView(ctx, []string{"nope"}, nil); return err }, store.CodeTableNotFound},
		{"RefreshMissingSourceVersion", func() error {
			_, err := c.RefreshMaterializedView(ctx, []string{"v"}, &client.RefreshOptions{SourceVersion: 99})
			return err
		}, store.CodeTableVersionNotFound},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := tc.call(); store.ErrorCode(err) != tc.want {
				t.Fatalf("got %v, want code %d", err, tc.want)
			}
			if _, err := c.DescribeTable(ctx, []string{"w"}, nil); store.ErrorCode(err) != store.CodeTableNotFound {
				t.Fatalf("a refused create left table w: %v", err)
			}
			if v, err := c.LatestTableVersion(ctx, []string{"v"}, ""); err != nil || v.Version != 1 {
				t.Fatalf("a refused call changed view v: %+v %v", v, err)
			}
		})
	}
	// The output schema must be an Arrow schema; raw HTTP, as the client
	// always encodes one.
	status, body, _ := s.Do(t, http.MethodPost, "/v1/materialized_view/w/create", jsonHeader,
		[]byte(`{"kind": "query", "source_query": "{\"id\": [\"src\"], \"k\": 0}", "output_schema": "{}"}`))
	if status != http.StatusBadRequest || apitest.ErrorCode(body) != int(store.CodeInvalidInput) {
		t.Fatalf("bad output_schema: %d %s", status, body)
	}
}

// TestMaterializedViewSourceQueries checks the forms of source_query: SQL
// over one table is run like a QueryTableRequest; any other text (the
// spec's source_query is opaque, its format the client's) is stored,
// described and dropped, and refreshing it answers 406 code 0.
func TestMaterializedViewSourceQueries(t *testing.T) {
	s := apitest.Start(t, apitest.Options{})
	ctx := t.Context()
	c := s.Client
	createPeople(t, c, "src")
	for _, tc := range []struct {
		name, query, want string
	}{
		{"SQL", "SELECT id, name FROM src WHERE age > 26", "[1,4]"},
		{"SQLAliasesQuotedTable", `select id AS id, upper(name) as "name" from "src" where age > 26 and name <> 'x, FROM y';`, "[1,4]"},
		{"SQLEveryColumn", "SELECT * FROM src", "[1,2,3,4]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			schema := viewSchema
			if tc.name == "SQLEveryColumn" {
				schema = peopleSchema
			}
			created, err := c.CreateMaterializedView(ctx, []string{"v" + tc.name}, client.MaterializedView{
				Kind: client.ViewQuery, SourceQuery: tc.query, OutputSchema: schema, WithData: true})
			if err != nil || created.JobID == "" {
				t.Fatalf("create: %+v %v", created, err)
			}
			if tx := waitTransaction(t, c, created.JobID); tx.Status != "Succeeded" {
				t.Fatalf("first refresh ended %s: %+v", tx.Status, tx)
			}
			if got := viewIDs(t, c, "v"+tc.name); got != tc.want {
				t.Fatalf("view rows %s, want %s", got, tc.want)
			}
			refreshAndWait(t, c, "v"+tc.name, 0)
		})
	}
	for i, query := range []string{
		"SELECT age, count(*) FROM src GROUP BY age",
		"SELECT 1",
		`{"sql": "select * from src"}`,
		"my-pipeline:v2 src -> adults",
	} {
		name := []string{"own" + string(rune('a'+i))}
		created, err := c.CreateMaterializedView(ctx, name, client.MaterializedView{
			Kind: client.ViewQuery, SourceQuery: query, OutputSchema: viewSchema, WithData: true})
		if err != nil || created.Version != 1 || created.JobID != "" {
			t.Fatalf("create with source_query %q: %+v %v; want version 1 and no refresh", query, created, err)
		}
		d, err := c.DescribeTable(ctx, name, nil)
		if err != nil || d.Metadata["materialized_view.source_query"] != query || d.Metadata["materialized_view.kind"] != "query" {
			t.Fatalf("describe %q: %+v %v", query, d, err)
		}
		if _, has := d.Metadata["materialized_view.source"]; has {
			t.Errorf("%q: a source for a query lancens does not run: %v", query, d.Metadata)
		}
		_, err = c.RefreshMaterializedView(ctx, name, nil)
		var ce *client.Error
		if store.ErrorCode(err) != store.CodeUnsupported || !errors.As(err, &ce) || ce.StatusCode != http.StatusNotAcceptable {
			t.Fatalf("refresh of %q: %v, want 406 code 0", query, err)
		}
		if v, err := c.LatestTableVersion(ctx, name, ""); err != nil || v.Version != 1 {
			t.Fatalf("a refused refresh changed %q: %+v %v", query, v, err)
		}
		if _, err := c.DropTable(ctx, name); err != nil {
			t.Fatalf("drop %q: %v", query, err)
		}
	}
}
