package postgres_test

import (
	"fmt"
	"testing"

	"github.com/lancens/lancens/internal/testkit/pgtest"
	"github.com/lancens/lancens/store"
	"github.com/lancens/lancens/store/postgres"
)

// declared opens a store on a fresh database of the throwaway cluster and
// declares table a$b$t in it, two namespaces deep.
func declared(b *testing.B) (*postgres.DB, []string) {
	db := open(b, pgtest.Database(b), postgres.Options{})
	for _, ns := range [][]string{{"a"}, {"a", "b"}} {
		if _, err := db.CreateNamespace(b.Context(), ns, store.ModeCreate, nil); err != nil {
			b.Fatal(err)
		}
	}
	id := []string{"a", "b", "t"}
	if _, _, err := db.DeclareTable(b.Context(), id, store.TableDeclaration{Location: "s3://bucket/a/b/t"}); err != nil {
		b.Fatal(err)
	}
	return db, id
}

func commitOf(v int64) store.VersionCommit {
	path := fmt.Sprintf("a/b/t/_versions/%d.manifest", v)
	return store.VersionCommit{Version: v, StagedPath: path, ManifestPath: path}
}

// BenchmarkCommitVersion records one version after another on a declared
// table: the catalog's share of a version commit made through the
// namespace API, on a PostgreSQL server on this machine.
func BenchmarkCommitVersion(b *testing.B) {
	db, id := declared(b)
	v := int64(0)
	for b.Loop() {
		v++
		if _, _, err := db.CommitVersion(b.Context(), id, commitOf(v)); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkDescribeVersion reads the latest version of the table, as Lance
// clients in namespace mode do before each read.
func BenchmarkDescribeVersion(b *testing.B) {
	db, id := declared(b)
	for v := int64(1); v <= 3; v++ {
		if _, _, err := db.CommitVersion(b.Context(), id, commitOf(v)); err != nil {
			b.Fatal(err)
		}
	}
	for b.Loop() {
		if v, err := db.DescribeVersion(b.Context(), id, "", nil); err != nil || v.Version != 3 {
			b.Fatalf("describe: %+v, %v", v, err)
		}
	}
}
