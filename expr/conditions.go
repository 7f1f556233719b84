package expr

// Conditions are the parts of a filter that an index of a column can
// answer without reading the column: comparisons of a field with
// constants, IN lists, BETWEEN, and the array_has family on list fields,
// joined by AND and OR. An engine with indexes uses them to narrow the
// rows a filter is evaluated on; it still evaluates the whole filter on
// those rows, so a condition only needs to keep every row the filter
// keeps (a superset), never to decide one.

// Literal is a constant of a condition: a boolean (Value 0 or 1), an
// integer (int64), a float (float64) or a string (string). Constants of
// other kinds (dates, decimals, binary, NULL) make no condition.
type Literal struct {
	Kind  Kind
	Value any
}

// Bound is one end of a range.
type Bound struct {
	Literal
	Inclusive bool
}

// The operations of a Condition.
const (
	CondAnd    = "and"     // every term holds
	CondOr     = "or"      // some term holds
	CondIn     = "in"      // the field equals one of Values (= and IN)
	CondRange  = "range"   // Lo (if any) ≤ or < the field ≤ or < Hi (if any)
	CondHasAny = "has_any" // the list field holds one of Values
	CondHasAll = "has_all" // the list field holds every one of Values
)

// Condition is a condition an index can answer (see above).
type Condition struct {
	Op    string
	Terms []*Condition // CondAnd, CondOr
	Path  []string     // the field, for the other operations
	// Values are CondIn's, CondHasAny's and CondHasAll's constants.
	Values []Literal
	Lo, Hi *Bound // CondRange's
}

// Conditions returns the condition of e that indexes may answer: every row
// e keeps satisfies it. An AND keeps the terms that have one (and is the
// term itself when only one has), an OR only when all its terms have one.
// It returns nil when no part of e has one.
func Conditions(e Expr) *Condition {
	switch e := e.(type) {
	case *logical:
		c := &Condition{Op: CondOr}
		if e.and {
			c.Op = CondAnd
		}
		for _, term := range e.terms {
			sub := Conditions(term)
			if sub == nil {
				if e.and {
					continue
				}
				return nil
			}
			c.Terms = append(c.Terms, sub)
		}
		switch len(c.Terms) {
		case 0:
			return nil
		case 1:
			return c.Terms[0]
		}
		return c
	case *binary:
		return comparison(e)
	case *inList:
		f, ok := e.x.(*field)
		if !ok || e.not {
			return nil
		}
		values, ok := literals(e.list)
		if !ok {
			return nil
		}
		return &Condition{Op: CondIn, Path: f.path, Values: values}
	case *between:
		f, ok := e.x.(*field)
		lo, okLo := literalOf(e.lo)
		hi, okHi := literalOf(e.hi)
		if !ok || e.not || !okLo || !okHi {
			return nil
		}
		return &Condition{Op: CondRange, Path: f.path, Lo: &Bound{lo, true}, Hi: &Bound{hi, true}}
	case *call:
		return arrayCondition(e)
	}
	return nil
}

// comparison returns the condition of field op constant (either way
// round), or nil.
func comparison(e *binary) *Condition {
	f, ok := e.l.(*field)
	other, op := e.r, e.op
	if !ok {
		if f, ok = e.r.(*field); !ok {
			return nil
		}
		other = e.l
		op = map[string]string{"<": ">", "<=": ">=", ">": "<", ">=": "<=", "=": "="}[op]
	}
	v, ok := literalOf(other)
	if !ok {
		return nil
	}
	c := &Condition{Op: CondRange, Path: f.path}
	switch op {
	case "=":
		return &Condition{Op: CondIn, Path: f.path, Values: []Literal{v}}
	case "<", "<=":
		c.Hi = &Bound{v, op == "<="}
	case ">", ">=":
		c.Lo = &Bound{v, op == ">="}
	default:
		return nil
	}
	return c
}

// arrayCondition returns the condition of array_has(field, constant) and
// array_has_any/array_has_all(field, [constants]) under their names and
// aliases, or nil.
func arrayCondition(e *call) *Condition {
	if len(e.args) != 2 {
		return nil
	}
	f, ok := e.args[0].(*field)
	if !ok {
		return nil
	}
	switch e.name {
	case "array_has", "array_contains", "list_has":
		v, ok := literalOf(e.args[1])
		if !ok {
			return nil
		}
		return &Condition{Op: CondHasAny, Path: f.path, Values: []Literal{v}}
	case "array_has_any", "list_has_any", "array_has_all", "list_has_all":
		arr, ok := e.args[1].(*array)
		if !ok || len(arr.elems) == 0 {
			return nil
		}
		values, ok := literals(arr.elems)
		if !ok {
			return nil
		}
		op := CondHasAny
		if e.name == "array_has_all" || e.name == "list_has_all" {
			op = CondHasAll
		}
		return &Condition{Op: op, Path: f.path, Values: values}
	}
	return nil
}

// literals returns the constants of es, or false unless every one is one.
func literals(es []Expr) ([]Literal, bool) {
	out := make([]Literal, 0, len(es))
	for _, x := range es {
		v, ok := literalOf(x)
		if !ok {
			return nil, false
		}
		out = append(out, v)
	}
	return out, true
}

// literalOf returns the constant e is, if it is one of the kinds a
// condition takes.
func literalOf(e Expr) (Literal, bool) {
	lit, ok := e.(*literal)
	if !ok {
		return Literal{}, false
	}
	switch lit.typ.Kind {
	case KindBool, KindInt:
		v, ok := lit.val.v.(int64)
		return Literal{Kind: lit.typ.Kind, Value: v}, ok
	case KindFloat:
		v, ok := lit.val.v.(float64)
		return Literal{Kind: KindFloat, Value: v}, ok
	case KindString:
		v, ok := lit.val.v.(string)
		return Literal{Kind: KindString, Value: v}, ok
	}
	return Literal{}, false
}
