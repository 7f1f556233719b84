package vecindex

import (
	"errors"
	"fmt"
)

// Defaults filled in by Build for zero-valued parameters and by Search for
// zero-valued options.
const (
	DefaultNumBits        = 8
	DefaultSampleRate     = 256
	DefaultMaxIterations  = 50
	DefaultM              = 20
	DefaultEfConstruction = 150
	DefaultK              = 10
	DefaultNprobes        = 20
	DefaultEf             = 40
)

// maxM bounds the HNSW neighbour count.
const maxM = 256

// Params are the build parameters of an index; zero values take defaults.
type Params struct {
	Kind   Kind
	Metric Metric
	// NumPartitions is the number of IVF partitions. When zero it is
	// ceil(n / TargetPartitionSize), the target defaulting by kind as in
	// Lance: 4096 rows for IVF_FLAT, 8192 for IVF_PQ and IVF_SQ, 2^20 for
	// the HNSW kinds. It is clamped to the number of vectors.
	NumPartitions       int
	TargetPartitionSize int
	// NumSubVectors is the number of PQ sub-vectors; it must divide the
	// dimension. The default gives sub-vectors of 16 values when the
	// dimension allows, else of the largest length below 16 that divides it.
	NumSubVectors int
	// NumBits is the bits per code: 4 or 8 for PQ, 8 for SQ (default 8).
	NumBits int
	// SampleRate bounds each k-means training set to SampleRate × clusters
	// vectors (default 256).
	SampleRate int
	// MaxIterations bounds the iterations of every k-means (partitions,
	// anchors, PQ codebooks; default 50), which also stops once at most 1%
	// of its rows change cluster in an iteration.
	MaxIterations int
	// M is the HNSW neighbour count per node (2M on the bottom level);
	// EfConstruction the HNSW build search width (defaults 20 and 150).
	M              int
	EfConstruction int
	Seed           int64
}

// resolve returns p with defaults filled in for n vectors of dimension dim,
// and the parameters that do not apply to p.Kind zeroed. It returns an error
// for invalid parameters.
func (p Params) resolve(n, dim int) (Params, error) {
	if !p.Kind.valid() {
		return p, fmt.Errorf("vecindex: unknown index type %d", int(p.Kind))
	}
	if !p.Metric.valid() {
		return p, fmt.Errorf("vecindex: unknown distance type %d", int(p.Metric))
	}
	if p.Metric == Hamming && p.Kind != IVFFlat {
		return p, fmt.Errorf("vecindex: hamming distance supports only IVF_FLAT, not %v", p.Kind)
	}
	if p.NumPartitions < 0 || p.TargetPartitionSize < 0 || p.NumSubVectors < 0 || p.NumBits < 0 ||
		p.SampleRate < 0 || p.MaxIterations < 0 || p.M < 0 || p.EfConstruction < 0 {
		return p, errors.New("vecindex: index parameters must not be negative")
	}
	r := p
	if r.NumPartitions == 0 {
		target := r.TargetPartitionSize
		if target == 0 {
			target = r.Kind.targetPartitionSize()
		}
		r.NumPartitions = (n + target - 1) / target
	}
	r.NumPartitions = min(max(r.NumPartitions, 1), n)
	r.SampleRate = orDefault(r.SampleRate, DefaultSampleRate)
	r.MaxIterations = orDefault(r.MaxIterations, DefaultMaxIterations)
	r.NumSubVectors, r.NumBits, r.M, r.EfConstruction = 0, 0, 0, 0
	switch {
	case p.Kind.usesPQ():
		r.NumBits = orDefault(p.NumBits, DefaultNumBits)
		if r.NumBits != 4 && r.NumBits != 8 {
			return p, fmt.Errorf("vecindex: num_bits must be 4 or 8 for %v, got %d", p.Kind, r.NumBits)
		}
		r.NumSubVectors = orDefault(p.NumSubVectors, defaultSubVectors(dim))
		if r.NumSubVectors > dim || dim%r.NumSubVectors != 0 {
			return p, fmt.Errorf("vecindex: dimension %d is not divisible by num_sub_vectors %d", dim, r.NumSubVectors)
		}
	case p.Kind.usesSQ():
		r.NumBits = orDefault(p.NumBits, DefaultNumBits)
		if r.NumBits != 8 {
			return p, fmt.Errorf("vecindex: num_bits must be 8 for %v, got %d", p.Kind, r.NumBits)
		}
	}
	if p.Kind.usesHNSW() {
		r.M = orDefault(p.M, DefaultM)
		if r.M < 2 || r.M > maxM {
			return p, fmt.Errorf("vecindex: m must be between 2 and %d, got %d", maxM, r.M)
		}
		r.EfConstruction = orDefault(p.EfConstruction, DefaultEfConstruction)
	}
	return r, nil
}

func orDefault(v, def int) int {
	if v == 0 {
		return def
	}
	return v
}

// defaultSubVectors returns dim divided by the largest sub-vector length up
// to 16 that divides it.
func defaultSubVectors(dim int) int {
	for l := 16; l > 1; l-- {
		if dim%l == 0 {
			return dim / l
		}
	}
	return dim
}
