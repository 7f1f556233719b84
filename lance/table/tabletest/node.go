package table

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// nodeDir is the Node project holding the LanceDB SDK and the scripts of
// node/lance that write and check datasets.
const nodeDir = "../../node"

// runNode runs node/lance/<script> with args and returns what it printed.
// Without Node or the SDK installed the test is skipped, except under
// CI=true, where that is a failure (CI installs both: make node-deps).
func runNode(t *testing.T, script string, args ...string) []byte {
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
	if _, err := os.Stat(filepath.Join(nodeDir, "node_modules", "@lancedb", "lancedb", "package.json")); err != nil {
		missing("run make node-deps")
	}
	cmd := exec.Command(node, append([]string{filepath.Join("lance", script)}, args...)...)
	cmd.Dir = nodeDir
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
	raw := runNode(t, script, args...)
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
