package client_test

import (
	"context"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

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
	return map[string]func(*testing.T, *env){
		"CreateNamespace": func(t *testing.T, e *env) {
			props := must[map[string]string](t)(e.c.CreateNamespace(t.Context(), []string{"cn"}, &client.CreateNamespaceOptions{Properties: map[string]string{"owner": "ann"}}))
			if props["owner"] != "ann" {
				t.Fatalf("properties %v", props)
			}
			_, err := e.c.CreateNamespace(t.Context(), []string{"cn"}, nil)
			wantErr(t, err, client.ErrNamespaceAlreadyExists)
			props = must[map[string]string](t)(e.c.CreateNamespace(t.Context(), []string{"cn"}, &client.CreateNamespaceOptions{Mode: client.ModeExistOK}))
			if props["owner"] != "ann" {
				t.Fatalf("ExistOk changed the namespace: %v", props)
			}
			_, err = e.c.CreateNamespace(t.Context(), []string{"nope", "child"}, nil)
			wantErr(t, err, client.ErrNamespaceNotFound)
		},
		"ListNamespaces": func(t *testing.T, e *env) {
			must[map[string]string](t)(e.c.CreateNamespace(t.Context(), []string{"ln"}, nil))
			for _, n := range []string{"b", "a", "c"} {
				must[map[string]string](t)(e.c.CreateNamespace(t.Context(), []string{"ln", n}, nil))
			}
			page, next := must2[[]string, string](t)(e.c.ListNamespacesPage(t.Context(), []string{"ln"}, "", 2))
			if !slices.Equal(page, []string{"a", "b"}) || next == "" {
				t.Fatalf("first page %v, next %q", page, next)
			}
			if all := collect(t, e.c.ListNamespaces(t.Context(), []string{"ln"})); !slices.Equal(all, []string{"a", "b", "c"}) {
				t.Fatalf("all %v", all)
			}
		},
		"DescribeNamespace": func(t *testing.T, e *env) {
			must[map[string]string](t)(e.c.CreateNamespace(t.Context(), []string{"dn"}, &client.CreateNamespaceOptions{Properties: map[string]string{"k": "v"}}))
			if props := must[map[string]string](t)(e.c.DescribeNamespace(t.Context(), []string{"dn"})); props["k"] != "v" {
				t.Fatalf("properties %v", props)
			}
			_, err := e.c.DescribeNamespace(t.Context(), []string{"dn-missing"})
			wantErr(t, err, client.ErrNamespaceNotFound)
		},
		"DropNamespace": func(t *testing.T, e *env) {
			must[map[string]string](t)(e.c.CreateNamespace(t.Context(), []string{"drop"}, nil))
			must[map[string]string](t)(e.c.CreateNamespace(t.Context(), []string{"drop", "child"}, nil))
			_, err := e.c.DropNamespace(t.Context(), []string{"drop"}, nil)
			wantErr(t, err, client.ErrNamespaceNotEmpty)
			dropped := must[*client.DroppedNamespace](t)(e.c.DropNamespace(t.Context(), []string{"drop"}, &client.DropNamespaceOptions{Behavior: client.BehaviorCascade}))
			if dropped == nil {
				t.Fatal("no report of the dropped namespace")
			}
			if d := must[*client.DroppedNamespace](t)(e.c.DropNamespace(t.Context(), []string{"drop"}, &client.DropNamespaceOptions{Mode: client.ModeSkip})); d != nil {
				t.Fatalf("skip reported %+v", d)
			}
			_, err = e.c.DropNamespace(t.Context(), []string{"drop"}, nil)
			wantErr(t, err, client.ErrNamespaceNotFound)
		},
		"NamespaceExists": func(t *testing.T, e *env) {
			must[map[string]string](t)(e.c.CreateNamespace(t.Context(), []string{"ex"}, nil))
			if !must[bool](t)(e.c.NamespaceExists(t.Context(), []string{"ex"})) || must[bool](t)(e.c.NamespaceExists(t.Context(), []string{"ex-missing"})) {
				t.Fatal("exists answered wrongly")
			}
		},
		"ListTables": func(t *testing.T, e *env) {
			must[map[string]string](t)(e.c.CreateNamespace(t.Context(), []string{"lt"}, nil))
			e.docsTable(t, 2, "lt", "managed")
			must[*client.TableInfo](t)(e.c.DeclareTable(t.Context(), []string{"lt", "declared"}, nil))
			if all := collect(t, e.c.ListTables(t.Context(), []string{"lt"})); !slices.Equal(all, []string{"declared", "managed"}) {
				t.Fatalf("tables %v", all)
			}
			page, _ := must2[[]string, string](t)(e.c.ListTablesPage(t.Context(), []string{"lt"}, "", 10, false))
			if !slices.Equal(page, []string{"managed"}) {
				t.Fatalf("without declared tables: %v", page)
			}
		},
		"ListAllTables": func(t *testing.T, e *env) {
			must[map[string]string](t)(e.c.CreateNamespace(t.Context(), []string{"lat"}, nil))
			e.docsTable(t, 1, "lat", "t")
			all := collect(t, e.c.ListAllTables(t.Context()))
			if !slices.ContainsFunc(all, func(id []string) bool { return slices.Equal(id, []string{"lat", "t"}) }) {
				t.Fatalf("lat$t not listed in %v", all)
			}
		},
		"RegisterTable": func(t *testing.T, e *env) {
			info := must[*client.TableInfo](t)(e.c.RegisterTable(t.Context(), []string{"reg"}, "s3://bucket/reg.lance", &client.RegisterTableOptions{Properties: map[string]string{"k": "v"}}))
			if info.Location != "s3://bucket/reg.lance" || info.Properties["k"] != "v" {
				t.Fatalf("registered %+v", info)
			}
			_, err := e.c.RegisterTable(t.Context(), []string{"reg"}, "s3://bucket/other.lance", nil)
			wantErr(t, err, client.ErrTableAlreadyExists)
			info = must[*client.TableInfo](t)(e.c.RegisterTable(t.Context(), []string{"reg"}, "s3://bucket/other.lance", &client.RegisterTableOptions{Mode: client.ModeOverwrite}))
			if info.Location != "s3://bucket/other.lance" {
				t.Fatalf("overwrite kept %s", info.Location)
			}
		},
		"DescribeTable": func(t *testing.T, e *env) {
			e.docsTable(t, 3, "desc")
			d := must[*client.TableDescription](t)(e.c.DescribeTable(t.Context(), []string{"desc"}, nil))
			want := must[*arrow.Schema](t)(client.SchemaOf[doc]())
			if d.Schema == nil || !d.Schema.Equal(want) || d.Version == nil || *d.Version != 1 || d.Stats == nil {
				t.Fatalf("described %+v, schema %v, want %v", d, d.Schema, want)
			}
			_, err := e.c.DescribeTable(t.Context(), []string{"desc"}, &client.DescribeTableOptions{Version: client.Ptr(int64(9))})
			wantErr(t, err, client.ErrTableVersionNotFound)
		},
		"TableExists": func(t *testing.T, e *env) {
			e.docsTable(t, 1, "te")
			yes := must[bool](t)(e.c.TableExists(t.Context(), []string{"te"}, nil))
			no := must[bool](t)(e.c.TableExists(t.Context(), []string{"te"}, client.Ptr(int64(5))))
			missing := must[bool](t)(e.c.TableExists(t.Context(), []string{"te-missing"}, nil))
			if !yes || no || missing {
				t.Fatalf("exists: %v, version 5: %v, missing table: %v", yes, no, missing)
			}
		},
		"DropTable": func(t *testing.T, e *env) {
			e.docsTable(t, 1, "dt")
			d := must[*client.DroppedTable](t)(e.c.DropTable(t.Context(), []string{"dt"}))
			if !slices.Equal(d.ID, []string{"dt"}) {
				t.Fatalf("dropped %+v", d)
			}
			_, err := e.c.DropTable(t.Context(), []string{"dt"})
			wantErr(t, err, client.ErrTableNotFound)
		},
		"DeregisterTable": func(t *testing.T, e *env) {
			must[*client.TableInfo](t)(e.c.RegisterTable(t.Context(), []string{"dereg"}, "s3://bucket/dereg.lance", nil))
			d := must[*client.DroppedTable](t)(e.c.DeregisterTable(t.Context(), []string{"dereg"}))
			if d.Location != "s3://bucket/dereg.lance" {
				t.Fatalf("deregistered %+v", d)
			}
			_, err := e.c.DeregisterTable(t.Context(), []string{"dereg"})
			wantErr(t, err, client.ErrTableNotFound)
		},
		"RestoreTable": func(t *testing.T, e *env) {
			tbl := e.docsTable(t, 3, "restore")
			must[*client.WriteResult](t)(tbl.Delete(t.Context(), "id > 0"))
			if err := tbl.Restore(t.Context(), 1); err != nil {
				t.Fatal(err)
			}
			if n := must[int64](t)(tbl.CountRows(t.Context(), "")); n != 3 {
				t.Fatalf("after restoring version 1: %d rows", n)
			}
			if v := must[int64](t)(tbl.Version(t.Context())); v != 3 {
				t.Fatalf("restore made version %d, want 3", v)
			}
			wantErr(t, tbl.Restore(t.Context(), 40), client.ErrTableVersionNotFound)
		},
		"RenameTable": func(t *testing.T, e *env) {
			must[map[string]string](t)(e.c.CreateNamespace(t.Context(), []string{"rn"}, nil))
			e.docsTable(t, 1, "old")
			must[string](t)(e.c.RenameTable(t.Context(), []string{"old"}, []string{"rn"}, "new"))
			if n := must[int64](t)(e.c.Table("rn", "new").CountRows(t.Context(), "")); n != 1 {
				t.Fatalf("renamed table has %d rows", n)
			}
			_, err := e.c.RenameTable(t.Context(), []string{"old"}, nil, "x")
			wantErr(t, err, client.ErrTableNotFound)
		},
		"UpdateTableSchemaMetadata": func(t *testing.T, e *env) {
			tbl := e.docsTable(t, 1, "schemamd")
			md := must[map[string]string](t)(e.c.UpdateSchemaMetadata(t.Context(), tbl.ID(), map[string]string{"owner": "ann"}))
			if md["owner"] != "ann" {
				t.Fatalf("metadata %v", md)
			}
			s := must[*arrow.Schema](t)(tbl.Schema(t.Context()))
			if i := s.Metadata().FindKey("owner"); i < 0 || s.Metadata().Values()[i] != "ann" {
				t.Fatalf("schema metadata %v", s.Metadata())
			}
		},
		"ListTableVersions": func(t *testing.T, e *env) {
			tbl := e.docsTable(t, 2, "ltv")
			must[*client.WriteResult](t)(tbl.Add(t.Context(), client.Structs(docs(2, 1))))
			var got []int64
			for v, err := range tbl.Versions(t.Context()) {
				if err != nil {
					t.Fatal(err)
				}
				got = append(got, v.Version)
			}
			if !slices.Equal(got, []int64{1, 2}) {
				t.Fatalf("versions %v", got)
			}
			latest := must[*client.TableVersion](t)(e.c.LatestTableVersion(t.Context(), tbl.ID(), ""))
			if latest.Version != 2 {
				t.Fatalf("latest %+v", latest)
			}
		},
		"CreateTableVersion": func(t *testing.T, e *env) {
			info := must[*client.TableInfo](t)(e.c.DeclareTable(t.Context(), []string{"ctv"}, nil))
			v, _ := must2[*client.TableVersion, string](t)(e.c.CreateTableVersion(t.Context(), []string{"ctv"}, client.VersionCommit{Version: 1, ManifestPath: stage(t, info.Location, 1), NamingScheme: client.NamingV1}))
			if v.Version != 1 || !strings.HasSuffix(v.ManifestPath, "/_versions/1.manifest") {
				t.Fatalf("committed %+v", v)
			}
			_, _, err := e.c.CreateTableVersion(t.Context(), []string{"ctv"}, client.VersionCommit{Version: 1, ManifestPath: stage(t, info.Location, 1)})
			wantErr(t, err, client.ErrConcurrentModification)
		},
		"DescribeTableVersion": func(t *testing.T, e *env) {
			e.declared(t, 2, "dtv")
			v := must[*client.TableVersion](t)(e.c.DescribeTableVersion(t.Context(), []string{"dtv"}, "", client.Ptr(int64(1))))
			latest := must[*client.TableVersion](t)(e.c.DescribeTableVersion(t.Context(), []string{"dtv"}, "", nil))
			if v.Version != 1 || latest.Version != 2 || v.Timestamp.IsZero() {
				t.Fatalf("version 1 %+v, latest %+v", v, latest)
			}
			_, err := e.c.DescribeTableVersion(t.Context(), []string{"dtv"}, "", client.Ptr(int64(7)))
			wantErr(t, err, client.ErrTableVersionNotFound)
		},
		"BatchDeleteTableVersions": func(t *testing.T, e *env) {
			e.declared(t, 3, "bdv")
			n, _ := must2[int64, string](t)(e.c.DeleteTableVersions(t.Context(), []string{"bdv"}, "", client.VersionRange{Start: 1, End: 3}))
			if n != 2 {
				t.Fatalf("deleted %d versions, want 2", n)
			}
			left := collect(t, e.c.ListTableVersions(t.Context(), []string{"bdv"}, ""))
			if len(left) != 1 || left[0].Version != 3 {
				t.Fatalf("left %+v", left)
			}
		},
		"BatchCreateTableVersions": func(t *testing.T, e *env) {
			a := must[*client.TableInfo](t)(e.c.DeclareTable(t.Context(), []string{"bcv-a"}, nil))
			b := must[*client.TableInfo](t)(e.c.DeclareTable(t.Context(), []string{"bcv-b"}, nil))
			vs, _ := must2[[]client.TableVersion, string](t)(e.c.CommitVersions(t.Context(),
				client.TableCommit{ID: []string{"bcv-a"}, VersionCommit: client.VersionCommit{Version: 1, ManifestPath: stage(t, a.Location, 1)}},
				client.TableCommit{ID: []string{"bcv-b"}, VersionCommit: client.VersionCommit{Version: 1, ManifestPath: stage(t, b.Location, 1)}}))
			if len(vs) != 2 || vs[0].Version != 1 || vs[1].Version != 1 {
				t.Fatalf("committed %+v", vs)
			}
			// One conflicting entry: neither commits.
			_, _, err := e.c.CommitVersions(t.Context(),
				client.TableCommit{ID: []string{"bcv-a"}, VersionCommit: client.VersionCommit{Version: 2, ManifestPath: stage(t, a.Location, 2)}},
				client.TableCommit{ID: []string{"bcv-b"}, VersionCommit: client.VersionCommit{Version: 1, ManifestPath: stage(t, b.Location, 1)}})
			wantErr(t, err, client.ErrConcurrentModification)
			if latest := must[*client.TableVersion](t)(e.c.LatestTableVersion(t.Context(), []string{"bcv-a"}, "")); latest.Version != 1 {
				t.Fatalf("a failed batch committed version %d", latest.Version)
			}
		},
		"BatchCommitTables": func(t *testing.T, e *env) {
			results, _ := must2[[]client.BatchResult, string](t)(e.c.BatchCommit(t.Context(),
				client.BatchOp{ID: []string{"bct"}, Declare: &client.DeclareTableOptions{}},
			))
			if len(results) != 1 || results[0].Declared == nil {
				t.Fatalf("results %+v", results)
			}
			loc := results[0].Declared.Location
			results, _ = must2[[]client.BatchResult, string](t)(e.c.BatchCommit(t.Context(),
				client.BatchOp{ID: []string{"bct"}, CommitVersion: &client.VersionCommit{Version: 1, ManifestPath: stage(t, loc, 1)}},
				client.BatchOp{ID: []string{"bct"}, CommitVersion: &client.VersionCommit{Version: 2, ManifestPath: stage(t, loc, 2)}},
				client.BatchOp{ID: []string{"bct"}, DeleteVersions: &client.BatchDelete{Ranges: []client.VersionRange{{Start: 1, End: 2}}}},
			))
			if results[1].Version == nil || results[1].Version.Version != 2 || results[2].DeletedCount != 1 {
				t.Fatalf("results %+v", results)
			}
			results, _ = must2[[]client.BatchResult, string](t)(e.c.BatchCommit(t.Context(), client.BatchOp{ID: []string{"bct"}, Deregister: true}))
			if results[0].Deregistered == nil || results[0].Deregistered.Location != loc {
				t.Fatalf("deregister result %+v", results[0])
			}
		},
		"AlterTableAlterColumns": func(t *testing.T, e *env) {
			tbl := e.docsTable(t, 2, "alter")
			must[int64](t)(tbl.AlterColumns(t.Context(),
				client.ColumnAlteration{Path: "text", Rename: "body"},
				client.ColumnAlteration{Path: "rating", DataType: arrow.PrimitiveTypes.Float32},
			))
			s := must[*arrow.Schema](t)(tbl.Schema(t.Context()))
			if !s.HasField("body") || s.HasField("text") {
				t.Fatalf("schema after rename: %v", s)
			}
			if f, _ := s.FieldsByName("rating"); len(f) != 1 || !arrow.TypeEqual(f[0].Type, arrow.PrimitiveTypes.Float32) {
				t.Fatalf("rating after cast: %v", f)
			}
			_, err := tbl.AlterColumns(t.Context(), client.ColumnAlteration{Path: "nope", Rename: "x"})
			wantErr(t, err, client.ErrTableColumnNotFound)
		},
		"UpdateFieldMetadata": func(t *testing.T, e *env) {
			tbl := e.docsTable(t, 1, "fieldmd")
			_, fields, err := e.c.UpdateFieldMetadata(t.Context(), tbl.ID(), client.FieldMetadataUpdate{Path: "text", Set: map[string]*string{"pii": client.Ptr("no")}})
			if err != nil || fields["text"]["pii"] != "no" {
				t.Fatalf("fields %v, %v", fields, err)
			}
			s := must[*arrow.Schema](t)(tbl.Schema(t.Context()))
			f, _ := s.FieldsByName("text")
			if i := f[0].Metadata.FindKey("pii"); i < 0 || f[0].Metadata.Values()[i] != "no" {
				t.Fatalf("field metadata %v", f[0].Metadata)
			}
		},
		"AlterTableDropColumns": func(t *testing.T, e *env) {
			tbl := e.docsTable(t, 1, "dropcol")
			must[int64](t)(tbl.DropColumns(t.Context(), "rating"))
			if s := must[*arrow.Schema](t)(tbl.Schema(t.Context())); s.HasField("rating") || s.NumFields() != 3 {
				t.Fatalf("schema %v", s)
			}
			_, err := tbl.DropColumns(t.Context(), "nope")
			wantErr(t, err, client.ErrTableColumnNotFound)
		},
		"GetTableStats": func(t *testing.T, e *env) {
			tbl := e.docsTable(t, 5, "stats")
			must[*client.WriteResult](t)(tbl.Add(t.Context(), client.Structs(docs(5, 2))))
			st := must[*client.TableStats](t)(tbl.Stats(t.Context()))
			if st.NumRows != 7 || st.NumFragments != 2 || st.FragmentRows.Max != 5 || st.FragmentRows.Min != 2 {
				t.Fatalf("stats %+v", st)
			}
		},
		"InsertIntoTable": func(t *testing.T, e *env) {
			tbl := e.docsTable(t, 2, "insert")
			res := must[*client.WriteResult](t)(tbl.Add(t.Context(), client.Structs(docs(2, 3))))
			if res.Inserted != 3 || res.Version != 2 {
				t.Fatalf("add %+v", res)
			}
			res = must[*client.WriteResult](t)(tbl.Overwrite(t.Context(), client.Structs(docs(10, 1))))
			if n := must[int64](t)(tbl.CountRows(t.Context(), "")); n != 1 || res.Version != 3 {
				t.Fatalf("overwrite %+v left %d rows", res, n)
			}
			type other struct {
				Name string `arrow:"name"`
			}
			_, err := tbl.Add(t.Context(), client.Structs([]other{{"x"}}))
			wantErr(t, err, client.ErrTableSchemaValidationError)
		},
		"MergeInsertIntoTable": func(t *testing.T, e *env) {
			tbl := e.docsTable(t, 3, "merge")
			src := []doc{{ID: 1, Text: "changed", Vector: []float32{0, 0, 0, 0}}, {ID: 9, Text: "new", Vector: []float32{1, 1, 1, 1}}}
			res := must[*client.WriteResult](t)(tbl.MergeInsert("id").WhenMatchedUpdateAll().WhenNotMatchedInsertAll().Execute(t.Context(), client.Structs(src)))
			if res.Inserted != 1 || res.Updated != 1 {
				t.Fatalf("merge %+v", res)
			}
			res = must[*client.WriteResult](t)(tbl.MergeInsert("id").WhenNotMatchedBySourceDeleteWhere("id = 0").Execute(t.Context(), client.Structs(src)))
			if res.Deleted != 1 {
				t.Fatalf("delete by source %+v", res)
			}
			got := must[[]doc](t)(client.ScanAll[doc](t.Context(), tbl.Query().OrderBy(client.Asc("id"))))
			if len(got) != 3 || got[0].ID != 1 || got[0].Text != "changed" || got[2].ID != 9 {
				t.Fatalf("after merges %+v", got)
			}
			_, err := tbl.MergeInsert("nope").WhenNotMatchedInsertAll().Execute(t.Context(), client.Structs(src))
			wantErr(t, err, client.ErrTableColumnNotFound)
		},
		"UpdateTable": func(t *testing.T, e *env) {
			tbl := e.docsTable(t, 3, "update")
			res := must[*client.WriteResult](t)(tbl.Update(t.Context(), "id >= 1", map[string]any{"text": "it's 'quoted'", "rating": 9.5}))
			if res.Updated != 2 {
				t.Fatalf("update %+v", res)
			}
			if n := must[int64](t)(tbl.CountRows(t.Context(), `text = 'it''s ''quoted''' AND rating = 9.5`)); n != 2 {
				t.Fatalf("%d rows updated as asked", n)
			}
			must[*client.WriteResult](t)(tbl.UpdateSQL(t.Context(), "", map[string]string{"id": "id * 10"}))
			if n := must[int64](t)(tbl.CountRows(t.Context(), "id IN (0, 10, 20)")); n != 3 {
				t.Fatalf("UpdateSQL changed %d rows", n)
			}
			_, err := tbl.Update(t.Context(), "", map[string]any{"nope": 1})
			wantErr(t, err, client.ErrTableColumnNotFound)
		},
		"DeleteFromTable": func(t *testing.T, e *env) {
			tbl := e.docsTable(t, 4, "delete")
			res := must[*client.WriteResult](t)(tbl.Delete(t.Context(), "id < 3"))
			if res.Deleted != 3 || must[int64](t)(tbl.CountRows(t.Context(), "")) != 1 {
				t.Fatalf("delete %+v", res)
			}
			_, err := tbl.Delete(t.Context(), "id <")
			wantErr(t, err, client.ErrInvalidInput)
		},
		"QueryTable": func(t *testing.T, e *env) {
			tbl := e.docsTable(t, 6, "query")
			res := must[arrow.Table](t)(tbl.Search([]float32{4, 1, 1, 0}).Limit(2).Select("id", "text").ToArrow(t.Context()))
			defer res.Release()
			if res.NumRows() != 2 || res.NumCols() != 3 || res.Schema().Field(2).Name != "_distance" {
				t.Fatalf("search result %v with %d rows", res.Schema(), res.NumRows())
			}
			_, err := tbl.Query().Where("nope > 1").ToArrow(t.Context())
			wantErr(t, err, client.ErrTableColumnNotFound)
		},
		"CountTableRows": func(t *testing.T, e *env) {
			tbl := e.docsTable(t, 6, "count")
			if n := must[int64](t)(tbl.CountRows(t.Context(), "rating IS NOT NULL")); n != 3 {
				t.Fatalf("count %d", n)
			}
			_, err := e.c.Table("count-missing").CountRows(t.Context(), "")
			wantErr(t, err, client.ErrTableNotFound)
		},
		"CreateTable": func(t *testing.T, e *env) {
			tbl := e.c.Table("create")
			created := must[*client.CreatedTable](t)(tbl.Create(t.Context(), client.Structs(docs(0, 2)), &client.CreateTableOptions{Properties: map[string]string{"k": "v"}}))
			if created.Version != 1 || created.Properties["k"] != "v" {
				t.Fatalf("created %+v", created)
			}
			_, err := tbl.Create(t.Context(), client.Structs(docs(0, 2)), nil)
			wantErr(t, err, client.ErrTableAlreadyExists)
			created = must[*client.CreatedTable](t)(tbl.Create(t.Context(), client.Structs([]doc{}), &client.CreateTableOptions{Mode: client.ModeOverwrite}))
			if n := must[int64](t)(tbl.CountRows(t.Context(), "")); n != 0 || created.Version != 2 {
				t.Fatalf("overwrite with no rows: %+v, %d rows", created, n)
			}
		},
		"ExplainTableQueryPlan": func(t *testing.T, e *env) {
			tbl := e.docsTable(t, 3, "explain")
			plan := must[string](t)(tbl.Search([]float32{1, 1, 1, 0}).Where("id > 0").Explain(t.Context(), true))
			if !strings.Contains(plan, "exact search") {
				t.Fatalf("plan %q", plan)
			}
		},
		"AnalyzeTableQueryPlan": func(t *testing.T, e *env) {
			tbl := e.docsTable(t, 3, "analyze")
			if a := must[string](t)(tbl.Query().Where("id > 0").OrderBy(client.Desc("id")).Analyze(t.Context())); a == "" {
				t.Fatal("empty analysis")
			}
		},
		"AlterTableAddColumns": func(t *testing.T, e *env) {
			tbl := e.docsTable(t, 3, "addcol")
			must[int64](t)(tbl.AddColumns(t.Context(), client.NewColumn{Name: "double_id", Expression: "id * 2"}))
			if n := must[int64](t)(tbl.CountRows(t.Context(), "double_id = id * 2")); n != 3 {
				t.Fatalf("%d rows computed", n)
			}
			_, err := tbl.AddColumns(t.Context(), client.NewColumn{Name: "bad", Expression: "nope + 1"})
			wantErr(t, err, client.ErrTableColumnNotFound)
		},
		"AlterTableBackfillColumns": func(t *testing.T, e *env) {
			tbl := e.docsTable(t, 3, "backfill")
			must[int64](t)(tbl.AddColumns(t.Context(), client.NewColumn{Name: "next_id", Expression: "id + 1", Computed: true}))
			job := must[string](t)(e.c.BackfillColumn(t.Context(), tbl.ID(), "next_id", "id < 2"))
			if tx := waitTransaction(t, e.c, job); tx.Status != client.StatusSucceeded {
				t.Fatalf("backfill job %+v", tx)
			}
			if n := must[int64](t)(tbl.CountRows(t.Context(), "next_id = id + 1")); n != 2 {
				t.Fatalf("%d rows backfilled, want 2", n)
			}
			_, err := e.c.BackfillColumn(t.Context(), tbl.ID(), "id", "")
			wantErr(t, err, client.ErrInvalidInput)
		},
		"RefreshMaterializedView": func(t *testing.T, e *env) {
			src := e.docsTable(t, 5, "view_src")
			schema := arrow.NewSchema([]arrow.Field{{Name: "id", Type: arrow.PrimitiveTypes.Int64}}, nil)
			if _, err := e.c.CreateMaterializedView(t.Context(), []string{"ids"}, client.MaterializedView{
				Kind: client.ViewQuery, SourceQuery: `{"id": ["view_src"], "filter": "id < 3", "columns": {"column_names": ["id"]}, "k": 0}`, OutputSchema: schema,
			}); err != nil {
				t.Fatal(err)
			}
			job := must[string](t)(e.c.RefreshMaterializedView(t.Context(), []string{"ids"}, &client.RefreshOptions{Concurrency: 2}))
			if tx := waitTransaction(t, e.c, job); tx.Status != client.StatusSucceeded {
				t.Fatalf("refresh job %+v", tx)
			}
			if n := must[int64](t)(e.c.Table("ids").CountRows(t.Context(), "")); n != 3 {
				t.Fatalf("view has %d rows, want 3", n)
			}
			_, err := e.c.RefreshMaterializedView(t.Context(), src.ID(), nil)
			wantErr(t, err, client.ErrInvalidInput)
		},
		"CreateMaterializedView": func(t *testing.T, e *env) {
			schema := must[*arrow.Schema](t)(client.SchemaOf[doc]())
			_, err := e.c.CreateMaterializedView(t.Context(), []string{"view"}, client.MaterializedView{
				Kind: client.ViewUDTF, SourceQuery: "SELECT * FROM t", OutputSchema: schema,
				UDTF: &client.UDTFSpec{Kind: client.ViewUDTF, Envelope: "e30=", SHA256: "x", Name: "f", Version: "1", InputColumns: []string{"id"}, NumCPUs: 1},
			})
			wantErr(t, err, client.ErrUnsupported)
		},
		"CreateTableIndex": func(t *testing.T, e *env) {
			tbl := e.docsTable(t, 40, "index")
			if err := tbl.CreateIndex(t.Context(), "vector", client.IVFFlat{NumPartitions: 2, DistanceType: client.DistanceL2}, &client.IndexOptions{Name: "vidx"}); err != nil {
				t.Fatal(err)
			}
			if err := tbl.CreateIndex(t.Context(), "text", client.FTS{WithPosition: client.Ptr(true), Stem: client.Ptr(true)}, nil); err != nil {
				t.Fatal(err)
			}
			wait, cancel := context.WithTimeout(t.Context(), time.Minute)
			defer cancel()
			if err := tbl.WaitForIndex(wait, "vidx", "text_idx"); err != nil {
				t.Fatal(err)
			}
			wantErr(t, tbl.CreateIndex(t.Context(), "vector", client.IVFPQ{}, &client.IndexOptions{Name: "vidx"}), client.ErrTableIndexAlreadyExists)
			wantErr(t, tbl.WaitForIndex(t.Context(), "nope"), client.ErrTableIndexNotFound)
		},
		"CreateTableScalarIndex": func(t *testing.T, e *env) {
			tbl := e.docsTable(t, 4, "scalar")
			if _, err := e.c.CreateScalarIndex(t.Context(), tbl.ID(), "id", client.BTree{}, &client.IndexOptions{Name: "by_id"}); err != nil {
				t.Fatal(err)
			}
			ixs := must[[]client.Index](t)(tbl.ListIndices(t.Context()))
			if len(ixs) != 1 || ixs[0].Name != "by_id" || ixs[0].Type != client.IndexBTree {
				t.Fatalf("indexes %+v", ixs)
			}
		},
		"ListTableIndices": func(t *testing.T, e *env) {
			tbl := e.docsTable(t, 4, "listidx")
			for _, col := range []string{"id", "rating"} {
				if err := tbl.CreateIndex(t.Context(), col, client.BTree{}, nil); err != nil {
					t.Fatal(err)
				}
			}
			ixs := must[[]client.Index](t)(tbl.ListIndices(t.Context()))
			if len(ixs) != 2 || ixs[0].Name != "id_idx" || !slices.Equal(ixs[1].Columns, []string{"rating"}) || ixs[0].NumIndexedRows != 4 {
				t.Fatalf("indexes %+v", ixs)
			}
			page, next := must2[[]client.Index, string](t)(e.c.ListIndicesPage(t.Context(), tbl.ID(), nil, "", 1))
			if len(page) != 1 || next == "" {
				t.Fatalf("first page %+v, next %q", page, next)
			}
		},
		"DescribeTableIndexStats": func(t *testing.T, e *env) {
			tbl := e.docsTable(t, 40, "idxstats")
			if err := tbl.CreateIndex(t.Context(), "vector", client.IVFFlat{NumPartitions: 2, DistanceType: client.DistanceCosine}, nil); err != nil {
				t.Fatal(err)
			}
			wait, cancel := context.WithTimeout(t.Context(), time.Minute)
			defer cancel()
			if err := tbl.WaitForIndex(wait, "vector_idx"); err != nil {
				t.Fatal(err)
			}
			must[*client.WriteResult](t)(tbl.Add(t.Context(), client.Structs(docs(40, 2))))
			st := must[*client.IndexStats](t)(tbl.IndexStats(t.Context(), "vector_idx"))
			if st.Type != client.IndexIVFFlat || st.DistanceType != client.DistanceCosine || st.NumIndexedRows != 40 || st.NumUnindexedRows != 2 {
				t.Fatalf("stats %+v", st)
			}
			_, err := tbl.IndexStats(t.Context(), "nope")
			wantErr(t, err, client.ErrTableIndexNotFound)
		},
		"DropTableIndex": func(t *testing.T, e *env) {
			tbl := e.docsTable(t, 2, "dropidx")
			if err := tbl.CreateIndex(t.Context(), "id", client.Bitmap{}, nil); err != nil {
				t.Fatal(err)
			}
			if err := tbl.DropIndex(t.Context(), "id_idx"); err != nil {
				t.Fatal(err)
			}
			if ixs := must[[]client.Index](t)(tbl.ListIndices(t.Context())); len(ixs) != 0 {
				t.Fatalf("indexes left: %+v", ixs)
			}
			wantErr(t, tbl.DropIndex(t.Context(), "id_idx"), client.ErrTableIndexNotFound)
		},
		"ListTableTags": func(t *testing.T, e *env) {
			tbl := e.docsTable(t, 1, "listtags")
			must[*client.WriteResult](t)(tbl.Add(t.Context(), client.Structs(docs(1, 1))))
			for _, tag := range []string{"b", "a"} {
				if err := tbl.Tags().Create(t.Context(), tag, 1); err != nil {
					t.Fatal(err)
				}
			}
			tags := collect(t, tbl.Tags().List(t.Context()))
			if len(tags) != 2 || tags[0].Name != "a" || tags[1].Version != 1 {
				t.Fatalf("tags %+v", tags)
			}
		},
		"GetTableTagVersion": func(t *testing.T, e *env) {
			tbl := e.docsTable(t, 1, "gettag")
			if err := tbl.Tags().Create(t.Context(), "first", 1); err != nil {
				t.Fatal(err)
			}
			if v := must[int64](t)(tbl.Tags().Version(t.Context(), "first")); v != 1 {
				t.Fatalf("tag names version %d", v)
			}
			_, err := tbl.Tags().Version(t.Context(), "nope")
			wantErr(t, err, client.ErrTableTagNotFound)
		},
		"DeclareTable": func(t *testing.T, e *env) {
			info := must[*client.TableInfo](t)(e.c.DeclareTable(t.Context(), []string{"decl"}, &client.DeclareTableOptions{Properties: map[string]string{"k": "v"}}))
			if !info.ManagedVersioning || !strings.HasPrefix(info.Location, e.s.Warehouse.Root()) || info.Properties["k"] != "v" {
				t.Fatalf("declared %+v", info)
			}
			d := must[*client.TableDescription](t)(e.c.DescribeTable(t.Context(), []string{"decl"}, &client.DescribeTableOptions{CheckDeclared: true}))
			if d.IsOnlyDeclared == nil || !*d.IsOnlyDeclared {
				t.Fatalf("described %+v", d)
			}
			_, err := e.c.DeclareTable(t.Context(), []string{"decl"}, nil)
			wantErr(t, err, client.ErrTableAlreadyExists)
		},
		"CreateTableTag": func(t *testing.T, e *env) {
			tbl := e.docsTable(t, 1, "createtag")
			if err := tbl.Tags().Create(t.Context(), "v1", 1); err != nil {
				t.Fatal(err)
			}
			wantErr(t, tbl.Tags().Create(t.Context(), "v1", 1), client.ErrTableTagAlreadyExists)
			wantErr(t, tbl.Tags().Create(t.Context(), "v9", 9), client.ErrTableVersionNotFound)
		},
		"DeleteTableTag": func(t *testing.T, e *env) {
			tbl := e.docsTable(t, 1, "deletetag")
			if err := tbl.Tags().Create(t.Context(), "gone", 1); err != nil {
				t.Fatal(err)
			}
			if err := tbl.Tags().Delete(t.Context(), "gone"); err != nil {
				t.Fatal(err)
			}
			wantErr(t, tbl.Tags().Delete(t.Context(), "gone"), client.ErrTableTagNotFound)
		},
		"UpdateTableTag": func(t *testing.T, e *env) {
			tbl := e.docsTable(t, 1, "updatetag")
			must[*client.WriteResult](t)(tbl.Add(t.Context(), client.Structs(docs(1, 1))))
			if err := tbl.Tags().Create(t.Context(), "moving", 1); err != nil {
				t.Fatal(err)
			}
			if err := tbl.Tags().Update(t.Context(), "moving", 2); err != nil {
				t.Fatal(err)
			}
			if v := must[int64](t)(tbl.Tags().Version(t.Context(), "moving")); v != 2 {
				t.Fatalf("tag names version %d", v)
			}
			wantErr(t, tbl.Tags().Update(t.Context(), "nope", 1), client.ErrTableTagNotFound)
		},
		"ListTableBranches": func(t *testing.T, e *env) {
			e.declared(t, 2, "listbr")
			for _, b := range []string{"dev", "bugfix"} {
				must[string](t)(e.c.CreateTableBranch(t.Context(), []string{"listbr"}, b, "", client.Ptr(int64(1))))
			}
			bs := collect(t, e.c.ListTableBranches(t.Context(), []string{"listbr"}))
			if len(bs) != 2 || bs[0].Name != "bugfix" || bs[1].ParentVersion != 1 || bs[1].CreatedAt.IsZero() {
				t.Fatalf("branches %+v", bs)
			}
		},
		"CreateTableBranch": func(t *testing.T, e *env) {
			e.declared(t, 1, "createbr")
			must[string](t)(e.c.CreateTableBranch(t.Context(), []string{"createbr"}, "dev", "", nil))
			_, err := e.c.CreateTableBranch(t.Context(), []string{"createbr"}, "dev", "", nil)
			wantErr(t, err, client.ErrTableBranchAlreadyExists)
			_, err = e.c.CreateTableBranch(t.Context(), []string{"createbr-missing"}, "x", "", nil)
			wantErr(t, err, client.ErrTableNotFound)
		},
		"DeleteTableBranch": func(t *testing.T, e *env) {
			e.declared(t, 1, "deletebr")
			must[string](t)(e.c.CreateTableBranch(t.Context(), []string{"deletebr"}, "dev", "", nil))
			must[string](t)(e.c.DeleteTableBranch(t.Context(), []string{"deletebr"}, "dev"))
			_, err := e.c.DeleteTableBranch(t.Context(), []string{"deletebr"}, "dev")
			wantErr(t, err, client.ErrTableBranchNotFound)
		},
		"DescribeTransaction": func(t *testing.T, e *env) {
			e.docsTable(t, 1, "tx")
			d := must[*client.DroppedTable](t)(e.c.DropTable(t.Context(), []string{"tx"}))
			if d.TransactionID == "" {
				t.Fatal("the drop returned no transaction")
			}
			if tx := waitTransaction(t, e.c, d.TransactionID); tx.Status != client.StatusSucceeded {
				t.Fatalf("drop transaction %+v", tx)
			}
			_, err := e.c.DescribeTransaction(t.Context(), []string{"no-such-transaction"})
			wantErr(t, err, client.ErrTransactionNotFound)
		},
		"AlterTransaction": func(t *testing.T, e *env) {
			e.docsTable(t, 1, "alter-tx")
			d := must[*client.DroppedTable](t)(e.c.DropTable(t.Context(), []string{"alter-tx"}))
			waitTransaction(t, e.c, d.TransactionID)
			tx := must[*client.Transaction](t)(e.c.AlterTransaction(t.Context(), []string{d.TransactionID},
				client.TransactionAction{SetProperty: &client.PropertyAction{Key: "note", Value: "seen"}}))
			if tx.Properties["note"] != "seen" {
				t.Fatalf("transaction %+v", tx)
			}
			_, err := e.c.AlterTransaction(t.Context(), []string{d.TransactionID},
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
