package engine_test

import (
	"testing"

	"github.com/lancens/lancens/internal/conformance"
	"github.com/lancens/lancens/internal/testkit/apitest"
	"github.com/lancens/lancens/internal/testkit/pgtest"
	"github.com/lancens/lancens/store"
)

// httpTarget returns a conformance target that talks to s over HTTP,
// emptied first.
func httpTarget(t conformance.T, s *apitest.Server) store.Catalog {
	tg, err := conformance.NewHTTPTarget(s.URL, s.HTTP)
	if err != nil {
		t.Fatalf("target: %v", err)
	}
	return tg
}

func emptied(t conformance.T, tg store.Catalog) store.Catalog {
	if err := conformance.Empty(t.Context(), tg); err != nil {
		t.Fatalf("empty the catalog: %v", err)
	}
	return tg
}

// TestHTTPConformance runs the engine's groups over HTTP (client → server
// → engine), every response validated against openapi.yaml: on SQLite,
// on PostgreSQL, and on two PostgreSQL replicas sharing one warehouse, each
// call sent to the other replica than the last (a write acknowledged by
// one is seen by the next read on the other).
func TestHTTPConformance(t *testing.T) {
	t.Run("SQLite", func(t *testing.T) {
		s := apitest.Start(t, apitest.Options{})
		conformance.Run(t, conformance.Config{
			New:          func(t conformance.T) store.Catalog { return emptied(t, httpTarget(t, s)) },
			Capabilities: capabilities(),
			Groups:       engineGroups,
		})
	})
	t.Run("PostgreSQL", func(t *testing.T) {
		s := apitest.Start(t, apitest.Options{Postgres: pgtest.Database(t)})
		conformance.Run(t, conformance.Config{
			New:          func(t conformance.T) store.Catalog { return emptied(t, httpTarget(t, s)) },
			Capabilities: capabilities(),
			Groups:       engineGroups,
		})
	})
	t.Run("PostgreSQLReplicas", func(t *testing.T) {
		url, wh := pgtest.Database(t), t.TempDir()
		a := apitest.Start(t, apitest.Options{Postgres: url, Warehouse: wh})
		b := apitest.Start(t, apitest.Options{Postgres: url, Warehouse: wh})
		conformance.Run(t, conformance.Config{
			New: func(t conformance.T) store.Catalog {
				return emptied(t, conformance.AlternateData(httpTarget(t, a).(conformance.DataTarget), httpTarget(t, b).(conformance.DataTarget)))
			},
			Capabilities: capabilities(),
			Groups:       engineGroups,
		})
	})
}
