package main

import (
	"context"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/lancens/lancens/client"
)

// TestBackupRestoreVerify follows the README's backup section: a server
// runs, lancens backup copies its database, the server goes on writing,
// then stops; lancens restore puts the backup back (refused while the
// server runs, and without --force), and a server started on the restored
// database answers what was there at the backup and nothing after.
func TestBackupRestoreVerify(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "lancens.db")
	backupFile := filepath.Join(dir, "backup.db")
	noEnv := func(string) string { return "" }
	createNS := func(addr string, names ...string) {
		t.Helper()
		c, err := client.New("http://" + addr)
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range names {
			if _, err := c.CreateNamespace(context.Background(), []string{n}, nil); err != nil {
				t.Fatal(err)
			}
		}
	}
	listNS := func(addr string) []string {
		t.Helper()
		c, err := client.New("http://" + addr)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for n, err := range c.ListNamespaces(context.Background(), nil) {
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, n)
		}
		slices.Sort(out)
		return out
	}

	addr, stop := startServe(t, "--db", db)
	createNS(addr, "before1", "before2")
	var out strings.Builder
	if err := run(t.Context(), []string{"backup", "--db", db, "--out", backupFile}, noEnv, &out, io.Discard); err != nil {
		t.Fatal(err)
	}
	createNS(addr, "after")

	// Not while the server has the database open, even with --force.
	err := run(t.Context(), []string{"restore", "--from", backupFile, "--db", db, "--force"}, noEnv, io.Discard, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "in use") {
		t.Fatalf("restore under a running server: %v", err)
	}
	if _, err := stop(); err != nil {
		t.Fatal(err)
	}
	if err := run(t.Context(), []string{"restore", "--from", backupFile, "--db", db}, noEnv, io.Discard, io.Discard); err == nil {
		t.Fatal("restored over an existing database without --force")
	}
	out.Reset()
	if err := run(t.Context(), []string{"restore", "--from", backupFile, "--db", db, "--force"}, noEnv, &out, io.Discard); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(out.String(), "restored "+backupFile) {
		t.Fatalf("restore printed %q", out.String())
	}

	addr, _ = startServe(t, "--db", db)
	if got, want := listNS(addr), []string{"before1", "before2"}; !slices.Equal(got, want) {
		t.Fatalf("namespaces after restore %q, want %q", got, want)
	}
}

func TestRestoreUsage(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string // in the error; "" for a usage error
	}{
		{[]string{"restore"}, ""},
		{[]string{"restore", "--from", "x.db", "extra"}, ""},
		{[]string{"restore", "--from", "x.db", "--db", "postgres://u:secret@h/db"}, "pg_restore"},
	} {
		var stderr strings.Builder
		err := run(t.Context(), tc.args, func(string) string { return "" }, io.Discard, &stderr)
		if err == nil {
			t.Fatalf("%q: no error", tc.args)
		}
		if tc.want == "" && err != errUsage || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "secret") {
			t.Fatalf("%q: %v", tc.args, err)
		}
	}
}
