package sqlite

import "math/bits"

// scores holds the rows a full-text query matches with their scores, in
// ascending row id order. Posting lists are in that order too, so combining
// the scores of terms and clauses is a linear merge.
type scores struct {
	ids  []int64
	vals []float32
}

func (s *scores) push(id int64, v float32) {
	s.ids = append(s.ids, id)
	s.vals = append(s.vals, v)
}

// union returns the rows of a or b, summing the scores of rows in both.
func union(a, b scores) scores {
	if len(a.ids) == 0 {
		return b
	}
	if len(b.ids) == 0 {
		return a
	}
	out := scores{ids: make([]int64, 0, len(a.ids)+len(b.ids)), vals: make([]float32, 0, len(a.ids)+len(b.ids))}
	i, j := 0, 0
	for i < len(a.ids) && j < len(b.ids) {
		switch {
		case a.ids[i] < b.ids[j]:
			out.push(a.ids[i], a.vals[i])
			i++
		case a.ids[i] > b.ids[j]:
			out.push(b.ids[j], b.vals[j])
			j++
		default:
			out.push(a.ids[i], a.vals[i]+b.vals[j])
			i++
			j++
		}
	}
	for ; i < len(a.ids); i++ {
		out.push(a.ids[i], a.vals[i])
	}
	for ; j < len(b.ids); j++ {
		out.push(b.ids[j], b.vals[j])
	}
	return out
}

// combine walks a and b together and keeps, for each row of a, the score
// f returns from its score in a and, when the row is in b, its score there
// (in is false otherwise); keep false drops the row.
func combine(a, b scores, f func(va, vb float32, in bool) (v float32, keep bool)) scores {
	out := scores{ids: a.ids[:0:0], vals: a.vals[:0:0]}
	j := 0
	for i, id := range a.ids {
		for j < len(b.ids) && b.ids[j] < id {
			j++
		}
		in := j < len(b.ids) && b.ids[j] == id
		var vb float32
		if in {
			vb = b.vals[j]
		}
		if v, keep := f(a.vals[i], vb, in); keep {
			out.push(id, v)
		}
	}
	return out
}

// intersect returns the rows in both a and b, their scores summed.
func intersect(a, b scores) scores {
	return combine(a, b, func(va, vb float32, in bool) (float32, bool) { return va + vb, in })
}

// without returns the rows of a that are not in b.
func without(a, b scores) scores {
	return combine(a, b, func(va, _ float32, in bool) (float32, bool) { return va, !in })
}

// plusWhere returns a with the scores of the rows also in b added.
func plusWhere(a, b scores) scores {
	return combine(a, b, func(va, vb float32, _ bool) (float32, bool) { return va + vb, true })
}

// timesWhere returns a with the scores of the rows also in b multiplied by f.
func timesWhere(a, b scores, f float32) scores {
	return combine(a, b, func(va, _ float32, in bool) (float32, bool) {
		if in {
			return va * f, true
		}
		return va, true
	})
}

// scaled returns a with every score multiplied by f.
func scaled(a scores, f float32) scores {
	if f == 1 {
		return a
	}
	out := scores{ids: a.ids, vals: make([]float32, len(a.vals))}
	for i, v := range a.vals {
		out.vals[i] = v * f
	}
	return out
}

// accumulator sums the scores of rows, densely by row id, for queries that
// add up the scores of many terms.
type accumulator struct {
	vals []float32
	hit  rowSet
}

// newAccumulator returns an accumulator sized for row ids below rows.
func newAccumulator(rows int) accumulator {
	return accumulator{vals: make([]float32, rows), hit: make(rowSet, rows/64+1)}
}

func (a *accumulator) add(id int64, v float32) {
	for int(id) >= len(a.vals) {
		a.vals = append(a.vals, make([]float32, max(1024, len(a.vals)))...)
	}
	for int(id>>6) >= len(a.hit) {
		a.hit = append(a.hit, make(rowSet, max(16, len(a.hit)))...)
	}
	a.vals[id] += v
	a.hit[id>>6] |= 1 << (id & 63)
}

// scores returns the rows scored so far, in row order.
func (a *accumulator) scores() scores {
	n := a.hit.count()
	out := scores{ids: make([]int64, 0, n), vals: make([]float32, 0, n)}
	for w, word := range a.hit {
		for word != 0 {
			id := int64(w*64 + bits.TrailingZeros64(word))
			word &= word - 1
			out.push(id, a.vals[id])
		}
	}
	return out
}
