package sqlite

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/lancens/lancens/store"
)

var _ store.Probe = (*DB)(nil)

// Ready implements store.Probe: a read transaction must see every embedded
// migration recorded as applied.
func (db *DB) Ready(ctx context.Context) error {
	want, err := fs.Glob(migrationFiles, "migrations/*.sql")
	if err != nil {
		return fmt.Errorf("sqlite: list migrations: %w", err)
	}
	return db.read(ctx, func(tx *Tx) error {
		var applied int
		if err := tx.QueryRowCached(ctx, `SELECT count(*) FROM schema_migrations`).Scan(&applied); err != nil {
			return internal("read schema_migrations", err)
		}
		if applied < len(want) {
			return fmt.Errorf("sqlite: %d of %d migrations applied", applied, len(want))
		}
		return nil
	})
}

// SizeBytes implements store.Probe: the database file and its write-ahead
// log, which holds the commits not yet checkpointed into the file.
func (db *DB) SizeBytes(context.Context) (int64, error) {
	var total int64
	path := db.base.Path()
	for _, p := range []string{path, path + "-wal"} {
		fi, err := os.Stat(p)
		if errors.Is(err, fs.ErrNotExist) && p != path {
			continue
		}
		if err != nil {
			return 0, err
		}
		total += fi.Size()
	}
	return total, nil
}
