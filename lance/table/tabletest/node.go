// Package tabletest checks lance/table against Lance itself, in both
// directions, on any store: the LanceDB Node SDK writes datasets that Go
// must read exactly as the SDK reports them, and opens datasets Go wrote,
// reads, indexes and writes on top of them. lance/table runs it on local
// directories and objstore on S3 (the Versity gateway); the Node scripts
// are in node/lance/.
package tabletest

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/lancens/lancens/lance/blob"
)

// Dataset is where one test dataset lives, as Go and the SDK reach it.
type Dataset struct {
	// Store holds the dataset root's objects.
	Store blob.Store
	// DB is the database the SDK connects to (a directory or an s3://
	// URI) and Name the table, at DB/Name.lance.
	DB, Name string
	// Options are the storage options the SDK needs to reach DB.
	Options map[string]string
}

// URI returns the dataset root's location as Lance records it.
func (d Dataset) URI() string { return strings.TrimRight(d.DB, "/") + "/" + d.Name + ".lance" }

// NewDataset returns a fresh, empty place for a dataset.
type NewDataset func(t *testing.T) Dataset

// Local is a NewDataset in a temporary directory.
func Local(t *testing.T) Dataset {
	dir := t.TempDir()
	return Dataset{Store: blob.NewDir(filepath.Join(dir, "t.lance")), DB: dir, Name: "t", Options: map[string]string{}}
}

// nodeDir returns the Node project of the repository (node/), found from
// this file's place, whichever package's test runs it.
func nodeDir() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "..", "node")
}

// RunNode runs node/lance/<script> with args and returns what it printed.
// Without Node or the SDK installed the test is skipped, except under
// CI=true, where that is a failure (CI installs both: make node-deps).
func RunNode(t *testing.T, script string, args ...string) []byte {
	t.Helper()
	missing := func(why string) {
		if os.Getenv("CI") == "true" {
			t.Fatalf("the LanceDB Node SDK is needed under CI: %s", why)
		}
		t.Skipf("the LanceDB Node SDK is not available: %s", why)
	}
	node, err := exec.LookPath("node")
	if err != nil {
		missing("node is not installed")
	}
	dir := nodeDir()
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "@lancedb", "lancedb", "package.json")); err != nil {
		missing("run make node-deps")
	}
	cmd := exec.Command(node, append([]string{filepath.Join("lance", script)}, args...)...)
	cmd.Dir = dir
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("node %s %v: %v\n%s", script, args, err, stderr.Bytes())
	}
	return stdout.Bytes()
}

// runNodeJSON runs a script and decodes the JSON it printed into out.
func runNodeJSON(t *testing.T, out any, script string, args ...string) {
	t.Helper()
	raw := RunNode(t, script, args...)
	if err := json.Unmarshal(raw, out); err != nil {
		t.Fatalf("node %s printed %q: %v", script, raw, err)
	}
}

// mustJSON returns v as JSON, for script arguments.
func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// merged returns a copy of a with b's entries added.
func merged(a, b map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range a {
		out[k] = v
	}
	for k, v := range b {
		out[k] = v
	}
	return out
}
