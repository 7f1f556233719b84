package expr

import (
	"fmt"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/lancens/lancens/store"
)

// Binding locates the column a field path reads: the record batch among
// the inputs a Program runs on, the field's index in that batch and, for a
// struct's fields, the child indices down to the field; Type is the
// field's Arrow type.
type Binding struct {
	Input int
	Path  []int
	Type  arrow.DataType
}

// Binder maps a field path (split into segments, quoting removed) to the
// column it reads. Bind returns an error for an unknown path, which the
// Plan functions return unchanged.
type Binder interface {
	Bind(path []string) (Binding, error)
}

// SchemaBinder binds field paths to the columns of one batch of schema s
// (input 0): the first segment names a top-level field, the others the
// fields of structs inside it. Unknown paths are TableColumnNotFound (12).
func SchemaBinder(s *arrow.Schema) Binder { return schemaBinder{s: s} }

type schemaBinder struct {
	s     *arrow.Schema
	input int
}

func (b schemaBinder) Bind(path []string) (Binding, error) {
	notFound := store.Errorf(store.CodeTableColumnNotFound, "column %s not found", strings.Join(path, "."))
	if len(path) == 0 {
		return Binding{}, notFound
	}
	idx := b.s.FieldIndices(path[0])
	if len(idx) == 0 {
		return Binding{}, notFound
	}
	f := b.s.Field(idx[0])
	out := Binding{Input: b.input, Path: []int{idx[0]}, Type: f.Type}
	for _, name := range path[1:] {
		st, ok := f.Type.(*arrow.StructType)
		if !ok {
			return Binding{}, notFound
		}
		j, ok := st.FieldIdx(name)
		if !ok {
			return Binding{}, notFound
		}
		f = st.Field(j)
		out.Path, out.Type = append(out.Path, j), f.Type
	}
	return out, nil
}

// MergeBinder binds the paths of a merge_insert condition over a target
// row batch (input 0) and the source row batch matched with it (input 1):
// "target.x" and a bare "x" read the target's column x, "source.x" the
// source's. Unknown paths are TableColumnNotFound (12).
func MergeBinder(target, source *arrow.Schema) Binder {
	return mergeBinder{target: schemaBinder{s: target}, source: schemaBinder{s: source, input: 1}}
}

type mergeBinder struct{ target, source schemaBinder }

func (b mergeBinder) Bind(path []string) (Binding, error) {
	if len(path) > 1 {
		switch path[0] {
		case "target":
			return b.target.Bind(path[1:])
		case "source":
			return b.source.Bind(path[1:])
		}
	}
	return b.target.Bind(path)
}

// Program is an expression compiled for evaluation over Arrow record
// batches, with the semantics of the SQLite expression it compiles to
// (see the package documentation). A Program is safe for concurrent use.
type Program struct {
	p        *program
	bindings map[string]Binding // by pathKey
}

// PlanFilter compiles e as a filter over the columns b binds. It returns
// code 13 (with the position) for syntax the evaluator does not compute,
// type errors and a non-boolean result, and the binder's errors
// unchanged.
func PlanFilter(e Expr, b Binder) (*Program, error) {
	br := binderResolver{b: b, bindings: map[string]Binding{}}
	f, err := compileFilter(e, br)
	if err != nil {
		return nil, err
	}
	return &Program{p: newProgram(f), bindings: br.bindings}, nil
}

// PlanValue compiles e as a value (a projection, an update value, a new
// column) over the columns b binds. It returns the errors PlanFilter
// returns, except the one for a non-boolean result.
func PlanValue(e Expr, b Binder) (*Program, error) {
	br := binderResolver{b: b, bindings: map[string]Binding{}}
	f, err := compileValue(e, br)
	if err != nil {
		return nil, err
	}
	return &Program{p: newProgram(f), bindings: br.bindings}, nil
}

// binderResolver resolves field paths for the compiler through a Binder
// and records the bindings.
type binderResolver struct {
	b        Binder
	bindings map[string]Binding
}

func (r binderResolver) resolve(path []string) (Type, error) {
	bd, err := r.b.Bind(path)
	if err != nil {
		return Type{}, err
	}
	r.bindings[pathKey(path)] = bd
	return TypeOf(bd.Type), nil
}

// Type returns the type of the program's value.
func (p *Program) Type() Type { return p.p.typ }

// rows checks the inputs of a run and returns their row count: every
// input the bindings use must be there, with as many rows as input 0.
// It returns a code-13 error otherwise.
func (p *Program) rows(inputs []arrow.RecordBatch) (int, error) {
	if len(inputs) == 0 || inputs[0] == nil {
		return 0, store.Errorf(store.CodeInvalidInput, "no record batch to evaluate over")
	}
	n := int(inputs[0].NumRows())
	for _, b := range p.bindings {
		if b.Input >= len(inputs) || inputs[b.Input] == nil {
			return 0, store.Errorf(store.CodeInvalidInput, "the expression reads record batch %d, which was not given", b.Input)
		}
		if int(inputs[b.Input].NumRows()) != n {
			return 0, store.Errorf(store.CodeInvalidInput, "record batches of %d and %d rows", n, inputs[b.Input].NumRows())
		}
	}
	return n, nil
}

// loader returns the column loader of one run over inputs.
func (p *Program) loader(inputs []arrow.RecordBatch) func(*sqlNode) (vec, error) {
	loaded := map[string]vec{}
	return func(n *sqlNode) (vec, error) {
		key := pathKey(n.path)
		nullOnly := p.p.nullOnly[n]
		if nullOnly {
			key = "?" + key
		}
		if v, ok := loaded[key]; ok {
			return v, nil
		}
		b, ok := p.bindings[pathKey(n.path)]
		if !ok {
			return vec{}, fmt.Errorf("expr: column %q was not bound", strings.Join(n.path, "."))
		}
		v, err := loadBinding(inputs[b.Input], b, nullOnly)
		if err == nil {
			loaded[key] = v
		}
		return v, err
	}
}

// Filter evaluates the program as a filter over the rows of inputs (for a
// merge condition: the target batch, then the source batch matched with
// it row for row) and returns a bitmap of the rows where it is TRUE (not
// FALSE, not NULL): bit i%64 of word i/64 for row i, (rows+63)/64 words.
// A value the SQL fails on (text that does not convert, a bad regular
// expression, an integer overflow in abs) on a row the SQL evaluates
// returns a code-13 error; so do inputs that do not match the bindings.
func (p *Program) Filter(inputs ...arrow.RecordBatch) ([]uint64, error) {
	n, err := p.rows(inputs)
	if err != nil {
		return nil, err
	}
	return p.p.filter(n, p.loader(inputs))
}

// Value evaluates the program over the rows of inputs and returns its
// value for every row as an array of ArrowType(Type()), allocated with
// mem. It returns the errors of Filter, and a code-13 error when the type
// has no Arrow column type (a bare NULL, a struct, a map or a vector).
func (p *Program) Value(mem memory.Allocator, inputs ...arrow.RecordBatch) (arrow.Array, error) {
	dt, err := ArrowType(p.p.typ)
	if err != nil {
		return nil, err
	}
	n, err := p.rows(inputs)
	if err != nil {
		return nil, err
	}
	v, err := p.p.value(n, p.loader(inputs))
	if err != nil {
		return nil, err
	}
	return toArrow(mem, v, p.p.typ, dt, n)
}

// TypeOf describes an Arrow type to the expression compiler, as the SQLite
// row store stored it: every integer type is an integer (uint64 values above
// the int64 range wrap, as SQLite stores them), every float a float, a
// fixed_size_list of float16/32/64, uint8 or int8 a vector, other lists a
// list; dictionaries are their values' type. Types lancens does not store
// are KindNull.
func TypeOf(dt arrow.DataType) Type {
	if store.IsVectorType(dt) {
		elem := TypeOf(dt.(*arrow.FixedSizeListType).Elem())
		return Type{Kind: KindVector, Elem: &elem}
	}
	switch t := dt.(type) {
	case *arrow.DictionaryType:
		return TypeOf(t.ValueType)
	case *arrow.StructType:
		return Type{Kind: KindStruct}
	case *arrow.MapType:
		return Type{Kind: KindMap}
	case arrow.ListLikeType:
		elem := TypeOf(t.Elem())
		return Type{Kind: KindList, Elem: &elem}
	case *arrow.TimestampType:
		return Type{Kind: KindTimestamp, Unit: unitOf(t.Unit)}
	case *arrow.Time32Type:
		return Type{Kind: KindTime, Unit: unitOf(t.Unit)}
	case *arrow.Time64Type:
		return Type{Kind: KindTime, Unit: unitOf(t.Unit)}
	case *arrow.DurationType:
		return Type{Kind: KindDuration, Unit: unitOf(t.Unit)}
	case arrow.DecimalType:
		return decimalType(int(t.GetPrecision()), int(t.GetScale()))
	}
	switch dt.ID() {
	case arrow.BOOL:
		return boolType
	case arrow.INT8, arrow.INT16, arrow.INT32, arrow.INT64, arrow.UINT8, arrow.UINT16, arrow.UINT32, arrow.UINT64:
		return intType
	case arrow.FLOAT16, arrow.FLOAT32, arrow.FLOAT64:
		return floatType
	case arrow.STRING, arrow.LARGE_STRING, arrow.STRING_VIEW:
		return stringType
	case arrow.BINARY, arrow.LARGE_BINARY, arrow.BINARY_VIEW, arrow.FIXED_SIZE_BINARY:
		return Type{Kind: KindBinary}
	case arrow.DATE32:
		return Type{Kind: KindDate32}
	case arrow.DATE64:
		return Type{Kind: KindDate64}
	}
	return Type{Kind: KindNull}
}

func unitOf(u arrow.TimeUnit) TimeUnit {
	switch u {
	case arrow.Millisecond:
		return Milli
	case arrow.Microsecond:
		return Micro
	case arrow.Nanosecond:
		return Nano
	}
	return Second
}

func arrowUnit(u TimeUnit) arrow.TimeUnit {
	switch u {
	case Milli:
		return arrow.Millisecond
	case Micro:
		return arrow.Microsecond
	case Nano:
		return arrow.Nanosecond
	}
	return arrow.Second
}

// ArrowType returns the Arrow type of values of t, as the SQLite row store
// read a computed value back: int64, float64, decimal128 (precision ≤ 18) or
// decimal256, utf8, binary, date32, date64, timestamp without a zone,
// duration and time of t's unit (time32 for seconds and milliseconds), and
// lists of these. It returns a code-13 error for types that have no column
// type (a bare NULL, structs, maps, vectors).
func ArrowType(t Type) (arrow.DataType, error) {
	switch t.Kind {
	case KindBool:
		return arrow.FixedWidthTypes.Boolean, nil
	case KindInt:
		return arrow.PrimitiveTypes.Int64, nil
	case KindFloat:
		return arrow.PrimitiveTypes.Float64, nil
	case KindDecimal:
		if t.Precision <= maxIntPrecision {
			return &arrow.Decimal128Type{Precision: int32(t.Precision), Scale: int32(t.Scale)}, nil
		}
		return &arrow.Decimal256Type{Precision: int32(t.Precision), Scale: int32(t.Scale)}, nil
	case KindString:
		return arrow.BinaryTypes.String, nil
	case KindBinary:
		return arrow.BinaryTypes.Binary, nil
	case KindDate32:
		return arrow.FixedWidthTypes.Date32, nil
	case KindDate64:
		return arrow.FixedWidthTypes.Date64, nil
	case KindTimestamp:
		return &arrow.TimestampType{Unit: arrowUnit(t.Unit)}, nil
	case KindDuration:
		return &arrow.DurationType{Unit: arrowUnit(t.Unit)}, nil
	case KindTime:
		if t.Unit <= Milli {
			return &arrow.Time32Type{Unit: arrowUnit(t.Unit)}, nil
		}
		return &arrow.Time64Type{Unit: arrowUnit(t.Unit)}, nil
	case KindList:
		if t.Elem != nil {
			if elem, err := ArrowType(*t.Elem); err == nil {
				return arrow.ListOf(elem), nil
			}
		}
	}
	return nil, store.Errorf(store.CodeInvalidInput, "an expression of type %s cannot be a column", t)
}
