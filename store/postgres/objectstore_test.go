package postgres_test

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/lancens/lancens/client"
	"github.com/lancens/lancens/internal/testkit/apitest"
	"github.com/lancens/lancens/internal/testkit/pgtest"
	"github.com/lancens/lancens/internal/testkit/s3test"
	"github.com/lancens/lancens/lance/manifestname"
	"github.com/lancens/lancens/store"
	"github.com/lancens/lancens/store/postgres"
)

// TestReplicasRaceObjectStore has 16 goroutines race to commit each version
// of a table on S3 (a real S3-compatible gateway) through two replicas on
// one PostgreSQL database: exactly one wins each version, the final
// manifest in the bucket is the winner's (no loser on the other replica
// replaced or removed it), and the chain has no gaps.
func TestReplicasRaceObjectStore(t *testing.T) {
	g := s3test.Start(t)
	g.CreateBucket(t, "lance")
	url := pgtest.Database(t)
	var clients []*client.Client
	for range 2 {
		s := apitest.Start(t, apitest.Options{Store: open(t, url, postgres.Options{}), Warehouse: "s3://lance/wh", StorageOptions: g.Options()})
		clients = append(clients, rawClient(t, s))
	}
	ctx := t.Context()
	id := []string{"raced"}
	info, err := clients[0].DeclareTable(ctx, id, nil)
	if err != nil {
		t.Fatal(err)
	}
	prefix := strings.TrimPrefix(info.Location, "s3://lance/")
	const racers, versions = 16, 4
	for v := int64(1); v <= versions; v++ {
		contents := make([][]byte, racers)
		paths := make([]string, racers)
		for i := range racers {
			contents[i] = bytes.Repeat([]byte{byte('a' + i)}, 100+i)
			paths[i] = fmt.Sprintf("%s/_versions/%s-staged-%d", prefix, manifestname.V2.FileName(v), i)
			g.Put(t, "lance", paths[i], contents[i])
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
		got, ok := g.Get(t, "lance", prefix+"/_versions/"+manifestname.V2.FileName(v))
		if !ok || !bytes.Equal(got, contents[winner]) {
			t.Fatalf("version %d: the final manifest (there: %v) is not the winner's (racer %d)", v, ok, winner)
		}
	}
	latest, err := clients[1].LatestTableVersion(ctx, id, "")
	if err != nil || latest.Version != versions {
		t.Fatalf("latest %+v, %v", latest, err)
	}
	n := 0
	for _, err := range clients[0].ListTableVersions(ctx, id, "") {
		if err != nil {
			t.Fatal(err)
		}
		n++
	}
	if n != versions {
		t.Fatalf("%d versions recorded, want %d", n, versions)
	}
}
