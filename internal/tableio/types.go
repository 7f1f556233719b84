package tableio

import (
	"fmt"
	"strconv"
	"strings"
	"unicode"

	"github.com/apache/arrow-go/v18/arrow"
)

// The schema language of --schema: a comma-separated list of name:type, each
// naming a column and the Arrow type it gets. Types:
//
//	bool
//	int8 int16 int32 int64 uint8 uint16 uint32 uint64
//	float16 float32 float64        (also halffloat, float, double)
//	string large_string binary large_binary   (string is also utf8)
//	date32                          (also date)
//	timestamp[UNIT] timestamp[UNIT, ZONE]   UNIT is s, ms, us or ns; ZONE e.g. UTC
//	list<T> large_list<T>
//	fixed_size_list<T>[N]           N values of T in each row
//	vector[N]                       fixed_size_list<float32>[N], what vector search reads
//	struct<name:T, ...>
//
// A name that holds a comma, colon, space or angle bracket is written in
// double quotes ("a,b":int64). Every column is nullable.

// ParseSchema reads a schema written in the language above into its fields,
// in order. It returns an error naming the position of a mistake.
func ParseSchema(s string) ([]arrow.Field, error) {
	p := &typeParser{src: s}
	fields, err := p.fields()
	if err != nil {
		return nil, err
	}
	p.space()
	if p.pos != len(p.src) {
		return nil, p.errorf("unexpected %q", p.src[p.pos:])
	}
	seen := map[string]bool{}
	for _, f := range fields {
		if seen[f.Name] {
			return nil, fmt.Errorf("schema: column %q is named twice", f.Name)
		}
		seen[f.Name] = true
	}
	return fields, nil
}

// FormatSchema writes fields in the language ParseSchema reads.
func FormatSchema(fields []arrow.Field) string {
	parts := make([]string, len(fields))
	for i, f := range fields {
		parts[i] = formatName(f.Name) + ":" + FormatType(f.Type)
	}
	return strings.Join(parts, ",")
}

// FormatType writes t in the language above; a type the language
// has no word for is written as Arrow names it.
func FormatType(t arrow.DataType) string {
	switch t := t.(type) {
	case *arrow.TimestampType:
		if t.TimeZone != "" {
			return fmt.Sprintf("timestamp[%s, %s]", t.Unit, t.TimeZone)
		}
		return fmt.Sprintf("timestamp[%s]", t.Unit)
	case *arrow.ListType:
		return "list<" + FormatType(t.Elem()) + ">"
	case *arrow.LargeListType:
		return "large_list<" + FormatType(t.Elem()) + ">"
	case *arrow.FixedSizeListType:
		if t.Elem().ID() == arrow.FLOAT32 {
			return fmt.Sprintf("vector[%d]", t.Len())
		}
		return fmt.Sprintf("fixed_size_list<%s>[%d]", FormatType(t.Elem()), t.Len())
	case *arrow.StructType:
		return "struct<" + FormatSchema(t.Fields()) + ">"
	}
	for name, pt := range primitiveTypes {
		if arrow.TypeEqual(pt, t) && canonicalName[name] {
			return name
		}
	}
	return t.String()
}

// primitiveTypes are the types named by one word.
var primitiveTypes = map[string]arrow.DataType{
	"bool": arrow.FixedWidthTypes.Boolean, "boolean": arrow.FixedWidthTypes.Boolean,
	"int8": arrow.PrimitiveTypes.Int8, "int16": arrow.PrimitiveTypes.Int16,
	"int32": arrow.PrimitiveTypes.Int32, "int64": arrow.PrimitiveTypes.Int64,
	"uint8": arrow.PrimitiveTypes.Uint8, "uint16": arrow.PrimitiveTypes.Uint16,
	"uint32": arrow.PrimitiveTypes.Uint32, "uint64": arrow.PrimitiveTypes.Uint64,
	"float16": arrow.FixedWidthTypes.Float16, "halffloat": arrow.FixedWidthTypes.Float16,
	"float32": arrow.PrimitiveTypes.Float32, "float": arrow.PrimitiveTypes.Float32,
	"float64": arrow.PrimitiveTypes.Float64, "double": arrow.PrimitiveTypes.Float64,
	"string": arrow.BinaryTypes.String, "utf8": arrow.BinaryTypes.String,
	"large_string": arrow.BinaryTypes.LargeString,
	"binary":       arrow.BinaryTypes.Binary, "large_binary": arrow.BinaryTypes.LargeBinary,
	"date32": arrow.FixedWidthTypes.Date32, "date": arrow.FixedWidthTypes.Date32,
}

// canonicalName marks the name FormatType writes for each primitive type.
var canonicalName = map[string]bool{
	"bool": true, "int8": true, "int16": true, "int32": true, "int64": true, "uint8": true, "uint16": true,
	"uint32": true, "uint64": true, "float16": true, "float32": true, "float64": true, "string": true,
	"large_string": true, "binary": true, "large_binary": true, "date32": true,
}

// typeParser is a recursive-descent parser of the schema language.
type typeParser struct {
	src string
	pos int
}

func (p *typeParser) errorf(format string, args ...any) error {
	return fmt.Errorf("schema %q at position %d: %s", p.src, p.pos+1, fmt.Sprintf(format, args...))
}

func (p *typeParser) space() {
	for p.pos < len(p.src) && (p.src[p.pos] == ' ' || p.src[p.pos] == '\t') {
		p.pos++
	}
}

// accept consumes tok (after spaces) if it comes next.
func (p *typeParser) accept(tok string) bool {
	p.space()
	if strings.HasPrefix(p.src[p.pos:], tok) {
		p.pos += len(tok)
		return true
	}
	return false
}

func (p *typeParser) expect(tok string) error {
	if !p.accept(tok) {
		return p.errorf("expected %q", tok)
	}
	return nil
}

// fields reads name:type, name:type, ...
func (p *typeParser) fields() ([]arrow.Field, error) {
	var out []arrow.Field
	for {
		name, err := p.name()
		if err != nil {
			return nil, err
		}
		if err := p.expect(":"); err != nil {
			return nil, err
		}
		t, err := p.typ()
		if err != nil {
			return nil, err
		}
		out = append(out, arrow.Field{Name: name, Type: t, Nullable: true})
		if !p.accept(",") {
			return out, nil
		}
	}
}

// name reads a column name: a double-quoted string (with \" and \\
// escapes) or a run of characters other than the language's punctuation.
func (p *typeParser) name() (string, error) {
	p.space()
	if p.pos < len(p.src) && p.src[p.pos] == '"' {
		start := p.pos
		for end := p.pos + 1; end < len(p.src); end++ {
			switch p.src[end] {
			case '\\':
				end++
			case '"':
				name, err := strconv.Unquote(p.src[start : end+1])
				if err != nil {
					return "", p.errorf("bad quoted name: %v", err)
				}
				p.pos = end + 1
				return name, nil
			}
		}
		return "", p.errorf("unterminated quoted name")
	}
	start := p.pos
	for p.pos < len(p.src) && !strings.ContainsRune(":,<>[] \t\"", rune(p.src[p.pos])) {
		p.pos++
	}
	if p.pos == start {
		return "", p.errorf("expected a column name")
	}
	return p.src[start:p.pos], nil
}

// word reads a type name: letters, digits and underscores.
func (p *typeParser) word() string {
	p.space()
	start := p.pos
	for p.pos < len(p.src) {
		r := rune(p.src[p.pos])
		if r != '_' && !unicode.IsLetter(r) && !unicode.IsDigit(r) {
			break
		}
		p.pos++
	}
	return strings.ToLower(p.src[start:p.pos])
}

// size reads "[N]" with N a positive integer.
func (p *typeParser) size() (int32, error) {
	if err := p.expect("["); err != nil {
		return 0, err
	}
	p.space()
	start := p.pos
	for p.pos < len(p.src) && p.src[p.pos] >= '0' && p.src[p.pos] <= '9' {
		p.pos++
	}
	n, err := strconv.ParseInt(p.src[start:p.pos], 10, 32)
	if err != nil || n < 1 {
		p.pos = start
		return 0, p.errorf("expected a positive size")
	}
	if err := p.expect("]"); err != nil {
		return 0, err
	}
	return int32(n), nil
}

func (p *typeParser) typ() (arrow.DataType, error) {
	start := p.pos
	w := p.word()
	if t, ok := primitiveTypes[w]; ok {
		return t, nil
	}
	switch w {
	case "timestamp":
		if err := p.expect("["); err != nil {
			return nil, err
		}
		unit, ok := map[string]arrow.TimeUnit{"s": arrow.Second, "ms": arrow.Millisecond, "us": arrow.Microsecond, "ns": arrow.Nanosecond}[p.word()]
		if !ok {
			return nil, p.errorf("expected a time unit: s, ms, us or ns")
		}
		t := &arrow.TimestampType{Unit: unit}
		if p.accept(",") {
			p.space()
			end := strings.IndexByte(p.src[p.pos:], ']')
			if end < 0 {
				return nil, p.errorf("expected \"]\"")
			}
			t.TimeZone = strings.TrimSpace(p.src[p.pos : p.pos+end])
			p.pos += end
		}
		if err := p.expect("]"); err != nil {
			return nil, err
		}
		return t, nil
	case "list", "large_list", "fixed_size_list":
		if err := p.expect("<"); err != nil {
			return nil, err
		}
		elem, err := p.typ()
		if err != nil {
			return nil, err
		}
		if err := p.expect(">"); err != nil {
			return nil, err
		}
		switch w {
		case "list":
			return arrow.ListOf(elem), nil
		case "large_list":
			return arrow.LargeListOf(elem), nil
		}
		n, err := p.size()
		if err != nil {
			return nil, err
		}
		return arrow.FixedSizeListOf(n, elem), nil
	case "vector":
		n, err := p.size()
		if err != nil {
			return nil, err
		}
		return arrow.FixedSizeListOf(n, arrow.PrimitiveTypes.Float32), nil
	case "struct":
		if err := p.expect("<"); err != nil {
			return nil, err
		}
		fields, err := p.fields()
		if err != nil {
			return nil, err
		}
		if err := p.expect(">"); err != nil {
			return nil, err
		}
		return arrow.StructOf(fields...), nil
	}
	p.pos = start
	p.space()
	if w == "" {
		return nil, p.errorf("expected a type")
	}
	return nil, p.errorf("unknown type %q", w)
}

// formatName quotes a name the language would not read bare.
func formatName(name string) string {
	if name == "" || strings.ContainsAny(name, ":,<>[] \t\"\\") {
		return strconv.Quote(name)
	}
	return name
}
