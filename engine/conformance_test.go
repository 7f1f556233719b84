package engine_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/lancens/lancens/engine"
	"github.com/lancens/lancens/internal/conformance"
	"github.com/lancens/lancens/internal/testkit/pgtest"
	"github.com/lancens/lancens/store"
	"github.com/lancens/lancens/store/postgres"
	"github.com/lancens/lancens/store/sqlite"
	"github.com/lancens/lancens/warehouse"
)

// engineGroups are the groups of the conformance suite the engine serves
// over HTTP.
var engineGroups = []string{"Data", "SchemaEvolution", "ScalarIndexes", "VectorSearch", "VectorIndexes", "FullTextSearch"}

// storeGroups are the groups run against the engine directly: those of
// the interfaces the API reaches through the server only (views, branches
// with data, cleanup), besides engineGroups.
var storeGroups = append([]string{"Views", "BranchedData", "VersionCleanup"}, engineGroups...)

// capabilities are what the engine claims over a catalog.
func capabilities() conformance.Capabilities {
	c := conformance.Catalog()
	c.ManagedData, c.SchemaEvolution, c.VectorSearch = true, true, true
	c.Views, c.BranchedData, c.VersionCleanup = true, true, true
	c.ScalarIndexes, c.VectorIndexes, c.FullTextSearch = true, true, true
	return c
}

// newEngine returns an engine over catalog b with a warehouse in a fresh
// directory, and the backend that serves both.
func newEngine(t testing.TB, b store.Backend) (*engine.Engine, engine.Backend) {
	t.Helper()
	wh, err := warehouse.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	e, err := engine.New(engine.Options{Catalog: b, Warehouse: wh})
	if err != nil {
		t.Fatal(err)
	}
	return e, engine.WithBackend(b, e)
}

// TestConformanceSQLite runs the data groups of the suite against the
// engine over a SQLite catalog, calling the store directly, with queued
// work (view refreshes, backfills) done before the queuing call returns.
func TestConformanceSQLite(t *testing.T) {
	db, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "lancens.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	_, b := newEngine(t, db)
	tg := conformance.InlineJobs(b)
	conformance.Run(t, conformance.Config{
		New: func(t conformance.T) store.Catalog {
			if err := conformance.Empty(t.Context(), tg); err != nil {
				t.Fatalf("empty the catalog: %v", err)
			}
			return tg
		},
		Capabilities: capabilities(),
		Groups:       storeGroups,
	})
}

// TestConformancePostgres runs them over a PostgreSQL catalog, as
// TestConformanceSQLite does.
func TestConformancePostgres(t *testing.T) {
	db, err := postgres.Open(context.Background(), pgtest.Database(t), postgres.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	_, b := newEngine(t, db)
	tg := conformance.InlineJobs(b)
	conformance.Run(t, conformance.Config{
		New: func(t conformance.T) store.Catalog {
			if err := conformance.Empty(t.Context(), tg); err != nil {
				t.Fatalf("empty the catalog: %v", err)
			}
			return tg
		},
		Capabilities: capabilities(),
		Groups:       storeGroups,
	})
}
