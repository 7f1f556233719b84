package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"

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
// with the warehouse in dir. It returns nil, with a note on stderr, when
// PostgreSQL is not installed (`make postgres` installs it).
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
		srv, stop, err := newServer(db, nil, wh, nil, jobsQueued)
		if err != nil {
			r.close()
			return nil, err
		}
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			r.close()
			return nil, err
		}
		hs := &http.Server{Handler: srv}
		go hs.Serve(ln)
		closers = append(closers, func() {
			hs.Close()
			stop()
		})
		c, err := client.New("http://"+ln.Addr().String(), client.WithHTTPClient(&http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}))
		if err != nil {
			r.close()
			return nil, err
		}
		r.clients = append(r.clients, c)
	}
	return r, nil
}
