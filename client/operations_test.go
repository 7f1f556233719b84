package client_test

import (
	"context"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/lancens/lancens/client"
	"github.com/lancens/lancens/gen"
)

// operationMethods names, for each operationId of openapi.yaml, the typed
// method that sends it. The method expressions make the compiler check
// that each exists; TestEveryOperationHasAMethod checks the table against
// the spec, so a new operation cannot go without one.
var operationMethods = map[string]any{
	"CreateNamespace":           (*client.Client).CreateNamespace,
	"ListNamespaces":            (*client.Client).ListNamespaces,
	"DescribeNamespace":         (*client.Client).DescribeNamespace,
	"DropNamespace":             (*client.Client).DropNamespace,
	"NamespaceExists":           (*client.Client).NamespaceExists,
	"ListTables":                (*client.Client).ListTables,
	"ListAllTables":             (*client.Client).ListAllTables,
	"RegisterTable":             (*client.Client).RegisterTable,
	"DescribeTable":             (*client.Client).DescribeTable,
	"TableExists":               (*client.Client).TableExists,
	"DropTable":                 (*client.Client).DropTable,
	"DeregisterTable":           (*client.Client).DeregisterTable,
	"RestoreTable":              (*client.Table).Restore,
	"RenameTable":               (*client.Client).RenameTable,
	"UpdateTableSchemaMetadata": (*client.Client).UpdateSchemaMetadata,
	"ListTableVersions":         (*client.Client).ListTableVersions,
	"CreateTableVersion":        (*client.Client).CreateTableVersion,
	"DescribeTableVersion":      (*client.Client).DescribeTableVersion,
	"BatchDeleteTableVersions":  (*client.Client).DeleteTableVersions,
	"BatchCreateTableVersions":  (*client.Client).CommitVersions,
	"BatchCommitTables":         (*client.Client).BatchCommit,
	"AlterTableAlterColumns":    (*client.Table).AlterColumns,
	"UpdateFieldMetadata":       (*client.Client).UpdateFieldMetadata,
	"AlterTableDropColumns":     (*client.Table).DropColumns,
	"GetTableStats":             (*client.Table).Stats,
	"InsertIntoTable":           (*client.Table).Add,
	"MergeInsertIntoTable":      (*client.MergeInsert).Execute,
	"UpdateTable":               (*client.Table).Update,
	"DeleteFromTable":           (*client.Table).Delete,
	"QueryTable":                (*client.Query).ToArrow,
	"CountTableRows":            (*client.Table).CountRows,
	"CreateTable":               (*client.Table).Create,
	"ExplainTableQueryPlan":     (*client.Query).Explain,
	"AnalyzeTableQueryPlan":     (*client.Query).Analyze,
	"AlterTableAddColumns":      (*client.Table).AddColumns,
	"AlterTableBackfillColumns": (*client.Client).BackfillColumn,
	"RefreshMaterializedView":   (*client.Client).RefreshMaterializedView,
	"CreateMaterializedView":    (*client.Client).CreateMaterializedView,
	"CreateTableIndex":          (*client.Table).CreateIndex,
	"CreateTableScalarIndex":    (*client.Client).CreateScalarIndex,
	"ListTableIndices":          (*client.Table).ListIndices,
	"DescribeTableIndexStats":   (*client.Table).IndexStats,
	"DropTableIndex":            (*client.Table).DropIndex,
	"ListTableTags":             client.Tags.List,
	"GetTableTagVersion":        client.Tags.Version,
	"DeclareTable":              (*client.Client).DeclareTable,
	"CreateTableTag":            client.Tags.Create,
	"DeleteTableTag":            client.Tags.Delete,
	"UpdateTableTag":            client.Tags.Update,
	"ListTableBranches":         (*client.Client).ListTableBranches,
	"CreateTableBranch":         (*client.Client).CreateTableBranch,
	"DeleteTableBranch":         (*client.Client).DeleteTableBranch,
	"DescribeTransaction":       (*client.Client).DescribeTransaction,
	"AlterTransaction":          (*client.Client).AlterTransaction,
}

// specOperations returns the operationIds of openapi.yaml.
func specOperations(t *testing.T) []string {
	t.Helper()
	doc, err := gen.GetSpec()
	if err != nil {
		t.Fatal(err)
	}
	var ops []string
	for _, item := range doc.Paths.Map() {
		for _, op := range item.Operations() {
			ops = append(ops, op.OperationID)
		}
	}
	slices.Sort(ops)
	return ops
}

func TestEveryOperationHasAMethod(t *testing.T) {
	ops := specOperations(t)
	if len(ops) != 54 {
		t.Errorf("openapi.yaml has %d operations; the client was written for 54", len(ops))
	}
	for _, op := range ops {
		if operationMethods[op] == nil {
			t.Errorf("operation %s has no typed method in operationMethods", op)
		}
	}
	for op := range operationMethods {
		if !slices.Contains(ops, op) {
			t.Errorf("operationMethods names %s, which openapi.yaml does not have", op)
		}
	}
}

// TestOperationsOverHTTP calls every operation of openapi.yaml through its
// typed method against lancens, checks the answers, and checks that the
// call sent that operation.
func TestOperationsOverHTTP(t *testing.T) {
	e := newEnv(t)
	cases := operationCases()
	ops := specOperations(t)
	for _, op := range ops {
		run := cases[op]
		if run == nil {
			t.Errorf("operation %s has no case in operationCases", op)
			continue
		}
		t.Run(op, func(t *testing.T) {
			mark := e.rec.mark()
			run(t, e)
			if sent := e.rec.since(mark); !slices.Contains(sent, op) {
				t.Fatalf("the case sent %v, not %s", sent, op)
			}
		})
	}
	if extra := slices.DeleteFunc(slices.Collect(maps.Keys(cases)), func(op string) bool { return slices.Contains(ops, op) }); len(extra) > 0 {
		t.Errorf("cases for operations openapi.yaml does not have: %v", extra)
	}
}

func must[T any](t *testing.T) func(T, error) T {
	return func(v T, err error) T {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
}

// operationCases exercises each operation; each case uses its own objects.
func operationCases() map[string]func(*testing.T, *env) {
	ctx := context.Background
	return map[string]func(*testing.T, *env){
		"CreateNamespace": func(t *testing.T, e *env) {
			props := must[map[string]string](t)(e.c.CreateNamespace(ctx(), []string{"cn"}, &client.CreateNamespaceOptions{Properties: map[string]string{"owner": "ann"}}))
			if props["owner"] != "ann" {
				t.Fatalf("properties %v", props)
			}
			_, err := e.c.CreateNamespace(ctx(), []string{"cn"}, nil)
			wantErr(t, err, client.ErrNamespaceAlreadyExists)
			props = must[map[string]string](t)(e.c.CreateNamespace(ctx(), []string{"cn"}, &client.CreateNamespaceOptions{Mode: client.ModeExistOK}))
			if props["owner"] != "ann" {
				t.Fatalf("ExistOk changed the namespace: %v", props)
			}
			_, err = e.c.CreateNamespace(ctx(), []string{"nope", "child"}, nil)
			wantErr(t, err, client.ErrNamespaceNotFound)
		},
		"ListNamespaces": func(t *testing.T, e *env) {
			must[map[string]string](t)(e.c.CreateNamespace(ctx(), []string{"ln"}, nil))
			for _, n := range []string{"b", "a", "c"} {
				must[map[string]string](t)(e.c.CreateNamespace(ctx(), []string{"ln", n}, nil))
			}
			page, next := must2[[]string, string](t)(e.c.ListNamespacesPage(ctx(), []string{"ln"}, "", 2))
			if !slices.Equal(page, []string{"a", "b"}) || next == "" {
				t.Fatalf("first page %v, next %q", page, next)
			}
			if all := collect(t, e.c.ListNamespaces(ctx(), []string{"ln"})); !slices.Equal(all, []string{"a", "b", "c"}) {
				t.Fatalf("all %v", all)
			}
		},
		"DescribeNamespace": func(t *testing.T, e *env) {
			must[map[string]string](t)(e.c.CreateNamespace(ctx(), []string{"dn"}, &client.CreateNamespaceOptions{Properties: map[string]string{"k": "v"}}))
			if props := must[map[string]string](t)(e.c.DescribeNamespace(ctx(), []string{"dn"})); props["k"] != "v" {
				t.Fatalf("properties %v", props)
			}
			_, err := e.c.DescribeNamespace(ctx(), []string{"dn-missing"})
			wantErr(t, err, client.ErrNamespaceNotFound)
		},
		"DropNamespace": func(t *testing.T, e *env) {
			must[map[string]string](t)(e.c.CreateNamespace(ctx(), []string{"drop"}, nil))
			must[map[string]string](t)(e.c.CreateNamespace(ctx(), []string{"drop", "child"}, nil))
			_, err := e.c.DropNamespace(ctx(), []string{"drop"}, nil)
			wantErr(t, err, client.ErrNamespaceNotEmpty)
			dropped := must[*client.DroppedNamespace](t)(e.c.DropNamespace(ctx(), []string{"drop"}, &client.DropNamespaceOptions{Behavior: client.BehaviorCascade}))
			if dropped == nil {
				t.Fatal("no report of the dropped namespace")
			}
			if d := must[*client.DroppedNamespace](t)(e.c.DropNamespace(ctx(), []string{"drop"}, &client.DropNamespaceOptions{Mode: client.ModeSkip})); d != nil {
				t.Fatalf("skip reported %+v", d)
			}
			_, err = e.c.DropNamespace(ctx(), []string{"drop"}, nil)
			wantErr(t, err, client.ErrNamespaceNotFound)
		},
		"NamespaceExists": func(t *testing.T, e *env) {
			must[map[string]string](t)(e.c.CreateNamespace(ctx(), []string{"ex"}, nil))
			if !must[bool](t)(e.c.NamespaceExists(ctx(), []string{"ex"})) || must[bool](t)(e.c.NamespaceExists(ctx(), []string{"ex-missing"})) {
				t.Fatal("exists answered wrongly")
			}
		},
		"ListTables": func(t *testing.T, e *env) {
			must[map[string]string](t)(e.c.CreateNamespace(ctx(), []string{"lt"}, nil))
			e.docsTable(t, 2, "lt", "managed")
			must[*client.TableInfo](t)(e.c.DeclareTable(ctx(), []string{"lt", "declared"}, nil))
			if all := collect(t, e.c.ListTables(ctx(), []string{"lt"})); !slices.Equal(all, []string{"declared", "managed"}) {
				t.Fatalf("tables %v", all)
			}
			page, _ := must2[[]string, string](t)(e.c.ListTablesPage(ctx(), []string{"lt"}, "", 10, false))
			if !slices.Equal(page, []string{"managed"}) {
				t.Fatalf("without declared tables: %v", page)
			}
		},
		"ListAllTables": func(t *testing.T, e *env) {
			must[map[string]string](t)(e.c.CreateNamespace(ctx(), []string{"lat"}, nil))
			e.docsTable(t, 1, "lat", "t")
			all := collect(t, e.c.ListAllTables(ctx()))
			if !slices.ContainsFunc(all, func(id []string) bool { return slices.Equal(id, []string{"lat", "t"}) }) {
				t.Fatalf("lat$t not listed in %v", all)
			}
		},
		"RegisterTable": func(t *testing.T, e *env) {
			info := must[*client.TableInfo](t)(e.c.RegisterTable(ctx(), []string{"reg"}, "s3://bucket/reg.lance", &client.RegisterTableOptions{Properties: map[string]string{"k": "v"}}))
			if info.Location != "s3://bucket/reg.lance" || info.Properties["k"] != "v" {
				t.Fatalf("registered %+v", info)
			}
			_, err := e.c.RegisterTable(ctx(), []string{"reg"}, "s3://bucket/other.lance", nil)
			wantErr(t, err, client.ErrTableAlreadyExists)
			info = must[*client.TableInfo](t)(e.c.RegisterTable(ctx(), []string{"reg"}, "s3://bucket/other.lance", &client.RegisterTableOptions{Mode: client.ModeOverwrite}))
			if info.Location != "s3://bucket/other.lance" {
				t.Fatalf("overwrite kept %s", info.Location)
			}
		},
		"DescribeTable": func(t *testing.T, e *env) {
			e.docsTable(t, 3, "desc")
			d := must[*client.TableDescription](t)(e.c.DescribeTable(ctx(), []string{"desc"}, nil))
			want := must[*arrow.Schema](t)(client.SchemaOf[doc]())
			if d.Schema == nil || !d.Schema.Equal(want) || d.Version == nil || *d.Version != 1 || d.Stats == nil {
				t.Fatalf("described %+v, schema %v, want %v", d, d.Schema, want)
			}
			_, err := e.c.DescribeTable(ctx(), []string{"desc"}, &client.DescribeTableOptions{Version: client.Ptr(int64(9))})
			wantErr(t, err, client.ErrTableVersionNotFound)
		},
		"TableExists": func(t *testing.T, e *env) {
			e.docsTable(t, 1, "te")
			yes := must[bool](t)(e.c.TableExists(ctx(), []string{"te"}, nil))
			no := must[bool](t)(e.c.TableExists(ctx(), []string{"te"}, client.Ptr(int64(5))))
			missing := must[bool](t)(e.c.TableExists(ctx(), []string{"te-missing"}, nil))
			if !yes || no || missing {
				t.Fatalf("exists: %v, version 5: %v, missing table: %v", yes, no, missing)
			}
		},
		"DropTable": func(t *testing.T, e *env) {
			e.docsTable(t, 1, "dt")
			d := must[*client.DroppedTable](t)(e.c.DropTable(ctx(), []string{"dt"}))
			if !slices.Equal(d.ID, []string{"dt"}) {
				t.Fatalf("dropped %+v", d)
			}
			_, err := e.c.DropTable(ctx(), []string{"dt"})
			wantErr(t, err, client.ErrTableNotFound)
		},
		"DeregisterTable": func(t *testing.T, e *env) {
			must[*client.TableInfo](t)(e.c.RegisterTable(ctx(), []string{"dereg"}, "s3://bucket/dereg.lance", nil))
			d := must[*client.DroppedTable](t)(e.c.DeregisterTable(ctx(), []string{"dereg"}))
			if d.Location != "s3://bucket/dereg.lance" {
				t.Fatalf("deregistered %+v", d)
			}
			_, err := e.c.DeregisterTable(ctx(), []string{"dereg"})
			wantErr(t, err, client.ErrTableNotFound)
		},
		"RestoreTable": func(t *testing.T, e *env) {
			tbl := e.docsTable(t, 3, "restore")
			must[*client.WriteResult](t)(tbl.Delete(ctx(), "id > 0"))
			if err := tbl.Restore(ctx(), 1); err != nil {
				t.Fatal(err)
			}
			if n := must[int64](t)(tbl.CountRows(ctx(), "")); n != 3 {
				t.Fatalf("after restoring version 1: %d rows", n)
			}
			if v := must[int64](t)(tbl.Version(ctx())); v != 3 {
				t.Fatalf("restore made version %d, want 3", v)
			}
			wantErr(t, tbl.Restore(ctx(), 40), client.ErrTableVersionNotFound)
		},
		"RenameTable": func(t *testing.T, e *env) {
			must[map[string]string](t)(e.c.CreateNamespace(ctx(), []string{"rn"}, nil))
			e.docsTable(t, 1, "old")
			must[string](t)(e.c.RenameTable(ctx(), []string{"old"}, []string{"rn"}, "new"))
			if n := must[int64](t)(e.c.Table("rn", "new").CountRows(ctx(), "")); n != 1 {
				t.Fatalf("renamed table has %d rows", n)
			}
			_, err := e.c.RenameTable(ctx(), []string{"old"}, nil, "x")
			wantErr(t, err, client.ErrTableNotFound)
		},
		"UpdateTableSchemaMetadata": func(t *testing.T, e *env) {
			tbl := e.docsTable(t, 1, "schemamd")
			md := must[map[string]string](t)(e.c.UpdateSchemaMetadata(ctx(), tbl.ID(), map[string]string{"owner": "ann"}))
			if md["owner"] != "ann" {
				t.Fatalf("metadata %v", md)
			}
			s := must[*arrow.Schema](t)(tbl.Schema(ctx()))
			if i := s.Metadata().FindKey("owner"); i < 0 || s.Metadata().Values()[i] != "ann" {
				t.Fatalf("schema metadata %v", s.Metadata())
			}
		},
		"ListTableVersions": func(t *testing.T, e *env) {
			tbl := e.docsTable(t, 2, "ltv")
			must[*client.WriteResult](t)(tbl.Add(ctx(), client.Structs(docs(2, 1))))
			var got []int64
			for v, err := range tbl.Versions(ctx()) {
				if err != nil {
					t.Fatal(err)
				}
				got = append(got, v.Version)
			}
			if !slices.Equal(got, []int64{1, 2}) {
				t.Fatalf("versions %v", got)
			}
			latest := must[*client.TableVersion](t)(e.c.LatestTableVersion(ctx(), tbl.ID(), ""))
			if latest.Version != 2 {
				t.Fatalf("latest %+v", latest)
			}
		},
		"CreateTableVersion": func(t *testing.T, e *env) {
			info := must[*client.TableInfo](t)(e.c.DeclareTable(ctx(), []string{"ctv"}, nil))
			v, _ := must2[*client.TableVersion, string](t)(e.c.CreateTableVersion(ctx(), []string{"ctv"}, client.VersionCommit{Version: 1, ManifestPath: stage(t, info.Location, 1), NamingScheme: client.NamingV1}))
			if v.Version != 1 || !strings.HasSuffix(v.ManifestPath, "/_versions/1.manifest") {
				t.Fatalf("committed %+v", v)
			}
			_, _, err := e.c.CreateTableVersion(ctx(), []string{"ctv"}, client.VersionCommit{Version: 1, ManifestPath: stage(t, info.Location, 1)})
			wantErr(t, err, client.ErrConcurrentModification)
		},
		"DescribeTableVersion": func(t *testing.T, e *env) {
			e.declared(t, 2, "dtv")
			v := must[*client.TableVersion](t)(e.c.DescribeTableVersion(ctx(), []string{"dtv"}, "", client.Ptr(int64(1))))
			latest := must[*client.TableVersion](t)(e.c.DescribeTableVersion(ctx(), []string{"dtv"}, "", nil))
			if v.Version != 1 || latest.Version != 2 || v.Timestamp.IsZero() {
				t.Fatalf("version 1 %+v, latest %+v", v, latest)
			}
			_, err := e.c.DescribeTableVersion(ctx(), []string{"dtv"}, "", client.Ptr(int64(7)))
			wantErr(t, err, client.ErrTableVersionNotFound)
		},
		"BatchDeleteTableVersions": func(t *testing.T, e *env) {
			e.declared(t, 3, "bdv")
			n, _ := must2[int64, string](t)(e.c.DeleteTableVersions(ctx(), []string{"bdv"}, "", client.VersionRange{Start: 1, End: 3}))
			if n != 2 {
				t.Fatalf("deleted %d versions, want 2", n)
			}
			left := collect(t, e.c.ListTableVersions(ctx(), []string{"bdv"}, ""))
			if len(left) != 1 || left[0].Version != 3 {
				t.Fatalf("left %+v", left)
			}
		},
		"BatchCreateTableVersions": func(t *testing.T, e *env) {
			a := must[*client.TableInfo](t)(e.c.DeclareTable(ctx(), []string{"bcv-a"}, nil))
			b := must[*client.TableInfo](t)(e.c.DeclareTable(ctx(), []string{"bcv-b"}, nil))
			vs, _ := must2[[]client.TableVersion, string](t)(e.c.CommitVersions(ctx(),
				client.TableCommit{ID: []string{"bcv-a"}, VersionCommit: client.VersionCommit{Version: 1, ManifestPath: stage(t, a.Location, 1)}},
				client.TableCommit{ID: []string{"bcv-b"}, VersionCommit: client.VersionCommit{Version: 1, ManifestPath: stage(t, b.Location, 1)}}))
			if len(vs) != 2 || vs[0].Version != 1 || vs[1].Version != 1 {
				t.Fatalf("committed %+v", vs)
			}
			// One conflicting entry: neither commits.
			_, _, err := e.c.CommitVersions(ctx(),
				client.TableCommit{ID: []string{"bcv-a"}, VersionCommit: client.VersionCommit{Version: 2, ManifestPath: stage(t, a.Location, 2)}},
				client.TableCommit{ID: []string{"bcv-b"}, VersionCommit: client.VersionCommit{Version: 1, ManifestPath: stage(t, b.Location, 1)}})
			wantErr(t, err, client.ErrConcurrentModification)
			if latest := must[*client.TableVersion](t)(e.c.LatestTableVersion(ctx(), []string{"bcv-a"}, "")); latest.Version != 1 {
				t.Fatalf("a failed batch committed version %d", latest.Version)
			}
		},
		"BatchCommitTables": func(t *testing.T, e *env) {
			results, _ := must2[[]client.BatchResult, string](t)(e.c.BatchCommit(ctx(),
				client.BatchOp{ID: []string{"bct"}, Declare: &client.DeclareTableOptions{}},
			))
			if len(results) != 1 || results[0].Declared == nil {
				t.Fatalf("results %+v", results)
			}
			loc := results[0].Declared.Location
			results, _ = must2[[]client.BatchResult, string](t)(e.c.BatchCommit(ctx(),
				client.BatchOp{ID: []string{"bct"}, CommitVersion: &client.VersionCommit{Version: 1, ManifestPath: stage(t, loc, 1)}},
				client.BatchOp{ID: []string{"bct"}, CommitVersion: &client.VersionCommit{Version: 2, ManifestPath: stage(t, loc, 2)}},
				client.BatchOp{ID: []string{"bct"}, DeleteVersions: &client.BatchDelete{Ranges: []client.VersionRange{{Start: 1, End: 2}}}},
			))
			if results[1].Version == nil || results[1].Version.Version != 2 || results[2].DeletedCount != 1 {
				t.Fatalf("results %+v", results)
			}
			results, _ = must2[[]client.BatchResult, string](t)(e.c.BatchCommit(ctx(), client.BatchOp{ID: []string{"bct"}, Deregister: true}))
			if results[0].Deregistered == nil || results[0].Deregistered.Location != loc {
				t.Fatalf("deregister result %+v", results[0])
			}
		},
		"AlterTableAlterColumns": func(t *testing.T, e *env) {
			tbl := e.docsTable(t, 2, "alter")
			must[int64](t)(tbl.AlterColumns(ctx(),
				client.ColumnAlteration{Path: "text", Rename: "body"},
				client.ColumnAlteration{Path: "rating", DataType: arrow.PrimitiveTypes.Float32},
			))
			s := must[*arrow.Schema](t)(tbl.Schema(ctx()))
			if !s.HasField("body") || s.HasField("text") {
				t.Fatalf("schema after rename: %v", s)
			}
			if f, _ := s.FieldsByName("rating"); len(f) != 1 || !arrow.TypeEqual(f[0].Type, arrow.PrimitiveTypes.Float32) {
				t.Fatalf("rating after cast: %v", f)
			}
			_, err := tbl.AlterColumns(ctx(), client.ColumnAlteration{Path: "nope", Rename: "x"})
			wantErr(t, err, client.ErrTableColumnNotFound)
		},
		"UpdateFieldMetadata": func(t *testing.T, e *env) {
			tbl := e.docsTable(t, 1, "fieldmd")
			_, fields, err := e.c.UpdateFieldMetadata(ctx(), tbl.ID(), client.FieldMetadataUpdate{Path: "text", Set: map[string]*string{"pii": client.Ptr("no")}})
			if err != nil || fields["text"]["pii"] != "no" {
				t.Fatalf("fields %v, %v", fields, err)
			}
			s := must[*arrow.Schema](t)(tbl.Schema(ctx()))
			f, _ := s.FieldsByName("text")
			if i := f[0].Metadata.FindKey("pii"); i < 0 || f[0].Metadata.Values()[i] != "no" {
				t.Fatalf("field metadata %v", f[0].Metadata)
			}
		},
		"AlterTableDropColumns": func(t *testing.T, e *env) {
			tbl := e.docsTable(t, 1, "dropcol")
			must[int64](t)(tbl.DropColumns(ctx(), "rating"))
			if s := must[*arrow.Schema](t)(tbl.Schema(ctx())); s.HasField("rating") || s.NumFields() != 3 {
				t.Fatalf("schema %v", s)
			}
			_, err := tbl.DropColumns(ctx(), "nope")
			wantErr(t, err, client.ErrTableColumnNotFound)
		},
		"GetTableStats": func(t *testing.T, e *env) {
			tbl := e.docsTable(t, 5, "stats")
			must[*client.WriteResult](t)(tbl.Add(ctx(), client.Structs(docs(5, 2))))
			st := must[*client.TableStats](t)(tbl.Stats(ctx()))
			if st.NumRows != 7 || st.NumFragments != 2 || st.FragmentRows.Max != 5 || st.FragmentRows.Min != 2 {
				t.Fatalf("stats %+v", st)
			}
		},
		"InsertIntoTable": func(t *testing.T, e *env) {
			tbl := e.docsTable(t, 2, "insert")
			res := must[*client.WriteResult](t)(tbl.Add(ctx(), client.Structs(docs(2, 3))))
			if res.Inserted != 3 || res.Version != 2 {
				t.Fatalf("add %+v", res)
			}
			res = must[*client.WriteResult](t)(tbl.Overwrite(ctx(), client.Structs(docs(10, 1))))
			if n := must[int64](t)(tbl.CountRows(ctx(), "")); n != 1 || res.Version != 3 {
				t.Fatalf("overwrite %+v left %d rows", res, n)
			}
			type other struct {
				Name string `arrow:"name"`
			}
			_, err := tbl.Add(ctx(), client.Structs([]other{{"x"}}))
			wantErr(t, err, client.ErrTableSchemaValidationError)
		},
		"MergeInsertIntoTable": func(t *testing.T, e *env) {
			tbl := e.docsTable(t, 3, "merge")
			src := []doc{{ID: 1, Text: "changed", Vector: []float32{0, 0, 0, 0}}, {ID: 9, Text: "new", Vector: []float32{1, 1, 1, 1}}}
			res := must[*client.WriteResult](t)(tbl.MergeInsert("id").WhenMatchedUpdateAll().WhenNotMatchedInsertAll().Execute(ctx(), client.Structs(src)))
			if res.Inserted != 1 || res.Updated != 1 {
				t.Fatalf("merge %+v", res)
			}
			res = must[*client.WriteResult](t)(tbl.MergeInsert("id").WhenNotMatchedBySourceDeleteWhere("id = 0").Execute(ctx(), client.Structs(src)))
			if res.Deleted != 1 {
				t.Fatalf("delete by source %+v", res)
			}
			got := must[[]doc](t)(client.ScanAll[doc](ctx(), tbl.Query().OrderBy(client.Asc("id"))))
			if len(got) != 3 || got[0].ID != 1 || got[0].Text != "changed" || got[2].ID != 9 {
				t.Fatalf("after merges %+v", got)
			}
			_, err := tbl.MergeInsert("nope").WhenNotMatchedInsertAll().Execute(ctx(), client.Structs(src))
			wantErr(t, err, client.ErrTableColumnNotFound)
		},
		"UpdateTable": func(t *testing.T, e *env) {
			tbl := e.docsTable(t, 3, "update")
			res := must[*client.WriteResult](t)(tbl.Update(ctx(), "id >= 1", map[string]any{"text": "it's 'quoted'", "rating": 9.5}))
			if res.Updated != 2 {
				t.Fatalf("update %+v", res)
			}
			if n := must[int64](t)(tbl.CountRows(ctx(), `text = 'it''s ''quoted''' AND rating = 9.5`)); n != 2 {
				t.Fatalf("%d rows updated as asked", n)
			}
			must[*client.WriteResult](t)(tbl.UpdateSQL(ctx(), "", map[string]string{"id": "id * 10"}))
			if n := must[int64](t)(tbl.CountRows(ctx(), "id IN (0, 10, 20)")); n != 3 {
				t.Fatalf("UpdateSQL changed %d rows", n)
			}
			_, err := tbl.Update(ctx(), "", map[string]any{"nope": 1})
			wantErr(t, err, client.ErrTableColumnNotFound)
		},
		"DeleteFromTable": func(t *testing.T, e *env) {
			tbl := e.docsTable(t, 4, "delete")
			res := must[*client.WriteResult](t)(tbl.Delete(ctx(), "id < 3"))
			if res.Deleted != 3 || must[int64](t)(tbl.CountRows(ctx(), "")) != 1 {
				t.Fatalf("delete %+v", res)
			}
			_, err := tbl.Delete(ctx(), "id <")
			wantErr(t, err, client.ErrInvalidInput)
		},
		"QueryTable": func(t *testing.T, e *env) {
			tbl := e.docsTable(t, 6, "query")
			res := must[arrow.Table](t)(tbl.Search([]float32{4, 1, 1, 0}).Limit(2).Select("id", "text").ToArrow(ctx()))
			defer res.Release()
			if res.NumRows() != 2 || res.NumCols() != 3 || res.Schema().Field(2).Name != "_distance" {
				t.Fatalf("search result %v with %d rows", res.Schema(), res.NumRows())
			}
			_, err := tbl.Query().Where("nope > 1").ToArrow(ctx())
			wantErr(t, err, client.ErrTableColumnNotFound)
		},
		"CountTableRows": func(t *testing.T, e *env) {
			tbl := e.docsTable(t, 6, "count")
			if n := must[int64](t)(tbl.CountRows(ctx(), "rating IS NOT NULL")); n != 3 {
				t.Fatalf("count %d", n)
			}
			_, err := e.c.Table("count-missing").CountRows(ctx(), "")
			wantErr(t, err, client.ErrTableNotFound)
		},
		"CreateTable": func(t *testing.T, e *env) {
			tbl := e.c.Table("create")
			created := must[*client.CreatedTable](t)(tbl.Create(ctx(), client.Structs(docs(0, 2)), &client.CreateTableOptions{Properties: map[string]string{"k": "v"}}))
			if created.Version != 1 || created.Properties["k"] != "v" {
				t.Fatalf("created %+v", created)
			}
			_, err := tbl.Create(ctx(), client.Structs(docs(0, 2)), nil)
			wantErr(t, err, client.ErrTableAlreadyExists)
			created = must[*client.CreatedTable](t)(tbl.Create(ctx(), client.Structs([]doc{}), &client.CreateTableOptions{Mode: client.ModeOverwrite}))
			if n := must[int64](t)(tbl.CountRows(ctx(), "")); n != 0 || created.Version != 2 {
				t.Fatalf("overwrite with no rows: %+v, %d rows", created, n)
			}
		},
		"ExplainTableQueryPlan": func(t *testing.T, e *env) {
			tbl := e.docsTable(t, 3, "explain")
			plan := must[string](t)(tbl.Search([]float32{1, 1, 1, 0}).Where("id > 0").Explain(ctx(), true))
			if !strings.Contains(plan, "exact search") {
				t.Fatalf("plan %q", plan)
			}
		},
		"AnalyzeTableQueryPlan": func(t *testing.T, e *env) {
			tbl := e.docsTable(t, 3, "analyze")
			if a := must[string](t)(tbl.Query().Where("id > 0").OrderBy(client.Desc("id")).Analyze(ctx())); a == "" {
				t.Fatal("empty analysis")
			}
		},
		"AlterTableAddColumns": func(t *testing.T, e *env) {
			tbl := e.docsTable(t, 3, "addcol")
			must[int64](t)(tbl.AddColumns(ctx(), client.NewColumn{Name: "double_id", Expression: "id * 2"}))
			if n := must[int64](t)(tbl.CountRows(ctx(), "double_id = id * 2")); n != 3 {
				t.Fatalf("%d rows computed", n)
			}
			_, err := tbl.AddColumns(ctx(), client.NewColumn{Name: "bad", Expression: "nope + 1"})
			wantErr(t, err, client.ErrTableColumnNotFound)
		},
		"AlterTableBackfillColumns": func(t *testing.T, e *env) {
			tbl := e.docsTable(t, 3, "backfill")
			must[int64](t)(tbl.AddColumns(ctx(), client.NewColumn{Name: "next_id", Expression: "id + 1", Computed: true}))
			job := must[string](t)(e.c.BackfillColumn(ctx(), tbl.ID(), "next_id", "id < 2"))
			if tx := waitTransaction(t, e.c, job); tx.Status != client.StatusSucceeded {
				t.Fatalf("backfill job %+v", tx)
			}
			if n := must[int64](t)(tbl.CountRows(ctx(), "next_id = id + 1")); n != 2 {
				t.Fatalf("%d rows backfilled, want 2", n)
			}
			_, err := e.c.BackfillColumn(ctx(), tbl.ID(), "id", "")
			wantErr(t, err, client.ErrInvalidInput)
		},
		"RefreshMaterializedView": func(t *testing.T, e *env) {
			_, err := e.c.RefreshMaterializedView(ctx(), []string{"view"}, &client.RefreshOptions{Concurrency: 2})
			wantErr(t, err, client.ErrUnsupported)
		},
		"CreateMaterializedView": func(t *testing.T, e *env) {
			schema := must[*arrow.Schema](t)(client.SchemaOf[doc]())
			_, err := e.c.CreateMaterializedView(ctx(), []string{"view"}, client.MaterializedView{
				Kind: client.ViewUDTF, SourceQuery: "SELECT * FROM t", OutputSchema: schema,
				UDTF: &client.UDTFSpec{Kind: client.ViewUDTF, Envelope: "e30=", SHA256: "x", Name: "f", Version: "1", InputColumns: []string{"id"}, NumCPUs: 1},
			})
			wantErr(t, err, client.ErrUnsupported)
		},
		"CreateTableIndex": func(t *testing.T, e *env) {
			tbl := e.docsTable(t, 40, "index")
			if err := tbl.CreateIndex(ctx(), "vector", client.IVFFlat{NumPartitions: 2, DistanceType: client.DistanceL2}, &client.IndexOptions{Name: "vidx"}); err != nil {
				t.Fatal(err)
			}
			if err := tbl.CreateIndex(ctx(), "text", client.FTS{WithPosition: client.Ptr(true), Stem: client.Ptr(true)}, nil); err != nil {
				t.Fatal(err)
			}
			if err := tbl.WaitForIndex(ctx(), "vidx", "text_idx"); err != nil {
				t.Fatal(err)
			}
			wantErr(t, tbl.CreateIndex(ctx(), "vector", client.IVFPQ{}, &client.IndexOptions{Name: "vidx"}), client.ErrTableIndexAlreadyExists)
			wantErr(t, tbl.WaitForIndex(ctx(), "nope"), client.ErrTableIndexNotFound)
		},
		"CreateTableScalarIndex": func(t *testing.T, e *env) {
			tbl := e.docsTable(t, 4, "scalar")
			if _, err := e.c.CreateScalarIndex(ctx(), tbl.ID(), "id", client.BTree{}, &client.IndexOptions{Name: "by_id"}); err != nil {
				t.Fatal(err)
			}
			ixs := must[[]client.Index](t)(tbl.ListIndices(ctx()))
			if len(ixs) != 1 || ixs[0].Name != "by_id" || ixs[0].Type != client.IndexBTree {
				t.Fatalf("indexes %+v", ixs)
			}
		},
		"ListTableIndices": func(t *testing.T, e *env) {
			tbl := e.docsTable(t, 4, "listidx")
			for _, col := range []string{"id", "rating"} {
				if err := tbl.CreateIndex(ctx(), col, client.BTree{}, nil); err != nil {
					t.Fatal(err)
				}
			}
			ixs := must[[]client.Index](t)(tbl.ListIndices(ctx()))
			if len(ixs) != 2 || ixs[0].Name != "id_idx" || !slices.Equal(ixs[1].Columns, []string{"rating"}) || ixs[0].NumIndexedRows != 4 {
				t.Fatalf("indexes %+v", ixs)
			}
			page, next := must2[[]client.Index, string](t)(e.c.ListIndicesPage(ctx(), tbl.ID(), nil, "", 1))
			if len(page) != 1 || next == "" {
				t.Fatalf("first page %+v, next %q", page, next)
			}
		},
		"DescribeTableIndexStats": func(t *testing.T, e *env) {
			tbl := e.docsTable(t, 40, "idxstats")
			if err := tbl.CreateIndex(ctx(), "vector", client.IVFFlat{NumPartitions: 2, DistanceType: client.DistanceCosine}, nil); err != nil {
				t.Fatal(err)
			}
			if err := tbl.WaitForIndex(ctx(), "vector_idx"); err != nil {
				t.Fatal(err)
			}
			must[*client.WriteResult](t)(tbl.Add(ctx(), client.Structs(docs(40, 2))))
			st := must[*client.IndexStats](t)(tbl.IndexStats(ctx(), "vector_idx"))
			if st.Type != client.IndexIVFFlat || st.DistanceType != client.DistanceCosine || st.NumIndexedRows != 40 || st.NumUnindexedRows != 2 {
				t.Fatalf("stats %+v", st)
			}
			_, err := tbl.IndexStats(ctx(), "nope")
			wantErr(t, err, client.ErrTableIndexNotFound)
		},
		"DropTableIndex": func(t *testing.T, e *env) {
			tbl := e.docsTable(t, 2, "dropidx")
			if err := tbl.CreateIndex(ctx(), "id", client.Bitmap{}, nil); err != nil {
				t.Fatal(err)
			}
			if err := tbl.DropIndex(ctx(), "id_idx"); err != nil {
				t.Fatal(err)
			}
			if ixs := must[[]client.Index](t)(tbl.ListIndices(ctx())); len(ixs) != 0 {
				t.Fatalf("indexes left: %+v", ixs)
			}
			wantErr(t, tbl.DropIndex(ctx(), "id_idx"), client.ErrTableIndexNotFound)
		},
		"ListTableTags": func(t *testing.T, e *env) {
			tbl := e.docsTable(t, 1, "listtags")
			must[*client.WriteResult](t)(tbl.Add(ctx(), client.Structs(docs(1, 1))))
			for _, tag := range []string{"b", "a"} {
				if err := tbl.Tags().Create(ctx(), tag, 1); err != nil {
					t.Fatal(err)
				}
			}
			tags := collect(t, tbl.Tags().List(ctx()))
			if len(tags) != 2 || tags[0].Name != "a" || tags[1].Version != 1 {
				t.Fatalf("tags %+v", tags)
			}
		},
		"GetTableTagVersion": func(t *testing.T, e *env) {
			tbl := e.docsTable(t, 1, "gettag")
			if err := tbl.Tags().Create(ctx(), "first", 1); err != nil {
				t.Fatal(err)
			}
			if v := must[int64](t)(tbl.Tags().Version(ctx(), "first")); v != 1 {
				t.Fatalf("tag names version %d", v)
			}
			_, err := tbl.Tags().Version(ctx(), "nope")
			wantErr(t, err, client.ErrTableTagNotFound)
		},
		"DeclareTable": func(t *testing.T, e *env) {
			info := must[*client.TableInfo](t)(e.c.DeclareTable(ctx(), []string{"decl"}, &client.DeclareTableOptions{Properties: map[string]string{"k": "v"}}))
			if !info.ManagedVersioning || !strings.HasPrefix(info.Location, e.s.Warehouse.Root()) || info.Properties["k"] != "v" {
				t.Fatalf("declared %+v", info)
			}
			d := must[*client.TableDescription](t)(e.c.DescribeTable(ctx(), []string{"decl"}, &client.DescribeTableOptions{CheckDeclared: true}))
			if d.IsOnlyDeclared == nil || !*d.IsOnlyDeclared {
				t.Fatalf("described %+v", d)
			}
			_, err := e.c.DeclareTable(ctx(), []string{"decl"}, nil)
			wantErr(t, err, client.ErrTableAlreadyExists)
		},
		"CreateTableTag": func(t *testing.T, e *env) {
			tbl := e.docsTable(t, 1, "createtag")
			if err := tbl.Tags().Create(ctx(), "v1", 1); err != nil {
				t.Fatal(err)
			}
			wantErr(t, tbl.Tags().Create(ctx(), "v1", 1), client.ErrTableTagAlreadyExists)
			wantErr(t, tbl.Tags().Create(ctx(), "v9", 9), client.ErrTableVersionNotFound)
		},
		"DeleteTableTag": func(t *testing.T, e *env) {
			tbl := e.docsTable(t, 1, "deletetag")
			if err := tbl.Tags().Create(ctx(), "gone", 1); err != nil {
				t.Fatal(err)
			}
			if err := tbl.Tags().Delete(ctx(), "gone"); err != nil {
				t.Fatal(err)
			}
			wantErr(t, tbl.Tags().Delete(ctx(), "gone"), client.ErrTableTagNotFound)
		},
		"UpdateTableTag": func(t *testing.T, e *env) {
			tbl := e.docsTable(t, 1, "updatetag")
			must[*client.WriteResult](t)(tbl.Add(ctx(), client.Structs(docs(1, 1))))
			if err := tbl.Tags().Create(ctx(), "moving", 1); err != nil {
				t.Fatal(err)
			}
			if err := tbl.Tags().Update(ctx(), "moving", 2); err != nil {
				t.Fatal(err)
			}
			if v := must[int64](t)(tbl.Tags().Version(ctx(), "moving")); v != 2 {
				t.Fatalf("tag names version %d", v)
			}
			wantErr(t, tbl.Tags().Update(ctx(), "nope", 1), client.ErrTableTagNotFound)
		},
		"ListTableBranches": func(t *testing.T, e *env) {
			e.declared(t, 2, "listbr")
			for _, b := range []string{"dev", "bugfix"} {
				must[string](t)(e.c.CreateTableBranch(ctx(), []string{"listbr"}, b, "", client.Ptr(int64(1))))
			}
			bs := collect(t, e.c.ListTableBranches(ctx(), []string{"listbr"}))
			if len(bs) != 2 || bs[0].Name != "bugfix" || bs[1].ParentVersion != 1 || bs[1].CreatedAt.IsZero() {
				t.Fatalf("branches %+v", bs)
			}
		},
		"CreateTableBranch": func(t *testing.T, e *env) {
			e.declared(t, 1, "createbr")
			must[string](t)(e.c.CreateTableBranch(ctx(), []string{"createbr"}, "dev", "", nil))
			_, err := e.c.CreateTableBranch(ctx(), []string{"createbr"}, "dev", "", nil)
			wantErr(t, err, client.ErrTableBranchAlreadyExists)
			_, err = e.c.CreateTableBranch(ctx(), []string{"createbr-missing"}, "x", "", nil)
			wantErr(t, err, client.ErrTableNotFound)
		},
		"DeleteTableBranch": func(t *testing.T, e *env) {
			e.declared(t, 1, "deletebr")
			must[string](t)(e.c.CreateTableBranch(ctx(), []string{"deletebr"}, "dev", "", nil))
			must[string](t)(e.c.DeleteTableBranch(ctx(), []string{"deletebr"}, "dev"))
			_, err := e.c.DeleteTableBranch(ctx(), []string{"deletebr"}, "dev")
			wantErr(t, err, client.ErrTableBranchNotFound)
		},
		"DescribeTransaction": func(t *testing.T, e *env) {
			e.docsTable(t, 1, "tx")
			d := must[*client.DroppedTable](t)(e.c.DropTable(ctx(), []string{"tx"}))
			if d.TransactionID == "" {
				t.Fatal("the drop returned no transaction")
			}
			if tx := waitTransaction(t, e.c, d.TransactionID); tx.Status != client.StatusSucceeded {
				t.Fatalf("drop transaction %+v", tx)
			}
			_, err := e.c.DescribeTransaction(ctx(), []string{"no-such-transaction"})
			wantErr(t, err, client.ErrTransactionNotFound)
		},
		"AlterTransaction": func(t *testing.T, e *env) {
			e.docsTable(t, 1, "alter-tx")
			d := must[*client.DroppedTable](t)(e.c.DropTable(ctx(), []string{"alter-tx"}))
			waitTransaction(t, e.c, d.TransactionID)
			tx := must[*client.Transaction](t)(e.c.AlterTransaction(ctx(), []string{d.TransactionID},
				client.TransactionAction{SetProperty: &client.PropertyAction{Key: "note", Value: "seen"}}))
			if tx.Properties["note"] != "seen" {
				t.Fatalf("transaction %+v", tx)
			}
			_, err := e.c.AlterTransaction(ctx(), []string{d.TransactionID},
				client.TransactionAction{SetProperty: &client.PropertyAction{Key: "note", Value: "again", Mode: client.ModeFail}})
			wantErr(t, err, client.ErrConcurrentModification)
		},
	}
}

func must2[A, B any](t *testing.T) func(A, B, error) (A, B) {
	return func(a A, b B, err error) (A, B) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return a, b
	}
}
