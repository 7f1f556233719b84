package sqlite_test

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/lancens/lancens/store"
	"github.com/lancens/lancens/store/sqlite"
)

// TestLocationClashRace declares tables at one location from many
// goroutines: exactly one gets it.
func TestLocationClashRace(t *testing.T) {
	db := mustOpen(t, filepath.Join(t.TempDir(), "lancens.db"))
	defer db.Close()
	const racers = 16
	errs := make([]error, racers)
	var wg sync.WaitGroup
	for i := range racers {
		wg.Go(func() {
			_, _, errs[i] = db.DeclareTable(t.Context(), []string{fmt.Sprintf("t%d", i)}, store.TableDeclaration{Location: "/wh/one"})
		})
	}
	wg.Wait()
	won := 0
	for i, err := range errs {
		switch {
		case err == nil:
			won++
		case store.ErrorCode(err) != store.CodeInvalidInput:
			t.Fatalf("racer %d: %v", i, err)
		}
	}
	if won != 1 {
		t.Fatalf("%d racers got the location, want 1", won)
	}
}

// legacyDatabase makes a database as a lancens from before location keys
// left it, with tables b sharing a's location and d inside c's: it records
// the tables, then undoes migration 0005 and moves b and d with plain SQL.
func legacyDatabase(t *testing.T, path string) {
	t.Helper()
	db := mustOpen(t, path)
	ctx := t.Context()
	for _, tc := range []struct {
		name, location string
		owned          bool
	}{
		{"a", "/wh/a", true}, {"b", "/wh/b", true}, {"c", "/wh/c", true}, {"d", "/wh/d", false}, {"e", "/wh/e", true},
	} {
		if _, _, err := db.DeclareTable(ctx, []string{tc.name}, store.TableDeclaration{Location: tc.location, Owned: tc.owned}); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	raw, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	for _, q := range []string{
		`DROP INDEX tables_location_key`,
		`ALTER TABLE tables DROP COLUMN location_key`,
		`DELETE FROM schema_migrations WHERE name LIKE '%0005%'`,
		`UPDATE tables SET location = '/wh/a' WHERE name = 'b'`,
		`UPDATE tables SET location = '/wh/c/inner' WHERE name = 'd'`,
	} {
		if _, err := raw.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
}

// TestLegacySharedLocations checks that a database whose tables already
// share locations still opens, reports the clashes, refuses new ones, and
// that dropping a table keeps data another table still uses.
func TestLegacySharedLocations(t *testing.T) {
	path := filepath.Join(t.TempDir(), "lancens.db")
	legacyDatabase(t, path)
	db := mustOpen(t, path)
	defer db.Close()
	ctx := t.Context()

	conflicts, err := db.LocationConflicts(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var pairs []string
	for _, c := range conflicts {
		pair := []string{strings.Join(c.Tables[0], "$"), strings.Join(c.Tables[1], "$")}
		slices.Sort(pair)
		pairs = append(pairs, strings.Join(pair, "+"))
	}
	slices.Sort(pairs)
	if !slices.Equal(pairs, []string{"a+b", "c+d"}) {
		t.Fatalf("conflicts %q, want a+b and c+d", pairs)
	}

	for _, loc := range []string{"/wh/a", "/wh/a/x", "/wh/c/inner/deeper", "/wh"} {
		if _, _, err := db.DeclareTable(ctx, []string{"new"}, store.TableDeclaration{Location: loc}); store.ErrorCode(err) != store.CodeInvalidInput {
			t.Fatalf("declare at %s: %v, want InvalidInput", loc, err)
		}
	}

	dropped := func(name string) *store.Transaction {
		t.Helper()
		_, txID, err := db.DropTable(ctx, []string{name})
		if err != nil {
			t.Fatal(err)
		}
		tx, err := db.DescribeTransaction(ctx, []string{txID})
		if err != nil {
			t.Fatal(err)
		}
		return tx
	}
	claim := func() *store.Job {
		t.Helper()
		job, err := db.ClaimJob(ctx, store.JobDeleteTableData)
		if err != nil {
			t.Fatal(err)
		}
		return job
	}
	// a's data is b's too, and c's holds d's: dropping either keeps it.
	for _, name := range []string{"a", "c"} {
		if tx := dropped(name); tx.Status != store.TxSucceeded {
			t.Fatalf("drop %s: transaction %+v, want data kept", name, tx)
		}
		if job := claim(); job != nil {
			t.Fatalf("drop %s queued a deletion: %s", name, job.Payload)
		}
	}
	// b is alone at its location now: its data goes.
	if tx := dropped("b"); tx.Status != store.TxQueued {
		t.Fatalf("drop b: transaction %+v, want a queued deletion", tx)
	}
	if job := claim(); job == nil || !strings.Contains(string(job.Payload), `"/wh/a"`) {
		t.Fatalf("drop b queued %+v", job)
	}
	if conflicts, err := db.LocationConflicts(ctx); err != nil || len(conflicts) != 0 {
		t.Fatalf("conflicts left: %+v %v", conflicts, err)
	}
}

// TestLegacyReopen checks that a legacy database opens again after the
// first migration, keys and all.
func TestLegacyReopen(t *testing.T) {
	path := filepath.Join(t.TempDir(), "lancens.db")
	legacyDatabase(t, path)
	for range 2 {
		db, err := sqlite.Open(context.Background(), path, sqlite.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if _, _, err := db.DeclareTable(t.Context(), []string{"b2"}, store.TableDeclaration{Location: "/wh/a"}); store.ErrorCode(err) != store.CodeInvalidInput {
			t.Fatalf("declare at a shared location: %v", err)
		}
		db.Close()
	}
}
