package server_test

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/lancens/lancens/coord"
	"github.com/lancens/lancens/internal/testkit/apitest"
)

// lockedBuffer is a bytes.Buffer for a logger and a reader at once.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) records(t *testing.T) []map[string]any {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(l.b.String()), "\n") {
		var rec map[string]any
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("log line %q: %v", line, err)
		}
		out = append(out, rec)
	}
	return out
}

// TestJobProgress builds a vector index with progress reported every few
// milliseconds and checks the log (start, progress with rows done of a
// total, end with a duration) and the transaction, whose properties carry
// the last progress once the job is done.
func TestJobProgress(t *testing.T) {
	log := &lockedBuffer{}
	s := apitest.Start(t, apitest.Options{TuneServices: func(c *coord.ServicesConfig) {
		c.Logger = slog.New(slog.NewJSONHandler(log, nil))
		c.ProgressInterval = 2 * time.Millisecond
	}})
	schema, rec := vectorTable(clustered(5_000, 16, 16, 3), 0)
	if _, err := s.Client.CreateTable(t.Context(), []string{"v"}, schema, []arrow.RecordBatch{rec}, nil); err != nil {
		t.Fatal(err)
	}
	txID := startIndexBuild(t, s, "v", `{"column":"vector","index_type":"IVF_HNSW_SQ","num_partitions":4}`)
	defer func() {
		if t.Failed() {
			t.Logf("log:\n%s", log.b.String())
		}
	}()
	tx := waitTransaction(t, s.Client, txID)
	if tx.Status != "Succeeded" {
		t.Fatalf("build %+v", tx)
	}
	props := tx.Properties
	if props["progress_stage"] == "" || props["progress_rows"] != props["total_rows"] || props["total_rows"] != "5000" {
		t.Fatalf("transaction properties after the build: %v", props)
	}

	var started, progressed, finished bool
	for _, rec := range log.records(t) {
		if rec["transaction_id"] != txID {
			continue
		}
		switch rec["msg"] {
		case "job started":
			started = !progressed && !finished
		case "job progress":
			done, total := rec["done"].(float64), rec["total"].(float64)
			if done > total || total <= 0 || rec["stage"] == "" {
				t.Errorf("progress line %v", rec)
			}
			progressed = started
		case "job finished":
			if d, ok := rec["duration"].(float64); !ok || d <= 0 {
				t.Errorf("end line without a duration: %v", rec)
			}
			if rec["done"] != rec["total"] {
				t.Errorf("end line %v", rec)
			}
			finished = progressed
		}
	}
	if !started || !progressed || !finished {
		t.Fatalf("log of the job: started %v, progress %v, finished %v", started, progressed, finished)
	}
}
