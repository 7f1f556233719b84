package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/lancens/lancens/expr"
	"github.com/lancens/lancens/store/sqlite/internal/sqlitedb"
)

// Backup writes a consistent copy of the database at path to the new file
// out, while a server may go on writing to the database: SQLite's VACUUM
// INTO copies, in one read transaction, the state of the last commit before
// it began (every write acknowledged by then, nothing of a write after).
// It opens the database read-only and does not take the server's lock
// (`<db>.lock`): it is a reader. The copy is written beside out, synced,
// checked and then linked to out (never replacing a file there), so a
// backup that fails leaves no file at out. It returns the size of the copy, or an error when the database
// cannot be read, out exists, or the copy cannot be written or fails its
// check.
func Backup(ctx context.Context, path, out string) (int64, error) {
	if _, err := os.Stat(path); err != nil {
		return 0, fmt.Errorf("sqlite: backup: %w", err)
	}
	if _, err := os.Lstat(out); err == nil {
		return 0, fmt.Errorf("sqlite: backup: %s already exists; choose a new file", out)
	} else if !errors.Is(err, fs.ErrNotExist) {
		return 0, fmt.Errorf("sqlite: backup: %w", err)
	}
	// The indexes of an earlier release's managed tables, not converted
	// yet, may use lancens's own SQL functions.
	if err := expr.Register(); err != nil {
		return 0, fmt.Errorf("sqlite: register functions: %w", err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(out), "."+filepath.Base(out)+".*.tmp")
	if err != nil {
		return 0, fmt.Errorf("sqlite: backup: %w", err)
	}
	tmpPath := tmp.Name()
	tmp.Close()
	// VACUUM INTO wants a file that does not exist or is empty.
	committed := false
	defer func() {
		if !committed {
			os.Remove(tmpPath)
		}
	}()
	if err := copyDatabase(ctx, path, tmpPath); err != nil {
		return 0, fmt.Errorf("sqlite: backup: %w", err)
	}
	// A link, unlike a rename, fails when out was made since the check
	// above: a backup never replaces a file.
	if err := os.Link(tmpPath, out); err != nil {
		return 0, fmt.Errorf("sqlite: backup: %w", err)
	}
	committed = true
	os.Remove(tmpPath)
	// Not every system can sync a directory (Windows cannot).
	if err := syncFile(filepath.Dir(out)); err != nil && runtime.GOOS != "windows" {
		return 0, fmt.Errorf("sqlite: backup: %w", err)
	}
	fi, err := os.Stat(out)
	if err != nil {
		return 0, fmt.Errorf("sqlite: backup: %w", err)
	}
	return fi.Size(), nil
}

// copyDatabase writes a consistent copy of the database at path to the
// empty file tmpPath with VACUUM INTO (see Backup), checks the copy and
// syncs it. The functions lancens's indexes and computed values use must
// be registered. It returns an error when the database cannot be read, or
// the copy cannot be written or fails its check.
func copyDatabase(ctx context.Context, path, tmpPath string) error {
	src, err := sql.Open("sqlite", readOnlyDSN(path))
	if err != nil {
		return fmt.Errorf("open %s: %w", path, err)
	}
	defer src.Close()
	if _, err := src.ExecContext(ctx, `VACUUM INTO ?`, tmpPath); err != nil {
		return fmt.Errorf("copy %s: %w", path, err)
	}
	if err := checkCopy(ctx, tmpPath); err != nil {
		return err
	}
	return syncFile(tmpPath)
}

// readOnlyDSN opens the database at path read-only, waiting rather than
// failing while the server holds a lock for a moment.
func readOnlyDSN(path string) string {
	q := url.Values{}
	q.Add("mode", "ro")
	q.Add("_pragma", "busy_timeout(10000)")
	return sqlitedb.FileURI(path, q)
}

// checkCopy runs SQLite's quick check on the copy at path.
func checkCopy(ctx context.Context, path string) error {
	if err := quickCheck(ctx, path); err != nil {
		return fmt.Errorf("check the copy: %w", err)
	}
	return nil
}

// quickCheck runs SQLite's quick check on the database at path, opened
// read-only. It returns an error when the file cannot be read as a
// database or fails the check (naming the first problems found).
func quickCheck(ctx context.Context, path string) error {
	db, err := sql.Open("sqlite", readOnlyDSN(path))
	if err != nil {
		return err
	}
	defer db.Close()
	rows, err := db.QueryContext(ctx, `PRAGMA quick_check(5)`)
	if err != nil {
		return fmt.Errorf("SQLite's quick_check fails: %w", err)
	}
	defer rows.Close()
	var problems []string
	for rows.Next() {
		var line string
		if err := rows.Scan(&line); err != nil {
			return err
		}
		problems = append(problems, line)
	}
	if err := rows.Err(); err != nil {
		return err
	}
	if len(problems) != 1 || problems[0] != "ok" {
		return fmt.Errorf("SQLite's quick_check finds damage: %s", strings.Join(problems, "; "))
	}
	return nil
}

// syncFile flushes the file or directory at path to stable storage.
func syncFile(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	return f.Sync()
}
