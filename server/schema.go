package server

import (
	"fmt"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/lancens/lancens/store"
)

// jsonSchema, jsonField and jsonType are the JsonArrowSchema of the spec.
// jsonType also carries, as extra members clients ignore, what the spec's
// type names leave out: the unit of timestamps, times and durations and the
// time zone of timestamps, so that a schema read back is exact.
type jsonSchema struct {
	Fields   []jsonField        `json:"fields"`
	Metadata *map[string]string `json:"metadata,omitempty"`
}

type jsonField struct {
	Name     string             `json:"name"`
	Nullable bool               `json:"nullable"`
	Type     jsonType           `json:"type"`
	Metadata *map[string]string `json:"metadata,omitempty"`
}

type jsonType struct {
	Type     string      `json:"type"`
	Fields   []jsonField `json:"fields,omitempty"`
	Length   *int64      `json:"length,omitempty"`
	Unit     string      `json:"unit,omitempty"`
	Timezone string      `json:"timezone,omitempty"`
}

// schemaJSON returns the JSON form of an Arrow schema.
func schemaJSON(s *arrow.Schema) *jsonSchema {
	out := &jsonSchema{Fields: fieldsJSON(s.Fields())}
	if md := s.Metadata(); md.Len() > 0 {
		m := md.ToMap()
		out.Metadata = &m
	}
	return out
}

func fieldsJSON(fields []arrow.Field) []jsonField {
	out := make([]jsonField, len(fields))
	for i, f := range fields {
		out[i] = jsonField{Name: f.Name, Nullable: f.Nullable, Type: typeJSON(f.Type)}
		if f.Metadata.Len() > 0 {
			m := f.Metadata.ToMap()
			out[i].Metadata = &m
		}
	}
	return out
}

var unitNames = map[arrow.TimeUnit]string{arrow.Second: "s", arrow.Millisecond: "ms", arrow.Microsecond: "us", arrow.Nanosecond: "ns"}

// typeJSON names an Arrow type as the spec does (decimals encode precision
// and scale in length as p*1000+s; nested types list their children).
func typeJSON(dt arrow.DataType) jsonType {
	length := func(n int64) *int64 { return &n }
	switch t := dt.(type) {
	case *arrow.TimestampType:
		return jsonType{Type: "timestamp", Unit: unitNames[t.Unit], Timezone: t.TimeZone}
	case *arrow.Time32Type:
		return jsonType{Type: "time32", Unit: unitNames[t.Unit]}
	case *arrow.Time64Type:
		return jsonType{Type: "time64", Unit: unitNames[t.Unit]}
	case *arrow.DurationType:
		return jsonType{Type: "duration", Unit: unitNames[t.Unit]}
	case arrow.DecimalType:
		// arrow-go names decimal128 "decimal"; the spec says decimal128.
		return jsonType{Type: fmt.Sprintf("decimal%d", t.BitWidth()), Length: length(int64(t.GetPrecision())*1000 + int64(t.GetScale()))}
	case *arrow.FixedSizeBinaryType:
		return jsonType{Type: "fixed_size_binary", Length: length(int64(t.ByteWidth))}
	case *arrow.FixedSizeListType:
		return jsonType{Type: "fixed_size_list", Fields: fieldsJSON([]arrow.Field{t.ElemField()}), Length: length(int64(t.Len()))}
	case *arrow.MapType:
		return jsonType{Type: "map", Fields: fieldsJSON([]arrow.Field{{Name: "entries", Type: t.Elem()}})}
	case *arrow.ListType:
		return jsonType{Type: "list", Fields: fieldsJSON([]arrow.Field{t.ElemField()})}
	case *arrow.LargeListType:
		return jsonType{Type: "large_list", Fields: fieldsJSON([]arrow.Field{t.ElemField()})}
	case *arrow.StructType:
		return jsonType{Type: "struct", Fields: fieldsJSON(t.Fields())}
	}
	switch dt.ID() {
	case arrow.BOOL:
		return jsonType{Type: "bool"}
	case arrow.STRING:
		return jsonType{Type: "utf8"}
	case arrow.LARGE_STRING:
		return jsonType{Type: "large_utf8"}
	case arrow.BINARY:
		return jsonType{Type: "binary"}
	case arrow.LARGE_BINARY:
		return jsonType{Type: "large_binary"}
	case arrow.FLOAT16:
		return jsonType{Type: "float16"}
	case arrow.FLOAT32:
		return jsonType{Type: "float32"}
	case arrow.FLOAT64:
		return jsonType{Type: "float64"}
	}
	return jsonType{Type: dt.Name()}
}

// parseTypeJSON reads a type in the spec's JSON form, or just its name, as
// alter_columns sends it. Returns InvalidInput (13) for what it cannot read.
func parseTypeJSON(v any) (arrow.DataType, error) {
	switch t := v.(type) {
	case string:
		return parseTypeJSON(map[string]any{"type": t})
	case map[string]any:
		name, _ := t["type"].(string)
		unit, err := parseUnit(t["unit"])
		if err != nil {
			return nil, err
		}
		tz, _ := t["timezone"].(string)
		var length int64 = -1
		if l, ok := t["length"].(float64); ok {
			length = int64(l)
		}
		children, err := parseFieldsJSON(t["fields"])
		if err != nil {
			return nil, err
		}
		return typeFromName(strings.ToLower(name), unit, tz, length, children)
	}
	return nil, invalidInput("a data type must be a type name or an object with a type member")
}

func parseUnit(v any) (*arrow.TimeUnit, error) {
	s, _ := v.(string)
	if s == "" {
		return nil, nil
	}
	for u, name := range unitNames {
		if name == s {
			return &u, nil
		}
	}
	return nil, invalidInput("unknown time unit %q", s)
}

func parseFieldsJSON(v any) ([]arrow.Field, error) {
	list, _ := v.([]any)
	out := make([]arrow.Field, 0, len(list))
	for _, item := range list {
		m, ok := item.(map[string]any)
		if !ok {
			return nil, invalidInput("a field must be an object")
		}
		dt, err := parseTypeJSON(m["type"])
		if err != nil {
			return nil, err
		}
		name, _ := m["name"].(string)
		nullable, _ := m["nullable"].(bool)
		out = append(out, arrow.Field{Name: name, Type: dt, Nullable: nullable})
	}
	return out, nil
}

func typeFromName(name string, unit *arrow.TimeUnit, tz string, length int64, children []arrow.Field) (arrow.DataType, error) {
	unitOr := func(def arrow.TimeUnit) arrow.TimeUnit {
		if unit == nil {
			return def
		}
		return *unit
	}
	one := func() (arrow.Field, error) {
		if len(children) != 1 {
			return arrow.Field{}, invalidInput("type %s needs exactly one child field", name)
		}
		return children[0], nil
	}
	switch name {
	case "null":
		return arrow.Null, nil
	case "bool", "boolean":
		return arrow.FixedWidthTypes.Boolean, nil
	case "int8":
		return arrow.PrimitiveTypes.Int8, nil
	case "int16":
		return arrow.PrimitiveTypes.Int16, nil
	case "int32":
		return arrow.PrimitiveTypes.Int32, nil
	case "int64":
		return arrow.PrimitiveTypes.Int64, nil
	case "uint8":
		return arrow.PrimitiveTypes.Uint8, nil
	case "uint16":
		return arrow.PrimitiveTypes.Uint16, nil
	case "uint32":
		return arrow.PrimitiveTypes.Uint32, nil
	case "uint64":
		return arrow.PrimitiveTypes.Uint64, nil
	case "float16":
		return arrow.FixedWidthTypes.Float16, nil
	case "float32":
		return arrow.PrimitiveTypes.Float32, nil
	case "float64":
		return arrow.PrimitiveTypes.Float64, nil
	case "utf8":
		return arrow.BinaryTypes.String, nil
	case "large_utf8":
		return arrow.BinaryTypes.LargeString, nil
	case "binary":
		return arrow.BinaryTypes.Binary, nil
	case "large_binary":
		return arrow.BinaryTypes.LargeBinary, nil
	case "date32":
		return arrow.FixedWidthTypes.Date32, nil
	case "date64":
		return arrow.FixedWidthTypes.Date64, nil
	case "timestamp":
		return &arrow.TimestampType{Unit: unitOr(arrow.Microsecond), TimeZone: tz}, nil
	case "time32":
		return &arrow.Time32Type{Unit: unitOr(arrow.Millisecond)}, nil
	case "time64":
		return &arrow.Time64Type{Unit: unitOr(arrow.Microsecond)}, nil
	case "duration":
		return &arrow.DurationType{Unit: unitOr(arrow.Microsecond)}, nil
	case "fixed_size_binary":
		if length <= 0 {
			return nil, invalidInput("fixed_size_binary needs a positive length")
		}
		return &arrow.FixedSizeBinaryType{ByteWidth: int(length)}, nil
	case "decimal32", "decimal64", "decimal128", "decimal256":
		if length < 0 {
			return nil, invalidInput("%s needs length = precision*1000 + scale", name)
		}
		p := int32((length + 128) / 1000)
		s := int32(length - int64(p)*1000)
		return arrow.NewDecimalType(map[string]arrow.Type{"decimal32": arrow.DECIMAL32, "decimal64": arrow.DECIMAL64,
			"decimal128": arrow.DECIMAL128, "decimal256": arrow.DECIMAL256}[name], p, s)
	case "list", "large_list", "fixed_size_list":
		item, err := one()
		if err != nil {
			return nil, err
		}
		switch name {
		case "list":
			return arrow.ListOfField(item), nil
		case "large_list":
			return arrow.LargeListOfField(item), nil
		}
		if length <= 0 {
			return nil, invalidInput("fixed_size_list needs a positive length")
		}
		return arrow.FixedSizeListOfField(int32(length), item), nil
	case "struct":
		return arrow.StructOf(children...), nil
	case "map":
		entries, err := one()
		if err != nil {
			return nil, err
		}
		st, ok := entries.Type.(*arrow.StructType)
		if !ok || st.NumFields() != 2 {
			return nil, invalidInput("map entries must be a struct of key and value")
		}
		return arrow.MapOfFields(st.Field(0), st.Field(1)), nil
	}
	return nil, store.Errorf(store.CodeInvalidInput, "unknown data type %q", name)
}
