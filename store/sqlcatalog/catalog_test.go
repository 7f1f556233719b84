package sqlcatalog_test

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"testing"

	"github.com/lancens/lancens/internal/testkit/pgtest"
	"github.com/lancens/lancens/store"
	"github.com/lancens/lancens/store/postgres"
	"github.com/lancens/lancens/store/sqlite"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// eachBackend runs fn as a subtest against a fresh, empty store of each
// backend: SQLite in a temporary file, PostgreSQL in a database of the
// test binary's throwaway cluster.
func eachBackend(t *testing.T, fn func(t *testing.T, st store.Backend)) {
	t.Run("sqlite", func(t *testing.T) {
		db, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "lancens.db"), sqlite.Options{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		fn(t, db)
	})
	t.Run("postgres", func(t *testing.T) {
		db, err := postgres.Open(context.Background(), pgtest.Database(t), postgres.Options{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		fn(t, db)
	})
}

// TestTransactionTable: a transaction names the table it was about by the
// identifier the table has now: after a rename the new one, once the
// table is gone none, and none for a transaction about no single table.
// (The API has no field for it, so the conformance suite, which also runs
// over HTTP, does not check it.)
func TestTransactionTable(t *testing.T) {
	eachBackend(t, func(t *testing.T, db store.Backend) {
		ctx := t.Context()
		for _, ns := range [][]string{{"a"}, {"b"}, {"b", "c"}} {
			if _, err := db.CreateNamespace(ctx, ns, store.ModeCreate, nil); err != nil {
				t.Fatal(err)
			}
		}
		_, declared, err := db.DeclareTable(ctx, []string{"a", "t"}, store.TableDeclaration{Location: "s3://bucket/a/t"})
		if err != nil {
			t.Fatal(err)
		}
		table := func(txID string) []string {
			t.Helper()
			tx, err := db.DescribeTransaction(ctx, []string{txID})
			if err != nil {
				t.Fatal(err)
			}
			return tx.Table
		}
		if got := table(declared); !slices.Equal(got, []string{"a", "t"}) {
			t.Fatalf("declared: %q", got)
		}
		renamed, err := db.RenameTable(ctx, []string{"a", "t"}, []string{"b", "c"}, "u")
		if err != nil {
			t.Fatal(err)
		}
		for _, txID := range []string{declared, renamed} {
			if got := table(txID); !slices.Equal(got, []string{"b", "c", "u"}) {
				t.Fatalf("after the rename: %q", got)
			}
		}
		if _, _, err := db.DeregisterTable(ctx, []string{"b", "c", "u"}); err != nil {
			t.Fatal(err)
		}
		if got := table(declared); got != nil {
			t.Fatalf("after the table went: %q", got)
		}
		_, batch, err := db.CommitBatch(ctx, []store.BatchOperation{{ID: []string{"a", "x"}, Declare: &store.TableDeclaration{Location: "s3://bucket/a/x"}}})
		if err != nil {
			t.Fatal(err)
		}
		if got := table(batch); got != nil {
			t.Fatalf("a batch: %q", got)
		}
	})
}

// TestDroppedTreeRecordsFullIdentifiers: dropping a namespace with tables
// at several depths records each table's drop under its whole identifier.
func TestDroppedTreeRecordsFullIdentifiers(t *testing.T) {
	eachBackend(t, func(t *testing.T, db store.Backend) {
		ctx := t.Context()
		for _, ns := range [][]string{{"a"}, {"a", "b"}} {
			if _, err := db.CreateNamespace(ctx, ns, store.ModeCreate, nil); err != nil {
				t.Fatal(err)
			}
		}
		want := map[string]bool{"a$t": true, "a$b$u": true}
		for _, id := range [][]string{{"a", "t"}, {"a", "b", "u"}} {
			if _, _, err := db.DeclareTable(ctx, id, store.TableDeclaration{Location: "s3://bucket/" + id[len(id)-1]}); err != nil {
				t.Fatal(err)
			}
		}
		_, txIDs, err := db.DropNamespace(ctx, []string{"a"}, store.DropFail, store.DropCascade)
		if err != nil || len(txIDs) != 2 {
			t.Fatalf("drop: %q, %v; want two table drops", txIDs, err)
		}
		for _, txID := range txIDs {
			tx, err := db.DescribeTransaction(ctx, []string{txID})
			if err != nil {
				t.Fatal(err)
			}
			if !want[tx.Properties["table"]] {
				t.Errorf("a drop records table %q, want one of %v", tx.Properties["table"], want)
			}
			delete(want, tx.Properties["table"])
		}
	})
}

// TestLocationClashes checks the store's own guard: a table cannot be
// recorded at, inside or around another table's location, in any spelling;
// distinct locations are unaffected.
func TestLocationClashes(t *testing.T) {
	eachBackend(t, func(t *testing.T, db store.Backend) {
		ctx := t.Context()
		for i, loc := range []string{"/wh/a.lance", "s3://bucket/p/t", "gs://b/x"} {
			if _, _, err := db.DeclareTable(ctx, []string{fmt.Sprintf("base%d", i)}, store.TableDeclaration{Location: loc}); err != nil {
				t.Fatal(err)
			}
		}
		for _, tc := range []struct {
			location string
			clash    bool
		}{
			{"/wh/a.lance", true},
			{"/wh/a.lance/", true},
			{"/wh//a.lance", true},
			{"/wh/./a.lance", true},
			{"file:///wh/a.lance", true},
			{"file://localhost/wh/a.lance", true},
			{"/wh/a.lance/data", true},
			{"/wh", true},
			{"/", true},
			{"file:///", true},
			{"S3://bucket/p/t", true},
			{"s3://bucket/p/t/", true},
			{"s3://bucket/p", true},
			{"s3://bucket", true},
			{"s3://bucket/p/t/_versions", true},
			{"gs://b/x/y", true},
			{"/wh/a.lance2", false},
			{"/wh/a", false},
			{"/wh/b.lance", false},
			{"s3://bucket/p/t2", false},
			{"s3://other/p/t", false},
			{"gs://bucket/p/t", false},
			{"/bucket/p/t", false},
		} {
			t.Run(tc.location, func(t *testing.T) {
				id := []string{"t"}
				_, _, err := db.DeclareTable(ctx, id, store.TableDeclaration{Location: tc.location})
				if tc.clash {
					if store.ErrorCode(err) != store.CodeInvalidInput {
						t.Fatalf("declare at %q: %v, want InvalidInput", tc.location, err)
					}
					_, _, err = db.RegisterTable(ctx, id, store.TableRegistration{Location: tc.location})
					if store.ErrorCode(err) != store.CodeInvalidInput {
						t.Fatalf("register at %q: %v, want InvalidInput", tc.location, err)
					}
					return
				}
				if err != nil {
					t.Fatalf("declare at %q: %v", tc.location, err)
				}
				if _, _, err := db.DeregisterTable(ctx, id); err != nil {
					t.Fatal(err)
				}
			})
		}
	})
}

// TestCommitAtLocation: a commit that names where its table lies is
// recorded only while the table lies there; once the table was dropped and
// declared again elsewhere it is refused with ConcurrentModification (14),
// recording nothing. (The API has no field for it: only the commit
// coordinator sets it.)
func TestCommitAtLocation(t *testing.T) {
	eachBackend(t, func(t *testing.T, db store.Backend) {
		ctx := t.Context()
		id := []string{"t"}
		at := func(v int64, location string) store.VersionCommit {
			p := fmt.Sprintf("bucket/t/_versions/%d.manifest", v)
			return store.VersionCommit{Version: v, StagedPath: p, ManifestPath: p, Location: location}
		}
		if _, _, err := db.DeclareTable(ctx, id, store.TableDeclaration{Location: "s3://bucket/old"}); err != nil {
			t.Fatal(err)
		}
		if _, _, err := db.CommitVersion(ctx, id, at(1, "s3://bucket/old")); err != nil {
			t.Fatalf("commit at the table's location: %v", err)
		}
		if _, _, err := db.DropTable(ctx, id); err != nil {
			t.Fatal(err)
		}
		if _, _, err := db.DeclareTable(ctx, id, store.TableDeclaration{Location: "s3://bucket/new"}); err != nil {
			t.Fatal(err)
		}
		for _, tc := range []struct {
			name     string
			location string
			want     store.Code // -1: recorded
		}{
			{"OldLocation", "s3://bucket/old", store.CodeConcurrentModification},
			{"NewLocation", "s3://bucket/new", -1},
		} {
			t.Run(tc.name, func(t *testing.T) {
				_, _, err := db.CommitVersion(ctx, id, at(1, tc.location))
				if got := store.ErrorCode(err); tc.want >= 0 && got != tc.want || tc.want < 0 && err != nil {
					t.Fatalf("commit at %s: %v, want code %d", tc.location, err, tc.want)
				}
				_, err = db.DescribeVersion(ctx, id, "", nil)
				if recorded := err == nil; recorded != (tc.want < 0) {
					t.Fatalf("after the commit at %s: version recorded %v (%v)", tc.location, recorded, err)
				}
			})
		}
	})
}
