package enc21

import (
	"github.com/lancens/lancens/lance/internal/pb/enc21pb"
)

// Page is one decoded page of a leaf column: its rows as repetition and
// definition levels (one entry per position; nil when the page has none
// of that kind) and the values of its visible items, in order.
type Page struct {
	rows int
	plan *levelPlan
	rep  []uint16
	def  []uint16
	// positions is the number of level entries: len(rep) or len(def), or
	// the number of values when the page has no levels.
	positions int
	vals      *block
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

// Rows returns the number of rows in the page.
func (p *Page) Rows() int { return p.rows }

// DecodePage decodes one page of a leaf column written by a 2.1 or later
// writer: layout is the page's encoding, buffers its buffers in order, and
// rows the row count the column metadata gives it. It returns an error
// wrapping ErrCorrupt when the page contradicts itself, ErrUnsupported
// for encodings this package does not read, and ErrTooLarge when it would
// decode past lim.
func DecodePage(layout *enc21pb.PageLayout, buffers [][]byte, rows uint64, lim Limits) (*Page, error) {
	bud := newBudget(lim)
	if err := bud.items(rows, "the page's rows"); err != nil {
		return nil, err
	}
	var (
		p   *Page
		err error
	)
	switch l := layout.GetLayout().(type) {
	case *enc21pb.PageLayout_MiniBlockLayout:
		p, err = decodeMiniBlock(l.MiniBlockLayout, buffers, bud)
	case *enc21pb.PageLayout_FullZipLayout:
		p, err = decodeFullZip(l.FullZipLayout, buffers, int(rows), bud)
	case *enc21pb.PageLayout_ConstantLayout:
		p, err = decodeConstant(l.ConstantLayout, buffers, int(rows), bud)
	case *enc21pb.PageLayout_BlobLayout:
		return nil, unsupported("blob pages")
	case nil:
		return nil, corrupt("page has no layout")
	default:
		return nil, unsupported("page layout %T", l)
	}
	if err != nil {
		return nil, err
	}
	p.rows = int(rows)
	if err := p.index(bud); err != nil {
		return nil, err
	}
	return p, nil
}

// index checks the levels against the values and the row count, and
// builds the position indexes Slice uses.
func (p *Page) index(bud *budget) error {
	if err := p.plan.checkLevels(p.rep, p.def); err != nil {
		return err
	}
	switch {
	case p.rep != nil:
		p.positions = len(p.rep)
	case p.def != nil:
		p.positions = len(p.def)
	default:
		p.positions = p.vals.n
	}
	if p.rep != nil {
		if err := bud.take(8*uint64(p.rows+1), "row index"); err != nil {
			return err
		}
		p.rowStarts = make([]int, 0, p.rows+1)
		for i, r := range p.rep {
			if int(r) == p.plan.maxRep {
				if len(p.rowStarts) == p.rows {
					return corrupt("page holds more than its %d rows", p.rows)
				}
				p.rowStarts = append(p.rowStarts, i)
			}
		}
		p.rowStarts = append(p.rowStarts, p.positions)
		if len(p.rowStarts) != p.rows+1 {
			return corrupt("page holds %d rows, not %d", len(p.rowStarts)-1, p.rows)
		}
	} else if p.positions != p.rows {
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
	if p.vals.n != visible {
		return corrupt("page holds %d values for %d visible items", p.vals.n, visible)
	}
	if p.dict != nil {
		if err := checkIndices(p.vals, p.dict.n); err != nil {
			return err
		}
	}
	return nil
}

// rowPositions returns the positions of rows [start, end).
func (p *Page) rowPositions(start, end int) (int, int) {
	if p.rowStarts == nil {
		return start, end
	}
	return p.rowStarts[start], p.rowStarts[end]
}

func (p *Page) visible(pos int) int {
	if p.visibleBefore == nil {
		return pos
	}
	return p.visibleBefore[pos]
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
		if readUint(idx.data, i*w, w) >= uint64(n) {
			return corrupt("dictionary index %d past its %d entries", readUint(idx.data, i*w, w), n)
		}
	}
	return nil
}
