package server_test

import (
	"bytes"
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/lancens/lancens/internal/testkit/apitest"
	"github.com/lancens/lancens/internal/testkit/arrowtest"
	"github.com/lancens/lancens/server"
	"github.com/lancens/lancens/store"
)

// TestQueryTimeout checks that the query routes run under
// Config.QueryTimeout and answer 503 code 17 past it, while other routes do
// not. A timeout of 1ns has always passed by the time the store runs.
func TestQueryTimeout(t *testing.T) {
	s := apitest.Start(t, apitest.Options{Tune: func(c *server.Config) { c.QueryTimeout = time.Nanosecond }})
	docsTable(t, s, "t", 3)
	for _, tc := range []struct {
		name, path, body string
		bounded          bool
	}{
		{"Query", "query", `{"vector":null,"k":10}`, true},
		{"CountRows", "count_rows", `{}`, true},
		{"ExplainPlan", "explain_plan", `{"query":{"vector":null,"k":10}}`, true},
		{"AnalyzePlan", "analyze_plan", `{"vector":null,"k":10}`, true},
		{"Describe", "describe", `{}`, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			status, out, _ := s.Do(t, "POST", "/v1/table/t/"+tc.path, jsonHeader, []byte(tc.body))
			if !tc.bounded {
				if status != http.StatusOK {
					t.Fatalf("got %d %s, want 200", status, out)
				}
				return
			}
			if status != http.StatusServiceUnavailable || apitest.ErrorCode(out) != int(store.CodeServiceUnavailable) {
				t.Fatalf("got %d %s, want 503 code 17", status, out)
			}
		})
	}
}

// records is a slog handler that keeps every record.
type records struct {
	mu   sync.Mutex
	list []slog.Record
}

func (h *records) Enabled(context.Context, slog.Level) bool { return true }
func (h *records) WithAttrs([]slog.Attr) slog.Handler       { return h }
func (h *records) WithGroup(string) slog.Handler            { return h }
func (h *records) Handle(_ context.Context, r slog.Record) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.list = append(h.list, r.Clone())
	return nil
}

// TestClientGoneIsNotAnError serves requests whose client has gone away
// (the server cancels a request's context when its connection closes) and
// checks that nothing is logged as an error, that the request is logged
// with status 499, and that no answer is written.
func TestClientGoneIsNotAnError(t *testing.T) {
	logs := &records{}
	s := apitest.Start(t, apitest.Options{Tune: func(c *server.Config) { c.Logger = slog.New(logs) }})
	docsTable(t, s, "t", 3)
	for _, tc := range []struct{ name, path, body string }{
		{"Query", "/v1/table/t/query", `{"vector":null,"k":10}`},
		{"CountRows", "/v1/table/t/count_rows", `{}`},
		{"CreateNamespace", "/v1/namespace/gone/create", `{}`},
		{"Insert", "/v1/table/t/insert", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			logs.mu.Lock()
			logs.list = nil
			logs.mu.Unlock()
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			req := httptest.NewRequestWithContext(ctx, "POST", tc.path, strings.NewReader(tc.body))
			req.Header.Set("Content-Type", "application/json")
			if tc.body == "" {
				req = httptest.NewRequestWithContext(ctx, "POST", tc.path, bytes.NewReader(arrowBody(t)))
				req.Header.Set("Content-Type", "application/vnd.apache.arrow.stream")
			}
			rec := httptest.NewRecorder()
			func() {
				defer func() {
					if r := recover(); r != nil && r != http.ErrAbortHandler {
						panic(r)
					}
				}()
				s.API.ServeHTTP(rec, req)
			}()
			if rec.Body.Len() > 0 {
				t.Errorf("answered %d %s to a client that has gone", rec.Code, rec.Body)
			}
			logs.mu.Lock()
			defer logs.mu.Unlock()
			logged := false
			for _, r := range logs.list {
				if r.Level >= slog.LevelError {
					t.Errorf("logged at level %s: %s", r.Level, r.Message)
				}
				r.Attrs(func(a slog.Attr) bool {
					if r.Message == "request" && a.Key == "status" {
						logged = true
						if a.Value.Int64() != 499 {
							t.Errorf("request logged with status %d, want 499", a.Value.Int64())
						}
					}
					return true
				})
			}
			if !logged {
				t.Error("the request was not logged")
			}
		})
	}
}

// arrowBody returns an Arrow IPC stream of one row for table t of docsTable.
func arrowBody(t *testing.T) []byte {
	t.Helper()
	schema := arrowtest.Schema("id", arrow.PrimitiveTypes.Int64, "text", arrow.BinaryTypes.String,
		"vector", arrow.FixedSizeListOf(2, arrow.PrimitiveTypes.Float32))
	return streamBytes(t, schema, arrowtest.Record(t, schema, `[{"id":99,"text":"late","vector":[1,1]}]`))
}
