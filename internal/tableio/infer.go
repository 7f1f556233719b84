package tableio

import (
	"bytes"
	"encoding/json"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
)

// Inference reads the values of a sample of rows (the first Options.InferRows)
// and gives each column the narrowest type all of its values fit, in this
// order: bool, int64, float64, date32 (YYYY-MM-DD), timestamp[us] (a date
// and a time of day; timestamp[us, UTC] when a value names its zone),
// string. Arrays of numbers one of which has a fraction or an exponent are
// vectors, vector[N] (fixed_size_list<float32>[N]) when every array in the
// sample has N values, else list<float64>; other arrays are lists of the
// type their items share. JSON objects are structs. A column whose values
// disagree (a number here, a string there) is a string column; a column
// with only nulls in the sample is a string column. Rows past the sample
// that do not fit fail the import with the line and column, and --schema
// names the type to use instead.

// kind is what a sampled value looks like, from narrowest to widest.
type kind int

const (
	kindNull kind = iota
	kindBool
	kindInt
	kindFloat
	kindDate
	kindTimestamp
	kindString
	kindList
	kindStruct
)

// guess is what the values of a column seen so far have in common.
type guess struct {
	kind kind
	// zoned: a timestamp value named its zone.
	zoned bool
	// For lists: the items' guess, whether an item was fractional, and
	// the length every list had (-1 once two differed).
	elem       *guess
	fractional bool
	length     int
	// For structs: the members, in the order they first appeared.
	names   []string
	members map[string]*guess
}

var (
	datePattern      = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}$`)
	timestampPattern = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}`)
)

// guessText classifies one CSV cell: empty is null, then bool, integer,
// number, date, timestamp, a JSON array, else a string.
func guessText(s string) *guess {
	switch {
	case s == "":
		return &guess{kind: kindNull}
	case strings.EqualFold(s, "true") || strings.EqualFold(s, "false"):
		return &guess{kind: kindBool}
	case s[0] == '[':
		var v any
		dec := json.NewDecoder(strings.NewReader(s))
		dec.UseNumber()
		if dec.Decode(&v) == nil && !dec.More() {
			return guessJSON(v)
		}
		return &guess{kind: kindString}
	}
	return guessString(s, true)
}

// guessString classifies a string value; numbers counts digits as numbers
// (a CSV cell) rather than text (a JSON string).
func guessString(s string, numbers bool) *guess {
	if numbers {
		if _, err := strconv.ParseInt(s, 10, 64); err == nil {
			return &guess{kind: kindInt}
		}
		if isDecimal(s) {
			if _, err := strconv.ParseFloat(s, 64); err == nil {
				return &guess{kind: kindFloat}
			}
		}
	}
	if datePattern.MatchString(s) {
		if _, err := time.Parse(time.DateOnly, s); err == nil {
			return &guess{kind: kindDate}
		}
	}
	if timestampPattern.MatchString(s) {
		if _, zoned, err := arrow.TimestampFromStringInLocation(s, arrow.Microsecond, time.UTC); err == nil {
			return &guess{kind: kindTimestamp, zoned: zoned}
		}
	}
	return &guess{kind: kindString}
}

// isDecimal reports whether s is written as a decimal number (digits, an
// optional sign, point and exponent): strconv also reads "NaN", "Inf" and
// hexadecimal, which in a CSV file are more likely text.
func isDecimal(s string) bool {
	digits := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= '0' && c <= '9':
			digits = true
		case c == '.' || c == 'e' || c == 'E' || c == '+' || c == '-':
		default:
			return false
		}
	}
	return digits
}

// guessJSON classifies a value decoded from JSON with UseNumber.
func guessJSON(v any) *guess {
	switch v := v.(type) {
	case nil:
		return &guess{kind: kindNull}
	case bool:
		return &guess{kind: kindBool}
	case json.Number:
		if _, err := v.Int64(); err == nil {
			return &guess{kind: kindInt}
		}
		return &guess{kind: kindFloat}
	case string:
		return guessString(v, false)
	case []any:
		g := &guess{kind: kindList, elem: &guess{kind: kindNull}, length: len(v)}
		for _, item := range v {
			ig := guessJSON(item)
			if ig.kind == kindFloat {
				g.fractional = true
			}
			g.elem = merge(g.elem, ig)
		}
		return g
	case map[string]any:
		g := &guess{kind: kindStruct, members: map[string]*guess{}}
		// Go's maps forget the order of an object's members; JSON
		// objects in a sample are read by orderedMembers instead when
		// the order matters (top-level rows).
		for name, item := range v {
			g.names = append(g.names, name)
			g.members[name] = guessJSON(item)
		}
		slices.Sort(g.names)
		return g
	}
	return &guess{kind: kindString}
}

// merge returns what a and b have in common (a may be changed).
func merge(a, b *guess) *guess {
	switch {
	case b.kind == kindNull:
		return a
	case a.kind == kindNull:
		return b
	case a.kind == b.kind:
		switch a.kind {
		case kindTimestamp:
			a.zoned = a.zoned || b.zoned
		case kindList:
			a.elem = merge(a.elem, b.elem)
			a.fractional = a.fractional || b.fractional
			if a.length != b.length {
				a.length = -1
			}
			if a.elem.kind == kindString && (a.elem.elem != nil || a.elem.members != nil) {
				a.elem = &guess{kind: kindString}
			}
		case kindStruct:
			for _, name := range b.names {
				if m, ok := a.members[name]; ok {
					a.members[name] = merge(m, b.members[name])
				} else {
					a.names = append(a.names, name)
					a.members[name] = b.members[name]
				}
			}
		}
		return a
	case (a.kind == kindInt && b.kind == kindFloat) || (a.kind == kindFloat && b.kind == kindInt):
		return &guess{kind: kindFloat}
	case (a.kind == kindDate && b.kind == kindTimestamp) || (a.kind == kindTimestamp && b.kind == kindDate):
		return &guess{kind: kindTimestamp, zoned: a.zoned || b.zoned}
	}
	return &guess{kind: kindString}
}

// arrowType is the type a column of values like g gets.
func (g *guess) arrowType() arrow.DataType {
	switch g.kind {
	case kindBool:
		return arrow.FixedWidthTypes.Boolean
	case kindInt:
		return arrow.PrimitiveTypes.Int64
	case kindFloat:
		return arrow.PrimitiveTypes.Float64
	case kindDate:
		return arrow.FixedWidthTypes.Date32
	case kindTimestamp:
		if g.zoned {
			return &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}
		}
		return &arrow.TimestampType{Unit: arrow.Microsecond}
	case kindList:
		numeric := g.elem.kind == kindInt || g.elem.kind == kindFloat
		switch {
		case numeric && g.fractional && g.length > 0:
			return arrow.FixedSizeListOf(int32(g.length), arrow.PrimitiveTypes.Float32)
		case numeric && g.fractional:
			return arrow.ListOf(arrow.PrimitiveTypes.Float64)
		}
		return arrow.ListOf(g.elem.arrowType())
	case kindStruct:
		fields := make([]arrow.Field, len(g.names))
		for i, name := range g.names {
			fields[i] = arrow.Field{Name: name, Type: g.members[name].arrowType(), Nullable: true}
		}
		if len(fields) == 0 {
			return arrow.BinaryTypes.String
		}
		return arrow.StructOf(fields...)
	}
	return arrow.BinaryTypes.String
}

// orderedMembers splits a JSON object into its members, in order. It
// returns an error for anything but an object, and for a member named
// twice.
func orderedMembers(line []byte) ([]string, []json.RawMessage, error) {
	dec := json.NewDecoder(bytes.NewReader(line))
	tok, err := dec.Token()
	if err != nil {
		return nil, nil, err
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return nil, nil, errNotObject
	}
	var names []string
	var values []json.RawMessage
	seen := map[string]bool{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, nil, err
		}
		name := tok.(string) // object keys are strings
		if seen[name] {
			return nil, nil, &memberError{name: name}
		}
		seen[name] = true
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, nil, err
		}
		names = append(names, name)
		values = append(values, raw)
	}
	if _, err := dec.Token(); err != nil {
		return nil, nil, err
	}
	if _, err := dec.Token(); err == nil {
		return nil, nil, errTrailing
	}
	return names, values, nil
}
