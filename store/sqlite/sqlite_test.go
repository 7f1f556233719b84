package sqlite_test

import (
	"context"
	"encoding/json"
	"errors"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

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

// TestConformance runs the whole suite against the store directly, with
// queued index builds and backfills run inline. The cases share one
// database, emptied before each case.
func TestConformance(t *testing.T) {
	db := mustOpen(t, filepath.Join(t.TempDir(), "lancens.db"))
	defer db.Close()
	conformance.Run(t, conformance.Config{
		New: func(t conformance.T) store.Catalog {
			if err := conformance.Empty(t.Context(), db); err != nil {
				t.Fatalf("empty the catalog: %v", err)
			}
			return conformance.InlineJobs(db)
		},
		Capabilities: conformance.Full(),
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

// TestWALStaysBounded writes far more than the WAL limit and checks that
// the checkpoints (background, or the writer's own past the limit) keep the
// WAL file within it.
func TestWALStaysBounded(t *testing.T) {
	path := filepath.Join(t.TempDir(), "lancens.db")
	db := mustOpen(t, path)
	defer db.Close()
	schema := arrow.NewSchema([]arrow.Field{{Name: "id", Type: arrow.PrimitiveTypes.Int64}, {Name: "blob", Type: arrow.BinaryTypes.Binary}}, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
	for i := range 256 {
		b.Field(0).(*array.Int64Builder).Append(int64(i))
		b.Field(1).(*array.BinaryBuilder).Append(make([]byte, 8192))
	}
	rec := b.NewRecordBatch() // 2 MiB
	ctx := t.Context()
	if _, _, err := db.CreateTable(ctx, []string{"t"}, store.NewTable{Mode: store.ModeCreate, Data: store.NewData(schema, rec)}); err != nil {
		t.Fatal(err)
	}
	for range 30 { // 60 MiB
		if _, err := db.Insert(ctx, []string{"t"}, store.InsertAppend, store.NewData(schema, rec)); err != nil {
			t.Fatal(err)
		}
	}
	// Commits that land while a background checkpoint holds SQLite's
	// checkpoint lock can take the WAL past the limit for a while; once the
	// checkpoints catch up, the next commit restarts the WAL and SQLite cuts
	// the file back to the limit (journal_size_limit).
	small := rec.NewSlice(0, 1)
	var size int64
	extra := 0
	for range 100 {
		extra++
		if _, err := db.Insert(ctx, []string{"t"}, store.InsertAppend, store.NewData(schema, small)); err != nil {
			t.Fatal(err)
		}
		wal, err := os.Stat(path + "-wal")
		if err != nil {
			t.Fatal(err)
		}
		if size = wal.Size(); size <= 16<<20 {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if size > 16<<20 {
		t.Fatalf("WAL of %d MiB after 60 MiB of writes", size>>20)
	}
	if n, _, err := db.CountRows(ctx, []string{"t"}, nil, ""); err != nil || n != int64(31*256+extra) {
		t.Fatalf("count %d, %v", n, err)
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

// TestRecoverJobsRequeuesLostIndexBuilds leaves an index BUILDING with no
// job to build it (its job was marked Failed, as a shutdown used to do) and
// checks that start-up recovery queues a build that finishes it.
func TestRecoverJobsRequeuesLostIndexBuilds(t *testing.T) {
	db := mustOpen(t, filepath.Join(t.TempDir(), "lancens.db"))
	defer db.Close()
	ctx := t.Context()
	schema := arrow.NewSchema([]arrow.Field{{Name: "vector", Type: arrow.FixedSizeListOf(2, arrow.PrimitiveTypes.Float32)}}, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
	vl := b.Field(0).(*array.FixedSizeListBuilder)
	for i := range 100 {
		vl.Append(true)
		vl.ValueBuilder().(*array.Float32Builder).AppendValues([]float32{float32(i), float32(i % 7)}, nil)
	}
	data := store.NewData(schema, b.NewRecordBatch())
	if _, _, err := db.CreateTable(ctx, []string{"v"}, store.NewTable{Mode: store.ModeCreate, Data: data}); err != nil {
		t.Fatal(err)
	}
	lost, err := db.CreateIndex(ctx, []string{"v"}, store.IndexSpec{Name: "vidx", Column: "vector", Type: store.IndexIVFFlat})
	if err != nil {
		t.Fatal(err)
	}
	failed := store.TxFailed
	if _, err := db.AlterTransaction(ctx, []string{lost}, []store.TransactionAction{{SetStatus: &failed}}); err != nil {
		t.Fatal(err)
	}
	if n, err := db.RecoverJobs(ctx); err != nil || n != 1 {
		t.Fatalf("recover: %d jobs, %v; want 1", n, err)
	}
	if n, err := db.RecoverJobs(ctx); err != nil || n != 0 {
		t.Fatalf("recover again: %d jobs, %v; want none", n, err)
	}
	job, err := db.ClaimJob(ctx, store.JobBuildIndex)
	if err != nil || job == nil || job.TransactionID == lost {
		t.Fatalf("claim: %+v %v", job, err)
	}
	var p store.BuildIndex
	if err := json.Unmarshal(job.Payload, &p); err != nil {
		t.Fatal(err)
	}
	if err := db.FinishJob(ctx, job.TransactionID, db.BuildIndex(ctx, p)); err != nil {
		t.Fatal(err)
	}
	ix, err := db.DescribeIndex(ctx, []string{"v"}, "vidx", nil)
	if err != nil || ix.Status != store.IndexSucceeded || ix.NumIndexedRows != 100 {
		t.Fatalf("index after recovery: %+v %v", ix, err)
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
