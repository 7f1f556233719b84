// Package filebench holds the workload lance/file is benchmarked with:
// rows of (id int64, text utf8 of 100 bytes, vector fixed_size_list of 768
// float32), written, scanned and taken through lance/file. Its benchmarks
// (lance/file's BenchmarkWrite, BenchmarkScan, BenchmarkTake) and the
// lancens-bench suite that compares them with the LanceDB SDK call the
// same functions, so both measure the same work.
package filebench

import (
	"context"
	"fmt"
	"math/rand/v2"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/lancens/lancens/lance/blob"
	"github.com/lancens/lancens/lance/file"
	"github.com/lancens/lancens/lance/schema"
)

// Dim is the vectors' dimension and TextBytes the texts' length.
const (
	Dim       = 768
	TextBytes = 100
)

// RowBytes is the size of one row's values, for MB/s figures.
const RowBytes = 8 + TextBytes + 4*Dim

// Schema returns the workload's Arrow schema.
func Schema() *arrow.Schema {
	return arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64},
		{Name: "text", Type: arrow.BinaryTypes.String},
		{Name: "vector", Type: arrow.FixedSizeListOf(Dim, arrow.PrimitiveTypes.Float32)},
	}, nil)
}

// Batch returns rows [start, start+n) of the workload; the same rows every
// time.
func Batch(start, n int) arrow.RecordBatch {
	mem := memory.DefaultAllocator
	ids := array.NewInt64Builder(mem)
	texts := array.NewStringBuilder(mem)
	vecs := array.NewFixedSizeListBuilder(mem, Dim, arrow.PrimitiveTypes.Float32)
	defer ids.Release()
	defer texts.Release()
	defer vecs.Release()
	values := vecs.ValueBuilder().(*array.Float32Builder)
	ids.Reserve(n)
	texts.Reserve(n)
	texts.ReserveData(n * TextBytes)
	vecs.Reserve(n)
	values.Reserve(n * Dim)
	rng := rand.New(rand.NewPCG(uint64(start), 1))
	text := make([]byte, TextBytes)
	for i := start; i < start+n; i++ {
		ids.UnsafeAppend(int64(i))
		for k := range text {
			text[k] = 'a' + byte(rng.IntN(26))
		}
		texts.BinaryBuilder.Append(text)
		vecs.Append(true)
		for range Dim {
			values.UnsafeAppend(rng.Float32())
		}
	}
	cols := []arrow.Array{ids.NewArray(), texts.NewArray(), vecs.NewArray()}
	defer func() {
		for _, c := range cols {
			c.Release()
		}
	}()
	return array.NewRecordBatch(Schema(), cols, int64(n))
}

// Write writes rows rows to a new file at path in store, batch after
// batch (the last one cut short), and returns what Close returned.
// Writing the same batch again keeps generating rows out of what is
// measured.
func Write(ctx context.Context, store blob.Store, path string, rows int, batch arrow.RecordBatch) (file.Written, error) {
	s, err := schema.FromArrow(Schema())
	if err != nil {
		return file.Written{}, err
	}
	if _, err := s.AssignIDs(0); err != nil {
		return file.Written{}, err
	}
	w, err := file.Create(ctx, store, path, s, nil)
	if err != nil {
		return file.Written{}, err
	}
	n := int(batch.NumRows())
	for start := 0; start < rows; start += n {
		b := batch.NewSlice(0, int64(min(n, rows-start)))
		err := w.Write(b)
		b.Release()
		if err != nil {
			return file.Written{}, errorsJoin(err, w.Abort())
		}
	}
	return w.Close()
}

// Scan reads every row of the columns named (all when none) of the file
// at path, in batches of batchRows, and returns the rows read.
func Scan(ctx context.Context, store blob.Store, path string, batchRows int, columns ...string) (int64, error) {
	r, err := file.Open(ctx, store, path, nil)
	if err != nil {
		return 0, err
	}
	var proj *schema.Schema
	if len(columns) > 0 {
		if proj, err = r.Schema().Project(columns...); err != nil {
			return 0, err
		}
	}
	var rows int64
	for rec, err := range r.Scan(ctx, proj, batchRows) {
		if err != nil {
			return rows, err
		}
		rows += rec.NumRows()
		rec.Release()
	}
	return rows, nil
}

// TakeRows returns n distinct row offsets below rows, chosen at random
// from seed.
func TakeRows(rows, n int, seed uint64) []uint64 {
	rng := rand.New(rand.NewPCG(seed, 2))
	out := make([]uint64, 0, n)
	seen := map[uint64]bool{}
	for len(out) < min(n, rows) {
		r := uint64(rng.IntN(rows))
		if !seen[r] {
			seen[r] = true
			out = append(out, r)
		}
	}
	return out
}

// Take reads the rows at offsets from an open file and checks it got them.
func Take(ctx context.Context, r *file.Reader, offsets []uint64) error {
	rec, err := r.Take(ctx, nil, offsets)
	if err != nil {
		return err
	}
	defer rec.Release()
	if int(rec.NumRows()) != len(offsets) {
		return fmt.Errorf("took %d rows, want %d", rec.NumRows(), len(offsets))
	}
	return nil
}

func errorsJoin(a, b error) error {
	if b == nil {
		return a
	}
	return fmt.Errorf("%w (and aborting: %v)", a, b)
}
