package schema

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
)

// Extension type names Lance gives a meaning to.
const (
	// BFloat16Extension marks fixed_size_binary(2) items as bfloat16.
	BFloat16Extension = "lance.bfloat16"
	// JSONExtension marks large_binary values as Lance's binary JSON.
	JSONExtension = "lance.json"
)

// simpleTypes maps the logical types spelled by one word (or a fixed
// unit) to their Arrow types.
var simpleTypes = map[string]arrow.DataType{
	"null":         arrow.Null,
	"bool":         arrow.FixedWidthTypes.Boolean,
	"int8":         arrow.PrimitiveTypes.Int8,
	"uint8":        arrow.PrimitiveTypes.Uint8,
	"int16":        arrow.PrimitiveTypes.Int16,
	"uint16":       arrow.PrimitiveTypes.Uint16,
	"int32":        arrow.PrimitiveTypes.Int32,
	"uint32":       arrow.PrimitiveTypes.Uint32,
	"int64":        arrow.PrimitiveTypes.Int64,
	"uint64":       arrow.PrimitiveTypes.Uint64,
	"halffloat":    arrow.FixedWidthTypes.Float16,
	"float":        arrow.PrimitiveTypes.Float32,
	"double":       arrow.PrimitiveTypes.Float64,
	"string":       arrow.BinaryTypes.String,
	"binary":       arrow.BinaryTypes.Binary,
	"large_string": arrow.BinaryTypes.LargeString,
	"large_binary": arrow.BinaryTypes.LargeBinary,
	"json":         arrow.BinaryTypes.LargeBinary,
	"date32:day":   arrow.FixedWidthTypes.Date32,
	"date64:ms":    arrow.FixedWidthTypes.Date64,
	"time32:s":     arrow.FixedWidthTypes.Time32s,
	"time32:ms":    arrow.FixedWidthTypes.Time32ms,
	"time64:us":    arrow.FixedWidthTypes.Time64us,
	"time64:ns":    arrow.FixedWidthTypes.Time64ns,
	"duration:s":   arrow.FixedWidthTypes.Duration_s,
	"duration:ms":  arrow.FixedWidthTypes.Duration_ms,
	"duration:us":  arrow.FixedWidthTypes.Duration_us,
	"duration:ns":  arrow.FixedWidthTypes.Duration_ns,
}

var unitNames = [...]string{arrow.Second: "s", arrow.Millisecond: "ms", arrow.Microsecond: "us", arrow.Nanosecond: "ns"}

func parseUnit(s string) (arrow.TimeUnit, bool) {
	for u, name := range unitNames {
		if name == s {
			return arrow.TimeUnit(u), true
		}
	}
	return 0, false
}

// LogicalType returns Lance's spelling of the Arrow type dt (of an
// extension type, its storage type's). Lists are
// "list"/"large_list" (".struct" appended for lists of structs) and
// structs "struct": their children are separate fields. It returns an
// error wrapping ErrUnsupportedType for a type Lance cannot store (maps,
// unions, views, run-end encoded, intervals, 32- and 64-bit decimals) or
// cannot spell (a time zone containing ":").
func LogicalType(dt arrow.DataType) (string, error) {
	if ext, ok := dt.(arrow.ExtensionType); ok {
		dt = ext.StorageType()
	}
	for name, t := range simpleTypes {
		if name != "json" && arrow.TypeEqual(t, dt) {
			return name, nil
		}
	}
	switch t := dt.(type) {
	case *arrow.Decimal128Type:
		return fmt.Sprintf("decimal:128:%d:%d", t.Precision, t.Scale), nil
	case *arrow.Decimal256Type:
		return fmt.Sprintf("decimal:256:%d:%d", t.Precision, t.Scale), nil
	case *arrow.TimestampType:
		if strings.Contains(t.TimeZone, ":") {
			return "", fmt.Errorf("%w: Lance cannot spell the time zone %q (it contains \":\"); use a zone name such as \"UTC\" or \"Europe/Paris\"", ErrUnsupportedType, t.TimeZone)
		}
		tz := t.TimeZone
		if tz == "" {
			tz = "-"
		}
		return "timestamp:" + unitNames[t.Unit] + ":" + tz, nil
	case *arrow.StructType:
		return "struct", nil
	case *arrow.ListType:
		if t.Elem().ID() == arrow.STRUCT {
			return "list.struct", nil
		}
		return "list", nil
	case *arrow.LargeListType:
		if t.Elem().ID() == arrow.STRUCT {
			return "large_list.struct", nil
		}
		return "large_list", nil
	case *arrow.FixedSizeListType:
		item := t.ElemField()
		if metaValue(item.Metadata, ExtensionNameKey) == BFloat16Extension || isExtension(item.Type, BFloat16Extension) {
			return fmt.Sprintf("fixed_size_list:%s:%d", BFloat16Extension, t.Len()), nil
		}
		inner, err := LogicalType(item.Type)
		if err != nil {
			return "", err
		}
		if !isLeafSpelling(inner) {
			return "", fmt.Errorf("%w: fixed_size_list of %s", ErrUnsupportedType, inner)
		}
		return fmt.Sprintf("fixed_size_list:%s:%d", inner, t.Len()), nil
	case *arrow.FixedSizeBinaryType:
		return fmt.Sprintf("fixed_size_binary:%d", t.ByteWidth), nil
	case *arrow.DictionaryType:
		value, err := LogicalType(t.ValueType)
		if err != nil {
			return "", err
		}
		index, err := LogicalType(t.IndexType)
		if err != nil {
			return "", err
		}
		return fmt.Sprintf("dict:%s:%s:false", value, index), nil
	}
	return "", fmt.Errorf("%w: Lance cannot store Arrow type %s", ErrUnsupportedType, dt)
}

// metaValue returns the value of key in md, or "".
func metaValue(md arrow.Metadata, key string) string {
	if i := md.FindKey(key); i >= 0 {
		return md.Values()[i]
	}
	return ""
}

func isExtension(dt arrow.DataType, name string) bool {
	ext, ok := dt.(arrow.ExtensionType)
	return ok && ext.ExtensionName() == name
}

// isLeafSpelling reports whether a logical type names a type without child
// fields (so it may be a fixed-size list's item).
func isLeafSpelling(lt string) bool {
	switch lt {
	case "struct", "list", "list.struct", "large_list", "large_list.struct":
		return false
	}
	return !strings.HasPrefix(lt, "dict:")
}

// leafType returns the Arrow type of a logical type that has no child
// fields, or an error wrapping ErrUnsupportedType.
func leafType(lt string) (arrow.DataType, error) {
	if t, ok := simpleTypes[lt]; ok {
		return t, nil
	}
	unsupported := func() (arrow.DataType, error) {
		return nil, fmt.Errorf("%w: unknown logical type %q", ErrUnsupportedType, lt)
	}
	kind, rest, _ := strings.Cut(lt, ":")
	switch kind {
	case "timestamp":
		unitName, tz, ok := strings.Cut(rest, ":")
		unit, known := parseUnit(unitName)
		if !ok || !known || tz == "" {
			return unsupported()
		}
		if tz == "-" {
			tz = ""
		}
		return &arrow.TimestampType{Unit: unit, TimeZone: tz}, nil
	case "fixed_size_list":
		i := strings.LastIndexByte(rest, ':')
		if i < 0 {
			return unsupported()
		}
		n, err := strconv.ParseInt(rest[i+1:], 10, 32)
		if err != nil || n <= 0 {
			return unsupported()
		}
		inner := rest[:i]
		if inner == BFloat16Extension {
			item := arrow.Field{Name: "item", Type: &arrow.FixedSizeBinaryType{ByteWidth: 2}, Nullable: true,
				Metadata: arrow.NewMetadata([]string{ExtensionNameKey, ExtensionMetadataKey}, []string{BFloat16Extension, ""})}
			return arrow.FixedSizeListOfField(int32(n), item), nil
		}
		if !isLeafSpelling(inner) {
			return unsupported()
		}
		it, err := leafType(inner)
		if err != nil {
			return nil, err
		}
		return arrow.FixedSizeListOfField(int32(n), arrow.Field{Name: "item", Type: it, Nullable: true}), nil
	case "fixed_size_binary":
		n, err := strconv.ParseInt(rest, 10, 32)
		if err != nil || n <= 0 {
			return unsupported()
		}
		return &arrow.FixedSizeBinaryType{ByteWidth: int(n)}, nil
	case "decimal":
		parts := strings.Split(rest, ":")
		if len(parts) != 3 {
			return unsupported()
		}
		p, err1 := strconv.ParseUint(parts[1], 10, 8)
		s, err2 := strconv.ParseInt(parts[2], 10, 8)
		if err1 != nil || err2 != nil {
			return unsupported()
		}
		switch parts[0] {
		case "128":
			return &arrow.Decimal128Type{Precision: int32(p), Scale: int32(s)}, nil
		case "256":
			return &arrow.Decimal256Type{Precision: int32(p), Scale: int32(s)}, nil
		}
		return unsupported()
	case "dict":
		parts := strings.Split(rest, ":")
		if len(parts) != 3 {
			return unsupported()
		}
		value, err := leafType(parts[0])
		if err != nil {
			return nil, err
		}
		index, err := leafType(parts[1])
		if err != nil {
			return nil, err
		}
		if !arrow.IsInteger(index.ID()) {
			return unsupported()
		}
		return &arrow.DictionaryType{IndexType: index, ValueType: value, Ordered: parts[2] == "true"}, nil
	}
	return unsupported()
}
