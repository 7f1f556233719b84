package sqlite_test

import (
	"context"
	"maps"
	"path/filepath"
	"testing"

	"github.com/lancens/lancens/internal/conformance"
	"github.com/lancens/lancens/store"
	"github.com/lancens/lancens/store/sqlite"
)

// mustOpen opens a database file in a fresh temporary directory.
func mustOpen(t *testing.T, path string) *sqlite.DB {
	t.Helper()
	db, err := sqlite.Open(context.Background(), path, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return db
}

func TestConformance(t *testing.T) {
	conformance.Run(t, func(t *testing.T) conformance.Target {
		db := mustOpen(t, filepath.Join(t.TempDir(), "lancens.db"))
		t.Cleanup(func() { db.Close() })
		return db
	})
}

func TestOpen(t *testing.T) {
	t.Run("ErrMemory", func(t *testing.T) {
		if _, err := sqlite.Open(context.Background(), ":memory:", sqlite.Options{}); err == nil {
			t.Fatal("opened an in-memory database")
		}
	})
	t.Run("ErrSynchronous", func(t *testing.T) {
		if _, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "x.db"), sqlite.Options{Synchronous: "OFF"}); err == nil {
			t.Fatal("accepted synchronous=OFF")
		}
	})
	t.Run("ReopenKeepsData", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "lancens.db")
		db := mustOpen(t, path)
		props := map[string]string{"k": "v"}
		if _, err := db.CreateNamespace(t.Context(), []string{"a"}, store.ModeCreate, props); err != nil {
			t.Fatal(err)
		}
		if err := db.Close(); err != nil {
			t.Fatal(err)
		}
		db = mustOpen(t, path) // migrations run again and must be no-ops
		defer db.Close()
		ns, err := db.DescribeNamespace(t.Context(), []string{"a"})
		if err != nil {
			t.Fatal(err)
		}
		if !maps.Equal(ns.Properties, props) {
			t.Fatalf("properties after reopen %v, want %v", ns.Properties, props)
		}
	})
}
