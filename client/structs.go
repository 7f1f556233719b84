package client

import (
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
)

// structField is one exported field of a Go struct as a column.
type structField struct {
	index []int // for reflect.Value.FieldByIndex
	field arrow.Field
}

var structFieldCache sync.Map // reflect.Type → []structField or error

var (
	timeType     = reflect.TypeFor[time.Time]()
	durationType = reflect.TypeFor[time.Duration]()
)

// structFields returns the columns of struct type t: one per exported field,
// named by its arrow tag or else by the field name, in field order. Fields
// of embedded structs without a tag are promoted, as encoding/json does.
// The tag is `arrow:"name,option,..."`; the options are fixed_size=N (a
// slice is a fixed-size list of N items), nullable (null allowed; pointers
// are always nullable), and "-" as the name leaves the field out. Returns
// an InvalidInput (13) error for a field type with no Arrow column type.
func structFields(t reflect.Type) ([]structField, error) {
	if cached, ok := structFieldCache.Load(t); ok {
		if err, isErr := cached.(error); isErr {
			return nil, err
		}
		return cached.([]structField), nil
	}
	fields, err := readStructFields(t)
	if err != nil {
		structFieldCache.Store(t, err)
		return nil, err
	}
	structFieldCache.Store(t, fields)
	return fields, nil
}

func readStructFields(t reflect.Type) ([]structField, error) {
	var out []structField
	seen := map[string]bool{}
	for _, f := range reflect.VisibleFields(t) {
		tag, hasTag := f.Tag.Lookup("arrow")
		if !f.IsExported() || tag == "-" {
			continue
		}
		if f.Anonymous && !hasTag && f.Type.Kind() == reflect.Struct && f.Type != timeType {
			continue // its fields are visible themselves
		}
		if len(f.Index) > 1 && !promoted(t, f.Index) {
			continue // inside a tagged embedded struct, or behind a pointer
		}
		name, opts, _ := strings.Cut(tag, ",")
		if name == "" {
			name = f.Name
		}
		fixed, nullable := 0, false
		for _, o := range strings.Split(opts, ",") {
			switch k, v, _ := strings.Cut(o, "="); k {
			case "":
			case "fixed_size":
				n, err := strconv.Atoi(v)
				if err != nil || n <= 0 {
					return nil, invalid("field %s of %s: fixed_size must be a positive number, not %q", f.Name, t, v)
				}
				fixed = n
			case "nullable":
				nullable = true
			default:
				return nil, invalid("field %s of %s: unknown arrow tag option %q", f.Name, t, o)
			}
		}
		dt, ptr, err := arrowTypeOf(f.Type, fixed)
		if err != nil {
			return nil, invalid("field %s of %s: %v", f.Name, t, err)
		}
		if seen[name] {
			return nil, invalid("%s has two fields named %q", t, name)
		}
		seen[name] = true
		out = append(out, structField{index: f.Index, field: arrow.Field{Name: name, Type: dt, Nullable: nullable || ptr}})
	}
	return out, nil
}

// promoted reports whether the field at index is reached through embedded
// struct values without tags, so that it is a column of t.
func promoted(t reflect.Type, index []int) bool {
	for _, i := range index[:len(index)-1] {
		f := t.Field(i)
		if _, tagged := f.Tag.Lookup("arrow"); tagged || !f.Anonymous || f.Type.Kind() != reflect.Struct {
			return false
		}
		t = f.Type
	}
	return true
}

// arrowTypeOf returns the Arrow type of Go type t and whether t is a
// pointer (so that the column is nullable). fixed > 0 makes a slice a
// fixed-size list of that many items.
func arrowTypeOf(t reflect.Type, fixed int) (arrow.DataType, bool, error) {
	ptr := t.Kind() == reflect.Pointer
	if ptr {
		t = t.Elem()
	}
	if fixed > 0 && t.Kind() != reflect.Slice {
		return nil, false, fmt.Errorf("fixed_size applies to slices, not %s", t)
	}
	switch t {
	case timeType:
		return &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}, ptr, nil
	case durationType:
		return &arrow.DurationType{Unit: arrow.Nanosecond}, ptr, nil
	}
	switch t.Kind() {
	case reflect.Bool:
		return arrow.FixedWidthTypes.Boolean, ptr, nil
	case reflect.Int8:
		return arrow.PrimitiveTypes.Int8, ptr, nil
	case reflect.Int16:
		return arrow.PrimitiveTypes.Int16, ptr, nil
	case reflect.Int32:
		return arrow.PrimitiveTypes.Int32, ptr, nil
	case reflect.Int, reflect.Int64:
		return arrow.PrimitiveTypes.Int64, ptr, nil
	case reflect.Uint8:
		return arrow.PrimitiveTypes.Uint8, ptr, nil
	case reflect.Uint16:
		return arrow.PrimitiveTypes.Uint16, ptr, nil
	case reflect.Uint32:
		return arrow.PrimitiveTypes.Uint32, ptr, nil
	case reflect.Uint, reflect.Uint64:
		return arrow.PrimitiveTypes.Uint64, ptr, nil
	case reflect.Float32:
		return arrow.PrimitiveTypes.Float32, ptr, nil
	case reflect.Float64:
		return arrow.PrimitiveTypes.Float64, ptr, nil
	case reflect.String:
		return arrow.BinaryTypes.String, ptr, nil
	case reflect.Slice, reflect.Array:
		if t.Kind() == reflect.Slice && t.Elem().Kind() == reflect.Uint8 && fixed == 0 {
			return arrow.BinaryTypes.Binary, ptr, nil
		}
		elem, _, err := arrowTypeOf(t.Elem(), 0)
		if err != nil {
			return nil, false, err
		}
		// List items are nullable whatever the Go type, as Arrow's
		// defaults have them.
		item := arrow.Field{Name: "item", Type: elem, Nullable: true}
		switch {
		case t.Kind() == reflect.Array:
			return arrow.FixedSizeListOfField(int32(t.Len()), item), ptr, nil
		case fixed > 0:
			return arrow.FixedSizeListOfField(int32(fixed), item), ptr, nil
		}
		return arrow.ListOfField(item), ptr, nil
	case reflect.Struct:
		fields, err := structFields(t)
		if err != nil {
			return nil, false, err
		}
		children := make([]arrow.Field, len(fields))
		for i, f := range fields {
			children[i] = f.field
		}
		return arrow.StructOf(children...), ptr, nil
	}
	return nil, false, fmt.Errorf("type %s has no Arrow column type", t)
}

// SchemaOf returns the Arrow schema of the rows Structs makes from values
// of struct type T (see Structs for the mapping). Returns an InvalidInput
// (13) error if T is not a struct or has a field with no Arrow type.
func SchemaOf[T any]() (*arrow.Schema, error) {
	t := reflect.TypeFor[T]()
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct {
		return nil, invalid("%s is not a struct type", t)
	}
	fields, err := structFields(t)
	if err != nil {
		return nil, err
	}
	cols := make([]arrow.Field, len(fields))
	for i, f := range fields {
		cols[i] = f.field
	}
	return arrow.NewSchema(cols, nil), nil
}
