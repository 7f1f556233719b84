package sqlite

import (
	"encoding/json"
	"errors"
	"path/filepath"
	"slices"
	"testing"

	"github.com/lancens/lancens/store"
)

// TestDeletedRowsAsLance checks num_deleted_rows and the fragment
// statistics against what Lance reports for the same writes (LanceDB
// 0.39 embedded, node/e2e checks it too): 2,001 rows, 3 updated, 10 then
// 1 deleted leave fragments of 2,001 and 3 rows with 14 deleted; an update
// of every row leaves one fragment of 1,990 rows and none deleted.
func TestDeletedRowsAsLance(t *testing.T) {
	ctx := t.Context()
	db, err := Open(ctx, filepath.Join(t.TempDir(), "d.db"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	id := []string{"t"}
	if _, _, err := db.CreateTable(ctx, id, store.NewTable{Data: testRows(0, 2001)}); err != nil {
		t.Fatal(err)
	}
	update := func(where string) {
		t.Helper()
		if _, err := db.Update(ctx, id, []store.ColumnUpdate{{Path: "text", Expr: "'u'"}}, where); err != nil {
			t.Fatal(err)
		}
	}
	del := func(where string) {
		t.Helper()
		if _, err := db.Delete(ctx, id, where); err != nil {
			t.Fatal(err)
		}
	}
	check := func(step string, version *int64, rows, deleted, fragments int64, lengths []int64) {
		t.Helper()
		d, err := db.Describe(ctx, id, version)
		if err != nil {
			t.Fatal(err)
		}
		if d.NumRows != rows || d.Deleted != deleted || d.Fragments != fragments {
			t.Errorf("%s: rows %d, deleted %d, fragments %d; want %d, %d, %d", step, d.NumRows, d.Deleted, d.Fragments, rows, deleted, fragments)
		}
		if lengths == nil {
			return
		}
		st, err := db.Stats(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		got := slices.Sorted(slices.Values(st.FragmentRows))
		if st.NumRows != rows || !slices.Equal(got, lengths) {
			t.Errorf("%s: stats rows %d, fragments %v; want %d, %v", step, st.NumRows, got, rows, lengths)
		}
	}
	check("create", nil, 2001, 0, 1, []int64{2001})
	update("id < 3")
	check("update", nil, 2001, 3, 2, []int64{3, 2001})
	del("id >= 1000 AND id < 1010")
	check("delete", nil, 1991, 13, 2, []int64{3, 2001})
	del("id = 1") // a row the update rewrote: deleted in the update's fragment
	check("delete an updated row", nil, 1990, 14, 2, []int64{3, 2001})
	two := int64(2)
	check("time travel to the update", &two, 2001, 3, 2, nil)
	update("true")
	check("update every row", nil, 1990, 0, 1, []int64{1990})
}

// TestIndexCoverageFollowsVersions checks that a vector index covers the
// rows of the version it was built on: later rows are unindexed; an older
// version, which it did not exist at, has no such index (as in Lance); and
// a restore, whose rows are copies, builds the index again instead of
// keeping a SUCCEEDED index that covers nothing; so does an overwrite.
func TestIndexCoverageFollowsVersions(t *testing.T) {
	ctx := t.Context()
	db, err := Open(ctx, filepath.Join(t.TempDir(), "c.db"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	id := []string{"t"}
	data := testBatch(0, 2001)
	if _, _, err := db.CreateTable(ctx, id, store.NewTable{Data: store.NewData(data.Schema(), data)}); err != nil { // version 1
		t.Fatal(err)
	}
	if _, err := db.Update(ctx, id, []store.ColumnUpdate{{Path: "text", Expr: "'u'"}}, "id < 3"); err != nil { // version 2
		t.Fatal(err)
	}
	if _, err := db.CreateIndex(ctx, id, store.IndexSpec{Name: "vidx", Column: "vector", Type: store.IndexIVFPQ,
		Vector: store.VectorIndexParams{NumPartitions: 4, NumSubVectors: 2}}); err != nil {
		t.Fatal(err)
	}
	runJobs(t, db) // the index is built on version 2
	// Version 3 appends 5 rows.
	if _, err := db.Insert(ctx, id, store.InsertAppend, testRows(5000, 5)); err != nil {
		t.Fatal(err)
	}
	coverage := func(version *int64) (string, int64, int64, error) {
		ix, err := db.DescribeIndex(ctx, id, "vidx", version)
		if err != nil {
			return "", 0, 0, err
		}
		return ix.Status, ix.NumIndexedRows, ix.NumUnindexedRows, nil
	}
	v := func(n int64) *int64 { return &n }
	for _, tc := range []struct {
		name               string
		version            *int64
		indexed, unindexed int64
	}{
		{"Latest", nil, 2001, 5},
		{"BuiltOn", v(2), 2001, 0},
		{"AfterAppend", v(3), 2001, 5},
	} {
		status, indexed, unindexed, err := coverage(tc.version)
		if err != nil || status != store.IndexSucceeded || indexed != tc.indexed || unindexed != tc.unindexed {
			t.Errorf("%s: %s %d indexed, %d not, %v; want SUCCEEDED %d, %d", tc.name, status, indexed, unindexed, err, tc.indexed, tc.unindexed)
		}
	}
	// Version 1 is older than the index: it has none, and its searches
	// scan exactly (and still find rows the index never saw: row 1 as it
	// was before the update).
	if _, _, _, err := coverage(v(1)); !errors.Is(err, store.ErrTableIndexNotFound) {
		t.Errorf("index at version 1: %v, want TableIndexNotFound", err)
	}
	if list, _, err := db.ListIndices(ctx, id, v(1), store.Page{}); err != nil || len(list) != 0 {
		t.Errorf("indexes at version 1: %+v %v", list, err)
	}
	if got, err := nearestID(ctx, db, "t", vectorOf(data, 1), v(1), ""); err != nil || got != 1 {
		t.Errorf("nearest to row 1 at version 1: %d %v", got, err)
	}

	if _, err := db.Restore(ctx, id, 2); err != nil { // version 4
		t.Fatal(err)
	}
	status, indexed, unindexed, err := coverage(nil)
	if err != nil || status != store.IndexBuilding || indexed != 0 || unindexed != 2001 {
		t.Fatalf("after restore: %s %d indexed, %d not, %v; want BUILDING 0, 2001", status, indexed, unindexed, err)
	}
	runJobs(t, db)
	status, indexed, unindexed, err = coverage(nil)
	if err != nil || status != store.IndexSucceeded || indexed != 2001 || unindexed != 0 {
		t.Fatalf("after the rebuild: %s %d indexed, %d not, %v; want SUCCEEDED 2001, 0", status, indexed, unindexed, err)
	}
	if got, err := nearestID(ctx, db, "t", vectorOf(data, 7), nil, ""); err != nil || got != 7 {
		t.Errorf("nearest to row 7 after the rebuild: %d %v", got, err)
	}
	// An overwrite replaces every row too.
	if _, err := db.Insert(ctx, id, store.InsertOverwrite, testRows(9000, 300)); err != nil {
		t.Fatal(err)
	}
	if status, indexed, _, err := coverage(nil); err != nil || status != store.IndexBuilding || indexed != 0 {
		t.Fatalf("after an overwrite: %s %d indexed, %v; want BUILDING", status, indexed, err)
	}
	runJobs(t, db)
	if status, indexed, unindexed, err := coverage(nil); err != nil || status != store.IndexSucceeded || indexed != 300 || unindexed != 0 {
		t.Fatalf("after the overwrite's rebuild: %s %d indexed, %d not, %v; want SUCCEEDED 300, 0", status, indexed, unindexed, err)
	}
}

// TestIndexSizesAndDetails checks that every index reports the bytes it
// takes, and index_details in Lance's snake_case names.
func TestIndexSizesAndDetails(t *testing.T) {
	ctx := t.Context()
	db, err := Open(ctx, filepath.Join(t.TempDir(), "s.db"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	id := []string{"t"}
	if _, _, err := db.CreateTable(ctx, id, store.NewTable{Data: testRows(0, 2000)}); err != nil {
		t.Fatal(err)
	}
	yes := true
	for _, spec := range []store.IndexSpec{
		{Name: "pq", Column: "vector", Type: store.IndexIVFPQ, Metric: "cosine", Vector: store.VectorIndexParams{NumPartitions: 4, NumSubVectors: 2}},
		{Name: "hnsw", Column: "vector", Type: store.IndexIVFHNSWSQ, Vector: store.VectorIndexParams{NumPartitions: 2, M: 8}},
		{Name: "btree", Column: "id", Type: store.IndexBTree},
		{Name: "bitmap", Column: "text", Type: store.IndexBitmap},
		{Name: "fts", Column: "text", Type: store.IndexInverted, Text: store.TextIndexParams{WithPosition: &yes, BaseTokenizer: "simple"}},
	} {
		if _, err := db.CreateIndex(ctx, id, spec); err != nil {
			t.Fatal(err)
		}
	}
	runJobs(t, db)
	want := map[string]map[string]any{
		"pq":     {"metric_type": "COSINE", "num_partitions": 4.0, "compression": map[string]any{"type": "pq", "num_sub_vectors": 2.0}},
		"hnsw":   {"metric_type": "L2", "num_partitions": 2.0, "m": 8.0, "compression": map[string]any{"type": "sq"}},
		"btree":  {},
		"bitmap": {},
		"fts":    {"with_position": true, "base_tokenizer": "simple"},
	}
	list, _, err := db.ListIndices(ctx, id, nil, store.Page{})
	if err != nil || len(list) != len(want) {
		t.Fatalf("indexes: %+v %v", list, err)
	}
	for _, ix := range list {
		if ix.SizeBytes <= 0 {
			t.Errorf("%s (%s): size %d", ix.Name, ix.Type, ix.SizeBytes)
		}
		var got map[string]any
		if err := json.Unmarshal([]byte(ix.Details), &got); err != nil {
			t.Fatalf("%s: details %q: %v", ix.Name, ix.Details, err)
		}
		if b1, b2 := mustJSON(t, got), mustJSON(t, want[ix.Name]); b1 != b2 {
			t.Errorf("%s: index_details %s, want %s", ix.Name, b1, b2)
		}
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
