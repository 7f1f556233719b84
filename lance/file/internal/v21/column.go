package v21

// Column gathers the rows a read wants from one leaf column, page after
// page: for each layer of structure (from the top-level field down to the
// leaf) its entries' validity and, for lists, offsets, and the leaf's
// values. Assemble turns the columns of a field into an Arrow array.
type Column struct {
	layers []colLayer // the top-level field first, the leaf last
	parts  []part
	bud    budget
}

// colLayer is one layer's share of a Column: n entries, their validity
// (one bit each) and, for a list, n+1 offsets into the next layer.
type colLayer struct {
	list     bool
	n        int
	validity []byte
	nulls    int
	offsets  []int64
}

// part is a run of leaf values: vals[start:end], or, with dict, the
// dictionary entries those indices name.
type part struct {
	vals, dict *block
	start, end int
}

// Append adds rows [start, end) of page p. The pages of one column must
// agree on their layers' kinds (struct or list); it returns an error
// wrapping ErrCorrupt when they do not.
func (c *Column) Append(p *Page, start, end int) error {
	if start < 0 || end < start || end > p.rows {
		return corrupt("rows %d–%d of a page of %d rows", start, end, p.rows)
	}
	plan := p.plan
	m := len(plan.layers)
	if c.layers == nil {
		c.layers = make([]colLayer, m)
		for j, l := range plan.layers {
			c.layers[m-1-j].list = l.list
			c.layers[m-1-j].offsets = nil
			if l.list {
				c.layers[m-1-j].offsets = []int64{0}
			}
		}
	}
	if len(c.layers) != m {
		return corrupt("pages of one column have %d and %d layers", len(c.layers), m)
	}
	for j, l := range plan.layers {
		if c.layers[m-1-j].list != l.list {
			return corrupt("pages of one column disagree on which layers are lists")
		}
	}
	ps, pe := p.rowPositions(start, end)
	vs, ve := p.visible(ps), p.visible(pe)
	// The number of entries each layer had before this page, for offsets.
	before := make([]int, m)
	for k := range c.layers {
		before[k] = c.layers[k].n
	}
	// Each layer gets at most one entry per position: a validity bit, and
	// an offset for lists.
	for _, l := range plan.layers {
		cost := uint64(pe-ps+7) / 8
		if l.list {
			cost += 8 * uint64(pe-ps)
		}
		if err := c.bud.take(cost, "structure of the rows read"); err != nil {
			return err
		}
	}
	for j := m - 1; j >= 0; j-- {
		c.appendLayer(p, j, ps, pe, before)
	}
	leaf := &c.layers[m-1]
	if leaf.n-before[m-1] != ve-vs {
		return corrupt("page has %d leaf entries for %d values", leaf.n-before[m-1], ve-vs)
	}
	if p.vals.null && ve > vs {
		// A page of nulls: every leaf entry is null, whatever its level.
		for i := before[m-1]; i < leaf.n; i++ {
			if bitSet(leaf.validity, i) {
				leaf.validity[i/8] &^= 1 << (i % 8)
				leaf.nulls++
			}
		}
	}
	c.parts = append(c.parts, part{vals: p.vals, dict: p.dict, start: vs, end: ve})
	return nil
}

// appendLayer appends the entries of layer j (counted from the leaf) at
// positions [ps, pe) of p.
func (c *Column) appendLayer(p *Page, j, ps, pe int, before []int) {
	plan := p.plan
	m := len(plan.layers)
	out := &c.layers[m-1-j]
	if p.rep == nil && p.def == nil {
		n := pe - ps
		out.validity = appendOnes(out.validity, out.n, n)
		out.n += n
		return
	}
	lists, below := plan.lists[j], plan.below[j]
	null, empty := plan.nullLevel(j), plan.emptyLevel(j)
	ownLast := below + plan.layers[j].defLevels()
	isList := plan.layers[j].list
	childLists := 0
	var children int64
	if isList {
		childLists = plan.lists[j-1]
		children = int64(before[m-j])
		out.offsets = out.offsets[:len(out.offsets)-1] // the end, pushed again below
	}
	for i := ps; i < pe; i++ {
		var r, d int
		if p.rep != nil {
			r = int(p.rep[i])
		}
		if p.def != nil {
			d = int(p.def[i])
		}
		if r >= lists && plan.ownerLists[d] <= lists {
			valid := d <= below || (empty != 0 && d == empty)
			if (null != 0 && d == null) || d > ownLast {
				valid = false
			}
			if isList {
				out.offsets = append(out.offsets, children)
			}
			c.pushValidity(out, valid)
		}
		if isList && r >= childLists && plan.ownerLists[d] <= childLists {
			children++
		}
	}
	if isList {
		out.offsets = append(out.offsets, children)
	}
}

func (c *Column) pushValidity(l *colLayer, valid bool) {
	if l.n%8 == 0 {
		l.validity = append(l.validity, 0)
	}
	if valid {
		l.validity[l.n/8] |= 1 << (l.n % 8)
	} else {
		l.nulls++
	}
	l.n++
}
