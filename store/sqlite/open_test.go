package sqlite

import (
	"context"
	"database/sql"
	"path/filepath"
	"testing"

	"github.com/lancens/lancens/store"
)

// TestWriteCheckReadOnly opens a database the way SQLite opens a file it
// may not write (read-only, mode=ro: chmod cannot make a file read-only for
// root, who runs the tests in CI) and checks that the start-up write check
// reports ServiceUnavailable (17), while a writable database passes it.
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
	err = openError(path, checkWritable(t.Context(), pool))
	if store.ErrorCode(err) != store.CodeServiceUnavailable {
		t.Fatalf("a read-only database: %v (code %v), want ServiceUnavailable", err, store.ErrorCode(err))
	}
}
