package server_test

// Tests of the LanceDB remote dialect (remote.go): every translation is
// exercised over HTTP through the real server, usually by sending the same
// request with and without the headers the LanceDB SDK sends.
//
// Answers are checked against openapi.yaml like everywhere else, except
// where the dialect leaves the spec on purpose; those requests name the
// reason in rtReq.unchecked.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/getkin/kin-openapi/openapi3"

	"github.com/lancens/lancens/coord"
	"github.com/lancens/lancens/gen"
	"github.com/lancens/lancens/internal/testkit/apitest"
	"github.com/lancens/lancens/internal/testkit/arrowtest"
	"github.com/lancens/lancens/server"
	"github.com/lancens/lancens/store/sqlite"
	"github.com/lancens/lancens/warehouse"
)

// rtUnchecked is a header only the test harness reads: it is removed before
// the server sees the request, and when set the answer is not checked
// against openapi.yaml. Its value says why.
const rtUnchecked = "X-Rt-Unchecked"

// Reasons for leaving an answer unchecked: the dialect's intended
// departures from the spec.
const (
	rtFlatTags    = "remote dialect: tags/list answers a flat map of tag name to contents"
	rtRemapped409 = "remote dialect: a 409 that retrying cannot fix is sent as 400 (the SDK retries 409)"
	rtRemapped404 = "remote dialect: a missing column (code 12) is sent as 400 (the SDK reads every 404 as a missing table)"
)

// rtEnv is a lancens server behind httptest, backed by files in
// t.TempDir(), whose answers are validated unless a request opts out.
type rtEnv struct {
	url  string
	http *http.Client
	spec *openapi3.T
}

func rtStart(t *testing.T) *rtEnv {
	t.Helper()
	jobsQueued := coord.NewSignal()
	db, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "lancens.db"), sqlite.Options{Synchronous: "NORMAL", OnJobQueued: jobsQueued.Notify})
	if err != nil {
		t.Fatal(err)
	}
	wh, err := warehouse.Open(t.TempDir(), "s3://bucket")
	if err != nil {
		t.Fatal(err)
	}
	st, commits := apitest.WithEngine(t, db, wh)
	services := coord.NewServices(coord.ServicesConfig{Store: st, Warehouse: wh, Committer: commits, JobsQueued: jobsQueued})
	srv, err := server.New(server.Config{Store: st, Warehouse: wh, Services: services})
	if err != nil {
		t.Fatal(err)
	}
	services.Start()
	v := apitest.NewValidator(t)
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		why := r.Header.Get(rtUnchecked)
		r.Header.Del(rtUnchecked)
		rec := httptest.NewRecorder()
		srv.ServeHTTP(rec, r)
		res := rec.Result()
		body := rec.Body.Bytes()
		if why == "" {
			if err := v.Check(r, res.StatusCode, res.Header, body); err != nil {
				t.Errorf("answer to %s %s violates openapi.yaml: %v\nbody: %.400s", r.Method, r.URL.RequestURI(), err, body)
			}
		}
		maps.Copy(w.Header(), res.Header)
		w.WriteHeader(res.StatusCode)
		_, _ = w.Write(body)
	}))
	t.Cleanup(func() {
		hs.Close()
		services.Stop()
		db.Close()
	})
	spec, err := gen.GetSpec()
	if err != nil {
		t.Fatal(err)
	}
	return &rtEnv{url: hs.URL, http: hs.Client(), spec: spec}
}

// rtSDK returns the headers the LanceDB remote client sends on every
// request when connected with hostOverride.
func rtSDK() http.Header {
	return http.Header{
		"X-Lancedb-Database": {"testdb"},
		"User-Agent":         {"LanceDB-Node-Client/0.39.0"},
		"X-Api-Key":          {"k"},
		"Accept":             {"*/*"},
		"Accept-Encoding":    {"gzip"},
	}
}

// rtReq is one request.
type rtReq struct {
	method, path string
	sdk          bool        // send the remote client's headers
	header       http.Header // further headers
	body         string      // a JSON body; "" sends none, as the SDK's body-less POSTs
	arrow        []byte      // an Arrow IPC stream, sent chunked as the SDK does
	unchecked    string      // why the answer is not checked against openapi.yaml
}

type rtResp struct {
	status int
	body   []byte
	header http.Header
}

func (r rtResp) code() int { return apitest.ErrorCode(r.body) }

// object decodes a JSON object answer.
func (r rtResp) object(t *testing.T) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(r.body, &m); err != nil || m == nil {
		t.Fatalf("answer is not a JSON object (%v): %d %s", err, r.status, r.body)
	}
	return m
}

func (e *rtEnv) send(t *testing.T, r rtReq) rtResp {
	t.Helper()
	var rd io.Reader
	switch {
	case r.arrow != nil:
		// A reader of unknown length: the body goes out chunked.
		rd = io.MultiReader(bytes.NewReader(r.arrow))
	case r.body != "":
		rd = strings.NewReader(r.body)
	}
	req, err := http.NewRequestWithContext(t.Context(), r.method, e.url+r.path, rd)
	if err != nil {
		t.Fatal(err)
	}
	if r.sdk {
		maps.Copy(req.Header, rtSDK())
	}
	switch {
	case r.arrow != nil:
		req.Header.Set("Content-Type", "application/vnd.apache.arrow.stream")
	case r.body != "":
		req.Header.Set("Content-Type", "application/json")
	}
	maps.Copy(req.Header, r.header)
	if r.unchecked != "" {
		req.Header.Set(rtUnchecked, r.unchecked)
	}
	res, err := e.http.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return rtResp{status: res.StatusCode, body: body, header: res.Header}
}

// ok sends r and fails the test unless the answer is 200.
func (e *rtEnv) ok(t *testing.T, r rtReq) rtResp {
	t.Helper()
	res := e.send(t, r)
	if res.status != http.StatusOK {
		t.Fatalf("%s %s: got %d %s, want 200", r.method, r.path, res.status, res.body)
	}
	return res
}

// rtWantError fails the test unless res is an error with this status and
// Lance code.
func rtWantError(t *testing.T, res rtResp, status, code int) {
	t.Helper()
	if res.status != status || res.code() != code {
		t.Fatalf("got %d code %d (%s), want %d code %d", res.status, res.code(), res.body, status, code)
	}
}

// conformsTo checks a JSON value against one of the spec's component
// schemas; used where only the envelope of an answer leaves the spec.
func (e *rtEnv) conformsTo(t *testing.T, schema string, raw []byte) {
	t.Helper()
	var doc any
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatalf("not JSON: %v: %s", err, raw)
	}
	if err := e.spec.Components.Schemas[schema].Value.VisitJSON(doc, openapi3.EnableJSONSchema2020()); err != nil {
		t.Fatalf("%s is not a %s: %v", raw, schema, err)
	}
}

// waitTx waits for a background transaction (an index build) to end and
// returns its status.
func (e *rtEnv) waitTx(t *testing.T, txID string) string {
	t.Helper()
	deadline := time.Now().Add(8 * time.Second)
	for {
		res := e.ok(t, rtReq{method: "POST", path: "/v1/transaction/" + url.PathEscape(txID) + "/describe", body: `{}`})
		status, _ := res.object(t)["status"].(string)
		if status != "Queued" && status != "Running" {
			return status
		}
		if time.Now().After(deadline) {
			t.Fatalf("transaction %s still %s", txID, status)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// createIndex sends a create_index request and waits for the build.
func (e *rtEnv) createIndex(t *testing.T, table, body string, sdk bool) {
	t.Helper()
	res := e.ok(t, rtReq{method: "POST", path: "/v1/table/" + table + "/create_index/", sdk: sdk, body: body})
	tx, _ := res.object(t)["transaction_id"].(string)
	if tx == "" {
		t.Fatalf("create_index answered %s", res.body)
	}
	if st := e.waitTx(t, tx); st != "Succeeded" {
		t.Fatalf("index build %s ended %s", body, st)
	}
}

// rtStream writes an Arrow IPC stream of rec.
func rtStream(t *testing.T, rec arrow.RecordBatch, opts ...ipc.Option) []byte {
	t.Helper()
	var buf bytes.Buffer
	w := ipc.NewWriter(&buf, append([]ipc.Option{ipc.WithSchema(rec.Schema())}, opts...)...)
	if err := w.Write(rec); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// Frame magic numbers of the body compressions the SDK uses.
var (
	rtLZ4Magic  = []byte{0x04, 0x22, 0x4d, 0x18}
	rtZstdMagic = []byte{0x28, 0xb5, 0x2f, 0xfd}
)

// rtLZ4 writes rec as the SDK does: an IPC stream of LZ4_FRAME-compressed
// batches.
func rtLZ4(t *testing.T, rec arrow.RecordBatch) []byte {
	t.Helper()
	b := rtStream(t, rec, ipc.WithLZ4())
	if !bytes.Contains(b, rtLZ4Magic) {
		t.Fatal("the LZ4 test body holds no LZ4 frame")
	}
	return b
}

// rtResult reads a query answer, an Arrow IPC file or stream according to
// its Content-Type.
func rtResult(t *testing.T, res rtResp) arrow.RecordBatch {
	t.Helper()
	if res.status != http.StatusOK {
		t.Fatalf("query: %d %s", res.status, res.body)
	}
	switch ct := res.header.Get("Content-Type"); ct {
	case "application/vnd.apache.arrow.file":
		return arrowFile(t, res.body)
	case "application/vnd.apache.arrow.stream":
		r, err := ipc.NewReader(bytes.NewReader(res.body))
		if err != nil {
			t.Fatal(err)
		}
		var batches []arrow.RecordBatch
		for r.Next() {
			b := r.RecordBatch()
			b.Retain()
			batches = append(batches, b)
		}
		if r.Err() != nil {
			t.Fatal(r.Err())
		}
		return arrowtest.Concat(t, r.Schema(), batches)
	default:
		t.Fatalf("query answered Content-Type %q", ct)
	}
	return nil
}

func rtFieldNames(rec arrow.RecordBatch) []string {
	var out []string
	for _, f := range rec.Schema().Fields() {
		out = append(out, f.Name)
	}
	return out
}

// rtColumn returns a result column as JSON.
func rtColumn(t *testing.T, rec arrow.RecordBatch, name string) string {
	t.Helper()
	idx := rec.Schema().FieldIndices(name)
	if len(idx) == 0 {
		t.Fatalf("result has no column %q: %v", name, rtFieldNames(rec))
	}
	b, err := json.Marshal(rec.Column(idx[0]))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// rtIDs returns the id column of a result, sorted, as JSON.
func rtIDs(t *testing.T, rec arrow.RecordBatch) string {
	t.Helper()
	idx := rec.Schema().FieldIndices("id")
	if len(idx) == 0 {
		t.Fatalf("result has no id column: %v", rtFieldNames(rec))
	}
	col := rec.Column(idx[0]).(*array.Int64)
	ids := []int64{}
	for i := 0; i < col.Len(); i++ {
		ids = append(ids, col.Value(i))
	}
	slices.Sort(ids)
	b, _ := json.Marshal(ids)
	return string(b)
}

// The docs table: text for full-text search, a small vector column.
var rtDocsSchema = arrow.NewSchema([]arrow.Field{
	{Name: "id", Type: arrow.PrimitiveTypes.Int64},
	{Name: "text", Type: arrow.BinaryTypes.String, Nullable: true},
	{Name: "label", Type: arrow.BinaryTypes.String, Nullable: true},
	{Name: "vector", Type: arrow.FixedSizeListOf(4, arrow.PrimitiveTypes.Float32), Nullable: true},
}, nil)

const rtDocsRows = `[
	{"id":1,"text":"hello world","label":"greeting","vector":[1,0,0,0]},
	{"id":2,"text":"hello there friend","label":"greeting","vector":[0,1,0,0]},
	{"id":3,"text":"goodbye world","label":"farewell","vector":[0,0,1,0]},
	{"id":4,"text":"the quick brown fox","label":"animal hello","vector":[0,0,0,1]},
	{"id":5,"text":"brown bear","label":"animal","vector":[1,1,0,0]},
	{"id":6,"text":"world peace","label":"hope","vector":[0,1,1,0]}]`

// createDocs creates the docs table under name the way the SDK does.
func (e *rtEnv) createDocs(t *testing.T, name string) {
	t.Helper()
	e.ok(t, rtReq{method: "POST", path: "/v1/table/" + name + "/create/?mode=create", sdk: true,
		arrow: rtLZ4(t, arrowtest.Record(t, rtDocsSchema, rtDocsRows))})
}

// countRows counts the rows of a table as the SDK does.
func (e *rtEnv) countRows(t *testing.T, table string) int {
	t.Helper()
	res := e.ok(t, rtReq{method: "POST", path: "/v1/table/" + table + "/count_rows/", sdk: true, body: `{"version":null}`})
	var n int
	if err := json.Unmarshal(res.body, &n); err != nil {
		t.Fatalf("count_rows answered %s, not a bare integer", res.body)
	}
	return n
}

// TestRemoteDialectDetection sends the same requests with each way of
// marking (or not marking) a request as the remote dialect.
func TestRemoteDialectDetection(t *testing.T) {
	e := rtStart(t)
	e.createDocs(t, "a")
	e.ok(t, rtReq{method: "POST", path: "/v1/namespace/n/create", body: `{}`})
	e.createDocs(t, "n$b")
	for _, tc := range []struct {
		name   string
		header http.Header
		remote bool
	}{
		{"Plain", nil, false},
		{"DatabaseHeader", http.Header{"X-Lancedb-Database": {"db"}}, true},
		{"NodeUserAgent", http.Header{"User-Agent": {"LanceDB-Node-Client/0.39.0"}}, true},
		{"PythonUserAgent", http.Header{"User-Agent": {"LanceDB-Python-Client/0.25.0"}}, true},
		{"EmptyDatabaseHeader", http.Header{"X-Lancedb-Database": {""}}, false},
		{"LowercaseUserAgent", http.Header{"User-Agent": {"lancedb-go/1.0"}}, false},
		{"UserAgentNotPrefix", http.Header{"User-Agent": {"Mozilla/5.0 LanceDB-Node-Client"}}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// GET /v1/table/: the SDK's tableNames() (root tables) in the
			// dialect, the spec's ListAllTables otherwise.
			res := e.ok(t, rtReq{method: "GET", path: "/v1/table/", header: tc.header})
			want := []any{"a", "n$b"}
			if tc.remote {
				want = []any{"a"}
			}
			if got := res.object(t)["tables"]; !slices.Equal(got.([]any), want) {
				t.Errorf("GET /v1/table/ listed %v, want %v", got, want)
			}
			if got, wantPV := res.header.Get("Phalanx-Version"), map[bool]string{true: "0.3.0"}[tc.remote]; got != wantPV {
				t.Errorf("Phalanx-Version %q, want %q", got, wantPV)
			}
			// A bare query vector is the dialect's; the spec wants an object.
			res = e.send(t, rtReq{method: "POST", path: "/v1/table/a/query/", header: tc.header, body: `{"k":10,"vector":[],"version":null}`})
			if tc.remote {
				if rows := rtResult(t, res).NumRows(); rows != 6 {
					t.Errorf("query returned %d rows, want 6", rows)
				}
			} else {
				rtWantError(t, res, 400, 13)
			}
		})
	}
}

// TestRemotePaths covers the SDK's path forms: a trailing slash on every
// table operation, POSTs without a body, and unescaped "+" in identifiers.
func TestRemotePaths(t *testing.T) {
	e := rtStart(t)
	e.createDocs(t, "t")
	for _, tc := range []struct {
		name, method, path, body, unchecked string
		wantStatus, wantCode                int // wantCode -1: success
	}{
		{"Describe", "POST", "/v1/table/t/describe/", "", "", 200, -1},
		{"DescribeVersionNull", "POST", "/v1/table/t/describe/", `{"version":null}`, "", 200, -1},
		{"Stats", "POST", "/v1/table/t/stats/", "", "", 200, -1},
		{"VersionList", "POST", "/v1/table/t/version/list/", "", "", 200, -1},
		{"IndexList", "POST", "/v1/table/t/index/list/", `{"version":null}`, "", 200, -1},
		{"TagsList", "POST", "/v1/table/t/tags/list/", "", rtFlatTags, 200, -1},
		{"CountRows", "POST", "/v1/table/t/count_rows/", `{"predicate":"id > 1","version":null}`, "", 200, -1},
		{"ListNamespacesRawDollar", "GET", "/v1/namespace/$/list", "", "", 200, -1},
		{"ListRootTablesRawDollar", "GET", "/v1/namespace/$/table/list", "", "", 200, -1},
		{"DescribeNamespace", "POST", "/v1/namespace/$/describe", `{}`, "", 200, -1},
		{"DescribeMissingTable", "POST", "/v1/table/nope/describe/", "", "", 404, 4},
		{"IndexStatsMissing", "POST", "/v1/table/t/index/nope/stats/", `{"version":null}`, "", 404, 6},
		{"IndexDropMissing", "POST", "/v1/table/t/index/nope/drop/", "", "", 404, 6},
		{"UnknownOperation", "POST", "/v1/table/t/prewarm_everything/", "", "", 404, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := e.send(t, rtReq{method: tc.method, path: tc.path, sdk: true, body: tc.body, unchecked: tc.unchecked})
			if tc.wantCode >= 0 {
				rtWantError(t, res, tc.wantStatus, tc.wantCode)
				return
			}
			if res.status != tc.wantStatus {
				t.Fatalf("got %d %s, want %d", res.status, res.body, tc.wantStatus)
			}
		})
	}
	t.Run("CountIsBareInteger", func(t *testing.T) {
		res := e.ok(t, rtReq{method: "POST", path: "/v1/table/t/count_rows/", sdk: true, body: `{"predicate":"id > 1","version":null}`})
		if string(bytes.TrimSpace(res.body)) != "5" {
			t.Fatalf("count_rows answered %s, want 5", res.body)
		}
	})
	t.Run("DropTable", func(t *testing.T) {
		e.createDocs(t, "gone")
		e.ok(t, rtReq{method: "POST", path: "/v1/table/gone/drop/", sdk: true})
		rtWantError(t, e.send(t, rtReq{method: "POST", path: "/v1/table/gone/describe/", sdk: true}), 404, 4)
	})

	// A literal "+" is a "+" to the SDK and a space to the spec's clients.
	t.Run("PlusInTableName", func(t *testing.T) {
		e.createDocs(t, "a+b")
		e.ok(t, rtReq{method: "POST", path: "/v1/table/a+b/describe/", sdk: true})
		e.ok(t, rtReq{method: "POST", path: "/v1/table/a%2Bb/describe", body: `{}`})
		rtWantError(t, e.send(t, rtReq{method: "POST", path: "/v1/table/a+b/describe", body: `{}`}), 404, 4)
		res := e.ok(t, rtReq{method: "GET", path: "/v1/namespace/%24/table/list"})
		if got := res.object(t)["tables"].([]any); !slices.Contains(got, any("a+b")) {
			t.Fatalf("root tables %v, want a+b among them", got)
		}
	})
	t.Run("PlusInNamespaceName", func(t *testing.T) {
		e.ok(t, rtReq{method: "POST", path: "/v1/namespace/x+y/create", sdk: true, body: `{}`})
		e.ok(t, rtReq{method: "POST", path: "/v1/namespace/x%2By/exists", body: `{}`})
		rtWantError(t, e.send(t, rtReq{method: "POST", path: "/v1/namespace/x+y/exists", body: `{}`}), 404, 1)
		e.createDocs(t, "x+y$c+d")
		res := e.ok(t, rtReq{method: "GET", path: "/v1/namespace/x+y/table/list", sdk: true})
		if got := res.object(t)["tables"].([]any); !slices.Equal(got, []any{"c+d"}) {
			t.Fatalf("remote listing %v, want [c+d]", got)
		}
		e.ok(t, rtReq{method: "POST", path: "/v1/table/x+y$c+d/describe/", sdk: true})
		res = e.ok(t, rtReq{method: "GET", path: "/v1/namespace/x%2By/table/list"})
		if got := res.object(t)["tables"].([]any); !slices.Equal(got, []any{"c+d"}) {
			t.Fatalf("spec listing %v, want [c+d]", got)
		}
	})
}

// TestRemoteNamespaceModes covers the quoted mode and behavior strings the
// SDK sends to namespace create and drop.
func TestRemoteNamespaceModes(t *testing.T) {
	e := rtStart(t)
	for _, tc := range []struct {
		name, path, body string
		remote           bool
		wantStatus       int
		wantCode         int // -1: success
		unchecked        string
	}{
		{"Create", "/v1/namespace/ns/create", `{"properties":{"team":"x"}}`, true, 200, -1, ""},
		{"CreateExistOkQuoted", "/v1/namespace/ns/create", `{"mode":"\"ExistOk\""}`, true, 200, -1, ""},
		{"CreateExistOkQuotedSpec", "/v1/namespace/ns/create", `{"mode":"\"ExistOk\""}`, false, 400, 13, ""},
		{"CreateExistOkPlain", "/v1/namespace/ns/create", `{"mode":"ExistOk"}`, true, 200, -1, ""},
		{"CreateNullMode", "/v1/namespace/other/create", `{"mode":null,"properties":null}`, true, 200, -1, ""},
		{"CreateAgain", "/v1/namespace/ns/create", `{}`, true, 400, 2, rtRemapped409},
		{"CreateAgainSpec", "/v1/namespace/ns/create", `{}`, false, 409, 2, ""},
		{"Describe", "/v1/namespace/ns/describe", `{}`, true, 200, -1, ""},
		{"DropMissingSkipQuoted", "/v1/namespace/missing/drop", `{"mode":"\"Skip\"","behavior":"\"Cascade\""}`, true, 200, -1, ""},
		{"DropMissingSkipQuotedSpec", "/v1/namespace/missing/drop", `{"mode":"\"Skip\"","behavior":"\"Cascade\""}`, false, 400, 13, ""},
		{"DropMissing", "/v1/namespace/missing/drop", `{}`, true, 404, 1, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := e.send(t, rtReq{method: "POST", path: tc.path, sdk: tc.remote, body: tc.body, unchecked: tc.unchecked})
			if tc.wantCode >= 0 {
				rtWantError(t, res, tc.wantStatus, tc.wantCode)
				if tc.unchecked != "" {
					e.conformsTo(t, "ErrorResponse", res.body)
				}
				return
			}
			if res.status != tc.wantStatus {
				t.Fatalf("got %d %s, want %d", res.status, res.body, tc.wantStatus)
			}
		})
	}
	res := e.ok(t, rtReq{method: "POST", path: "/v1/namespace/ns/describe", sdk: true, body: `{}`})
	if props, _ := res.object(t)["properties"].(map[string]any); props["team"] != "x" {
		t.Fatalf("properties %s: ExistOk must not have changed them", res.body)
	}
	t.Run("DropNonEmpty", func(t *testing.T) {
		e.createDocs(t, "ns$t")
		res := e.send(t, rtReq{method: "POST", path: "/v1/namespace/ns/drop", sdk: true, body: `{}`, unchecked: rtRemapped409})
		rtWantError(t, res, 400, 3)
		rtWantError(t, e.send(t, rtReq{method: "POST", path: "/v1/namespace/ns/drop", body: `{"behavior":"\"Cascade\""}`}), 400, 13)
		e.ok(t, rtReq{method: "POST", path: "/v1/namespace/ns/drop", sdk: true, body: `{"mode":"\"Fail\"","behavior":"\"Cascade\""}`})
		rtWantError(t, e.send(t, rtReq{method: "POST", path: "/v1/table/ns$t/describe/", sdk: true}), 404, 1)
		rtWantError(t, e.send(t, rtReq{method: "POST", path: "/v1/namespace/ns/exists", body: `{}`}), 404, 1)
	})
}

// TestRemoteCreateTable covers create and insert with the SDK's Arrow
// bodies (chunked IPC streams, LZ4_FRAME compressed) and its create modes.
func TestRemoteCreateTable(t *testing.T) {
	e := rtStart(t)
	all := arrowtest.Record(t, rtDocsSchema, rtDocsRows)
	two := arrowtest.Record(t, rtDocsSchema, `[{"id":7,"text":"a","label":"b","vector":[1,2,3,4]},{"id":8,"text":null,"label":null,"vector":null}]`)
	one := arrowtest.Record(t, rtDocsSchema, `[{"id":9,"text":"c","label":"d","vector":[0,0,0,0]}]`)
	zstd := rtStream(t, two, ipc.WithZstd())
	if !bytes.Contains(zstd, rtZstdMagic) {
		t.Fatal("the ZSTD test body holds no zstd frame")
	}
	for _, tc := range []struct {
		name, path  string
		remote      bool
		body        []byte
		wantStatus  int
		wantCode    int   // -1: success
		wantVersion int64 // of a successful create or insert; 0: not checked
		wantRows    int
		unchecked   string
	}{
		{"CreateLZ4", "/v1/table/t/create/?mode=create", true, rtLZ4(t, all), 200, -1, 1, 6, ""},
		{"CreateAgain", "/v1/table/t/create/?mode=create", true, rtLZ4(t, one), 400, 5, 0, 6, rtRemapped409},
		{"CreateAgainNoMode", "/v1/table/t/create/", true, rtLZ4(t, one), 400, 5, 0, 6, rtRemapped409},
		{"CreateAgainSpec", "/v1/table/t/create?mode=create", false, rtLZ4(t, one), 409, 5, 0, 6, ""},
		{"ExistOk", "/v1/table/t/create/?mode=exist_ok", true, rtLZ4(t, one), 200, -1, 0, 6, ""},
		{"OverwriteZSTD", "/v1/table/t/create/?mode=overwrite", true, zstd, 200, -1, 2, 2, ""},
		{"InsertLZ4", "/v1/table/t/insert/", true, rtLZ4(t, one), 200, -1, 3, 3, ""},
		{"InsertOverwrite", "/v1/table/t/insert/?mode=overwrite", true, rtLZ4(t, one), 200, -1, 4, 1, ""},
		{"InsertUncompressed", "/v1/table/t/insert/", true, rtStream(t, two), 200, -1, 5, 3, ""},
		{"InsertGarbage", "/v1/table/t/insert/", true, []byte("not arrow at all"), 400, 13, 0, 3, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := e.send(t, rtReq{method: "POST", path: tc.path, sdk: tc.remote, arrow: tc.body, unchecked: tc.unchecked})
			if tc.wantCode >= 0 {
				rtWantError(t, res, tc.wantStatus, tc.wantCode)
				if tc.unchecked != "" {
					e.conformsTo(t, "ErrorResponse", res.body)
				}
			} else {
				if res.status != tc.wantStatus {
					t.Fatalf("got %d %s, want %d", res.status, res.body, tc.wantStatus)
				}
				if v, _ := res.object(t)["version"].(float64); tc.wantVersion != 0 && int64(v) != tc.wantVersion {
					t.Fatalf("version %v, want %d (%s)", v, tc.wantVersion, res.body)
				}
			}
			if n := e.countRows(t, "t"); n != tc.wantRows {
				t.Fatalf("%d rows, want %d", n, tc.wantRows)
			}
		})
	}
	t.Run("EmptyTable", func(t *testing.T) {
		// createEmptyTable: a schema and one batch of no rows.
		e.ok(t, rtReq{method: "POST", path: "/v1/table/empty/create/?mode=create", sdk: true,
			arrow: rtLZ4(t, arrowtest.Record(t, rtDocsSchema, `[]`))})
		if n := e.countRows(t, "empty"); n != 0 {
			t.Fatalf("%d rows", n)
		}
		fields := e.ok(t, rtReq{method: "POST", path: "/v1/table/empty/describe/", sdk: true}).object(t)["schema"].(map[string]any)["fields"].([]any)
		if len(fields) != 4 {
			t.Fatalf("schema of the empty table: %v", fields)
		}
	})
}

// rtTypeSig writes a JSON data type compactly: name, [length], (unit,
// timezone) and <children>.
func rtTypeSig(v any) string {
	m, _ := v.(map[string]any)
	s, _ := m["type"].(string)
	if l, ok := m["length"].(float64); ok {
		s += fmt.Sprintf("[%d]", int64(l))
	}
	if u, ok := m["unit"].(string); ok {
		s += "(" + u
		if tz, ok := m["timezone"].(string); ok {
			s += "," + tz
		}
		s += ")"
	}
	if fs, ok := m["fields"].([]any); ok {
		var kids []string
		for _, f := range fs {
			fm, _ := f.(map[string]any)
			kids = append(kids, fmt.Sprint(fm["name"])+":"+rtTypeSig(fm["type"]))
		}
		s += "<" + strings.Join(kids, ",") + ">"
	}
	return s
}

// rtSchemaSigs maps field names to type signatures of a describe answer,
// which must carry a version and a schema.
func rtSchemaSigs(t *testing.T, res rtResp) (int64, map[string]string) {
	t.Helper()
	m := res.object(t)
	v, ok := m["version"].(float64)
	schema, _ := m["schema"].(map[string]any)
	fields, _ := schema["fields"].([]any)
	if !ok || fields == nil {
		t.Fatalf("describe answer without version or schema: %s", res.body)
	}
	out := map[string]string{}
	for _, f := range fields {
		fm := f.(map[string]any)
		out[fm["name"].(string)] = rtTypeSig(fm["type"])
	}
	return int64(v), out
}

// TestRemoteDescribe checks that describe always answers version and schema,
// with Lance's type names in the dialect and the spec's otherwise.
func TestRemoteDescribe(t *testing.T) {
	e := rtStart(t)
	cases := []struct {
		name       string
		dt         arrow.DataType
		lance, spc string
	}{
		{"i64", arrow.PrimitiveTypes.Int64, "int64", "int64"},
		{"u8", arrow.PrimitiveTypes.Uint8, "uint8", "uint8"},
		{"f16", arrow.FixedWidthTypes.Float16, "halffloat", "float16"},
		{"f32", arrow.PrimitiveTypes.Float32, "float", "float32"},
		{"f64", arrow.PrimitiveTypes.Float64, "double", "float64"},
		{"s", arrow.BinaryTypes.String, "string", "utf8"},
		{"ls", arrow.BinaryTypes.LargeString, "large_string", "large_utf8"},
		{"b", arrow.FixedWidthTypes.Boolean, "bool", "bool"},
		{"bin", arrow.BinaryTypes.Binary, "binary", "binary"},
		{"fsb", &arrow.FixedSizeBinaryType{ByteWidth: 3}, "fixed_size_binary[3]", "fixed_size_binary[3]"},
		{"d32", arrow.FixedWidthTypes.Date32, "date32:day", "date32"},
		{"d64", arrow.FixedWidthTypes.Date64, "date64:ms", "date64"},
		{"ts_utc", &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}, "timestamp:us:UTC", "timestamp(us,UTC)"},
		{"ts_naive", &arrow.TimestampType{Unit: arrow.Nanosecond}, "timestamp:ns:-", "timestamp(ns)"},
		{"t32", arrow.FixedWidthTypes.Time32s, "time32:s", "time32(s)"},
		{"t64", arrow.FixedWidthTypes.Time64us, "time64:us", "time64(us)"},
		{"dur", arrow.FixedWidthTypes.Duration_ms, "duration:ms", "duration(ms)"},
		{"dec", &arrow.Decimal128Type{Precision: 10, Scale: 2}, "decimal:128:10:2", "decimal128[10002]"},
		{"vec", arrow.FixedSizeListOf(4, arrow.PrimitiveTypes.Float32), "fixed_size_list[4]<item:float>", "fixed_size_list[4]<item:float32>"},
		{"lst", arrow.ListOf(arrow.PrimitiveTypes.Float64), "list<item:double>", "list<item:float64>"},
		{"st", arrow.StructOf(arrow.Field{Name: "x", Type: arrow.BinaryTypes.String, Nullable: true},
			arrow.Field{Name: "y", Type: arrow.FixedWidthTypes.Float16, Nullable: true}), "struct<x:string,y:halffloat>", "struct<x:utf8,y:float16>"},
	}
	var pairs []any
	for _, tc := range cases {
		pairs = append(pairs, tc.name, tc.dt)
	}
	schema := arrowtest.Schema(pairs...)
	e.ok(t, rtReq{method: "POST", path: "/v1/table/types/create/", sdk: true, arrow: rtLZ4(t, arrowtest.Record(t, schema, `[]`))})

	_, remote := rtSchemaSigs(t, e.ok(t, rtReq{method: "POST", path: "/v1/table/types/describe/", sdk: true}))
	_, spec := rtSchemaSigs(t, e.ok(t, rtReq{method: "POST", path: "/v1/table/types/describe", body: `{}`}))
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if remote[tc.name] != tc.lance {
				t.Errorf("remote describe: %s, want %s", remote[tc.name], tc.lance)
			}
			if spec[tc.name] != tc.spc {
				t.Errorf("spec describe: %s, want %s", spec[tc.name], tc.spc)
			}
		})
	}

	t.Run("Versions", func(t *testing.T) {
		e.createDocs(t, "d")
		e.ok(t, rtReq{method: "POST", path: "/v1/table/d/add_columns/", sdk: true, body: `{"new_columns":[{"name":"double_id","expression":"id * 2"}]}`})
		for _, tc := range []struct {
			name, body  string
			wantVersion int64
			wantField   bool // double_id in the schema
		}{
			{"NoBody", "", 2, true},
			{"LatestNull", `{"version":null}`, 2, true},
			{"Checkout1", `{"version":1}`, 1, false},
			{"Checkout2", `{"version":2}`, 2, true},
		} {
			t.Run(tc.name, func(t *testing.T) {
				v, sigs := rtSchemaSigs(t, e.ok(t, rtReq{method: "POST", path: "/v1/table/d/describe/", sdk: true, body: tc.body}))
				if _, has := sigs["double_id"]; v != tc.wantVersion || has != tc.wantField || sigs["vector"] != "fixed_size_list[4]<item:float>" {
					t.Fatalf("version %d fields %v, want version %d with double_id %v", v, sigs, tc.wantVersion, tc.wantField)
				}
			})
		}
		rtWantError(t, e.send(t, rtReq{method: "POST", path: "/v1/table/d/describe/", sdk: true, body: `{"version":99}`}), 404, 11)
	})
}

// TestRemoteQuery sends the SDK's query bodies (bare vector, columns and
// full_text_query forms, unlimited k) and the same bodies without the
// dialect's headers.
func TestRemoteQuery(t *testing.T) {
	e := rtStart(t)
	e.createDocs(t, "docs")
	// The SDK's FTS index request, with its extra tokenizer options.
	e.createIndex(t, "docs", `{"column":"text","index_type":"FTS","with_position":true,"base_tokenizer":"simple","language":"English",`+
		`"max_token_length":40,"lower_case":true,"stem":true,"remove_stop_words":true,"ascii_folding":true,"min_ngram_length":3,`+
		`"max_ngram_length":3,"prefix_only":false}`, true)
	e.createIndex(t, "docs", `{"column":"label","index_type":"INVERTED"}`, true)

	vectorKeys := `"ef":null,"lower_bound":null,"upper_bound":null,"refine_factor":null,"minimum_nprobes":20,"maximum_nprobes":20,"nprobes":20,"prefilter":true,"version":null`
	for _, tc := range []struct {
		name, body string
		wantIDs    string   // sorted
		wantCols   []string // exact result columns; nil: not checked
		specCode   int      // code of the same body without the dialect (-1: success)
	}{
		{"ScanUnlimited", `{"k":9223372036854775807,"prefilter":true,"vector":[],"version":null}`, `[1,2,3,4,5,6]`, []string{"id", "text", "label", "vector"}, 13},
		{"ScanNoVectorKey", `{"k":9223372036854775807,"filter":"id < 3"}`, `[1,2]`, nil, -1},
		{"ColumnsList", `{"columns":["id","text"],"filter":"id >= 2","k":2,"offset":1,"prefilter":true,"vector":[],"version":null}`, `[3,4]`, []string{"id", "text"}, 13},
		{"ColumnsAliases", `{"columns":{"t":"text","id":"id","id2":"id * 2"},"k":2,"prefilter":true,"vector":[],"version":null}`, `[1,2]`, []string{"t", "id", "id2"}, 13},
		{"ColumnsSpecForm", `{"columns":{"column_names":["id","label"]},"k":1,"vector":null}`, `[1]`, []string{"id", "label"}, -1},
		{"AliasesSpecForm", `{"columns":{"column_aliases":{"l":"label","id":"id"}},"k":1,"vector":null}`, `[1]`, []string{"l", "id"}, -1},
		{"OrderBy", `{"k":2,"order_by":[{"ascending":false,"column_name":"id","nulls_first":false}],"prefilter":true,"vector":[],"version":null}`, ``, nil, 13},
		{"VectorL2", `{"columns":["id"],"distance_type":"l2","k":2,"vector":[1.0,0.0,0.0,0.0],` + vectorKeys + `}`, `[1,5]`, []string{"id", "_distance"}, 13},
		{"VectorCosineColumn", `{"columns":["id"],"distance_type":"cosine","vector_column":"vector","k":1,"vector":[3.0,3.0,0.0,0.0],` + vectorKeys + `}`, `[5]`, []string{"id", "_distance"}, 13},
		{"VectorBypassIndex", `{"columns":["id"],"bypass_vector_index":true,"k":1,"vector":[0,0,1,0],` + vectorKeys + `}`, `[3]`, nil, 13},
		{"VectorWithRowID", `{"columns":["id"],"k":1,"vector":[0,0,0,1],"with_row_id":true,` + vectorKeys + `}`, `[4]`, []string{"id", "_distance", "_rowid"}, 13},
		{"MultiVector", `{"columns":["id"],"k":1,"vector":[[1,0,0,0],[0,0,1,0]],` + vectorKeys + `}`, `[1,3]`, nil, 13},
		{"VectorSpecForm", `{"columns":{"column_names":["id"]},"k":1,"vector":{"single_vector":[0,1,0,0]}}`, `[2]`, nil, -1},
		{"FtsLegacy", `{"full_text_query":{"columns":["text"],"query":"hello"},"k":10,"prefilter":true,"vector":[],"version":null}`, `[1,2]`, nil, 13},
		{"FtsLegacyAllColumns", `{"full_text_query":{"query":"hello"},"k":10,"vector":[]}`, `[1,2,4]`, nil, 13},
		{"FtsLegacyNullColumns", `{"full_text_query":{"columns":null,"query":"hello"},"k":10,"vector":[]}`, `[1,2,4]`, nil, 13},
		{"FtsMatch", `{"full_text_query":{"query":{"match":{"terms":"world","column":"text","boost":1.0,"fuzziness":0,"max_expansions":50,"operator":"Or","prefix_length":0}}},"k":10,"vector":[]}`, `[1,3,6]`, nil, 13},
		{"FtsMatchNullColumn", `{"full_text_query":{"query":{"match":{"terms":"hello","column":null,"boost":1.0,"fuzziness":0,"max_expansions":50,"operator":"Or","prefix_length":0}}},"k":10,"vector":[]}`, `[1,2,4]`, nil, 13},
		{"FtsMatchAnd", `{"full_text_query":{"query":{"match":{"terms":"hello world","column":"text","operator":"And"}}},"k":10,"vector":[]}`, `[1]`, nil, 13},
		{"FtsPhrase", `{"full_text_query":{"query":{"phrase":{"terms":"brown fox","column":"text","slop":0}}},"k":10,"vector":[]}`, `[4]`, nil, 13},
		{"FtsMultiMatch", `{"full_text_query":{"query":{"multi_match":{"query":"hello","columns":["text","label"],"boost":[1.0,2.0]}}},"k":10,"vector":[]}`, `[1,2,4]`, nil, 13},
		{"FtsMultiMatchNoBoost", `{"full_text_query":{"query":{"multi_match":{"query":"animal","columns":["text","label"]}}},"k":10,"vector":[]}`, `[4,5]`, nil, 13},
		{"FtsBoost", `{"full_text_query":{"query":{"boost":{"positive":{"match":{"terms":"world","column":"text"}},"negative":{"match":{"terms":"peace","column":"text"}},"negative_boost":0.3}}},"k":10,"vector":[]}`, `[1,3,6]`, nil, 13},
		{"FtsBooleanNoShould", `{"full_text_query":{"query":{"boolean":{"must":[{"match":{"terms":"world","column":"text"}}],"must_not":[{"match":{"terms":"goodbye","column":"text"}}]}}},"k":10,"vector":[]}`, `[1,6]`, nil, 13},
		{"FtsBooleanNestedMultiMatch", `{"full_text_query":{"query":{"boolean":{"should":[{"multi_match":{"query":"fox","columns":["text","label"]}}],"must":[],"must_not":[]}}},"k":10,"vector":[]}`, `[4]`, nil, 13},
		{"FtsSpecForm", `{"full_text_query":{"string_query":{"query":"hello","columns":["text"]}},"k":10,"vector":null}`, `[1,2]`, nil, -1},
		{"FtsStructuredSpecForm", `{"full_text_query":{"structured_query":{"query":{"multi_match":{"match_queries":[{"terms":"hello","column":"label"}]}}}},"k":10,"vector":null}`, `[4]`, nil, -1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := rtResult(t, e.send(t, rtReq{method: "POST", path: "/v1/table/docs/query/", sdk: true, body: tc.body}))
			if tc.wantIDs != "" {
				if got := rtIDs(t, rec); got != tc.wantIDs {
					t.Errorf("ids %s, want %s", got, tc.wantIDs)
				}
			}
			if tc.wantCols != nil && !slices.Equal(rtFieldNames(rec), tc.wantCols) {
				t.Errorf("columns %v, want %v", rtFieldNames(rec), tc.wantCols)
			}
			spec := e.send(t, rtReq{method: "POST", path: "/v1/table/docs/query", body: tc.body})
			if tc.specCode >= 0 {
				rtWantError(t, spec, 400, tc.specCode)
			} else if spec.status != 200 {
				t.Errorf("without the dialect: %d %s", spec.status, spec.body)
			}
		})
	}
	t.Run("Details", func(t *testing.T) {
		q := func(body string) arrow.RecordBatch {
			return rtResult(t, e.send(t, rtReq{method: "POST", path: "/v1/table/docs/query/", sdk: true, body: body}))
		}
		if got := rtColumn(t, q(`{"columns":{"t":"text","id2":"id * 2"},"k":2,"vector":[]}`), "id2"); got != `[2,4]` {
			t.Errorf("alias expression id2 = %s", got)
		}
		l2 := q(`{"columns":["id"],"distance_type":"l2","k":1,"vector":[2,0,0,0]}`)
		cos := q(`{"columns":["id"],"distance_type":"cosine","k":1,"vector":[2,0,0,0]}`)
		if rtColumn(t, l2, "id") != `[1]` || rtColumn(t, l2, "_distance") != `[1]` || rtColumn(t, cos, "_distance") != `[0]` {
			t.Errorf("distance_type not applied: l2 %s %s, cosine %s", rtColumn(t, l2, "id"), rtColumn(t, l2, "_distance"), rtColumn(t, cos, "_distance"))
		}
		multi := q(`{"columns":["id"],"k":1,"vector":[[1,0,0,0],[0,0,1,0]]}`)
		if !slices.Contains(rtFieldNames(multi), "query_index") {
			t.Errorf("multi-vector result without query_index: %v", rtFieldNames(multi))
		}
	})
	t.Run("FtsUnlimitedK", func(t *testing.T) {
		var rows []string
		for i := range 12 {
			rows = append(rows, fmt.Sprintf(`{"id":%d,"text":"hello number %d"}`, i, i))
		}
		e.ok(t, rtReq{method: "POST", path: "/v1/table/many/create/", sdk: true, arrow: rtLZ4(t, arrowtest.Record(t, rtDocsSchema, "["+strings.Join(rows, ",")+"]"))})
		e.createIndex(t, "many", `{"column":"text","index_type":"FTS"}`, true)
		unlimited := `"k":9223372036854775807`
		spec := rtResult(t, e.send(t, rtReq{method: "POST", path: "/v1/table/many/query",
			body: `{"full_text_query":{"string_query":{"query":"hello","columns":["text"]}},` + unlimited + `,"vector":null}`}))
		if spec.NumRows() != 12 {
			t.Fatalf("without the dialect an unlimited full-text query returned %d rows, want 12", spec.NumRows())
		}
		remote := rtResult(t, e.send(t, rtReq{method: "POST", path: "/v1/table/many/query/", sdk: true,
			body: `{"full_text_query":{"columns":["text"],"query":"hello"},` + unlimited + `,"prefilter":true,"vector":[],"version":null}`}))
		if remote.NumRows() != 12 {
			t.Fatalf("unlimited full-text query returned %d rows, want 12", remote.NumRows())
		}
	})
	t.Run("OrderByApplied", func(t *testing.T) {
		rec := rtResult(t, e.send(t, rtReq{method: "POST", path: "/v1/table/docs/query/", sdk: true,
			body: `{"k":2,"order_by":[{"ascending":false,"column_name":"id","nulls_first":false}],"vector":[]}`}))
		if got := rtColumn(t, rec, "id"); got != `[6,5]` {
			t.Fatalf("order_by: ids %s, want [6,5]", got)
		}
	})
	t.Run("ColumnsAliasNamedColumnX", func(t *testing.T) {
		rec := rtResult(t, e.send(t, rtReq{method: "POST", path: "/v1/table/docs/query/", sdk: true,
			body: `{"columns":{"column_a":"id"},"k":1,"vector":[]}`}))
		if got := rtFieldNames(rec); !slices.Equal(got, []string{"column_a"}) {
			t.Fatalf(`the alias map {"column_a":"id"} selected columns %v`, got)
		}
	})
}

// TestRemoteExplainAnalyze covers the query nested in explain_plan and the
// flat one of analyze_plan.
func TestRemoteExplainAnalyze(t *testing.T) {
	e := rtStart(t)
	e.createDocs(t, "docs")
	for _, tc := range []struct {
		name, path, body string
	}{
		{"Explain", "explain_plan", `{"verbose":false,"query":{"columns":["id"],"k":2,"vector":[1,0,0,0],"ef":null,"prefilter":true,"version":null}}`},
		{"ExplainVerboseScan", "explain_plan", `{"verbose":true,"query":{"k":9223372036854775807,"filter":"id > 1","vector":[],"version":null}}`},
		{"ExplainAliases", "explain_plan", `{"verbose":false,"query":{"columns":{"x":"id"},"k":3,"vector":[]}}`},
		{"Analyze", "analyze_plan", `{"columns":["id"],"k":2,"vector":[1,0,0,0],"ef":null,"prefilter":true,"version":null}`},
		{"AnalyzeScan", "analyze_plan", `{"k":9223372036854775807,"vector":[],"version":null}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := e.ok(t, rtReq{method: "POST", path: "/v1/table/docs/" + tc.path + "/", sdk: true, body: tc.body})
			var plan string
			if err := json.Unmarshal(res.body, &plan); err != nil || plan == "" {
				t.Fatalf("answer %s is not a JSON string", res.body)
			}
			rtWantError(t, e.send(t, rtReq{method: "POST", path: "/v1/table/docs/" + tc.path, body: tc.body}), 400, 13)
		})
	}
}

// indexDistance returns the distance_type an index reports.
func (e *rtEnv) indexDistance(t *testing.T, table, index string) string {
	t.Helper()
	res := e.ok(t, rtReq{method: "POST", path: "/v1/table/" + table + "/index/" + index + "/stats/", sdk: true, body: `{"version":null}`})
	d, _ := res.object(t)["distance_type"].(string)
	return d
}

// TestRemoteCreateIndex covers metric_type (the SDK's name for
// distance_type) and the SDK's replace-by-default create_index.
func TestRemoteCreateIndex(t *testing.T) {
	e := rtStart(t)
	schema := arrowtest.Schema("id", arrow.PrimitiveTypes.Int64, "category", arrow.PrimitiveTypes.Int64,
		"vector", arrow.FixedSizeListOf(4, arrow.PrimitiveTypes.Float32))
	var rows []string
	for i := range 300 {
		rows = append(rows, fmt.Sprintf(`{"id":%d,"category":%d,"vector":[%d,%d,%d,%d]}`, i, i%3, 1+i%7, 1+i%11, 1+i%13, 1+i%5))
	}
	e.ok(t, rtReq{method: "POST", path: "/v1/table/v/create/", sdk: true, arrow: rtLZ4(t, arrowtest.Record(t, schema, "["+strings.Join(rows, ",")+"]"))})
	pq := `"column":"vector","index_type":"IVF_PQ","num_partitions":2,"num_sub_vectors":2,"max_iterations":50,"sample_rate":256`

	for _, tc := range []struct {
		name, index, body string
		remote            bool
		wantDistance      string
	}{
		{"MetricType", "vidx", `{"name":"vidx",` + pq + `,"metric_type":"cosine"}`, true, "cosine"},
		{"ReplaceSameName", "vidx", `{"name":"vidx",` + pq + `,"metric_type":"dot"}`, true, "dot"},
		{"DistanceTypeWins", "vidx", `{"name":"vidx",` + pq + `,"metric_type":"dot","distance_type":"cosine"}`, true, "cosine"},
		{"SpecIgnoresMetricType", "spec_idx", `{"name":"spec_idx",` + pq + `,"metric_type":"cosine"}`, false, "l2"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e.createIndex(t, "v", tc.body, tc.remote)
			if got := e.indexDistance(t, "v", tc.index); got != tc.wantDistance {
				t.Fatalf("distance_type %q, want %q", got, tc.wantDistance)
			}
		})
	}
	t.Run("DefaultNameReplaced", func(t *testing.T) {
		// The SDK sends no name: the default name is replaced too.
		e.createIndex(t, "v", `{"column":"id","index_type":"BTREE"}`, true)
		e.createIndex(t, "v", `{"column":"id","index_type":"BTREE"}`, true)
		rtWantError(t, e.send(t, rtReq{method: "POST", path: "/v1/table/v/create_index", body: `{"column":"id","index_type":"BTREE"}`}), 409, 7)
	})
	t.Run("ScalarIndexReplaced", func(t *testing.T) {
		body := `{"column":"category","index_type":"BITMAP","name":"categories"}`
		for range 2 {
			res := e.ok(t, rtReq{method: "POST", path: "/v1/table/v/create_scalar_index/", sdk: true, body: body})
			if tx, _ := res.object(t)["transaction_id"].(string); tx != "" {
				if st := e.waitTx(t, tx); st != "Succeeded" {
					t.Fatalf("build ended %s", st)
				}
			}
		}
		rtWantError(t, e.send(t, rtReq{method: "POST", path: "/v1/table/v/create_scalar_index", body: body}), 409, 7)
	})
	t.Run("SpecNeverReplaces", func(t *testing.T) {
		rtWantError(t, e.send(t, rtReq{method: "POST", path: "/v1/table/v/create_index", body: `{"name":"vidx",` + pq + `}`}), 409, 7)
		if got := e.indexDistance(t, "v", "vidx"); got != "cosine" {
			t.Fatalf("a refused create changed the index: distance_type %q", got)
		}
	})
	t.Run("List", func(t *testing.T) {
		res := e.ok(t, rtReq{method: "POST", path: "/v1/table/v/index/list/", sdk: true, body: `{"version":null}`})
		var names []string
		for _, ix := range res.object(t)["indexes"].([]any) {
			names = append(names, ix.(map[string]any)["index_name"].(string))
		}
		slices.Sort(names)
		if !slices.Equal(names, []string{"categories", "id_idx", "spec_idx", "vidx"}) {
			t.Fatalf("indexes %v", names)
		}
	})
	t.Run("Drop", func(t *testing.T) {
		e.ok(t, rtReq{method: "POST", path: "/v1/table/v/index/spec_idx/drop/", sdk: true})
		rtWantError(t, e.send(t, rtReq{method: "POST", path: "/v1/table/v/index/spec_idx/stats/", sdk: true, body: `{"version":null}`}), 404, 6)
	})
}

// TestRemoteAlterColumns covers Lance type names in alter_columns.
func TestRemoteAlterColumns(t *testing.T) {
	e := rtStart(t)
	schema := arrowtest.Schema("a", arrow.PrimitiveTypes.Int32, "b", arrow.PrimitiveTypes.Int64, "c", arrow.BinaryTypes.String,
		"d", arrow.PrimitiveTypes.Int32, "e", arrow.PrimitiveTypes.Int32, "f", arrow.BinaryTypes.String, "g", arrow.PrimitiveTypes.Int64,
		"h", arrow.PrimitiveTypes.Float64, "i", arrow.PrimitiveTypes.Int64)
	e.ok(t, rtReq{method: "POST", path: "/v1/table/t/create/", sdk: true, arrow: rtLZ4(t, arrowtest.Record(t, schema,
		`[{"a":1,"b":2,"c":"2024-01-02","d":4,"e":5,"f":"x","g":7,"h":1.5,"i":9}]`))})
	for _, tc := range []struct {
		col, lanceType string // the SDK's data_type
		specKnows      bool   // whether the spec's parser knows the name too
		wantLance      string // type in the remote describe
		wantSpec       string // type in the spec describe
		wantValue      string // the value read back
	}{
		{"a", `{"type":"double"}`, false, "double", "float64", `[1]`},
		{"b", `{"type":"string"}`, false, "string", "utf8", `["2"]`},
		{"c", `{"type":"date32:day"}`, false, "date32:day", "date32", `["2024-01-02"]`},
		{"d", `{"type":"float"}`, false, "float", "float32", `[4]`},
		{"e", `{"type":"decimal:128:10:2"}`, false, "decimal:128:10:2", "decimal128[10002]", `["5"]`}, // Arrow's JSON drops the trailing zeros
		{"f", `{"type":"large_string"}`, false, "large_string", "large_utf8", `["x"]`},
		{"g", `{"type":"int32"}`, true, "int32", "int32", `[7]`},
		{"h", `{"type":"halffloat"}`, false, "halffloat", "float16", `[1.5]`},
		{"i", `{"type":"boolean"}`, true, "bool", "bool", `[true]`},
	} {
		t.Run(tc.col+"_"+tc.wantLance, func(t *testing.T) {
			body := `{"alterations":[{"path":"` + tc.col + `","data_type":` + tc.lanceType + `}]}`
			if !tc.specKnows {
				// Without the dialect a Lance-only name is no type, and
				// nothing changes.
				rtWantError(t, e.send(t, rtReq{method: "POST", path: "/v1/table/t/alter_columns", body: body}), 400, 13)
			}
			e.ok(t, rtReq{method: "POST", path: "/v1/table/t/alter_columns/", sdk: true, body: body})
			_, remote := rtSchemaSigs(t, e.ok(t, rtReq{method: "POST", path: "/v1/table/t/describe/", sdk: true}))
			_, specSigs := rtSchemaSigs(t, e.ok(t, rtReq{method: "POST", path: "/v1/table/t/describe", body: `{}`}))
			if remote[tc.col] != tc.wantLance || specSigs[tc.col] != tc.wantSpec {
				t.Fatalf("column %s is %s (remote) / %s (spec), want %s / %s", tc.col, remote[tc.col], specSigs[tc.col], tc.wantLance, tc.wantSpec)
			}
			rec := rtResult(t, e.send(t, rtReq{method: "POST", path: "/v1/table/t/query/", sdk: true, body: `{"columns":["` + tc.col + `"],"k":1,"vector":[]}`}))
			if got := rtColumn(t, rec, tc.col); got != tc.wantValue {
				t.Fatalf("value %s, want %s", got, tc.wantValue)
			}
		})
	}
	t.Run("RenameAndNullable", func(t *testing.T) {
		e.ok(t, rtReq{method: "POST", path: "/v1/table/t/alter_columns/", sdk: true, body: `{"alterations":[{"path":"a","rename":"a2","nullable":true}]}`})
		_, sigs := rtSchemaSigs(t, e.ok(t, rtReq{method: "POST", path: "/v1/table/t/describe/", sdk: true}))
		if sigs["a2"] != "double" {
			t.Fatalf("after rename: %v", sigs)
		}
	})
	t.Run("UnknownLanceType", func(t *testing.T) {
		rtWantError(t, e.send(t, rtReq{method: "POST", path: "/v1/table/t/alter_columns/", sdk: true,
			body: `{"alterations":[{"path":"b","data_type":{"type":"no_such_type"}}]}`}), 400, 13)
	})
}

// TestRemoteTags covers the flat map tags/list answers in the dialect.
func TestRemoteTags(t *testing.T) {
	e := rtStart(t)
	e.createDocs(t, "t")
	res := e.ok(t, rtReq{method: "POST", path: "/v1/table/t/tags/list/", sdk: true, unchecked: rtFlatTags})
	if strings.TrimSpace(string(res.body)) != "{}" {
		t.Fatalf("tags of an untagged table: %s, want {}", res.body)
	}
	e.ok(t, rtReq{method: "POST", path: "/v1/table/t/insert/", sdk: true, arrow: rtLZ4(t, arrowtest.Record(t, rtDocsSchema, `[{"id":9}]`))})
	e.ok(t, rtReq{method: "POST", path: "/v1/table/t/tags/create/", sdk: true, body: `{"tag":"v1tag","version":1}`})
	e.ok(t, rtReq{method: "POST", path: "/v1/table/t/tags/create/", sdk: true, body: `{"tag":"latest","version":2}`})
	rtWantError(t, e.send(t, rtReq{method: "POST", path: "/v1/table/t/tags/create/", sdk: true, body: `{"tag":"v1tag","version":2}`, unchecked: rtRemapped409}), 400, 9)
	rtWantError(t, e.send(t, rtReq{method: "POST", path: "/v1/table/t/tags/create", body: `{"tag":"v1tag","version":2}`}), 409, 9)

	list := func() map[string]map[string]any {
		t.Helper()
		res := e.ok(t, rtReq{method: "POST", path: "/v1/table/t/tags/list/", sdk: true, unchecked: rtFlatTags})
		var flat map[string]json.RawMessage
		if err := json.Unmarshal(res.body, &flat); err != nil {
			t.Fatalf("tags/list: %s", res.body)
		}
		out := map[string]map[string]any{}
		for name, raw := range flat {
			// Only the envelope leaves the spec: each entry is a TagContents.
			e.conformsTo(t, "TagContents", raw)
			var m map[string]any
			_ = json.Unmarshal(raw, &m)
			out[name] = m
		}
		return out
	}
	tags := list()
	if len(tags) != 2 || tags["v1tag"]["version"] != 1.0 || tags["latest"]["version"] != 2.0 {
		t.Fatalf("tags %v", tags)
	}
	if _, ok := tags["v1tag"]["manifestSize"].(float64); !ok {
		t.Fatalf("no camelCase manifestSize (the SDK requires it): %v", tags["v1tag"])
	}
	// The spec's answer wraps the same map, a page at a time; the flat map
	// has no page token, so it holds every page.
	spec := e.ok(t, rtReq{method: "POST", path: "/v1/table/t/tags/list", body: `{}`})
	if st, _ := spec.object(t)["tags"].(map[string]any); len(st) != 2 {
		t.Fatalf("spec tags/list: %s", spec.body)
	}
	paged := e.ok(t, rtReq{method: "POST", path: "/v1/table/t/tags/list?limit=1", body: `{}`})
	if st, _ := paged.object(t)["tags"].(map[string]any); len(st) != 1 || paged.object(t)["page_token"] == nil {
		t.Fatalf("spec tags/list with limit 1: %s", paged.body)
	}
	flat := e.ok(t, rtReq{method: "POST", path: "/v1/table/t/tags/list/?limit=1", sdk: true, unchecked: rtFlatTags})
	var all map[string]json.RawMessage
	if err := json.Unmarshal(flat.body, &all); err != nil || len(all) != 2 {
		t.Fatalf("remote tags/list with limit 1: %s", flat.body)
	}
	for _, tc := range []struct {
		name, op, body string
		wantStatus     int
		wantCode       int // -1: success
	}{
		{"Version", "tags/version", `{"tag":"v1tag"}`, 200, -1},
		{"VersionMissing", "tags/version", `{"tag":"nope"}`, 404, 8},
		{"Update", "tags/update", `{"tag":"v1tag","version":2}`, 200, -1},
		{"Delete", "tags/delete", `{"tag":"latest"}`, 200, -1},
		{"DeleteMissing", "tags/delete", `{"tag":"latest"}`, 404, 8},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := e.send(t, rtReq{method: "POST", path: "/v1/table/t/" + tc.op + "/", sdk: true, body: tc.body})
			if tc.wantCode >= 0 {
				rtWantError(t, res, tc.wantStatus, tc.wantCode)
				return
			}
			if res.status != tc.wantStatus {
				t.Fatalf("got %d %s", res.status, res.body)
			}
		})
	}
	if tags := list(); len(tags) != 1 || tags["v1tag"]["version"] != 2.0 {
		t.Fatalf("after update and delete: %v", tags)
	}
}

// TestRemoteUpdateDelete covers rows_updated and num_deleted_rows, the
// counts the SDK reads.
func TestRemoteUpdateDelete(t *testing.T) {
	e := rtStart(t)
	e.createDocs(t, "t")
	for _, tc := range []struct {
		name, op, body string
		remote         bool
		wantVersion    float64
		count          string  // the field carrying the row count
		wantCount      float64 // its value
		absent         string  // a dialect-only field that must be absent
		wantRows       int     // rows left
	}{
		{"Update", "update", `{"predicate":"id = 1","updates":[["text","'updated'"]]}`, true, 2, "rows_updated", 1, "", 6},
		{"UpdateAlsoSpecCount", "update", `{"predicate":"id <= 2","updates":[["label","'x'"]]}`, true, 3, "updated_rows", 2, "", 6},
		{"UpdateNullPredicate", "update", `{"predicate":null,"updates":[["label","'all'"]]}`, true, 4, "rows_updated", 6, "", 6},
		{"UpdateNoMatch", "update", `{"predicate":"id > 100","updates":[["label","'none'"]]}`, true, 0, "rows_updated", 0, "", 6},
		{"UpdateSpec", "update", `{"predicate":"id = 2","updates":[["text","'spec'"]]}`, false, 0, "updated_rows", 1, "rows_updated", 6},
		{"Delete", "delete", `{"predicate":"id > 4"}`, true, 0, "num_deleted_rows", 2, "", 4},
		{"DeleteNoMatch", "delete", `{"predicate":"id > 100"}`, true, 0, "num_deleted_rows", 0, "", 4},
		{"DeleteSpec", "delete", `{"predicate":"id = 4"}`, false, 0, "", 0, "num_deleted_rows", 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := "/v1/table/t/" + tc.op
			if tc.remote {
				path += "/"
			}
			m := e.ok(t, rtReq{method: "POST", path: path, sdk: tc.remote, body: tc.body}).object(t)
			if _, ok := m["version"].(float64); !ok {
				t.Fatalf("no version in %v", m)
			}
			if tc.wantVersion != 0 && m["version"] != tc.wantVersion {
				t.Fatalf("version %v, want %v", m["version"], tc.wantVersion)
			}
			if tc.count != "" && m[tc.count] != tc.wantCount {
				t.Fatalf("%s = %v, want %v (%v)", tc.count, m[tc.count], tc.wantCount, m)
			}
			if _, has := m[tc.absent]; tc.absent != "" && has {
				t.Fatalf("%s sent without the dialect: %v", tc.absent, m)
			}
			if n := e.countRows(t, "t"); n != tc.wantRows {
				t.Fatalf("%d rows left, want %d", n, tc.wantRows)
			}
		})
	}
	rtWantError(t, e.send(t, rtReq{method: "POST", path: "/v1/table/nope/delete/", sdk: true, body: `{"predicate":"true"}`}), 404, 4)
}

// TestRemoteConflictStatus checks that a 409 the SDK would retry in vain is
// sent as 400, and that concurrent modification (14) stays 409; and that a
// column the table lacks (code 12), which the SDK would report as a
// missing table if it came as 404, is sent as 400 on every data route,
// keeping the spec's 404 on the canonical routes.
func TestRemoteConflictStatus(t *testing.T) {
	e := rtStart(t)
	e.createDocs(t, "t")
	e.ok(t, rtReq{method: "POST", path: "/v1/namespace/ns/create", body: `{}`})
	e.createDocs(t, "ns$inner")
	e.ok(t, rtReq{method: "POST", path: "/v1/table/t/tags/create", body: `{"tag":"v1","version":1}`})
	e.ok(t, rtReq{method: "POST", path: "/v1/table/ext/declare", body: `{"location":"s3://bucket/ext"}`})
	for _, tc := range []struct {
		name, path, body string
		arrow            bool
		code             int
		remoteStatus     int
		specStatus       int
	}{
		{"TableAlreadyExists", "/v1/table/t/create/?mode=create", "", true, 5, 400, 409},
		{"NamespaceAlreadyExists", "/v1/namespace/ns/create", `{}`, false, 2, 400, 409},
		{"NamespaceNotEmpty", "/v1/namespace/ns/drop", `{}`, false, 3, 400, 409},
		{"TagAlreadyExists", "/v1/table/t/tags/create/", `{"tag":"v1","version":1}`, false, 9, 400, 409},
		{"InvalidTableState", "/v1/table/ext/count_rows/", `{}`, false, 19, 400, 409}, // declared, no data yet
		{"ConcurrentModification", "/v1/table/ext/version/create/", `{"version":2,"manifest_path":"s3://bucket/ext/_versions/2.manifest"}`, false, 14, 409, 409},
		{"NotFoundUnchanged", "/v1/table/nope/describe/", `{}`, false, 4, 404, 404},
		{"InvalidInputUnchanged", "/v1/table/t/count_rows/", `{"predicate":"id >"}`, false, 13, 400, 400},
		{"ColumnInFilter", "/v1/table/t/query/", `{"k":3,"vector":{},"filter":"nosuchcol = 3"}`, false, 12, 400, 404},
		{"ColumnInCount", "/v1/table/t/count_rows/", `{"predicate":"nosuchcol = 3"}`, false, 12, 400, 404},
		{"ColumnInUpdate", "/v1/table/t/update/", `{"updates":[["nosuch","1"]]}`, false, 12, 400, 404},
		{"ColumnInDelete", "/v1/table/t/delete/", `{"predicate":"nosuch > 1"}`, false, 12, 400, 404},
		{"ColumnInIndex", "/v1/table/t/create_index/", `{"column":"nosuch","index_type":"BTREE"}`, false, 12, 400, 404},
		{"ColumnInDropColumns", "/v1/table/t/drop_columns/", `{"columns":["nosuch"]}`, false, 12, 400, 404},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := rtReq{method: "POST", path: tc.path, body: tc.body}
			if tc.arrow {
				r.arrow = rtLZ4(t, arrowtest.Record(t, rtDocsSchema, `[{"id":1}]`))
			}
			rtWantError(t, e.send(t, r), tc.specStatus, tc.code)

			remote := r
			remote.sdk = true
			if tc.remoteStatus != tc.specStatus {
				remote.unchecked = rtRemapped409
				if tc.code == 12 {
					remote.unchecked = rtRemapped404
				}
			}
			res := e.send(t, remote)
			rtWantError(t, res, tc.remoteStatus, tc.code)
			// The status changed, not the body: still an ErrorResponse.
			e.conformsTo(t, "ErrorResponse", res.body)
			if res.header.Get("Phalanx-Version") == "" {
				t.Error("error answer without Phalanx-Version")
			}
		})
	}
}

var rtSemver = regexp.MustCompile(`^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)$`)

// TestRemoteHeaders covers the response headers the SDK reads:
// phalanx-version (server version, gates features) and x-lancedb-version
// (the table version a read saw).
func TestRemoteHeaders(t *testing.T) {
	e := rtStart(t)
	e.createDocs(t, "t")
	e.ok(t, rtReq{method: "POST", path: "/v1/table/t/insert/", sdk: true, arrow: rtLZ4(t, arrowtest.Record(t, rtDocsSchema, `[{"id":7}]`))})
	empty := rtLZ4(t, arrowtest.Record(t, rtDocsSchema, `[]`))
	for _, tc := range []struct {
		name   string
		req    rtReq
		wantPV bool
	}{
		{"ListTables", rtReq{method: "GET", path: "/v1/table/"}, true},
		{"Describe", rtReq{method: "POST", path: "/v1/table/t/describe/"}, true},
		{"Create", rtReq{method: "POST", path: "/v1/table/new/create/?mode=create", arrow: empty}, true},
		{"Query", rtReq{method: "POST", path: "/v1/table/t/query/", body: `{"k":1,"vector":[]}`}, true},
		{"CountRows", rtReq{method: "POST", path: "/v1/table/t/count_rows/", body: `{}`}, true},
		{"Error", rtReq{method: "POST", path: "/v1/table/nope/describe/"}, true},
		{"UnknownRoute", rtReq{method: "POST", path: "/v1/nothing/here"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			remote := tc.req
			remote.sdk = true
			got := e.send(t, remote).header.Get("Phalanx-Version")
			if tc.wantPV && (got != "0.3.0" || !rtSemver.MatchString(got)) {
				t.Errorf("Phalanx-Version %q, want 0.3.0", got)
			}
			if !tc.wantPV && got != "" {
				t.Errorf("Phalanx-Version %q on an unrouted request", got)
			}
			if tc.name == "Create" {
				return // created now; the plain request would conflict
			}
			plain := tc.req
			plain.path = strings.TrimSuffix(plain.path, "/")
			if got := e.send(t, plain).header.Get("Phalanx-Version"); got != "" {
				t.Errorf("Phalanx-Version %q without the dialect", got)
			}
		})
	}
	for _, tc := range []struct {
		name, body, accept string
		want               string
	}{
		{"Latest", `{"k":1,"vector":[],"version":null}`, "", "2"},
		{"Checkout", `{"k":1,"vector":[],"version":1}`, "", "1"},
		{"Vector", `{"k":1,"vector":[1,0,0,0]}`, "", "2"},
		{"StreamAnswer", `{"k":1,"vector":[]}`, "application/vnd.apache.arrow.stream", "2"},
	} {
		t.Run("LancedbVersion"+tc.name, func(t *testing.T) {
			h := http.Header{}
			if tc.accept != "" {
				h.Set("Accept", tc.accept)
			}
			res := e.send(t, rtReq{method: "POST", path: "/v1/table/t/query/", sdk: true, header: h, body: tc.body})
			if rtResult(t, res).NumRows() != 1 {
				t.Fatal("no row")
			}
			if got := res.header.Get("X-Lancedb-Version"); got != tc.want {
				t.Fatalf("x-lancedb-version %q, want %q", got, tc.want)
			}
		})
	}
	t.Run("NoLancedbVersionWithoutDialect", func(t *testing.T) {
		res := e.send(t, rtReq{method: "POST", path: "/v1/table/t/query", body: `{"k":1,"vector":null}`})
		if got := res.header.Get("X-Lancedb-Version"); got != "" {
			t.Fatalf("x-lancedb-version %q without the dialect", got)
		}
	})
	t.Run("LancedbVersionOnCountRows", func(t *testing.T) {
		for body, want := range map[string]string{`{"version":null}`: "2", `{"version":1}`: "1"} {
			res := e.ok(t, rtReq{method: "POST", path: "/v1/table/t/count_rows/", sdk: true, body: body})
			if got := res.header.Get("X-Lancedb-Version"); got != want {
				t.Fatalf("x-lancedb-version %q on count_rows %s, want %s", got, body, want)
			}
		}
	})
}

// TestListingPageTokens covers page tokens of listings of names: any
// string is the name to start after (the SDK sends the last name it has as
// page_token, and tableNames({startAfter}) its startAfter), with and
// without the remote dialect, and the server's own tokens page through.
func TestListingPageTokens(t *testing.T) {
	e := rtStart(t)
	for _, name := range []string{"a", "b", "c", "d"} {
		e.createDocs(t, name)
		e.ok(t, rtReq{method: "POST", path: "/v1/namespace/" + name + "/create", body: `{}`})
	}
	e.ok(t, rtReq{method: "POST", path: "/v1/namespace/n/create", body: `{}`})
	e.createDocs(t, "n$z")
	list := func(t *testing.T, path string, sdk bool) ([]any, string) {
		t.Helper()
		m := e.ok(t, rtReq{method: "GET", path: path, sdk: sdk}).object(t)
		tok, _ := m["page_token"].(string)
		items, _ := m["tables"].([]any)
		if ns, ok := m["namespaces"].([]any); ok {
			items = ns
		}
		return items, tok
	}
	for _, sdk := range []bool{true, false} {
		for _, tc := range []struct {
			name, path string
			want       []any
		}{
			{"StartAfterName", "/v1/namespace/$/table/list?page_token=b", []any{"c", "d"}},
			{"StartAfterGap", "/v1/namespace/$/table/list?page_token=bb", []any{"c", "d"}},
			{"StartAfterLast", "/v1/namespace/$/table/list?page_token=d", []any{}},
			{"StartAfterWithLimit", "/v1/namespace/$/table/list?limit=1&page_token=a", []any{"b"}},
			{"StartBeforeFirst", "/v1/namespace/$/table/list?page_token=%20", []any{"a", "b", "c", "d"}},
			{"ChildNamespace", "/v1/namespace/n/table/list", []any{"z"}},
			{"ChildNamespaceStartAfter", "/v1/namespace/n/table/list?page_token=z", []any{}},
			{"NamespacesStartAfter", "/v1/namespace/$/list?page_token=a", []any{"b", "c", "d", "n"}},
			{"NamespacesStartAfterWithLimit", "/v1/namespace/$/list?page_token=c&limit=1", []any{"d"}},
			{"NamespacesStartAfterGap", "/v1/namespace/$/list?page_token=cz", []any{"d", "n"}},
			{"AllTablesStartAfterID", "/v1/table?page_token=d", []any{"n$z"}},
			{"AllTablesStartAfterNestedID", "/v1/table?page_token=n$a&limit=5", []any{"n$z"}},
			{"AllTablesOtherDelimiter", "/v1/table?page_token=c&delimiter=.", []any{"d", "n.z"}},
		} {
			if sdk && strings.HasPrefix(tc.path, "/v1/table?") {
				continue // the remote dialect's /v1/table lists the root namespace
			}
			t.Run(fmt.Sprintf("%s/SDK=%v", tc.name, sdk), func(t *testing.T) {
				if got, _ := list(t, tc.path, sdk); !slices.Equal(got, tc.want) {
					t.Fatalf("listed %v, want %v", got, tc.want)
				}
			})
		}
	}
	for _, tc := range []struct {
		name, path string
		sdk        bool
		want       []any
	}{
		{"Root", "/v1/table/", true, []any{"a", "b", "c", "d"}},
		{"RootNoSlash", "/v1/table", true, []any{"a", "b", "c", "d"}},
		{"RootStartAfter", "/v1/table/?page_token=b", true, []any{"c", "d"}},
		{"Namespaces", "/v1/namespace/$/list", false, []any{"a", "b", "c", "d", "n"}},
		{"AllTables", "/v1/table", false, []any{"a", "b", "c", "d", "n$z"}},
	} {
		t.Run("OwnTokens/"+tc.name, func(t *testing.T) {
			var all []any
			sep := "?"
			if strings.Contains(tc.path, "?") {
				sep = "&"
			}
			path := tc.path + sep + "limit=2"
			for range 5 {
				page, tok := list(t, path, tc.sdk)
				all = append(all, page...)
				if tok == "" {
					break
				}
				path = tc.path + sep + "limit=2&page_token=" + url.QueryEscape(tok)
			}
			if !slices.Equal(all, tc.want) {
				t.Fatalf("paged through %v, want %v", all, tc.want)
			}
		})
	}
	for _, tc := range []struct{ name, path string }{
		{"ControlCharacter", "/v1/namespace/$/list?page_token=a%01"},
		{"NotUTF8", "/v1/namespace/$/table/list?page_token=%FF"},
		{"AllTablesControlCharacter", "/v1/table?page_token=a%01"},
	} {
		t.Run("Bad/"+tc.name, func(t *testing.T) {
			rtWantError(t, e.send(t, rtReq{method: "GET", path: tc.path}), 400, 13)
		})
	}
}

// TestIdentifierReadings covers how a path identifier is read against a
// body id: the body id is accepted when any reading of the path names the
// same object ("+" as a space or literal, before and after the remote
// dialect's rewrite), with and without the dialect's header.
func TestIdentifierReadings(t *testing.T) {
	e := rtStart(t)
	for _, ns := range []string{"sp%20ace", "p%2Bs"} {
		e.ok(t, rtReq{method: "POST", path: "/v1/namespace/" + ns + "/create", body: `{}`})
	}
	for _, id := range []string{"my%20tbl-1.x", "a%2Bb", "sp%20ace$my%20tbl-1.x", "p%2Bs$a%2Bb"} {
		e.createDocs(t, id)
	}
	const (
		space = `"my tbl-1.x"`
		plus  = `"a+b"`
	)
	for _, tc := range []struct {
		name, path, bodyID string // bodyID: the names inside the body id
		want               string // the table described; "" with code
		code               int
	}{
		{"FormPlusBodySpace", "my+tbl-1.x", space, "my tbl-1.x", 0},
		{"EscapedSpaceBodySpace", "my%20tbl-1.x", space, "my tbl-1.x", 0},
		{"EncodedPlusBodyPlus", "a%2Bb", plus, "a+b", 0},
		{"LiteralPlusBodyPlus", "a+b", plus, "a+b", 0},
		{"LiteralPlusBodySpace", "a+b", `"a b"`, "", 4},
		{"NestedForm", "sp+ace%24my+tbl-1.x?delimiter=%24", `"sp ace",` + space, "my tbl-1.x", 0},
		{"NestedLiteral", "p+s$a+b", `"p+s",` + plus, "a+b", 0},
		{"NestedMixed", "p%2Bs$a+b", `"p+s",` + plus, "a+b", 0},
		{"EncodedPlusBodySpace", "a%2Bb", `"a b"`, "", 13},
		{"OtherBodyID", "my+tbl-1.x", `"other"`, "", 13},
		{"SpaceAgainstPlusBody", "my%20tbl-1.x", `"my+tbl-1.x"`, "", 13},
	} {
		for _, dialect := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/Dialect=%v", tc.name, dialect), func(t *testing.T) {
				path, query, _ := strings.Cut(tc.path, "?")
				r := rtReq{method: "POST", path: "/v1/table/" + path + "/describe", body: `{"id":[` + tc.bodyID + `]}`}
				if query != "" {
					r.path += "?" + query
				}
				if dialect {
					// A namespace-mode client that sends the header too.
					r.header = http.Header{"X-Lancedb-Database": {"db"}}
				}
				res := e.send(t, r)
				if tc.want == "" {
					rtWantError(t, res, map[int]int{4: 404, 13: 400}[tc.code], tc.code)
					return
				}
				if res.status != 200 || res.object(t)["table"] != tc.want {
					t.Fatalf("described %d %s, want table %q", res.status, res.body, tc.want)
				}
			})
		}
	}
	// Without a body id the path alone decides: "+" is a space to the
	// spec's clients and a "+" to the SDK.
	for _, tc := range []struct {
		name, path string
		sdk        bool
		want       string
	}{
		{"FormPlus", "my+tbl-1.x", false, "my tbl-1.x"},
		{"EscapedSpace", "my%20tbl-1.x", false, "my tbl-1.x"},
		{"EscapedSpaceSDK", "my%20tbl-1.x", true, "my tbl-1.x"},
		{"EncodedPlus", "a%2Bb", false, "a+b"},
		{"EncodedPlusSDK", "a%2Bb", true, "a+b"},
		{"LiteralPlusSDK", "a+b", true, "a+b"},
		{"NestedLiteralPlusSDK", "p+s$a+b", true, "a+b"},
	} {
		t.Run("PathOnly/"+tc.name, func(t *testing.T) {
			path := "/v1/table/" + tc.path + "/describe"
			if tc.sdk {
				path += "/"
			}
			res := e.ok(t, rtReq{method: "POST", path: path, sdk: tc.sdk})
			if got := res.object(t)["table"]; got != tc.want {
				t.Fatalf("described %v, want %q", got, tc.want)
			}
		})
	}
	t.Run("PathOnly/LiteralPlusSpec", func(t *testing.T) {
		rtWantError(t, e.send(t, rtReq{method: "POST", path: "/v1/table/a+b/describe", body: `{}`}), 404, 4)
	})
	t.Run("PathOnly/ExplicitDollarDelimiter", func(t *testing.T) {
		// Only clients generated from the spec send delimiter=$, and they
		// form-encode: "+" is a space, dialect header or not (the namespace
		// client's body-less version/list).
		for _, dialect := range []bool{false, true} {
			r := rtReq{method: "POST", path: "/v1/table/my+tbl-1.x/version/list?delimiter=%24&limit=1&descending=true", body: "null"}
			if dialect {
				r.header = http.Header{"X-Lancedb-Database": {"db"}}
			}
			e.ok(t, r)
			r.path = "/v1/table/sp+ace%24my+tbl-1.x/version/list?delimiter=%24"
			e.ok(t, r)
		}
	})
	t.Run("Namespace", func(t *testing.T) {
		for _, dialect := range []bool{false, true} {
			r := rtReq{method: "POST", path: "/v1/namespace/sp+ace/describe", body: `{"id":["sp ace"]}`}
			if dialect {
				r.header = http.Header{"X-Lancedb-Database": {"db"}}
			}
			e.ok(t, r)
			r.path, r.body = "/v1/namespace/p+s/describe", `{"id":["p+s"]}`
			e.ok(t, r)
		}
	})
}

// TestRemotePrewarmIndex covers POST /v1/table/{id}/index/{name}/prewarm,
// the SDK's prewarmIndex: a route of the remote dialect beyond the spec,
// answered {} for a built index of any kind and 404 (which the SDK reads as
// IndexNotFound) for an unknown one.
func TestRemotePrewarmIndex(t *testing.T) {
	e := rtStart(t)
	e.createDocs(t, "t")
	e.createDocs(t, "a+b")
	e.createIndex(t, "t", `{"column":"vector","index_type":"IVF_FLAT","num_partitions":2,"name":"my idx/x+y"}`, true)
	e.createIndex(t, "t", `{"column":"text","index_type":"FTS"}`, true)
	e.createIndex(t, "t", `{"column":"id","index_type":"BTREE"}`, true)
	e.createIndex(t, "a+b", `{"column":"text","index_type":"FTS"}`, true)
	for _, tc := range []struct {
		name, path string
		sdk        bool
		status     int
		code       int
	}{
		{"Vector", "/v1/table/t/index/my%20idx%2Fx%2By/prewarm/", true, 200, 0},
		{"FullText", "/v1/table/t/index/text_idx/prewarm/", true, 200, 0},
		{"Scalar", "/v1/table/t/index/id_idx/prewarm/", true, 200, 0},
		{"WithoutDialect", "/v1/table/t/index/text_idx/prewarm", false, 200, 0},
		{"LiteralPlusTable", "/v1/table/a+b/index/text_idx/prewarm/", true, 200, 0},
		{"EncodedPlusTable", "/v1/table/a%2Bb/index/text_idx/prewarm", false, 200, 0},
		{"Delimiter", "/v1/table/t/index/text_idx/prewarm?delimiter=.", false, 200, 0},
		{"UnknownIndex", "/v1/table/t/index/nope/prewarm/", true, 404, 6},
		{"UnknownTable", "/v1/table/nope/index/text_idx/prewarm/", true, 404, 4},
		{"UnknownNamespace", "/v1/table/ns$t/index/text_idx/prewarm/", true, 404, 1},
		{"ControlCharacter", "/v1/table/t/index/a%01/prewarm/", true, 404, 6},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := e.send(t, rtReq{method: "POST", path: tc.path, sdk: tc.sdk})
			if tc.status != 200 {
				rtWantError(t, res, tc.status, tc.code)
				return
			}
			if res.status != 200 || string(res.body) != "{}\n" {
				t.Fatalf("got %d %q, want 200 {}", res.status, res.body)
			}
		})
	}
}

// TestRemoteFreshness covers the SDK's read-freshness headers: a read of
// the latest version must see at least x-lancedb-min-version (the highest
// version the handle's writes made) and x-lancedb-min-read-version (the
// highest its reads saw); a table behind them was replaced since (11).
func TestRemoteFreshness(t *testing.T) {
	e := rtStart(t)
	e.createDocs(t, "t")
	e.ok(t, rtReq{method: "POST", path: "/v1/table/t/insert/", sdk: true, arrow: rtLZ4(t, arrowtest.Record(t, rtDocsSchema, rtDocsRows))})
	// t is at version 2.
	const query = `{"columns":["id"],"k":9223372036854775807,"prefilter":true,"vector":[],"version":null}`
	for _, tc := range []struct {
		name, path, body string
		header           map[string]string
		sdk              bool
		status, code     int
	}{
		{"Count", "count_rows/", `{"version":null}`, map[string]string{"min-version": "2"}, true, 200, 0},
		{"CountAhead", "count_rows/", `{"version":null}`, map[string]string{"min-version": "3"}, true, 404, 11},
		{"CountReadAhead", "count_rows/", `{"version":null}`, map[string]string{"min-read-version": "3"}, true, 404, 11},
		{"CountBothHighestWins", "count_rows/", `{"version":null}`, map[string]string{"min-version": "1", "min-read-version": "7"}, true, 404, 11},
		{"CountPinnedVersion", "count_rows/", `{"version":1}`, map[string]string{"min-version": "9"}, true, 200, 0},
		{"CountBadHeader", "count_rows/", `{"version":null}`, map[string]string{"min-version": "two"}, true, 400, 13},
		{"CountTimestampHolds", "count_rows/", `{"version":null}`, map[string]string{"min-timestamp": "2999-01-01T00:00:00+00:00"}, true, 200, 0},
		{"DescribeNoBody", "describe/", "", map[string]string{"min-version": "2"}, true, 200, 0},
		{"DescribeAhead", "describe/", "", map[string]string{"min-version": "3"}, true, 404, 11},
		{"Query", "query/", query, map[string]string{"min-version": "2"}, true, 200, 0},
		{"QueryAhead", "query/", query, map[string]string{"min-read-version": "5"}, true, 404, 11},
		{"QueryPinned", "query/", strings.Replace(query, `"version":null`, `"version":1`, 1), map[string]string{"min-version": "5"}, true, 200, 0},
		{"ListVersionsAhead", "version/list/", "", map[string]string{"min-version": "3"}, true, 404, 11},
		{"WriteIgnores", "delete/", `{"predicate":"id = 99"}`, map[string]string{"min-version": "99"}, true, 200, 0},
		{"SpecClientIgnores", "count_rows", `{}`, map[string]string{"min-version": "99"}, false, 200, 0},
		{"MissingTableStaysNotFound", "../nope/count_rows/", `{"version":null}`, map[string]string{"min-version": "3"}, true, 404, 4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := http.Header{}
			for k, v := range tc.header {
				h.Set("X-Lancedb-"+k, v)
			}
			path := "/v1/table/t/" + tc.path
			if strings.HasPrefix(tc.path, "../") {
				path = "/v1/table/" + strings.TrimPrefix(tc.path, "../")
			}
			res := e.send(t, rtReq{method: "POST", path: path, sdk: tc.sdk, header: h, body: tc.body})
			if tc.status != 200 {
				rtWantError(t, res, tc.status, tc.code)
				return
			}
			if res.status != 200 {
				t.Fatalf("got %d %s, want 200", res.status, res.body)
			}
		})
	}
	t.Run("Replaced", func(t *testing.T) {
		// A handle that wrote version 2 of a table that was dropped and
		// created again (now at version 1).
		e.ok(t, rtReq{method: "POST", path: "/v1/table/t/drop/", sdk: true})
		e.createDocs(t, "t")
		h := http.Header{"X-Lancedb-Min-Version": {"2"}}
		rtWantError(t, e.send(t, rtReq{method: "POST", path: "/v1/table/t/count_rows/", sdk: true, header: h, body: `{"version":null}`}), 404, 11)
		h.Set("X-Lancedb-Min-Version", "1")
		e.ok(t, rtReq{method: "POST", path: "/v1/table/t/count_rows/", sdk: true, header: h, body: `{"version":null}`})
	})
}

// TestRemoteRename covers new_namespace, the SDK's name for
// new_namespace_id.
func TestRemoteRename(t *testing.T) {
	e := rtStart(t)
	e.ok(t, rtReq{method: "POST", path: "/v1/namespace/dst/create", body: `{}`})
	e.createDocs(t, "r1")
	e.createDocs(t, "r2")
	e.ok(t, rtReq{method: "POST", path: "/v1/table/r1/rename/", sdk: true, body: `{"new_table_name":"moved","new_namespace":["dst"]}`})
	e.ok(t, rtReq{method: "POST", path: "/v1/table/dst$moved/describe/", sdk: true})
	// Without the dialect new_namespace is an unknown member: the table
	// stays in its namespace.
	e.ok(t, rtReq{method: "POST", path: "/v1/table/r2/rename", body: `{"new_table_name":"stayed","new_namespace":["dst"]}`})
	e.ok(t, rtReq{method: "POST", path: "/v1/table/stayed/describe/", sdk: true})
	rtWantError(t, e.send(t, rtReq{method: "POST", path: "/v1/table/dst$stayed/describe/", sdk: true}), 404, 4)
	// Renaming within the root namespace.
	e.ok(t, rtReq{method: "POST", path: "/v1/table/stayed/rename/", sdk: true, body: `{"new_table_name":"renamed"}`})
	e.ok(t, rtReq{method: "POST", path: "/v1/table/renamed/describe/", sdk: true})
}

// TestRemoteMergeInsertKeys covers merge_insert keyed on several columns
// (on repeated, as in spec 0.12) in the remote dialect as in the spec's,
// next to the single key of 0.11 clients.
func TestRemoteMergeInsertKeys(t *testing.T) {
	// id 1 keeps its label (a match on both keys); id 2 has a new one.
	rows := arrowtest.Record(t, rtDocsSchema, `[{"id":1,"text":"merged","label":"greeting","vector":[1,0,0,0]},
		{"id":2,"text":"merged","label":"new","vector":[0,0,0,1]}]`)
	for _, tc := range []struct {
		name, keys          string
		sdk                 bool
		inserted, updated   float64
		rows, idTwo, merged int
	}{
		{"TwoKeys", "on=id&on=label", false, 1, 1, 7, 2, 2},
		{"TwoKeysSDK", "on=label&on=id", true, 1, 1, 7, 2, 2},
		{"OneKey", "on=id", false, 0, 2, 6, 1, 2},
		{"OneKeySDK", "on=id", true, 0, 2, 6, 1, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := rtStart(t)
			e.createDocs(t, "t")
			path := "/v1/table/t/merge_insert"
			if tc.sdk {
				path += "/"
			}
			res := e.ok(t, rtReq{method: "POST", path: path + "?" + tc.keys + "&when_matched_update_all=true&when_not_matched_insert_all=true",
				sdk: tc.sdk, arrow: rtLZ4(t, rows)})
			if m := res.object(t); m["num_inserted_rows"] != tc.inserted || m["num_updated_rows"] != tc.updated {
				t.Fatalf("merge answered %v, want %v inserted, %v updated", m, tc.inserted, tc.updated)
			}
			for filter, want := range map[string]int{"": tc.rows, "id = 2": tc.idTwo, "text = 'merged'": tc.merged} {
				body := `{"version":null}`
				if filter != "" {
					body = `{"predicate":"` + filter + `","version":null}`
				}
				var n int
				if err := json.Unmarshal(e.ok(t, rtReq{method: "POST", path: "/v1/table/t/count_rows/", sdk: true, body: body}).body, &n); err != nil || n != want {
					t.Fatalf("count_rows %q = %d (%v), want %d", filter, n, err, want)
				}
			}
		})
	}
	t.Run("Errors", func(t *testing.T) {
		e := rtStart(t)
		e.createDocs(t, "t")
		for _, keys := range []string{"on=id&on=id", "on=id&on=", "on=label&on=%60label%60"} {
			for _, sdk := range []bool{false, true} {
				res := e.send(t, rtReq{method: "POST", path: "/v1/table/t/merge_insert/?" + keys + "&when_not_matched_insert_all=true",
					sdk: sdk, arrow: rtLZ4(t, rows)})
				rtWantError(t, res, 400, 13)
			}
		}
		if n := e.countRows(t, "t"); n != 6 {
			t.Fatalf("refused merges changed the table: %d rows", n)
		}
	})
}

// TestRemoteMergeInsertTimeout covers x-request-timeout-ms, the SDK's
// stand-in for the spec's timeout parameter.
func TestRemoteMergeInsertTimeout(t *testing.T) {
	e := rtStart(t)
	e.createDocs(t, "t")
	params := "?on=id&when_matched_update_all=true&when_not_matched_insert_all=true&when_not_matched_by_source_delete=false"
	rows := arrowtest.Record(t, rtDocsSchema, `[{"id":1,"text":"merged","label":"m","vector":[1,0,0,0]},{"id":10,"text":"new","label":"n","vector":[0,0,0,1]}]`)
	for _, tc := range []struct {
		name     string
		remote   bool
		timeout  string
		wantCode int // -1: success
	}{
		{"NoTimeout", true, "", -1},
		{"Timeout", true, "30000", -1},
		{"BadTimeout", true, "soon", 13},
		{"HeaderIgnoredWithoutDialect", false, "soon", -1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := http.Header{}
			if tc.timeout != "" {
				h.Set("X-Request-Timeout-Ms", tc.timeout)
			}
			path := "/v1/table/t/merge_insert"
			if tc.remote {
				path += "/"
			}
			res := e.send(t, rtReq{method: "POST", path: path + params, sdk: tc.remote, header: h, arrow: rtLZ4(t, rows)})
			if tc.wantCode >= 0 {
				rtWantError(t, res, 400, tc.wantCode)
				return
			}
			if res.status != 200 {
				t.Fatalf("got %d %s", res.status, res.body)
			}
			if m := res.object(t); m["num_updated_rows"].(float64)+m["num_inserted_rows"].(float64) != 2 {
				t.Fatalf("merge answered %v", m)
			}
		})
	}
	if n := e.countRows(t, "t"); n != 7 {
		t.Fatalf("%d rows after merges, want 7", n)
	}
}
