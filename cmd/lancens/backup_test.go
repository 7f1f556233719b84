package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lancens/lancens/client"
	"github.com/lancens/lancens/internal/testkit/apitest"
)

// backupRow is a row of the table the backup test writes.
type backupRow struct {
	Batch int64 `arrow:"batch"`
	Seq   int64 `arrow:"seq"`
}

// TestBackupDuringWrites takes `lancens backup` of a database while a
// running `lancens serve` keeps inserting batches of rows and creating
// namespaces, then serves the copy and checks it: every batch and
// namespace acknowledged before the backup began is there, every batch is
// whole, and nothing is there that was never written.
func TestBackupDuringWrites(t *testing.T) {
	dir := t.TempDir()
	dbPath := filepath.Join(dir, "live.db")
	// The copy is served over the same warehouse: the Lance engine keeps
	// the rows there, and the database only the catalog.
	wh := filepath.Join(dir, "wh")
	addr, stop := startServe(t, "--db", dbPath, "--warehouse", wh)
	c, err := client.New("http://" + addr)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	tbl := c.Table("rows")
	const batchRows = 200
	makeBatch := func(b int64) client.Data {
		rows := make([]backupRow, batchRows)
		for i := range rows {
			rows[i] = backupRow{b, int64(i)}
		}
		return client.Structs(rows)
	}
	if _, err := tbl.Create(ctx, makeBatch(0), nil); err != nil {
		t.Fatal(err)
	}

	var mu sync.Mutex
	var acked []int64 // batches, then namespaces, acknowledged
	var ackedNS []string
	done := make(chan struct{})
	var writers sync.WaitGroup
	writers.Go(func() {
		for b := int64(1); ; b++ {
			select {
			case <-done:
				return
			default:
			}
			if _, err := tbl.Add(ctx, makeBatch(b)); err != nil {
				t.Errorf("insert batch %d: %v", b, err)
				return
			}
			mu.Lock()
			acked = append(acked, b)
			mu.Unlock()
		}
	})
	writers.Go(func() {
		for i := 0; ; i++ {
			select {
			case <-done:
				return
			default:
			}
			name := fmt.Sprintf("ns%d", i)
			if _, err := c.CreateNamespace(ctx, []string{name}, nil); err != nil {
				t.Errorf("create namespace %s: %v", name, err)
				return
			}
			mu.Lock()
			ackedNS = append(ackedNS, name)
			mu.Unlock()
		}
	})
	time.Sleep(500 * time.Millisecond) // writes under way
	mu.Lock()
	before := len(acked)
	beforeNS := len(ackedNS)
	mu.Unlock()
	out := filepath.Join(dir, "copy.db")
	var stdout bytes.Buffer
	err = run(ctx, []string{"backup", "--db", dbPath, "--out", out}, func(string) string { return "" }, &stdout, io.Discard)
	time.Sleep(200 * time.Millisecond) // writes after the backup
	close(done)
	writers.Wait()
	if err != nil {
		t.Fatalf("backup: %v", err)
	}
	mu.Lock()
	after := len(acked)
	mu.Unlock()
	t.Logf("%s; %d batches acknowledged before the backup, %d by the end", bytes.TrimSpace(stdout.Bytes()), before, after)
	if before == 0 || after == before {
		t.Fatalf("the backup did not run during writes (%d batches before, %d after)", before, after)
	}
	if _, err := stop(); err != nil {
		t.Fatal(err)
	}
	if err := run(ctx, []string{"backup", "--db", dbPath, "--out", out}, func(string) string { return "" }, io.Discard, io.Discard); err == nil {
		t.Fatal("a backup overwrote an existing file")
	}

	copySrv := apitest.Start(t, apitest.Options{DBPath: out, Warehouse: wh})
	rows, err := client.ScanAll[backupRow](ctx, copySrv.Client.Table("rows").Query())
	if err != nil {
		t.Fatal(err)
	}
	perBatch := map[int64]int{}
	for _, r := range rows {
		perBatch[r.Batch]++
	}
	for b, n := range perBatch {
		if n != batchRows {
			t.Errorf("batch %d has %d rows in the copy, want %d: a write is torn", b, n, batchRows)
		}
		if b > int64(after) {
			t.Errorf("batch %d in the copy was never written", b)
		}
	}
	for b := int64(0); b <= int64(before); b++ {
		if perBatch[b] == 0 {
			t.Errorf("batch %d, acknowledged before the backup, is missing from the copy", b)
		}
	}
	for _, name := range ackedNS[:beforeNS] {
		if ok, err := copySrv.Client.NamespaceExists(ctx, []string{name}); !ok || err != nil {
			t.Errorf("namespace %s, acknowledged before the backup, is missing from the copy (%v)", name, err)
		}
	}
	t.Logf("the copy holds %d batches", len(perBatch))
}

// TestBackupRefuses checks that `lancens backup` refuses what it cannot
// copy, writes no file at --out, and never repeats a password of --db.
func TestBackupRefuses(t *testing.T) {
	dir := t.TempDir()
	const password = "s3cret-pw"
	for _, tc := range []struct {
		name string
		db   string
	}{
		{"PostgreSQL", "postgres://lancens:" + password + "@localhost:5432/catalog"},
		{"PostgreSQLScheme", "postgresql://lancens:" + password + "@localhost/catalog"},
		{"MissingFile", filepath.Join(dir, "missing.db")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := filepath.Join(dir, tc.name+".db")
			var stdout, stderr bytes.Buffer
			err := run(context.Background(), []string{"backup", "--db", tc.db, "--out", out}, func(string) string { return "" }, &stdout, &stderr)
			if err == nil {
				t.Fatal("backup succeeded")
			}
			if _, statErr := os.Stat(out); !os.IsNotExist(statErr) {
				t.Fatalf("a failed backup left %s: %v", out, statErr)
			}
			if all := err.Error() + stdout.String() + stderr.String(); strings.Contains(all, password) {
				t.Fatalf("the password of --db is in the output: %v", err)
			}
		})
	}
}
