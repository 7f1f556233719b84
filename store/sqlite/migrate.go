package sqlite

import (
	"context"
	"embed"
	"fmt"
	"io/fs"
	"sort"
)

//go:embed migrations/*.sql
var migrationFiles embed.FS

// migrate applies, in name order, every embedded migration not yet recorded in
// schema_migrations, each in its own transaction. A shipped migration is never
// edited; changes come as new files.
func (db *DB) migrate(ctx context.Context) error {
	if _, err := db.writer.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
		name TEXT PRIMARY KEY,
		applied_at INTEGER NOT NULL
	)`); err != nil {
		return fmt.Errorf("sqlite: create schema_migrations: %w", err)
	}
	names, err := migrationNames()
	if err != nil {
		return err
	}
	for _, name := range names {
		if err := db.applyMigration(ctx, name); err != nil {
			return err
		}
	}
	return nil
}

// migrationNames returns the embedded migrations in the order they apply.
func migrationNames() ([]string, error) {
	names, err := fs.Glob(migrationFiles, "migrations/*.sql")
	if err != nil {
		return nil, fmt.Errorf("sqlite: list migrations: %w", err)
	}
	sort.Strings(names)
	return names, nil
}

func (db *DB) applyMigration(ctx context.Context, name string) error {
	return db.write(ctx, func(tx *Tx) error {
		var n int
		if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM schema_migrations WHERE name = ?`, name).Scan(&n); err != nil {
			return fmt.Errorf("sqlite: migration %s: %w", name, err)
		}
		if n > 0 {
			return nil
		}
		body, err := migrationFiles.ReadFile(name)
		if err != nil {
			return fmt.Errorf("sqlite: migration %s: %w", name, err)
		}
		// A migration is a script of several statements: run it unprepared.
		if _, err := tx.Tx.ExecContext(ctx, string(body)); err != nil {
			return fmt.Errorf("sqlite: migration %s: %w", name, err)
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO schema_migrations (name, applied_at) VALUES (?, ?)`, name, tx.now.UnixMilli()); err != nil {
			return fmt.Errorf("sqlite: migration %s: %w", name, err)
		}
		return nil
	})
}
