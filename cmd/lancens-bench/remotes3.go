package main

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/lancens/lancens/client"
	"github.com/lancens/lancens/coord"
	"github.com/lancens/lancens/store/sqlite"
	"github.com/lancens/lancens/warehouse"
)

// remoteS3Suite measures the remote-mode queries (remoteQuery) on an s3://
// warehouse (a Versity S3 Gateway on loopback), cold (the first query of
// a server just started, its cache empty) and warm (the queries after it on that server), against
// the LanceDB SDK opening the same datasets in the same bucket through the
// same gateway: cold is its connect, openTable and first query in a
// process just started, warm the queries after it. Each cold run is
// repeated coldRuns times, on a fresh server and a fresh process.
func remoteS3Suite(dir string, _ *instance, scale float64, rep *report) error {
	g, err := startGateway(dir)
	if err != nil {
		return err
	}
	defer g.Stop()
	ctx := context.Background()
	opts := g.Options()
	catalog := filepath.Join(dir, "lancens.db")
	c, stop, err := startS3Engine(ctx, catalog, opts)
	if err != nil {
		return err
	}
	tables, err := loadRemoteTables(ctx, c, dir, scale)
	stop()
	if err != nil {
		return err
	}
	const coldRuns, iterations = 5, 20
	for _, q := range tables.queries {
		loc := tables.location(q.table)
		var ourCold, peerCold, ourWarm, peerWarm latencies
		for range coldRuns {
			c, stop, err := startS3Engine(ctx, catalog, opts)
			if err != nil {
				return err
			}
			cold, warm, digest, err := q.time(ctx, c, iterations)
			stop()
			if err != nil {
				return err
			}
			ourCold, ourWarm = append(ourCold, cold), append(ourWarm, warm...)
			var peer struct {
				Cold   float64   `json:"cold"`
				Lat    []float64 `json:"lat"`
				Digest string    `json:"digest"`
			}
			// The LanceDB database is the directory holding the table's.
			parent, name, _ := cutLast(loc, "/")
			args := map[string]any{"uri": parent, "table": strings.TrimSuffix(name, ".lance"), "storageOptions": opts, "iterations": iterations}
			for k, v := range q.peer {
				args[k] = v
			}
			if err := lancedb("s3read", args, &peer); err != nil {
				return err
			}
			if peer.Digest != digest {
				return fmt.Errorf("%s: lancens answered %s, LanceDB %s", q.label, digest, peer.Digest)
			}
			peerCold = append(peerCold, time.Duration(peer.Cold*float64(time.Millisecond)))
			peerWarm = append(peerWarm, msLatencies(peer.Lat)...)
		}
		rep.add(
			result{"remote-s3", q.metric("p50", "on S3, cold"), "ms", ms(ourCold.percentile(.5)), ms(peerCold.percentile(.5)), "LanceDB on S3", false},
			result{"remote-s3", q.metric("p50", "on S3, warm"), "ms", ms(ourWarm.percentile(.5)), ms(peerWarm.percentile(.5)), "LanceDB on S3", false},
		)
	}
	return nil
}

// startS3Engine serves lancens with its catalog in the SQLite file catalog
// and the warehouse s3://lance/wh, reached with opts, the Lance engine
// serving the rows of its tables with an empty cache; it returns a client
// of it and a function that stops it.
func startS3Engine(ctx context.Context, catalog string, opts map[string]string) (*client.Client, func(), error) {
	jobsQueued := coord.NewSignal()
	db, err := sqlite.Open(ctx, catalog, sqlite.Options{OnJobQueued: jobsQueued.Notify})
	if err != nil {
		return nil, nil, err
	}
	wh, err := warehouse.OpenStore(ctx, "s3://lance/wh", opts)
	if err != nil {
		db.Close()
		return nil, nil, err
	}
	st, commits, err := withLanceEngine(db, wh)
	if err != nil {
		db.Close()
		return nil, nil, err
	}
	srv, stopServices, err := newServer(st, commits, wh, nil, jobsQueued)
	if err != nil {
		db.Close()
		return nil, nil, err
	}
	_, c, stopServing, err := listen(srv)
	if err != nil {
		stopServices()
		db.Close()
		return nil, nil, err
	}
	return c, func() {
		stopServing()
		stopServices()
		db.Close()
	}, nil
}

// cutLast slices s around the last instance of sep, as strings.Cut does
// around the first.
func cutLast(s, sep string) (before, after string, found bool) {
	if i := strings.LastIndex(s, sep); i >= 0 {
		return s[:i], s[i+len(sep):], true
	}
	return s, "", false
}
