package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/lancens/lancens/client"
	"github.com/lancens/lancens/internal/arrowtest"
)

// The bombs of issue 24: bodies within every size limit whose decoding
// costs far more than they weigh. memoryBudget is the --decode-budget the
// server runs with; its peak RSS must stay under it plus memorySlack.
const (
	memoryBudget = 256 << 20
	memorySlack  = 256 << 20
)

// TestMemoryBombs starts a real `lancens serve` with a decode budget and
// fires at it, all at once: 8 of the audit's Arrow bombs (a 4.5 MB LZ4
// stream of 9M rows of fixed_size_list<float32>[29], 1.04 GB decoded) into
// a table of another schema, 8 into a table of the same schema, 2 bodies
// of 524,288 such rows in batches of 65,536 (the streaming path, which
// writes them), and, with a read key, 8 JSON filters of 30 MB (15M
// parentheses, or "1 1 1 ..."). The process must stay up; every bomb and filter gets
// 400, 413 or 503, and the batched bombs 200 (or 503); the peak RSS
// (VmHWM) stays under the budget plus 256 MiB, and RSS falls back within
// 30 s. On f365447 four such Arrow bombs took the process to 6.1 GiB.
func TestMemoryBombs(t *testing.T) {
	dir := t.TempDir()
	authPath := filepath.Join(dir, "auth.yaml")
	if err := os.WriteFile(authPath, []byte("keys:\n  - {name: admin, key: adm, role: admin}\n  - {name: reader, key: r1, role: read}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	srv := startServerProcess(t, filepath.Join(dir, "server.log"), "--db", filepath.Join(dir, "lancens.db"),
		"--warehouse", filepath.Join(dir, "warehouse"), "--auth-config", authPath,
		"--decode-budget", strconv.Itoa(memoryBudget), "--memory-limit", strconv.Itoa(memoryBudget+memorySlack/2), "--cache-mb", "16")
	defer srv.kill(t)
	pid := srv.cmd.Process.Pid

	hc := &http.Client{Timeout: 2 * time.Minute}
	admin, err := client.New(srv.url, client.WithHTTPClient(hc), client.WithAPIKey("adm"))
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	if _, err := admin.CreateTable(ctx, []string{"other"}, arrowtest.HostileSchema,
		[]arrow.RecordBatch{arrowtest.Record(t, arrowtest.HostileSchema, arrowtest.HostileRows)}, nil); err != nil {
		t.Fatal(err)
	}
	vec := arrowtest.ZeroVectors(1, 29)
	if _, err := admin.CreateTable(ctx, []string{"vectors"}, vec.Schema(), []arrow.RecordBatch{vec}, nil); err != nil {
		t.Fatal(err)
	}
	bomb := arrowtest.VectorBomb(t, 9_000_000, 29, 1)
	const batchedRows = 65_536 * 8
	batched := arrowtest.VectorBomb(t, 65_536, 29, batchedRows/65_536)
	parens := []byte(`{"predicate": "` + strings.Repeat("(", 30_000_000) + `"}`)
	ones := []byte(`{"predicate": "` + strings.Repeat("1 ", 15_000_000) + `"}`)

	// One batched bomb first, so that SQLite's page caches (64 MiB for the
	// writer) are as full before the bombs as after them: what is measured
	// is what decoding costs.
	warm, err := http.NewRequest(http.MethodPost, srv.url+"/v1/table/vectors/insert", bytes.NewReader(batched))
	if err != nil {
		t.Fatal(err)
	}
	warm.Header.Set("Content-Type", "application/vnd.apache.arrow.stream")
	warm.Header.Set("x-api-key", "adm")
	if res, err := hc.Do(warm); err != nil || res.StatusCode != http.StatusOK {
		t.Fatalf("warming up: %v %v", res, err)
	} else {
		res.Body.Close()
	}
	time.Sleep(time.Second) // for the memory it took to be returned
	baseline := procKiB(t, pid, "VmRSS")
	start := time.Now()
	type shot struct {
		name, path, key, contentType string
		body                         []byte
		ok                           []int
	}
	refused := []int{http.StatusBadRequest, http.StatusRequestEntityTooLarge, http.StatusServiceUnavailable}
	var shots []shot
	for i := range 8 {
		shots = append(shots,
			shot{"bomb into another schema", "/v1/table/other/insert", "adm", "application/vnd.apache.arrow.stream", bomb, refused},
			shot{"bomb into its schema", "/v1/table/vectors/insert", "adm", "application/vnd.apache.arrow.stream", bomb, refused},
			shot{"30 MB filter", "/v1/table/other/count_rows", "r1", "application/json", [][]byte{parens, ones}[i%2], refused})
	}
	for range 2 {
		shots = append(shots, shot{"batched bomb into its schema", "/v1/table/vectors/insert", "adm", "application/vnd.apache.arrow.stream",
			batched, []int{http.StatusOK, http.StatusServiceUnavailable}})
	}
	var wg sync.WaitGroup
	results := make([]string, len(shots))
	written := 0
	var mu sync.Mutex
	for i, sh := range shots {
		wg.Add(1)
		go func() {
			defer wg.Done()
			req, err := http.NewRequest(http.MethodPost, srv.url+sh.path, bytes.NewReader(sh.body))
			if err != nil {
				t.Error(err)
				return
			}
			req.Header.Set("Content-Type", sh.contentType)
			req.Header.Set("x-api-key", sh.key)
			res, err := hc.Do(req)
			if err != nil {
				t.Errorf("%s: %v (the server: %s)", sh.name, err, srv.logTail())
				return
			}
			defer res.Body.Close()
			var answer struct {
				Code  *int   `json:"code"`
				Error string `json:"error"`
			}
			_ = json.NewDecoder(res.Body).Decode(&answer)
			results[i] = fmt.Sprintf("%s: %d", sh.name, res.StatusCode)
			if !containsInt(sh.ok, res.StatusCode) || (res.StatusCode != http.StatusOK && answer.Code == nil) {
				t.Errorf("%s: %d %+v, want one of %v with an ErrorResponse", sh.name, res.StatusCode, answer, sh.ok)
			}
			if res.StatusCode == http.StatusServiceUnavailable && res.Header.Get("Retry-After") == "" {
				t.Errorf("%s: 503 without Retry-After", sh.name)
			}
			if res.StatusCode == http.StatusOK {
				mu.Lock()
				written++
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	peak := procKiB(t, pid, "VmHWM")
	t.Logf("%d requests in %s; RSS %d MiB before, peak %d MiB (limit %d MiB)", len(shots), elapsed.Round(time.Millisecond),
		baseline>>10, peak>>10, (memoryBudget+memorySlack)>>20)
	t.Logf("answers: %s", summarize(results))
	if peak<<10 > memoryBudget+memorySlack {
		t.Errorf("peak RSS %d MiB, more than the decode budget plus %d MiB", peak>>10, memorySlack>>20)
	}

	select {
	case <-srv.exited:
		t.Fatalf("the server exited during the bombs:\n%s", srv.logTail())
	default:
	}

	// Memory goes back: RSS falls to near where it started.
	settled := baseline + 64<<10
	deadline := time.Now().Add(30 * time.Second)
	rss := procKiB(t, pid, "VmRSS")
	for rss > settled && time.Now().Before(deadline) {
		time.Sleep(250 * time.Millisecond)
		rss = procKiB(t, pid, "VmRSS")
	}
	t.Logf("RSS %d MiB %s after the bombs", rss>>10, time.Since(start.Add(elapsed)).Round(time.Millisecond))
	if rss > settled {
		t.Errorf("RSS still %d MiB 30 s after the bombs (%d MiB before them)", rss>>10, baseline>>10)
		req, _ := http.NewRequest(http.MethodGet, srv.url+"/metrics", nil)
		req.Header.Set("x-api-key", "adm")
		if res, err := hc.Do(req); err == nil {
			b, _ := io.ReadAll(res.Body)
			res.Body.Close()
			for _, l := range strings.Split(string(b), "\n") {
				if strings.HasPrefix(l, "go_memstats") || strings.HasPrefix(l, "go_memory") || strings.HasPrefix(l, "process_") {
					t.Log(l)
				}
			}
		}
	}
	if peak := procKiB(t, pid, "VmHWM"); peak<<10 > memoryBudget+memorySlack {
		t.Errorf("peak RSS %d MiB, more than the decode budget plus %d MiB", peak>>10, memorySlack>>20)
	}

	n, err := admin.CountRows(ctx, []string{"vectors"}, "", nil)
	if err != nil || n != int64(1+(1+written)*batchedRows) {
		t.Fatalf("vectors holds %d rows (%v), want 1 + %d written bombs of %d", n, err, 1+written, batchedRows)
	}
	if n, err := admin.CountRows(ctx, []string{"other"}, "", nil); err != nil || n != 3 {
		t.Fatalf("other holds %d rows (%v), want its 3", n, err)
	}
}

// procKiB returns a figure of /proc/<pid>/status (VmRSS, VmHWM) in KiB,
// failing the test when it cannot be read.
func procKiB(t *testing.T, pid int, key string) int64 {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatalf("reading the server's memory: %v", err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, key+":"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			if err != nil {
				t.Fatalf("%s: %v", key, err)
			}
			return kb
		}
	}
	t.Fatalf("no %s in /proc/%d/status", key, pid)
	return 0
}

func containsInt(xs []int, x int) bool {
	for _, v := range xs {
		if v == x {
			return true
		}
	}
	return false
}

// summarize counts identical answers.
func summarize(results []string) string {
	counts := map[string]int{}
	var order []string
	for _, r := range results {
		if counts[r] == 0 {
			order = append(order, r)
		}
		counts[r]++
	}
	var parts []string
	for _, r := range order {
		parts = append(parts, fmt.Sprintf("%d× %s", counts[r], r))
	}
	return strings.Join(parts, "; ")
}
