package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"

	"github.com/lancens/lancens/expr"
)

// RestoreOptions tune Restore.
type RestoreOptions struct {
	// Force replaces a database that exists at the destination (never one
	// in use).
	Force bool
}

// RestoreResult says what Restore restored.
type RestoreResult struct {
	// Bytes is the size of the restored database.
	Bytes int64
	// Migrations is how many of this lancens's schema migrations the
	// backup has; Pending, how many more the next Open applies (a backup
	// from an older lancens).
	Migrations, Pending int
}

// Restore puts the backup at from (a file lancens backup wrote, or a
// database file copied while no server had it open) in place as the
// database at path. It first checks the backup: it must pass SQLite's
// quick_check and be a lancens database whose schema this lancens knows
// (every migration it records is one of this binary's: a backup from a
// newer lancens is refused, one from an older lancens is upgraded by the
// next Open). It then takes the database's lock (the one Open takes), so a
// database a server has open is never replaced, writes a consistent copy
// of the backup beside path, syncs it, removes the old database's
// write-ahead log and shared-memory files (they belong to the old
// database and would otherwise be replayed into the new one) and renames
// the copy over path. A restore that fails before the rename leaves the
// database as it was.
//
// It returns an error, changing nothing, when the backup is missing,
// damaged, not a lancens database or from a newer lancens; when path
// exists and opts.Force is not set; when from and path are one file; or
// when another process holds the database's lock (naming its pid).
func Restore(ctx context.Context, from, path string, opts RestoreOptions) (RestoreResult, error) {
	var res RestoreResult
	fi, err := os.Stat(from)
	if err != nil {
		return res, fmt.Errorf("sqlite: restore: the backup: %w", err)
	}
	if !fi.Mode().IsRegular() {
		return res, fmt.Errorf("sqlite: restore: the backup %s is not a file", from)
	}
	existing, err := os.Stat(path)
	switch {
	case err == nil && os.SameFile(fi, existing):
		return res, fmt.Errorf("sqlite: restore: %s is the database itself", from)
	case err == nil && !opts.Force:
		return res, fmt.Errorf("sqlite: restore: %s exists; restoring replaces it: give --force to do so (after a backup of it, should it be needed)", path)
	case err != nil && !errors.Is(err, fs.ErrNotExist):
		return res, fmt.Errorf("sqlite: restore: %w", err)
	}
	// The indexes of an earlier release's managed tables, not converted
	// yet, may use lancens's own SQL functions.
	if err := expr.Register(); err != nil {
		return res, fmt.Errorf("sqlite: register functions: %w", err)
	}
	if err := quickCheck(ctx, from); err != nil {
		return res, fmt.Errorf("sqlite: restore: the backup %s: %w", from, err)
	}
	if res.Migrations, res.Pending, err = checkSchema(ctx, from); err != nil {
		return res, fmt.Errorf("sqlite: restore: the backup %s: %w", from, err)
	}

	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return res, fmt.Errorf("sqlite: restore: %w", err)
	}
	lock, err := lockDatabase(path)
	if err != nil {
		return res, err
	}
	defer lock.release()
	// A server may have made the database after the check above and
	// stopped since.
	if fi, err := os.Stat(path); err == nil && fi.Size() > 0 && existing == nil && !opts.Force {
		return res, fmt.Errorf("sqlite: restore: %s exists; restoring replaces it: give --force to do so", path)
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*.restore")
	if err != nil {
		return res, fmt.Errorf("sqlite: restore: %w", err)
	}
	tmpPath := tmp.Name()
	tmp.Close()
	renamed := false
	defer func() {
		if !renamed {
			os.Remove(tmpPath)
		}
	}()
	if err := copyDatabase(ctx, from, tmpPath); err != nil {
		return res, fmt.Errorf("sqlite: restore: %w", err)
	}
	for _, suffix := range []string{"-wal", "-shm"} {
		if err := os.Remove(path + suffix); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return res, fmt.Errorf("sqlite: restore: remove the old database's %s: %w", suffix, err)
		}
	}
	if err := os.Rename(tmpPath, path); err != nil {
		return res, fmt.Errorf("sqlite: restore: %w", err)
	}
	renamed = true
	// Not every system can sync a directory (Windows cannot).
	if err := syncFile(filepath.Dir(path)); err != nil && runtime.GOOS != "windows" {
		return res, fmt.Errorf("sqlite: restore: %w", err)
	}
	if fi, err = os.Stat(path); err != nil {
		return res, fmt.Errorf("sqlite: restore: %w", err)
	}
	res.Bytes = fi.Size()
	return res, nil
}

// checkSchema compares the migrations the database at path records with
// this binary's. It returns how many of them it has and how many it lacks,
// or an error when it records none (not a lancens database) or one this
// binary does not know (from a newer lancens).
func checkSchema(ctx context.Context, path string) (applied, pending int, err error) {
	known, err := fs.Glob(migrationFiles, "migrations/*.sql")
	if err != nil {
		return 0, 0, err
	}
	db, err := sql.Open("sqlite", readOnlyDSN(path))
	if err != nil {
		return 0, 0, err
	}
	defer db.Close()
	rows, err := db.QueryContext(ctx, `SELECT name FROM schema_migrations ORDER BY name`)
	if err != nil {
		if strings.Contains(err.Error(), "no such table") {
			return 0, 0, errors.New("not a lancens database (it has no schema_migrations table)")
		}
		return 0, 0, err
	}
	defer rows.Close()
	var unknown []string
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			return 0, 0, err
		}
		if !slices.Contains(known, name) {
			unknown = append(unknown, filepath.Base(name))
		}
		applied++
	}
	if err := rows.Err(); err != nil {
		return 0, 0, err
	}
	if len(unknown) > 0 {
		return 0, 0, fmt.Errorf("it comes from a newer lancens: its schema has migrations this lancens does not know (%s); restore it with that lancens or a newer one",
			strings.Join(unknown, ", "))
	}
	if applied == 0 {
		return 0, 0, errors.New("not a lancens database (it records no schema migration)")
	}
	return applied, len(known) - applied, nil
}
