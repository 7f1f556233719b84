package vecindex

import (
	"context"
	"errors"
	"slices"

	"github.com/lancens/lancens/internal/progress"
)

// Build trains an index of kind p.Kind over vs and returns it. It is
// deterministic for a given p.Seed whatever the number of CPUs. It returns
// an error for invalid vectors (none, inconsistent lengths, non-finite
// values) or parameters (see Params; hamming needs BuildBytes), and
// ctx.Err() when ctx is cancelled during the build.
func Build(ctx context.Context, p Params, vs *Vectors) (*Index, error) {
	if err := vs.checkBuild(); err != nil {
		return nil, err
	}
	if p.Metric == Hamming {
		return nil, errors.New("vecindex: hamming distance needs uint8 vectors: use BuildBytes")
	}
	n, dim := len(vs.IDs), vs.Dim
	rp, err := p.resolve(n, dim)
	if err != nil {
		return nil, err
	}
	nw := workers()
	// Training, quantisation and graphs work on unit vectors for cosine.
	space := vs.Data
	if rp.Metric == Cosine {
		space = make([]float32, len(vs.Data))
		for i := range n {
			normalizeInto(space[i*dim:(i+1)*dim], vs.Data[i*dim:(i+1)*dim])
		}
	}
	rng := newRand(rp.Seed, streamIVF)
	sample := gatherRows(space, dim, sampleRows(rng, n, rp.NumPartitions*rp.SampleRate))
	trained := int64(len(sample) / dim)
	progress.Report(ctx, "train", 0, trained)
	cent, err := trainKMeans(ctx, sample, dim, rp.NumPartitions, rp.MaxIterations, rp.Metric == Cosine, rng, nw)
	if err != nil {
		return nil, err
	}
	progress.Report(ctx, "train", trained, trained)
	assign := make([]int32, n)
	if err := assignAll(ctx, space, dim, cent, assign, nw, progress.NewCounter(ctx, "assign", int64(n))); err != nil {
		return nil, err
	}
	ix := &Index{params: rp, dim: dim, centroids: cent}
	order := ix.group(assign)
	var levels []uint8
	if rp.Kind.usesHNSW() {
		levels = ix.orderByLevel(order)
	}
	ix.ids = make([]int64, n)
	for i, r := range order {
		ix.ids[i] = vs.IDs[r]
	}
	if rp.Kind == IVFFlat {
		ix.storeFlat(vs.Data, order)
	} else if err := ix.quantize(ctx, space, assign, order, nw); err != nil {
		return nil, err
	}
	if rp.Kind.usesHNSW() {
		if err := ix.buildGraphs(ctx, space, order, levels, nw); err != nil {
			return nil, err
		}
	}
	return ix, nil
}

// BuildBytes trains an IVF_FLAT index under hamming distance over vs and
// returns it. It is deterministic for a given p.Seed. It returns an error
// for invalid vectors, a kind other than IVF_FLAT, a metric other than
// Hamming or other invalid parameters, and ctx.Err() when ctx is cancelled
// during the build.
func BuildBytes(ctx context.Context, p Params, vs *ByteVectors) (*Index, error) {
	if err := vs.checkBuild(); err != nil {
		return nil, err
	}
	if p.Metric != Hamming || p.Kind != IVFFlat {
		return nil, errors.New("vecindex: uint8 vectors support only IVF_FLAT with hamming distance")
	}
	n, dim := len(vs.IDs), vs.Dim
	rp, err := p.resolve(n, dim)
	if err != nil {
		return nil, err
	}
	nw := workers()
	rng := newRand(rp.Seed, streamIVF)
	rows := sampleRows(rng, n, rp.NumPartitions*rp.SampleRate)
	sample := make([]byte, 0, len(rows)*dim)
	for _, r := range rows {
		sample = append(sample, vs.Data[r*dim:(r+1)*dim]...)
	}
	progress.Report(ctx, "train", 0, int64(len(rows)))
	cent, err := trainBinaryKMeans(ctx, sample, dim, rp.NumPartitions, rp.MaxIterations, rng, nw)
	if err != nil {
		return nil, err
	}
	progress.Report(ctx, "train", int64(len(rows)), int64(len(rows)))
	assign := make([]int32, n)
	progress.Report(ctx, "assign", 0, int64(n))
	if _, err := assignNearestBytes(ctx, vs.Data, dim, cent, assign, make([]int32, n), nw); err != nil {
		return nil, err
	}
	progress.Report(ctx, "assign", int64(n), int64(n))
	ix := &Index{params: rp, dim: dim, bcentroids: cent}
	order := ix.group(assign)
	ix.ids = make([]int64, n)
	ix.bvecs = make([]byte, 0, n*dim)
	for i, r := range order {
		ix.ids[i] = vs.IDs[r]
		ix.bvecs = append(ix.bvecs, vs.Data[r*dim:(r+1)*dim]...)
	}
	return ix, nil
}

// storeFlat keeps the rows of data (the input vectors) in stored order,
// with their squared norms for cosine.
func (ix *Index) storeFlat(data []float32, order []int) {
	dim := ix.dim
	ix.vecs = gatherRows(data, dim, order)
	if ix.params.Metric == Cosine {
		ix.norms = make([]float32, len(order))
		for i := range ix.norms {
			row := ix.vecs[i*dim : (i+1)*dim]
			ix.norms[i] = dot(row, row)
		}
	}
}

// group sets ix.offsets from the partition of every input row and returns
// the input rows in stored order: by partition, input order within one.
func (ix *Index) group(assign []int32) []int {
	parts := ix.params.NumPartitions
	ix.offsets = make([]int, parts+1)
	for _, a := range assign {
		ix.offsets[a+1]++
	}
	for p := range parts {
		ix.offsets[p+1] += ix.offsets[p]
		ix.maxPart = max(ix.maxPart, ix.offsets[p+1]-ix.offsets[p])
	}
	next := slices.Clone(ix.offsets[:parts])
	order := make([]int, len(assign))
	for r, a := range assign {
		order[next[a]] = r
		next[a]++
	}
	return order
}
