package server

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/lancens/lancens/internal/buildinfo"
)

// Route labels of requests that are not spec operations. Every other label
// is an operationId of the spec, routePrewarm for the LanceDB dialect's
// prewarm route, routeOptimize for lancens's optimize route or
// routePrincipal for GET /auth/principal: the label set
// stays bounded whatever paths clients send.
const (
	routeMetrics   = "metrics"
	routeUnmatched = "unmatched"
)

// commitOperations are the operations that commit a table version: the
// version commits of namespace mode and the writes to managed tables.
var commitOperations = map[string]bool{
	"CreateTableVersion": true, "BatchCreateTableVersions": true, "BatchCommitTables": true,
	"CreateTable": true, "InsertIntoTable": true, "MergeInsertIntoTable": true, "UpdateTable": true,
	"DeleteFromTable": true, "RestoreTable": true, "AlterTableAddColumns": true, "AlterTableAlterColumns": true,
	"AlterTableDropColumns": true, "UpdateTableSchemaMetadata": true, "UpdateFieldMetadata": true,
}

// durationBuckets span a cached catalog read (well under a millisecond) to
// a large upload (minutes), in seconds.
var durationBuckets = []float64{0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300}

// metrics holds the server's Prometheus metrics, in a registry of its own
// (several servers in one process, as in tests, do not share counters).
type metrics struct {
	registry *prometheus.Registry
	requests *prometheus.CounterVec
	// durations, commits and counters hold the series resolved once per
	// label values, so that a request neither hashes its labels nor
	// allocates to find them.
	durations map[string]prometheus.Observer
	commits   map[string]prometheus.Counter
	mu        sync.RWMutex
	counters  map[requestKey]prometheus.Counter
}

// requestKey is the label values of one lancens_http_requests_total series.
type requestKey struct {
	route, method string
	code          int
}

// requestCounter returns the series of k.
func (m *metrics) requestCounter(k requestKey) prometheus.Counter {
	m.mu.RLock()
	c := m.counters[k]
	m.mu.RUnlock()
	if c != nil {
		return c
	}
	c = m.requests.WithLabelValues(k.route, k.method, codeLabel(k.code))
	m.mu.Lock()
	m.counters[k] = c
	m.mu.Unlock()
	return c
}

// Results of lancens_commits_total.
const (
	commitCommitted = "committed" // 2xx
	commitConflict  = "conflict"  // 409: a concurrent commit won, or the version exists
	commitRejected  = "rejected"  // other 4xx: bad input, missing table, ...
	commitFailed    = "failed"    // 5xx
	commitAbandoned = "abandoned" // the client went away before the answer
)

func newMetrics(s *Server) *metrics {
	m := &metrics{registry: prometheus.NewRegistry(), durations: map[string]prometheus.Observer{},
		commits: map[string]prometheus.Counter{}, counters: map[requestKey]prometheus.Counter{}}
	m.requests = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "lancens_http_requests_total",
		Help: "HTTP requests answered, by route (the spec's operationId), method and status code.",
	}, []string{"route", "method", "code"})
	duration := prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "lancens_http_request_duration_seconds",
		Help:    "Time from routing a request to the end of its answer, by route (the spec's operationId).",
		Buckets: durationBuckets,
	}, []string{"route"})
	commits := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "lancens_commits_total",
		Help: "Requests that commit a table version (version commits and writes to managed tables), by result: committed, conflict, rejected, failed, abandoned.",
	}, []string{"result"})
	for _, op := range s.ops {
		m.durations[op.id] = duration.WithLabelValues(op.id)
	}
	for _, r := range []string{routeMetrics, routeUnmatched, routePrewarm, routeOptimize, routePrincipal} {
		m.durations[r] = duration.WithLabelValues(r)
	}
	for _, r := range []string{commitCommitted, commitConflict, commitRejected, commitFailed, commitAbandoned} {
		m.commits[r] = commits.WithLabelValues(r)
	}
	bi := buildinfo.Read()
	build := prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "lancens_build_info",
		Help: "Always 1; the labels name the running build.",
	}, []string{"version", "revision", "goversion"})
	build.WithLabelValues(bi.Version, bi.Revision, bi.GoVersion).Set(1)
	decodeBudget := prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "lancens_decode_budget_bytes",
		Help: "The decode budget (--decode-budget), in bytes.",
	}, func() float64 { return float64(s.decode.Limit()) })
	decodeReserved := prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "lancens_decode_reserved_bytes",
		Help: "Bytes of the decode budget requests hold now (Arrow batches being written, large JSON bodies, SQL being parsed).",
	}, func() float64 { return float64(s.decode.Used()) })
	m.registry.MustRegister(m.requests, duration, commits, build, decodeBudget, decodeReserved,
		&storeCollector{s: s},
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// methodLabel bounds the method label: any method a client invents is
// "other".
func methodLabel(m string) string {
	switch m {
	case http.MethodGet, http.MethodPost, http.MethodHead, http.MethodPut, http.MethodDelete, http.MethodOptions, http.MethodPatch:
		return m
	}
	return "other"
}

// codeLabel returns the label of a status code: its number, or "other"
// for one outside 100-599.
func codeLabel(status int) string {
	if status < 100 || status > 599 {
		return "other"
	}
	return strconv.Itoa(status)
}

// commitResult classifies the answer to a commit operation.
func commitResult(status int) string {
	switch {
	case status == statusClientClosed:
		return commitAbandoned
	case status >= 200 && status < 300:
		return commitCommitted
	case status == http.StatusConflict:
		return commitConflict
	case status >= 500:
		return commitFailed
	}
	return commitRejected
}

// observeRequests counts every routed request and times it, by the route
// Echo matched. It runs before logRequests, which renders errors, so the
// status it sees is the one sent; a request whose client went away counts
// with status 499, as logRequests logs it.
func (s *Server) observeRequests(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		start := time.Now()
		route := routeUnmatched
		if op := s.ops.lookup(c); op != nil {
			route = op.id
		} else if c.Path() == MetricsPath {
			route = routeMetrics
		} else if c.Path() == prewarmRoute {
			route = routePrewarm
		} else if c.Path() == optimizeRoute {
			route = routeOptimize
		} else if c.Path() == PrincipalPath {
			route = routePrincipal
		}
		defer func() {
			status := c.Response().Status
			if clientGone(c) && !c.Response().Committed {
				status = statusClientClosed
			}
			s.metrics.durations[route].Observe(time.Since(start).Seconds())
			s.metrics.requestCounter(requestKey{route, methodLabel(c.Request().Method), status}).Inc()
			if commitOperations[route] {
				s.metrics.commits[commitResult(status)].Inc()
			}
		}()
		return next(c)
	}
}

// MetricsHandler serves the server's metrics in the Prometheus text format,
// without authentication: for a listener of its own (--metrics-addr). The
// API's own /metrics route is behind the API's authentication.
func (s *Server) MetricsHandler() http.Handler {
	return promhttp.HandlerFor(s.metrics.registry, promhttp.HandlerOpts{ErrorLog: slogErrorLog{s.log}})
}

// serveMetrics is the handler of the API's /metrics route: the API's
// authentication has already admitted the request.
func (s *Server) serveMetrics(c echo.Context) error {
	s.MetricsHandler().ServeHTTP(c.Response(), c.Request())
	return nil
}

// slogErrorLog passes promhttp's errors (a collector that failed) to the
// server's log.
type slogErrorLog struct{ log *slog.Logger }

func (l slogErrorLog) Println(v ...any) {
	l.log.Warn("metrics", slog.String("error", strings.TrimSpace(fmt.Sprintln(v...))))
}

// storeCollector reports what the store knows at scrape time: pending jobs,
// the database's size and the read cache's use.
type storeCollector struct{ s *Server }

var (
	descJobs        = prometheus.NewDesc("lancens_jobs", "Background jobs (index builds, backfills, data deletions) queued or running, by kind and state.", []string{"kind", "state"}, nil)
	descDBSize      = prometheus.NewDesc("lancens_db_size_bytes", "Bytes the database takes on disk (for SQLite: the file and its write-ahead log).", nil, nil)
	descCacheBytes  = prometheus.NewDesc("lancens_cache_bytes", "Bytes of memory the read cache holds.", nil, nil)
	descCacheBudget = prometheus.NewDesc("lancens_cache_budget_bytes", "The read cache's memory budget (--cache-mb), in bytes.", nil, nil)
)

// cacheSizer is implemented by stores with a read cache (store/sqlite).
type cacheSizer interface {
	CacheBytes() int64
	CacheBudget() int64
}

// Describe implements prometheus.Collector.
func (sc *storeCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- descJobs
	ch <- descDBSize
	ch <- descCacheBytes
	ch <- descCacheBudget
}

// Collect implements prometheus.Collector. A store that cannot answer in
// time leaves its metrics out of the scrape (and says why in the log).
func (sc *storeCollector) Collect(ch chan<- prometheus.Metric) {
	if cs, ok := sc.s.cfg.Store.(cacheSizer); ok {
		ch <- prometheus.MustNewConstMetric(descCacheBytes, prometheus.GaugeValue, float64(cs.CacheBytes()))
		ch <- prometheus.MustNewConstMetric(descCacheBudget, prometheus.GaugeValue, float64(cs.CacheBudget()))
	}
	probe := sc.s.cfg.Store
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if size, err := probe.SizeBytes(ctx); err != nil {
		sc.s.log.Warn("metrics: database size", slog.Any("error", err))
	} else {
		ch <- prometheus.MustNewConstMetric(descDBSize, prometheus.GaugeValue, float64(size))
	}
	counts, err := probe.PendingJobs(ctx)
	if err != nil {
		sc.s.log.Warn("metrics: pending jobs", slog.Any("error", err))
		return
	}
	type key struct{ kind, state string }
	pending := map[key]int64{}
	// The runner's kinds are reported even when none is pending, so that
	// their series do not come and go.
	for _, k := range sc.s.jobs.Kinds() {
		pending[key{k, "queued"}] = 0
		pending[key{k, "running"}] = 0
	}
	for _, c := range counts {
		pending[key{c.Kind, strings.ToLower(string(c.Status))}] += c.Count
	}
	for k, n := range pending {
		ch <- prometheus.MustNewConstMetric(descJobs, prometheus.GaugeValue, float64(n), k.kind, k.state)
	}
}
