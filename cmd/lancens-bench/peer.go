package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/ipc"
)

// nodeDir is the Node project holding the LanceDB peer (node/bench.mjs).
var nodeDir = "node"

// lancedb runs one workload of node/bench.mjs on LanceDB embedded and
// decodes its JSON answer into out.
func lancedb(workload string, args map[string]any, out any) error {
	raw, err := json.Marshal(args)
	if err != nil {
		return err
	}
	cmd := exec.Command("node", "bench.mjs", workload, string(raw))
	cmd.Dir = nodeDir
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("lancedb %s: %w\n%s", workload, err, stderr.String())
	}
	if err := json.Unmarshal(stdout.Bytes(), out); err != nil {
		return fmt.Errorf("lancedb %s: bad output %q: %w", workload, stdout.String(), err)
	}
	return nil
}

// msLatencies converts the peer's millisecond timings.
func msLatencies(ms []float64) latencies {
	out := make(latencies, len(ms))
	for i, m := range ms {
		out[i] = time.Duration(m * float64(time.Millisecond))
	}
	return out
}

// writeIPC writes batches as an Arrow IPC stream file the peer can read, and
// returns its size in bytes.
func writeIPC(path string, schema *arrow.Schema, batches []arrow.RecordBatch) (int64, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return 0, err
	}
	f, err := os.Create(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	w := ipc.NewWriter(f, ipc.WithSchema(schema))
	for _, b := range batches {
		if err := w.Write(b); err != nil {
			return 0, err
		}
	}
	if err := w.Close(); err != nil {
		return 0, err
	}
	info, err := f.Stat()
	if err != nil {
		return 0, err
	}
	return info.Size(), nil
}
