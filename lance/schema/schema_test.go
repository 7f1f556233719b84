package schema_test

import (
	"errors"
	"reflect"
	"slices"
	"strconv"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/lancens/lancens/lance/schema"
)

// TestLogicalTypes checks Lance's spelling of every Arrow type it stores,
// and that the spelling converts back to the same type.
func TestLogicalTypes(t *testing.T) {
	item := func(dt arrow.DataType) arrow.Field { return arrow.Field{Name: "item", Type: dt, Nullable: true} }
	cases := []struct {
		dt   arrow.DataType
		want string
	}{
		{arrow.Null, "null"},
		{arrow.FixedWidthTypes.Boolean, "bool"},
		{arrow.PrimitiveTypes.Int8, "int8"},
		{arrow.PrimitiveTypes.Uint8, "uint8"},
		{arrow.PrimitiveTypes.Int16, "int16"},
		{arrow.PrimitiveTypes.Uint16, "uint16"},
		{arrow.PrimitiveTypes.Int32, "int32"},
		{arrow.PrimitiveTypes.Uint32, "uint32"},
		{arrow.PrimitiveTypes.Int64, "int64"},
		{arrow.PrimitiveTypes.Uint64, "uint64"},
		{arrow.FixedWidthTypes.Float16, "halffloat"},
		{arrow.PrimitiveTypes.Float32, "float"},
		{arrow.PrimitiveTypes.Float64, "double"},
		{arrow.BinaryTypes.String, "string"},
		{arrow.BinaryTypes.LargeString, "large_string"},
		{arrow.BinaryTypes.Binary, "binary"},
		{arrow.BinaryTypes.LargeBinary, "large_binary"},
		{arrow.FixedWidthTypes.Date32, "date32:day"},
		{arrow.FixedWidthTypes.Date64, "date64:ms"},
		{arrow.FixedWidthTypes.Time32ms, "time32:ms"},
		{arrow.FixedWidthTypes.Time64ns, "time64:ns"},
		{arrow.FixedWidthTypes.Duration_us, "duration:us"},
		{&arrow.TimestampType{Unit: arrow.Second}, "timestamp:s:-"},
		{&arrow.TimestampType{Unit: arrow.Millisecond, TimeZone: "UTC"}, "timestamp:ms:UTC"},
		{&arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "America/New_York"}, "timestamp:us:America/New_York"},
		{&arrow.TimestampType{Unit: arrow.Nanosecond}, "timestamp:ns:-"},
		{&arrow.Decimal128Type{Precision: 38, Scale: 10}, "decimal:128:38:10"},
		{&arrow.Decimal256Type{Precision: 76, Scale: -2}, "decimal:256:76:-2"},
		{&arrow.FixedSizeBinaryType{ByteWidth: 16}, "fixed_size_binary:16"},
		{arrow.FixedSizeListOfField(1536, item(arrow.PrimitiveTypes.Float32)), "fixed_size_list:float:1536"},
		{arrow.FixedSizeListOfField(768, item(arrow.FixedWidthTypes.Float16)), "fixed_size_list:halffloat:768"},
		{arrow.FixedSizeListOfField(32, item(arrow.PrimitiveTypes.Uint8)), "fixed_size_list:uint8:32"},
		{arrow.FixedSizeListOfField(3, item(&arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"})), "fixed_size_list:timestamp:us:UTC:3"},
		{arrow.FixedSizeListOfField(2, item(arrow.FixedSizeListOfField(4, item(arrow.PrimitiveTypes.Int16)))), "fixed_size_list:fixed_size_list:int16:4:2"},
		{&arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int32, ValueType: arrow.BinaryTypes.String}, "dict:string:int32:false"},
	}
	for _, c := range cases {
		got, err := schema.LogicalType(c.dt)
		if err != nil || got != c.want {
			t.Errorf("LogicalType(%s) = %q, %v; want %q", c.dt, got, err, c.want)
			continue
		}
		f := &schema.Field{Name: "x", LogicalType: got, Nullable: true}
		back, err := f.ArrowType()
		if err != nil || !arrow.TypeEqual(back, c.dt) {
			t.Errorf("ArrowType(%q) = %v, %v; want %s", got, back, err, c.dt)
		}
	}
}

func TestUnsupportedTypes(t *testing.T) {
	for _, dt := range []arrow.DataType{
		arrow.MapOf(arrow.BinaryTypes.String, arrow.PrimitiveTypes.Int32),
		arrow.BinaryTypes.StringView,
		arrow.FixedWidthTypes.MonthInterval,
		arrow.SparseUnionOf([]arrow.Field{{Name: "a", Type: arrow.PrimitiveTypes.Int8}}, []arrow.UnionTypeCode{0}),
		arrow.RunEndEncodedOf(arrow.PrimitiveTypes.Int32, arrow.PrimitiveTypes.Int64),
		&arrow.TimestampType{Unit: arrow.Second, TimeZone: "+05:00"},
		arrow.FixedSizeListOf(2, arrow.ListOf(arrow.PrimitiveTypes.Int8)),
	} {
		if _, err := schema.FromArrow(arrow.NewSchema([]arrow.Field{{Name: "x", Type: dt}}, nil)); !errors.Is(err, schema.ErrUnsupportedType) {
			t.Errorf("FromArrow(%s): %v, want ErrUnsupportedType", dt, err)
		}
	}
	for _, lt := range []string{"", "int128", "timestamp:us", "timestamp:fortnights:-", "fixed_size_list:float", "fixed_size_list:float:0",
		"fixed_size_list:float:-3", "fixed_size_list:list:3", "fixed_size_binary:x", "decimal:64:3:2", "dict:string:float:false", "map"} {
		f := &schema.Field{Name: "x", LogicalType: lt}
		if _, err := f.ArrowType(); !errors.Is(err, schema.ErrUnsupportedType) {
			t.Errorf("ArrowType(%q): %v, want ErrUnsupportedType", lt, err)
		}
	}
}

// nested is an Arrow schema with every kind of nesting and metadata.
func nested() *arrow.Schema {
	vec := arrow.FixedSizeListOfField(4, arrow.Field{Name: "item", Type: arrow.PrimitiveTypes.Float32, Nullable: true})
	point := arrow.StructOf(arrow.Field{Name: "x", Type: arrow.PrimitiveTypes.Float64}, arrow.Field{Name: "y", Type: arrow.PrimitiveTypes.Float64, Nullable: true})
	md := arrow.NewMetadata([]string{"purpose"}, []string{"tests"})
	return arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64, Metadata: arrow.NewMetadata([]string{schema.UnenforcedPrimaryKey}, []string{"true"})},
		{Name: "vec", Type: vec, Nullable: true},
		{Name: "tags", Type: arrow.ListOf(arrow.BinaryTypes.String), Nullable: true},
		{Name: "s", Type: arrow.StructOf(
			arrow.Field{Name: "a", Type: arrow.PrimitiveTypes.Int32, Nullable: true},
			arrow.Field{Name: "pts", Type: arrow.LargeListOf(point), Nullable: true},
		), Nullable: true},
		{Name: "u", Type: newTagType(), Nullable: true},
	}, &md)
}

func TestArrowRoundTrip(t *testing.T) {
	s, err := schema.FromArrow(nested())
	if err != nil {
		t.Fatal(err)
	}
	next, err := s.AssignIDs(0)
	if err != nil || next != 11 {
		t.Fatalf("AssignIDs = %d, %v; want 11", next, err)
	}
	if err := s.Validate(); err != nil {
		t.Fatal(err)
	}
	var got []string
	for f, parent := range s.All() {
		got = append(got, f.Name+":"+f.LogicalType+":"+itoa(f.ID)+":"+itoa(parent))
	}
	want := []string{
		"id:int64:0:-1", "vec:fixed_size_list:float:4:1:-1", "tags:list:2:-1", "item:string:3:2",
		"s:struct:4:-1", "a:int32:5:4", "pts:large_list.struct:6:4", "item:struct:7:6", "x:double:8:7", "y:double:9:7",
		"u:fixed_size_binary:16:10:-1",
	}
	if !slices.Equal(got, want) {
		t.Errorf("fields =\n%q\nwant\n%q", got, want)
	}
	if !s.Fields[0].UnenforcedPrimaryKey || s.Fields[0].Nullable {
		t.Errorf("id field = %+v", s.Fields[0])
	}
	if u := s.Fields[4]; u.ExtensionName() != "test.tag" {
		t.Errorf("uuid field metadata = %v", u.Metadata)
	}
	back, err := s.ToArrow()
	if err != nil {
		t.Fatal(err)
	}
	// The extension type comes back as its storage type with the
	// extension's name in the metadata, which Arrow readers turn into the
	// extension again.
	wantSchema := nested()
	fields := wantSchema.Fields()
	fields[4] = arrow.Field{Name: "u", Type: &arrow.FixedSizeBinaryType{ByteWidth: 16}, Nullable: true,
		Metadata: arrow.NewMetadata([]string{schema.ExtensionMetadataKey, schema.ExtensionNameKey}, []string{"v1", "test.tag"})}
	md := wantSchema.Metadata()
	if want := arrow.NewSchema(fields, &md); !back.Equal(want) || !back.Metadata().Equal(md) {
		t.Errorf("ToArrow =\n%s\nwant\n%s", back, want)
	}
	for i, f := range back.Fields() {
		if !f.Metadata.Equal(fields[i].Metadata) {
			t.Errorf("field %s metadata = %v, want %v", f.Name, f.Metadata, fields[i].Metadata)
		}
	}
}

func itoa(i int32) string { return strconv.Itoa(int(i)) }

func TestAssignIDsNeverReuses(t *testing.T) {
	s, err := schema.FromArrow(nested())
	if err != nil {
		t.Fatal(err)
	}
	// A dataset whose ids up to 40 were given out (some fields dropped
	// since) continues from 41, and fields that have ids keep them.
	s.Fields[1].ID = 7
	next, err := s.AssignIDs(41)
	if err != nil || next != 51 {
		t.Fatalf("AssignIDs(41) = %d, %v; want 51", next, err)
	}
	if s.Fields[0].ID != 41 || s.Fields[1].ID != 7 || s.Fields[2].ID != 42 {
		t.Errorf("ids = %d %d %d", s.Fields[0].ID, s.Fields[1].ID, s.Fields[2].ID)
	}
	// A next id below the schema's largest is raised above it.
	s.Fields[0].ID = 90
	s.Fields[2].ID = -1
	if next, err := s.AssignIDs(3); err != nil || next != 92 || s.Fields[2].ID != 91 {
		t.Errorf("AssignIDs(3) = %d, %v, tags id %d; want 92, 91", next, err, s.Fields[2].ID)
	}
}

func TestValidateRefuses(t *testing.T) {
	leaf := func(name string, id int32) *schema.Field {
		return &schema.Field{Name: name, ID: id, LogicalType: "int32"}
	}
	cases := map[string]*schema.Schema{
		"duplicate name":   {Fields: []*schema.Field{leaf("a", 0), leaf("a", 1)}},
		"duplicate id":     {Fields: []*schema.Field{leaf("a", 0), leaf("b", 0)}},
		"no id":            {Fields: []*schema.Field{leaf("a", -1)}},
		"no name":          {Fields: []*schema.Field{leaf("", 0)}},
		"dot in top name":  {Fields: []*schema.Field{leaf("a.b", 0)}},
		"list no child":    {Fields: []*schema.Field{{Name: "l", ID: 0, LogicalType: "list"}}},
		"list two":         {Fields: []*schema.Field{{Name: "l", ID: 0, LogicalType: "list", Children: []*schema.Field{leaf("a", 1), leaf("b", 2)}}}},
		"list.struct leaf": {Fields: []*schema.Field{{Name: "l", ID: 0, LogicalType: "list.struct", Children: []*schema.Field{leaf("a", 1)}}}},
		"leaf children":    {Fields: []*schema.Field{{Name: "l", ID: 0, LogicalType: "int8", Children: []*schema.Field{leaf("a", 1)}}}},
		"unknown type":     {Fields: []*schema.Field{{Name: "l", ID: 0, LogicalType: "int7"}}},
	}
	deep := leaf("x", 0)
	for i := 1; i <= schema.MaxDepth; i++ {
		deep = &schema.Field{Name: "x", ID: int32(i), LogicalType: "struct", Children: []*schema.Field{deep}}
	}
	cases["too deep"] = &schema.Schema{Fields: []*schema.Field{deep}}
	for name, s := range cases {
		err := s.Validate()
		if !errors.Is(err, schema.ErrInvalid) && !errors.Is(err, schema.ErrUnsupportedType) {
			t.Errorf("%s: Validate = %v", name, err)
		}
	}
	good := &schema.Schema{Fields: []*schema.Field{leaf("a", 0), {Name: "s", ID: 1, LogicalType: "struct", Children: []*schema.Field{leaf("a", 2)}}}}
	if err := good.Validate(); err != nil {
		t.Errorf("Validate(good) = %v", err)
	}
}

func TestPaths(t *testing.T) {
	cases := []struct {
		path string
		want []string
	}{
		{"a", []string{"a"}},
		{"a.b.c", []string{"a", "b", "c"}},
		{"a.`b.c`", []string{"a", "b.c"}},
		{"`a``b`.c", []string{"a`b", "c"}},
		{"``````", []string{"``"}},
	}
	for _, c := range cases {
		got, err := schema.ParsePath(c.path)
		if err != nil || !slices.Equal(got, c.want) {
			t.Errorf("ParsePath(%q) = %q, %v; want %q", c.path, got, err, c.want)
		}
		if back := schema.FormatPath(got...); back != c.path {
			t.Errorf("FormatPath(%q) = %q, want %q", got, back, c.path)
		}
	}
	for _, bad := range []string{"", ".", "a.", ".a", "a..b", "`a", "`a`b", "a`b", "``"} {
		if got, err := schema.ParsePath(bad); !errors.Is(err, schema.ErrInvalid) {
			t.Errorf("ParsePath(%q) = %q, %v; want ErrInvalid", bad, got, err)
		}
	}
}

func TestProject(t *testing.T) {
	s, err := schema.FromArrow(nested())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.AssignIDs(0); err != nil {
		t.Fatal(err)
	}
	names := func(p *schema.Schema) []string {
		var out []string
		for f := range p.All() {
			out = append(out, f.Name)
		}
		return out
	}
	cases := []struct {
		paths []string
		ids   []int32
		want  []string
	}{
		{paths: []string{"vec", "id"}, want: []string{"vec", "id"}},
		{paths: []string{"s.pts.item.y"}, want: []string{"s", "pts", "item", "y"}},
		{paths: []string{"s.pts", "s.a"}, want: []string{"s", "a", "pts", "item", "x", "y"}},
		{paths: []string{"tags", "tags.item"}, want: []string{"tags", "item"}},
		{ids: []int32{9, 0}, want: []string{"s", "pts", "item", "y", "id"}},
		{ids: []int32{4}, want: []string{"s", "a", "pts", "item", "x", "y"}},
	}
	for _, c := range cases {
		var p *schema.Schema
		var err error
		if c.ids != nil {
			p, err = s.ProjectIDs(c.ids...)
		} else {
			p, err = s.Project(c.paths...)
		}
		if err != nil || !slices.Equal(names(p), c.want) {
			t.Errorf("project %q%v = %q, %v; want %q", c.paths, c.ids, names(p), err, c.want)
		}
		if err == nil && p.Metadata["purpose"] != "tests" {
			t.Errorf("project %q%v lost the schema metadata", c.paths, c.ids)
		}
	}
	// Projections are copies.
	p, _ := s.Project("id")
	p.Fields[0].Name = "changed"
	if s.Fields[0].Name != "id" {
		t.Error("projection shares fields with the schema")
	}
	if _, err := s.Project("s.nope"); !errors.Is(err, schema.ErrFieldNotFound) {
		t.Errorf("Project(s.nope) = %v", err)
	}
	if _, err := s.ProjectIDs(99); !errors.Is(err, schema.ErrFieldNotFound) {
		t.Errorf("ProjectIDs(99) = %v", err)
	}
	if f, err := s.Field("s.pts.item.x"); err != nil || f.ID != 8 {
		t.Errorf("Field(s.pts.item.x) = %+v, %v", f, err)
	}
	if path, err := s.Path(9); err != nil || path != "s.pts.item.y" {
		t.Errorf("Path(9) = %q, %v", path, err)
	}
}

// tagType is an extension type over fixed_size_binary(16).
type tagType struct{ arrow.ExtensionBase }

func newTagType() *tagType {
	return &tagType{ExtensionBase: arrow.ExtensionBase{Storage: &arrow.FixedSizeBinaryType{ByteWidth: 16}}}
}

func (*tagType) ExtensionName() string { return "test.tag" }
func (*tagType) Serialize() string     { return "v1" }
func (*tagType) ArrayType() reflect.Type {
	return reflect.TypeOf(array.ExtensionArrayBase{})
}
func (t *tagType) Deserialize(storage arrow.DataType, _ string) (arrow.ExtensionType, error) {
	return newTagType(), nil
}
func (t *tagType) ExtensionEquals(o arrow.ExtensionType) bool {
	return o.ExtensionName() == t.ExtensionName()
}
