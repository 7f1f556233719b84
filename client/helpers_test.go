package client_test

import (
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/gorillamux"

	"github.com/lancens/lancens/client"
	"github.com/lancens/lancens/gen"
	"github.com/lancens/lancens/internal/testkit/apitest"
)

// recorder is an http.RoundTripper that notes the operationId of every
// request it sends, found in openapi.yaml.
type recorder struct {
	router routers.Router
	mu     sync.Mutex
	ops    []string
}

func newRecorder(t *testing.T) *recorder {
	t.Helper()
	doc, err := gen.GetSpec()
	if err != nil {
		t.Fatal(err)
	}
	doc.Servers = nil
	router, err := gorillamux.NewRouter(doc)
	if err != nil {
		t.Fatal(err)
	}
	return &recorder{router: router}
}

func (r *recorder) RoundTrip(req *http.Request) (*http.Response, error) {
	probe := req.Clone(req.Context())
	probe.URL.Scheme, probe.URL.Host, probe.Host = "", "", ""
	op := "?"
	if route, _, err := r.router.FindRoute(probe); err == nil {
		op = route.Operation.OperationID
	}
	r.mu.Lock()
	r.ops = append(r.ops, op)
	r.mu.Unlock()
	return http.DefaultTransport.RoundTrip(req)
}

// since returns the operations sent after mark (a length of ops).
func (r *recorder) since(mark int) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.ops[mark:])
}

func (r *recorder) mark() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.ops)
}

// env is a lancens test server (responses validated against openapi.yaml)
// and a client whose requests are recorded.
type env struct {
	s   *apitest.Server
	c   *client.Client
	rec *recorder
}

func newEnv(t *testing.T) *env {
	t.Helper()
	// Registered tables lie in a bucket the server never reads.
	s := apitest.Start(t, apitest.Options{ExternalRoots: []string{"s3://bucket"}})
	rec := newRecorder(t)
	c, err := client.New(s.URL, client.WithHTTPClient(&http.Client{Transport: rec}))
	if err != nil {
		t.Fatal(err)
	}
	return &env{s: s, c: c, rec: rec}
}

// doc is the row type of the test tables.
type doc struct {
	ID     int64     `arrow:"id"`
	Text   string    `arrow:"text"`
	Vector []float32 `arrow:"vector,fixed_size=4"`
	Rating *float64  `arrow:"rating"`
}

var texts = []string{
	"rivers and mountains", "cats and dogs", "a river runs through it", "mountain goats climb",
	"dogs chase cats", "quiet mountain lake", "the cat sat on the mat", "fast rivers, cold water",
}

// docs returns n rows with ids from first; row i has the vector [i, i%3, 1, 0]
// and a rating for even ids only.
func docs(first, n int) []doc {
	out := make([]doc, n)
	for k := range out {
		i := first + k
		out[k] = doc{ID: int64(i), Text: texts[i%len(texts)], Vector: []float32{float32(i), float32(i % 3), 1, 0}}
		if i%2 == 0 {
			r := float64(i) / 2
			out[k].Rating = &r
		}
	}
	return out
}

// docsTable creates table id with n docs and returns its handle.
func (e *env) docsTable(t *testing.T, n int, id ...string) *client.Table {
	t.Helper()
	tbl := e.c.Table(id...)
	if _, err := tbl.Create(t.Context(), client.Structs(docs(0, n)), nil); err != nil {
		t.Fatal(err)
	}
	return tbl
}

// stage writes a manifest into the table directory at location the way a
// Lance client stages one before committing it, and returns its path.
func stage(t *testing.T, location string, v int64) string {
	t.Helper()
	dir := filepath.Join(location, "_versions")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, fmt.Sprintf("staged-%d-%d", v, time.Now().UnixNano()))
	if err := os.WriteFile(p, []byte(fmt.Sprintf("manifest %d", v)), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// declared declares table id and commits versions 1..n, returning its
// location.
func (e *env) declared(t *testing.T, n int64, id ...string) string {
	t.Helper()
	info, err := e.c.DeclareTable(t.Context(), id, nil)
	if err != nil {
		t.Fatal(err)
	}
	for v := int64(1); v <= n; v++ {
		if _, _, err := e.c.CreateTableVersion(t.Context(), id, client.VersionCommit{Version: v, ManifestPath: stage(t, info.Location, v)}); err != nil {
			t.Fatal(err)
		}
	}
	return info.Location
}

// waitTransaction polls a transaction until it leaves Queued and Running.
func waitTransaction(t *testing.T, c *client.Client, txID string) *client.Transaction {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		tx, err := c.DescribeTransaction(t.Context(), []string{txID})
		if err != nil {
			t.Fatal(err)
		}
		if tx.Status != client.StatusQueued && tx.Status != client.StatusRunning {
			return tx
		}
		if time.Now().After(deadline) {
			t.Fatalf("transaction %s still %s", txID, tx.Status)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// collect gathers an iterator's items, failing the test on an error.
func collect[T any](t *testing.T, seq func(func(T, error) bool)) []T {
	t.Helper()
	var out []T
	for v, err := range seq {
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, v)
	}
	return out
}

// wantErr fails the test unless err matches the sentinel.
func wantErr(t *testing.T, err, sentinel error) {
	t.Helper()
	if !errors.Is(err, sentinel) {
		t.Fatalf("got %v, want %v", err, sentinel)
	}
}
