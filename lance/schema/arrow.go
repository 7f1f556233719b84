package schema

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
)

// FromArrow returns the Lance schema of an Arrow schema, with every field's
// ID -1 (call AssignIDs). Field and schema metadata carry over, and an
// extension type becomes its storage type with the extension's name and
// metadata in the field's metadata. It returns an error wrapping
// ErrUnsupportedType for a type Lance cannot store, or ErrInvalid for a
// schema Lance refuses (see Validate: duplicate names, "." in a top-level
// name, nesting deeper than MaxDepth).
func FromArrow(as *arrow.Schema) (*Schema, error) {
	s := &Schema{Metadata: metadataMap(as.Metadata())}
	for _, af := range as.Fields() {
		f, err := fieldFromArrow(af, 1)
		if err != nil {
			return nil, err
		}
		s.Fields = append(s.Fields, f)
	}
	probe := s.Clone()
	if _, err := probe.AssignIDs(0); err != nil {
		return nil, err
	}
	if err := probe.Validate(); err != nil {
		return nil, err
	}
	return s, nil
}

// FieldFromArrow returns the Lance field of an Arrow field (and of its
// children), with IDs -1. It returns the errors FromArrow does.
func FieldFromArrow(af arrow.Field) (*Field, error) { return fieldFromArrow(af, 1) }

func fieldFromArrow(af arrow.Field, depth int) (*Field, error) {
	if depth > MaxDepth {
		return nil, fmt.Errorf("%w: fields nest more than %d deep", ErrInvalid, MaxDepth)
	}
	f := &Field{Name: af.Name, ID: -1, Nullable: af.Nullable, Metadata: metadataMap(af.Metadata)}
	dt := af.Type
	if ext, ok := dt.(arrow.ExtensionType); ok {
		if f.Metadata == nil {
			f.Metadata = map[string]string{}
		}
		f.Metadata[ExtensionNameKey] = ext.ExtensionName()
		f.Metadata[ExtensionMetadataKey] = ext.Serialize()
		dt = ext.StorageType()
	}
	switch name := f.ExtensionName(); {
	case name == JSONExtension && dt.ID() == arrow.LARGE_BINARY:
		f.LogicalType = "json"
	case name == "arrow.json":
		return nil, fmt.Errorf("%w: field %q is Arrow JSON text, which Lance stores converted to its binary JSON (lance.json on large_binary): convert it first", ErrUnsupportedType, af.Name)
	default:
		lt, err := LogicalType(dt)
		if err != nil {
			return nil, fmt.Errorf("field %q: %w", af.Name, err)
		}
		f.LogicalType = lt
	}
	switch v := strings.ToLower(f.Metadata[UnenforcedPrimaryKey]); v {
	case "true", "1", "yes":
		f.UnenforcedPrimaryKey = true
	}
	var children []arrow.Field
	switch t := dt.(type) {
	case *arrow.StructType:
		children = t.Fields()
	case *arrow.ListType:
		children = []arrow.Field{t.ElemField()}
	case *arrow.LargeListType:
		children = []arrow.Field{t.ElemField()}
	}
	for _, c := range children {
		cf, err := fieldFromArrow(c, depth+1)
		if err != nil {
			return nil, err
		}
		f.Children = append(f.Children, cf)
	}
	return f, nil
}

// ToArrow returns the Arrow schema of s. It returns an error wrapping
// ErrUnsupportedType or ErrInvalid when a field's logical type is unknown
// or does not fit its children.
func (s *Schema) ToArrow() (*arrow.Schema, error) {
	fields := make([]arrow.Field, len(s.Fields))
	for i, f := range s.Fields {
		af, err := f.arrowField(1)
		if err != nil {
			return nil, err
		}
		fields[i] = af
	}
	md := arrowMetadata(s.Metadata)
	return arrow.NewSchema(fields, &md), nil
}

// ArrowField returns the Arrow field of f, with its metadata (an extension
// type stays its storage type, its name in the metadata). It returns the
// errors ToArrow does.
func (f *Field) ArrowField() (arrow.Field, error) { return f.arrowField(1) }

// ArrowType returns the Arrow type of f. It returns the errors ToArrow
// does.
func (f *Field) ArrowType() (arrow.DataType, error) { return f.arrowType(1) }

func (f *Field) arrowField(depth int) (arrow.Field, error) {
	dt, err := f.arrowType(depth)
	if err != nil {
		return arrow.Field{}, err
	}
	md := f.Metadata
	if f.LogicalType == "json" && md[ExtensionNameKey] == "" {
		md = maps.Clone(md)
		if md == nil {
			md = map[string]string{}
		}
		md[ExtensionNameKey] = JSONExtension
	}
	return arrow.Field{Name: f.Name, Type: dt, Nullable: f.Nullable, Metadata: arrowMetadata(md)}, nil
}

func (f *Field) arrowType(depth int) (arrow.DataType, error) {
	if depth > MaxDepth {
		return nil, fmt.Errorf("%w: fields nest more than %d deep", ErrInvalid, MaxDepth)
	}
	if err := checkShape(f); err != nil {
		return nil, err
	}
	switch {
	case f.IsStruct():
		children := make([]arrow.Field, len(f.Children))
		for i, c := range f.Children {
			af, err := c.arrowField(depth + 1)
			if err != nil {
				return nil, err
			}
			children[i] = af
		}
		return arrow.StructOf(children...), nil
	case f.IsList():
		item, err := f.Children[0].arrowField(depth + 1)
		if err != nil {
			return nil, err
		}
		if strings.HasPrefix(f.LogicalType, "large_list") {
			return arrow.LargeListOfField(item), nil
		}
		return arrow.ListOfField(item), nil
	}
	return leafType(f.LogicalType)
}

// metadataMap returns md as a map, or nil when it is empty.
func metadataMap(md arrow.Metadata) map[string]string {
	if md.Len() == 0 {
		return nil
	}
	m := make(map[string]string, md.Len())
	for i, k := range md.Keys() {
		m[k] = md.Values()[i]
	}
	return m
}

// arrowMetadata returns m as Arrow metadata, its keys sorted.
func arrowMetadata(m map[string]string) arrow.Metadata {
	if len(m) == 0 {
		return arrow.Metadata{}
	}
	keys := slices.Sorted(maps.Keys(m))
	values := make([]string, len(keys))
	for i, k := range keys {
		values[i] = m[k]
	}
	return arrow.NewMetadata(keys, values)
}
