package sqlitedb

import (
	"context"
	"fmt"
	"io/fs"
	"sort"
)

// Migrate applies, in name order, every migrations/*.sql file of fsys not
// yet recorded (by its path in fsys) in schema_migrations, each in its own
// transaction. A shipped migration is never edited; changes come as new
// files. It returns the first error, naming the migration.
func (db *DB) Migrate(ctx context.Context, fsys fs.FS) error {
	if _, err := db.writer.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
		name TEXT PRIMARY KEY,
		applied_at INTEGER NOT NULL
	)`); err != nil {
		return fmt.Errorf("sqlite: create schema_migrations: %w", err)
	}
	names, err := fs.Glob(fsys, "migrations/*.sql")
	if err != nil {
		return fmt.Errorf("sqlite: list migrations: %w", err)
	}
	sort.Strings(names)
	for _, name := range names {
		if err := db.applyMigration(ctx, fsys, name); err != nil {
			return err
		}
	}
	return nil
}

func (db *DB) applyMigration(ctx context.Context, fsys fs.FS, name string) error {
	return db.Write(ctx, func(tx *Tx) error {
		var n int
		if err := tx.QueryRowCached(ctx, `SELECT count(*) FROM schema_migrations WHERE name = ?`, name).Scan(&n); err != nil {
			return fmt.Errorf("sqlite: migration %s: %w", name, err)
		}
		if n > 0 {
			return nil
		}
		body, err := fs.ReadFile(fsys, name)
		if err != nil {
			return fmt.Errorf("sqlite: migration %s: %w", name, err)
		}
		// A migration is a script of several statements: run it unprepared.
		if _, err := tx.Exec(ctx, string(body)); err != nil {
			return fmt.Errorf("sqlite: migration %s: %w", name, err)
		}
		if _, err := tx.ExecCached(ctx, `INSERT INTO schema_migrations (name, applied_at) VALUES (?, ?)`, name, tx.Now().UnixMilli()); err != nil {
			return fmt.Errorf("sqlite: migration %s: %w", name, err)
		}
		return nil
	})
}
