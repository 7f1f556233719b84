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
	"strings"
	"testing"
	"time"

	"github.com/lancens/lancens/auth"
	"github.com/lancens/lancens/internal/testkit/apitest"
	"github.com/lancens/lancens/internal/testkit/authtest"
	"github.com/lancens/lancens/server"
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

// TestExamples builds every example and runs it against a server that
// needs credentials: once with an API key (LANCENS_API_KEY), once with a
// bearer token (LANCENS_TOKEN). One run without either must fail with
// Unauthenticated (16), so the runs that pass show that the examples send
// what they are given.
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
	const key = "example-key"
	signer := authtest.NewRSAKey(t, "k1")
	jwks := authtest.ServeJWKS(t, signer)
	s := apitest.Start(t, apitest.Options{APIKeys: []string{key}, Tune: func(c *server.Config) {
		c.Auth = &auth.Config{JWT: &auth.JWTConfig{JWKSURL: jwks.URL, Issuer: authtest.Issuer, Audience: authtest.Audience, RoleClaim: "role"}}
	}})
	token := authtest.Mint(t, signer, authtest.Claims("examples"), map[string]any{"role": "admin"})
	run := func(t *testing.T, dir string, env ...string) ([]byte, error) {
		cmd := exec.CommandContext(t.Context(), filepath.Join(bin, dir))
		cmd.Env = append(os.Environ(), "LANCENS_URL="+s.URL, "LANCENS_API_KEY=", "LANCENS_TOKEN=")
		cmd.Env = append(cmd.Env, env...)
		cmd.Dir = t.TempDir() // for the files an example writes
		return cmd.CombinedOutput()
	}
	for _, creds := range []struct{ name, env string }{{"APIKey", "LANCENS_API_KEY=" + key}, {"Token", "LANCENS_TOKEN=" + token}} {
		for _, d := range dirs {
			t.Run(creds.name+"/"+d, func(t *testing.T) {
				start := time.Now()
				out, err := run(t, d, creds.env)
				if err != nil {
					t.Fatalf("%s failed: %v\n%s", d, err, out)
				}
				t.Logf("%s ran in %v:\n%s", d, time.Since(start).Round(time.Millisecond), out)
			})
		}
	}
	t.Run("NoCredentials", func(t *testing.T) {
		out, err := run(t, "catalog")
		if err == nil || !strings.Contains(string(out), "Unauthenticated") {
			t.Fatalf("catalog without credentials: %v\n%s\nwant a failure with Unauthenticated (16)", err, out)
		}
	})
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
