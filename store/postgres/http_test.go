package postgres_test

import (
	"testing"

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
// PostgreSQL: client → server → engine and store, every response
// validated against openapi.yaml, the groups of the tables' data
// included, as on SQLite (server's TestConformance).
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
		Capabilities: conformance.Data(),
	})
}

// TestReplicasConformance runs the suite over HTTP against two servers on
// one database, sending each call to the other server than the last: every
// write acknowledged by one is seen by the next request on the other,
// rows and indexes included.
func TestReplicasConformance(t *testing.T) {
	url, wh := pgtest.Database(t), t.TempDir()
	a, b := replica(t, url, wh), replica(t, url, wh)
	conformance.Run(t, conformance.Config{
		New: func(t conformance.T) store.Catalog {
			tg := conformance.AlternateData(httpTarget(t, a).(conformance.DataTarget), httpTarget(t, b).(conformance.DataTarget))
			if err := conformance.Empty(t.Context(), tg); err != nil {
				t.Fatalf("empty the catalog: %v", err)
			}
			return tg
		},
		Capabilities: conformance.Data(),
	})
}
