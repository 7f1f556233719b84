package v21

// Page is a decoded run of rows of one page of a leaf column: the rows
// [firstRow, firstRow+rows) of the page, as repetition and definition
// levels (one entry per position; nil when the page has none of that
// kind) and the values of the visible items, in order. A run may be a
// whole page, the chunks of a mini-block page that hold the rows a read
// wants, or the bytes of a full-zip page that do.
type Page struct {
	firstRow int
	rows     int
	plan     *levelPlan
	rep      []uint16
	def      []uint16
	// positions is the number of level entries: len(rep) or len(def), or
	// the number of values when the page has no levels.
	positions int
	vals      *block
	// skipped is the number of values before the run's first position
	// (those of a row begun before the run's first chunk).
	skipped int
	// dict, when set, holds the values vals (fixed-width indices) point
	// into.
	dict *block
	// rowStarts[r] is the first position of row r (rows+1 entries); nil
	// when every position is a row.
	rowStarts []int
	// visibleBefore[i] counts the visible positions before position i
	// (positions+1 entries); nil when every position is visible.
	visibleBefore []int
}

// index checks the levels against the values and the run's rows, and
// builds the position indexes Column.Append uses. Positions may run past
// the run's last row (a mini-block run can end with the start of a row
// it does not hold whole); they are then ignored.
func (p *Page) index(bud budget) error {
	if err := p.plan.checkLevels(p.rep, p.def); err != nil {
		return err
	}
	switch {
	case p.rep != nil:
		p.positions = len(p.rep)
	case p.def != nil:
		p.positions = len(p.def)
	default:
		p.positions = p.vals.n - p.skipped
	}
	if p.rep != nil {
		if err := bud.take(8*uint64(p.rows+1), "row index"); err != nil {
			return err
		}
		p.rowStarts = make([]int, 0, p.rows+1)
		for i, r := range p.rep {
			if int(r) == p.plan.maxRep {
				p.rowStarts = append(p.rowStarts, i)
				if len(p.rowStarts) == p.rows+1 {
					break
				}
			}
		}
		if len(p.rowStarts) == p.rows {
			p.rowStarts = append(p.rowStarts, p.positions)
		}
		if len(p.rowStarts) != p.rows+1 {
			return corrupt("page holds %d rows, not %d", len(p.rowStarts)-1, p.rows)
		}
	} else if p.positions < p.rows {
		return corrupt("page holds %d rows, not %d", p.positions, p.rows)
	}
	visible := p.positions
	if p.def != nil && p.plan.maxVisibleDef < p.plan.maxDef {
		if err := bud.take(8*uint64(p.positions+1), "position index"); err != nil {
			return err
		}
		p.visibleBefore = make([]int, p.positions+1)
		visible = 0
		for i, d := range p.def {
			p.visibleBefore[i] = visible
			if int(d) <= p.plan.maxVisibleDef {
				visible++
			}
		}
		p.visibleBefore[p.positions] = visible
	}
	if p.vals.n-p.skipped != visible {
		return corrupt("page holds %d values for %d visible items", p.vals.n-p.skipped, visible)
	}
	if p.dict != nil {
		if err := checkIndices(p.vals, p.dict.n); err != nil {
			return err
		}
	}
	return nil
}

// rowPositions returns the positions of rows [start, end) of the run.
func (p *Page) rowPositions(start, end int) (int, int) {
	if p.rowStarts == nil {
		return start, end
	}
	return p.rowStarts[start], p.rowStarts[end]
}

// visible returns the index in vals of the value of position pos, or of
// the next visible position.
func (p *Page) visible(pos int) int {
	if p.visibleBefore == nil {
		return p.skipped + pos
	}
	return p.skipped + p.visibleBefore[pos]
}

// checkIndices verifies that every dictionary index is below n.
func checkIndices(idx *block, n int) error {
	if idx.variable() || idx.fsl != nil || idx.scalar || idx.null {
		return corrupt("dictionary indices are not plain integers")
	}
	w := idx.bits / 8
	switch w {
	case 1, 2, 4, 8:
	default:
		return corrupt("dictionary indices of %d bits", idx.bits)
	}
	for i := 0; i < idx.n; i++ {
		if v := readUint(idx.data, i*w, w); v >= uint64(n) {
			return corrupt("dictionary index %d past its %d entries", v, n)
		}
	}
	return nil
}
