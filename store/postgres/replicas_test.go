package postgres_test

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/lancens/lancens/client"
	"github.com/lancens/lancens/internal/testkit/apitest"
	"github.com/lancens/lancens/internal/testkit/pgtest"
	"github.com/lancens/lancens/lance/manifestname"
	"github.com/lancens/lancens/store"
	"github.com/lancens/lancens/warehouse"
)

// rawClient returns a client of s that neither retries nor hides answers.
func rawClient(t testing.TB, s *apitest.Server) *client.Client {
	t.Helper()
	c, err := client.New(s.URL, client.WithHTTPClient(s.HTTP), client.WithRetry(client.RetryPolicy{}))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// stage writes a manifest for version v of the table at loc under a name of
// its own and returns the path to commit.
func stage(t testing.TB, loc string, v int64, who int, content []byte) string {
	t.Helper()
	dir := filepath.Join(loc, "_versions")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, fmt.Sprintf("%s-staged-%d", manifestname.V2.FileName(v), who))
	if err := os.WriteFile(p, content, 0o644); err != nil {
		t.Fatal(err)
	}
	return warehouse.ObjectPath(p)
}

// TestReplicasRace has 16 goroutines race to commit each version of a
// table through two servers on one database and one warehouse directory,
// each with a manifest of its own content: exactly one wins each version,
// the chain has no gaps, and the final manifest file on disk is the
// winner's (a loser on the other replica neither replaced nor removed it).
func TestReplicasRace(t *testing.T) {
	url, wh := pgtest.Database(t), t.TempDir()
	servers := []*apitest.Server{replica(t, url, wh), replica(t, url, wh)}
	clients := []*client.Client{rawClient(t, servers[0]), rawClient(t, servers[1])}
	ctx := t.Context()
	id := []string{"raced"}
	info, err := clients[0].DeclareTable(ctx, id, nil)
	if err != nil {
		t.Fatal(err)
	}
	const racers, versions = 16, 12
	for v := int64(1); v <= versions; v++ {
		contents := make([][]byte, racers)
		paths := make([]string, racers)
		for i := range racers {
			contents[i] = bytes.Repeat([]byte{byte('a' + i)}, 100+i)
			paths[i] = stage(t, info.Location, v, i, contents[i])
		}
		var wg sync.WaitGroup
		errs := make([]error, racers)
		for i := range racers {
			wg.Go(func() {
				_, _, errs[i] = clients[i%2].CreateTableVersion(ctx, id, client.VersionCommit{Version: v, ManifestPath: paths[i]})
			})
		}
		wg.Wait()
		winner := -1
		for i, err := range errs {
			switch {
			case err == nil && winner >= 0:
				t.Fatalf("version %d: racers %d and %d both won", v, winner, i)
			case err == nil:
				winner = i
			case !errors.Is(err, store.ErrConcurrentModification):
				t.Fatalf("version %d: racer %d failed with %v, want code 14", v, i, err)
			}
		}
		if winner < 0 {
			t.Fatalf("version %d: no racer won", v)
		}
		rec, err := clients[int(v)%2].DescribeTableVersion(ctx, id, "", &v)
		if err != nil {
			t.Fatal(err)
		}
		final := filepath.Join(info.Location, "_versions", manifestname.V2.FileName(v))
		got, err := os.ReadFile(final)
		if err != nil {
			t.Fatalf("version %d: the winner's manifest is gone: %v", v, err)
		}
		if !bytes.Equal(got, contents[winner]) {
			t.Fatalf("version %d: the final manifest holds %q…, not the winner's (racer %d)", v, got[:1], winner)
		}
		if rec.ManifestSize == nil || *rec.ManifestSize != int64(len(got)) {
			t.Fatalf("version %d: recorded size %v, file size %d", v, rec.ManifestSize, len(got))
		}
	}
	var got []int64
	for v, err := range clients[1].ListTableVersions(ctx, id, "") {
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, v.Version)
	}
	want := make([]int64, versions)
	for i := range want {
		want[i] = int64(i + 1)
	}
	if !slices.Equal(got, want) {
		t.Fatalf("chain %v after the races, want %v", got, want)
	}
}

// TestReplicaRestart has four writers commit versions of their own tables
// through two replicas, taking turns, while each replica in turn is
// stopped and started again on the same database: a writer whose request
// fails because its replica is down tries the other. At the end, every
// acknowledged version is recorded, in a chain without gaps, and its
// manifest file holds what its writer staged.
func TestReplicaRestart(t *testing.T) {
	url, wh := pgtest.Database(t), t.TempDir()
	ctx := t.Context()
	var mu sync.RWMutex
	servers := []*apitest.Server{replica(t, url, wh), replica(t, url, wh)}
	clients := []*client.Client{rawClient(t, servers[0]), rawClient(t, servers[1])}
	pick := func(i int) *client.Client {
		mu.RLock()
		defer mu.RUnlock()
		return clients[i%2]
	}
	const writers, versions = 4, 40
	locs := make([]string, writers)
	for w := range writers {
		info, err := clients[0].DeclareTable(ctx, []string{fmt.Sprintf("w%d", w)}, nil)
		if err != nil {
			t.Fatal(err)
		}
		locs[w] = info.Location
	}
	content := func(w int, v int64) []byte { return []byte(fmt.Sprintf("writer %d version %d", w, v)) }
	progress := make(chan struct{}, writers*versions)
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			id := []string{fmt.Sprintf("w%d", w)}
			for v := int64(1); v <= versions; v++ {
				staged := stage(t, locs[w], v, w, content(w, v))
				for attempt := 0; ; attempt++ {
					_, _, err := pick(w+int(v)+attempt).CreateTableVersion(ctx, id, client.VersionCommit{Version: v, ManifestPath: staged})
					if err == nil {
						break
					}
					var ce *client.Error
					if errors.As(err, &ce) && ce.Code() != client.CodeServiceUnavailable {
						t.Errorf("writer %d, version %d: %v", w, v, err)
						return
					}
					if attempt > 50 {
						t.Errorf("writer %d, version %d: no replica answered: %v", w, v, err)
						return
					}
					time.Sleep(20 * time.Millisecond)
				}
				progress <- struct{}{}
			}
		})
	}
	restart := func(i int) {
		for range writers * versions / 4 {
			<-progress
		}
		mu.Lock()
		servers[i].Stop()
		servers[i] = replica(t, url, wh)
		clients[i] = rawClient(t, servers[i])
		mu.Unlock()
	}
	restart(0)
	restart(1)
	wg.Wait()
	if t.Failed() {
		return
	}
	for w := range writers {
		var got []int64
		for v, err := range pick(w).ListTableVersions(ctx, []string{fmt.Sprintf("w%d", w)}, "") {
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, v.Version)
			b, err := os.ReadFile("/" + v.ManifestPath)
			if err != nil || !bytes.Equal(b, content(w, v.Version)) {
				t.Fatalf("writer %d, version %d: manifest %q, %v", w, v.Version, b, err)
			}
		}
		if len(got) != versions || got[0] != 1 || got[len(got)-1] != versions {
			t.Fatalf("writer %d: chain %v, want 1…%d", w, got, versions)
		}
	}
}
