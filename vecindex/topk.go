package vecindex

import (
	"cmp"
	"slices"
)

// Candidate is one search result: a row id and its distance to the query.
type Candidate struct {
	ID       int64
	Distance float32
}

// compareCandidates orders candidates by distance, then id.
func compareCandidates(a, b Candidate) int {
	if c := cmp.Compare(a.Distance, b.Distance); c != 0 {
		return c
	}
	return cmp.Compare(a.ID, b.ID)
}

// worse reports whether a ranks after b.
func worse(a, b Candidate) bool {
	return a.Distance > b.Distance || (a.Distance == b.Distance && a.ID > b.ID)
}

// topK keeps the k best candidates pushed to it in a max-heap whose root is
// the worst kept candidate.
type topK struct {
	k int
	h []Candidate
}

// reset empties t and sets its capacity to k.
func (t *topK) reset(k int) {
	t.k = k
	t.h = t.h[:0]
}

func (t *topK) len() int { return len(t.h) }

// bound returns the distance above which a candidate cannot enter: the worst
// kept distance once t is full, +Inf before.
func (t *topK) bound() float32 {
	if len(t.h) < t.k {
		return inf
	}
	return t.h[0].Distance
}

// push offers a candidate; NaN distances are ignored.
func (t *topK) push(id int64, d float32) {
	if d != d || t.k <= 0 {
		return
	}
	c := Candidate{ID: id, Distance: d}
	h := t.h
	if len(h) < t.k {
		h = append(h, c)
		for i := len(h) - 1; i > 0; {
			p := (i - 1) / 2
			if !worse(h[i], h[p]) {
				break
			}
			h[i], h[p] = h[p], h[i]
			i = p
		}
		t.h = h
		return
	}
	if !worse(h[0], c) {
		return
	}
	h[0] = c
	for i := 0; ; {
		l := 2*i + 1
		if l >= len(h) {
			break
		}
		if r := l + 1; r < len(h) && worse(h[r], h[l]) {
			l = r
		}
		if !worse(h[l], h[i]) {
			break
		}
		h[i], h[l] = h[l], h[i]
		i = l
	}
}

// result returns the kept candidates, best first, in a new slice.
func (t *topK) result() []Candidate {
	out := slices.Clone(t.h)
	slices.SortFunc(out, compareCandidates)
	return out
}
