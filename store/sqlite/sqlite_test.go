package sqlite_test

import (
	"context"
	"errors"
	"maps"
	"path/filepath"
	"strings"
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

// TestConformance runs the suite's groups of a backend that keeps no rows
// against the store directly (the Lance engine serves the rows: package
// engine runs the data groups over this store). The cases share one
// database, emptied before each case.
func TestConformance(t *testing.T) {
	db := mustOpen(t, filepath.Join(t.TempDir(), "lancens.db"))
	defer db.Close()
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

func TestJobs(t *testing.T) {
	db := mustOpen(t, filepath.Join(t.TempDir(), "lancens.db"))
	defer db.Close()
	ctx := t.Context()
	if _, _, err := db.DeclareTable(ctx, []string{"a"}, store.TableDeclaration{Location: "/wh/a", Owned: true}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := db.DeclareTable(ctx, []string{"b"}, store.TableDeclaration{Location: "/elsewhere/b"}); err != nil {
		t.Fatal(err)
	}
	_, txA, err := db.DropTable(ctx, []string{"a"})
	if err != nil {
		t.Fatal(err)
	}
	_, txB, err := db.DropTable(ctx, []string{"b"})
	if err != nil {
		t.Fatal(err)
	}
	// Only owned data is queued for deletion; the other drop is done.
	if tx, _ := db.DescribeTransaction(ctx, []string{txB}); tx.Status != store.TxSucceeded {
		t.Fatalf("drop of unowned table: %+v", tx)
	}
	job, err := db.ClaimJob(ctx, store.JobDeleteTableData)
	if err != nil || job == nil || job.TransactionID != txA || !strings.Contains(string(job.Payload), "/wh/a") {
		t.Fatalf("claim: %+v %v", job, err)
	}
	if again, _ := db.ClaimJob(ctx, store.JobDeleteTableData); again != nil {
		t.Fatalf("claimed a running job twice: %+v", again)
	}
	// A crash leaves it Running; a restart queues it again.
	if n, err := db.RecoverJobs(ctx); err != nil || n != 1 {
		t.Fatalf("requeue: %d %v", n, err)
	}
	job, _ = db.ClaimJob(ctx, store.JobDeleteTableData)
	if job == nil {
		t.Fatal("requeued job not claimable")
	}
	if err := db.FinishJob(ctx, job.TransactionID, errors.New("disk full")); err != nil {
		t.Fatal(err)
	}
	tx, _ := db.DescribeTransaction(ctx, []string{txA})
	if tx.Status != store.TxFailed || tx.Properties["error"] != "disk full" {
		t.Fatalf("failed job: %+v", tx)
	}
	if err := db.FinishJob(ctx, job.TransactionID, nil); store.ErrorCode(err) != store.CodeTransactionNotFound {
		t.Fatalf("finishing a job twice: %v", err)
	}
}

// catalogOnly is a backend that keeps no rows: it offers the catalog
// interfaces only.
type catalogOnly struct {
	store.Catalog
}

// TestConformanceCatalogOnly runs the suite in the kit's runner against a
// catalog-only target: the catalog groups pass, and every group that needs
// managed data or another interface of a backend is reported as a gap
// without running a case.
func TestConformanceCatalogOnly(t *testing.T) {
	db := mustOpen(t, filepath.Join(t.TempDir(), "lancens.db"))
	defer db.Close()
	cfg := conformance.Config{
		New: func(t conformance.T) store.Catalog {
			if err := conformance.Empty(t.Context(), db); err != nil {
				t.Fatalf("empty the catalog: %v", err)
			}
			return catalogOnly{db}
		},
		Capabilities: conformance.Catalog(),
	}
	res := conformance.NewRunner(conformance.RunnerOptions{}).Run(t.Context(), func(t conformance.T) { conformance.Run(t, cfg) })
	data := map[string]bool{"Data": true, "Streams": true, "SchemaEvolution": true, "ScalarIndexes": true, "VectorSearch": true, "VectorIndexes": true,
		"FullTextSearch": true, "Views": true, "BranchedData": true, "VersionCleanup": true, "Jobs": true, "Probe": true, "LocationLocks": true,
		"VersionFinder": true, "DatasetIndexes": true}
	for _, g := range res.Children {
		switch {
		case data[g.Path]:
			if g.Status != conformance.Unsupported || len(g.Children) != 0 {
				t.Errorf("group %s: %s with %d cases, want a gap without cases", g.Path, g.Status, len(g.Children))
			}
		case g.Status != conformance.Passed || len(g.Children) == 0:
			t.Errorf("group %s: %s with %d cases: %q", g.Path, g.Status, len(g.Children), g.Messages)
		}
	}
	c := res.Count()
	if c.Failed != 0 || c.Unsupported != len(data) || c.Passed < 50 {
		t.Fatalf("counts %+v, want no failures, %d gaps and the catalog cases passed", c, len(data))
	}
}

// TestCommitDurability checks the synchronous mode version commits and
// other writes commit with, for each SQLite mode and commit durability.
func TestCommitDurability(t *testing.T) {
	const normal, full = 1, 2
	for _, tc := range []struct {
		sync            string
		durability      store.CommitDurability
		commits, others int
	}{
		{"", store.DurabilityFull, full, full},
		{"FULL", store.DurabilityProcess, normal, full},
		{"NORMAL", store.DurabilityFull, normal, normal},
		{"NORMAL", store.DurabilityProcess, normal, normal},
	} {
		t.Run(tc.sync+"/"+tc.durability.String(), func(t *testing.T) {
			db, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "lancens.db"), sqlite.Options{Synchronous: tc.sync, CommitDurability: tc.durability})
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			commits, others, err := sqlite.WriteModes(t.Context(), db)
			if err != nil {
				t.Fatal(err)
			}
			if commits != tc.commits || others != tc.others {
				t.Fatalf("version commits run with synchronous %d, other writes with %d; want %d and %d", commits, others, tc.commits, tc.others)
			}
		})
	}
}

// TestConformanceProcessDurability runs the catalog's part of the suite
// on a store whose version commits need survive only a crash of the
// process: the same answers as with full durability.
func TestConformanceProcessDurability(t *testing.T) {
	db, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "lancens.db"), sqlite.Options{CommitDurability: store.DurabilityProcess})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	conformance.Run(t, conformance.Config{
		New: func(t conformance.T) store.Catalog {
			if err := conformance.Empty(t.Context(), db); err != nil {
				t.Fatalf("empty the catalog: %v", err)
			}
			return db
		},
		Capabilities: conformance.Catalog(),
	})
}
