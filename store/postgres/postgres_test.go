package postgres_test

import (
	"context"
	"testing"

	"github.com/lancens/lancens/internal/conformance"
	"github.com/lancens/lancens/internal/testkit/pgtest"
	"github.com/lancens/lancens/store"
	"github.com/lancens/lancens/store/postgres"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// open opens the store on the database at url and closes it when t ends.
func open(t testing.TB, url string, opts postgres.Options) *postgres.DB {
	t.Helper()
	db, err := postgres.Open(context.Background(), url, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// TestConformance runs the groups of the conformance suite a backend without
// managed tables passes against the store directly: the catalog, jobs,
// probe and location locks. The cases share one database, emptied before
// each.
func TestConformance(t *testing.T) {
	db := open(t, pgtest.Database(t), postgres.Options{})
	conformance.Run(t, conformance.Config{
		New: func(t conformance.T) store.Catalog {
			if err := conformance.Empty(t.Context(), db); err != nil {
				t.Fatalf("empty the catalog: %v", err)
			}
			return db
		},
		Capabilities: conformance.Backend(),
	})
}
