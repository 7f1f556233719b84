package sqlite

import (
	"github.com/apache/arrow-go/v18/arrow"

	"github.com/lancens/lancens/expr"
	"github.com/lancens/lancens/store"
)

// resolver maps field paths of SQL expressions to the physical columns of a
// managed table at one schema. alias, when set, qualifies the columns (for
// queries over several tables).
type resolver struct {
	schema *tableSchema
	alias  string
}

var _ expr.Resolver = resolver{}

// Resolve implements expr.Resolver. Unknown paths are TableColumnNotFound
// (12).
func (r resolver) Resolve(path []string) (expr.Column, error) {
	if len(path) == 1 && path[0] == "_rowid" {
		return expr.Column{SQL: r.qualify("_rowid"), Type: expr.Type{Kind: expr.KindInt}}, nil
	}
	f, fl, ok := r.schema.lookup(path)
	if !ok {
		return expr.Column{}, store.Errorf(store.CodeTableColumnNotFound, "column %s not found", formatPath(path))
	}
	return expr.Column{SQL: r.qualify(quoteColumn(fl.Column)), Type: exprType(f.Type)}, nil
}

func (r resolver) qualify(col string) string {
	if r.alias == "" {
		return col
	}
	return r.alias + "." + col
}

// exprType describes a stored Arrow type to the expression compiler.
func exprType(dt arrow.DataType) expr.Type {
	if store.IsVectorType(dt) {
		elem := exprType(dt.(*arrow.FixedSizeListType).Elem())
		return expr.Type{Kind: expr.KindVector, Elem: &elem}
	}
	switch t := dt.(type) {
	case *arrow.StructType:
		return expr.Type{Kind: expr.KindStruct}
	case *arrow.MapType:
		return expr.Type{Kind: expr.KindMap}
	case arrow.ListLikeType:
		elem := exprType(t.Elem())
		return expr.Type{Kind: expr.KindList, Elem: &elem}
	case *arrow.TimestampType:
		return expr.Type{Kind: expr.KindTimestamp, Unit: exprUnit(t.Unit)}
	case *arrow.Time32Type:
		return expr.Type{Kind: expr.KindTime, Unit: exprUnit(t.Unit)}
	case *arrow.Time64Type:
		return expr.Type{Kind: expr.KindTime, Unit: exprUnit(t.Unit)}
	case *arrow.DurationType:
		return expr.Type{Kind: expr.KindDuration, Unit: exprUnit(t.Unit)}
	case arrow.DecimalType:
		return expr.Type{Kind: expr.KindDecimal, Precision: int(t.GetPrecision()), Scale: int(t.GetScale())}
	}
	switch dt.ID() {
	case arrow.NULL:
		return expr.Type{Kind: expr.KindNull}
	case arrow.BOOL:
		return expr.Type{Kind: expr.KindBool}
	case arrow.INT8, arrow.INT16, arrow.INT32, arrow.INT64, arrow.UINT8, arrow.UINT16, arrow.UINT32, arrow.UINT64:
		return expr.Type{Kind: expr.KindInt}
	case arrow.FLOAT16, arrow.FLOAT32, arrow.FLOAT64:
		return expr.Type{Kind: expr.KindFloat}
	case arrow.STRING, arrow.LARGE_STRING:
		return expr.Type{Kind: expr.KindString}
	case arrow.BINARY, arrow.LARGE_BINARY, arrow.FIXED_SIZE_BINARY:
		return expr.Type{Kind: expr.KindBinary}
	case arrow.DATE32:
		return expr.Type{Kind: expr.KindDate32}
	case arrow.DATE64:
		return expr.Type{Kind: expr.KindDate64}
	}
	return expr.Type{Kind: expr.KindNull}
}

func exprUnit(u arrow.TimeUnit) expr.TimeUnit {
	switch u {
	case arrow.Millisecond:
		return expr.Milli
	case arrow.Microsecond:
		return expr.Micro
	case arrow.Nanosecond:
		return expr.Nano
	}
	return expr.Second
}

// arrowType returns the Arrow type of a computed expression's value, for
// query projections and new columns. Returns InvalidInput (13) for kinds
// that have no column type (a bare NULL, structs, maps).
func arrowType(t expr.Type) (arrow.DataType, error) {
	switch t.Kind {
	case expr.KindBool:
		return arrow.FixedWidthTypes.Boolean, nil
	case expr.KindInt:
		return arrow.PrimitiveTypes.Int64, nil
	case expr.KindFloat:
		return arrow.PrimitiveTypes.Float64, nil
	case expr.KindDecimal:
		if t.Precision <= 18 {
			return &arrow.Decimal128Type{Precision: int32(t.Precision), Scale: int32(t.Scale)}, nil
		}
		return &arrow.Decimal256Type{Precision: int32(t.Precision), Scale: int32(t.Scale)}, nil
	case expr.KindString:
		return arrow.BinaryTypes.String, nil
	case expr.KindBinary:
		return arrow.BinaryTypes.Binary, nil
	case expr.KindDate32:
		return arrow.FixedWidthTypes.Date32, nil
	case expr.KindDate64:
		return arrow.FixedWidthTypes.Date64, nil
	case expr.KindTimestamp:
		return &arrow.TimestampType{Unit: arrowUnit(t.Unit)}, nil
	case expr.KindDuration:
		return &arrow.DurationType{Unit: arrowUnit(t.Unit)}, nil
	case expr.KindTime:
		if t.Unit <= expr.Milli {
			return &arrow.Time32Type{Unit: arrowUnit(t.Unit)}, nil
		}
		return &arrow.Time64Type{Unit: arrowUnit(t.Unit)}, nil
	case expr.KindList:
		if t.Elem != nil {
			elem, err := arrowType(*t.Elem)
			if err == nil {
				return arrow.ListOf(elem), nil
			}
		}
	}
	return nil, store.Errorf(store.CodeInvalidInput, "an expression of type %s cannot be a column", t)
}

func arrowUnit(u expr.TimeUnit) arrow.TimeUnit {
	switch u {
	case expr.Milli:
		return arrow.Millisecond
	case expr.Micro:
		return arrow.Microsecond
	case expr.Nano:
		return arrow.Nanosecond
	}
	return arrow.Second
}

// compileFilter parses and compiles a boolean filter. An empty filter is
// "true" (no SQL).
func compileFilter(filter string, r expr.Resolver) (expr.Compiled, error) {
	if filter == "" {
		return expr.Compiled{}, nil
	}
	e, err := expr.Parse(filter)
	if err != nil {
		return expr.Compiled{}, err
	}
	return expr.CompileFilter(e, r)
}

// compileValue parses and compiles a value expression.
func compileValue(src string, r expr.Resolver) (expr.Compiled, error) {
	e, err := expr.Parse(src)
	if err != nil {
		return expr.Compiled{}, err
	}
	return expr.Compile(e, r)
}
