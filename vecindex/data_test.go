package vecindex

import (
	"math/rand/v2"
)

// clustered returns n vectors of dim values drawn around `clusters`
// gaussian centres, with ids 7i+3 (sparse and not starting at zero).
func clustered(seed uint64, n, dim, clusters int) *Vectors {
	rng := rand.New(rand.NewPCG(seed, 1))
	centres := make([]float32, clusters*dim)
	for i := range centres {
		centres[i] = float32(rng.Float64()*2 - 1)
	}
	vs := &Vectors{Dim: dim, Data: make([]float32, n*dim), IDs: make([]int64, n)}
	for i := range n {
		c := rng.IntN(clusters)
		for d := range dim {
			vs.Data[i*dim+d] = centres[c*dim+d] + float32(rng.NormFloat64()*0.1)
		}
		vs.IDs[i] = int64(7*i + 3)
	}
	return vs
}

// queriesNear returns nq queries, each a random row of vs plus gaussian
// noise.
func queriesNear(vs *Vectors, seed uint64, nq int) [][]float32 {
	rng := rand.New(rand.NewPCG(seed, 2))
	n := len(vs.IDs)
	out := make([][]float32, nq)
	for i := range out {
		r := rng.IntN(n)
		q := make([]float32, vs.Dim)
		for d := range q {
			q[d] = vs.Data[r*vs.Dim+d] + float32(rng.NormFloat64()*0.05)
		}
		out[i] = q
	}
	return out
}

// randomBytes returns n random uint8 vectors of dim bytes with ids 7i+3.
func randomBytes(seed uint64, n, dim int) *ByteVectors {
	rng := rand.New(rand.NewPCG(seed, 3))
	vs := &ByteVectors{Dim: dim, Data: make([]byte, n*dim), IDs: make([]int64, n)}
	for i := range vs.Data {
		vs.Data[i] = byte(rng.Uint32())
	}
	for i := range vs.IDs {
		vs.IDs[i] = int64(7*i + 3)
	}
	return vs
}

// rowsByID maps every id of vs to its row.
func rowsByID(vs *Vectors) map[int64]int {
	m := make(map[int64]int, len(vs.IDs))
	for i, id := range vs.IDs {
		m[id] = i
	}
	return m
}

// rerank returns the k candidates nearest to q by exact distance.
func rerank(m Metric, vs *Vectors, rows map[int64]int, q []float32, cands []Candidate, k int) []Candidate {
	t := &topK{}
	t.reset(k)
	for _, c := range cands {
		r := rows[c.ID]
		t.push(c.ID, Distance(m, q, vs.Data[r*vs.Dim:(r+1)*vs.Dim]))
	}
	return t.result()
}

// recall returns the fraction of truth's ids present in got.
func recall(truth, got []Candidate) float64 {
	in := make(map[int64]bool, len(got))
	for _, c := range got {
		in[c.ID] = true
	}
	hit := 0
	for _, c := range truth {
		if in[c.ID] {
			hit++
		}
	}
	return float64(hit) / float64(len(truth))
}
