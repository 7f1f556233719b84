package schema

import (
	"errors"
	"fmt"
	"iter"
	"maps"
	"strings"
)

var (
	// ErrUnsupportedType reports a type Lance cannot store or spell.
	ErrUnsupportedType = errors.New("unsupported type")
	// ErrInvalid reports a malformed schema or field path.
	ErrInvalid = errors.New("invalid schema")
	// ErrFieldNotFound reports a field a schema does not have.
	ErrFieldNotFound = errors.New("field not found")
)

// MaxDepth is the deepest nesting of fields accepted (a top-level field
// has depth 1): deeper schemas are refused as invalid rather than walked.
const MaxDepth = 64

// Metadata keys with a meaning to Lance.
const (
	// ExtensionNameKey and ExtensionMetadataKey carry an Arrow extension
	// type on its storage field.
	ExtensionNameKey     = "ARROW:extension:name"
	ExtensionMetadataKey = "ARROW:extension:metadata"
	// UnenforcedPrimaryKey marks a field as part of the table's primary key
	// ("true", "1" or "yes").
	UnenforcedPrimaryKey = "lance-schema:unenforced-primary-key"
)

// Schema is a Lance schema: its top-level fields, in order, and its
// metadata.
type Schema struct {
	Fields   []*Field
	Metadata map[string]string
}

// Field is one node of a schema.
type Field struct {
	Name string
	// ID is the field's id within its dataset; -1 until assigned.
	ID int32
	// LogicalType is the field's type in Lance's spelling (see the package
	// documentation).
	LogicalType string
	Nullable    bool
	Metadata    map[string]string
	// UnenforcedPrimaryKey marks the field as (part of) the table's primary
	// key, which Lance records but does not enforce.
	UnenforcedPrimaryKey bool
	// Children are a struct's fields, or a list's one item field.
	Children []*Field
}

// ExtensionName returns the name of the field's Arrow extension type, or
// "" when it has none.
func (f *Field) ExtensionName() string { return f.Metadata[ExtensionNameKey] }

// IsStruct reports whether the field is a struct.
func (f *Field) IsStruct() bool { return f.LogicalType == "struct" }

// IsList reports whether the field is a list or a large list (of any
// item type).
func (f *Field) IsList() bool {
	switch f.LogicalType {
	case "list", "list.struct", "large_list", "large_list.struct":
		return true
	}
	return false
}

// IsLeaf reports whether the field has no child fields (fixed-size lists
// are leaves: their items are part of their type).
func (f *Field) IsLeaf() bool { return len(f.Children) == 0 }

// Clone returns a deep copy of f.
func (f *Field) Clone() *Field {
	c := *f
	c.Metadata = maps.Clone(f.Metadata)
	c.Children = make([]*Field, len(f.Children))
	for i, ch := range f.Children {
		c.Children[i] = ch.Clone()
	}
	if f.Children == nil {
		c.Children = nil
	}
	return &c
}

// Clone returns a deep copy of s.
func (s *Schema) Clone() *Schema {
	c := &Schema{Metadata: maps.Clone(s.Metadata), Fields: make([]*Field, len(s.Fields))}
	for i, f := range s.Fields {
		c.Fields[i] = f.Clone()
	}
	return c
}

// All yields every field of s in pre-order (each field before its
// children), with the id of its parent (-1 for top-level fields).
func (s *Schema) All() iter.Seq2[*Field, int32] {
	return func(yield func(*Field, int32) bool) {
		var walk func(f *Field, parent int32) bool
		walk = func(f *Field, parent int32) bool {
			if !yield(f, parent) {
				return false
			}
			for _, c := range f.Children {
				if !walk(c, f.ID) {
					return false
				}
			}
			return true
		}
		for _, f := range s.Fields {
			if !walk(f, -1) {
				return
			}
		}
	}
}

// MaxID returns the largest field id in s, or -1 when it has none.
func (s *Schema) MaxID() int32 {
	max := int32(-1)
	for f := range s.All() {
		if f.ID > max {
			max = f.ID
		}
	}
	return max
}

// AssignIDs gives every field without an id (ID < 0) a new one, in
// pre-order, starting at next or just above the largest id already in s,
// whichever is greater. It returns the next id still free, for the
// dataset to keep. Ids above MaxInt32 are refused as invalid.
func (s *Schema) AssignIDs(next int32) (int32, error) {
	if m := s.MaxID(); m >= next {
		next = m + 1
	}
	if next < 0 {
		return 0, fmt.Errorf("%w: field ids are exhausted", ErrInvalid)
	}
	for f := range s.All() {
		if f.ID >= 0 {
			continue
		}
		if next < 0 { // wrapped past MaxInt32
			return 0, fmt.Errorf("%w: field ids are exhausted", ErrInvalid)
		}
		f.ID = next
		next++
	}
	return next, nil
}

// FieldByID returns the field of s with id, or nil.
func (s *Schema) FieldByID(id int32) *Field {
	for f := range s.All() {
		if f.ID == id {
			return f
		}
	}
	return nil
}

// Field returns the field at path (see ParsePath: "a", "a.b", "`a.b`.c"),
// or an error wrapping ErrFieldNotFound, or ErrInvalid for a malformed
// path.
func (s *Schema) Field(path string) (*Field, error) {
	names, err := ParsePath(path)
	if err != nil {
		return nil, err
	}
	fields := s.Fields
	var found *Field
	for _, name := range names {
		found = nil
		for _, f := range fields {
			if f.Name == name {
				found = f
				break
			}
		}
		if found == nil {
			return nil, fmt.Errorf("%w: %s", ErrFieldNotFound, path)
		}
		fields = found.Children
	}
	return found, nil
}

// Path returns the path of the field with id (its ancestors' names and its
// own, quoted as FormatPath does), or an error wrapping ErrFieldNotFound.
func (s *Schema) Path(id int32) (string, error) {
	var names []string
	var find func(fields []*Field) bool
	find = func(fields []*Field) bool {
		for _, f := range fields {
			names = append(names, f.Name)
			if f.ID == id || find(f.Children) {
				return true
			}
			names = names[:len(names)-1]
		}
		return false
	}
	if !find(s.Fields) {
		return "", fmt.Errorf("%w: id %d", ErrFieldNotFound, id)
	}
	return FormatPath(names...), nil
}

// Validate checks what Lance requires of a dataset's schema: every field
// has a name and an id, ids are unique, names are unique among siblings,
// top-level names have no ".", lists have exactly one child and only
// structs and lists have children, every logical type is one Lance knows,
// and nesting is at most MaxDepth deep. It returns an error wrapping
// ErrInvalid or ErrUnsupportedType.
func (s *Schema) Validate() error {
	ids := map[int32]bool{}
	for _, f := range s.Fields {
		if strings.Contains(f.Name, ".") {
			return fmt.Errorf("%w: top-level field %q has a \".\" in its name", ErrInvalid, f.Name)
		}
	}
	var check func(fields []*Field, depth int) error
	check = func(fields []*Field, depth int) error {
		if depth > MaxDepth {
			return fmt.Errorf("%w: fields nest more than %d deep", ErrInvalid, MaxDepth)
		}
		names := map[string]bool{}
		for _, f := range fields {
			if f.Name == "" {
				return fmt.Errorf("%w: a field has no name", ErrInvalid)
			}
			if names[f.Name] {
				return fmt.Errorf("%w: duplicate field name %q", ErrInvalid, f.Name)
			}
			names[f.Name] = true
			if f.ID < 0 {
				return fmt.Errorf("%w: field %q has no id", ErrInvalid, f.Name)
			}
			if ids[f.ID] {
				return fmt.Errorf("%w: duplicate field id %d", ErrInvalid, f.ID)
			}
			ids[f.ID] = true
			if err := checkShape(f); err != nil {
				return err
			}
			if err := check(f.Children, depth+1); err != nil {
				return err
			}
		}
		return nil
	}
	return check(s.Fields, 1)
}

// checkShape checks that f's children fit its logical type, and that the
// logical type is one Lance knows.
func checkShape(f *Field) error {
	switch {
	case f.IsList():
		if len(f.Children) != 1 {
			return fmt.Errorf("%w: list field %q has %d children, not 1", ErrInvalid, f.Name, len(f.Children))
		}
		if strings.HasSuffix(f.LogicalType, ".struct") != f.Children[0].IsStruct() {
			return fmt.Errorf("%w: list field %q is %q but its item is %q", ErrInvalid, f.Name, f.LogicalType, f.Children[0].LogicalType)
		}
	case f.IsStruct():
	default:
		if len(f.Children) != 0 {
			return fmt.Errorf("%w: field %q of type %q has children", ErrInvalid, f.Name, f.LogicalType)
		}
		if _, err := leafType(f.LogicalType); err != nil {
			return fmt.Errorf("field %q: %w", f.Name, err)
		}
	}
	return nil
}
