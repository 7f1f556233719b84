package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/lancens/lancens/client"
	"github.com/lancens/lancens/coord"
	"github.com/lancens/lancens/internal/testkit/pgtest"
	"github.com/lancens/lancens/store/postgres"
	"github.com/lancens/lancens/warehouse"
)

// replicas is two lancens servers on one PostgreSQL database (a throwaway
// cluster with durable settings) and one warehouse directory.
type replicas struct {
	clients []*client.Client
	close   func()
}

// startReplicas starts a PostgreSQL cluster and two lancens servers on it,
// with the warehouse in dir, each with the Lance engine serving the rows
// of tables (with an engine and a cache of its own, as two `lancens serve`
// would).
// It returns nil, with a note on stderr, when PostgreSQL is not installed
// (`make postgres` installs it).
func startReplicas(dir string) (*replicas, error) {
	cluster, err := pgtest.Start(pgtest.Options{Durable: true})
	if errors.Is(err, pgtest.ErrNoBinaries) {
		fmt.Fprintln(os.Stderr, "lancens-bench: PostgreSQL is not installed: no replica measurements (make postgres installs it)")
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	ctx := context.Background()
	r := &replicas{}
	var closers []func()
	r.close = func() {
		for i := len(closers) - 1; i >= 0; i-- {
			closers[i]()
		}
	}
	closers = append(closers, func() { cluster.Stop() })
	url, err := cluster.CreateDatabase(ctx, "bench")
	if err != nil {
		r.close()
		return nil, err
	}
	for range 2 {
		jobsQueued := coord.NewSignal()
		db, err := postgres.Open(ctx, url, postgres.Options{OnJobQueued: jobsQueued.Notify})
		if err != nil {
			r.close()
			return nil, err
		}
		closers = append(closers, func() { db.Close() })
		wh, err := warehouse.Open(dir)
		if err != nil {
			r.close()
			return nil, err
		}
		st, commits, err := withLanceEngine(db, wh)
		if err != nil {
			r.close()
			return nil, err
		}
		srv, stop, err := newServer(st, commits, wh, nil, jobsQueued)
		if err != nil {
			r.close()
			return nil, err
		}
		_, c, stopServing, err := listen(srv)
		if err != nil {
			stop()
			r.close()
			return nil, err
		}
		closers = append(closers, func() {
			stopServing()
			stop()
		})
		r.clients = append(r.clients, c)
	}
	return r, nil
}

// replicasSuite measures the remote-mode queries (remoteQuery) through a
// second replica: two lancens servers, A and B, on one PostgreSQL catalog
// and one warehouse directory. Each round appends 100 rows to each table through
// A, then sends each query through B, which reads the versions A wrote,
// and through A, which wrote them (which goes first alternates); the peer
// is A, so a line is what reading through the replica that did not write
// costs. B's answer must be A's, and after the queries B must count every
// row A appended.
func replicasSuite(dir string, _ *instance, scale float64, rep *report) error {
	r, err := startReplicas(filepath.Join(dir, "warehouse"))
	if err != nil {
		return err
	}
	if r == nil {
		rep.skip("replicas", "remote-mode queries through a second replica", "PostgreSQL is not installed (make postgres)")
		return nil
	}
	defer r.close()
	ctx := context.Background()
	a, b := r.clients[0], r.clients[1]
	tables, err := loadRemoteTables(ctx, a, dir, scale)
	if err != nil {
		return err
	}
	// A first round of every query on both, untimed: B has read nothing yet.
	for _, q := range tables.queries {
		for _, c := range []*client.Client{b, a} {
			if _, err := q.run(ctx, c, 0); err != nil {
				return fmt.Errorf("%s: %w", q.label, err)
			}
		}
	}
	const rounds, rows = 20, 100
	lat := make([][2]latencies, len(tables.queries)) // through B, through A
	for round := range rounds {
		if err := tables.appendRows(ctx, a, rows, uint64(1000+round)); err != nil {
			return err
		}
		for i, q := range tables.queries {
			var digests [2]string
			for j := range 2 {
				side := (j + round) % 2
				t0 := time.Now()
				d, err := q.run(ctx, []*client.Client{b, a}[side], round)
				if err != nil {
					return fmt.Errorf("%s: %w", q.label, err)
				}
				lat[i][side] = append(lat[i][side], time.Since(t0))
				digests[side] = d
			}
			if digests[0] != digests[1] {
				return fmt.Errorf("%s after a write through replica A: replica B answered %s, A %s", q.label, digests[0], digests[1])
			}
		}
		n, err := b.CountRows(ctx, []string{"facts"}, "", nil)
		if err != nil {
			return err
		}
		if want := int64(tables.facts + rows*(round+1)); n != want {
			return fmt.Errorf("replica B counts %d rows after %d appends through A, want %d", n, round+1, want)
		}
	}
	for i, q := range tables.queries {
		b, a := lat[i][0], lat[i][1]
		rep.add(
			result{"replicas", q.metric("p50", "via replica B"), "ms", ms(b.percentile(.5)), ms(a.percentile(.5)), "replica A", false},
			result{"replicas", q.metric("p99", "via replica B"), "ms", ms(b.percentile(.99)), ms(a.percentile(.99)), "replica A", false},
		)
	}
	return nil
}
