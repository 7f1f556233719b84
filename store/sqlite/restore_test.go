package sqlite_test

import (
	"bytes"
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/lancens/lancens/store"
	"github.com/lancens/lancens/store/sqlite"
)

// backupWith makes a database holding the namespaces names, backs it up
// and returns the backup's path (the database is closed).
func backupWith(t *testing.T, names ...string) string {
	t.Helper()
	dir := t.TempDir()
	db := mustOpen(t, filepath.Join(dir, "src.db"))
	for _, n := range names {
		if _, err := db.CreateNamespace(t.Context(), []string{n}, store.ModeCreate, nil); err != nil {
			t.Fatal(err)
		}
	}
	backup := filepath.Join(dir, "backup.db")
	if _, err := sqlite.Backup(t.Context(), filepath.Join(dir, "src.db"), backup); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	return backup
}

// namespaces opens the database at path and lists its top-level
// namespaces.
func namespaces(t *testing.T, path string) []string {
	t.Helper()
	db := mustOpen(t, path)
	defer db.Close()
	names, _, err := db.ListNamespaces(t.Context(), nil, store.Page{})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(names)
	return names
}

// TestRestore restores a backup to a new file and over an existing
// database (with Force), whose leftover write-ahead log must not be
// replayed into the restored one.
func TestRestore(t *testing.T) {
	backup := backupWith(t, "a", "b")
	dir := t.TempDir()

	fresh := filepath.Join(dir, "new", "lancens.db")
	res, err := sqlite.Restore(t.Context(), backup, fresh, sqlite.RestoreOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Bytes == 0 || res.Migrations == 0 || res.Pending != 0 {
		t.Fatalf("result %+v", res)
	}
	if got := namespaces(t, fresh); !slices.Equal(got, []string{"a", "b"}) {
		t.Fatalf("restored namespaces %q", got)
	}

	// A database with commits still in its write-ahead log (a copy of the
	// files of an open database: what a crash leaves).
	live := filepath.Join(dir, "live.db")
	db := mustOpen(t, live)
	if _, err := db.CreateNamespace(t.Context(), []string{"c"}, store.ModeCreate, nil); err != nil {
		t.Fatal(err)
	}
	old := filepath.Join(dir, "old.db")
	for _, suffix := range []string{"", "-wal"} {
		b, err := os.ReadFile(live + suffix)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(old+suffix, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	db.Close()
	if _, err := os.Stat(old + "-wal"); err != nil {
		t.Fatal(err)
	}
	if _, err := sqlite.Restore(t.Context(), backup, old, sqlite.RestoreOptions{}); err == nil {
		t.Fatal("replaced an existing database without Force")
	}
	if _, err := sqlite.Restore(t.Context(), backup, old, sqlite.RestoreOptions{Force: true}); err != nil {
		t.Fatal(err)
	}
	if got := namespaces(t, old); !slices.Equal(got, []string{"a", "b"}) {
		t.Fatalf("restored over a database: namespaces %q, want the backup's", got)
	}
}

// TestRestoreRefuses checks each refusal, and that a refusal changes
// nothing at the destination.
func TestRestoreRefuses(t *testing.T) {
	good := backupWith(t, "a")
	dir := t.TempDir()

	damaged := filepath.Join(dir, "damaged.db")
	b, err := os.ReadFile(good)
	if err != nil {
		t.Fatal(err)
	}
	// Zero every page after the first two, keeping the header: the schema
	// still reads, the tables' pages do not.
	if len(b) < 4*4096 {
		t.Fatalf("backup of %d bytes is too small to damage", len(b))
	}
	damagedBytes := slices.Clone(b)
	for i := 2 * 4096; i < len(damagedBytes); i++ {
		damagedBytes[i] = 0xA5
	}
	write(t, damaged, damagedBytes)

	notLancens := filepath.Join(dir, "other.db")
	other, err := sql.Open("sqlite", notLancens)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := other.Exec(`CREATE TABLE t (x)`); err != nil {
		t.Fatal(err)
	}
	other.Close()

	newer := filepath.Join(dir, "newer.db")
	write(t, newer, b)
	future, err := sql.Open("sqlite", newer)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := future.Exec(`INSERT INTO schema_migrations (name, applied_at) VALUES ('migrations/9999_future.sql', 0)`); err != nil {
		t.Fatal(err)
	}
	future.Close()

	text := filepath.Join(dir, "notes.txt")
	write(t, text, []byte("not a database at all, just some words in a file that is long enough"))

	inUse := filepath.Join(dir, "in-use.db")
	open := mustOpen(t, inUse)
	defer open.Close()

	existing := filepath.Join(dir, "existing.db")
	write(t, existing, b)

	for _, tc := range []struct {
		name, from, to string
		force          bool
		want           string
	}{
		{"Missing", filepath.Join(dir, "none.db"), filepath.Join(dir, "t1.db"), false, "no such file"},
		{"Damaged", damaged, filepath.Join(dir, "t2.db"), false, ""},
		{"NotLancens", notLancens, filepath.Join(dir, "t3.db"), false, "not a lancens database"},
		{"Newer", newer, filepath.Join(dir, "t4.db"), false, "9999_future.sql"},
		{"NotADatabase", text, filepath.Join(dir, "t5.db"), false, ""},
		{"InUse", good, inUse, true, "in use"},
		{"ExistsWithoutForce", good, existing, false, "--force"},
		{"Itself", existing, existing, true, "the database itself"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before, _ := os.ReadFile(tc.to)
			_, err := sqlite.Restore(context.Background(), tc.from, tc.to, sqlite.RestoreOptions{Force: tc.force})
			if err == nil {
				t.Fatal("restored")
			}
			t.Log(err)
			if !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %q, want it to contain %q", err, tc.want)
			}
			after, _ := os.ReadFile(tc.to)
			if !bytes.Equal(before, after) {
				t.Fatal("a refused restore changed the destination")
			}
			if leftovers, _ := filepath.Glob(filepath.Join(dir, ".*restore")); len(leftovers) > 0 {
				t.Fatalf("left %q behind", leftovers)
			}
		})
	}
	// The database in use still works.
	if _, err := open.CreateNamespace(t.Context(), []string{"still"}, store.ModeCreate, nil); err != nil {
		t.Fatal(err)
	}
}

func write(t *testing.T, path string, b []byte) {
	t.Helper()
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}
