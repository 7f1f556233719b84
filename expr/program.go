package expr

import (
	"encoding/json"
	"strconv"
	"strings"
)

// program is a compiled expression prepared for the machine: its root, the
// decoded JSON lists of long IN lists, and which columns are read only
// for whether they are NULL. It is read-only once built, so one program
// may run on several batches at once.
type program struct {
	root      *sqlNode
	typ       Type
	jsonLists map[string][]value
	nullOnly  map[*sqlNode]bool
}

// newProgram prepares the compiled f for the machine.
func newProgram(f frag) *program {
	p := &program{root: f.n, typ: f.typ, jsonLists: map[string][]value{}, nullOnly: map[*sqlNode]bool{}}
	p.prepare(f.n)
	return p
}

// prepare marks the nodes of n's tree that read no column, decodes JSON
// IN lists and finds the columns tested only for NULL. It returns whether n
// reads no column.
func (p *program) prepare(n *sqlNode) bool {
	fixed := n.kind != sqlColumn
	for _, a := range n.args {
		if !p.prepare(a) {
			fixed = false
		}
	}
	if n.kind == sqlTest && (n.op == sqlIsNull || n.op == sqlNotNull) && n.args[0].kind == sqlColumn {
		p.nullOnly[n.args[0]] = true
	}
	if list, ok := n.v.(string); ok && n.kind == sqlIn {
		p.jsonLists[list] = jsonEachValues(list)
	}
	n.fixed = fixed
	return fixed
}

// jsonEachValues returns the values SQLite's json_each reads from the JSON
// array of constants that the compiler binds for a long IN list: integers
// that fit as INTEGER, other numbers as the REAL SQLite reads, strings as
// TEXT, null as NULL.
func jsonEachValues(list string) []value {
	var items []any
	dec := json.NewDecoder(strings.NewReader(list))
	dec.UseNumber()
	if dec.Decode(&items) != nil {
		return nil
	}
	out := make([]value, len(items))
	for i, it := range items {
		switch it := it.(type) {
		case json.Number:
			s := string(it)
			if v, err := strconv.ParseInt(s, 10, 64); err == nil {
				out[i] = intValue(v)
			} else {
				out[i] = floatValue(sqlAtoF(s))
			}
		case string:
			out[i] = textValue(it)
		case bool:
			out[i] = intValue(int64(b2u(it)))
		}
	}
	return out
}

// filter evaluates the program as a filter over n rows whose columns load
// provides, and returns the rows where it is TRUE.
func (p *program) filter(n int, load func(*sqlNode) (vec, error)) ([]uint64, error) {
	m := &machine{n: n, prog: p, load: load, cache: map[*sqlNode]vec{}}
	return m.filter(p.root)
}

// value evaluates the program as a value over n rows.
func (p *program) value(n int, load func(*sqlNode) (vec, error)) (vec, error) {
	m := &machine{n: n, prog: p, load: load, cache: map[*sqlNode]vec{}}
	return m.eval(p.root, nil)
}

// pathKey returns a map key of path: each segment with its length.
func pathKey(path []string) string {
	var b strings.Builder
	for _, seg := range path {
		b.WriteString(strconv.Itoa(len(seg)))
		b.WriteByte(':')
		b.WriteString(seg)
	}
	return b.String()
}
