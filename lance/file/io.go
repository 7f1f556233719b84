package file

import (
	"context"
	"errors"
	"io"
	"slices"

	"github.com/lancens/lancens/lance/blob"
	"github.com/lancens/lancens/lance/file/internal/encoding"
)

// fileIO gives decoders the bytes of the file during one read, charging
// them to the read's budget.
type fileIO struct {
	r      *Reader
	budget *encoding.Budget
}

// ReadRanges implements encoding.File: ranges less than
// ReadOptions.CoalesceGap apart are fetched as one, and all of them in one
// call to the store (blob.ReadRanges: one open of a local file, not one
// per range).
func (f *fileIO) ReadRanges(ctx context.Context, ranges []encoding.Range) ([][]byte, error) {
	out := make([][]byte, len(ranges))
	order := make([]int, len(ranges))
	for i, rg := range ranges {
		if !within(rg, 0, f.r.size) {
			return nil, encoding.Corruptf("a read of %d bytes at %d goes past the file's %d bytes", rg.Length, rg.Offset, f.r.size)
		}
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int {
		if ranges[a].Offset < ranges[b].Offset {
			return -1
		} else if ranges[a].Offset > ranges[b].Offset {
			return 1
		}
		return 0
	})
	// Coalesce: fetch[k] covers the ranges order[groups[k][0]:groups[k][1]].
	var fetch []blob.Range
	var groups [][2]int
	for i := 0; i < len(order); {
		start, end := ranges[order[i]].Offset, ranges[order[i]].Offset+ranges[order[i]].Length
		j := i + 1
		for ; j < len(order); j++ {
			next := ranges[order[j]]
			if next.Offset > end+uint64(f.r.opts.CoalesceGap) {
				break
			}
			end = max(end, next.Offset+next.Length)
		}
		if err := f.budget.Take(end - start); err != nil {
			return nil, err
		}
		if end > start { // empty ranges need no read
			fetch = append(fetch, blob.Range{Off: int64(start), N: int64(end - start)})
			groups = append(groups, [2]int{i, j})
		}
		i = j
	}
	bufs, err := blob.ReadRanges(ctx, f.r.store, f.r.path, fetch)
	if errors.Is(err, io.ErrUnexpectedEOF) {
		return nil, encoding.Corruptf("the file is shorter than its size %d: %v", f.r.size, err)
	}
	if err != nil {
		return nil, err
	}
	for k, b := range bufs {
		start := uint64(fetch[k].Off)
		for _, i := range order[groups[k][0]:groups[k][1]] {
			rg := ranges[i]
			out[i] = b[rg.Offset-start : rg.Offset-start+rg.Length : rg.Offset-start+rg.Length]
		}
	}
	return out, nil
}
