package expr

import "errors"

// Values holds one column's values for rows 0..n-1, in the kind's natural
// Go form:
//
//   - KindBool: Bools;
//   - KindInt, KindDate32, KindDate64, KindTimestamp, KindTime,
//     KindDuration, and KindDecimal with Precision ≤ 18 (unscaled): Ints;
//   - KindFloat: Floats (NaN counts as NULL, as SQLite stores it);
//   - KindString: Strings.
//
// Valid is nil when no value is null; otherwise Valid[i] is false for a
// null row (whose value in the slice is ignored).
type Values struct {
	Type    Type
	Ints    []int64
	Floats  []float64
	Strings []string
	Bools   []bool
	Valid   []bool
}

// Columns supplies column data to EvalFilter.
type Columns interface {
	// Len is the number of rows.
	Len() int
	// Column returns the values of the column at path (split into
	// segments, quoting removed); an error for unknown paths is returned by
	// EvalFilter unchanged; ok=false means the column is not available in
	// memory (EvalFilter then reports ok=false).
	Column(path []string) (v *Values, ok bool, err error)
}

// EvalFilter evaluates the boolean expression e over every row of cols and
// returns a bitmap (bit i of word i/64, (Len()+63)/64 words) of the rows
// where it is TRUE (not NULL, not FALSE): it runs the evaluator of
// PlanFilter, with its semantics, over columns held as Values.
//
// ok is false when a column e reads is not in memory, is not of a kind
// Values holds or does not hold Len() values (then the caller evaluates
// the filter another way, such as PlanFilter over Arrow). err is the error
// PlanFilter reports for e (type errors with code 13, errors of Columns
// unchanged), checked first, or the code-13 error of a value the
// evaluation fails on.
func EvalFilter(e Expr, cols Columns) (rows []uint64, ok bool, err error) {
	r := &valuesResolver{cols: cols, vals: map[string]*Values{}}
	f, err := compileFilter(e, r)
	if errors.Is(err, errNotInMemory) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	n := cols.Len()
	for _, v := range r.vals {
		if !wellFormed(v, n) {
			return nil, false, nil
		}
	}
	loaded := map[string]vec{}
	rows, err = newProgram(f).filter(n, func(node *sqlNode) (vec, error) {
		key := pathKey(node.path)
		v, ok := loaded[key]
		if !ok {
			v = valuesVec(r.vals[key], n)
			loaded[key] = v
		}
		return v, nil
	})
	return rows, err == nil, err
}

// errNotInMemory is what valuesResolver returns for a column that Columns
// does not hold in memory.
var errNotInMemory = errors.New("column not in memory")

// valuesResolver resolves paths to the columns of a Columns, asking once
// per path.
type valuesResolver struct {
	cols Columns
	vals map[string]*Values
}

// resolve resolves path to the type of its Values. It returns the error of
// Columns unchanged, and errNotInMemory when the column is not in memory.
func (r *valuesResolver) resolve(path []string) (Type, error) {
	key := pathKey(path)
	v, ok := r.vals[key]
	if !ok {
		var err error
		if v, ok, err = r.cols.Column(path); err != nil {
			return Type{}, err
		}
		if !ok || v == nil {
			return Type{}, errNotInMemory
		}
		r.vals[key] = v
	}
	return v.Type, nil
}

// wellFormed reports whether v holds n values in the slice of its kind
// (and in Valid, when set).
func wellFormed(v *Values, n int) bool {
	size := -1
	switch v.Type.Kind {
	case KindBool:
		size = len(v.Bools)
	case KindInt, KindDate32, KindDate64, KindTimestamp, KindTime, KindDuration:
		size = len(v.Ints)
	case KindDecimal:
		if !v.Type.textDecimal() {
			size = len(v.Ints)
		}
	case KindFloat:
		size = len(v.Floats)
	case KindString:
		size = len(v.Strings)
	}
	return size == n && (v.Valid == nil || len(v.Valid) == n)
}

// valuesVec returns the vec of a well-formed column of n rows.
func valuesVec(v *Values, n int) vec {
	var valid []uint64
	if v.Valid != nil {
		valid = boolBits(v.Valid)
	}
	switch v.Type.Kind {
	case KindBool:
		if valid == nil {
			valid = onesBitmap(n)
		}
		vals := boolBits(v.Bools)
		t, f := make([]uint64, len(vals)), make([]uint64, len(vals))
		for w := range vals {
			t[w], f[w] = vals[w]&valid[w], ^vals[w]&valid[w]
		}
		return boolVec(t, f)
	case KindFloat:
		return floats(v.Floats, valid)
	case KindString:
		return vec{cls: clsText, txt: textCol{strs: v.Strings}, valid: valid}
	}
	return vec{cls: clsInt, ints: v.Ints, valid: valid}
}

// boolBits returns the bitmap of the true elements of bs.
func boolBits(bs []bool) []uint64 {
	out := make([]uint64, words(len(bs)))
	for w := range out {
		x := bs[w*64 : min(w*64+64, len(bs))]
		var word uint64
		j := 0
		for ; j+4 <= len(x); j += 4 {
			q := x[j : j+4 : j+4]
			word |= pack4(q[0], q[1], q[2], q[3]) << (uint(j) & 63)
		}
		for ; j < len(x); j++ {
			word |= b2u(x[j]) << (uint(j) & 63)
		}
		out[w] = word
	}
	return out
}
