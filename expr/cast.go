package expr

import (
	"fmt"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/lancens/lancens/store"
)

// CastTypeName returns the name, in this language, of the type dt a
// column can be cast to (as in CAST(x AS name)); ok is false for a type
// CAST has no name for.
func CastTypeName(dt arrow.DataType) (name string, ok bool) {
	switch dt.ID() {
	case arrow.BOOL:
		return "BOOLEAN", true
	case arrow.INT8:
		return "TINYINT", true
	case arrow.INT16:
		return "SMALLINT", true
	case arrow.INT32:
		return "INT", true
	case arrow.INT64:
		return "BIGINT", true
	case arrow.FLOAT16, arrow.FLOAT32:
		return "FLOAT", true
	case arrow.FLOAT64:
		return "DOUBLE", true
	case arrow.STRING, arrow.LARGE_STRING:
		return "STRING", true
	case arrow.DATE32:
		return "DATE", true
	}
	if d, ok := dt.(arrow.DecimalType); ok {
		return fmt.Sprintf("DECIMAL(%d,%d)", d.GetPrecision(), d.GetScale()), true
	}
	return "", false
}

// Castable reports whether a column of type from may be changed to type
// to (AlterColumns): among numbers, anything to string, string to
// numbers and dates, date to string.
func Castable(from, to arrow.DataType) bool {
	numeric := func(dt arrow.DataType) bool {
		return arrow.IsInteger(dt.ID()) || arrow.IsFloating(dt.ID()) || arrow.IsDecimal(dt.ID()) || dt.ID() == arrow.BOOL
	}
	switch {
	case numeric(from) && numeric(to):
		return true
	case to.ID() == arrow.STRING || to.ID() == arrow.LARGE_STRING:
		return numeric(from) || from.ID() == arrow.STRING || from.ID() == arrow.LARGE_STRING || from.ID() == arrow.DATE32
	case from.ID() == arrow.STRING || from.ID() == arrow.LARGE_STRING:
		return numeric(to) || to.ID() == arrow.DATE32
	}
	return false
}

// QuotePath writes a field path (a column, or a field of a struct column,
// name by name) in this language, every name quoted with backticks.
func QuotePath(path []string) string {
	parts := make([]string, len(path))
	for i, p := range path {
		parts[i] = "`" + strings.ReplaceAll(p, "`", "``") + "`"
	}
	return strings.Join(parts, ".")
}

// CheckAssignable returns InvalidInput (13) unless a value of type got may
// be stored in field f (named path in messages): null only where f is
// nullable; otherwise the same kind (an integer or decimal also into a
// float), with the same unit, or precision and scale; never a vector,
// struct or map value.
func CheckAssignable(path string, f arrow.Field, got Type) error {
	want := TypeOf(f.Type)
	if got.Kind == KindNull {
		if !f.Nullable {
			return store.Errorf(store.CodeInvalidInput, "column %s is not nullable", path)
		}
		return nil
	}
	ok := got.Kind == want.Kind
	switch want.Kind {
	case KindFloat:
		ok = ok || got.Kind == KindInt || got.Kind == KindDecimal
	case KindTimestamp, KindTime, KindDuration:
		ok = ok && got.Unit == want.Unit
	case KindDecimal:
		ok = ok && got.Scale == want.Scale && got.Precision == want.Precision
	case KindVector, KindStruct, KindMap:
		ok = false
	}
	if !ok {
		return store.Errorf(store.CodeInvalidInput, "cannot set column %s of type %s to a value of type %s", path, f.Type, got)
	}
	return nil
}
