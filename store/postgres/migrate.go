package postgres

import (
	"context"
	"embed"
	"fmt"
	"io/fs"
	"sort"

	"github.com/jackc/pgx/v5"
)

//go:embed migrations/*.sql
var migrationFiles embed.FS

// migrationLock is the key of the session advisory lock held while
// migrating: replicas starting together migrate one after the other, and
// the later ones find nothing left to do.
const migrationLock = 0x6c616e63656e7301 // "lancens" 1

// migrate applies, in name order, every embedded migration not yet recorded
// in lancens_migrations, each in its own transaction, holding the
// migration lock. A shipped migration is never edited; changes come as new
// files. It returns the first error met.
func (db *DB) migrate(ctx context.Context) error {
	conn, err := db.pool.Acquire(ctx)
	if err != nil {
		return classify(err)
	}
	defer conn.Release()
	if _, err := conn.Exec(ctx, `SELECT pg_advisory_lock($1)`, int64(migrationLock)); err != nil {
		return fmt.Errorf("postgres: take the migration lock: %w", classify(err))
	}
	defer conn.Exec(context.WithoutCancel(ctx), `SELECT pg_advisory_unlock($1)`, int64(migrationLock))
	if _, err := conn.Exec(ctx, `CREATE TABLE IF NOT EXISTS lancens_migrations (
		name TEXT PRIMARY KEY,
		applied_at BIGINT NOT NULL
	)`); err != nil {
		return fmt.Errorf("postgres: create lancens_migrations: %w", classify(err))
	}
	names, err := fs.Glob(migrationFiles, "migrations/*.sql")
	if err != nil {
		return fmt.Errorf("postgres: list migrations: %w", err)
	}
	sort.Strings(names)
	for _, name := range names {
		if err := db.applyMigration(ctx, conn.Conn(), name); err != nil {
			return err
		}
	}
	return nil
}

func (db *DB) applyMigration(ctx context.Context, conn *pgx.Conn, name string) error {
	return pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
		var done bool
		if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM lancens_migrations WHERE name = $1)`, name).Scan(&done); err != nil {
			return fmt.Errorf("postgres: migration %s: %w", name, err)
		}
		if done {
			return nil
		}
		body, err := migrationFiles.ReadFile(name)
		if err != nil {
			return fmt.Errorf("postgres: migration %s: %w", name, err)
		}
		// A migration is a script of several statements: the simple
		// protocol runs it whole.
		if _, err := tx.Exec(ctx, string(body), pgx.QueryExecModeSimpleProtocol); err != nil {
			return fmt.Errorf("postgres: migration %s: %w", name, err)
		}
		if _, err := tx.Exec(ctx, `INSERT INTO lancens_migrations (name, applied_at) VALUES ($1, $2)`, name, db.now().UnixMilli()); err != nil {
			return fmt.Errorf("postgres: migration %s: %w", name, err)
		}
		return nil
	})
}
