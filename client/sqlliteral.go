package client

import (
	"fmt"
	"math"
	"reflect"
	"strconv"
	"strings"
	"time"
)

// SQLLiteral returns v written as a literal of Lance's SQL expression
// language, safe to place in a filter or update expression: nil as NULL,
// booleans, numbers of any Go numeric type, strings (quoted, quotes
// doubled), time.Time as a TIMESTAMP in UTC, pointers as what they point
// to, and slices and arrays as [a, b, …]. Returns an InvalidInput (13)
// error for other types and for NaN or infinite floats.
func SQLLiteral(v any) (string, error) {
	if v == nil {
		return "NULL", nil
	}
	switch x := v.(type) {
	case string:
		return "'" + strings.ReplaceAll(x, "'", "''") + "'", nil
	case time.Time:
		return "TIMESTAMP '" + x.UTC().Format("2006-01-02 15:04:05.999999999") + "'", nil
	}
	rv := reflect.ValueOf(v)
	switch {
	case rv.Kind() == reflect.Bool:
		return strings.ToUpper(strconv.FormatBool(rv.Bool())), nil
	case rv.CanInt():
		return strconv.FormatInt(rv.Int(), 10), nil
	case rv.CanUint():
		return strconv.FormatUint(rv.Uint(), 10), nil
	case rv.CanFloat():
		f := rv.Float()
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return "", invalid("%v has no SQL literal", f)
		}
		return strconv.FormatFloat(f, 'g', -1, 64), nil
	case rv.Kind() == reflect.String:
		return SQLLiteral(rv.String())
	case rv.Kind() == reflect.Pointer:
		if rv.IsNil() {
			return "NULL", nil
		}
		return SQLLiteral(rv.Elem().Interface())
	case rv.Kind() == reflect.Slice || rv.Kind() == reflect.Array:
		items := make([]string, rv.Len())
		for i := range items {
			lit, err := SQLLiteral(rv.Index(i).Interface())
			if err != nil {
				return "", err
			}
			items[i] = lit
		}
		return "[" + strings.Join(items, ", ") + "]", nil
	}
	return "", invalid("a %s value has no SQL literal", fmt.Sprintf("%T", v))
}
