package v21

import "github.com/lancens/lancens/lance/internal/pb/enc21pb"

// A page's layers (enc21pb.RepDefLayer) say, from the leaf outwards, what
// each level of structure of the column may hold: the leaf item, then one
// layer per struct or list above it, up to the top-level field. Lists
// number repetition levels: a repetition level r > 0 starts a new list at
// the r-th list layer counted from the leaf (and new lists at every list
// layer inside it); 0 continues the innermost list. Layers that may be
// null or empty take definition levels, counted up from the leaf: 0 is an
// item valid at every layer, and each layer's levels follow those of the
// layers below it (a list that may be both null and empty takes two, null
// then empty).
type layer struct {
	list      bool
	nullable  bool
	emptyable bool
}

func (l layer) defLevels() int {
	n := 0
	if l.nullable {
		n++
	}
	if l.emptyable {
		n++
	}
	return n
}

func parseLayers(in []enc21pb.RepDefLayer) ([]layer, error) {
	if len(in) == 0 {
		return nil, corrupt("page has no layers")
	}
	if len(in) > 64 {
		return nil, unsupported("%d layers of nesting", len(in))
	}
	out := make([]layer, len(in))
	for i, l := range in {
		switch l {
		case enc21pb.RepDefLayer_REPDEF_ALL_VALID_ITEM:
		case enc21pb.RepDefLayer_REPDEF_NULLABLE_ITEM:
			out[i].nullable = true
		case enc21pb.RepDefLayer_REPDEF_ALL_VALID_LIST:
			out[i].list = true
		case enc21pb.RepDefLayer_REPDEF_NULLABLE_LIST:
			out[i] = layer{list: true, nullable: true}
		case enc21pb.RepDefLayer_REPDEF_EMPTYABLE_LIST:
			out[i] = layer{list: true, emptyable: true}
		case enc21pb.RepDefLayer_REPDEF_NULL_AND_EMPTY_LIST:
			out[i] = layer{list: true, nullable: true, emptyable: true}
		default:
			return nil, corrupt("unknown layer %v", l)
		}
	}
	if out[0].list {
		return nil, corrupt("the leaf layer is a list")
	}
	return out, nil
}

// levelPlan holds what the levels of a page mean, layer by layer.
type levelPlan struct {
	layers []layer
	// below[j] is the number of definition levels of the layers under j;
	// a definition level d ≤ below[j] leaves layer j valid.
	below []int
	// lists[j] counts the list layers from the leaf up to j, inclusive.
	lists []int
	// ownerLists[d] is lists[j] for the layer j that owns definition
	// level d (0 for d = 0): layer j has an entry at a position only if
	// ownerLists[def] ≤ lists[j].
	ownerLists []int
	maxRep     int
	maxDef     int
	// maxVisibleDef is the highest definition level that still has a
	// leaf item (one value slot): levels owned by a list mark a null or
	// empty list, which has none.
	maxVisibleDef int
}

func newLevelPlan(layers []layer) *levelPlan {
	p := &levelPlan{layers: layers, below: make([]int, len(layers)), lists: make([]int, len(layers)), ownerLists: []int{0}}
	def, lists := 0, 0
	seenList := false
	for j, l := range layers {
		p.below[j] = def
		if l.list {
			lists++
			seenList = true
		}
		p.lists[j] = lists
		for k := 0; k < l.defLevels(); k++ {
			p.ownerLists = append(p.ownerLists, lists)
		}
		def += l.defLevels()
		if !seenList {
			p.maxVisibleDef = def
		}
	}
	p.maxRep, p.maxDef = lists, def
	return p
}

// nullLevel and emptyLevel return the definition levels that mark layer
// j's own nulls and empty lists (0 when it has none).
func (p *levelPlan) nullLevel(j int) int {
	if !p.layers[j].nullable {
		return 0
	}
	return p.below[j] + 1
}

func (p *levelPlan) emptyLevel(j int) int {
	l := p.layers[j]
	if !l.emptyable {
		return 0
	}
	if l.nullable {
		return p.below[j] + 2
	}
	return p.below[j] + 1
}

// checkLevels verifies that every level is in range for the plan.
func (p *levelPlan) checkLevels(rep, def []uint16) error {
	if (p.maxRep > 0) != (rep != nil) {
		if rep == nil {
			return corrupt("a page with lists has no repetition levels")
		}
		return corrupt("a page without lists has repetition levels")
	}
	if rep != nil && def != nil && len(rep) != len(def) {
		return corrupt("%d repetition levels but %d definition levels", len(rep), len(def))
	}
	for _, r := range rep {
		if int(r) > p.maxRep {
			return corrupt("repetition level %d above the maximum %d", r, p.maxRep)
		}
	}
	for _, d := range def {
		if int(d) > p.maxDef {
			return corrupt("definition level %d above the maximum %d", d, p.maxDef)
		}
	}
	if len(rep) > 0 && int(rep[0]) != p.maxRep {
		return corrupt("a page's levels do not start a row")
	}
	return nil
}
