package main

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/lancens/lancens/internal/testkit/pgtest"
)

// TestMain lets the test binary stand in for lancens itself: the crash
// trials and replica tests run it as `lancens serve` (crashChildEnv), and
// TestServeReadOnly as another user (helperEnv). Otherwise it runs the
// tests, then stops the PostgreSQL cluster they started, if any.
func TestMain(m *testing.M) {
	switch {
	case os.Getenv(crashChildEnv) == "1":
		main()
		os.Exit(0)
	case os.Getenv(helperEnv) != "":
		serveHelper(os.Getenv(helperEnv))
		return
	}
	pgtest.Main(m)
}

// TestServe starts the real command on a free port, checks that it serves,
// then cancels it and checks that it shuts down cleanly.
func TestServe(t *testing.T) {
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stdout, w := io.Pipe()
	env := map[string]string{"LANCENS_API_KEYS": "secret"}
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"serve", "--addr", "127.0.0.1:0", "--db", filepath.Join(dir, "db", "lancens.db"),
			"--warehouse", filepath.Join(dir, "wh")}, func(k string) string { return env[k] }, w, io.Discard)
		w.Close()
	}()
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		t.Fatalf("no startup line: %v", err)
	}
	url := regexp.MustCompile(`http://\S+`).FindString(line)
	if url == "" {
		t.Fatalf("startup line %q has no address", line)
	}
	go io.Copy(io.Discard, stdout)

	for _, tc := range []struct {
		key  string
		want int
	}{{"", 401}, {"secret", 200}} {
		req, _ := http.NewRequest("GET", url+"/v1/namespace/$/list", nil)
		if tc.key != "" {
			req.Header.Set("x-api-key", tc.key)
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != tc.want {
			t.Fatalf("key %q: status %d, want %d", tc.key, res.StatusCode, tc.want)
		}
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("serve returned %v after cancel", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("serve did not stop")
	}
}

func TestUsage(t *testing.T) {
	for _, tc := range []struct {
		args    []string
		wantErr bool
	}{
		{nil, true},
		{[]string{"help"}, false},
		{[]string{"bogus"}, true},
		{[]string{"serve", "--no-such-flag"}, true},
		{[]string{"serve", "extra-arg"}, true},
		{[]string{"serve", "--log-level", "loud"}, true},
		{[]string{"serve", "--cache-mb", "0"}, true},
		{[]string{"serve", "--cache-mb", "lots"}, true},
	} {
		var out strings.Builder
		err := run(context.Background(), tc.args, func(string) string { return "" }, &out, &out)
		if (err != nil) != tc.wantErr {
			t.Errorf("run(%q) = %v, want error: %v", tc.args, err, tc.wantErr)
		}
	}
}

func TestExternalRootFlags(t *testing.T) {
	env := map[string]string{"LANCENS_EXTERNAL_ROOTS": "/data/a, s3://lake/x,"}
	cfg, err := parseServeFlags([]string{"--external-root", "/data/b", "--external-root", "gs://g"}, func(k string) string { return env[k] }, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"/data/a", "s3://lake/x", "/data/b", "gs://g"}; !slices.Equal(cfg.externalRoots, want) {
		t.Fatalf("external roots %q, want %q", cfg.externalRoots, want)
	}
	if _, err := parseServeFlags([]string{"--external-root", ""}, func(string) string { return "" }, io.Discard); err == nil {
		t.Fatal("accepted an empty external root")
	}
	// A root that does not exist stops the server at start.
	dir := t.TempDir()
	err = run(t.Context(), []string{"serve", "--addr", "127.0.0.1:0", "--db", filepath.Join(dir, "lancens.db"),
		"--warehouse", filepath.Join(dir, "wh"), "--external-root", filepath.Join(dir, "missing")}, func(string) string { return "" }, io.Discard, io.Discard)
	if err == nil {
		t.Fatal("served with a missing external root")
	}
}

// TestSecondServerRefused starts a server, then a second one on the same
// database: the second fails at once, naming the first's pid, so two
// servers can never race commits on one database.
func TestSecondServerRefused(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "lancens.db")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stdout, w := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"serve", "--addr", "127.0.0.1:0", "--db", db, "--warehouse", filepath.Join(dir, "wh")},
			testEnv, w, io.Discard)
		w.Close()
	}()
	if _, err := bufio.NewReader(stdout).ReadString('\n'); err != nil {
		t.Fatalf("no startup line: %v", err)
	}
	go io.Copy(io.Discard, stdout)

	// The same path, a symbolic link to the file and (on Linux) a hard
	// link are all the same database.
	names := []string{db, filepath.Join(t.TempDir(), "symlink.db")}
	if err := os.Symlink(db, names[1]); err != nil {
		t.Fatal(err)
	}
	if runtime.GOOS == "linux" {
		names = append(names, filepath.Join(t.TempDir(), "hardlink.db"))
		if err := os.Link(db, names[2]); err != nil {
			t.Fatal(err)
		}
	}
	for _, name := range names {
		err := run(t.Context(), []string{"serve", "--addr", "127.0.0.1:0", "--db", name, "--warehouse", filepath.Join(dir, "wh2")},
			func(string) string { return "" }, io.Discard, io.Discard)
		if err == nil || !strings.Contains(err.Error(), "pid "+strconv.Itoa(os.Getpid())) {
			t.Fatalf("second server on one database, as %s: %v; want a refusal naming pid %d", name, err, os.Getpid())
		}
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("first server: %v", err)
	}
}
