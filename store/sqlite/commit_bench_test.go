package sqlite_test

import (
	"fmt"
	"path/filepath"
	"testing"

	"github.com/lancens/lancens/store"
	"github.com/lancens/lancens/store/sqlite"
)

// BenchmarkCommitVersion records one version after another on a declared
// table, with each commit durability (full: the durable default,
// synchronous FULL; process: synchronous NORMAL, no sync per commit, which
// leaves the statements): the catalog's share of a version commit made
// through the namespace API.
func BenchmarkCommitVersion(b *testing.B) {
	for _, d := range []store.CommitDurability{store.DurabilityFull, store.DurabilityProcess} {
		b.Run(d.String(), func(b *testing.B) {
			db, err := sqlite.Open(b.Context(), filepath.Join(b.TempDir(), "lancens.db"), sqlite.Options{CommitDurability: d})
			if err != nil {
				b.Fatal(err)
			}
			defer db.Close()
			id := []string{"t"}
			if _, _, err := db.DeclareTable(b.Context(), id, store.TableDeclaration{Location: b.TempDir()}); err != nil {
				b.Fatal(err)
			}
			v := int64(0)
			for b.Loop() {
				v++
				path := fmt.Sprintf("t/_versions/%d.manifest", v)
				if _, _, err := db.CommitVersion(b.Context(), id, store.VersionCommit{Version: v, StagedPath: path, ManifestPath: path}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkDescribeVersion reads the latest version of a table two
// namespaces deep, as Lance clients in namespace mode do before each read:
// the catalog's read path, without a sync to wait for.
func BenchmarkDescribeVersion(b *testing.B) {
	db, err := sqlite.Open(b.Context(), filepath.Join(b.TempDir(), "lancens.db"), sqlite.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	for _, ns := range [][]string{{"a"}, {"a", "b"}} {
		if _, err := db.CreateNamespace(b.Context(), ns, store.ModeCreate, nil); err != nil {
			b.Fatal(err)
		}
	}
	id := []string{"a", "b", "t"}
	if _, _, err := db.DeclareTable(b.Context(), id, store.TableDeclaration{Location: b.TempDir()}); err != nil {
		b.Fatal(err)
	}
	for v := int64(1); v <= 3; v++ {
		path := fmt.Sprintf("t/_versions/%d.manifest", v)
		if _, _, err := db.CommitVersion(b.Context(), id, store.VersionCommit{Version: v, StagedPath: path, ManifestPath: path}); err != nil {
			b.Fatal(err)
		}
	}
	for b.Loop() {
		if v, err := db.DescribeVersion(b.Context(), id, "", nil); err != nil || v.Version != 3 {
			b.Fatalf("describe: %+v, %v", v, err)
		}
	}
}
