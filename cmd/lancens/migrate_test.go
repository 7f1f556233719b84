package main

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lancens/lancens/internal/testkit/apitest"
)

// fixtureDB is a database made by the row store of lancens f365447 (see
// store/sqlite/legacy/convert/testdata/f365447): six managed tables, one
// of which (fx$mapped, a map column) Lance cannot store.
const fixtureDB = "../../store/sqlite/legacy/convert/testdata/f365447/fixture.db"

// copyFixture copies the fixture database into a new directory and
// returns the database's path there.
func copyFixture(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(fixtureDB)
	if err != nil {
		t.Fatal(err)
	}
	db := filepath.Join(t.TempDir(), "lancens.db")
	if err := os.WriteFile(db, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return db
}

// lockedBuffer is a buffer the server's logger and the test share.
type lockedBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestMigrate runs `lancens migrate` on the fixture: it converts the
// tables it can, logs each with its speed, names the one it cannot and
// fails for it; a second run converts nothing more.
func TestMigrate(t *testing.T) {
	db := copyFixture(t)
	wh := filepath.Join(filepath.Dir(db), "wh")
	noEnv := func(string) string { return "" }
	// The second run takes its configuration as the server does, from the
	// environment.
	serverEnv := map[string]string{"LANCENS_DB": db, "LANCENS_WAREHOUSE": wh}
	runs := []struct {
		args   []string
		getenv func(string) string
	}{
		{[]string{"migrate", "--db", db, "--warehouse", wh}, noEnv},
		{[]string{"migrate"}, func(k string) string { return serverEnv[k] }},
	}
	for run1, wantConverted := range []string{"converted 5 tables", "converted 0 tables"} {
		var stdout, stderr strings.Builder
		err := run(t.Context(), runs[run1].args, runs[run1].getenv, &stdout, &stderr)
		if err == nil || !strings.Contains(err.Error(), "fx$mapped") || !strings.Contains(err.Error(), "map") {
			t.Errorf("run %d: %v, want the map column of fx$mapped named", run1+1, err)
		}
		if !strings.Contains(stdout.String(), wantConverted) {
			t.Errorf("run %d printed %q, want %q", run1+1, stdout.String(), wantConverted)
		}
		if run1 == 0 && (!strings.Contains(stderr.String(), "table converted into a Lance dataset") || !strings.Contains(stderr.String(), "rows_per_second=")) {
			t.Errorf("run 1 logged %q, want a line per table with its speed", stderr.String())
		}
	}
	entries, err := os.ReadDir(filepath.Join(wh, "fx"))
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 4 {
		t.Errorf("the warehouse's fx holds %d datasets, want 4 (docs, docs_view, types, empty)", len(entries))
	}

	// Nothing to migrate on PostgreSQL; a database that is not there is
	// not created.
	missing := filepath.Join(t.TempDir(), "missing.db")
	for _, args := range [][]string{{"migrate", "--db", "postgres://u@localhost/db"}, {"migrate", "--db", missing}, {"migrate", "extra"},
		{"migrate", "--no-such-flag"}} {
		if err := run(t.Context(), args, noEnv, io.Discard, io.Discard); err == nil {
			t.Errorf("run(%q) succeeded", args)
		}
	}
	if _, err := os.Stat(missing); !os.IsNotExist(err) {
		t.Errorf("migrate created %s", missing)
	}
	var help strings.Builder
	if err := run(t.Context(), []string{"migrate", "-h"}, noEnv, &help, io.Discard); err != nil || !strings.Contains(help.String(), "lancens migrate") {
		t.Errorf("migrate -h: %v, printed %q", err, help.String())
	}
}

// TestServeConvertsAtStart starts `lancens serve` on the
// fixture: it converts the managed tables before it serves, and then
// answers for them.
func TestServeConvertsAtStart(t *testing.T) {
	db := copyFixture(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stdout, w := io.Pipe()
	logs := &lockedBuffer{}
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"serve", "--addr", "127.0.0.1:0", "--db", db,
			"--warehouse", filepath.Join(filepath.Dir(db), "wh")}, func(string) string { return "" }, w, logs)
		w.Close()
	}()
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		t.Fatalf("no startup line: %v (log: %s)", err, logs)
	}
	url := regexp.MustCompile(`http://\S+`).FindString(line)
	go io.Copy(io.Discard, stdout)
	if !strings.Contains(logs.String(), "managed tables converted into Lance datasets") || !strings.Contains(logs.String(), "not_converted=1") {
		t.Errorf("the start-up log does not report the conversion: %s", logs)
	}

	v := apitest.NewValidator(t)
	for _, tc := range []struct {
		table, body string
		status      int
		want        string
	}{
		{"fx$docs", `{"version": 13}`, 200, "129"},
		{"fx$docs", `{"version": 5, "predicate": "id >= 200"}`, 200, "10"},
		{"plain", `{}`, 200, "56"},
		{"fx$mapped", `{}`, 409, `"code":19`},
	} {
		req, err := http.NewRequest("POST", url+"/v1/table/"+tc.table+"/count_rows", strings.NewReader(tc.body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if err := v.Check(req, res.StatusCode, res.Header, body); err != nil {
			t.Errorf("%s %s: %v", tc.table, tc.body, err)
		}
		if res.StatusCode != tc.status || !strings.Contains(string(body), tc.want) {
			t.Errorf("count_rows of %s %s: %d %s, want %d with %s", tc.table, tc.body, res.StatusCode, body, tc.status, tc.want)
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
