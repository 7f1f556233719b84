// Package examples holds runnable programs that use the Go client, one per
// directory. This test builds each and runs it against a lancens test
// server, so that they keep working.
package examples

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/lancens/lancens/internal/apitest"
)

// programs returns the directories holding a main.go. It reads each file,
// so that go test's cache sees edits to the examples.
func programs(t *testing.T) []string {
	t.Helper()
	entries, err := os.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	var dirs []string
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		files, err := filepath.Glob(filepath.Join(e.Name(), "*.go"))
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range files {
			if _, err := os.ReadFile(f); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := os.Stat(filepath.Join(e.Name(), "main.go")); err == nil {
			dirs = append(dirs, e.Name())
		}
	}
	return dirs
}

func TestExamples(t *testing.T) {
	dirs := programs(t)
	if len(dirs) < 5 {
		t.Fatalf("found the examples %v, expected at least 5", dirs)
	}
	bin := t.TempDir()
	args := []string{"build", "-o", bin + string(filepath.Separator)}
	for _, d := range dirs {
		args = append(args, "./"+d)
	}
	build := exec.CommandContext(t.Context(), filepath.Join(runtime.GOROOT(), "bin", "go"), args...)
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	s := apitest.Start(t, apitest.Options{})
	for _, d := range dirs {
		t.Run(d, func(t *testing.T) {
			start := time.Now()
			cmd := exec.CommandContext(t.Context(), filepath.Join(bin, d))
			cmd.Env = append(os.Environ(), "LANCENS_URL="+s.URL)
			cmd.Dir = t.TempDir() // for the files an example writes
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("%s failed: %v\n%s", d, err, out)
			}
			t.Logf("%s ran in %v:\n%s", d, time.Since(start).Round(time.Millisecond), out)
		})
	}
}

// TestCurlWalkthrough makes docs.arrow with examples/arrowfile and sends
// the requests of the README's curl walkthrough: load the table from it,
// read it as JSON, filter it, search it.
func TestCurlWalkthrough(t *testing.T) {
	dir := t.TempDir()
	run := exec.CommandContext(t.Context(), filepath.Join(runtime.GOROOT(), "bin", "go"), "run", "./arrowfile", filepath.Join(dir, "docs.arrow"))
	if out, err := run.CombinedOutput(); err != nil {
		t.Fatalf("go run ./arrowfile: %v\n%s", err, out)
	}
	file, err := os.ReadFile(filepath.Join(dir, "docs.arrow"))
	if err != nil {
		t.Fatal(err)
	}
	s := apitest.Start(t, apitest.Options{})
	post := func(path, contentType, accept string, body []byte) []byte {
		t.Helper()
		req, err := http.NewRequest(http.MethodPost, s.URL+path, bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", contentType)
		if accept != "" {
			req.Header.Set("Accept", accept)
		}
		res, err := s.HTTP.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		out, _ := io.ReadAll(res.Body)
		if res.StatusCode != http.StatusOK {
			t.Fatalf("POST %s: %d %s", path, res.StatusCode, out)
		}
		return out
	}
	post("/v1/table/docs/create", "application/vnd.apache.arrow.stream", "", file)
	ids := func(body string) string {
		t.Helper()
		var rows []struct {
			ID int64 `json:"id"`
		}
		if err := json.Unmarshal(post("/v1/table/docs/query", "application/json", "application/json", []byte(body)), &rows); err != nil {
			t.Fatal(err)
		}
		out := fmt.Sprint(len(rows), ":")
		for _, r := range rows {
			out += fmt.Sprint(" ", r.ID)
		}
		return out
	}
	for body, want := range map[string]string{
		`{}`:                               "5: 1 2 3 4 5",
		`{"filter": "text LIKE '%dogs%'"}`: "2: 2 4",
		`{"vector": {"single_vector": [1, 0, 0]}, "k": 2}`: "2: 1 3",
	} {
		if got := ids(body); got != want {
			t.Errorf("query %s: rows %s, want %s", body, got, want)
		}
	}
}
