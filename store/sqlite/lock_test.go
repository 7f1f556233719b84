package sqlite_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

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

// TestOpenLockOtherProcess checks that a second process cannot open a
// database this one has open, and can once it is closed.
func TestOpenLockOtherProcess(t *testing.T) {
	path := filepath.Join(t.TempDir(), "lancens.db")
	openElsewhere := func() (int, string) {
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
	db := mustOpen(t, path)
	code, out := openElsewhere()
	if code != 1 || !strings.Contains(out, "pid "+strconv.Itoa(os.Getpid())) {
		t.Fatalf("second process: exit %d, output %q; want a refusal naming pid %d", code, out, os.Getpid())
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if code, out := openElsewhere(); code != 0 {
		t.Fatalf("second process after close: exit %d, output %q", code, out)
	}
	// And the other process released it when it exited.
	mustOpen(t, path).Close()
}
