package sqlite

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"sync"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/lancens/lancens/store"
)

// watchedStream yields batches and counts those handed out and not yet
// released; before runs before each batch is handed out.
type watchedStream struct {
	batches []arrow.RecordBatch
	before  func(n int)
	next    int
	mu      sync.Mutex
	out     int
	most    int
}

func (w *watchedStream) Next() (arrow.RecordBatch, error) {
	if w.before != nil {
		w.before(w.next)
	}
	if w.next >= len(w.batches) {
		return nil, io.EOF
	}
	b := w.batches[w.next]
	w.next++
	b.Retain()
	w.mu.Lock()
	w.out++
	w.most = max(w.most, w.out)
	w.mu.Unlock()
	return store.WithRelease(b, func() {
		w.mu.Lock()
		w.out--
		w.mu.Unlock()
	}), nil
}

// manyBatches returns 2n batches of rowsData's rows, ids from 0 on.
func manyBatches(n, rowsEach int) []arrow.RecordBatch {
	var out []arrow.RecordBatch
	for i := range n {
		out = append(out, rowsBatches(i*rowsEach, rowsEach, "many")...)
	}
	return out
}

// TestWriteChecksSchemaBeforeRows: a write whose rows do not fit the table
// is refused (20) before it reads a batch, so a server answers a body of
// the wrong schema from its schema message alone.
func TestWriteChecksSchemaBeforeRows(t *testing.T) {
	db := openStaged(t, filepath.Join(t.TempDir(), "s.db"), testChunk)
	ctx := t.Context()
	if _, _, err := db.CreateTable(ctx, []string{"t"}, store.NewTable{Data: rowsData(0, 5, "base")}); err != nil {
		t.Fatal(err)
	}
	other := arrow.NewSchema([]arrow.Field{{Name: "v", Type: arrow.FixedSizeListOf(29, arrow.PrimitiveTypes.Float32)}}, nil)
	for _, tc := range []struct {
		name  string
		write func(d store.Data) error
	}{
		{"Append", func(d store.Data) error {
			_, err := db.Insert(ctx, []string{"t"}, store.InsertAppend, d)
			return err
		}},
		{"Merge", func(d store.Data) error {
			_, err := db.MergeInsert(ctx, []string{"t"}, store.Merge{On: []string{"v"}, WhenNotMatchedInsertAll: true, Data: d})
			return err
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			read := 0
			st := &watchedStream{before: func(int) { read++ }}
			err := tc.write(store.Data{Schema: other, Batches: st})
			if store.ErrorCode(err) != store.CodeTableSchemaValidationError {
				t.Fatalf("got %v, want code 20", err)
			}
			if read != 0 {
				t.Fatalf("the write read %d batches before refusing their schema", read)
			}
		})
	}
}

// TestWriteHoldsBoundedBatches: a write of many batches holds the batches
// of at most two chunks (the one being written and the one being
// converted) and one read ahead, releasing each once its rows are written,
// and none when it returns.
func TestWriteHoldsBoundedBatches(t *testing.T) {
	const chunk = 100
	db := openStaged(t, filepath.Join(t.TempDir(), "s.db"), chunk)
	ctx := t.Context()
	for _, name := range []string{"t", "m"} {
		if _, _, err := db.CreateTable(ctx, []string{name}, store.NewTable{Data: rowsData(0, 5, "base")}); err != nil {
			t.Fatal(err)
		}
	}
	batches := manyBatches(60, 30) // 120 batches of 10 or 20 rows, 1,800 rows
	for _, tc := range []struct {
		name  string
		write func(d store.Data) (store.WriteResult, error)
	}{
		{"Create", func(d store.Data) (store.WriteResult, error) {
			_, res, err := db.CreateTable(ctx, []string{"fresh"}, store.NewTable{Data: d})
			return res, err
		}},
		{"Append", func(d store.Data) (store.WriteResult, error) {
			return db.Insert(ctx, []string{"t"}, store.InsertAppend, d)
		}},
		{"Merge", func(d store.Data) (store.WriteResult, error) {
			return db.MergeInsert(ctx, []string{"m"}, store.Merge{On: []string{"id"}, WhenMatchedUpdateAll: true, WhenNotMatchedInsertAll: true, Data: d})
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := &watchedStream{batches: batches}
			res, err := tc.write(store.Data{Schema: stagedSchema, Batches: st})
			if err != nil {
				t.Fatal(err)
			}
			if res.Inserted+res.Updated != 1800 {
				t.Fatalf("wrote %+v, want 1,800 rows", res)
			}
			// A chunk of 100 rows spans at most 11 of these batches.
			t.Logf("held at most %d", st.most)
			if limit := 2*11 + 1; st.most > limit || st.out != 0 {
				t.Fatalf("held up to %d of %d batches (limit %d), %d when it returned", st.most, len(batches), limit, st.out)
			}
		})
	}
}

// TestWriteStartsOverWithItsRows: a write that finds its table changed
// once it has read its first rows (here, by a column added while it
// reads) starts over and reads the same rows again, whole, once; the
// batches kept for that are released.
func TestWriteStartsOverWithItsRows(t *testing.T) {
	for _, chunk := range []int{10_000, testChunk} { // one transaction, then staged
		t.Run(fmt.Sprint("chunk_", chunk), func(t *testing.T) {
			db := openStaged(t, filepath.Join(t.TempDir(), "s.db"), chunk)
			ctx := t.Context()
			id := []string{"t"}
			if _, _, err := db.CreateTable(ctx, id, store.NewTable{Data: rowsData(0, 5, "base")}); err != nil {
				t.Fatal(err)
			}
			batches := manyBatches(10, 9) // 20 batches, 90 rows
			altered := false
			st := &watchedStream{batches: batches, before: func(n int) {
				if n == 1 && !altered {
					altered = true
					if _, err := db.AddColumns(context.WithoutCancel(ctx), id, []store.NewColumn{{Name: "extra", Expr: "id * 2"}}); err != nil {
						t.Error(err)
					}
				}
			}}
			res, err := db.Insert(ctx, id, store.InsertAppend, store.Data{Schema: stagedSchema, Batches: st})
			if err != nil {
				t.Fatal(err)
			}
			if !altered || res.Inserted != 90 || res.Version != 3 {
				t.Fatalf("altered %v; insert %+v, want 90 rows as version 3", altered, res)
			}
			if n, _, err := db.CountRows(ctx, id, nil, ""); err != nil || n != 95 {
				t.Fatalf("%d rows (%v), want 95", n, err)
			}
			if n, _, err := db.CountRows(ctx, id, nil, "extra IS NULL"); err != nil || n != 90 {
				t.Fatalf("%d rows without extra (%v), want the 90 inserted", n, err)
			}
			if st.out != 0 {
				t.Fatalf("the write returned holding %d batches", st.out)
			}
		})
	}
}
