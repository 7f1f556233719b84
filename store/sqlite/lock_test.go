package sqlite_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/lancens/lancens/store"
	"github.com/lancens/lancens/store/sqlite"
)

// openHelperEnv, when set, makes the test binary open the database it names
// and exit instead of running tests: 0 when Open succeeded, 1 when it
// failed (the error on stderr). TestOpenLockOtherProcess runs it.
const openHelperEnv = "LANCENS_TEST_OPEN_DB"

func TestMain(m *testing.M) {
	if path := os.Getenv(openHelperEnv); path != "" {
		db, err := sqlite.Open(context.Background(), path, sqlite.Options{})
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		db.Close()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// TestOpenLock checks that a database open in this process cannot be
// opened a second time until it is closed, and that the refusal names the
// holder.
func TestOpenLock(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "lancens.db")
	db := mustOpen(t, path)
	_, err := sqlite.Open(context.Background(), path, sqlite.Options{})
	if err == nil {
		t.Fatal("opened a database that is already open")
	}
	if !strings.Contains(err.Error(), "pid "+strconv.Itoa(os.Getpid())) {
		t.Fatalf("refusal does not name the holder: %v", err)
	}
	// Another database beside it is independent.
	other := mustOpen(t, filepath.Join(dir, "other.db"))
	other.Close()
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	db = mustOpen(t, path)
	db.Close()
}

// openElsewhere opens the database at path in another process (the test
// binary as a helper, see TestMain) and returns its exit code and output.
func openElsewhere(t *testing.T, path string) (int, string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), openHelperEnv+"="+path)
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	switch {
	case err == nil:
		return 0, string(out)
	case errors.As(err, &exit):
		return exit.ExitCode(), string(out)
	}
	t.Fatalf("run helper process: %v", err)
	return 0, ""
}

// TestOpenLockOtherNames checks that a database open under one name cannot
// be opened under another name of the same file — a symbolic link to it or
// to its directory, a hard link, a path spelt with "." or ".." — in this
// process or another, and that the refusal names the holder's pid. The
// database is opened first by its plain path, and also first by the other
// name; once closed, the other name opens it.
func TestOpenLockOtherNames(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("hard links are caught on Linux only") // see lock_identity_other.go
	}
	for _, tc := range []struct {
		name string
		// alias makes another name of the database at path (in dir).
		alias func(t *testing.T, dir, path string) string
	}{
		{"SymlinkToFile", func(t *testing.T, dir, path string) string {
			link := filepath.Join(t.TempDir(), "link.db")
			if err := os.Symlink(path, link); err != nil {
				t.Fatal(err)
			}
			return link
		}},
		{"SymlinkToDirectory", func(t *testing.T, dir, path string) string {
			link := filepath.Join(t.TempDir(), "dirlink")
			if err := os.Symlink(dir, link); err != nil {
				t.Fatal(err)
			}
			return filepath.Join(link, filepath.Base(path))
		}},
		{"HardLink", func(t *testing.T, dir, path string) string {
			link := filepath.Join(t.TempDir(), "hard.db")
			if err := os.Link(path, link); err != nil {
				t.Fatal(err)
			}
			return link
		}},
		{"DotSpelling", func(t *testing.T, dir, path string) string {
			return dir + "/./" + filepath.Base(path)
		}},
		{"DotDotSpelling", func(t *testing.T, dir, path string) string {
			return dir + "/../" + filepath.Base(dir) + "/" + filepath.Base(path)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "lancens.db")
			mustOpen(t, path).Close() // the file exists: a hard link needs it
			alias := tc.alias(t, dir, path)
			for _, names := range [][2]string{{path, alias}, {alias, path}} {
				first, second := names[0], names[1]
				db := mustOpen(t, first)
				_, err := sqlite.Open(context.Background(), second, sqlite.Options{})
				if err == nil || !strings.Contains(err.Error(), "pid "+strconv.Itoa(os.Getpid())) {
					t.Fatalf("open %s while %s is open in this process: %v; want a refusal naming pid %d", second, first, err, os.Getpid())
				}
				code, out := openElsewhere(t, second)
				if code != 1 || !strings.Contains(out, "pid "+strconv.Itoa(os.Getpid())) {
					t.Fatalf("open %s in another process while %s is open: exit %d, %q; want a refusal naming pid %d", second, first, code, out, os.Getpid())
				}
				// The refused opens left the first DB whole.
				if _, err := db.CreateNamespace(context.Background(), []string{"after"}, store.ModeExistOk, nil); err != nil {
					t.Fatal(err)
				}
				if err := db.Close(); err != nil {
					t.Fatal(err)
				}
				if code, out := openElsewhere(t, second); code != 0 {
					t.Fatalf("open %s in another process after close: exit %d, %q", second, code, out)
				}
				mustOpen(t, second).Close()
			}
		})
	}
}

// TestOpenLockOtherProcess checks that a second process cannot open a
// database this one has open, and can once it is closed.
func TestOpenLockOtherProcess(t *testing.T) {
	path := filepath.Join(t.TempDir(), "lancens.db")
	db := mustOpen(t, path)
	code, out := openElsewhere(t, path)
	if code != 1 || !strings.Contains(out, "pid "+strconv.Itoa(os.Getpid())) {
		t.Fatalf("second process: exit %d, output %q; want a refusal naming pid %d", code, out, os.Getpid())
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if code, out := openElsewhere(t, path); code != 0 {
		t.Fatalf("second process after close: exit %d, output %q", code, out)
	}
	// And the other process released it when it exited.
	mustOpen(t, path).Close()
}
