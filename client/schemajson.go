package client

import (
	"fmt"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
)

// jsonSchema, jsonField and jsonType read and write the API's JSON form of
// an Arrow schema (JsonArrowSchema). Besides the spec's members, jsonType
// carries the unit of temporal types and the time zone of timestamps,
// which lancens sends and other servers may leave out.
type jsonSchema struct {
	Fields   []jsonField       `json:"fields"`
	Metadata map[string]string `json:"metadata,omitempty"`
}

type jsonField struct {
	Name     string            `json:"name"`
	Nullable bool              `json:"nullable"`
	Type     jsonType          `json:"type"`
	Metadata map[string]string `json:"metadata,omitempty"`
}

type jsonType struct {
	Type     string      `json:"type"`
	Fields   []jsonField `json:"fields,omitempty"`
	Length   *int64      `json:"length,omitempty"`
	Unit     string      `json:"unit,omitempty"`
	Timezone string      `json:"timezone,omitempty"`
}

// arrow returns the Arrow schema s describes. Returns an Internal (18)
// error for a type it does not know, since the server sent it.
func (s *jsonSchema) arrow() (*arrow.Schema, error) {
	fields, err := arrowFields(s.Fields)
	if err != nil {
		return nil, errorf(CodeInternal, "the server's table schema: %v", err)
	}
	var md *arrow.Metadata
	if len(s.Metadata) > 0 {
		m := arrow.MetadataFrom(s.Metadata)
		md = &m
	}
	return arrow.NewSchema(fields, md), nil
}

func arrowFields(fields []jsonField) ([]arrow.Field, error) {
	out := make([]arrow.Field, len(fields))
	for i, f := range fields {
		dt, err := f.Type.arrow()
		if err != nil {
			return nil, fmt.Errorf("field %q: %w", f.Name, err)
		}
		out[i] = arrow.Field{Name: f.Name, Type: dt, Nullable: f.Nullable}
		if len(f.Metadata) > 0 {
			out[i].Metadata = arrow.MetadataFrom(f.Metadata)
		}
	}
	return out, nil
}

var timeUnits = map[string]arrow.TimeUnit{"s": arrow.Second, "ms": arrow.Millisecond, "us": arrow.Microsecond, "ns": arrow.Nanosecond}

var simpleTypes = map[string]arrow.DataType{
	"null": arrow.Null, "bool": arrow.FixedWidthTypes.Boolean, "boolean": arrow.FixedWidthTypes.Boolean,
	"int8": arrow.PrimitiveTypes.Int8, "int16": arrow.PrimitiveTypes.Int16, "int32": arrow.PrimitiveTypes.Int32, "int64": arrow.PrimitiveTypes.Int64,
	"uint8": arrow.PrimitiveTypes.Uint8, "uint16": arrow.PrimitiveTypes.Uint16, "uint32": arrow.PrimitiveTypes.Uint32, "uint64": arrow.PrimitiveTypes.Uint64,
	"float16": arrow.FixedWidthTypes.Float16, "float32": arrow.PrimitiveTypes.Float32, "float64": arrow.PrimitiveTypes.Float64,
	"utf8": arrow.BinaryTypes.String, "large_utf8": arrow.BinaryTypes.LargeString,
	"binary": arrow.BinaryTypes.Binary, "large_binary": arrow.BinaryTypes.LargeBinary,
	"date32": arrow.FixedWidthTypes.Date32, "date64": arrow.FixedWidthTypes.Date64,
}

var decimalTypes = map[string]arrow.Type{"decimal32": arrow.DECIMAL32, "decimal64": arrow.DECIMAL64, "decimal128": arrow.DECIMAL128, "decimal256": arrow.DECIMAL256}

// arrow returns the Arrow type t names. Temporal types without a unit get
// Lance's defaults (microseconds; milliseconds for time32).
func (t jsonType) arrow() (arrow.DataType, error) {
	name := strings.ToLower(t.Type)
	if dt, ok := simpleTypes[name]; ok {
		return dt, nil
	}
	unit := func(def arrow.TimeUnit) (arrow.TimeUnit, error) {
		if t.Unit == "" {
			return def, nil
		}
		u, ok := timeUnits[t.Unit]
		if !ok {
			return 0, fmt.Errorf("unknown time unit %q", t.Unit)
		}
		return u, nil
	}
	length := int64(-1)
	if t.Length != nil {
		length = *t.Length
	}
	children, err := arrowFields(t.Fields)
	if err != nil {
		return nil, err
	}
	switch name {
	case "timestamp", "time32", "time64", "duration":
		def := arrow.Microsecond
		if name == "time32" {
			def = arrow.Millisecond
		}
		u, err := unit(def)
		if err != nil {
			return nil, err
		}
		switch name {
		case "timestamp":
			return &arrow.TimestampType{Unit: u, TimeZone: t.Timezone}, nil
		case "time32":
			return &arrow.Time32Type{Unit: u}, nil
		case "time64":
			return &arrow.Time64Type{Unit: u}, nil
		}
		return &arrow.DurationType{Unit: u}, nil
	case "fixed_size_binary":
		if length <= 0 {
			return nil, fmt.Errorf("fixed_size_binary without a positive length")
		}
		return &arrow.FixedSizeBinaryType{ByteWidth: int(length)}, nil
	case "list", "large_list", "fixed_size_list", "map":
		if len(children) != 1 {
			return nil, fmt.Errorf("%s needs one child field, has %d", name, len(children))
		}
		switch name {
		case "list":
			return arrow.ListOfField(children[0]), nil
		case "large_list":
			return arrow.LargeListOfField(children[0]), nil
		case "map":
			st, ok := children[0].Type.(*arrow.StructType)
			if !ok || st.NumFields() != 2 {
				return nil, fmt.Errorf("map entries must be a struct of key and value")
			}
			return arrow.MapOfFields(st.Field(0), st.Field(1)), nil
		}
		if length <= 0 {
			return nil, fmt.Errorf("fixed_size_list without a positive length")
		}
		return arrow.FixedSizeListOfField(int32(length), children[0]), nil
	case "struct":
		return arrow.StructOf(children...), nil
	}
	if id, ok := decimalTypes[name]; ok {
		if length < 0 {
			return nil, fmt.Errorf("%s without length (precision*1000 + scale)", name)
		}
		return arrow.NewDecimalType(id, int32(length/1000), int32(length%1000))
	}
	return nil, fmt.Errorf("unknown data type %q", t.Type)
}

var unitNames = map[arrow.TimeUnit]string{arrow.Second: "s", arrow.Millisecond: "ms", arrow.Microsecond: "us", arrow.Nanosecond: "ns"}

// typeJSON returns the JSON form of an Arrow type, as alter_columns takes
// it.
func typeJSON(dt arrow.DataType) jsonType {
	n := func(v int64) *int64 { return &v }
	children := func(fields ...arrow.Field) []jsonField {
		out := make([]jsonField, len(fields))
		for i, f := range fields {
			out[i] = jsonField{Name: f.Name, Nullable: f.Nullable, Type: typeJSON(f.Type)}
		}
		return out
	}
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
		return jsonType{Type: fmt.Sprintf("decimal%d", t.BitWidth()), Length: n(int64(t.GetPrecision())*1000 + int64(t.GetScale()))}
	case *arrow.FixedSizeBinaryType:
		return jsonType{Type: "fixed_size_binary", Length: n(int64(t.ByteWidth))}
	case *arrow.FixedSizeListType:
		return jsonType{Type: "fixed_size_list", Fields: children(t.ElemField()), Length: n(int64(t.Len()))}
	case *arrow.MapType:
		return jsonType{Type: "map", Fields: children(arrow.Field{Name: "entries", Type: t.Elem()})}
	case *arrow.ListType:
		return jsonType{Type: "list", Fields: children(t.ElemField())}
	case *arrow.LargeListType:
		return jsonType{Type: "large_list", Fields: children(t.ElemField())}
	case *arrow.StructType:
		return jsonType{Type: "struct", Fields: children(t.Fields()...)}
	}
	for name, simple := range simpleTypes {
		if name != "boolean" && arrow.TypeEqual(dt, simple) {
			return jsonType{Type: name}
		}
	}
	return jsonType{Type: dt.Name()}
}
