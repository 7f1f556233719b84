package sqlitedb

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// open opens a database in a fresh directory with table g (k).
func open(t *testing.T) *DB {
	t.Helper()
	db, err := Open(t.Context(), filepath.Join(t.TempDir(), "g.db"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if err := db.ExecOnWriter(t.Context(), `CREATE TABLE g (k INTEGER PRIMARY KEY)`); err != nil {
		t.Fatal(err)
	}
	return db
}

// present reports whether row k of g is committed.
func present(t *testing.T, db *DB, k int) bool {
	t.Helper()
	var n int
	if err := db.Read(t.Context(), func(tx *Tx) error {
		return tx.QueryRowCached(t.Context(), `SELECT count(*) FROM g WHERE k = ?`, k).Scan(&n)
	}); err != nil {
		t.Fatal(err)
	}
	return n == 1
}

// TestGroupCommit runs many concurrent writes, some failing and one
// panicking, and checks that each write's effect, and its commit hooks,
// are there exactly when it reported success.
func TestGroupCommit(t *testing.T) {
	db := open(t)
	ctx := t.Context()
	const n = 200
	errs := make([]error, n)
	var hooked sync.Map
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			errs[i] = db.Write(ctx, func(tx *Tx) error {
				if _, err := tx.ExecCached(ctx, `INSERT INTO g (k) VALUES (?)`, i); err != nil {
					return err
				}
				tx.OnCommit(func() { hooked.Store(i, true) })
				switch {
				case i%7 == 0:
					return errors.New("refused") // its insert must be undone
				case i == 13:
					panic("boom")
				}
				return nil
			})
		})
	}
	wg.Wait()
	for i, err := range errs {
		_, hook := hooked.Load(i)
		if wantOK := i%7 != 0 && i != 13; (err == nil) != wantOK || present(t, db, i) != wantOK || hook != wantOK {
			t.Fatalf("write %d: err %v, row present %v, commit hook ran %v", i, err, present(t, db, i), hook)
		}
	}
	// A cancelled context before the write starts is reported, and nothing
	// is written.
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	err := db.Write(cctx, func(tx *Tx) error {
		_, err := tx.ExecCached(cctx, `INSERT INTO g (k) VALUES (?)`, fmt.Sprint(n+1))
		return err
	})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled write: %v", err)
	}
}

// TestGroupCommitCancelled cancels a write's context while its statements
// run in a group with another write: neither is interrupted, both commit.
// Statements built at run time (Exec) ignore the cancellation as fixed
// ones (ExecCached) do.
func TestGroupCommitCancelled(t *testing.T) {
	db := open(t)
	ctx := t.Context()
	// A first write holds the writer until the two others have queued, so
	// that they share the next transaction.
	release := make(chan struct{})
	started := make(chan struct{})
	first := make(chan error, 1)
	go func() {
		first <- db.Write(ctx, func(tx *Tx) error {
			close(started)
			<-release
			return nil
		})
	}()
	<-started
	cctx, cancel := context.WithCancel(ctx)
	results := make(chan error, 2)
	go func() {
		results <- db.Write(cctx, func(tx *Tx) error {
			cancel()
			// Long enough for an interrupt to land if it were not ignored.
			_, err := tx.Exec(cctx, `INSERT INTO g (k) WITH RECURSIVE n(i) AS (SELECT 1000 UNION ALL SELECT i + 1 FROM n WHERE i < 300000) SELECT i FROM n`)
			return err
		})
	}()
	go func() {
		results <- db.Write(ctx, func(tx *Tx) error {
			_, err := tx.ExecCached(ctx, `INSERT INTO g (k) VALUES (1)`)
			return err
		})
	}()
	for db.queued() < 2 {
		time.Sleep(time.Millisecond)
	}
	close(release)
	if err := <-first; err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if err := <-results; err != nil {
			t.Fatalf("a write of the group failed: %v", err)
		}
	}
	if !present(t, db, 1) || !present(t, db, 300000) {
		t.Fatal("the group's rows are missing")
	}
}

// queued returns the number of writes waiting for the writer.
func (db *DB) queued() int {
	db.writes.mu.Lock()
	defer db.writes.mu.Unlock()
	return len(db.writes.pending)
}
