package fts

import (
	"math/bits"
	"slices"
	"sync"
)

// Scores holds the rows a full-text query matches with their scores, in
// ascending row id order. Posting lists are in that order too, so combining
// the scores of terms and clauses is a linear merge.
type Scores struct {
	IDs  []int64
	Vals []float32
}

func (s *Scores) push(id int64, v float32) {
	s.IDs = append(s.IDs, id)
	s.Vals = append(s.Vals, v)
}

// union returns the rows of a or b, summing the scores of rows in both.
func union(a, b Scores) Scores {
	if len(a.IDs) == 0 {
		return b
	}
	if len(b.IDs) == 0 {
		return a
	}
	out := Scores{IDs: make([]int64, 0, len(a.IDs)+len(b.IDs)), Vals: make([]float32, 0, len(a.IDs)+len(b.IDs))}
	i, j := 0, 0
	for i < len(a.IDs) && j < len(b.IDs) {
		switch {
		case a.IDs[i] < b.IDs[j]:
			out.push(a.IDs[i], a.Vals[i])
			i++
		case a.IDs[i] > b.IDs[j]:
			out.push(b.IDs[j], b.Vals[j])
			j++
		default:
			out.push(a.IDs[i], a.Vals[i]+b.Vals[j])
			i++
			j++
		}
	}
	for ; i < len(a.IDs); i++ {
		out.push(a.IDs[i], a.Vals[i])
	}
	for ; j < len(b.IDs); j++ {
		out.push(b.IDs[j], b.Vals[j])
	}
	return out
}

// combine walks a and b together and keeps, for each row of a, the score
// f returns from its score in a and, when the row is in b, its score there
// (in is false otherwise); keep false drops the row.
func combine(a, b Scores, f func(va, vb float32, in bool) (v float32, keep bool)) Scores {
	out := Scores{IDs: a.IDs[:0:0], Vals: a.Vals[:0:0]}
	j := 0
	for i, id := range a.IDs {
		for j < len(b.IDs) && b.IDs[j] < id {
			j++
		}
		in := j < len(b.IDs) && b.IDs[j] == id
		var vb float32
		if in {
			vb = b.Vals[j]
		}
		if v, keep := f(a.Vals[i], vb, in); keep {
			out.push(id, v)
		}
	}
	return out
}

// intersect returns the rows in both a and b, their scores summed.
func intersect(a, b Scores) Scores {
	return combine(a, b, func(va, vb float32, in bool) (float32, bool) { return va + vb, in })
}

// without returns the rows of a that are not in b.
func without(a, b Scores) Scores {
	return combine(a, b, func(va, _ float32, in bool) (float32, bool) { return va, !in })
}

// plusWhere returns a with the scores of the rows also in b added.
func plusWhere(a, b Scores) Scores {
	return combine(a, b, func(va, vb float32, _ bool) (float32, bool) { return va + vb, true })
}

// timesWhere returns a with the scores of the rows also in b multiplied by f.
func timesWhere(a, b Scores, f float32) Scores {
	return combine(a, b, func(va, _ float32, in bool) (float32, bool) {
		if in {
			return va * f, true
		}
		return va, true
	})
}

// scaled returns a with every score multiplied by f.
func scaled(a Scores, f float32) Scores {
	if f == 1 {
		return a
	}
	out := Scores{IDs: a.IDs, Vals: make([]float32, len(a.Vals))}
	for i, v := range a.Vals {
		out.Vals[i] = v * f
	}
	return out
}

// accumulator sums the scores of rows, densely by row id, for queries that
// add up the scores of many terms. Accumulators are reused: scores hands
// one back zeroed, touching only the rows it scored.
type accumulator struct {
	vals []float32
	hit  RowSet
}

// accumulators holds zeroed accumulators for reuse.
var accumulators sync.Pool

// newAccumulator returns a zeroed accumulator sized for row ids below
// rows.
func newAccumulator(rows int) *accumulator {
	a, _ := accumulators.Get().(*accumulator)
	if a == nil {
		a = &accumulator{}
	}
	if len(a.vals) < rows {
		a.vals = make([]float32, rows)
	}
	if len(a.hit) < rows/64+1 {
		a.hit = make(RowSet, rows/64+1)
	}
	return a
}

func (a *accumulator) add(id int64, v float32) {
	for int(id) >= len(a.vals) {
		a.vals = append(a.vals, make([]float32, max(1024, len(a.vals)))...)
	}
	for int(id>>6) >= len(a.hit) {
		a.hit = append(a.hit, make(RowSet, max(16, len(a.hit)))...)
	}
	a.vals[id] += v
	a.hit[id>>6] |= 1 << (id & 63)
}

// scores returns the rows scored, in row order, and hands the
// accumulator back for reuse: it must not be used after.
func (a *accumulator) scores() Scores {
	n := a.hit.Count()
	out := Scores{IDs: make([]int64, 0, n), Vals: make([]float32, 0, n)}
	for w, word := range a.hit {
		if word == 0 {
			continue
		}
		a.hit[w] = 0
		for word != 0 {
			id := int64(w*64 + bits.TrailingZeros64(word))
			word &= word - 1
			out.push(id, a.vals[id])
			a.vals[id] = 0
		}
	}
	accumulators.Put(a)
	return out
}

// Hit is one row of a search's answer with its score.
type Hit struct {
	ID    int64
	Score float32
}

// Top returns the k best-scored rows of s, best first (ties by row id).
func (s Scores) Top(k int) []Hit {
	better := func(a, b Hit) bool { return a.Score > b.Score || (a.Score == b.Score && a.ID < b.ID) }
	var top []Hit // a min-heap on better: top[0] is the worst kept
	down := func(i int) {
		for {
			l, w := 2*i+1, i
			if l < len(top) && better(top[w], top[l]) {
				w = l
			}
			if r := l + 1; r < len(top) && better(top[w], top[r]) {
				w = r
			}
			if w == i {
				return
			}
			top[i], top[w] = top[w], top[i]
			i = w
		}
	}
	for i, id := range s.IDs {
		h := Hit{ID: id, Score: s.Vals[i]}
		switch {
		case len(top) < k:
			top = append(top, h)
			for i := len(top) - 1; i > 0 && better(top[(i-1)/2], top[i]); i = (i - 1) / 2 {
				top[i], top[(i-1)/2] = top[(i-1)/2], top[i]
			}
		case better(h, top[0]):
			top[0] = h
			down(0)
		}
	}
	slices.SortFunc(top, func(a, b Hit) int {
		if better(a, b) {
			return -1
		}
		return 1
	})
	return top
}
