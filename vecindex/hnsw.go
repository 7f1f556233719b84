package vecindex

// graph is the HNSW graph of one partition. Its nodes are ordered by level,
// highest first, so level l holds nodes 0..len(levels[l].offsets)-2 and
// node 0, on the top level, is the entry point.
type graph struct {
	levels []graphLevel
}

// graphLevel holds one level's links in compressed rows: node i links to
// links[offsets[i]:offsets[i+1]].
type graphLevel struct {
	offsets []int32
	links   []int32
}

func (g *graph) neighbors(l int, i int32) []int32 {
	lv := &g.levels[l]
	return lv.links[lv.offsets[i]:lv.offsets[i+1]]
}

// searchGraph finds the nodes of partition p nearest to the query prepared
// in s by HNSW search with width ef and offers the accepted ones to s.top.
// Rejected nodes (deleted or not allowed) still guide the search, which
// widens until it holds ef accepted nodes; when the graph runs out first,
// the partition is scanned instead. base is the partition's distance offset
// (see codeDist).
func (ix *Index) searchGraph(s *searcher, p int, base float32, ef int) {
	g := &ix.graphs[p]
	off := ix.offsets[p]
	ep := nodeDist{ix.codeDist(s, base, off), 0}
	for l := len(g.levels) - 1; l > 0; l-- {
		for moved := true; moved; {
			moved = false
			for _, nb := range g.neighbors(l, ep.n) {
				if d := ix.codeDist(s, base, off+int(nb)); d < ep.d {
					ep, moved = nodeDist{d, nb}, true
				}
			}
		}
	}
	visited := s.nextVisit()
	visited[ep.n] = s.stamp
	cand, res := s.cand[:0], s.res[:0]
	cand.push(ep)
	if s.accept(off + int(ep.n)) {
		res.push(ep)
	}
	for len(cand) > 0 {
		c := cand.pop()
		if len(res) >= ef && c.d > res[0].d {
			break
		}
		for _, nb := range g.neighbors(0, c.n) {
			if visited[nb] == s.stamp {
				continue
			}
			visited[nb] = s.stamp
			d := ix.codeDist(s, base, off+int(nb))
			if len(res) >= ef && d >= res[0].d {
				continue
			}
			cand.push(nodeDist{d, nb})
			if s.accept(off + int(nb)) {
				res.push(nodeDist{d, nb})
				if len(res) > ef {
					res.pop()
				}
			}
		}
	}
	s.cand, s.res = cand, res
	if len(res) < ef {
		// The reachable graph held fewer than ef accepted nodes: scan the
		// partition so that none is missed.
		ix.scanCodes(s, p, base)
		return
	}
	for _, r := range res {
		s.top.push(ix.ids[off+int(r.n)], r.d)
	}
}
