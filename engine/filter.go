package engine

import (
	"context"
	"math/bits"
	"runtime"
	"sync"

	"github.com/RoaringBitmap/roaring/v2"

	"github.com/lancens/lancens/expr"
	"github.com/lancens/lancens/lance/table"
)

// filterChunkRows is how many rows of a fragment one evaluation of a
// filter covers: fragments are evaluated chunk by chunk, several chunks at
// once, so that a large fragment uses every core and a scan with a limit
// stops early.
const filterChunkRows = 32 * 1024

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
// are not deleted, chunk by chunk, several chunks at a time, and calls
// emit with each chunk's kept offsets, in order, until it returns false.
// With countOnly, the chunks carry only how many rows they kept (emit
// gets nil rows). It returns the first error of reading or evaluating.
func (rd *reader) filterChunks(ctx context.Context, frag *table.Fragment, filter *expr.Program, fcols *colBinder, countOnly bool, emit func(c chunk) bool) error {
	del, err := rd.deletions(ctx, frag)
	if err != nil {
		return err
	}
	n := int(frag.PhysicalRows)
	if filter != nil && rd.narrowed != nil {
		if candidates, ok := rd.narrowed.frags[frag.ID]; ok {
			// Scalar indexes leave few rows: one chunk of them.
			rows, err := rd.selectedAmong(ctx, frag, filter, fcols, candidates, del)
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
	if filter == nil {
		for start := 0; start < n; start += filterChunkRows {
			end := min(n, start+filterChunkRows)
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
	batch, err := rd.batch(ctx, frag, fcols, nil)
	if err != nil {
		return err
	}
	defer batch.Release()
	eval := func(start, end int) chunk {
		part := batch.NewSlice(int64(start), int64(end))
		defer part.Release()
		words, err := filter.Filter(part)
		if err != nil {
			return chunk{err: err}
		}
		c := keptRows(words, start, end, del, countOnly)
		c.size = end - start
		return c
	}
	workers := max(1, runtime.GOMAXPROCS(0))
	for start := 0; start < n; start += workers * filterChunkRows {
		if err := ctx.Err(); err != nil {
			return err
		}
		wave := make([]chunk, 0, workers)
		for s := start; s < n && len(wave) < workers; s += filterChunkRows {
			wave = append(wave, chunk{n: s})
		}
		if len(wave) == 1 {
			wave[0] = eval(start, min(n, start+filterChunkRows))
		} else {
			var wg sync.WaitGroup
			for i := range wave {
				s := wave[i].n
				wg.Go(func() { wave[i] = eval(s, min(n, s+filterChunkRows)) })
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
// and that filter (nil: none) keeps.
func (rd *reader) selected(ctx context.Context, frag *table.Fragment, filter *expr.Program, fcols *colBinder) ([]int, error) {
	var rows []int
	err := rd.filterChunks(ctx, frag, filter, fcols, false, func(c chunk) bool {
		rows = append(rows, c.rows...)
		return true
	})
	return rows, err
}

// count returns how many rows of frag are not deleted and kept by filter.
func (rd *reader) count(ctx context.Context, frag *table.Fragment, filter *expr.Program, fcols *colBinder) (int, error) {
	n := 0
	err := rd.filterChunks(ctx, frag, filter, fcols, true, func(c chunk) bool {
		n += c.n
		return true
	})
	return n, err
}
