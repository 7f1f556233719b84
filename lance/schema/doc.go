// Package schema is the Lance schema in Go: a tree of fields, each with a
// dataset-wide integer id, and its conversion to and from Arrow schemas.
//
// Lance stores a schema as a flat list of fields in pre-order (a parent
// before its children), each naming its parent by id (-1 at the top). Data
// files name their columns by these ids, and a dataset never reuses an id
// once given out, even after the field is dropped; so ids are assigned from
// a "next id" the dataset keeps (AssignIDs), in pre-order, to fields that
// have none yet (ID < 0).
//
// A field's type is its logical type: a string in Lance's own spelling of
// the Arrow type ("int64", "float", "halffloat", "string", "large_binary",
// "timestamp:us:UTC", "timestamp:ns:-", "fixed_size_list:float:768",
// "list", "large_list.struct", "struct", "dict:string:int32:false", …).
// Structs and lists carry their child fields as Children; a fixed-size
// list carries its item type inside its logical type and has no child
// field, as in Lance. Field and schema metadata are kept as strings; an
// Arrow extension type is stored as its storage type plus the metadata keys
// "ARROW:extension:name" and "ARROW:extension:metadata".
//
// Errors wrap ErrUnsupportedType (an Arrow type, or a logical type, Lance
// has no spelling for), ErrInvalid (a malformed schema: duplicate names or
// ids, a list without exactly one child, a bad field path) or
// ErrFieldNotFound (a projection naming a field the schema lacks); match
// them with errors.Is.
//
// The conversion to and from the protocol buffer messages of the format
// (manifests and data files share them) is in lance/internal/schemaproto.
package schema
