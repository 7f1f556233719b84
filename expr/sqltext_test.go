package expr

import (
	"strconv"
	"strings"
)

// The tests' oracle: the tree a compiled expression is (sqlnode.go),
// rendered as SQLite SQL with bound arguments and run in SQLite over the
// same rows the evaluator computes it on. The evaluator must give what
// SQLite gives.

// dbColumn is what an sqlResolver returns for a field path: the SQL that
// reads the column in the test database (inserted verbatim, so a primary
// expression) and its type.
type dbColumn struct {
	SQL  string
	Type Type
}

// sqlResolver maps a field path to a column of the test database. It
// returns an error for unknown paths, which the compiler returns
// unchanged.
type sqlResolver interface {
	Resolve(path []string) (dbColumn, error)
}

// typesOf is the compiler's resolver of an sqlResolver.
type typesOf struct{ r sqlResolver }

func (t typesOf) resolve(path []string) (Type, error) {
	c, err := t.r.Resolve(path)
	return c.Type, err
}

// sqlCompiled is SQLite SQL, its bound arguments in placeholder order, and
// the type of the value it computes.
type sqlCompiled struct {
	SQL  string
	Args []any
	Type Type
}

// compileSQL compiles e as PlanValue does and renders it as SQL. It
// returns the errors PlanValue returns.
func compileSQL(e Expr, r sqlResolver) (sqlCompiled, error) {
	f, err := compileValue(e, typesOf{r})
	if err != nil {
		return sqlCompiled{}, err
	}
	return renderSQL(f, r), nil
}

// compileFilterSQL compiles e as PlanFilter does and renders it as SQL. It
// returns the errors PlanFilter returns.
func compileFilterSQL(e Expr, r sqlResolver) (sqlCompiled, error) {
	f, err := compileFilter(e, typesOf{r})
	if err != nil {
		return sqlCompiled{}, err
	}
	return renderSQL(f, r), nil
}

// renderSQL renders the compiled f; r resolved every column of it.
func renderSQL(f frag, r sqlResolver) sqlCompiled {
	w := &sqlWriter{r: r}
	w.node(f.n)
	return sqlCompiled{SQL: w.b.String(), Args: w.args, Type: f.typ}
}

// opSQL is the SQL of each operator: between the operands of a binary
// node, after the operand of a test.
var opSQL = [...]string{
	sqlEq: " = ", sqlNe: " <> ", sqlLt: " < ", sqlLe: " <= ", sqlGt: " > ", sqlGe: " >= ",
	sqlIs: " IS ", sqlIsNot: " IS NOT ",
	sqlAdd: " + ", sqlSub: " - ", sqlMul: " * ", sqlDiv: " / ", sqlRem: " % ", sqlConcat: " || ",
	sqlAnd: " AND ", sqlOr: " OR ",
	sqlIsNull: " IS NULL", sqlNotNull: " IS NOT NULL", sqlIsTrue: " IS TRUE", sqlIsNotTrue: " IS NOT TRUE",
	sqlIsFalse: " IS FALSE", sqlIsNotFalse: " IS NOT FALSE",
}

// sqlWriter renders nodes: every constant a placeholder, every column
// its resolver's SQL.
type sqlWriter struct {
	r    sqlResolver
	b    strings.Builder
	args []any
}

func (w *sqlWriter) node(n *sqlNode) {
	b := &w.b
	switch n.kind {
	case sqlConst:
		if n.v == nil {
			b.WriteString("NULL")
			return
		}
		b.WriteByte('?')
		w.args = append(w.args, n.v)
	case sqlColumn:
		c, err := w.r.Resolve(n.path)
		if err != nil {
			panic("expr test: a compiled column does not resolve: " + err.Error())
		}
		b.WriteString(c.SQL)
	case sqlNot:
		b.WriteString("(NOT ")
		w.node(n.args[0])
		b.WriteByte(')')
	case sqlNeg:
		b.WriteString("(- ")
		w.node(n.args[0])
		b.WriteByte(')')
	case sqlBinary:
		b.WriteByte('(')
		w.node(n.args[0])
		b.WriteString(opSQL[n.op])
		w.node(n.args[1])
		b.WriteByte(')')
	case sqlTest:
		b.WriteByte('(')
		w.node(n.args[0])
		b.WriteString(opSQL[n.op])
		b.WriteByte(')')
	case sqlIn:
		b.WriteByte('(')
		w.node(n.args[0])
		if n.not {
			b.WriteString(" NOT")
		}
		if n.v != nil {
			b.WriteString(" IN (SELECT value FROM json_each(?)))")
			w.args = append(w.args, n.v)
			return
		}
		b.WriteString(" IN (")
		w.list(n.args[1:])
		b.WriteString("))")
	case sqlBetween:
		b.WriteByte('(')
		w.node(n.args[0])
		if n.not {
			b.WriteString(" NOT")
		}
		b.WriteString(" BETWEEN ")
		w.node(n.args[1])
		b.WriteString(" AND ")
		w.node(n.args[2])
		b.WriteByte(')')
	case sqlCase:
		operand, whens, thens, els := n.caseParts()
		b.WriteString("CASE ")
		if operand != nil {
			w.node(operand)
			b.WriteByte(' ')
		}
		for i := range whens {
			b.WriteString("WHEN ")
			w.node(whens[i])
			b.WriteString(" THEN ")
			w.node(thens[i])
			b.WriteByte(' ')
		}
		if els != nil {
			b.WriteString("ELSE ")
			w.node(els)
			b.WriteByte(' ')
		}
		b.WriteString("END")
	case sqlCast:
		b.WriteString("CAST(")
		w.node(n.args[0])
		b.WriteString(" AS " + n.text + ")")
	case sqlCall:
		b.WriteString(n.text + "(")
		w.list(n.args)
		b.WriteByte(')')
	default:
		panic("expr test: no SQL for node kind " + strconv.Itoa(int(n.kind)))
	}
}

func (w *sqlWriter) list(ns []*sqlNode) {
	for i, a := range ns {
		if i > 0 {
			w.b.WriteString(", ")
		}
		w.node(a)
	}
}
