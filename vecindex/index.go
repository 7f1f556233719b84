package vecindex

import (
	"sync"
	"sync/atomic"
)

// Index is a trained IVF-family index. It is safe for concurrent use.
//
// Rows are stored grouped by partition: partition p holds rows
// offsets[p]..offsets[p+1]-1 of every per-row array.
type Index struct {
	params  Params
	dim     int
	offsets []int
	ids     []int64

	// centroids holds the partition centroids (unit length for cosine);
	// bcentroids replaces it for hamming.
	centroids  []float32
	bcentroids []byte

	// IVF_FLAT rows: vecs (with squared norms in norms for cosine), or bvecs
	// for hamming.
	vecs  []float32
	norms []float32
	bvecs []byte

	// Quantised rows: codes holds codeLen bytes per row of the residual from
	// its anchor; bias the per-row term of the residual distance (nil for
	// dot). See residualScales.
	pq      *productQuantizer
	sq      *scalarQuantizer
	codeLen int
	codes   []byte
	bias    []float32
	// A row's anchor is its partition centroid or, when the index has fewer
	// than maxAnchors partitions, the nearest of the maxAnchors anchors,
	// whose index is in anchorOf: residuals from a few coarse partitions of
	// clustered data quantise poorly, and finer anchors cost a byte per row
	// and a distance per anchor and query.
	anchors  []float32
	anchorOf []uint8

	// graphs holds one HNSW graph per partition for the HNSW kinds; node i
	// of partition p is row offsets[p]+i.
	graphs  []graph
	maxPart int

	mu      sync.Mutex // serialises Remove
	deleted atomic.Pointer[deletions]
	pool    sync.Pool // of *searcher
}

// deletions marks removed rows.
type deletions struct {
	bits  []uint64
	count int
}

func (d *deletions) has(row int) bool { return d.bits[row>>6]>>(row&63)&1 != 0 }

// Len returns the number of indexed vectors not removed.
func (ix *Index) Len() int {
	n := len(ix.ids)
	if d := ix.deleted.Load(); d != nil {
		n -= d.count
	}
	return n
}

// Dim returns the dimension of the indexed vectors (bytes for hamming).
func (ix *Index) Dim() int { return ix.dim }

// Params returns the parameters the index was built with, defaults filled
// in and the parameters that do not apply to its kind zeroed.
func (ix *Index) Params() Params { return ix.params }

// Remove marks the rows whose ids map to true as deleted: searches skip
// them and Len no longer counts them. Ids not in the index are ignored.
// Removal survives MarshalBinary and Load.
func (ix *Index) Remove(ids map[int64]bool) {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	d := &deletions{bits: make([]uint64, (len(ix.ids)+63)/64)}
	if old := ix.deleted.Load(); old != nil {
		copy(d.bits, old.bits)
		d.count = old.count
	}
	for row, id := range ix.ids {
		if ids[id] && !d.has(row) {
			d.bits[row>>6] |= 1 << (row & 63)
			d.count++
		}
	}
	ix.deleted.Store(d)
}

// residualScales returns the factors of the quantised-residual distance
// under m. With c the row's anchor, r its residual, r' the decoded residual
// and q the query (unit length for cosine), the l2 and cosine distance is
// alpha·(probe + ‖r'‖² + 2c·r' + ‖r − r'‖²) + beta·q·r', where
// probe = ‖q − c‖²: the squared distance to the reconstruction plus its
// quantisation error, which makes the estimate unbiased and ranks vectors
// quantised with different errors fairly. The dot distance is
// probe + beta·q·r', where probe = −q·c. The middle terms are the per-row
// bias.
func residualScales(m Metric) (alpha, beta float32) {
	switch m {
	case Cosine:
		return 0.5, -1
	case Dot:
		return 1, -1
	}
	return 1, -2
}
