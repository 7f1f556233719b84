package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/lancens/lancens/client"
	"github.com/lancens/lancens/gen"
	"github.com/lancens/lancens/internal/apitest"
	"github.com/lancens/lancens/internal/arrowtest"
	"github.com/lancens/lancens/store"
	"github.com/lancens/lancens/warehouse"
)

// The fuzz targets of the HTTP layer send requests to a server served
// in-process (apitest.Local), which checks every answer against
// openapi.yaml: a non-2xx answer must be an ErrorResponse whose code maps
// to its status. On top of that no answer may be a 5xx: whatever a caller
// sends is either served or refused with a 4xx.

var fuzzCtx = context.Background()

// send serves one request with a JSON body and returns its status and
// body, failing t on a 5xx answer.
func send(t testing.TB, l *apitest.Local, method, target string, header http.Header, body []byte) (int, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, "http://lancens.localhost"+target, bytes.NewReader(body))
	if err != nil {
		t.Fatalf("%s %s: %v", method, target, err)
	}
	req.Header.Set("Content-Type", "application/json")
	for k, vs := range header {
		req.Header[k] = vs
	}
	res, out := l.Serve(t, req)
	if res.StatusCode >= 500 {
		t.Fatalf("%s %s with body %q: status %d: %s", method, target, body, res.StatusCode, out)
	}
	return res.StatusCode, out
}

// mustSend is send for fixture requests, which must succeed.
func mustSend(t testing.TB, l *apitest.Local, target, body string) []byte {
	t.Helper()
	status, out := send(t, l, http.MethodPost, target, nil, []byte(body))
	if status != http.StatusOK {
		t.Fatalf("POST %s %s: %d %s", target, body, status, out)
	}
	return out
}

// fuzzSchema is the schema of the managed tables of the fixtures.
var fuzzSchema = arrowtest.Schema("id", arrow.PrimitiveTypes.Int64, "s", arrow.BinaryTypes.String,
	"v", arrow.FixedSizeListOf(4, arrow.PrimitiveTypes.Float32))

// bodyFixture is the catalog the JSON-body fuzz target sends requests
// about: namespace ns with a managed table m (two versions, a tag, a
// scalar and a full-text index) and a declared table d with one committed
// version.
type bodyFixture struct {
	l    *apitest.Local
	txID string // of the managed table's creation
}

// reset drops everything at the root and builds the fixture again.
func (fx *bodyFixture) reset(t testing.TB) {
	t.Helper()
	// "\x1f" cannot occur in names, whatever delimiter a request used.
	c := fx.l.Client(t, client.WithDelimiter("\x1f"))
	var names []string
	for name, err := range c.ListNamespaces(fuzzCtx, []string{}) {
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, name)
	}
	for _, n := range names {
		_, _ = c.DropNamespace(fuzzCtx, []string{n}, &client.DropNamespaceOptions{Behavior: "Cascade", Mode: "Skip"})
	}
	var tables []string
	for name, err := range c.ListTables(fuzzCtx, []string{}) {
		if err != nil {
			t.Fatal(err)
		}
		tables = append(tables, name)
	}
	for _, n := range tables {
		if _, err := c.DropTable(fuzzCtx, []string{n}); err != nil {
			_, _ = c.DeregisterTable(fuzzCtx, []string{n})
		}
	}

	c = fx.l.Client(t)
	if _, err := c.CreateNamespace(fuzzCtx, []string{"ns"}, &client.CreateNamespaceOptions{Properties: map[string]string{"owner": "fuzz"}}); err != nil {
		t.Fatal(err)
	}
	m := []string{"ns", "m"}
	rows := arrowtest.Record(t, fuzzSchema, `[{"id":1,"s":"red fox","v":[1,0,0,0]},{"id":2,"s":"blue whale","v":[0,1,0,0]},
		{"id":3,"s":null,"v":[0,0,1,0]},{"id":4,"s":"red whale","v":null}]`)
	created, err := c.CreateTable(fuzzCtx, m, fuzzSchema, []arrow.RecordBatch{rows}, nil)
	if err != nil {
		t.Fatal(err)
	}
	fx.txID = created.TransactionID
	more := arrowtest.Record(t, fuzzSchema, `[{"id":5,"s":"green fox","v":[1,1,0,0]},{"id":6,"s":"","v":[0,0,0,1]}]`)
	if _, err := c.Insert(fuzzCtx, m, fuzzSchema, []arrow.RecordBatch{more}, ""); err != nil {
		t.Fatal(err)
	}
	mustSend(t, fx.l, "/v1/table/ns$m/create_index", `{"column":"id","index_type":"BTREE","name":"id_idx"}`)
	mustSend(t, fx.l, "/v1/table/ns$m/create_index", `{"column":"s","index_type":"INVERTED","name":"s_idx","with_position":true}`)
	if _, err := c.CreateTableTag(fuzzCtx, m, "t1", 1, ""); err != nil {
		t.Fatal(err)
	}
	d, err := c.DeclareTable(fuzzCtx, []string{"ns", "d"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	staged := filepath.Join(d.Location, "_versions", "staged-1")
	if err := os.MkdirAll(filepath.Dir(staged), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(staged, []byte("manifest 1"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := c.CreateTableVersion(fuzzCtx, []string{"ns", "d"}, client.VersionCommit{Version: 1, ManifestPath: warehouse.ObjectPath(staged)}); err != nil {
		t.Fatal(err)
	}
}

// jsonOperation is a route of the spec that takes a JSON body.
type jsonOperation struct {
	method, path string
}

// jsonOperations returns the routes of the spec that take a JSON body,
// sorted by path and method.
func jsonOperations(t testing.TB) []jsonOperation {
	doc, err := gen.GetSpec()
	if err != nil {
		t.Fatal(err)
	}
	var ops []jsonOperation
	for path, item := range doc.Paths.Map() {
		for method, op := range item.Operations() {
			if op.RequestBody != nil && op.RequestBody.Value.Content.Get("application/json") != nil {
				ops = append(ops, jsonOperation{method, path})
			}
		}
	}
	slices.SortFunc(ops, func(a, b jsonOperation) int { return strings.Compare(a.path+" "+a.method, b.path+" "+b.method) })
	return ops
}

// readOnlySuffixes end the paths of the routes that change nothing.
var readOnlySuffixes = []string{"/list", "/describe", "/exists", "/stats", "/query", "/count_rows", "/explain_plan",
	"/analyze_plan", "/tags/version", "/v1/table"}

// FuzzJSONBody binds random bodies into every request type with a JSON
// body, through the real handler path (validation, the LanceDB dialect
// adapter when asked, binding, the handler and the store), about existing
// and missing objects. Every answer must be 2xx or a 4xx ErrorResponse
// (never a 5xx), and valid against the spec.
//
// op picks the route (an index into jsonOperations), target the objects
// named in the path (bits 0-2: the id, bits 3-4: the index name) and,
// with bit 7, the LanceDB dialect.
func FuzzJSONBody(f *testing.F) {
	l := apitest.StartLocal(f)
	fx := &bodyFixture{l: l}
	fx.reset(f)
	ops := jsonOperations(f)
	f.Add(uint8(0), uint8(0), []byte(`{}`))
	f.Fuzz(func(t *testing.T, op, target uint8, body []byte) {
		o := ops[int(op)%len(ops)]
		ids := []string{"ns$m", "ns$d", "ns", "%24", "nope", "ns$nope", "ns$m$x", fx.txID}
		path := strings.ReplaceAll(o.path, "{id}", ids[int(target&7)])
		path = strings.ReplaceAll(path, "{index_name}", []string{"id_idx", "s_idx", "nope", "id_idx"}[target>>3&3])
		var header http.Header
		if target&0x80 != 0 {
			header = http.Header{"X-Lancedb-Database": {"fuzz"}, "User-Agent": {"LanceDB-Fuzz/1.0"}}
		}
		status, _ := send(t, l, o.method, path, header, body)
		readOnly := slices.ContainsFunc(readOnlySuffixes, func(s string) bool { return strings.HasSuffix(o.path, s) })
		if status < 300 && !readOnly {
			fx.reset(t)
		}
	})
}

// FuzzIdentifierRoundTrip creates nested namespaces named by names (one
// name per line) with the Go client, which joins them with delimiter in the
// request path, and checks the server reads back the same names: names and
// delimiters a client cannot send are refused before any request;
// names the server refuses are refused with code 13; every namespace it
// creates can be described and is listed by its exact name.
func FuzzIdentifierRoundTrip(f *testing.F) {
	l := apitest.StartLocal(f)
	f.Add("a\nb", "$")
	f.Fuzz(func(t *testing.T, names, delimiter string) {
		parts := strings.Split(names, "\n")
		if len(parts) > 3 {
			return
		}
		if _, err := client.New("http://lancens.localhost", client.WithDelimiter(delimiter)); err != nil {
			return // a delimiter the client refuses
		}
		c := l.Client(t, client.WithDelimiter(delimiter))
		defer func() {
			// Drop what the input created, by a delimiter that no name
			// holds.
			c := l.Client(t, client.WithDelimiter("\x1f"))
			if _, err := c.DropNamespace(fuzzCtx, parts[:1], &client.DropNamespaceOptions{Behavior: "Cascade", Mode: "Skip"}); err != nil &&
				store.ErrorCode(err) != store.CodeInvalidInput {
				t.Fatalf("drop %q: %v", parts[0], err)
			}
		}()
		for i := 1; i <= len(parts); i++ {
			id, name := parts[:i], parts[i-1]
			_, err := c.CreateNamespace(fuzzCtx, id, nil)
			if err != nil {
				if code := store.ErrorCode(err); code != store.CodeInvalidInput {
					t.Fatalf("create %q with delimiter %q: %v (code %d)", id, delimiter, err, code)
				}
				return
			}
			if _, err := c.DescribeNamespace(fuzzCtx, id); err != nil {
				t.Fatalf("created %q with delimiter %q, but describe fails: %v", id, delimiter, err)
			}
			var listed []string
			for n, err := range c.ListNamespaces(fuzzCtx, id[:i-1]) {
				if err != nil {
					t.Fatalf("list %q: %v", id[:i-1], err)
				}
				listed = append(listed, n)
			}
			if !slices.Contains(listed, name) {
				t.Fatalf("created %q with delimiter %q, but its parent lists %q", id, delimiter, listed)
			}
		}
	})
}

// FuzzIdentifierPath sends a raw, possibly malformed {id} path segment and
// delimiter to the namespace routes: every answer must be 2xx or a 4xx
// ErrorResponse. A namespace created that way must be listed under a name
// by which the Go client can reach it.
func FuzzIdentifierPath(f *testing.F) {
	l := apitest.StartLocal(f)
	f.Add("a%24b", "")
	f.Fuzz(func(t *testing.T, raw, delimiter string) {
		q := ""
		if delimiter != "" {
			q = "?delimiter=" + strings.ReplaceAll(strings.ReplaceAll(delimiter, "%", "%25"), "&", "%26")
		}
		target := func(op string) string { return "/v1/namespace/" + raw + "/" + op + q }
		if _, err := http.NewRequest(http.MethodPost, "http://lancens.localhost"+target("create"), nil); err != nil {
			return
		}
		send(t, l, http.MethodPost, target("describe"), nil, []byte(`{}`))
		send(t, l, http.MethodPost, target("exists"), nil, []byte(`{}`))
		send(t, l, http.MethodGet, target("list"), nil, nil)
		send(t, l, http.MethodPost, "/v1/table/"+raw+"/describe"+q, nil, []byte(`{}`))
		status, _ := send(t, l, http.MethodPost, target("create"), nil, []byte(`{}`))
		if status != http.StatusOK {
			return
		}
		c := l.Client(t, client.WithDelimiter("\x1f"))
		var listed []string
		for n, err := range c.ListNamespaces(fuzzCtx, []string{}) {
			if err != nil {
				t.Fatal(err)
			}
			listed = append(listed, n)
		}
		for _, n := range listed {
			if _, err := c.DropNamespace(fuzzCtx, []string{n}, &client.DropNamespaceOptions{Behavior: "Cascade"}); err != nil {
				t.Fatalf("created through path %q (delimiter %q), listed as %q, but the client cannot drop it: %v", raw, delimiter, n, err)
			}
		}
	})
}

// ftsDocs are the documents of the full-text fuzz target: t is indexed
// as whitespace-separated terms kept as they are, r as one raw term kept as
// it is (both with positions), s with the default analyzer (stemming, stop
// words, lower case).
var ftsDocs = func() []map[string]any {
	texts := []string{"red fox fox the whale", "the red fox", "a whale a whale", ""}
	r := rand.New(rand.NewPCG(1, 2))
	for len(texts) < 40 {
		text := make([]string, 1+r.IntN(7))
		for j := range text {
			text[j] = ftsWords[r.IntN(len(ftsWords))]
		}
		texts = append(texts, strings.Join(text, " "))
	}
	docs := make([]map[string]any, len(texts))
	for i, text := range texts {
		docs[i] = map[string]any{"id": i, "t": text, "s": text, "r": ftsRaws[i%len(ftsRaws)]}
	}
	return docs
}()

// ftsWords are the words of the documents' t and s; ftsRaws the values of
// their r.
var (
	ftsWords = []string{"red", "fox", "Red", "whale", "blue", "the", "a", "fox's"}
	ftsRaws  = []string{"red", "red fox", "Blue", "", "the whale", "fox"}
)

// ftsFixture creates table docs of ftsDocs with its full-text indexes.
func ftsFixture(t testing.TB, l *apitest.Local) {
	t.Helper()
	schema := arrowtest.Schema("id", arrow.PrimitiveTypes.Int64, "t", arrow.BinaryTypes.String,
		"s", arrow.BinaryTypes.String, "r", arrow.BinaryTypes.String)
	rows, err := json.Marshal(ftsDocs)
	if err != nil {
		t.Fatal(err)
	}
	rec := arrowtest.Record(t, schema, string(rows))
	if _, err := l.Client(t).CreateTable(fuzzCtx, []string{"docs"}, schema, []arrow.RecordBatch{rec}, nil); err != nil {
		t.Fatal(err)
	}
	asIs := `"with_position":true,"lower_case":false,"stem":false,"remove_stop_words":false,"ascii_folding":false,"max_token_length":0`
	mustSend(t, l, "/v1/table/docs/create_index", `{"column":"t","index_type":"INVERTED","base_tokenizer":"whitespace",`+asIs+`}`)
	mustSend(t, l, "/v1/table/docs/create_index", `{"column":"r","index_type":"INVERTED","base_tokenizer":"raw",`+asIs+`}`)
	mustSend(t, l, "/v1/table/docs/create_index", `{"column":"s","index_type":"INVERTED","with_position":true}`)
}

// FuzzFullTextQuery sends random full_text_query values (structured query
// trees and plain query strings) to a table with full-text indexes. Every
// answer must be 2xx or a 4xx ErrorResponse. When the query only searches
// the columns whose terms are kept as they are (t and r), without
// fuzziness, the rows it finds must be those ftsExpected computes.
func FuzzFullTextQuery(f *testing.F) {
	l := apitest.StartLocal(f)
	ftsFixture(f, l)
	f.Add(`{"structured_query":{"query":{"match":{"terms":"red fox","column":"t"}}}}`)
	f.Fuzz(func(t *testing.T, query string) {
		checkFullText(t, l, query)
	})
}

// FuzzFullTextTree is FuzzFullTextQuery over valid query trees: prog
// builds one (see ftsTree) from words of the documents and of text, so
// that the oracle checks deep combinations random JSON rarely reaches.
func FuzzFullTextTree(f *testing.F) {
	l := apitest.StartLocal(f)
	ftsFixture(f, l)
	f.Add([]byte{4, 0, 1, 3, 0}, "red whale")
	f.Fuzz(func(t *testing.T, prog []byte, text string) {
		g := &ftsTree{prog: prog, words: append(slices.Concat(ftsWords, ftsRaws, strings.Fields(text)), text)}
		var q any
		if g.next()%4 == 0 {
			cols := []string{g.column()}
			if g.next()%2 == 0 {
				cols = append(cols, g.column())
			}
			q = map[string]any{"string_query": map[string]any{"query": g.terms(), "columns": cols}}
		} else {
			q = map[string]any{"structured_query": map[string]any{"query": g.node(0)}}
		}
		query, err := json.Marshal(q)
		if err != nil {
			t.Fatal(err)
		}
		checkFullText(t, l, string(query))
	})
}

// checkFullText sends a query with the full_text_query value query to
// table docs and, when it succeeds and the oracle models it, compares the
// rows found with ftsExpected.
func checkFullText(t *testing.T, l *apitest.Local, query string) {
	t.Helper()
	body := `{"k":1000,"vector":null,"columns":{"column_names":["id"]},"full_text_query":` + query + `}`
	status, out := send(t, l, http.MethodPost, "/v1/table/docs/query", nil, []byte(body))
	if status != http.StatusOK {
		return
	}
	var req gen.QueryTableRequest
	if err := json.Unmarshal([]byte(body), &req); err != nil {
		t.Fatalf("query %s answered 200, but does not decode: %v", query, err)
	}
	want, ok := ftsExpected(&req)
	if !ok {
		return
	}
	if got := resultIDs(t, out); !slices.Equal(got, want) {
		t.Fatalf("query %s found rows %v, want %v", query, got, want)
	}
}

// ftsTree builds a structured full-text query, reading its choices from
// prog (zeros once prog is used up).
type ftsTree struct {
	prog  []byte
	words []string
}

func (g *ftsTree) next() int {
	if len(g.prog) == 0 {
		return 0
	}
	b := g.prog[0]
	g.prog = g.prog[1:]
	return int(b)
}

func (g *ftsTree) terms() string {
	n := 1 + g.next()%3
	out := make([]string, n)
	for i := range out {
		out[i] = g.words[g.next()%len(g.words)]
	}
	return strings.Join(out, " ")
}

// column picks an as-is column most of the time, or s, which the oracle
// does not model.
func (g *ftsTree) column() string {
	return []string{"t", "r", "t", "r", "t", "s"}[g.next()%6]
}

func (g *ftsTree) match() map[string]any {
	m := map[string]any{"terms": g.terms(), "column": g.column()}
	b := g.next()
	if b&1 != 0 {
		m["operator"] = []string{"And", "Or", "AND", "or"}[b>>1&3]
	}
	if b&8 != 0 {
		m["boost"] = float64(b>>4) / 4
	}
	if b == 0xff {
		m["fuzziness"] = 1
	}
	return m
}

// node returns a query node nested at most 3 deep.
func (g *ftsTree) node(depth int) map[string]any {
	kind := g.next() % 5
	if depth >= 3 {
		kind %= 2
	}
	nodes := func() []any {
		out := []any{}
		for range g.next() % 3 {
			out = append(out, g.node(depth+1))
		}
		return out
	}
	switch kind {
	case 0:
		return map[string]any{"match": g.match()}
	case 1:
		return map[string]any{"phrase": map[string]any{"terms": g.terms(), "column": g.column(), "slop": g.next() % 4}}
	case 2:
		var ms []any
		for range 1 + g.next()%3 {
			ms = append(ms, g.match())
		}
		return map[string]any{"multi_match": map[string]any{"match_queries": ms}}
	case 3:
		return map[string]any{"boost": map[string]any{"positive": g.node(depth + 1), "negative": g.node(depth + 1),
			"negative_boost": float64(g.next()%5) / 4}}
	}
	return map[string]any{"boolean": map[string]any{"must": nodes(), "should": nodes(), "must_not": nodes()}}
}

// resultIDs returns the sorted ids of an Arrow IPC file of query results.
func resultIDs(t *testing.T, body []byte) []int64 {
	t.Helper()
	ids := []int64{}
	rec := arrowFile(t, body)
	col := rec.Column(rec.Schema().FieldIndices("id")[0])
	for i := range col.Len() {
		ids = append(ids, col.GetOneForMarshal(i).(int64))
	}
	slices.Sort(ids)
	return ids
}

// ftsExpected returns the ids of ftsDocs a full-text query matches, or
// false when the query is outside what the oracle models (columns with an
// analyzer, fuzziness).
func ftsExpected(req *gen.QueryTableRequest) ([]int64, bool) {
	q := req.FullTextQuery
	if q == nil {
		return nil, false
	}
	var set map[int64]bool
	var ok bool
	switch {
	case q.StringQuery != nil:
		cols := value(q.StringQuery.Columns)
		if len(cols) == 0 {
			return nil, false
		}
		set, ok = map[int64]bool{}, true
		for _, c := range cols {
			m, mok := ftsMatch(c, q.StringQuery.Query, false, 1)
			if !mok {
				return nil, false
			}
			for id := range m {
				set[id] = true
			}
		}
	case q.StructuredQuery != nil:
		set, ok = ftsEval(&q.StructuredQuery.Query)
	}
	if !ok {
		return nil, false
	}
	out := []int64{}
	for id := range set {
		out = append(out, id)
	}
	slices.Sort(out)
	return out, true
}

// ftsEval returns the rows query q matches, as sets.
func ftsEval(q *gen.FtsQuery) (map[int64]bool, bool) {
	switch {
	case q.Match != nil:
		return ftsMatchQuery(q.Match)
	case q.Phrase != nil:
		return ftsMatch(value(q.Phrase.Column), q.Phrase.Terms, true, int(value(q.Phrase.Slop)))
	case q.MultiMatch != nil:
		out := map[int64]bool{}
		for i := range q.MultiMatch.MatchQueries {
			m, ok := ftsMatchQuery(&q.MultiMatch.MatchQueries[i])
			if !ok {
				return nil, false
			}
			for id := range m {
				out[id] = true
			}
		}
		return out, true
	case q.Boost != nil:
		// Boost scales the scores of the negative matches; it keeps the
		// rows of the positive query.
		if _, ok := ftsEval(&q.Boost.Negative); !ok {
			return nil, false
		}
		return ftsEval(&q.Boost.Positive)
	case q.Boolean != nil:
		eval := func(qs []gen.FtsQuery) ([]map[int64]bool, bool) {
			var out []map[int64]bool
			for i := range qs {
				m, ok := ftsEval(&qs[i])
				if !ok {
					return nil, false
				}
				out = append(out, m)
			}
			return out, true
		}
		must, ok1 := eval(q.Boolean.Must)
		should, ok2 := eval(q.Boolean.Should)
		mustNot, ok3 := eval(q.Boolean.MustNot)
		if !ok1 || !ok2 || !ok3 {
			return nil, false
		}
		out := map[int64]bool{}
		if len(must) == 0 {
			for _, m := range should {
				for id := range m {
					out[id] = true
				}
			}
		} else {
			for id := range must[0] {
				out[id] = true
			}
			for _, m := range must[1:] {
				for id := range out {
					if !m[id] {
						delete(out, id)
					}
				}
			}
		}
		for _, m := range mustNot {
			for id := range m {
				delete(out, id)
			}
		}
		return out, true
	}
	return nil, false
}

func ftsMatchQuery(m *gen.MatchQuery) (map[int64]bool, bool) {
	if value(m.Fuzziness) != 0 {
		return nil, false
	}
	and := m.Operator != nil && strings.EqualFold(string(*m.Operator), "and")
	if and {
		return ftsMatch(value(m.Column), m.Terms, false, -1)
	}
	return ftsMatch(value(m.Column), m.Terms, false, 1)
}

// ftsMatch returns the documents of ftsDocs whose column holds the terms
// of text: any of them (mode 1), all of them (mode -1), or with phrase, all
// in order, each within 1+slop positions of the previous. Only columns t
// and r are modelled.
func ftsMatch(column, text string, phrase bool, mode int) (map[int64]bool, bool) {
	var analyze func(string) []string
	switch column {
	case "t":
		analyze = strings.Fields
	case "r":
		analyze = func(s string) []string {
			if s == "" {
				return nil
			}
			return []string{s}
		}
	default:
		return nil, false
	}
	terms := analyze(text)
	out := map[int64]bool{}
	for _, d := range ftsDocs {
		doc := analyze(d[column].(string))
		var hit bool
		switch {
		case len(terms) == 0:
		case phrase:
			hit = phraseIn(doc, terms, mode)
		case mode < 0:
			hit = !slices.ContainsFunc(terms, func(t string) bool { return !slices.Contains(doc, t) })
		default:
			hit = slices.ContainsFunc(terms, func(t string) bool { return slices.Contains(doc, t) })
		}
		if hit {
			out[int64(d["id"].(int))] = true
		}
	}
	return out, true
}

// phraseIn reports whether doc holds terms in order, each within 1+slop
// positions after the previous one.
func phraseIn(doc, terms []string, slop int) bool {
	var from func(i, at int) bool // terms[i:] follow position at
	from = func(i, at int) bool {
		if i == len(terms) {
			return true
		}
		for p := at + 1; p < len(doc) && p <= at+1+slop; p++ {
			if doc[p] == terms[i] && from(i+1, p) {
				return true
			}
		}
		return false
	}
	for p, w := range doc {
		if w == terms[0] && from(1, p) {
			return true
		}
	}
	return false
}

// value returns *p, or the zero value when p is nil.
func value[T any](p *T) T {
	var zero T
	if p != nil {
		return *p
	}
	return zero
}
