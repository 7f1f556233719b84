package postgres_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/lancens/lancens/gen"
	"github.com/lancens/lancens/internal/conformance"
	"github.com/lancens/lancens/internal/testkit/apitest"
	"github.com/lancens/lancens/internal/testkit/pgtest"
	"github.com/lancens/lancens/store"
)

// replica starts a lancens server on the PostgreSQL database at url, with
// a store (connection pool) of its own and the warehouse directory wh: one
// replica of a deployment.
func replica(t testing.TB, url, wh string) *apitest.Server {
	t.Helper()
	return apitest.Start(t, apitest.Options{Postgres: url, Warehouse: wh, ExternalRoots: []string{"s3://conformance-bucket"}})
}

// httpTarget returns a conformance target that talks to s over HTTP.
func httpTarget(t conformance.T, s *apitest.Server) store.Catalog {
	tg, err := conformance.NewHTTPTarget(s.URL, s.HTTP)
	if err != nil {
		t.Fatalf("target: %v", err)
	}
	return tg
}

// TestConformanceHTTP runs the suite over HTTP against one server on
// PostgreSQL: client → server → store, every response validated against
// openapi.yaml.
func TestConformanceHTTP(t *testing.T) {
	s := replica(t, pgtest.Database(t), t.TempDir())
	conformance.Run(t, conformance.Config{
		New: func(t conformance.T) store.Catalog {
			tg := httpTarget(t, s)
			if err := conformance.Empty(t.Context(), tg); err != nil {
				t.Fatalf("empty the catalog: %v", err)
			}
			return tg
		},
		Capabilities: conformance.Catalog(),
	})
}

// TestReplicasConformance runs the suite over HTTP against two servers on
// one database, sending each call to the other server than the last: every
// write acknowledged by one is seen by the next request on the other.
func TestReplicasConformance(t *testing.T) {
	url, wh := pgtest.Database(t), t.TempDir()
	a, b := replica(t, url, wh), replica(t, url, wh)
	conformance.Run(t, conformance.Config{
		New: func(t conformance.T) store.Catalog {
			tg := conformance.Alternate(httpTarget(t, a), httpTarget(t, b))
			if err := conformance.Empty(t.Context(), tg); err != nil {
				t.Fatalf("empty the catalog: %v", err)
			}
			return tg
		},
		Capabilities: conformance.Catalog(),
	})
}

// TestManagedOperationsUnsupported checks that every operation on managed
// tables' rows, schemas and indexes answers 406 with code 0 on a
// PostgreSQL catalog, whatever the request, and that the catalog
// operations around them still work.
func TestManagedOperationsUnsupported(t *testing.T) {
	s := replica(t, pgtest.Database(t), t.TempDir())
	if _, err := s.Client.DeclareTable(t.Context(), []string{"t"}, nil); err != nil {
		t.Fatal(err)
	}
	doc, err := gen.GetSpec()
	if err != nil {
		t.Fatal(err)
	}
	managed := map[string]bool{
		"CreateTable": true, "InsertIntoTable": true, "MergeInsertIntoTable": true, "UpdateTable": true,
		"DeleteFromTable": true, "QueryTable": true, "CountTableRows": true, "ExplainTableQueryPlan": true,
		"AnalyzeTableQueryPlan": true, "RestoreTable": true, "GetTableStats": true,
		"AlterTableAddColumns": true, "AlterTableAlterColumns": true, "AlterTableDropColumns": true,
		"AlterTableBackfillColumns": true, "UpdateTableSchemaMetadata": true, "UpdateFieldMetadata": true,
		"CreateTableIndex": true, "CreateTableScalarIndex": true, "ListTableIndices": true,
		"DescribeTableIndexStats": true, "DropTableIndex": true,
	}
	seen := 0
	for path, item := range doc.Paths.Map() {
		for method, op := range item.Operations() {
			if !managed[op.OperationID] {
				continue
			}
			seen++
			t.Run(op.OperationID, func(t *testing.T) {
				p := strings.NewReplacer("{id}", "t", "{index_name}", "t_idx").Replace(path)
				for _, body := range []string{"{}", `{"bogus": [1, 2]}`} {
					status, got, _ := s.Do(t, method, p, http.Header{"Content-Type": {"application/json"}}, []byte(body))
					if status != http.StatusNotAcceptable || apitest.ErrorCode(got) != 0 {
						t.Errorf("%s %s with %s: %d %s; want 406 with code 0", method, p, body, status, got)
					}
				}
				status, got, _ := s.Do(t, method, p, http.Header{"Content-Type": {"application/vnd.apache.arrow.stream"}}, []byte("not arrow"))
				if status != http.StatusNotAcceptable || apitest.ErrorCode(got) != 0 {
					t.Errorf("%s %s with an Arrow body: %d %s; want 406 with code 0", method, p, status, got)
				}
			})
		}
	}
	if seen != len(managed) {
		t.Fatalf("found %d of the %d managed operations in the spec", seen, len(managed))
	}
	if _, err := s.Client.DescribeTable(t.Context(), []string{"t"}, nil); err != nil {
		t.Fatalf("describe after the refused operations: %v", err)
	}
}
