package server

import (
	"context"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"testing"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/lancens/lancens/coord"
	"github.com/lancens/lancens/engine"
	"github.com/lancens/lancens/store/sqlite"
	"github.com/lancens/lancens/warehouse"
)

// BenchmarkMetricsCost measures what counting and timing a request
// (observeRequests) adds to the cheapest real request, in one run: each
// iteration serves a batch of DescribeNamespace requests through the whole
// server (the peer), and calls a handler that only answers 200 a batch of
// times bare and a batch of times through observeRequests. It reports the
// request's cost, the metrics' cost (observed minus bare) and the metrics'
// share of the request in percent: the figure that says whether metrics
// slow the request path.
func BenchmarkMetricsCost(b *testing.B) {
	dir := b.TempDir()
	db, err := sqlite.Open(context.Background(), filepath.Join(dir, "lancens.db"), sqlite.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	wh, err := warehouse.Open(filepath.Join(dir, "wh"))
	if err != nil {
		b.Fatal(err)
	}
	e, err := engine.New(engine.Options{Catalog: db, Warehouse: wh})
	if err != nil {
		b.Fatal(err)
	}
	st := engine.WithBackend(db, e)
	s, err := New(Config{Store: st, Warehouse: wh, Services: coord.NewServices(coord.ServicesConfig{Store: st, Warehouse: wh})})
	if err != nil {
		b.Fatal(err)
	}
	serve := func(path string, want int) {
		rec := httptest.NewRecorder()
		s.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, path, nil))
		if rec.Code != want {
			b.Fatalf("POST %s: status %d, want %d: %s", path, rec.Code, want, rec.Body)
		}
	}
	serve("/v1/namespace/bench/create", http.StatusOK)

	answer := func(c echo.Context) error { return c.NoContent(http.StatusOK) }
	observed := s.observeRequests(answer)
	req := httptest.NewRequest(http.MethodPost, "/v1/namespace/bench/describe", nil)
	rec := httptest.NewRecorder()
	c := s.echo.NewContext(req, rec)
	call := func(h echo.HandlerFunc) {
		c.Reset(req, rec)
		c.SetPath("/v1/namespace/:id/describe")
		if err := h(c); err != nil {
			b.Fatal(err)
		}
	}
	// A batch amortises reading the clock over calls that take tens of
	// nanoseconds.
	const batch = 64
	timed := func(f func()) time.Duration {
		start := time.Now()
		for range batch {
			f()
		}
		return time.Since(start)
	}
	var request, bare, withMetrics time.Duration
	for b.Loop() {
		request += timed(func() { serve("/v1/namespace/bench/describe", http.StatusOK) })
		bare += timed(func() { call(answer) })
		withMetrics += timed(func() { call(observed) })
	}
	calls := float64(b.N * batch)
	requestNs := float64(request.Nanoseconds()) / calls
	metricsNs := float64((withMetrics - bare).Nanoseconds()) / calls
	b.ReportMetric(requestNs, "request-ns")
	b.ReportMetric(metricsNs, "metrics-ns")
	b.ReportMetric(100*metricsNs/requestNs, "metrics-%-of-request")
}
