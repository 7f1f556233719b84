package main

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"

	"github.com/lancens/lancens/internal/testkit/s3test"
	"github.com/lancens/lancens/store/sqlite"
	"github.com/lancens/lancens/vend"
	"github.com/lancens/lancens/warehouse"
)

// objectStoreSuite measures commits on S3 (a Versity S3 Gateway on
// loopback): the LanceDB SDK in namespace mode against lancens with an
// s3:// warehouse — Lance writes the data and stages the manifest, lancens
// publishes the manifest with a conditional put and records the version —
// against the same SDK committing on its own to the same gateway (Lance's
// S3 commit: a conditional put of the manifest). Each commit is an append
// of 100 rows, timed whole as a client sees it: the data file, the staged
// manifest and the commit.
func objectStoreSuite(dir string, _ *instance, scale float64, rep *report) error {
	g, err := startGateway(dir)
	if err != nil {
		return err
	}
	defer g.Stop()
	commits := max(int(200*scale), 10)
	var peer struct{ Lat []float64 }
	if err := lancedb("s3commits", map[string]any{"uri": "s3://lance/peer", "storageOptions": g.Options(), "table": "peer", "rows": 100, "commits": commits}, &peer); err != nil {
		return err
	}
	p := msLatencies(peer.Lat)
	// lancens as it runs by default (each record fsynced), and with
	// --sync NORMAL, which the gateway's own writes compare to.
	for _, sync := range []string{"FULL", "NORMAL"} {
		url, stop, err := startObjectStoreLancens(dir, sync, g.Options())
		if err != nil {
			return err
		}
		var ours struct{ Lat []float64 }
		err = lancedb("s3commits", map[string]any{"namespace": url, "table": "ours-" + sync, "rows": 100, "commits": commits}, &ours)
		stop()
		if err != nil {
			return err
		}
		o := msLatencies(ours.Lat)
		rep.add(
			result{"objectstore", fmt.Sprintf("namespace-mode commit p50 on S3, --sync %s", sync), "ms", ms(o.percentile(.5)), ms(p.percentile(.5)), "Lance S3 commit", false},
			result{"objectstore", fmt.Sprintf("namespace-mode commit p99 on S3, --sync %s", sync), "ms", ms(o.percentile(.99)), ms(p.percentile(.99)), "Lance S3 commit", false},
		)
	}
	return nil
}

// startObjectStoreLancens serves lancens with the warehouse s3://lance/wh,
// reached with opts, which it also hands to clients (static vending), and
// the SQLite synchronous mode sync.
func startObjectStoreLancens(dir, sync string, opts map[string]string) (string, func(), error) {
	ctx := context.Background()
	db, err := sqlite.Open(ctx, filepath.Join(dir, "lancens-s3-"+sync+".db"), sqlite.Options{Synchronous: sync})
	if err != nil {
		return "", nil, err
	}
	wh, err := warehouse.OpenStore(ctx, "s3://lance/wh", opts)
	if err != nil {
		db.Close()
		return "", nil, err
	}
	v, err := vend.New(ctx, vend.Config{Mode: vend.Static, Options: opts})
	if err != nil {
		db.Close()
		return "", nil, err
	}
	st, commits, err := withLanceEngine(db, wh)
	if err != nil {
		db.Close()
		return "", nil, err
	}
	srv, stop, err := newServer(st, commits, wh, v, nil)
	if err != nil {
		db.Close()
		return "", nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		stop()
		db.Close()
		return "", nil, err
	}
	hs := &http.Server{Handler: srv}
	go hs.Serve(ln)
	return "http://" + ln.Addr().String(), func() {
		hs.Close()
		stop()
		db.Close()
	}, nil
}

// startGateway starts a Versity S3 gateway keeping its buckets under
// dir/s3, with a bucket named lance. It returns the errors of finding the
// gateway's binary, starting it and making the bucket (the gateway is
// stopped then).
func startGateway(dir string) (*s3test.Gateway, error) {
	bin, err := s3test.Binary()
	if err != nil {
		return nil, err
	}
	buckets := filepath.Join(dir, "s3")
	if err := os.Mkdir(buckets, 0o755); err != nil {
		return nil, err
	}
	g, err := s3test.Launch(bin, buckets)
	if err != nil {
		return nil, err
	}
	if err := g.MakeBucket("lance"); err != nil {
		g.Stop()
		return nil, err
	}
	return g, nil
}
