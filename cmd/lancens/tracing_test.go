package main

import (
	"context"
	"encoding/hex"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"

	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/proto"

	"github.com/lancens/lancens/client"
	"github.com/lancens/lancens/internal/telemetry"
	"github.com/lancens/lancens/internal/testkit/s3test"
)

// otlpReceiver is an OTLP collector in the test: it keeps the spans it is
// sent, over HTTP (protobuf) or gRPC.
type otlpReceiver struct {
	mu    sync.Mutex
	spans []*tracepb.Span
	// service is the service.name of the resource spans came with.
	service string
}

func (o *otlpReceiver) add(req *coltracepb.ExportTraceServiceRequest) {
	o.mu.Lock()
	defer o.mu.Unlock()
	for _, rs := range req.ResourceSpans {
		for _, kv := range rs.GetResource().GetAttributes() {
			if kv.Key == "service.name" {
				o.service = kv.GetValue().GetStringValue()
			}
		}
		for _, ss := range rs.ScopeSpans {
			o.spans = append(o.spans, ss.Spans...)
		}
	}
}

// ServeHTTP receives OTLP over HTTP: POST /v1/traces, protobuf.
func (o *otlpReceiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if r.Method != http.MethodPost || r.URL.Path != "/v1/traces" || r.Header.Get("Content-Type") != "application/x-protobuf" || err != nil {
		http.Error(w, "want a POST of protobuf to /v1/traces", http.StatusBadRequest)
		return
	}
	var req coltracepb.ExportTraceServiceRequest
	if err := proto.Unmarshal(body, &req); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	o.add(&req)
	out, _ := proto.Marshal(&coltracepb.ExportTraceServiceResponse{})
	w.Header().Set("Content-Type", "application/x-protobuf")
	_, _ = w.Write(out)
}

// grpcReceiver receives OTLP over gRPC into its otlpReceiver.
type grpcReceiver struct {
	coltracepb.UnimplementedTraceServiceServer
	o *otlpReceiver
}

func (g grpcReceiver) Export(_ context.Context, req *coltracepb.ExportTraceServiceRequest) (*coltracepb.ExportTraceServiceResponse, error) {
	g.o.add(req)
	return &coltracepb.ExportTraceServiceResponse{}, nil
}

// all returns the spans received so far.
func (o *otlpReceiver) all() []*tracepb.Span {
	o.mu.Lock()
	defer o.mu.Unlock()
	return slices.Clone(o.spans)
}

// attr returns the value of a span's attribute as text ("" when absent).
func attr(s *tracepb.Span, key string) string {
	for _, kv := range s.Attributes {
		if kv.Key == key {
			return anyValue(kv.Value)
		}
	}
	return ""
}

func anyValue(v *commonpb.AnyValue) string {
	switch x := v.GetValue().(type) {
	case *commonpb.AnyValue_StringValue:
		return x.StringValue
	case *commonpb.AnyValue_IntValue:
		return fmt.Sprint(x.IntValue)
	case *commonpb.AnyValue_BoolValue:
		return fmt.Sprint(x.BoolValue)
	}
	return v.String()
}

// find returns the spans named name.
func find(spans []*tracepb.Span, name string) []*tracepb.Span {
	var out []*tracepb.Span
	for _, s := range spans {
		if s.Name == name {
			out = append(out, s)
		}
	}
	return out
}

// children returns the names of the spans whose parent is s.
func children(spans []*tracepb.Span, s *tracepb.Span) []string {
	var out []string
	for _, c := range spans {
		if string(c.ParentSpanId) == string(s.SpanId) && string(c.TraceId) == string(s.TraceId) {
			out = append(out, c.Name)
		}
	}
	slices.Sort(out)
	return out
}

// only returns the one span named name, failing t otherwise.
func only(t *testing.T, spans []*tracepb.Span, name string) *tracepb.Span {
	t.Helper()
	found := find(spans, name)
	if len(found) != 1 {
		var names []string
		for _, s := range spans {
			names = append(names, s.Name)
		}
		t.Fatalf("%d spans named %s among %q, want 1", len(found), name, names)
	}
	return found[0]
}

type traceRow struct {
	ID  int64     `arrow:"id"`
	Vec []float32 `arrow:"vec,fixed_size=2"`
}

// TestTracing serves with --otlp-endpoint and a receiver of OTLP over HTTP
// in the test, makes requests, and checks the span tree they sent: a span
// per request named by its operation with its route, status and table,
// the store's calls as its children, a caller's traceparent continued, a
// job as a span with the store's calls inside, and the trace ids in the
// request log lines.
func TestTracing(t *testing.T) {
	receiver := &otlpReceiver{}
	collector := httptest.NewServer(receiver)
	defer collector.Close()
	var log syncBuffer
	addr, stop := startServeLogging(t, &log, "--otlp-endpoint", collector.URL, "--log-format", "json")
	ctx := t.Context()
	c, err := client.New("http://" + addr)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.CreateNamespace(ctx, []string{"docs"}, nil); err != nil {
		t.Fatal(err)
	}
	table := c.Table("docs", "t")
	rows := []traceRow{{1, []float32{0, 1}}, {2, []float32{1, 0}}, {3, []float32{1, 1}}}
	if _, err := table.Create(ctx, client.Structs(rows[:1]), nil); err != nil {
		t.Fatal(err)
	}
	if _, err := table.Add(ctx, client.Structs(rows[1:])); err != nil {
		t.Fatal(err)
	}
	if err := table.CreateIndex(ctx, "vec", client.IVFFlat{NumPartitions: 1}, nil); err != nil {
		t.Fatal(err)
	}
	if err := table.WaitForIndex(ctx, "vec_idx"); err != nil {
		t.Fatal(err)
	}
	// A caller's trace goes on through lancens.
	callerTrace, callerSpan := "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"
	traced, err := client.New("http://"+addr, client.WithHeader("traceparent", "00-"+callerTrace+"-"+callerSpan+"-01"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := traced.Table("docs", "t").Query().Where("id > 1").ToArrow(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := c.DescribeTable(ctx, []string{"docs", "missing"}, nil); err == nil {
		t.Fatal("described a missing table")
	}
	if took, err := stop(); err != nil {
		t.Fatalf("serve stopped after %s with %v", took, err)
	}

	spans := receiver.all()
	if receiver.service != "lancens" {
		t.Errorf("service.name %q, want lancens", receiver.service)
	}
	insert := only(t, spans, "InsertIntoTable")
	for key, want := range map[string]string{"http.route": "/v1/table/:id/insert", "http.response.status_code": "200",
		"lancens.table": "docs$t", "http.request.method": "POST", "lancens.operation": "InsertIntoTable"} {
		if got := attr(insert, key); got != want {
			t.Errorf("InsertIntoTable span: %s = %q, want %q", key, got, want)
		}
	}
	if insert.Kind != tracepb.Span_SPAN_KIND_SERVER || len(insert.ParentSpanId) != 0 {
		t.Errorf("InsertIntoTable span of kind %v with parent %x, want a server root", insert.Kind, insert.ParentSpanId)
	}
	if got := children(spans, insert); !slices.Contains(got, "store.Insert") {
		t.Errorf("InsertIntoTable's children %q, want store.Insert among them", got)
	}
	store := find(spans, "store.Insert")[0]
	if attr(store, "lancens.id") != "docs$t" {
		t.Errorf("store.Insert about %q", attr(store, "lancens.id"))
	}

	query := only(t, spans, "QueryTable")
	if hex.EncodeToString(query.TraceId) != callerTrace || hex.EncodeToString(query.ParentSpanId) != callerSpan {
		t.Errorf("QueryTable in trace %x under %x, want the caller's %s under %s", query.TraceId, query.ParentSpanId, callerTrace, callerSpan)
	}
	if got := children(spans, query); !slices.Contains(got, "store.Query") {
		t.Errorf("QueryTable's children %q", got)
	}

	missing := only(t, spans, "DescribeTable")
	if attr(missing, "http.response.status_code") != "404" || attr(missing, "lancens.table") != "docs$missing" {
		t.Errorf("DescribeTable of a missing table: %v", missing.Attributes)
	}
	for _, s := range spans {
		if string(s.ParentSpanId) == string(missing.SpanId) && s.Name == "store.DescribeTable" &&
			(attr(s, "lancens.error.code") != "4" || s.Status.GetCode() != tracepb.Status_STATUS_CODE_ERROR) {
			t.Errorf("store.DescribeTable of a missing table: %v, status %v", s.Attributes, s.Status)
		}
	}

	job := only(t, spans, "job BuildIndex")
	if len(job.ParentSpanId) != 0 || attr(job, "lancens.job.kind") != "BuildIndex" || attr(job, "lancens.transaction_id") == "" {
		t.Errorf("job span %v with parent %x", job.Attributes, job.ParentSpanId)
	}
	if got := children(spans, job); !slices.Contains(got, "store.BuildIndex") {
		t.Errorf("the job's children %q, want store.BuildIndex", got)
	}
	// Background work outside requests and jobs makes no spans.
	for _, s := range spans {
		if len(s.ParentSpanId) == 0 && strings.HasPrefix(s.Name, "store.") {
			t.Errorf("a root span %s", s.Name)
		}
	}

	// The request log names each request's trace.
	logged := map[string]string{}
	for _, rec := range logRecords(t, log.String()) {
		if rec["msg"] == "request" && rec["method"] == "POST" && strings.HasSuffix(rec["path"].(string), "/insert") {
			logged["insert"], _ = rec["trace_id"].(string)
		}
		if rec["msg"] == "request" && strings.HasSuffix(rec["path"].(string), "/query") {
			logged["query"], _ = rec["trace_id"].(string)
		}
	}
	if logged["insert"] != hex.EncodeToString(insert.TraceId) || logged["query"] != callerTrace {
		t.Errorf("logged trace ids %v, want insert %x and query %s", logged, insert.TraceId, callerTrace)
	}
}

// TestTracingObjectStore commits a version of a table on an S3-compatible
// store the way a Lance client does, with tracing on, and checks the
// commit's span tree: the manifest's publication inside the request, and
// the object store's requests inside the publication.
func TestTracingObjectStore(t *testing.T) {
	g := s3test.Start(t)
	g.CreateBucket(t, "lance")
	receiver := &otlpReceiver{}
	collector := httptest.NewServer(receiver)
	defer collector.Close()
	addr, stop := startServe(t, append(gatewayArgs(g, "s3://lance/wh"), "--otlp-endpoint", collector.URL)...)
	ctx := t.Context()
	c, err := client.New("http://" + addr)
	if err != nil {
		t.Fatal(err)
	}
	info, err := c.DeclareTable(ctx, []string{"events"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	staged := strings.TrimPrefix(info.Location, "s3://lance/") + "/_versions/18446744073709551614.manifest-staged"
	g.Put(t, "lance", staged, []byte("manifest one"))
	if _, _, err := c.CreateTableVersion(ctx, []string{"events"}, client.VersionCommit{Version: 1, ManifestPath: staged, NamingScheme: "V2"}); err != nil {
		t.Fatal(err)
	}
	if _, err := stop(); err != nil {
		t.Fatal(err)
	}
	spans := receiver.all()
	commit := only(t, spans, "CreateTableVersion")
	if got := children(spans, commit); !slices.Contains(got, "coord.PublishManifest") || !slices.Contains(got, "store.CommitVersion") {
		t.Fatalf("CreateTableVersion's children %q, want the publication and the store's commit", got)
	}
	publish := only(t, spans, "coord.PublishManifest")
	if attr(publish, "lancens.table") != "events" || attr(publish, "lancens.version") != "1" {
		t.Errorf("publication span %v", publish.Attributes)
	}
	requests := children(spans, publish)
	if len(requests) == 0 {
		t.Fatal("the publication made no object-store request spans")
	}
	for _, name := range requests {
		if !strings.HasPrefix(name, "S3 ") {
			t.Errorf("the publication's child %s is not an S3 request", name)
		}
	}
	for _, s := range find(spans, requests[0]) {
		if s.Kind != tracepb.Span_SPAN_KIND_CLIENT || attr(s, "http.response.status_code") == "" {
			t.Errorf("S3 request span %s: kind %v, %v", s.Name, s.Kind, s.Attributes)
		}
	}
}

// TestTracingGRPC sends the spans over gRPC (--otlp-protocol grpc) to a
// receiver in the test.
func TestTracingGRPC(t *testing.T) {
	receiver := &otlpReceiver{}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	gs := grpc.NewServer()
	coltracepb.RegisterTraceServiceServer(gs, grpcReceiver{o: receiver})
	go gs.Serve(ln)
	defer gs.Stop()
	addr, stop := startServe(t, "--otlp-protocol", "grpc", "--otlp-endpoint", "http://"+ln.Addr().String())
	c, err := client.New("http://" + addr)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.CreateNamespace(t.Context(), []string{"g"}, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := stop(); err != nil {
		t.Fatal(err)
	}
	span := only(t, receiver.all(), "CreateNamespace")
	if attr(span, "lancens.namespace") != "g" || !slices.Contains(children(receiver.all(), span), "store.CreateNamespace") {
		t.Errorf("CreateNamespace span %v, children %q", span.Attributes, children(receiver.all(), span))
	}
}

// TestTracingSwitch checks when tracing is on: --otlp-endpoint or the
// standard variables, and never with OTEL_SDK_DISABLED or
// OTEL_TRACES_EXPORTER=none; bad endpoints and protocols are refused.
func TestTracingSwitch(t *testing.T) {
	for _, tc := range []struct {
		endpoint string
		env      map[string]string
		want     bool
	}{
		{"", nil, false},
		{"http://c:4318", nil, true},
		{"", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318"}, true},
		{"", map[string]string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://c:4318/v1/traces"}, true},
		{"", map[string]string{"OTEL_TRACES_EXPORTER": "otlp"}, true},
		{"http://c:4318", map[string]string{"OTEL_SDK_DISABLED": "true"}, false},
		{"", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318", "OTEL_TRACES_EXPORTER": "none"}, false},
	} {
		cfg := telemetry.Config{Endpoint: tc.endpoint, Getenv: func(k string) string { return tc.env[k] }}
		if got := cfg.Enabled(); got != tc.want {
			t.Errorf("endpoint %q, env %v: tracing %v, want %v", tc.endpoint, tc.env, got, tc.want)
		}
	}
	for _, args := range [][]string{{"--otlp-endpoint", "c:4318"}, {"--otlp-endpoint", "ftp://c"}} {
		if _, err := parseServeFlags(args, func(string) string { return "" }, io.Discard); err == nil {
			t.Errorf("%q accepted", args)
		}
	}
	stop, _, err := telemetry.Start(t.Context(), telemetry.Config{Endpoint: "http://c:4318", Protocol: "thrift", Getenv: func(string) string { return "" }})
	if err == nil {
		stop(context.Background())
		t.Error("OTLP protocol thrift accepted")
	}
}

// TestTracingMCP calls a tool of the MCP endpoint with tracing on: the
// operation the tool performs through the API is a child of the MCP
// request's span, with the store's call inside.
func TestTracingMCP(t *testing.T) {
	receiver := &otlpReceiver{}
	collector := httptest.NewServer(receiver)
	defer collector.Close()
	addr, stop := startServe(t, "--otlp-endpoint", collector.URL)
	req, err := http.NewRequest(http.MethodPost, "http://"+addr+"/mcp",
		strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"list_namespaces","arguments":{}}}`))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if _, err := stop(); err != nil {
		t.Fatal(err)
	}
	spans := receiver.all()
	mcp := only(t, spans, "MCP")
	if got := children(spans, mcp); !slices.Equal(got, []string{"ListNamespaces"}) {
		t.Fatalf("the MCP request's children %q, want the tool's operation", got)
	}
	if got := children(spans, only(t, spans, "ListNamespaces")); !slices.Equal(got, []string{"store.ListNamespaces"}) {
		t.Errorf("the tool's operation's children %q", got)
	}
}
