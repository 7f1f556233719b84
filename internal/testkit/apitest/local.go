package apitest

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/lancens/lancens/client"
	"github.com/lancens/lancens/coord"
	"github.com/lancens/lancens/server"
	"github.com/lancens/lancens/store/sqlite"
	"github.com/lancens/lancens/warehouse"
)

// Local is a lancens server that serves requests in-process, without a
// listener: fuzz targets send it thousands of requests a second. Unlike
// Server, it reports spec violations to the caller of each request (a fuzz
// target's *testing.T), since a fuzz target must not fail its *testing.F.
type Local struct {
	DB        *sqlite.DB
	Warehouse *warehouse.Warehouse
	srv       *server.Server
	validator *Validator
}

// StartLocal opens a server on a new database and warehouse in
// tb.TempDir() and closes it when tb ends.
func StartLocal(tb testing.TB) *Local {
	tb.Helper()
	jobsQueued := coord.NewSignal()
	db, err := sqlite.Open(context.Background(), tb.TempDir()+"/lancens.db", sqlite.Options{Synchronous: "NORMAL", OnJobQueued: jobsQueued.Notify})
	if err != nil {
		tb.Fatal(err)
	}
	wh, err := warehouse.Open(tb.TempDir())
	if err != nil {
		tb.Fatal(err)
	}
	served, commits := WithEngine(tb, db, wh)
	services := coord.NewServices(coord.ServicesConfig{Store: served, Warehouse: wh, Committer: commits, JobsQueued: jobsQueued})
	srv, err := server.New(server.Config{Store: served, Warehouse: wh, Services: services})
	if err != nil {
		tb.Fatal(err)
	}
	services.Start()
	tb.Cleanup(func() {
		services.Stop()
		db.Close()
	})
	return &Local{DB: db, Warehouse: wh, srv: srv, validator: NewValidator(tb)}
}

// Serve serves one request and returns the response with its body read.
// A response that violates openapi.yaml (see Validator.Check) fails t.
func (l *Local) Serve(t testing.TB, req *http.Request) (*http.Response, []byte) {
	t.Helper()
	if req.Body == nil {
		req.Body = http.NoBody
	}
	rec := httptest.NewRecorder()
	l.srv.ServeHTTP(rec, req)
	res := rec.Result()
	body := rec.Body.Bytes()
	if err := l.validator.Check(req, res.StatusCode, res.Header, body); err != nil {
		t.Errorf("response to %s %s violates openapi.yaml: %v\nbody: %.500s", req.Method, req.URL.RequestURI(), err, body)
	}
	res.Body = io.NopCloser(bytes.NewReader(body))
	return res, body
}

// Client returns a Go client whose requests l serves; responses that
// violate the spec fail t.
func (l *Local) Client(t testing.TB, opts ...client.Option) *client.Client {
	t.Helper()
	serve := roundTripFunc(func(req *http.Request) (*http.Response, error) {
		res, _ := l.Serve(t, req)
		return res, nil
	})
	c, err := client.New("http://lancens.localhost", append(opts, client.WithHTTPClient(&http.Client{Transport: serve}))...)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// roundTripFunc is an http.RoundTripper made of a function.
type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }
