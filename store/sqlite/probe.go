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

// PendingJobs implements store.Probe. It reads only the partial index of
// queued and running transactions, however many finished ones there are.
func (db *DB) PendingJobs(ctx context.Context) ([]store.JobCount, error) {
	var out []store.JobCount
	err := db.read(ctx, func(tx *Tx) error {
		rows, err := tx.QueryCached(ctx, `SELECT kind, status, count(*) FROM transactions
			WHERE status IN ('Queued', 'Running') GROUP BY kind, status ORDER BY kind, status`)
		if err != nil {
			return internal("count jobs", err)
		}
		defer rows.Close()
		for rows.Next() {
			var c store.JobCount
			if err := rows.Scan(&c.Kind, &c.Status, &c.Count); err != nil {
				return internal("count jobs", err)
			}
			out = append(out, c)
		}
		return rows.Err()
	})
	return out, err
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
