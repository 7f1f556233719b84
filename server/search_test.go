package server_test

import (
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/lancens/lancens/client"
	"github.com/lancens/lancens/gen"
	"github.com/lancens/lancens/internal/testkit/apitest"
)

// vectorTable builds rows (id int64, category int32, vector fixed_size_list
// <float32>[dim]) from the given vectors.
func vectorTable(vecs [][]float32, firstID int) (*arrow.Schema, arrow.RecordBatch) {
	dim := len(vecs[0])
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64},
		{Name: "category", Type: arrow.PrimitiveTypes.Int32},
		{Name: "vector", Type: arrow.FixedSizeListOf(int32(dim), arrow.PrimitiveTypes.Float32), Nullable: true},
	}, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
	vl := b.Field(2).(*array.FixedSizeListBuilder)
	for i, v := range vecs {
		b.Field(0).(*array.Int64Builder).Append(int64(firstID + i))
		b.Field(1).(*array.Int32Builder).Append(int32((firstID + i) % 10))
		vl.Append(true)
		vl.ValueBuilder().(*array.Float32Builder).AppendValues(v, nil)
	}
	return schema, b.NewRecordBatch()
}

// clustered returns n vectors drawn around `clusters` random centres.
func clustered(n, dim, clusters int, seed uint64) [][]float32 {
	r := rand.New(rand.NewPCG(seed, 9))
	centres := make([][]float32, clusters)
	for i := range centres {
		centres[i] = make([]float32, dim)
		for j := range centres[i] {
			centres[i][j] = float32(r.NormFloat64() * 4)
		}
	}
	out := make([][]float32, n)
	for i := range out {
		c := centres[r.IntN(clusters)]
		out[i] = make([]float32, dim)
		for j := range out[i] {
			out[i][j] = c[j] + float32(r.NormFloat64())
		}
	}
	return out
}

// distance is the reference distance Lance reports for each metric.
func distance(metric string, a, b []float32) float64 {
	var dot, na, nb, l2 float64
	for i := range a {
		x, y := float64(a[i]), float64(b[i])
		dot += x * y
		na += x * x
		nb += y * y
		l2 += (x - y) * (x - y)
	}
	switch metric {
	case "cosine":
		return 1 - dot/math.Sqrt(na*nb)
	case "dot":
		return -dot
	}
	return l2
}

// bruteForce returns the ids (row i has id i) of the k nearest vectors
// among those allow accepts.
func bruteForce(metric string, vecs [][]float32, q []float32, k int, allow func(int) bool) []int64 {
	type cand struct {
		id int
		d  float64
	}
	var cs []cand
	for i, v := range vecs {
		if allow == nil || allow(i) {
			cs = append(cs, cand{i, distance(metric, v, q)})
		}
	}
	sort.Slice(cs, func(a, b int) bool {
		if cs[a].d != cs[b].d {
			return cs[a].d < cs[b].d
		}
		return cs[a].id < cs[b].id
	})
	out := []int64{}
	for _, c := range cs[:min(k, len(cs))] {
		out = append(out, int64(c.id))
	}
	return out
}

// search runs a vector query and returns the ids and distances.
func search(t *testing.T, c *client.Client, table string, q gen.QueryTableRequest) ([]int64, []float32) {
	t.Helper()
	rec := query(t, c, table, q)
	var ids []int64
	var dists []float32
	idCol := rec.Column(rec.Schema().FieldIndices("id")[0]).(*array.Int64)
	dCol := rec.Column(rec.Schema().FieldIndices("_distance")[0]).(*array.Float32)
	for i := 0; i < int(rec.NumRows()); i++ {
		ids = append(ids, idCol.Value(i))
		dists = append(dists, dCol.Value(i))
	}
	return ids, dists
}

func vectorQuery(v []float32, k int) gen.QueryTableRequest {
	q := gen.QueryTableRequest{K: k}
	q.Vector = &struct {
		MultiVector  *[][]float32 `json:"multi_vector,omitempty"`
		SingleVector *[]float32   `json:"single_vector,omitempty"`
	}{SingleVector: &v}
	return q
}

func recall(got, want []int64) float64 {
	hit := 0
	for _, g := range got {
		if slices.Contains(want, g) {
			hit++
		}
	}
	return float64(hit) / float64(len(want))
}

func createIndex(t testing.TB, s *apitest.Server, table, body string) {
	t.Helper()
	status, out, _ := s.Do(t, "POST", "/v1/table/"+table+"/create_index", jsonHeader, []byte(body))
	if status != 200 {
		t.Fatalf("create_index %s: %d %s", body, status, out)
	}
	var resp gen.CreateTableIndexResponse
	if err := json.Unmarshal(out, &resp); err != nil || resp.TransactionId == nil {
		t.Fatalf("create_index answer %s", out)
	}
	if tx := waitTransaction(t, s.Client, *resp.TransactionId); tx.Status != "Succeeded" {
		t.Fatalf("index build: %+v", tx)
	}
}

func TestExactVectorSearch(t *testing.T) {
	s := apitest.Start(t, apitest.Options{})
	vecs := clustered(600, 8, 5, 1)
	schema, rec := vectorTable(vecs, 0)
	if _, err := s.Client.CreateTable(t.Context(), []string{"v"}, schema, []arrow.RecordBatch{rec}, nil); err != nil {
		t.Fatal(err)
	}
	queries := clustered(5, 8, 5, 2)
	for _, metric := range []string{"l2", "cosine", "dot"} {
		for _, filtered := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/filter=%v", metric, filtered), func(t *testing.T) {
				for _, qv := range queries {
					q := vectorQuery(qv, 7)
					q.DistanceType = &metric
					var allow func(int) bool
					if filtered {
						q.Filter = ptr("category = 3")
						allow = func(i int) bool { return i%10 == 3 }
					}
					ids, dists := search(t, s.Client, "v", q)
					if want := bruteForce(metric, vecs, qv, 7, allow); !slices.Equal(ids, want) {
						t.Fatalf("got %v, want %v", ids, want)
					}
					for i, id := range ids {
						if want := distance(metric, vecs[id], qv); math.Abs(float64(dists[i])-want) > 1e-3*math.Max(1, math.Abs(want)) {
							t.Fatalf("_distance %v, want %v", dists[i], want)
						}
					}
					if !slices.IsSorted(dists) {
						t.Fatalf("distances not ascending: %v", dists)
					}
				}
			})
		}
	}
}

func TestVectorSearchOptions(t *testing.T) {
	s := apitest.Start(t, apitest.Options{})
	ctx := t.Context()
	vecs := clustered(400, 8, 4, 3)
	schema, rec := vectorTable(vecs, 0)
	if _, err := s.Client.CreateTable(ctx, []string{"v"}, schema, []arrow.RecordBatch{rec}, nil); err != nil {
		t.Fatal(err)
	}
	qv := vecs[17]
	t.Run("Offset", func(t *testing.T) {
		all, _ := search(t, s.Client, "v", vectorQuery(qv, 10))
		q := vectorQuery(qv, 10)
		q.Offset = ptr(4)
		got, _ := search(t, s.Client, "v", q)
		if !slices.Equal(got, all[4:]) {
			t.Fatalf("offset: %v, want %v", got, all[4:])
		}
	})
	t.Run("Bounds", func(t *testing.T) {
		_, dists := search(t, s.Client, "v", vectorQuery(qv, 10))
		q := vectorQuery(qv, 10)
		q.LowerBound, q.UpperBound = ptr(dists[2]), ptr(dists[6])
		_, got := search(t, s.Client, "v", q)
		if !slices.Equal(got, dists[2:6]) {
			t.Fatalf("bounded distances %v, want %v", got, dists[2:6])
		}
	})
	t.Run("PrefilterKeepsK", func(t *testing.T) {
		q := vectorQuery(qv, 10)
		q.Filter = ptr("category = 9")
		ids, _ := search(t, s.Client, "v", q)
		if len(ids) != 10 {
			t.Fatalf("prefiltered search returned %d rows, want 10", len(ids))
		}
		q.Prefilter = ptr(false)
		post, _ := search(t, s.Client, "v", q)
		if len(post) >= 10 {
			t.Fatalf("postfiltered search of a 10%% filter returned %d of 10", len(post))
		}
		for _, id := range post {
			if id%10 != 9 {
				t.Fatalf("postfilter let %d through", id)
			}
		}
	})
	t.Run("FilterMatchingNothing", func(t *testing.T) {
		// The first filter is evaluated in memory, the second (CAST) by
		// SQLite; neither may read as "no filter".
		for _, filter := range []string{"category = 99", "CAST(category AS STRING) = 'x'"} {
			for _, pre := range []bool{true, false} {
				q := vectorQuery(qv, 10)
				q.Filter, q.Prefilter = ptr(filter), ptr(pre)
				if ids, _ := search(t, s.Client, "v", q); len(ids) != 0 {
					t.Fatalf("%s (prefilter %v) matched rows %v", filter, pre, ids)
				}
			}
		}
	})
	t.Run("MultiVector", func(t *testing.T) {
		q := gen.QueryTableRequest{K: 3}
		multi := [][]float32{vecs[1], vecs[2]}
		q.Vector = &struct {
			MultiVector  *[][]float32 `json:"multi_vector,omitempty"`
			SingleVector *[]float32   `json:"single_vector,omitempty"`
		}{MultiVector: &multi}
		rec := query(t, s.Client, "v", q)
		if got := column(t, rec, "query_index"); got != `[0,0,0,1,1,1]` {
			t.Fatalf("query_index %s", got)
		}
		ids := column(t, rec, "id")
		if !strings.HasPrefix(ids, "[1,") || !strings.Contains(ids, ",2,") {
			t.Fatalf("ids %s: each query should find its own vector first", ids)
		}
	})
	t.Run("RowIDAndColumns", func(t *testing.T) {
		q := vectorQuery(qv, 2)
		q.WithRowId = ptr(true)
		cols := []string{"id"}
		q.Columns = &struct {
			ColumnAliases *map[string]string `json:"column_aliases,omitempty"`
			ColumnNames   *[]string          `json:"column_names,omitempty"`
		}{ColumnNames: &cols}
		rec := query(t, s.Client, "v", q)
		var names []string
		for _, f := range rec.Schema().Fields() {
			names = append(names, f.Name)
		}
		if !slices.Equal(names, []string{"id", "_distance", "_rowid"}) {
			t.Fatalf("columns %q", names)
		}
	})
	t.Run("TimeTravel", func(t *testing.T) {
		if _, err := s.Client.Delete(ctx, []string{"v"}, "id = 17"); err != nil {
			t.Fatal(err)
		}
		now, _ := search(t, s.Client, "v", vectorQuery(qv, 1))
		q := vectorQuery(qv, 1)
		q.Version = ptr(int64(1))
		then, _ := search(t, s.Client, "v", q)
		if now[0] == 17 || then[0] != 17 {
			t.Fatalf("after deleting row 17: latest %v, version 1 %v", now, then)
		}
	})
	for _, tc := range []struct {
		name string
		body string
		want int
	}{
		{"WrongDimension", `{"vector":{"single_vector":[1,2,3]},"k":3}`, 13},
		{"UnknownColumn", `{"vector":{"single_vector":[1,2,3,4,5,6,7,8]},"k":3,"vector_column":"nope"}`, 12},
		{"NotAVector", `{"vector":{"single_vector":[1,2,3,4,5,6,7,8]},"k":3,"vector_column":"id"}`, 13},
		{"UnknownMetric", `{"vector":{"single_vector":[1,2,3,4,5,6,7,8]},"k":3,"distance_type":"manhattan"}`, 13},
		{"BothVectorForms", `{"vector":{"single_vector":[1],"multi_vector":[[1]]},"k":3}`, 13},
		{"HammingOnFloats", `{"vector":{"single_vector":[1,2,3,4,5,6,7,8]},"k":3,"distance_type":"hamming"}`, 13},
	} {
		t.Run(tc.name, func(t *testing.T) {
			status, body, _ := s.Do(t, "POST", "/v1/table/v/query", jsonHeader, []byte(tc.body))
			if apitest.ErrorCode(body) != tc.want {
				t.Fatalf("got %d %s, want code %d", status, body, tc.want)
			}
		})
	}
}

func TestHammingSearch(t *testing.T) {
	s := apitest.Start(t, apitest.Options{})
	r := rand.New(rand.NewPCG(5, 5))
	schema := arrow.NewSchema([]arrow.Field{{Name: "id", Type: arrow.PrimitiveTypes.Int64},
		{Name: "vector", Type: arrow.FixedSizeListOf(4, arrow.PrimitiveTypes.Uint8)}}, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
	var vecs [][]byte
	for i := range 300 {
		v := []byte{byte(r.IntN(256)), byte(r.IntN(256)), byte(r.IntN(256)), byte(r.IntN(256))}
		vecs = append(vecs, v)
		b.Field(0).(*array.Int64Builder).Append(int64(i))
		vl := b.Field(1).(*array.FixedSizeListBuilder)
		vl.Append(true)
		vl.ValueBuilder().(*array.Uint8Builder).AppendValues(v, nil)
	}
	if _, err := s.Client.CreateTable(t.Context(), []string{"h"}, schema, []arrow.RecordBatch{b.NewRecordBatch()}, nil); err != nil {
		t.Fatal(err)
	}
	ham := func(a, b []byte) int {
		d := 0
		for i := range a {
			for x := a[i] ^ b[i]; x != 0; x &= x - 1 {
				d++
			}
		}
		return d
	}
	check := func(t *testing.T) {
		qv := vecs[42]
		q := vectorQuery([]float32{float32(qv[0]), float32(qv[1]), float32(qv[2]), float32(qv[3])}, 5)
		q.DistanceType = ptr("hamming")
		ids, dists := search(t, s.Client, "h", q)
		if ids[0] != 42 || dists[0] != 0 {
			t.Fatalf("nearest %v %v", ids, dists)
		}
		for i, id := range ids {
			if int(dists[i]) != ham(vecs[id], qv) {
				t.Fatalf("distance %v, want %d", dists[i], ham(vecs[id], qv))
			}
		}
	}
	t.Run("Exact", check)
	createIndex(t, s, "h", `{"column":"vector","index_type":"IVF_FLAT","distance_type":"hamming","num_partitions":4}`)
	t.Run("Indexed", check)
}

// TestVectorIndexes builds each index type on clustered data and checks
// recall against brute force.
func TestVectorIndexes(t *testing.T) {
	const n, dim, k = 4000, 32, 10
	vecs := clustered(n, dim, 40, 11)
	queries := clustered(30, dim, 40, 12)
	truth := make([][]int64, len(queries))
	for i, q := range queries {
		truth[i] = bruteForce("l2", vecs, q, k, nil)
	}
	for _, tc := range []struct {
		index  string
		params string
		tune   func(q *gen.QueryTableRequest)
		min    float64
	}{
		{"IVF_FLAT", `"num_partitions":16`, func(q *gen.QueryTableRequest) { q.Nprobes = ptr(16) }, 1},
		{"IVF_PQ", `"num_partitions":16,"num_sub_vectors":8`, func(q *gen.QueryTableRequest) { q.Nprobes = ptr(16); q.RefineFactor = ptr(int32(10)) }, 0.85},
		{"IVF_SQ", `"num_partitions":16`, func(q *gen.QueryTableRequest) { q.Nprobes = ptr(16); q.RefineFactor = ptr(int32(5)) }, 0.9},
		{"IVF_HNSW_SQ", `"num_partitions":4,"m":16,"ef_construction":100`, func(q *gen.QueryTableRequest) { q.Nprobes = ptr(4); q.Ef = ptr(64) }, 0.9},
		{"IVF_HNSW_PQ", `"num_partitions":4,"num_sub_vectors":8`, func(q *gen.QueryTableRequest) {
			q.Nprobes = ptr(4)
			q.Ef = ptr(64)
			q.RefineFactor = ptr(int32(10))
		}, 0.85},
	} {
		t.Run(tc.index, func(t *testing.T) {
			s := apitest.Start(t, apitest.Options{})
			schema, rec := vectorTable(vecs, 0)
			if _, err := s.Client.CreateTable(t.Context(), []string{"v"}, schema, []arrow.RecordBatch{rec}, nil); err != nil {
				t.Fatal(err)
			}
			createIndex(t, s, "v", fmt.Sprintf(`{"column":"vector","index_type":%q,%s}`, tc.index, tc.params))
			var total float64
			for i, qv := range queries {
				q := vectorQuery(qv, k)
				tc.tune(&q)
				ids, _ := search(t, s.Client, "v", q)
				total += recall(ids, truth[i])
			}
			got := total / float64(len(queries))
			t.Logf("%s recall@%d = %.3f", tc.index, k, got)
			if got < tc.min {
				t.Fatalf("recall@%d = %.3f, want at least %.2f", k, got, tc.min)
			}
			// Exact search on demand, whatever the index.
			q := vectorQuery(queries[0], k)
			q.BypassVectorIndex = ptr(true)
			if ids, _ := search(t, s.Client, "v", q); !slices.Equal(ids, truth[0]) {
				t.Fatalf("bypass_vector_index: %v, want %v", ids, truth[0])
			}
		})
	}
}

// TestIndexLifecycle covers the index APIs, the unindexed tail and
// persistence across a restart.
func TestIndexLifecycle(t *testing.T) {
	dir := t.TempDir()
	opts := apitest.Options{DBPath: dir + "/lancens.db", Warehouse: dir + "/wh"}
	s := apitest.Start(t, opts)
	ctx := t.Context()
	vecs := clustered(1000, 8, 8, 21)
	schema, rec := vectorTable(vecs, 0)
	if _, err := s.Client.CreateTable(ctx, []string{"v"}, schema, []arrow.RecordBatch{rec}, nil); err != nil {
		t.Fatal(err)
	}
	createIndex(t, s, "v", `{"column":"vector","index_type":"IVF_PQ","name":"vidx","distance_type":"l2","num_partitions":8,"num_sub_vectors":4}`)
	createIndex(t, s, "v", `{"column":"category","index_type":"BITMAP"}`)
	status, body, _ := s.Do(t, "POST", "/v1/table/v/create_scalar_index", jsonHeader, []byte(`{"column":"id","index_type":"BTREE","name":"by_id"}`))
	if status != 200 {
		t.Fatalf("scalar index: %d %s", status, body)
	}
	// New rows after the build are searched exactly, and counted as
	// unindexed.
	extra := clustered(5, 8, 8, 22)
	_, more := vectorTable(extra, 1000)
	if _, err := s.Client.Insert(ctx, []string{"v"}, schema, []arrow.RecordBatch{more}, ""); err != nil {
		t.Fatal(err)
	}
	ids, _ := search(t, s.Client, "v", vectorQuery(extra[2], 1))
	if ids[0] != 1002 {
		t.Fatalf("a row written after the build was not found: %v", ids)
	}
	fast := vectorQuery(extra[2], 1)
	fast.FastSearch = ptr(true)
	if ids, _ := search(t, s.Client, "v", fast); ids[0] >= 1000 {
		t.Fatalf("fast_search searched unindexed rows: %v", ids)
	}
	status, body, _ = s.Do(t, "POST", "/v1/table/v/index/list", jsonHeader, []byte(`{}`))
	var list gen.ListTableIndicesResponse
	if status != 200 || json.Unmarshal(body, &list) != nil {
		t.Fatalf("list: %d %s", status, body)
	}
	var names []string
	for _, ix := range list.Indexes {
		names = append(names, ix.IndexName)
		if ix.IndexName == "vidx" && (*ix.NumIndexedRows != 1000 || *ix.NumUnindexedRows != 5 || *ix.IndexType != "IVF_PQ" || ix.Status != "SUCCEEDED") {
			t.Fatalf("vidx: %+v indexed %d unindexed %d", ix, *ix.NumIndexedRows, *ix.NumUnindexedRows)
		}
	}
	if !slices.Equal(names, []string{"by_id", "category_idx", "vidx"}) {
		t.Fatalf("indexes %q", names)
	}
	status, body, _ = s.Do(t, "POST", "/v1/table/v/index/vidx/stats", jsonHeader, []byte(`{}`))
	var st gen.DescribeTableIndexStatsResponse
	if status != 200 || json.Unmarshal(body, &st) != nil || *st.DistanceType != "l2" || *st.NumUnindexedRows != 5 {
		t.Fatalf("stats: %d %s", status, body)
	}
	for _, tc := range []struct {
		path, body string
		want       int
	}{
		{"create_index", `{"column":"vector","index_type":"IVF_PQ","name":"vidx"}`, 7},
		{"create_index", `{"column":"vector","index_type":"NGRAM"}`, 0},
		{"create_index", `{"column":"vector","index_type":"WHATEVER"}`, 13},
		{"create_index", `{"column":"nope","index_type":"BTREE"}`, 12},
		{"create_index", `{"column":"id","index_type":"IVF_FLAT"}`, 13},
		{"create_index", `{"column":"vector","index_type":"INVERTED"}`, 13},
		{"create_scalar_index", `{"column":"vector","index_type":"IVF_PQ"}`, 13},
		{"index/nope/stats", `{}`, 6},
		{"index/nope/drop", ``, 6},
	} {
		status, body, _ := s.Do(t, "POST", "/v1/table/v/"+tc.path, jsonHeader, []byte(tc.body))
		if apitest.ErrorCode(body) != tc.want {
			t.Errorf("%s %s: %d %s, want code %d", tc.path, tc.body, status, body, tc.want)
		}
	}
	// The index survives a restart.
	s.Stop()
	s = apitest.Start(t, opts)
	status, body, _ = s.Do(t, "POST", "/v1/table/v/explain_plan", jsonHeader,
		[]byte(`{"query":{"vector":{"single_vector":[0,0,0,0,0,0,0,0]},"k":3}}`))
	if status != 200 || !strings.Contains(string(body), "IVF_PQ") {
		t.Fatalf("explain after restart: %d %s", status, body)
	}
	if ids, _ := search(t, s.Client, "v", vectorQuery(extra[2], 1)); ids[0] != 1002 {
		t.Fatalf("search after restart: %v", ids)
	}
	status, _, _ = s.Do(t, "POST", "/v1/table/v/index/vidx/drop", nil, nil)
	if status != 200 {
		t.Fatalf("drop index: %d", status)
	}
	status, body, _ = s.Do(t, "POST", "/v1/table/v/explain_plan", jsonHeader,
		[]byte(`{"query":{"vector":{"single_vector":[0,0,0,0,0,0,0,0]},"k":3}}`))
	if !strings.Contains(string(body), "exact search") {
		t.Fatalf("explain after drop: %d %s", status, body)
	}
}

func TestFullTextSearch(t *testing.T) {
	s := apitest.Start(t, apitest.Options{})
	ctx := t.Context()
	schema := arrow.NewSchema([]arrow.Field{{Name: "id", Type: arrow.PrimitiveTypes.Int64},
		{Name: "title", Type: arrow.BinaryTypes.String, Nullable: true}, {Name: "body", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "tags", Type: arrow.ListOf(arrow.BinaryTypes.String), Nullable: true}}, nil)
	docs := `[
		{"id":1,"title":"Running shoes","body":"The best shoes for running on roads","tags":["sport","shoes"]},
		{"id":2,"title":"Walking boots","body":"Boots for walking in the mountains, not for running","tags":["outdoor"]},
		{"id":3,"title":"Café guide","body":"Where to drink coffee in Paris","tags":["food"]},
		{"id":4,"title":"Trail running","body":"Running trails and mountain runs for runners","tags":["sport","outdoor"]},
		{"id":5,"title":null,"body":"A quick brown fox jumps over the lazy dog","tags":null}]`
	if _, err := s.Client.CreateTable(ctx, []string{"docs"}, schema, []arrow.RecordBatch{recordFromJSON(t, schema, docs)}, nil); err != nil {
		t.Fatal(err)
	}
	createIndex(t, s, "docs", `{"column":"body","index_type":"INVERTED","with_position":true}`)
	createIndex(t, s, "docs", `{"column":"title","index_type":"FTS"}`)
	createIndex(t, s, "docs", `{"column":"tags","index_type":"LABEL_LIST"}`)
	fts := func(t *testing.T, body string) (string, []float32) {
		t.Helper()
		status, out, _ := s.Do(t, "POST", "/v1/table/docs/query", jsonHeader, []byte(body))
		if status != 200 {
			t.Fatalf("%s: %d %s", body, status, out)
		}
		rec := arrowFile(t, out)
		var scores []float32
		sc := rec.Column(rec.Schema().FieldIndices("_score")[0]).(*array.Float32)
		for i := 0; i < sc.Len(); i++ {
			scores = append(scores, sc.Value(i))
		}
		return column(t, rec, "id"), scores
	}
	for _, tc := range []struct {
		name, query, want string
	}{
		{"String", `{"string_query":{"query":"running","columns":["body"]}}`, `[4,1,2]`},
		{"StemAndCase", `{"string_query":{"query":"RUNS","columns":["body"]}}`, `[4,1,2]`},
		{"AsciiFolding", `{"string_query":{"query":"cafe","columns":["title"]}}`, `[3]`},
		{"StopWordsOnly", `{"string_query":{"query":"the and of","columns":["body"]}}`, `[]`},
		{"AllColumns", `{"string_query":{"query":"boots"}}`, `[2]`},
		{"MatchAnd", `{"structured_query":{"query":{"match":{"terms":"running mountains","column":"body","operator":"And"}}}}`, `[4,2]`},
		{"Phrase", `{"structured_query":{"query":{"phrase":{"terms":"brown fox","column":"body"}}}}`, `[5]`},
		{"PhraseWrongOrder", `{"structured_query":{"query":{"phrase":{"terms":"fox brown","column":"body"}}}}`, `[]`},
		{"PhraseSlop", `{"structured_query":{"query":{"phrase":{"terms":"quick fox","column":"body","slop":2}}}}`, `[5]`},
		{"Fuzzy", `{"structured_query":{"query":{"match":{"terms":"cofee","column":"body","fuzziness":1}}}}`, `[3]`},
		{"Boolean", `{"structured_query":{"query":{"boolean":{"must":[{"match":{"terms":"running","column":"body"}}],"should":[],"must_not":[{"match":{"terms":"boots","column":"title"}}]}}}}`, `[4,1]`},
		{"MultiMatch", `{"structured_query":{"query":{"multi_match":{"match_queries":[{"terms":"trail","column":"title"},{"terms":"trail","column":"body"}]}}}}`, `[4]`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ids, scores := fts(t, `{"vector":null,"k":10,"full_text_query":`+tc.query+`}`)
			if ids != tc.want {
				t.Fatalf("ids %s, want %s", ids, tc.want)
			}
			if !slices.IsSortedFunc(scores, func(a, b float32) int { return -cmpFloat(a, b) }) {
				t.Fatalf("scores not descending: %v", scores)
			}
		})
	}
	t.Run("Boost", func(t *testing.T) {
		plain, _ := fts(t, `{"vector":null,"k":10,"full_text_query":{"structured_query":{"query":{"match":{"terms":"running","column":"body"}}}}}`)
		boosted, _ := fts(t, `{"vector":null,"k":10,"full_text_query":{"structured_query":{"query":{"boost":{"positive":{"match":{"terms":"running","column":"body"}},"negative":{"match":{"terms":"trails","column":"body"}},"negative_boost":0.01}}}}}`)
		if plain != `[4,1,2]` || boosted != `[1,2,4]` {
			t.Fatalf("plain %s, boosted %s", plain, boosted)
		}
	})
	t.Run("FilterAndLabels", func(t *testing.T) {
		ids, _ := fts(t, `{"vector":null,"k":10,"filter":"array_has(tags, 'outdoor')","full_text_query":{"string_query":{"query":"running","columns":["body"]}}}`)
		if ids != `[4,2]` {
			t.Fatalf("filtered search %s", ids)
		}
	})
	t.Run("KeptCurrent", func(t *testing.T) {
		more := recordFromJSON(t, schema, `[{"id":6,"title":"Running club","body":"running running running","tags":[]}]`)
		if _, err := s.Client.Insert(ctx, []string{"docs"}, schema, []arrow.RecordBatch{more}, ""); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Client.Delete(ctx, []string{"docs"}, "id = 1"); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Client.Update(ctx, []string{"docs"}, [][2]string{{"body", "'no more jogging'"}}, "id = 2"); err != nil {
			t.Fatal(err)
		}
		ids, _ := fts(t, `{"vector":null,"k":10,"full_text_query":{"string_query":{"query":"running","columns":["body"]}}}`)
		if ids != `[6,4]` {
			t.Fatalf("after writes %s", ids)
		}
		ids, _ = fts(t, `{"vector":null,"k":10,"version":1,"full_text_query":{"string_query":{"query":"running","columns":["body"]}}}`)
		if ids != `[4,1,2]` {
			t.Fatalf("version 1 %s", ids)
		}
	})
	for _, tc := range []struct {
		name, query string
		want        int
	}{
		{"NoIndexOnColumn", `{"string_query":{"query":"x","columns":["id"]}}`, 13},
		{"PhraseWithoutPositions", `{"structured_query":{"query":{"phrase":{"terms":"running shoes","column":"title"}}}}`, 13},
		{"EmptyQuery", `{"structured_query":{"query":{}}}`, 13},
		{"BadOperator", `{"structured_query":{"query":{"match":{"terms":"x","column":"body","operator":"Xor"}}}}`, 13},
	} {
		t.Run(tc.name, func(t *testing.T) {
			status, body, _ := s.Do(t, "POST", "/v1/table/docs/query", jsonHeader, []byte(`{"vector":null,"k":10,"full_text_query":`+tc.query+`}`))
			if apitest.ErrorCode(body) != tc.want {
				t.Fatalf("got %d %s, want code %d", status, body, tc.want)
			}
		})
	}
}

// TestTextAnalyzerOptions indexes the same text under each tokenizer
// option and checks what each index matches.
func TestTextAnalyzerOptions(t *testing.T) {
	s := apitest.Start(t, apitest.Options{})
	options := map[string]string{
		"keepcase":  `"lower_case":false`,
		"nostem":    `"stem":false`,
		"stopwords": `"remove_stop_words":false`,
		"spaces":    `"base_tokenizer":"whitespace"`,
		"accents":   `"ascii_folding":false`,
		"short":     `"max_token_length":5`,
	}
	var fields []arrow.Field
	for _, name := range slices.Sorted(maps.Keys(options)) {
		fields = append(fields, arrow.Field{Name: name, Type: arrow.BinaryTypes.String})
	}
	schema := arrow.NewSchema(append([]arrow.Field{{Name: "id", Type: arrow.PrimitiveTypes.Int64}}, fields...), nil)
	var rows []string
	for i, text := range []string{"Running shoes for the roads.", "running to the café", "mountains"} {
		row := fmt.Sprintf(`{"id":%d`, i+1)
		for _, f := range fields {
			row += fmt.Sprintf(`,%q:%q`, f.Name, text)
		}
		rows = append(rows, row+"}")
	}
	if _, err := s.Client.CreateTable(t.Context(), []string{"an"}, schema, []arrow.RecordBatch{recordFromJSON(t, schema, "["+strings.Join(rows, ",")+"]")}, nil); err != nil {
		t.Fatal(err)
	}
	for col, opt := range options {
		createIndex(t, s, "an", `{"column":"`+col+`","index_type":"INVERTED",`+opt+`}`)
	}
	for _, tc := range []struct {
		column, terms, want string
	}{
		{"keepcase", "Running", `[1]`},
		{"keepcase", "runs", `[2]`},
		{"keepcase", "RUNNING", `[]`},
		{"nostem", "runs", `[]`},
		{"nostem", "running", `[1,2]`},
		{"stopwords", "the", `[1,2]`},
		{"spaces", "roads", `[]`},
		{"spaces", "roads.", `[1]`},
		{"accents", "cafe", `[]`},
		{"accents", "café", `[2]`},
		{"short", "mountains", `[]`},
		{"short", "shoes", `[1]`},
	} {
		t.Run(tc.column+"/"+tc.terms, func(t *testing.T) {
			body := fmt.Sprintf(`{"vector":null,"k":10,"full_text_query":{"structured_query":{"query":{"match":{"terms":%q,"column":%q}}}}}`, tc.terms, tc.column)
			status, out, _ := s.Do(t, "POST", "/v1/table/an/query", jsonHeader, []byte(body))
			if status != 200 {
				t.Fatalf("%d %s", status, out)
			}
			got := column(t, arrowFile(t, out), "id")
			var ids []int
			_ = json.Unmarshal([]byte(got), &ids)
			slices.Sort(ids)
			if sorted, _ := json.Marshal(ids); string(sorted) != tc.want && !(tc.want == "[]" && ids == nil) {
				t.Fatalf("ids %s, want %s", got, tc.want)
			}
		})
	}
}

func cmpFloat(a, b float32) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func recordFromJSON(t *testing.T, schema *arrow.Schema, rows string) arrow.RecordBatch {
	t.Helper()
	rec, _, err := array.RecordFromJSON(memory.DefaultAllocator, schema, strings.NewReader(rows))
	if err != nil {
		t.Fatal(err)
	}
	return rec
}
