package engine

import (
	"context"
	"math/bits"
	"runtime"
	"sync"

	"github.com/RoaringBitmap/roaring/v2"
	"github.com/apache/arrow-go/v18/arrow"

	"github.com/lancens/lancens/expr"
	"github.com/lancens/lancens/lance/table"
)

// filterChunkRows is how many rows of a fragment one evaluation of a
// filter covers in a scan that may stop early (one with a limit):
// fragments are evaluated chunk by chunk, several chunks at once, so that
// a large fragment uses every core and such a scan stops soon after it has
// its rows. A scan that reads every row takes chunks of a fragment's rows
// over the cores (chunkRows), at least this many.
const filterChunkRows = 32 * 1024

// chunkRows is the size of the chunks a fragment of n rows is evaluated in
// when every row is read: one per core.
func chunkRows(n int) int {
	workers := max(1, runtime.GOMAXPROCS(0))
	return max(filterChunkRows, (n+workers-1)/workers)
}

// chunk is the rows of one chunk of a fragment a filter kept: their
// offsets in the fragment, or, for a count, how many.
type chunk struct {
	rows []int
	n    int
	// size is the number of rows of the chunk, deleted ones included.
	size int
	err  error
}

// filterChunks evaluates filter (nil: none) over the rows of frag that
// are not deleted, in chunks of size rows, several chunks at a time, and
// calls emit with each chunk's kept offsets, in order, until it returns
// false. With countOnly, the chunks carry only how many rows they kept
// (emit gets nil rows). It returns the first error of reading or
// evaluating.
func (rd *reader) filterChunks(ctx context.Context, frag *table.Fragment, f *filter, countOnly bool, size int, emit func(c chunk) bool) error {
	del, err := rd.deletions(ctx, frag)
	if err != nil {
		return err
	}
	n := int(frag.PhysicalRows)
	if f != nil && rd.narrowed != nil {
		if candidates, ok := rd.narrowed.frags[frag.ID]; ok {
			// Scalar indexes leave few rows: one chunk of them.
			rows, err := rd.selectedAmong(ctx, frag, f, candidates, del)
			if err == nil {
				c := chunk{n: len(rows), size: n}
				if !countOnly {
					c.rows = rows
				}
				emit(c)
			}
			return err
		}
	}
	if f == nil {
		for start := 0; start < n; start += size {
			end := min(n, start+size)
			c := chunk{n: end - start - int(del.CardinalityInRange(uint64(start), uint64(end))), size: end - start}
			if !countOnly {
				c.rows = liveRows(start, end, del)
			}
			if !emit(c) {
				return nil
			}
		}
		return nil
	}
	var batch arrow.RecordBatch
	if f.values == nil {
		if batch, err = rd.batch(ctx, frag, f.cols, nil); err != nil {
			return err
		}
		defer batch.Release()
	}
	eval := func(start, end int) chunk {
		words, err := rd.evalChunk(ctx, frag, f, batch, start, end)
		if err != nil {
			return chunk{err: err}
		}
		c := keptRows(words, start, end, del, countOnly)
		c.size = end - start
		return c
	}
	workers := max(1, runtime.GOMAXPROCS(0))
	for start := 0; start < n; start += workers * size {
		if err := ctx.Err(); err != nil {
			return err
		}
		wave := make([]chunk, 0, workers)
		for s := start; s < n && len(wave) < workers; s += size {
			wave = append(wave, chunk{n: s})
		}
		if len(wave) == 1 {
			wave[0] = eval(start, min(n, start+size))
		} else {
			var wg sync.WaitGroup
			for i := range wave {
				s := wave[i].n
				wg.Go(func() { wave[i] = eval(s, min(n, s+size)) })
			}
			wg.Wait()
		}
		for _, c := range wave {
			if c.err != nil {
				return c.err
			}
			if !emit(c) {
				return nil
			}
		}
	}
	return nil
}

// evalChunk evaluates f over the rows [start, end) of frag: over cached
// values when it can, else over batch (the filter's columns of the whole
// fragment; read when nil).
func (rd *reader) evalChunk(ctx context.Context, frag *table.Fragment, f *filter, batch arrow.RecordBatch, start, end int) ([]uint64, error) {
	if f.values != nil {
		words, ok, err := expr.EvalFilter(f.values.e, &chunkColumns{rd: rd, ctx: ctx, frag: frag, b: f.cols, start: start, end: end})
		if ok || err != nil {
			return words, err
		}
		rows := make([]int, end-start)
		for k := range rows {
			rows[k] = start + k
		}
		b, err := rd.batch(ctx, frag, f.cols, rows)
		if err != nil {
			return nil, err
		}
		defer b.Release()
		return f.prog.Filter(b)
	}
	part := batch.NewSlice(int64(start), int64(end))
	defer part.Release()
	return f.prog.Filter(part)
}

// keptRows returns the rows [start, end) of a fragment that a filter's
// bitmap words (bit i for row start+i) keep and del does not delete.
func keptRows(words []uint64, start, end int, del *roaring.Bitmap, countOnly bool) chunk {
	size := end - start
	noDeletes := del.IsEmpty() || del.CardinalityInRange(uint64(start), uint64(end)) == 0
	if countOnly && noDeletes {
		n := 0
		for w, word := range words {
			if rest := size - w*64; rest < 64 {
				word &= 1<<rest - 1
			}
			n += bits.OnesCount64(word)
		}
		return chunk{n: n}
	}
	var rows []int
	n := 0
	for w, word := range words {
		for word != 0 {
			i := w*64 + bits.TrailingZeros64(word)
			word &= word - 1
			if i >= size || !noDeletes && del.Contains(uint32(start+i)) {
				continue
			}
			n++
			if !countOnly {
				rows = append(rows, start+i)
			}
		}
	}
	return chunk{rows: rows, n: n}
}

// liveRows returns the offsets in [start, end) that del does not delete.
func liveRows(start, end int, del *roaring.Bitmap) []int {
	rows := make([]int, 0, end-start)
	noDeletes := del.IsEmpty()
	for i := start; i < end; i++ {
		if noDeletes || !del.Contains(uint32(i)) {
			rows = append(rows, i)
		}
	}
	return rows
}

// selected returns the offsets of the rows of frag that are not deleted
// and that f (nil: none) keeps.
func (rd *reader) selected(ctx context.Context, frag *table.Fragment, f *filter) ([]int, error) {
	var rows []int
	err := rd.filterChunks(ctx, frag, f, false, chunkRows(int(frag.PhysicalRows)), func(c chunk) bool {
		rows = append(rows, c.rows...)
		return true
	})
	return rows, err
}

// count returns how many rows of frag are not deleted and kept by f.
func (rd *reader) count(ctx context.Context, frag *table.Fragment, f *filter) (int, error) {
	n := 0
	err := rd.filterChunks(ctx, frag, f, true, chunkRows(int(frag.PhysicalRows)), func(c chunk) bool {
		n += c.n
		return true
	})
	return n, err
}
