package sqlitedb

import (
	"context"
	"fmt"
)

// AutoVacuumIncremental is PRAGMA auto_vacuum's value for INCREMENTAL: the
// mode every database Open makes or converts is in, so that free pages can
// be given back (PRAGMA incremental_vacuum) a bounded number at a time.
const AutoVacuumIncremental = 2

// maxConvertBytes is the largest database Open converts to incremental
// auto-vacuum; converting rewrites the whole file (VACUUM).
const maxConvertBytes = 1 << 30

// convertVacuum switches a database made before lancens set auto_vacuum to
// INCREMENTAL: SQLite needs a VACUUM, which rewrites the file, to do it.
// Open does it for a database of at most maxConvertBytes; a larger one
// keeps reusing its free pages without giving them back. Returns the error
// of the pragmas or the VACUUM.
func (db *DB) convertVacuum(ctx context.Context) error {
	var mode, pages, size int64
	for _, p := range []struct {
		q   string
		dst *int64
	}{{`PRAGMA auto_vacuum`, &mode}, {`PRAGMA page_count`, &pages}, {`PRAGMA page_size`, &size}} {
		if err := db.writer.QueryRowContext(ctx, p.q).Scan(p.dst); err != nil {
			return fmt.Errorf("sqlite: %s: %w", p.q, err)
		}
	}
	if mode == AutoVacuumIncremental || pages*size > maxConvertBytes {
		return nil
	}
	conn, err := db.writer.Conn(ctx)
	if err != nil {
		return fmt.Errorf("sqlite: vacuum: %w", err)
	}
	defer conn.Close()
	for _, q := range []string{`PRAGMA auto_vacuum = INCREMENTAL`, `VACUUM`} {
		if _, err := conn.ExecContext(ctx, q); err != nil {
			return fmt.Errorf("sqlite: vacuum: %w", err)
		}
	}
	return nil
}
