package sqlite

import (
	"context"

	"github.com/lancens/lancens/store/sqlcatalog"
)

// FillDisk makes db behave as if its disk were full: the database may not
// grow past its current size, so the next write that needs a page more
// fails with SQLITE_FULL.
func FillDisk(db *DB) error {
	return db.base.ExecOnWriter(context.Background(), `PRAGMA max_page_count = 1`) // never below the current size
}

// MakeReadOnly makes db's writer connection refuse writes, as a database
// file lancens may not write does (SQLITE_READONLY).
func MakeReadOnly(db *DB) error {
	return db.base.ExecOnWriter(context.Background(), `PRAGMA query_only = ON`)
}

// WriteModes returns the synchronous mode (1 NORMAL, 2 FULL) that db's
// version commits and its other writes commit with.
func WriteModes(ctx context.Context, db *DB) (commits, others int, err error) {
	read := func(t transactions, mode *int) error {
		return t.Write(ctx, func(tx sqlcatalog.Tx) error {
			// Not a cached statement: SQLite reads the mode when it
			// prepares the pragma.
			return storeTx(tx).QueryRow(ctx, `PRAGMA synchronous`).Scan(mode)
		})
	}
	if err := read(db.commitTx, &commits); err != nil {
		return 0, 0, err
	}
	return commits, others, read(transactions{db: db}, &others)
}
