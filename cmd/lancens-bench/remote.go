package main

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"path/filepath"
	"slices"
	"time"

	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/lancens/lancens/client"
)

// remoteQuery is one of the remote-mode queries the remote-s3 and replicas
// suites time, the same as the data and search suites': a filtered count,
// a filtered query and an exact vector search (no index: the engine's
// indexes are files Lance clients do not see, so a peer reading the same
// dataset could not use them).
type remoteQuery struct {
	label string
	table string
	rows  int // of the table
	// run sends the query the i-th time through c and returns a digest of
	// its answer, the same as node/bench.mjs's s3read workload's.
	run func(ctx context.Context, c *client.Client, i int) (string, error)
	// peer are the arguments of the s3read workload running the query.
	peer map[string]any
}

// remoteTables are the tables the remote-mode queries read, as loaded by
// loadRemoteTables.
type remoteTables struct {
	facts, vectors int // rows
	// locations of the tables "facts" and "vectors".
	factsAt, vectorsAt string
	queries            []remoteQuery
	centres            [][]float32 // of the vectors
}

// loadRemoteTables creates the tables "facts" (1M × scale rows of
// factSchema) and "vectors" (100k × scale rows of 128-dimensional vectors
// around 100 centres) through c, and returns them with the queries on
// them; the vector queries are written to dir for the peer.
func loadRemoteTables(ctx context.Context, c *client.Client, dir string, scale float64) (*remoteTables, error) {
	t := &remoteTables{facts: int(1000000 * scale), vectors: int(100000 * scale), centres: gaussianCentres(100, 128, 31)}
	created, err := c.CreateTable(ctx, []string{"facts"}, factSchema, factBatches(t.facts, 50000, 7), nil)
	if err != nil {
		return nil, err
	}
	t.factsAt = created.Location
	const k = 10
	schema := searchSchema(128)
	if created, err = c.CreateTable(ctx, []string{"vectors"}, schema, searchBatches(schema, drawAround(t.centres, t.vectors, 32), 10000), nil); err != nil {
		return nil, err
	}
	t.vectorsAt = created.Location
	vecs := drawAround(t.centres, 50, 33)
	qfile := filepath.Join(dir, "remote-queries.json")
	if err := writeJSON(qfile, vecs); err != nil {
		return nil, err
	}
	const countFilter, queryFilter = "category = 7 AND price > 500", "category = 42 AND price > 900"
	cols := []string{"id", "price"}
	t.queries = []remoteQuery{
		{"filtered count", "facts", t.facts,
			func(ctx context.Context, c *client.Client, _ int) (string, error) {
				n, err := c.CountRows(ctx, []string{"facts"}, countFilter, nil)
				return fmt.Sprint(n), err
			},
			map[string]any{"kind": "count", "filter": countFilter}},
		{"filtered query", "facts", t.facts,
			func(ctx context.Context, c *client.Client, _ int) (string, error) {
				res, err := c.Query(ctx, []string{"facts"}, client.QueryRequest{Filter: queryFilter, K: 100, Columns: cols})
				if err != nil {
					return "", err
				}
				return fmt.Sprint(res.NumRows()), nil
			},
			map[string]any{"kind": "query", "filter": queryFilter, "columns": cols, "limit": 100}},
		{"exact vector search", "vectors", t.vectors,
			func(ctx context.Context, c *client.Client, i int) (string, error) {
				res, err := c.Query(ctx, []string{"vectors"}, client.QueryRequest{Vector: vecs[i%len(vecs)], K: k, Columns: []string{"id"}})
				if err != nil {
					return "", err
				}
				var ids []int64
				for _, b := range res.Batches {
					ids = append(ids, b.Column(0).(*array.Int64).Int64Values()...)
				}
				slices.Sort(ids)
				return fmt.Sprint(ids), nil
			},
			map[string]any{"kind": "vector", "queriesFile": qfile, "k": k}},
	}
	return t, nil
}

// appendRows appends rows rows to each table through c, drawn with seed.
func (t *remoteTables) appendRows(ctx context.Context, c *client.Client, rows int, seed uint64) error {
	if _, err := c.Insert(ctx, []string{"facts"}, factSchema, factBatches(rows, rows, seed), ""); err != nil {
		return err
	}
	schema := searchSchema(128)
	_, err := c.Insert(ctx, []string{"vectors"}, schema, searchBatches(schema, drawAround(t.centres, rows, seed), rows), "")
	return err
}

// metric names a line of q's: its label, the statistic (p50 …) and where
// it was measured, and the table's size.
func (q remoteQuery) metric(stat, where string) string {
	return fmt.Sprintf("%s %s %s, %d rows", q.label, stat, where, q.rows)
}

// location returns the table's location.
func (t *remoteTables) location(table string) string {
	if table == "facts" {
		return t.factsAt
	}
	return t.vectorsAt
}

// time sends q through c once (the first run: cold, on a server that has
// not read the table yet) and then iterations times (warm), and returns
// their latencies and the digest of the first answer.
func (q remoteQuery) time(ctx context.Context, c *client.Client, iterations int) (cold time.Duration, warm latencies, digest string, err error) {
	t0 := time.Now()
	if digest, err = q.run(ctx, c, 0); err != nil {
		return 0, nil, "", fmt.Errorf("%s: %w", q.label, err)
	}
	cold = time.Since(t0)
	i := 1
	warm, err = timeN(iterations, func() error {
		_, err := q.run(ctx, c, i)
		i++
		return err
	})
	if err != nil {
		return 0, nil, "", fmt.Errorf("%s: %w", q.label, err)
	}
	return cold, warm, digest, nil
}

// listen serves h on a loopback port, and returns its URL, a client of it
// and a function that stops serving.
func listen(h http.Handler) (string, *client.Client, func(), error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, nil, err
	}
	hs := &http.Server{Handler: h}
	go hs.Serve(ln)
	url := "http://" + ln.Addr().String()
	c, err := client.New(url, client.WithHTTPClient(&http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}))
	if err != nil {
		hs.Close()
		return "", nil, nil, err
	}
	return url, c, func() { hs.Close() }, nil
}
