package sqlite

import (
	"testing"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/lancens/lancens/expr"
)

// TestExprTypesMatchEvaluator checks that the row store describes stored
// Arrow types to the expression compiler, and types computed values, as
// the expression evaluator over Arrow does (expr.TypeOf, expr.ArrowType):
// the two must agree for the evaluator to compute what the SQL computes.
func TestExprTypesMatchEvaluator(t *testing.T) {
	types := []arrow.DataType{
		arrow.Null, arrow.FixedWidthTypes.Boolean,
		arrow.PrimitiveTypes.Int8, arrow.PrimitiveTypes.Int16, arrow.PrimitiveTypes.Int32, arrow.PrimitiveTypes.Int64,
		arrow.PrimitiveTypes.Uint8, arrow.PrimitiveTypes.Uint16, arrow.PrimitiveTypes.Uint32, arrow.PrimitiveTypes.Uint64,
		arrow.FixedWidthTypes.Float16, arrow.PrimitiveTypes.Float32, arrow.PrimitiveTypes.Float64,
		arrow.BinaryTypes.String, arrow.BinaryTypes.LargeString, arrow.BinaryTypes.Binary, arrow.BinaryTypes.LargeBinary,
		&arrow.FixedSizeBinaryType{ByteWidth: 4}, arrow.FixedWidthTypes.Date32, arrow.FixedWidthTypes.Date64,
		arrow.FixedWidthTypes.Time32s, arrow.FixedWidthTypes.Time32ms, arrow.FixedWidthTypes.Time64us, arrow.FixedWidthTypes.Time64ns,
		&arrow.TimestampType{Unit: arrow.Second}, &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"},
		arrow.FixedWidthTypes.Duration_ms, arrow.FixedWidthTypes.Duration_ns,
		&arrow.Decimal32Type{Precision: 9, Scale: 2}, &arrow.Decimal64Type{Precision: 18, Scale: 4},
		&arrow.Decimal128Type{Precision: 38, Scale: 10}, &arrow.Decimal256Type{Precision: 76, Scale: 0},
		arrow.ListOf(arrow.PrimitiveTypes.Int32), arrow.LargeListOf(arrow.BinaryTypes.String),
		arrow.FixedSizeListOf(2, arrow.PrimitiveTypes.Int64), arrow.FixedSizeListOf(8, arrow.PrimitiveTypes.Float32),
		arrow.FixedSizeListOf(8, arrow.FixedWidthTypes.Float16), arrow.FixedSizeListOf(8, arrow.PrimitiveTypes.Uint8),
		arrow.StructOf(arrow.Field{Name: "x", Type: arrow.PrimitiveTypes.Int32}),
		arrow.MapOf(arrow.BinaryTypes.String, arrow.PrimitiveTypes.Int32),
		arrow.ListOf(arrow.ListOf(arrow.FixedWidthTypes.Date32)),
	}
	for _, dt := range types {
		got, want := expr.TypeOf(dt), exprType(dt)
		if got.String() != want.String() || got.Unit != want.Unit || got.Kind != want.Kind {
			t.Errorf("%s: evaluator type %v (unit %d), row store %v (unit %d)", dt, got, got.Unit, want, want.Unit)
		}
		a, errA := expr.ArrowType(want)
		b, errB := arrowType(want)
		if (errA == nil) != (errB == nil) || (errA == nil && !arrow.TypeEqual(a, b)) {
			t.Errorf("%v: evaluator column type %v (%v), row store %v (%v)", want, a, errA, b, errB)
		}
	}
}
