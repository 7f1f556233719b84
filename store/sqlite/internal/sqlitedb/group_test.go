package sqlitedb

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
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

// TestRelaxedWrites checks the synchronous mode each group commits with:
// NORMAL when every write of the group is relaxed, the database's own mode
// when one is not — whatever came before.
func TestRelaxedWrites(t *testing.T) {
	// The synchronous pragma's values.
	const normal, full = 1, 2
	for _, tc := range []struct {
		name   string
		mode   string   // Options.Synchronous
		groups [][]bool // relaxed, per write of each group
		want   []int    // the mode each group ran with
	}{
		{"durable", "FULL", [][]bool{{false}, {false, false}}, []int{full, full}},
		{"relaxed", "FULL", [][]bool{{true}, {true, true}}, []int{normal, normal}},
		{"alternating", "FULL", [][]bool{{true}, {false}, {true}, {false}}, []int{normal, full, normal, full}},
		{"mixed group", "FULL", [][]bool{{true}, {true, false}, {false, true}, {true, true}}, []int{normal, full, full, normal}},
		{"NORMAL database", "NORMAL", [][]bool{{false}, {true}, {true, false}}, []int{normal, normal, normal}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			db, err := Open(t.Context(), filepath.Join(t.TempDir(), "g.db"), Options{Synchronous: tc.mode})
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			for i, group := range tc.groups {
				got := writeGroup(t, db, group)
				for j, mode := range got {
					if mode != tc.want[i] {
						t.Errorf("group %d (relaxed %v): write %d ran with synchronous %d, want %d", i, group, j, mode, tc.want[i])
					}
				}
			}
		})
	}
}

// writeGroup commits one group of writes, relaxed or not as given, and
// returns the synchronous mode each write saw. A first write holds the
// writer until all of them have queued, so that they share the next
// transaction; it is relaxed when all of them are, so that the mode
// carries over from its group to theirs.
func writeGroup(t *testing.T, db *DB, relaxed []bool) []int {
	t.Helper()
	ctx := t.Context()
	release, started := make(chan struct{}), make(chan struct{})
	first := make(chan error, 1)
	hold := db.WriteRelaxed
	if slices.Contains(relaxed, false) {
		hold = db.Write
	}
	go func() {
		first <- hold(ctx, func(*Tx) error {
			close(started)
			<-release
			return nil
		})
	}()
	<-started
	modes := make([]int, len(relaxed))
	errs := make(chan error, len(relaxed))
	for i, r := range relaxed {
		write := db.Write
		if r {
			write = db.WriteRelaxed
		}
		go func() {
			errs <- write(ctx, func(tx *Tx) error {
				return tx.QueryRow(ctx, `PRAGMA synchronous`).Scan(&modes[i])
			})
		}()
	}
	for db.queued() < len(relaxed) {
		time.Sleep(time.Millisecond)
	}
	close(release)
	if err := <-first; err != nil {
		t.Fatal(err)
	}
	for range relaxed {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	return modes
}
