package vecindex

import (
	"context"

	"github.com/lancens/lancens/internal/progress"
)

// maxAnchors is the number of anchors trained when an index has fewer
// partitions than that (see Index.anchors).
const maxAnchors = 256

// quantize trains the kind's quantizer on the residuals of the rows of
// space (the build vectors, unit length for cosine) from their anchors,
// then fills ix.codes, ix.bias and, with trained anchors, ix.anchors and
// ix.anchorOf, in stored order. assign gives each input row's partition and
// order the input rows in stored order. It returns ctx.Err() when ctx is
// cancelled.
func (ix *Index) quantize(ctx context.Context, space []float32, assign []int32, order []int, nw int) error {
	p, dim, n := ix.params, ix.dim, len(order)
	anchors, anchorOf := ix.centroids, assign
	if p.NumPartitions < maxAnchors {
		rng := newRand(p.Seed, streamAnchors)
		sample := gatherRows(space, dim, sampleRows(rng, n, maxAnchors*p.SampleRate))
		var err error
		if anchors, err = trainKMeans(ctx, sample, dim, maxAnchors, p.MaxIterations, false, rng, nw); err != nil {
			return err
		}
		anchorOf = make([]int32, n)
		if err := assignAll(ctx, space, dim, anchors, anchorOf, nw, nil); err != nil {
			return err
		}
		ix.anchors, ix.anchorOf = anchors, make([]uint8, n)
		for i, r := range order {
			ix.anchorOf[i] = uint8(anchorOf[r])
		}
	}
	anchor := func(r int) []float32 { return anchors[int(anchorOf[r])*dim : int(anchorOf[r]+1)*dim] }
	residual := func(r int, dst []float32) {
		a := anchor(r)
		for d, x := range space[r*dim : (r+1)*dim] {
			dst[d] = x - a[d]
		}
	}
	var encode func(x []float32, dst []byte)
	var decode func(code []byte, dst []float32)
	if p.Kind.usesPQ() {
		rows := sampleRows(newRand(p.Seed, streamPQSample), n, (1<<p.NumBits)*p.SampleRate)
		train := make([]float32, len(rows)*dim)
		for i, r := range rows {
			residual(r, train[i*dim:(i+1)*dim])
		}
		pq, err := trainPQ(ctx, train, dim, p.NumSubVectors, p.NumBits, p.MaxIterations, p.Seed, nw)
		if err != nil {
			return err
		}
		ix.pq, ix.codeLen = pq, pq.codeLen()
		encode, decode = pq.encode, pq.decode
	} else {
		ix.sq, ix.codeLen = trainSQ(n, dim, residual), dim
		encode, decode = ix.sq.encode, ix.sq.decode
	}
	ix.codes = make([]byte, n*ix.codeLen)
	if p.Metric != Dot {
		ix.bias = make([]float32, n)
	}
	alpha, _ := residualScales(p.Metric)
	scratch := make([][]float32, nw)
	done := progress.NewCounter(ctx, "quantize", int64(n))
	return parallelFor(ctx, nw, n, 256, func(w, lo, hi int) {
		if scratch[w] == nil {
			scratch[w] = make([]float32, 2*dim)
		}
		r, rec := scratch[w][:dim], scratch[w][dim:]
		for i := lo; i < hi; i++ {
			row := order[i]
			residual(row, r)
			code := ix.codes[i*ix.codeLen : (i+1)*ix.codeLen]
			encode(r, code)
			if ix.bias != nil {
				decode(code, rec)
				ix.bias[i] = alpha * (dot(rec, rec) + 2*dot(anchor(row), rec) + l2sq(r, rec))
			}
		}
		done.Add(int64(hi - lo))
	})
}
