package sqlite

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/lancens/lancens/store"
)

// TestPrewarmIndex checks that prewarming puts a vector index and a
// full-text index's posting lists in the memory cache, so that the searches
// after it load nothing, and that only built indexes can be prewarmed.
func TestPrewarmIndex(t *testing.T) {
	db, err := Open(t.Context(), filepath.Join(t.TempDir(), "p.db"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx := t.Context()
	data := searchTable(t, db, "a", 500)
	uuid := tableUUID(t, db, "a")
	if n := entriesOf(db.cache, uuid); n["index"] != 0 || n["postings"] != 0 {
		t.Fatalf("before any search the cache holds %v", n)
	}
	for _, name := range []string{"vector_idx", "text_idx"} {
		if err := db.PrewarmIndex(ctx, []string{"a"}, name); err != nil {
			t.Fatalf("prewarm %s: %v", name, err)
		}
	}
	if n := entriesOf(db.cache, uuid); n["index"] != 1 || n["postings"] != 1 {
		t.Fatalf("after prewarming the cache holds %v, want one index and one posting list", n)
	}
	loads := 0
	db.cache.beforeLoad = func(k cacheKey) {
		if strings.HasPrefix(k.name, "index/") || strings.HasPrefix(k.name, "postings/") {
			loads++
		}
	}
	if got, err := nearestID(ctx, db, "a", vectorOf(data, 7), nil, ""); err != nil || got != 7 {
		t.Fatalf("nearest to row 7: %d, %v", got, err)
	}
	if err := ftsQuery(ctx, db, "a", "alpha"); err != nil {
		t.Fatal(err)
	}
	if loads != 0 {
		t.Fatalf("searches after the prewarm loaded %d indexes", loads)
	}
	// A scalar index needs no load; an index still building cannot be
	// loaded.
	for _, spec := range []store.IndexSpec{{Name: "id_idx", Column: "id", Type: store.IndexBTree},
		{Name: "building", Column: "vector", Type: store.IndexIVFFlat}} {
		if _, err := db.CreateIndex(ctx, []string{"a"}, spec); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.PrewarmIndex(ctx, []string{"a"}, "id_idx"); err != nil {
		t.Fatalf("prewarm a scalar index: %v", err)
	}
	for _, tc := range []struct {
		table, index string
		want         store.Code
	}{
		{"a", "building", store.CodeInvalidTableState},
		{"a", "nope", store.CodeTableIndexNotFound},
		{"nope", "vector_idx", store.CodeTableNotFound},
	} {
		if err := db.PrewarmIndex(ctx, []string{tc.table}, tc.index); store.ErrorCode(err) != tc.want {
			t.Errorf("prewarm %s of %s: %v, want code %d", tc.index, tc.table, err, tc.want)
		}
	}
}
