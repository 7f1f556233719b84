package conformance

import (
	"math"
	"slices"
	"sort"

	"github.com/lancens/lancens/store"
)

// hit is one expected search result.
type hit struct {
	id       int64
	distance float64
}

func l2sq(a, b []float32) float64 {
	var d float64
	for i := range a {
		x := float64(a[i]) - float64(b[i])
		d += x * x
	}
	return d
}

func dot(a, b []float32) float64 {
	var d float64
	for i := range a {
		d += float64(a[i]) * float64(b[i])
	}
	return d
}

func cosineDistance(a, b []float32) float64 {
	return 1 - dot(a, b)/math.Sqrt(dot(a, a)*dot(b, b))
}

// nearest returns the k items nearest to q under distance, nearest first,
// among those keep accepts (nil: all).
func nearest(items []item, q []float32, k int, distance func(a, b []float32) float64, keep func(item) bool) []hit {
	var hits []hit
	for _, it := range items {
		if keep == nil || keep(it) {
			hits = append(hits, hit{it.ID, distance(q, it.Vec)})
		}
	}
	sort.Slice(hits, func(i, j int) bool { return hits[i].distance < hits[j].distance })
	return hits[:min(k, len(hits))]
}

// checkHits fails the case unless rs are the hits, in order; with
// distances, their _distance values must match too.
func checkHits(t T, rs []row, want []hit, distances bool) {
	t.Helper()
	got := ints(t, rs, "id")
	var wantIDs []int64
	for _, h := range want {
		wantIDs = append(wantIDs, h.id)
	}
	if !slices.Equal(got, wantIDs) {
		t.Fatalf("nearest ids %v, want %v", got, wantIDs)
	}
	if !distances {
		return
	}
	for i, d := range floats(t, rs, "_distance") {
		if !near(d, want[i].distance) {
			t.Fatalf("row %d (id %d): _distance %v, want %v", i, got[i], d, want[i].distance)
		}
	}
}

// probe is a query vector near, but not on, item 7.
func probe(items []item) []float32 {
	q := slices.Clone(items[6].Vec)
	q[0] += 0.01
	return q
}

func vectorQuery(q []float32, k int64) store.Query {
	return store.Query{Limit: k, Vector: &store.VectorSearch{Column: "vec", Vectors: [][]float32{q}}}
}

func (s *suite) vectorSearch(t T) {
	items := makeItems(1, 48)
	q := probe(items)

	Subtest(t, "Nearest", func(t T) {
		tg := s.dataTarget(t)
		id := createItems(t, tg, "items", 48)
		rs, res := query(t, tg, id, vectorQuery(q, 5))
		checkHits(t, rs, nearest(items, q, 5, l2sq, nil), true)
		if !slices.Contains(fieldNames(res.Schema), "_distance") {
			t.Fatalf("search result fields %q lack _distance", fieldNames(res.Schema))
		}
		// The only vector column is the default one.
		only := vectorQuery(q, 3)
		only.Vector.Column = ""
		rs, _ = query(t, tg, id, only)
		checkHits(t, rs, nearest(items, q, 3, l2sq, nil), true)
		rs, _ = query(t, tg, id, vectorQuery(q, 100))
		if len(rs) != 48 {
			t.Fatalf("k beyond the table's rows gave %d rows, want 48", len(rs))
		}
	})

	Subtest(t, "Metrics", func(t T) {
		tg := s.dataTarget(t)
		id := createItems(t, tg, "items", 48)
		for _, tc := range []struct {
			metric    string
			distance  func(a, b []float32) float64
			distances bool
		}{
			{"l2", l2sq, true},
			{"cosine", cosineDistance, true},
			{"dot", func(a, b []float32) float64 { return -dot(a, b) }, false},
		} {
			Subtest(t, tc.metric, func(t T) {
				vq := vectorQuery(q, 6)
				vq.Vector.Metric = tc.metric
				rs, _ := query(t, tg, id, vq)
				checkHits(t, rs, nearest(items, q, 6, tc.distance, nil), tc.distances)
			})
		}
	})

	Subtest(t, "Filter", func(t T) {
		tg := s.dataTarget(t)
		id := createItems(t, tg, "items", 48)
		isB := func(it item) bool { return it.Category == "b" }
		vq := vectorQuery(q, 5)
		vq.Filter = "category = 'b'"
		rs, _ := query(t, tg, id, vq)
		checkHits(t, rs, nearest(items, q, 5, l2sq, isB), true)
		// A post-filter keeps the matching rows among the k nearest.
		vq.Vector.Postfilter = true
		rs, _ = query(t, tg, id, vq)
		var want []hit
		for _, h := range nearest(items, q, 5, l2sq, nil) {
			if isB(items[h.id-1]) {
				want = append(want, h)
			}
		}
		checkHits(t, rs, want, true)
	})

	Subtest(t, "Projection", func(t T) {
		tg := s.dataTarget(t)
		id := createItems(t, tg, "items", 12)
		vq := vectorQuery(q, 2)
		vq.Projection.Columns = []string{"id", "name"}
		rs, res := query(t, tg, id, vq)
		fields := fieldNames(res.Schema)
		if slices.Contains(fields, "vec") || !slices.Contains(fields, "name") || !slices.Contains(fields, "_distance") {
			t.Fatalf("projected search fields %q, want id, name and _distance", fields)
		}
		checkHits(t, rs, nearest(makeItems(1, 12), q, 2, l2sq, nil), true)
	})

	Subtest(t, "Batch", func(t T) {
		tg := s.dataTarget(t)
		id := createItems(t, tg, "items", 48)
		q2 := slices.Clone(items[30].Vec)
		q2[3] -= 0.02
		rs, res := query(t, tg, id, store.Query{Limit: 3, Vector: &store.VectorSearch{Column: "vec", Vectors: [][]float32{q, q2}, Multi: true}})
		if !slices.Contains(fieldNames(res.Schema), "query_index") {
			t.Fatalf("batch search fields %q lack query_index", fieldNames(res.Schema))
		}
		byQuery := map[int64][]row{}
		for _, r := range rs {
			qi := int64(r["query_index"].(float64))
			byQuery[qi] = append(byQuery[qi], r)
		}
		for qi, vec := range [][]float32{q, q2} {
			checkHits(t, byQuery[int64(qi)], nearest(items, vec, 3, l2sq, nil), true)
		}
	})

	Subtest(t, "DistanceRange", func(t T) {
		tg := s.dataTarget(t)
		id := createItems(t, tg, "items", 48)
		all := nearest(items, q, 6, l2sq, nil)
		lower := float32((all[0].distance + all[1].distance) / 2)
		upper := float32((all[3].distance + all[4].distance) / 2)
		vq := vectorQuery(q, 6)
		vq.Vector.LowerBound, vq.Vector.UpperBound = &lower, &upper
		rs, _ := query(t, tg, id, vq)
		checkHits(t, rs, all[1:4], true)
	})

	Subtest(t, "Errors", func(t T) {
		tg := s.dataTarget(t)
		id := createItems(t, tg, "items", 6)
		for _, tc := range []struct {
			name string
			q    store.Query
			want store.Code
		}{
			{"WrongDimension", vectorQuery([]float32{1, 2, 3}, 3), store.CodeInvalidInput},
			{"UnknownColumn", store.Query{Limit: 3, Vector: &store.VectorSearch{Column: "nope", Vectors: [][]float32{q}}}, store.CodeTableColumnNotFound},
			{"UnknownFilterColumn", store.Query{Limit: 3, Filter: "nope = 1", Vector: &store.VectorSearch{Column: "vec", Vectors: [][]float32{q}}}, store.CodeTableColumnNotFound},
		} {
			Subtest(t, tc.name, func(t T) {
				_, err := tg.Query(ctx(t), id, tc.q)
				wantCode(t, err, tc.want)
			})
		}
	})
}

func (s *suite) vectorIndexes(t T) {
	items := makeItems(1, 64)
	q := probe(items)

	Subtest(t, "IVFFlat", func(t T) {
		tg := s.dataTarget(t)
		id := createItems(t, tg, "items", 64)
		_, err := tg.CreateIndex(ctx(t), id, store.IndexSpec{Name: "vec_idx", Column: "vec", Type: store.IndexIVFFlat, Metric: "l2",
			Vector: store.VectorIndexParams{NumPartitions: 2}})
		noErr(t, err)
		ix := waitIndex(t, tg, id, "vec_idx")
		if ix.Type != store.IndexIVFFlat || ix.NumIndexedRows != 64 || ix.Metric != "l2" {
			t.Fatalf("index %+v: want IVF_FLAT, l2, 64 indexed rows", ix)
		}
		// Probing every partition of a flat index is an exact search.
		vq := vectorQuery(q, 5)
		vq.Vector.Nprobes = 2
		rs, _ := query(t, tg, id, vq)
		checkHits(t, rs, nearest(items, q, 5, l2sq, nil), true)

		// Rows written after the build are searched too, unless the
		// search is told to stay inside the index.
		newest := makeItems(65, 65)
		newest[0].Vec = slices.Clone(q)
		must(tg.Insert(ctx(t), id, store.InsertAppend, itemsData(t, newest)))(t)
		rs, _ = query(t, tg, id, vq)
		checkHits(t, rs, nearest(append(slices.Clone(items), newest...), q, 5, l2sq, nil), true)
		vq.Vector.FastSearch = true
		rs, _ = query(t, tg, id, vq)
		if slices.Contains(ints(t, rs, "id"), 65) {
			t.Fatalf("fast_search returned row 65, which the index does not cover")
		}
		vq.Vector.FastSearch, vq.Vector.BypassIndex = false, true
		rs, _ = query(t, tg, id, vq)
		checkHits(t, rs, nearest(append(slices.Clone(items), newest...), q, 5, l2sq, nil), true)
	})

	Subtest(t, "IVFPQ", func(t T) {
		tg := s.dataTarget(t)
		id := createItems(t, tg, "items", 64)
		_, err := tg.CreateIndex(ctx(t), id, store.IndexSpec{Name: "pq", Column: "vec", Type: store.IndexIVFPQ,
			Vector: store.VectorIndexParams{NumPartitions: 2, NumSubVectors: 2}})
		noErr(t, err)
		if ix := waitIndex(t, tg, id, "pq"); ix.Type != store.IndexIVFPQ || ix.NumIndexedRows != 64 {
			t.Fatalf("index %+v: want IVF_PQ with 64 indexed rows", ix)
		}
		// Refined by exact distances, the search finds an exact match.
		vq := vectorQuery(items[20].Vec, 4)
		vq.Vector.Nprobes, vq.Vector.RefineFactor = 2, 10
		rs, _ := query(t, tg, id, vq)
		if len(rs) != 4 {
			t.Fatalf("IVF_PQ search gave %d rows, want 4", len(rs))
		}
		if got := ints(t, rs, "id"); got[0] != 21 || !near(floats(t, rs, "_distance")[0], 0) {
			t.Fatalf("IVF_PQ search for item 21's vector found %v first", rs[0])
		}
		ds := floats(t, rs, "_distance")
		if !slices.IsSorted(ds) {
			t.Fatalf("distances %v are not in ascending order", ds)
		}
	})

	Subtest(t, "Cosine", func(t T) {
		tg := s.dataTarget(t)
		id := createItems(t, tg, "items", 64)
		_, err := tg.CreateIndex(ctx(t), id, store.IndexSpec{Name: "cos", Column: "vec", Type: store.IndexIVFFlat, Metric: "cosine",
			Vector: store.VectorIndexParams{NumPartitions: 2}})
		noErr(t, err)
		if ix := waitIndex(t, tg, id, "cos"); ix.Metric != "cosine" {
			t.Fatalf("index metric %q, want cosine", ix.Metric)
		}
		vq := vectorQuery(q, 5)
		vq.Vector.Metric, vq.Vector.Nprobes = "cosine", 2
		rs, _ := query(t, tg, id, vq)
		checkHits(t, rs, nearest(items, q, 5, cosineDistance, nil), true)
	})

	Subtest(t, "Prewarm", func(t T) {
		// prewarmIndex (the LanceDB remote dialect's route) loads a built
		// index; searches answer the same after it.
		tg := s.dataTarget(t)
		id := createItems(t, tg, "items", 64)
		for _, spec := range []store.IndexSpec{
			{Name: "vec_idx", Column: "vec", Type: store.IndexIVFFlat, Vector: store.VectorIndexParams{NumPartitions: 2}},
			{Name: "id_idx", Column: "id", Type: store.IndexBTree},
		} {
			_, err := tg.CreateIndex(ctx(t), id, spec)
			noErr(t, err)
			waitIndex(t, tg, id, spec.Name)
			noErr(t, tg.PrewarmIndex(ctx(t), id, spec.Name))
		}
		vq := vectorQuery(q, 5)
		vq.Vector.Nprobes = 2
		rs, _ := query(t, tg, id, vq)
		checkHits(t, rs, nearest(items, q, 5, l2sq, nil), true)
		wantCode(t, tg.PrewarmIndex(ctx(t), id, "nope"), store.CodeTableIndexNotFound)
		wantCode(t, tg.PrewarmIndex(ctx(t), []string{"missing"}, "vec_idx"), store.CodeTableNotFound)
	})

	Subtest(t, "Errors", func(t T) {
		tg := s.dataTarget(t)
		id := createItems(t, tg, "items", 64)
		for _, tc := range []struct {
			name string
			spec store.IndexSpec
			want store.Code
		}{
			{"NotAVector", store.IndexSpec{Name: "x", Column: "price", Type: store.IndexIVFFlat}, store.CodeInvalidInput},
			{"MissingColumn", store.IndexSpec{Name: "x", Column: "nope", Type: store.IndexIVFFlat}, store.CodeTableColumnNotFound},
		} {
			Subtest(t, tc.name, func(t T) {
				_, err := tg.CreateIndex(ctx(t), id, tc.spec)
				wantCode(t, err, tc.want)
			})
		}
		_, err := tg.CreateIndex(ctx(t), []string{"missing"}, store.IndexSpec{Name: "x", Column: "vec", Type: store.IndexIVFFlat})
		wantCode(t, err, store.CodeTableNotFound)
		list := must3(tg.ListIndices(ctx(t), id, nil, store.Page{}))(t)
		if len(list) != 0 {
			t.Fatalf("failed creates left indexes %+v", list)
		}
	})
}
