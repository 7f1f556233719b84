package server_test

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/ipc"

	"github.com/lancens/lancens/internal/testkit/apitest"
	"github.com/lancens/lancens/internal/testkit/arrowtest"
	"github.com/lancens/lancens/server"
)

var arrowHeader = http.Header{"Content-Type": {"application/vnd.apache.arrow.stream"}}

// TestSQLTextsCapped sends every kind of SQL text the API takes a little
// over --max-filter-bytes (valid SQL, flat, so that only the length is
// wrong): each answers 400 code 13 and changes nothing; the same request
// a little under the cap succeeds. Before the cap, SQL was bounded only by
// the 32 MiB JSON limit.
func TestSQLTextsCapped(t *testing.T) {
	const limit = 4096
	s := apitest.Start(t, apitest.Options{Tune: func(c *server.Config) { c.MaxFilterBytes = limit }})
	if _, err := s.Client.CreateTable(t.Context(), []string{"t"}, arrowtest.HostileSchema,
		[]arrow.RecordBatch{arrowtest.Record(t, arrowtest.HostileSchema, arrowtest.HostileRows)}, nil); err != nil {
		t.Fatal(err)
	}
	// sized returns a flat valid text of about n bytes: part repeated,
	// between head and tail.
	sized := func(head, part, tail string, n int) string {
		return head + strings.Repeat(part, (n-len(head)-len(tail))/len(part)) + tail
	}
	predicate := func(n int) string { return sized("id >= 0", " AND id >= 0", "", n) }
	nameExpr := func(n int) string { return sized("coalesce(name", ", name", ")", n) }
	idExpr := func(n int) string { return sized("CASE", " WHEN id = 0 THEN 0", " ELSE id END", n) }
	quoted := func(s string) string { return fmt.Sprintf("%q", s) }
	for _, tc := range []struct {
		name, path string
		body       func(n int) string
		under      int // the status under the cap
	}{
		{"QueryFilter", "query", func(n int) string { return `{"k": 0, "vector": null, "filter": ` + quoted(predicate(n)) + `}` }, http.StatusOK},
		{"QueryColumnExpression", "query", func(n int) string {
			return `{"k": 0, "vector": null, "columns": {"column_aliases": {"x": ` + quoted(nameExpr(n)) + `}}}`
		}, http.StatusOK},
		{"QueryColumnName", "query", func(n int) string {
			return `{"k": 0, "vector": null, "columns": {"column_names": [` + quoted(strings.Repeat("n", n)) + `]}}`
		}, http.StatusNotFound}, // no such column
		{"ExplainFilter", "explain_plan", func(n int) string {
			return `{"query": {"k": 0, "vector": null, "filter": ` + quoted(predicate(n)) + `}}`
		}, http.StatusOK},
		{"CountRows", "count_rows", func(n int) string { return `{"predicate": ` + quoted(predicate(n)) + `}` }, http.StatusOK},
		{"DeletePredicate", "delete", func(n int) string { return `{"predicate": ` + quoted(sized("id < 0", " AND id < 0", "", n)) + `}` }, http.StatusOK},
		{"UpdatePredicate", "update", func(n int) string {
			return `{"updates": [["name", "name"]], "predicate": ` + quoted(predicate(n)) + `}`
		}, http.StatusOK},
		{"UpdateExpression", "update", func(n int) string { return `{"updates": [["name", ` + quoted(nameExpr(n)) + `]]}` }, http.StatusOK},
		{"AddColumnExpression", "add_columns", func(n int) string {
			return `{"new_columns": [{"name": "c", "expression": ` + quoted(idExpr(n)) + `}]}`
		}, http.StatusOK},
	} {
		t.Run(tc.name, func(t *testing.T) {
			status, out, _ := s.Do(t, http.MethodPost, "/v1/table/t/"+tc.path, jsonHeader, []byte(tc.body(limit+64)))
			if status != http.StatusBadRequest || apitest.ErrorCode(out) != 13 {
				t.Fatalf("over the cap: %d %.300s, want 400 code 13", status, out)
			}
			status, out, _ = s.Do(t, http.MethodPost, "/v1/table/t/"+tc.path, jsonHeader, []byte(tc.body(limit-64)))
			if status != tc.under {
				t.Fatalf("under the cap: %d %.300s", status, out)
			}
		})
	}
	// merge_insert's filters are query parameters; over the cap, the
	// request is refused before its body is read.
	long := url.QueryEscape(predicate(limit + 64))
	for _, param := range []string{"when_matched_update_all_filt", "when_not_matched_by_source_delete_filt"} {
		body := arrowtest.Stream(t, arrowtest.HostileSchema, []arrow.RecordBatch{arrowtest.Record(t, arrowtest.HostileSchema, arrowtest.HostileRows)})
		status, out, _ := s.Do(t, http.MethodPost, "/v1/table/t/merge_insert?on=id&when_matched_update_all=true&"+param+"="+long, arrowHeader, body)
		if status != http.StatusBadRequest || apitest.ErrorCode(out) != 13 {
			t.Fatalf("merge_insert with a long %s: %d %.300s, want 400 code 13", param, status, out)
		}
	}
}

// TestArrowSchemaCheckedFirst sends the audit's in-limit bomb (a 4.5 MB
// LZ4 body of 9M vectors, 1.04 GB decoded) to a table of another schema:
// it answers 400 code 20 from the schema message alone, decoding nothing.
// Before, the body was decoded whole first (+2 GiB of memory). The body
// with a broken batch after a good schema shows the order too: code 20
// where the schema is wrong, 13 where it is right.
func TestArrowSchemaCheckedFirst(t *testing.T) {
	s := apitest.Start(t, apitest.Options{})
	ctx := t.Context()
	if _, err := s.Client.CreateTable(ctx, []string{"t"}, arrowtest.HostileSchema,
		[]arrow.RecordBatch{arrowtest.Record(t, arrowtest.HostileSchema, arrowtest.HostileRows)}, nil); err != nil {
		t.Fatal(err)
	}
	vec := arrowtest.ZeroVectors(1, 29)
	if _, err := s.Client.CreateTable(ctx, []string{"v"}, vec.Schema(), []arrow.RecordBatch{vec}, nil); err != nil {
		t.Fatal(err)
	}
	bomb := arrowtest.VectorBomb(t, 9_000_000, 29, 1)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	status, out, _ := s.Do(t, http.MethodPost, "/v1/table/t/insert", arrowHeader, bomb)
	runtime.ReadMemStats(&after)
	if status != http.StatusBadRequest || apitest.ErrorCode(out) != 20 {
		t.Fatalf("the bomb into a table of another schema: %d %s, want 400 code 20", status, out)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 64<<20 {
		t.Fatalf("refusing its schema allocated %d MB", alloc>>20)
	}
	assertUnchanged(t, s, []string{"t"}, 1, 3)

	broken := arrowtest.Stream(t, vec.Schema(), nil)
	broken = append(broken[:len(broken)-8], bytes.Repeat([]byte{0x5a}, 256)...)
	for _, tc := range []struct {
		table string
		code  int
	}{{"t", 20}, {"v", 13}} {
		status, out, _ := s.Do(t, http.MethodPost, "/v1/table/"+tc.table+"/insert", arrowHeader, broken)
		if status != http.StatusBadRequest || apitest.ErrorCode(out) != tc.code {
			t.Fatalf("a broken batch after a schema into %s: %d %s, want 400 code %d", tc.table, status, out, tc.code)
		}
	}
	assertUnchanged(t, s, []string{"v"}, 1, 1)
}

// TestDecodeBudget checks the server-wide decode budget: a batch larger
// than all of it answers 413 code 13 without being decompressed; while an
// upload holds the budget (its first batch read, the rest of its body
// still to come), another that needs room waits, then answers 503 code 17
// with Retry-After, and so does a large JSON body; once the first is done,
// the second goes through.
func TestDecodeBudget(t *testing.T) {
	s := apitest.Start(t, apitest.Options{Tune: func(c *server.Config) {
		c.DecodeBudget = 8 << 20
		c.DecodeWait = 200 * time.Millisecond
	}})
	ctx := t.Context()
	vec := arrowtest.ZeroVectors(1, 8)
	if _, err := s.Client.CreateTable(ctx, []string{"v"}, vec.Schema(), []arrow.RecordBatch{vec}, nil); err != nil {
		t.Fatal(err)
	}
	status, out, _ := s.Do(t, http.MethodPost, "/v1/table/v/insert", arrowHeader, arrowtest.VectorBomb(t, 500_000, 8, 1)) // 16 MB
	if status != http.StatusRequestEntityTooLarge || apitest.ErrorCode(out) != 13 {
		t.Fatalf("a batch of 16 MB with a budget of 8: %d %s, want 413 code 13", status, out)
	}

	six := arrowtest.Stream(t, vec.Schema(), []arrow.RecordBatch{arrowtest.ZeroVectors(190_000, 8)}, ipc.WithLZ4()) // 6 MB
	pr, pw := io.Pipe()
	t.Cleanup(func() { pw.CloseWithError(io.ErrUnexpectedEOF) }) // a failed test must not leave the upload waiting
	// The first upload holds its batch until its stream ends: an insert
	// writes each batch as it comes (and returns its budget at once), so
	// the first upload is a merge_insert (into an empty table, where no row
	// matches), whose source rows are all needed before any can be matched.
	if _, err := s.Client.CreateTable(ctx, []string{"w"}, vec.Schema(), nil, nil); err != nil {
		t.Fatal(err)
	}
	firstPath := "/v1/table/w/merge_insert?on=v&when_not_matched_insert_all=true"
	first := make(chan int, 1)
	go func() {
		req, _ := http.NewRequest(http.MethodPost, s.URL+firstPath, pr)
		req.Header.Set("Content-Type", "application/vnd.apache.arrow.stream")
		res, err := s.HTTP.Do(req)
		if err != nil {
			first <- 0
			return
		}
		res.Body.Close()
		first <- res.StatusCode
	}()
	if _, err := pw.Write(six[:len(six)-8]); err != nil { // the schema and the batch, not the end
		t.Fatal(err)
	}
	four := arrowtest.Stream(t, vec.Schema(), []arrow.RecordBatch{arrowtest.ZeroVectors(125_000, 8)}, ipc.WithLZ4()) // 4 MB
	var h http.Header
	// Until the first upload holds its batch: on a loaded machine that can
	// take seconds, so the wait is bounded by time, not by tries.
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); {
		status, out, h = s.Do(t, http.MethodPost, "/v1/table/v/insert", arrowHeader, four)
		if status != http.StatusOK {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if status != http.StatusServiceUnavailable || apitest.ErrorCode(out) != 17 || h.Get("Retry-After") == "" {
		t.Fatalf("4 MB while 6 MB of an 8 MB budget are held: %d %s (Retry-After %q), want 503 code 17 with Retry-After",
			status, out, h.Get("Retry-After"))
	}
	// A large JSON body reserves what reading it costs before it is read,
	// whether its length is declared or not.
	big := []byte(`{"predicate": "id >= 0` + strings.Repeat(" ", 1<<20) + `"}`)
	for _, chunked := range []bool{false, true} {
		req, err := http.NewRequest(http.MethodPost, s.URL+"/v1/table/v/count_rows", bytes.NewReader(big))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		if chunked {
			req.ContentLength = -1
		}
		res, err := s.HTTP.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		out, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != http.StatusServiceUnavailable || apitest.ErrorCode(out) != 17 || res.Header.Get("Retry-After") == "" {
			t.Fatalf("a 1 MiB JSON body (chunked %v) while the budget is held: %d %s, want 503 code 17 with Retry-After", chunked, res.StatusCode, out)
		}
	}
	if _, err := pw.Write(six[len(six)-8:]); err != nil {
		t.Fatal(err)
	}
	pw.Close()
	if got := <-first; got != http.StatusOK {
		t.Fatalf("the first upload: %d", got)
	}
	if status, out, _ := s.Do(t, http.MethodPost, "/v1/table/v/insert", arrowHeader, four); status != http.StatusOK {
		t.Fatalf("4 MB once the budget is free: %d %s", status, out)
	}
}
