package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/lancens/lancens/client"
	"github.com/lancens/lancens/internal/testkit/pgtest"
	"github.com/lancens/lancens/lance/manifestname"
	"github.com/lancens/lancens/warehouse"
)

// TestReplicasKilled runs two `lancens serve` processes on one PostgreSQL
// database (--db URL) and one warehouse directory. Writers commit versions
// of their own tables through both, turn about; each process in turn is
// killed with SIGKILL mid-way and started again. A writer whose request
// fails for want of a process stages its manifest again and tries the
// other. At the end every table's chain has every version, with no gap,
// each manifest file holding what its writer staged: no acknowledged
// commit was lost, and a killed process's locks did not block the other.
func TestReplicasKilled(t *testing.T) {
	url := pgtest.Database(t)
	dir := t.TempDir()
	wh := filepath.Join(dir, "warehouse")
	start := func(n int) *crashServer {
		return startServerProcess(t, filepath.Join(dir, fmt.Sprintf("replica-%d.log", n)), "--db", url, "--warehouse", wh)
	}
	var mu sync.Mutex
	procs := []*crashServer{start(0), start(1)}
	defer func() {
		for _, p := range procs {
			p.kill(t)
		}
	}()
	clientOf := func(i int) *client.Client {
		mu.Lock()
		defer mu.Unlock()
		c, err := client.New(procs[i%2].url, client.WithRetry(client.RetryPolicy{}))
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	ctx := t.Context()
	const writers, versions = 4, 30
	locs := make([]string, writers)
	for w := range writers {
		info, err := clientOf(0).DeclareTable(ctx, []string{fmt.Sprintf("w%d", w)}, nil)
		if err != nil {
			t.Fatal(err)
		}
		locs[w] = info.Location
		if err := os.MkdirAll(filepath.Join(info.Location, "_versions"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	content := func(w int, v int64) []byte { return fmt.Appendf(nil, "writer %d version %d", w, v) }
	progress := make(chan struct{}, writers*versions)
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			id := []string{fmt.Sprintf("w%d", w)}
			for v := int64(1); v <= versions; v++ {
				staged := filepath.Join(locs[w], "_versions", manifestname.V2.FileName(v)+"-staged")
				for attempt := 0; ; attempt++ {
					if err := os.WriteFile(staged, content(w, v), 0o644); err != nil {
						t.Error(err)
						return
					}
					_, _, err := clientOf(w+int(v)+attempt).CreateTableVersion(ctx, id, client.VersionCommit{Version: v, ManifestPath: warehouse.ObjectPath(staged)})
					if err == nil {
						break
					}
					var ce *client.Error
					if errors.As(err, &ce) && ce.Code() != client.CodeServiceUnavailable && ce.Code() != client.CodeInvalidInput {
						t.Errorf("writer %d, version %d: %v", w, v, err)
						return
					}
					if attempt > 200 {
						t.Errorf("writer %d, version %d: no replica answered: %v", w, v, err)
						return
					}
					time.Sleep(20 * time.Millisecond)
				}
				progress <- struct{}{}
			}
		})
	}
	for i := range 2 {
		for range writers * versions / 3 {
			<-progress
		}
		procs[i].kill(t)
		next := start(2 + i)
		mu.Lock()
		procs[i] = next
		mu.Unlock()
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	for w := range writers {
		n := int64(0)
		for v, err := range clientOf(w).ListTableVersions(ctx, []string{fmt.Sprintf("w%d", w)}, "") {
			if err != nil {
				t.Fatal(err)
			}
			if n++; v.Version != n {
				t.Fatalf("writer %d: version %d where %d belongs", w, v.Version, n)
			}
			b, err := os.ReadFile("/" + v.ManifestPath)
			if err != nil || !bytes.Equal(b, content(w, v.Version)) {
				t.Fatalf("writer %d, version %d: manifest %q, %v", w, v.Version, b, err)
			}
		}
		if n != versions {
			t.Fatalf("writer %d: %d versions, want %d", w, n, versions)
		}
	}
}
