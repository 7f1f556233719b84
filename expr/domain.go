package expr

// domain finds the type that the fragments fs are converted to before they
// are compared or combined (verb names the operation in errors). The first
// non-constant fragment is the anchor: string constants are parsed as dates,
// timestamps or times when the anchor is one, and other constants adopt the
// anchor's type when that loses nothing. It returns fs with string
// constants parsed, or a code-13 error when the types do not mix.
func domain(fs []frag, verb string) (Type, []frag, error) {
	if len(fs) == 0 {
		return Type{}, fs, nil
	}
	anchor := 0
	for i, f := range fs {
		if f.k == nil {
			anchor = i
			break
		}
	}
	out := make([]frag, len(fs))
	for i, f := range fs {
		if !scalar(f.typ.Kind) {
			return Type{}, nil, invalid("cannot %s %s values", verb, f.typ.Kind)
		}
		var err error
		if out[i], err = parseTemporal(f, fs[anchor].typ); err != nil {
			return Type{}, nil, err
		}
	}
	d := out[anchor].typ
	for i, f := range out {
		if i == anchor {
			continue
		}
		switch {
		case f.typ.Kind == KindNull, sameType(d, f.typ):
		case d.Kind == KindNull:
			d = f.typ
		case !mixable(d, f.typ):
			return Type{}, nil, invalid("cannot %s %s with %s", verb, d, f.typ)
		default:
			if _, ok := exactConst(f, d); !ok {
				d = unify(d, f.typ)
			}
		}
	}
	return d, out, nil
}

// scalar reports whether values of kind k can be compared and computed
// with (lists, structs, maps and vectors only support IS [NOT] NULL).
func scalar(k Kind) bool {
	return k != KindList && k != KindStruct && k != KindMap && k != KindVector
}

// parseTemporal returns the string constant f parsed as a date, timestamp
// or time when anchor is of that family, and f unchanged otherwise. It
// returns a code-13 error when the text does not parse.
func parseTemporal(f frag, anchor Type) (frag, error) {
	fam := temporalFamily(anchor.Kind)
	if f.k == nil || f.typ.Kind != KindString || f.isNull() || fam == 0 || fam == 3 {
		return f, nil
	}
	s := f.k.v.(string)
	if fam == 2 {
		nanos, err := parseTime(s)
		if err != nil {
			return frag{}, invalid("cannot parse %q as time", s)
		}
		return constant(Type{Kind: KindTime, Unit: Nano}, konst{v: nanos}), nil
	}
	if days, ok := dateOnly(s); ok {
		return constant(Type{Kind: KindDate32}, konst{v: days}), nil
	}
	t, k, err := timestampLiteral(s)
	if err != nil {
		return frag{}, invalid("cannot parse %q as %s", s, anchor.Kind)
	}
	return constant(t, k), nil
}

func isNumber(k Kind) bool { return k == KindInt || k == KindFloat || k == KindDecimal }

// mixable reports whether values of a and b can be compared.
func mixable(a, b Type) bool {
	ka, kb := a.Kind, b.Kind
	fa, fb := temporalFamily(ka), temporalFamily(kb)
	textual := func(k Kind) bool { return k == KindString || k == KindBinary }
	switch {
	case isNumber(ka) && isNumber(kb), ka == KindBool && kb == KindBool,
		textual(ka) && textual(kb), fa != 0 && fa == fb:
		return true
	case ka == KindString:
		return fb == 1 || fb == 2
	case kb == KindString:
		return fa == 1 || fa == 2
	}
	return false
}

// unify returns the common type of mixable types a and b: the temporal
// type when one is a string, float when numbers differ, binary for string
// and binary, and the finer of two temporal types.
func unify(a, b Type) Type {
	switch {
	case sameType(a, b):
		return a
	case a.Kind == KindString && temporalFamily(b.Kind) != 0:
		return b
	case b.Kind == KindString && temporalFamily(a.Kind) != 0:
		return a
	case isNumber(a.Kind):
		if a.Kind == KindInt && b.Kind == KindInt {
			return a
		}
		return Type{Kind: KindFloat}
	case a.Kind == KindBinary || b.Kind == KindBinary:
		return Type{Kind: KindBinary}
	}
	return finer(a, b)
}

// finer returns the temporal type of the family of a and b whose storage
// unit is the smaller of the two (Date64 with a timestamp gives a
// millisecond timestamp).
func finer(a, b Type) Type {
	if nanosPer(b) < nanosPer(a) {
		a, b = b, a
	}
	if a.Kind == KindDate64 && b.Kind == KindTimestamp {
		return Type{Kind: KindTimestamp, Unit: Milli}
	}
	return a
}
