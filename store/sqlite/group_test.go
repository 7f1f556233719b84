package sqlite

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
)

// TestGroupCommit runs many concurrent writes, some failing and one
// panicking, and checks that each write's effect is there exactly when it
// reported success.
func TestGroupCommit(t *testing.T) {
	db, err := Open(context.Background(), filepath.Join(t.TempDir(), "g.db"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx := t.Context()
	if _, err := db.writer.ExecContext(ctx, `CREATE TABLE g (k INTEGER PRIMARY KEY)`); err != nil {
		t.Fatal(err)
	}
	const n = 200
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			errs[i] = db.write(ctx, func(tx *Tx) error {
				if _, err := tx.ExecContext(ctx, `INSERT INTO g (k) VALUES (?)`, i); err != nil {
					return err
				}
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
		var exists int
		if err := db.reader.QueryRowContext(ctx, `SELECT count(*) FROM g WHERE k = ?`, i).Scan(&exists); err != nil {
			t.Fatal(err)
		}
		if wantOK := i%7 != 0 && i != 13; (err == nil) != wantOK || (exists == 1) != wantOK {
			t.Fatalf("write %d: err %v, row present %v", i, err, exists == 1)
		}
	}
	// A cancelled context before the write starts is reported, and nothing
	// is written.
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	err = db.write(cctx, func(tx *Tx) error {
		_, err := tx.ExecContext(cctx, `INSERT INTO g (k) VALUES (?)`, fmt.Sprint(n+1))
		return err
	})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled write: %v", err)
	}
}
