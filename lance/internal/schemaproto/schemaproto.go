// Package schemaproto converts Lance schemas between their Go form
// (lance/schema) and the protocol buffer messages the format stores them
// in: the flat, pre-ordered list of lance.file.Field messages plus schema
// metadata that both data files (in a FileDescriptor) and manifests hold.
// It is internal so that lance/'s public API speaks Go types only; the
// packages that read and write those messages (lance/file, lance/table)
// share it.
package schemaproto

import (
	"fmt"

	"github.com/lancens/lancens/lance/internal/pb/schemapb"
	"github.com/lancens/lancens/lance/schema"
)

// ToProto returns s as Lance writes it: its fields in pre-order, each with
// its parent's id (-1 at the top), and its metadata as bytes. As Lance
// does, it leaves Field.type at its zero value, sets the legacy encoding
// (plain for fixed-width types and lists, var-binary for strings and
// binaries, dictionary for dictionaries) and copies the extension name out
// of the metadata.
func ToProto(s *schema.Schema) ([]*schemapb.Field, map[string][]byte) {
	var fields []*schemapb.Field
	for f, parent := range s.All() {
		pf := &schemapb.Field{
			Name:                 f.Name,
			Id:                   f.ID,
			ParentId:             parent,
			LogicalType:          f.LogicalType,
			Nullable:             f.Nullable,
			Encoding:             legacyEncoding(f.LogicalType),
			ExtensionName:        f.ExtensionName(),
			Metadata:             bytesMap(f.Metadata),
			UnenforcedPrimaryKey: f.UnenforcedPrimaryKey,
		}
		fields = append(fields, pf)
	}
	return fields, bytesMap(s.Metadata)
}

// legacyEncoding returns the format 0.1 encoding Lance still records for
// a logical type.
func legacyEncoding(lt string) schemapb.Encoding {
	switch lt {
	case "string", "binary", "large_string", "large_binary", "json":
		return schemapb.Encoding_VAR_BINARY
	case "struct", "null":
		return schemapb.Encoding_NONE
	case "list", "list.struct", "large_list", "large_list.struct":
		return schemapb.Encoding_PLAIN
	}
	if len(lt) > 5 && lt[:5] == "dict:" {
		return schemapb.Encoding_DICTIONARY
	}
	return schemapb.Encoding_PLAIN
}

// FromProto returns the schema of fields (in pre-order, as Lance writes
// them) and metadata. A field's extension_name, when set, is put back in
// its metadata. It checks the structure, not the types (a manifest may
// hold types this library cannot read, and still be listed): it returns
// an error wrapping schema.ErrInvalid when a field's parent is not an
// earlier field, an id repeats or is negative, or fields nest deeper than
// schema.MaxDepth.
func FromProto(fields []*schemapb.Field, metadata map[string][]byte) (*schema.Schema, error) {
	s := &schema.Schema{Metadata: stringMap(metadata)}
	type placed struct {
		f     *schema.Field
		depth int
	}
	byID := make(map[int32]placed, len(fields))
	for _, pf := range fields {
		if pf.GetId() < 0 {
			return nil, fmt.Errorf("%w: field %q has the negative id %d", schema.ErrInvalid, pf.GetName(), pf.GetId())
		}
		if _, dup := byID[pf.GetId()]; dup {
			return nil, fmt.Errorf("%w: the field id %d repeats", schema.ErrInvalid, pf.GetId())
		}
		f := &schema.Field{
			Name:                 pf.GetName(),
			ID:                   pf.GetId(),
			LogicalType:          pf.GetLogicalType(),
			Nullable:             pf.GetNullable(),
			Metadata:             stringMap(pf.GetMetadata()),
			UnenforcedPrimaryKey: pf.GetUnenforcedPrimaryKey(),
		}
		if ext := pf.GetExtensionName(); ext != "" {
			if f.Metadata == nil {
				f.Metadata = map[string]string{}
			}
			f.Metadata[schema.ExtensionNameKey] = ext
		}
		depth := 1
		if pf.GetParentId() == -1 {
			s.Fields = append(s.Fields, f)
		} else {
			parent, ok := byID[pf.GetParentId()]
			if !ok {
				return nil, fmt.Errorf("%w: field %q names the parent id %d, which no earlier field has", schema.ErrInvalid, pf.GetName(), pf.GetParentId())
			}
			depth = parent.depth + 1
			if depth > schema.MaxDepth {
				return nil, fmt.Errorf("%w: fields nest more than %d deep", schema.ErrInvalid, schema.MaxDepth)
			}
			parent.f.Children = append(parent.f.Children, f)
		}
		byID[f.ID] = placed{f, depth}
	}
	return s, nil
}

func bytesMap(m map[string]string) map[string][]byte {
	if len(m) == 0 {
		return nil
	}
	out := make(map[string][]byte, len(m))
	for k, v := range m {
		out[k] = []byte(v)
	}
	return out
}

func stringMap(m map[string][]byte) map[string]string {
	if len(m) == 0 {
		return nil
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = string(v)
	}
	return out
}
