package postgres

import (
	"context"
	"fmt"
	"io/fs"

	"github.com/lancens/lancens/store"
)

var _ store.Probe = (*DB)(nil)

// Ready implements store.Probe: a read transaction must see every embedded
// migration recorded as applied.
func (db *DB) Ready(ctx context.Context) error {
	want, err := fs.Glob(migrationFiles, "migrations/*.sql")
	if err != nil {
		return fmt.Errorf("postgres: list migrations: %w", err)
	}
	return db.read(ctx, func(tx *tx) error {
		var applied int
		if err := tx.QueryRow(ctx, `SELECT count(*) FROM lancens_migrations`).Scan(&applied); err != nil {
			return err
		}
		if applied < len(want) {
			return fmt.Errorf("postgres: %d of %d migrations applied", applied, len(want))
		}
		return nil
	})
}

// SizeBytes implements store.Probe: the size of the whole database, as
// PostgreSQL counts it.
func (db *DB) SizeBytes(ctx context.Context) (int64, error) {
	var size int64
	err := db.read(ctx, func(tx *tx) error {
		return tx.QueryRow(ctx, `SELECT pg_database_size(current_database())`).Scan(&size)
	})
	return size, err
}
