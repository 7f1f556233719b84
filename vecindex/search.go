package vecindex

// SearchOptions are the options of a search; zero values take defaults.
type SearchOptions struct {
	// K is the number of results wanted (default 10).
	K int
	// Candidates, when larger than K, is the number of results to return
	// instead, for the caller to re-rank exactly (K × refine_factor).
	Candidates int
	// Nprobes is the number of partitions to probe (default 20, clamped to
	// the number of partitions).
	Nprobes int
	// Ef is the HNSW search width (default 40, raised to the number of
	// results).
	Ef int
	// Allow, when not nil, restricts the results to the ids it accepts.
	Allow func(int64) bool
}

// Search returns up to max(K, Candidates) indexed rows nearest to q, best
// first, by the index's distance: exact for IVF_FLAT, approximate for the
// quantised kinds. It probes the Nprobes partitions nearest to q and, while
// fewer than K accepted rows are found (a selective Allow, removed rows),
// further partitions, nearest first, until it has K or has probed them all.
// On a hamming index each element of q is taken as a uint8. It returns nil
// when len(q) is not the index dimension.
func (ix *Index) Search(q []float32, o SearchOptions) []Candidate {
	if ix.params.Metric == Hamming {
		return ix.SearchBytes(bytesOf(nil, q), o)
	}
	if len(q) != ix.dim {
		return nil
	}
	s := ix.searcher(o.Allow)
	defer ix.release(s)
	k, nprobes, ef := ix.options(o, s)
	m := ix.params.Metric
	qs := q // the query in the space of the centroids and codes
	if m == Cosine {
		qs = normalizeInto(s.qn, q)
	}
	for p := range s.probe {
		s.probe[p] = ix.probeDist(q, qs, ix.centroids[p*ix.dim:(p+1)*ix.dim])
	}
	alpha, beta := residualScales(m)
	var c0 float32
	switch {
	case ix.pq != nil:
		ix.pq.fillTable(qs, beta, s.tab, s.tmp)
	case ix.sq != nil:
		c0, s.unit = ix.sq.fillWeights(qs, beta, s.w)
	}
	for a := range len(ix.anchors) / ix.dim {
		s.anchorBase[a] = alpha*ix.probeDist(q, qs, ix.anchors[a*ix.dim:(a+1)*ix.dim]) + c0
	}
	qn := dot(q, q)
	ix.probePartitions(s, k, nprobes, func(p int) {
		base := alpha*s.probe[p] + c0
		switch {
		case ix.vecs != nil:
			ix.scanFlat(s, p, q, qn)
		case ix.graphs != nil && ix.offsets[p+1]-ix.offsets[p] > ef:
			ix.searchGraph(s, p, base, ef)
		default:
			ix.scanCodes(s, p, base)
		}
	})
	return s.top.result()
}

// SearchBytes is Search for a hamming index and a uint8 query. It returns
// nil for other indexes or when len(q) is not the index dimension.
func (ix *Index) SearchBytes(q []byte, o SearchOptions) []Candidate {
	if ix.bvecs == nil || len(q) != ix.dim {
		return nil
	}
	s := ix.searcher(o.Allow)
	defer ix.release(s)
	k, nprobes, _ := ix.options(o, s)
	for p := range s.probe {
		s.probe[p] = float32(hamming(q, ix.bcentroids[p*ix.dim:(p+1)*ix.dim]))
	}
	ix.probePartitions(s, k, nprobes, func(p int) {
		for row := ix.offsets[p]; row < ix.offsets[p+1]; row++ {
			d := float32(hamming(q, ix.bvecs[row*ix.dim:(row+1)*ix.dim]))
			if d > s.top.bound() || !s.accept(row) {
				continue
			}
			s.top.push(ix.ids[row], d)
		}
	})
	return s.top.result()
}

// options returns o's K, Nprobes and Ef with defaults applied, and readies
// s.top for max(K, Candidates) results.
func (ix *Index) options(o SearchOptions, s *searcher) (k, nprobes, ef int) {
	k = orDefault(max(o.K, 0), DefaultK)
	want := max(k, o.Candidates)
	nprobes = min(max(orDefault(max(o.Nprobes, 0), DefaultNprobes), 1), len(ix.offsets)-1)
	ef = max(orDefault(max(o.Ef, 0), DefaultEf), want)
	s.top.reset(want)
	return k, nprobes, ef
}

// probePartitions calls scan for the nprobes partitions nearest to the
// query by s.probe, nearest first, then for further ones while s.top holds
// fewer than k results.
func (ix *Index) probePartitions(s *searcher, k, nprobes int, scan func(p int)) {
	s.rankNearest(nprobes)
	for i := range len(s.probe) {
		if i >= nprobes && s.top.len() >= k {
			return
		}
		if i == len(s.order) {
			s.rankRest()
		}
		if p := int(s.order[i].n); ix.offsets[p+1] > ix.offsets[p] {
			scan(p)
		}
	}
}

// probeDist returns the distance term of a centroid or anchor c for the
// query q (qs at unit length for cosine): the squared distance of qs to c,
// or −q·c for dot.
func (ix *Index) probeDist(q, qs, c []float32) float32 {
	if ix.params.Metric == Dot {
		return -dot(q, c)
	}
	return l2sq(qs, c)
}

// scanFlat offers every row of IVF_FLAT partition p to s.top with its exact
// distance to q (qn = q·q), computed as ExactSearch does.
func (ix *Index) scanFlat(s *searcher, p int, q []float32, qn float32) {
	dim, m := ix.dim, ix.params.Metric
	for row := ix.offsets[p]; row < ix.offsets[p+1]; row++ {
		v := ix.vecs[row*dim : (row+1)*dim]
		var d float32
		switch m {
		case L2:
			d = l2Bounded(q, v, s.top.bound())
		case Cosine:
			d = cosineFromDot(dot(q, v), qn, ix.norms[row])
		default:
			d = -dot(q, v)
		}
		if d > s.top.bound() || !s.accept(row) {
			continue
		}
		s.top.push(ix.ids[row], d)
	}
}

// scanCodes offers every row of quantised partition p to s.top with its
// quantised distance (see codeDist).
func (ix *Index) scanCodes(s *searcher, p int, base float32) {
	lo, hi, cl := ix.offsets[p], ix.offsets[p+1], ix.codeLen
	codes := ix.codes[lo*cl : hi*cl]
	bias := ix.bias
	if bias != nil {
		bias = bias[lo:hi]
	}
	bound := s.top.bound()
	for i := range hi - lo {
		code := codes[i*cl : (i+1)*cl]
		var d float32
		if ix.pq != nil {
			d = adc(s.tab, code)
		} else {
			d = float32(sqDot(s.w, code)) * s.unit
		}
		if ix.anchorOf != nil {
			d += s.anchorBase[ix.anchorOf[lo+i]]
		} else {
			d += base
		}
		if bias != nil {
			d += bias[i]
		}
		if d > bound || !s.accept(lo+i) {
			continue
		}
		s.top.push(ix.ids[lo+i], d)
		bound = s.top.bound()
	}
}

// codeDist returns the quantised distance of row to the query prepared in
// s: its anchor's term (base for the partition centroid, see
// residualScales) plus the row's bias and the scaled dot product of the
// query with its decoded residual.
func (ix *Index) codeDist(s *searcher, base float32, row int) float32 {
	code := ix.codes[row*ix.codeLen : (row+1)*ix.codeLen]
	d := base
	if ix.anchorOf != nil {
		d = s.anchorBase[ix.anchorOf[row]]
	}
	if ix.pq != nil {
		d += adc(s.tab, code)
	} else {
		d += float32(sqDot(s.w, code)) * s.unit
	}
	if ix.bias != nil {
		d += ix.bias[row]
	}
	return d
}
