package expr

import (
	"github.com/apache/arrow-go/v18/arrow"

	"github.com/lancens/lancens/store"
)

// OrderKey is one key of an ordering: the value of Expr (usually a field
// path, see Path), ascending unless Descending, with NULLs last unless
// NullsFirst.
type OrderKey struct {
	Expr       Expr
	Descending bool
	NullsFirst bool
}

// Path returns the expression that reads the field at path (segments,
// quoting removed), for an OrderKey.
func Path(segments ...string) Expr {
	return &field{node: node{pos: 1, h: 1}, path: append([]string(nil), segments...)}
}

// Order is an ordering of rows compiled for evaluation over Arrow record
// batches: the keys compare as SQLite's ORDER BY compares stored values
// (numbers by value, text and binary bytewise, false before true). An
// Order is safe for concurrent use.
type Order struct {
	keys []orderKey
}

type orderKey struct {
	p                *Program
	desc, nullsFirst bool
}

// PlanOrder compiles keys over the columns b binds. It returns the errors
// PlanValue returns for a key, and InvalidInput (13) for a key whose
// values do not sort (lists, structs, maps, vectors).
func PlanOrder(keys []OrderKey, b Binder) (*Order, error) {
	o := &Order{}
	for _, k := range keys {
		p, err := PlanValue(k.Expr, b)
		if err != nil {
			return nil, err
		}
		switch p.Type().Kind {
		case KindList, KindStruct, KindMap, KindVector:
			return nil, store.Errorf(store.CodeInvalidInput, "cannot sort by a value of type %s", p.Type())
		}
		o.keys = append(o.keys, orderKey{p: p, desc: k.Descending, nullsFirst: k.NullsFirst})
	}
	return o, nil
}

// SortKeys are the values of an Order's keys for the rows of a batch.
type SortKeys struct {
	o    *Order
	n    int
	cols []vec
}

// Keys evaluates the order's keys over the rows of inputs. It returns the
// errors of Program.Value.
func (o *Order) Keys(inputs ...arrow.RecordBatch) (*SortKeys, error) {
	sk := &SortKeys{o: o}
	for _, k := range o.keys {
		n, err := k.p.rows(inputs)
		if err != nil {
			return nil, err
		}
		v, err := k.p.p.value(n, k.p.loader(inputs))
		if err != nil {
			return nil, err
		}
		sk.n, sk.cols = n, append(sk.cols, v)
	}
	if len(o.keys) == 0 && len(inputs) > 0 {
		sk.n = int(inputs[0].NumRows())
	}
	return sk, nil
}

// CompareRows compares row i of a with row j of b (keys of one Order) by
// the keys alone: negative when row i comes first, positive when row j
// does, 0 on a tie (which the caller breaks by row order).
func CompareRows(a *SortKeys, i int, b *SortKeys, j int) int {
	for c, k := range a.o.keys {
		if r := compareKey(a.cols[c].at(i), b.cols[c].at(j), k); r != 0 {
			return r
		}
	}
	return 0
}

// compareKey compares two values of one key.
func compareKey(x, y value, k orderKey) int {
	xn, yn := x.cls == clsNull, y.cls == clsNull
	switch {
	case xn && yn:
		return 0
	case xn == k.nullsFirst && (xn || yn):
		return -1
	case xn || yn:
		return 1
	}
	r := compareValues(x, y)
	if k.desc {
		return -r
	}
	return r
}
