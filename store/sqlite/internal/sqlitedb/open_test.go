package sqlitedb

import (
	"context"
	"database/sql"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"

	sqlite "modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// TestWriteCheckReadOnly opens a database the way SQLite opens a file it
// may not write (read-only, mode=ro: chmod cannot make a file read-only for
// root, who runs the tests in CI) and checks that the start-up write check
// fails with SQLITE_READONLY (which the store reports as
// ServiceUnavailable), while a writable database passes it.
func TestWriteCheckReadOnly(t *testing.T) {
	path := filepath.Join(t.TempDir(), "lancens.db")
	db, err := Open(context.Background(), path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := checkWritable(t.Context(), db.writer); err != nil {
		t.Fatalf("a writable database fails the check: %v", err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	pool, err := sql.Open("sqlite", dsn(path, "FULL", roleWriter)+"&mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	err = checkWritable(t.Context(), pool)
	var se *sqlite.Error
	if !errors.As(err, &se) || se.Code()&0xff != sqlite3.SQLITE_READONLY {
		t.Fatalf("a read-only database: %v, want SQLITE_READONLY", err)
	}
}

// TestOpenAnyFileName: a database whose file name holds characters a URI
// gives a meaning to opens that very file, for the writer and the readers.
func TestOpenAnyFileName(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "a?b#c%41 d.db")
	db, err := Open(context.Background(), path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.Write(context.Background(), func(tx *Tx) error {
		_, err := tx.Exec(context.Background(), `CREATE TABLE t (x)`)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if err := db.Read(context.Background(), func(tx *Tx) error {
		return tx.QueryRow(context.Background(), `SELECT count(*) FROM t`).Scan(new(int))
	}); err != nil {
		t.Fatalf("a reader does not see the writer's file: %v", err)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(entries, func(e os.DirEntry) bool { return e.Name() == filepath.Base(path) }) {
		t.Fatalf("no file %q in %v", filepath.Base(path), entries)
	}
}
