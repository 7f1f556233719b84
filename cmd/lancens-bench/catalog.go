package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"time"

	"github.com/lancens/lancens/client"
	"github.com/lancens/lancens/lance/manifestname"
	"github.com/lancens/lancens/store"
	"github.com/lancens/lancens/warehouse"
)

// catalogSuite measures the commit coordinator: version commits per second
// from 1 and 16 clients with their latencies, and the latest-version lookup
// on a table with 100k versions. The peer is what a Lance client does
// without a catalog: commit by creating the manifest file exclusively in the
// table's _versions directory (fsynced), and find the latest version by
// listing that directory. The same commit workload then runs on two
// replicas over one PostgreSQL database, against the one SQLite server as
// the peer (skipped, with a note, where PostgreSQL is not installed).
func catalogSuite(dir string, inst *instance, scale float64, out *report) error {
	rep, err := startReplicas(filepath.Join(dir, "replicas"))
	if err != nil {
		return err
	}
	if rep != nil {
		defer rep.close()
	}
	commits := int(2000 * scale)
	for _, clients := range []int{1, 16} {
		ours, err := lancensCommits([]*client.Client{inst.client}, clients, commits)
		if err != nil {
			return err
		}
		peer, err := fileCommits(filepath.Join(dir, fmt.Sprintf("peer-%d", clients)), clients, commits)
		if err != nil {
			return err
		}
		out.add(
			result{"catalog", fmt.Sprintf("version commits, %d client(s)", clients), "/s", ours.rate, peer.rate, "file commit", true},
			result{"catalog", fmt.Sprintf("commit p50, %d client(s)", clients), "ms", ms(ours.lat.percentile(.5)), ms(peer.lat.percentile(.5)), "file commit", false},
			result{"catalog", fmt.Sprintf("commit p99, %d client(s)", clients), "ms", ms(ours.lat.percentile(.99)), ms(peer.lat.percentile(.99)), "file commit", false},
		)
		if rep == nil {
			continue
		}
		pg, err := lancensCommits(rep.clients, clients, commits)
		if err != nil {
			return fmt.Errorf("replicas: %w", err)
		}
		out.add(
			result{"catalog", fmt.Sprintf("2 replicas on PostgreSQL: commits, %d client(s)", clients), "/s", pg.rate, ours.rate, "1 SQLite server", true},
			result{"catalog", fmt.Sprintf("2 replicas on PostgreSQL: commit p50, %d client(s)", clients), "ms", ms(pg.lat.percentile(.5)), ms(ours.lat.percentile(.5)), "1 SQLite server", false},
			result{"catalog", fmt.Sprintf("2 replicas on PostgreSQL: commit p99, %d client(s)", clients), "ms", ms(pg.lat.percentile(.99)), ms(ours.lat.percentile(.99)), "1 SQLite server", false},
		)
	}

	versions := int(100000 * scale)
	ours, err := lancensLatestLookup(inst, versions)
	if err != nil {
		return err
	}
	peer, err := listingLatestLookup(filepath.Join(dir, "peer-listing"), versions)
	if err != nil {
		return err
	}
	out.add(
		result{"catalog", fmt.Sprintf("latest version p50, %d versions", versions), "ms", ms(ours.percentile(.5)), ms(peer.percentile(.5)), "dir listing", false},
		result{"catalog", fmt.Sprintf("latest version p99, %d versions", versions), "ms", ms(ours.percentile(.99)), ms(peer.percentile(.99)), "dir listing", false},
	)
	return nil
}

type throughput struct {
	rate float64
	lat  latencies
}

// measure runs total operations spread over workers and times each.
func measure(workers, total int, op func(worker, i int) error) (throughput, error) {
	var mu sync.Mutex
	var lat latencies
	var firstErr error
	var wg sync.WaitGroup
	start := time.Now()
	per := total / workers
	for w := range workers {
		wg.Go(func() {
			local := make(latencies, 0, per)
			for i := range per {
				t0 := time.Now()
				if err := op(w, i); err != nil {
					mu.Lock()
					if firstErr == nil {
						firstErr = err
					}
					mu.Unlock()
					return
				}
				local = append(local, time.Since(t0))
			}
			mu.Lock()
			lat = append(lat, local...)
			mu.Unlock()
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	return throughput{rate: float64(len(lat)) / elapsed.Seconds(), lat: lat}, firstErr
}

// lancensCommits has each of clients commit consecutive versions of its own
// declared table over HTTP, staging a real manifest file first as Lance
// does; client w sends its requests to servers[w % len(servers)].
func lancensCommits(servers []*client.Client, clients, total int) (throughput, error) {
	ctx := context.Background()
	locs := make([]string, clients)
	for w := range clients {
		info, err := servers[w%len(servers)].DeclareTable(ctx, []string{fmt.Sprintf("commits-%d-%d", clients, w)}, nil)
		if err != nil {
			return throughput{}, err
		}
		locs[w] = info.Location
		if err := os.MkdirAll(filepath.Join(info.Location, "_versions"), 0o755); err != nil {
			return throughput{}, err
		}
	}
	manifest := make([]byte, 2048)
	return measure(clients, total, func(w, i int) error {
		v := int64(i + 1)
		staged := filepath.Join(locs[w], "_versions", fmt.Sprintf("%s-staged", manifestname.V2.FileName(v)))
		if err := os.WriteFile(staged, manifest, 0o644); err != nil {
			return err
		}
		_, _, err := servers[w%len(servers)].CreateTableVersion(ctx, []string{fmt.Sprintf("commits-%d-%d", clients, w)},
			client.VersionCommit{Version: v, ManifestPath: warehouse.ObjectPath(staged)})
		return err
	})
}

// fileCommits is the peer: each client stages a manifest and publishes it by
// hard-linking it to the final name (create-only, as Lance's object store
// does on local disk), syncing the file and the directory.
func fileCommits(dir string, clients, total int) (throughput, error) {
	for w := range clients {
		if err := os.MkdirAll(filepath.Join(dir, fmt.Sprint(w), "_versions"), 0o755); err != nil {
			return throughput{}, err
		}
	}
	manifest := make([]byte, 2048)
	return measure(clients, total, func(w, i int) error {
		vdir := filepath.Join(dir, fmt.Sprint(w), "_versions")
		name := manifestname.V2.FileName(int64(i + 1))
		staged := filepath.Join(vdir, name+"-staged")
		f, err := os.Create(staged)
		if err != nil {
			return err
		}
		if _, err := f.Write(manifest); err != nil {
			return err
		}
		if err := f.Sync(); err != nil {
			return err
		}
		f.Close()
		if err := os.Link(staged, filepath.Join(vdir, name)); err != nil {
			return err
		}
		if err := os.Remove(staged); err != nil {
			return err
		}
		d, err := os.Open(vdir)
		if err != nil {
			return err
		}
		defer d.Close()
		return d.Sync()
	})
}

// lancensLatestLookup fills a table with n versions (through the store, in
// batches, to keep set-up short) and times version/list?descending&limit=1.
func lancensLatestLookup(inst *instance, n int) (latencies, error) {
	ctx := context.Background()
	id := []string{"many-versions"}
	if _, _, err := inst.db.DeclareTable(ctx, id, store.TableDeclaration{Location: "s3://bench/many-versions"}); err != nil {
		return nil, err
	}
	const chunk = 1000
	for start := 1; start <= n; start += chunk {
		var ops []store.BatchOperation
		for v := start; v < start+chunk && v <= n; v++ {
			p := fmt.Sprintf("bench/many-versions/_versions/%d.manifest", v)
			ops = append(ops, store.BatchOperation{ID: id, CommitVersion: &store.VersionCommit{Version: int64(v), StagedPath: p, ManifestPath: p}})
		}
		if _, _, err := inst.db.CommitBatch(ctx, ops); err != nil {
			return nil, err
		}
	}
	lat := make(latencies, 0, 2000)
	for range 2000 {
		t0 := time.Now()
		v, err := inst.client.LatestTableVersion(ctx, id, "")
		if err != nil {
			return nil, err
		}
		if v.Version != int64(n) {
			return nil, fmt.Errorf("latest is %d, want %d", v.Version, n)
		}
		lat = append(lat, time.Since(t0))
	}
	return lat, nil
}

// listingLatestLookup is the peer: a _versions directory holding n V2-named
// manifests, where the latest version is the first name in lexical order.
func listingLatestLookup(dir string, n int) (latencies, error) {
	vdir := filepath.Join(dir, "_versions")
	if err := os.MkdirAll(vdir, 0o755); err != nil {
		return nil, err
	}
	for v := 1; v <= n; v++ {
		if err := os.WriteFile(filepath.Join(vdir, manifestname.V2.FileName(int64(v))), nil, 0o644); err != nil {
			return nil, err
		}
	}
	want := manifestname.V2.FileName(int64(n))
	lat := make(latencies, 0, 50)
	for range 50 {
		t0 := time.Now()
		d, err := os.Open(vdir)
		if err != nil {
			return nil, err
		}
		names, err := d.Readdirnames(-1)
		d.Close()
		if err != nil {
			return nil, err
		}
		sort.Strings(names)
		if names[0] != want {
			return nil, fmt.Errorf("listing found %s, want %s", names[0], want)
		}
		lat = append(lat, time.Since(t0))
	}
	return lat, nil
}
