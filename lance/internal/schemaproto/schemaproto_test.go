package schemaproto

import (
	"errors"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"google.golang.org/protobuf/encoding/prototext"
	"google.golang.org/protobuf/proto"

	"github.com/lancens/lancens/lance/internal/pb/schemapb"
	"github.com/lancens/lancens/lance/schema"
)

// lanceWrote is the schema of a format 2.0 file the LanceDB Node SDK 0.39
// (Lance 12.0.0) wrote for id int64 not null, s string, v
// fixed_size_list<float,4>, st struct<a int32, b string>, l list<int16>
// and b bool: ToProto must write the same messages.
const lanceWrote = `
fields: {name: "id" parent_id: -1 logical_type: "int64" encoding: PLAIN}
fields: {name: "s" id: 1 parent_id: -1 logical_type: "string" nullable: true encoding: VAR_BINARY}
fields: {name: "v" id: 2 parent_id: -1 logical_type: "fixed_size_list:float:4" nullable: true encoding: PLAIN}
fields: {name: "st" id: 3 parent_id: -1 logical_type: "struct" nullable: true}
fields: {name: "a" id: 4 parent_id: 3 logical_type: "int32" nullable: true encoding: PLAIN}
fields: {name: "b" id: 5 parent_id: 3 logical_type: "string" nullable: true encoding: VAR_BINARY}
fields: {name: "l" id: 6 parent_id: -1 logical_type: "list" nullable: true encoding: PLAIN}
fields: {name: "item" id: 7 parent_id: 6 logical_type: "int16" nullable: true encoding: PLAIN}
fields: {name: "b" id: 8 parent_id: -1 logical_type: "bool" nullable: true encoding: PLAIN}
`

func TestMatchesLance(t *testing.T) {
	var want schemapb.Schema
	if err := prototext.Unmarshal([]byte(lanceWrote), &want); err != nil {
		t.Fatal(err)
	}
	as := arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64},
		{Name: "s", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "v", Type: arrow.FixedSizeListOf(4, arrow.PrimitiveTypes.Float32), Nullable: true},
		{Name: "st", Type: arrow.StructOf(arrow.Field{Name: "a", Type: arrow.PrimitiveTypes.Int32, Nullable: true}, arrow.Field{Name: "b", Type: arrow.BinaryTypes.String, Nullable: true}), Nullable: true},
		{Name: "l", Type: arrow.ListOf(arrow.PrimitiveTypes.Int16), Nullable: true},
		{Name: "b", Type: arrow.FixedWidthTypes.Boolean, Nullable: true},
	}, nil)
	s, err := schema.FromArrow(as)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.AssignIDs(0); err != nil {
		t.Fatal(err)
	}
	fields, md := ToProto(s)
	got := &schemapb.Schema{Fields: fields, Metadata: md}
	if !proto.Equal(got, &want) {
		t.Errorf("ToProto =\n%s\nwant\n%s", prototext.Format(got), prototext.Format(&want))
	}
	back, err := FromProto(want.Fields, want.Metadata)
	if err != nil {
		t.Fatal(err)
	}
	backArrow, err := back.ToArrow()
	if err != nil || !backArrow.Equal(as) {
		t.Errorf("FromProto → Arrow = %v, %v; want %v", backArrow, err, as)
	}
}

func TestRoundTripKeepsMetadata(t *testing.T) {
	s := &schema.Schema{
		Metadata: map[string]string{"k": "v"},
		Fields: []*schema.Field{
			{Name: "e", ID: 3, LogicalType: "fixed_size_binary:16", Nullable: true, UnenforcedPrimaryKey: true,
				Metadata: map[string]string{schema.ExtensionNameKey: "arrow.uuid", "x": "\x00\xff"}},
			{Name: "j", ID: 5, LogicalType: "json", Nullable: true},
		},
	}
	fields, md := ToProto(s)
	if fields[0].ExtensionName != "arrow.uuid" || fields[0].Encoding != schemapb.Encoding_PLAIN || fields[1].Encoding != schemapb.Encoding_VAR_BINARY {
		t.Errorf("ToProto fields = %v", fields)
	}
	back, err := FromProto(fields, md)
	if err != nil {
		t.Fatal(err)
	}
	if back.Metadata["k"] != "v" || back.Fields[0].Metadata["x"] != "\x00\xff" || !back.Fields[0].UnenforcedPrimaryKey ||
		back.Fields[0].ExtensionName() != "arrow.uuid" || back.Fields[1].ID != 5 {
		t.Errorf("FromProto = %+v %+v", back.Fields[0], back.Fields[1])
	}
}

func TestFromProtoRefuses(t *testing.T) {
	f := func(name string, id, parent int32) *schemapb.Field {
		return &schemapb.Field{Name: name, Id: id, ParentId: parent, LogicalType: "struct"}
	}
	cases := map[string][]*schemapb.Field{
		"unknown parent":  {f("a", 0, -1), f("b", 1, 7)},
		"parent after":    {f("b", 1, 0), f("a", 0, -1)},
		"own parent":      {f("a", 0, 0)},
		"repeated id":     {f("a", 0, -1), f("b", 0, -1)},
		"negative id":     {f("a", -4, -1)},
		"negative parent": {f("a", 0, -2)},
	}
	var deep []*schemapb.Field
	for i := int32(0); i <= schema.MaxDepth; i++ {
		deep = append(deep, f("x", i, i-1))
	}
	cases["too deep"] = deep
	for name, fields := range cases {
		if _, err := FromProto(fields, nil); !errors.Is(err, schema.ErrInvalid) {
			t.Errorf("%s: FromProto = %v, want ErrInvalid", name, err)
		}
	}
}
