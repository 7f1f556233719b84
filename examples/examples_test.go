// Package examples holds runnable programs that use the Go client, one per
// directory. This test builds each and runs it against a lancens test
// server, so that they keep working.
package examples

import (
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
	if len(dirs) < 4 {
		t.Fatalf("found the examples %v, expected at least 4", dirs)
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
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("%s failed: %v\n%s", d, err, out)
			}
			t.Logf("%s ran in %v:\n%s", d, time.Since(start).Round(time.Millisecond), out)
		})
	}
}
