package engine

import (
	"slices"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/lancens/lancens/expr"
	"github.com/lancens/lancens/lance/schema"
	"github.com/lancens/lancens/store"
)

// rowIDColumn is the name of the row address column of query results, and
// of the column filters name it by.
const rowIDColumn = "_rowid"

// colBinder binds the field paths of expressions to the top-level fields
// of a table's schema, and records the fields it binds: an expression runs
// on a batch of just those fields, in the order first bound (see
// reader.batch). _rowid binds to the rows' addresses.
type colBinder struct {
	schema *arrow.Schema
	// used are the indices in schema of the batch's fields, in order;
	// rowIDField stands for _rowid.
	used []int
}

// rowIDField is the index colBinder.used gives _rowid.
const rowIDField = -1

func newBinder(s *arrow.Schema) *colBinder { return &colBinder{schema: s} }

// Bind implements expr.Binder. Unknown paths are TableColumnNotFound (12).
func (b *colBinder) Bind(path []string) (expr.Binding, error) {
	if len(path) == 1 && path[0] == rowIDColumn && !b.schema.HasField(rowIDColumn) {
		return expr.Binding{Path: []int{b.position(rowIDField)}, Type: arrow.PrimitiveTypes.Uint64}, nil
	}
	bd, err := expr.SchemaBinder(b.schema).Bind(path)
	if err != nil {
		return bd, err
	}
	bd.Path = append([]int{b.position(bd.Path[0])}, bd.Path[1:]...)
	return bd, nil
}

// position returns the index of field i in the batch, adding it.
func (b *colBinder) position(i int) int {
	if k := slices.Index(b.used, i); k >= 0 {
		return k
	}
	b.used = append(b.used, i)
	return len(b.used) - 1
}

// batchSchema returns the schema of the batches bound expressions run on.
func (b *colBinder) batchSchema() *arrow.Schema {
	fields := make([]arrow.Field, len(b.used))
	for k, i := range b.used {
		if i == rowIDField {
			fields[k] = arrow.Field{Name: rowIDColumn, Type: arrow.PrimitiveTypes.Uint64}
		} else {
			fields[k] = b.schema.Field(i)
		}
	}
	return arrow.NewSchema(fields, nil)
}

// filter is a filter compiled against one schema: its Program over the
// columns cols binds, and, when those columns allow, its form over cached
// expr.Values (values.go).
type filter struct {
	prog   *expr.Program
	cols   *colBinder
	values *valuesFilter
}

// planFilter compiles a filter over the table's schema; nil for none. It
// returns the parser's and compiler's errors: InvalidInput (13) for bad
// syntax or types, TableColumnNotFound (12) for an unknown column.
func planFilter(s *arrow.Schema, text string) (*filter, error) {
	if strings.TrimSpace(text) == "" {
		return nil, nil
	}
	e, err := expr.Parse(text)
	if err != nil {
		return nil, err
	}
	b := newBinder(s)
	p, err := expr.PlanFilter(e, b)
	if err != nil {
		return nil, err
	}
	return &filter{prog: p, cols: b, values: newValuesFilter(e, b)}, nil
}

// outputColumn is one column of a query's output: a stored field (by its
// index in the schema and, for a field inside a struct, the child indices
// down to it) or an expression's value.
type outputColumn struct {
	field arrow.Field
	top   int   // the stored field's top-level index, -1 for an expression
	path  []int // child indices below top
	value *expr.Program
}

// projection is the output part of a query.
type projection struct {
	cols []outputColumn
	// values binds the fields the expressions read.
	values *colBinder
	rowID  bool
}

// planProjection compiles the output columns of q against schema s: all
// fields (no projection), the named columns ("a", or "a.b" inside a
// struct, named so in the output), or named expressions. It returns
// TableColumnNotFound (12) for an unknown column and the expressions'
// errors.
func planProjection(s *arrow.Schema, q store.Query) (*projection, error) {
	p := &projection{values: newBinder(s), rowID: q.WithRowID}
	switch {
	case q.Projection.Columns == nil && q.Projection.Aliases == nil:
		for i, f := range s.Fields() {
			p.cols = append(p.cols, outputColumn{field: f, top: i})
		}
	case q.Projection.Aliases != nil:
		for _, a := range q.Projection.Aliases {
			if c, ok := lookupColumn(s, a.Expr); ok {
				c.field.Name = a.Name
				p.cols = append(p.cols, c)
				continue
			}
			e, err := expr.Parse(a.Expr)
			if err != nil {
				return nil, err
			}
			prog, err := expr.PlanValue(e, p.values)
			if err != nil {
				return nil, err
			}
			dt, err := expr.ArrowType(prog.Type())
			if err != nil {
				return nil, err
			}
			p.cols = append(p.cols, outputColumn{field: arrow.Field{Name: a.Name, Type: dt, Nullable: true}, top: -1, value: prog})
		}
	default:
		for _, name := range q.Projection.Columns {
			c, ok := lookupColumn(s, name)
			if !ok {
				return nil, store.Errorf(store.CodeTableColumnNotFound, "column %s not found", name)
			}
			c.field.Name = name
			if len(c.path) == 0 {
				c.field.Name = s.Field(c.top).Name
			}
			p.cols = append(p.cols, c)
		}
	}
	if len(p.cols) == 0 && !p.rowID {
		return nil, store.Errorf(store.CodeInvalidInput, "the query selects no columns")
	}
	return p, nil
}

// lookupColumn finds a stored field by its path ("a", "a.b", "`a.b`").
func lookupColumn(s *arrow.Schema, p string) (outputColumn, bool) {
	names, err := schema.ParsePath(p)
	if err != nil {
		return outputColumn{}, false
	}
	idx := s.FieldIndices(names[0])
	if len(idx) == 0 {
		return outputColumn{}, false
	}
	c := outputColumn{top: idx[0], field: s.Field(idx[0])}
	for _, n := range names[1:] {
		st, ok := c.field.Type.(*arrow.StructType)
		if !ok {
			return outputColumn{}, false
		}
		j, ok := st.FieldIdx(n)
		if !ok {
			return outputColumn{}, false
		}
		c.path = append(c.path, j)
		c.field = st.Field(j)
	}
	return c, true
}

// schema returns the schema of the output, with md as its metadata.
func (p *projection) schema(md arrow.Metadata) *arrow.Schema {
	fields := make([]arrow.Field, 0, len(p.cols)+1)
	for _, c := range p.cols {
		fields = append(fields, c.field)
	}
	if p.rowID {
		fields = append(fields, arrow.Field{Name: rowIDColumn, Type: arrow.PrimitiveTypes.Uint64})
	}
	return arrow.NewSchema(fields, &md)
}

// planOrder compiles the sort keys of a scan; nil for none. It returns
// TableColumnNotFound (12) for an unknown column and InvalidInput (13) for
// one whose values do not sort.
func planOrder(s *arrow.Schema, keys []store.SortKey) (*expr.Order, *colBinder, error) {
	if len(keys) == 0 {
		return nil, nil, nil
	}
	ok := make([]expr.OrderKey, len(keys))
	for i, k := range keys {
		names, err := schema.ParsePath(k.Column)
		if err != nil {
			return nil, nil, store.Errorf(store.CodeTableColumnNotFound, "column %s not found", k.Column)
		}
		ok[i] = expr.OrderKey{Expr: expr.Path(names...), Descending: k.Descending, NullsFirst: k.NullsFirst}
	}
	b := newBinder(s)
	o, err := expr.PlanOrder(ok, b)
	if err != nil {
		return nil, nil, err
	}
	return o, b, nil
}
