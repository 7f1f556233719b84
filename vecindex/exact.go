package vecindex

import (
	"runtime"
	"sync"
)

// exactParallelWork is the number of values (rows × dim) above which exact
// search splits the rows across goroutines.
const exactParallelWork = 1 << 21

// ExactSearch returns the k rows of vs nearest to q under m by brute force,
// best first (ties by id). When allow is not nil only rows whose id it
// accepts are considered. Hamming takes each element as a uint8. It returns
// nil when k is not positive or len(q) != vs.Dim.
func ExactSearch(m Metric, vs *Vectors, q []float32, k int, allow func(int64) bool) []Candidate {
	n := vs.rows()
	if k <= 0 || n == 0 || len(q) != vs.Dim || !m.valid() {
		return nil
	}
	if m == Hamming {
		bv := &ByteVectors{Dim: vs.Dim, Data: bytesOf(make([]byte, 0, n*vs.Dim), vs.Data[:n*vs.Dim]), IDs: vs.IDs[:n]}
		return ExactSearchBytes(bv, bytesOf(nil, q), k, allow)
	}
	qn := dot(q, q)
	return exactSplit(n, vs.Dim, k, func(t *topK, lo, hi int) {
		for i := lo; i < hi; i++ {
			row := vs.Data[i*vs.Dim : (i+1)*vs.Dim]
			var d float32
			switch m {
			case L2:
				d = l2Bounded(q, row, t.bound())
			case Cosine:
				d = cosineFromDot(dot(q, row), qn, dot(row, row))
			case Dot:
				d = -dot(q, row)
			}
			if d > t.bound() || (allow != nil && !allow(vs.IDs[i])) {
				continue
			}
			t.push(vs.IDs[i], d)
		}
	})
}

// ExactSearchBytes returns the k rows of vs nearest to q in hamming
// distance by brute force, best first (ties by id). When allow is not nil
// only rows whose id it accepts are considered. It returns nil when k is not
// positive or len(q) != vs.Dim.
func ExactSearchBytes(vs *ByteVectors, q []byte, k int, allow func(int64) bool) []Candidate {
	n := vs.rows()
	if k <= 0 || n == 0 || len(q) != vs.Dim {
		return nil
	}
	return exactSplit(n, vs.Dim, k, func(t *topK, lo, hi int) {
		for i := lo; i < hi; i++ {
			d := float32(hamming(q, vs.Data[i*vs.Dim:(i+1)*vs.Dim]))
			if d > t.bound() || (allow != nil && !allow(vs.IDs[i])) {
				continue
			}
			t.push(vs.IDs[i], d)
		}
	})
}

// exactSplit runs scan over rows [0, n) into top-k heaps, in parallel
// ranges when the work is large, and returns the merged best k. The result
// does not depend on the split because candidates are totally ordered.
func exactSplit(n, dim, k int, scan func(t *topK, lo, hi int)) []Candidate {
	parts := 1
	if n*dim > exactParallelWork {
		parts = min(runtime.GOMAXPROCS(0), n)
	}
	heaps := make([]topK, parts)
	var wg sync.WaitGroup
	for p := range heaps {
		heaps[p].reset(k)
		lo, hi := p*n/parts, (p+1)*n/parts
		if parts == 1 {
			scan(&heaps[p], lo, hi)
			break
		}
		wg.Go(func() { scan(&heaps[p], lo, hi) })
	}
	wg.Wait()
	all := &heaps[0]
	for p := 1; p < parts; p++ {
		for _, c := range heaps[p].h {
			all.push(c.ID, c.Distance)
		}
	}
	return all.result()
}
