package file

import (
	"context"
	"errors"
	"io"
	"slices"

	"github.com/lancens/lancens/lance/file/internal/encoding"
)

// fileIO gives decoders the bytes of the file during one read, charging
// them to the read's budget.
type fileIO struct {
	r      *Reader
	budget *encoding.Budget
}

// ReadRanges implements encoding.File: ranges less than
// ReadOptions.CoalesceGap apart are fetched in one request.
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
		var b []byte
		if end > start {
			var err error
			b, err = f.r.store.ReadRange(ctx, f.r.path, int64(start), int64(end-start))
			if errors.Is(err, io.ErrUnexpectedEOF) {
				return nil, encoding.Corruptf("the file is shorter than its size %d: %v", f.r.size, err)
			}
			if err != nil {
				return nil, err
			}
		}
		for _, k := range order[i:j] {
			rg := ranges[k]
			out[k] = b[rg.Offset-start : rg.Offset-start+rg.Length : rg.Offset-start+rg.Length]
		}
		i = j
	}
	return out, nil
}
