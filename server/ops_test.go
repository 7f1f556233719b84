package server_test

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/lancens/lancens/internal/testkit/apitest"
	"github.com/lancens/lancens/server"
	"github.com/lancens/lancens/store"
)

var keyHeader = http.Header{"X-Api-Key": {"k"}}

// TestProbesNeedNoCredentials checks that on a server with API keys the
// health and readiness probes answer 200 without credentials, reveal
// nothing but their status, and take only GET and HEAD; /metrics needs the
// API's credentials.
func TestProbesNeedNoCredentials(t *testing.T) {
	s := apitest.Start(t, apitest.Options{APIKeys: []string{"k"}})
	for _, tc := range []struct {
		name, method, path string
		header             http.Header
		wantStatus         int
		wantCode           int // -1: no ErrorResponse
	}{
		{"Health", "GET", "/healthz", nil, 200, -1},
		{"HealthHead", "HEAD", "/healthz", nil, 200, -1},
		{"Ready", "GET", "/readyz", nil, 200, -1},
		{"ReadyWithWrongKey", "GET", "/readyz", http.Header{"X-Api-Key": {"wrong"}}, 200, -1},
		{"HealthPost", "POST", "/healthz", nil, 405, 0},
		{"ReadyDelete", "DELETE", "/readyz", nil, 405, 0},
		{"MetricsWithoutKey", "GET", "/metrics", nil, 401, 16},
		{"MetricsWrongKey", "GET", "/metrics", http.Header{"X-Api-Key": {"wrong"}}, 401, 16},
		{"MetricsWithKey", "GET", "/metrics", keyHeader, 200, -1},
		{"MetricsBearer", "GET", "/metrics", http.Header{"Authorization": {"Bearer k"}}, 200, -1},
		{"APIWithoutKey", "GET", "/v1/namespace/%24/list", nil, 401, 16},
	} {
		t.Run(tc.name, func(t *testing.T) {
			status, body, _ := s.Do(t, tc.method, tc.path, tc.header, nil)
			if status != tc.wantStatus || apitest.ErrorCode(body) != tc.wantCode {
				t.Fatalf("%s %s: %d code %d (%s), want %d code %d", tc.method, tc.path, status, apitest.ErrorCode(body), body, tc.wantStatus, tc.wantCode)
			}
			if strings.HasSuffix(tc.path, "z") && status == 200 && tc.method == "GET" && string(body) != "{\"status\":\"ok\"}\n" {
				t.Fatalf("probe body %q says more than its status", body)
			}
		})
	}
}

// brokenProbe is a store whose readiness check fails.
type brokenProbe struct{ store.ManagedBackend }

func (brokenProbe) Ready(context.Context) error { return errors.New("schema not migrated") }

// TestReadiness checks that /readyz answers 503 with code 17, and nothing
// about the cause, while the warehouse is gone or the store is not ready,
// and 200 again once the warehouse is back.
func TestReadiness(t *testing.T) {
	s := apitest.Start(t, apitest.Options{})
	ready := func() (int, []byte) {
		status, body, _ := s.Do(t, "GET", "/readyz", nil, nil)
		return status, body
	}
	root := s.Warehouse.Root()
	moved := root + ".moved"
	if err := os.Rename(root, moved); err != nil {
		t.Fatal(err)
	}
	status, body := ready()
	if status != http.StatusServiceUnavailable || apitest.ErrorCode(body) != int(store.CodeServiceUnavailable) {
		t.Fatalf("warehouse gone: %d %s, want 503 code 17", status, body)
	}
	if bytes.Contains(body, []byte(root)) {
		t.Fatalf("the readiness answer reveals the warehouse: %s", body)
	}
	if status, _, _ := s.Do(t, "GET", "/healthz", nil, nil); status != http.StatusOK {
		t.Fatalf("health while not ready: %d, want 200", status)
	}
	if err := os.Rename(moved, root); err != nil {
		t.Fatal(err)
	}
	if status, body := ready(); status != http.StatusOK {
		t.Fatalf("warehouse back: %d %s", status, body)
	}

	broken := apitest.Start(t, apitest.Options{Tune: func(c *server.Config) { c.Store = brokenProbe{c.Store} }})
	status, body, _ = broken.Do(t, "GET", "/readyz", nil, nil)
	if status != http.StatusServiceUnavailable || apitest.ErrorCode(body) != int(store.CodeServiceUnavailable) {
		t.Fatalf("store not ready: %d %s, want 503 code 17", status, body)
	}
}

// scrape reads the metrics of s through its /metrics route.
func scrape(t *testing.T, s *apitest.Server, header http.Header) map[string]*dto.MetricFamily {
	t.Helper()
	status, body, h := s.Do(t, "GET", "/metrics", header, nil)
	if status != http.StatusOK {
		t.Fatalf("/metrics: %d %s", status, body)
	}
	if ct := h.Get("Content-Type"); !strings.HasPrefix(ct, "text/plain") {
		t.Fatalf("/metrics Content-Type %q, want the Prometheus text format", ct)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(bytes.NewReader(body))
	if err != nil {
		t.Fatalf("/metrics is not in the text format: %v", err)
	}
	return families
}

// sample returns the value of the series of family name whose labels
// include want, or -1 when there is none.
func sample(families map[string]*dto.MetricFamily, name string, want map[string]string) float64 {
	f := families[name]
	if f == nil {
		return -1
	}
next:
	for _, m := range f.Metric {
		got := map[string]string{}
		for _, l := range m.Label {
			got[l.GetName()] = l.GetValue()
		}
		for k, v := range want {
			if got[k] != v {
				continue next
			}
		}
		switch {
		case m.Counter != nil:
			return m.Counter.GetValue()
		case m.Gauge != nil:
			return m.Gauge.GetValue()
		case m.Histogram != nil:
			return float64(m.Histogram.GetSampleCount())
		}
	}
	return -1
}

// TestMetrics makes requests of several kinds and checks what /metrics
// reports about them: requests by operation, method and status (never by
// raw path), durations, commits by result, pending jobs, the database and
// cache sizes, and the Go runtime.
func TestMetrics(t *testing.T) {
	s := apitest.Start(t, apitest.Options{APIKeys: []string{"k"}})
	ctx := t.Context()
	if _, err := s.Client.CreateNamespace(ctx, []string{"m"}, nil); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		s.Do(t, "POST", "/v1/namespace/m/describe", keyHeader, nil)
	}
	s.Do(t, "POST", "/v1/namespace/nope/describe", keyHeader, nil)
	s.Do(t, "GET", "/v1/no/such/route/abc123", keyHeader, nil)
	s.Do(t, "POST", "/v1/table/m%24missing/index/v_idx/prewarm", keyHeader, nil)
	s.Do(t, "POST", "/v1/table/m%24missing/optimize", keyHeader, nil)
	s.Do(t, "GET", "/healthz", nil, nil)
	schema := arrow.NewSchema([]arrow.Field{{Name: "id", Type: arrow.PrimitiveTypes.Int64}}, nil)
	if _, err := s.Client.CreateTable(ctx, []string{"m", "t"}, schema, nil, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Client.CreateTable(ctx, []string{"m", "t"}, schema, nil, nil); err == nil {
		t.Fatal("created a table twice")
	}

	families := scrape(t, s, keyHeader)
	for _, tc := range []struct {
		name   string
		labels map[string]string
		want   func(float64) bool
	}{
		{"lancens_http_requests_total", map[string]string{"route": "DescribeNamespace", "method": "POST", "code": "200"}, func(v float64) bool { return v == 3 }},
		{"lancens_http_requests_total", map[string]string{"route": "DescribeNamespace", "method": "POST", "code": "404"}, func(v float64) bool { return v == 1 }},
		{"lancens_http_requests_total", map[string]string{"route": "unmatched", "method": "GET", "code": "404"}, func(v float64) bool { return v == 1 }},
		{"lancens_http_requests_total", map[string]string{"route": "PrewarmTableIndex", "method": "POST", "code": "404"}, func(v float64) bool { return v == 1 }},
		{"lancens_http_requests_total", map[string]string{"route": "OptimizeTable", "method": "POST", "code": "404"}, func(v float64) bool { return v == 1 }},
		{"lancens_http_requests_total", map[string]string{"route": "unmatched", "method": "POST"}, func(v float64) bool { return v < 1 }},
		{"lancens_http_request_duration_seconds", map[string]string{"route": "DescribeNamespace"}, func(v float64) bool { return v == 4 }},
		{"lancens_commits_total", map[string]string{"result": "committed"}, func(v float64) bool { return v == 1 }},
		{"lancens_commits_total", map[string]string{"result": "conflict"}, func(v float64) bool { return v == 1 }},
		{"lancens_jobs", map[string]string{"kind": store.JobBuildIndex, "state": "queued"}, func(v float64) bool { return v == 0 }},
		{"lancens_db_size_bytes", nil, func(v float64) bool { return v > 0 }},
		{"lancens_cache_bytes", nil, func(v float64) bool { return v >= 0 }},
		{"lancens_cache_budget_bytes", nil, func(v float64) bool { return v > 0 }},
		{"lancens_decode_budget_bytes", nil, func(v float64) bool { return v == server.DefaultDecodeBudget }},
		{"lancens_decode_reserved_bytes", nil, func(v float64) bool { return v == 0 }},
		{"lancens_build_info", nil, func(v float64) bool { return v == 1 }},
		{"go_goroutines", nil, func(v float64) bool { return v > 0 }},
		{"process_resident_memory_bytes", nil, func(v float64) bool { return v > 0 }},
	} {
		if got := sample(families, tc.name, tc.labels); !tc.want(got) {
			t.Errorf("%s%v = %v", tc.name, tc.labels, got)
		}
	}
	// No label carries a raw path; the probes are not counted.
	for _, m := range families["lancens_http_requests_total"].Metric {
		for _, l := range m.Label {
			if strings.Contains(l.GetValue(), "/") {
				t.Errorf("label %s=%q is a path", l.GetName(), l.GetValue())
			}
		}
	}

}

// TestMetricsListener checks that with NoMetricsRoute the API has no
// /metrics, and MetricsHandler serves the metrics without credentials.
func TestMetricsListener(t *testing.T) {
	s := apitest.Start(t, apitest.Options{APIKeys: []string{"k"}, Tune: func(c *server.Config) { c.NoMetricsRoute = true }})
	if status, body, _ := s.Do(t, "GET", "/metrics", keyHeader, nil); status != http.StatusNotFound {
		t.Fatalf("/metrics on the API with NoMetricsRoute: %d %s", status, body)
	}
	s.Do(t, "GET", "/v1/namespace/%24/list", keyHeader, nil)
	rec := httptest.NewRecorder()
	s.API.MetricsHandler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	if rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), `lancens_http_requests_total{code="200",method="GET",route="ListNamespaces"} 1`) {
		t.Fatalf("metrics listener: %d\n%.2000s", rec.Code, rec.Body)
	}
}
