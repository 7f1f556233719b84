package expr

import (
	"strconv"
	"strings"
)

// The compiler's output is a tree of sqlNodes: the SQL expression an
// expression compiles to, one node per SQL construct. Two back ends read
// it: sqlText renders it as SQLite SQL with bound arguments (Compile), and
// the evaluator computes it over Arrow columns with SQLite's semantics
// (Plan*). Because both read one tree, the evaluator computes exactly the
// SQL that the row store runs, conversion for conversion.

// sqlKind is the construct of a node.
type sqlKind uint8

const (
	sqlConst   sqlKind = iota // v (nil for NULL), bound as a placeholder unless inline
	sqlColumn                 // a resolved field: text is its SQL, path its field path
	sqlNot                    // NOT args[0]
	sqlNeg                    // - args[0], which SQLite computes as 0 - args[0]
	sqlBinary                 // args[0] op args[1]
	sqlTest                   // args[0] IS [NOT] NULL/TRUE/FALSE (op)
	sqlIn                     // args[0] [NOT] IN (args[1:]), or IN json_each(v) when v is set
	sqlBetween                // args[0] [NOT] BETWEEN args[1] AND args[2]
	sqlCase                   // CASE [operand] WHEN … THEN … [ELSE …] END (see caseParts)
	sqlCast                   // CAST(args[0] AS text), text one of REAL, INTEGER, TEXT, BLOB
	sqlCall                   // text(args...), text a function name
)

// sqlOp is the operator of a sqlBinary or sqlTest node.
type sqlOp uint8

const (
	sqlEq sqlOp = iota
	sqlNe
	sqlLt
	sqlLe
	sqlGt
	sqlGe
	sqlIs    // IS: equal, NULLs equal to each other
	sqlIsNot // IS NOT
	sqlAdd
	sqlSub
	sqlMul
	sqlDiv
	sqlRem
	sqlConcat
	sqlAnd
	sqlOr
	sqlIsNull
	sqlNotNull
	sqlIsTrue
	sqlIsNotTrue
	sqlIsFalse
	sqlIsNotFalse
)

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

// isComparison reports whether op compares its operands.
func (op sqlOp) isComparison() bool { return op <= sqlIsNot }

// sqlNode is one node of compiled SQL.
type sqlNode struct {
	kind sqlKind
	op   sqlOp
	text string
	args []*sqlNode
	v    any      // sqlConst: nil, int64, float64, string or []byte; sqlIn: the JSON list
	path []string // sqlColumn
	// not negates sqlIn and sqlBetween; inline prints a sqlConst as a
	// literal (the integers 0 and 1 only); bare prints a sqlBinary without
	// parentheses; operand and hasElse shape a sqlCase.
	not, inline, bare, operand, hasElse bool
	// fixed is set by the evaluator's planner on nodes that read no
	// column: their value is the same for every row.
	fixed bool
}

func constNode(v any) *sqlNode { return &sqlNode{kind: sqlConst, v: v} }

// literalNode is a constant written into the SQL text: 0 or 1.
func literalNode(v int64) *sqlNode { return &sqlNode{kind: sqlConst, v: v, inline: true} }

func columnNode(sql string, path []string) *sqlNode {
	return &sqlNode{kind: sqlColumn, text: sql, path: path}
}

func unaryNode(kind sqlKind, x *sqlNode) *sqlNode { return &sqlNode{kind: kind, args: []*sqlNode{x}} }

func binaryNode(op sqlOp, l, r *sqlNode) *sqlNode {
	return &sqlNode{kind: sqlBinary, op: op, args: []*sqlNode{l, r}}
}

func testNode(op sqlOp, x *sqlNode) *sqlNode {
	return &sqlNode{kind: sqlTest, op: op, args: []*sqlNode{x}}
}

func callNode(name string, args ...*sqlNode) *sqlNode {
	return &sqlNode{kind: sqlCall, text: name, args: args}
}

func castNode(to string, x *sqlNode) *sqlNode {
	return &sqlNode{kind: sqlCast, text: to, args: []*sqlNode{x}}
}

// caseNode builds CASE [operand] WHEN whens[i] THEN thens[i] … [ELSE els]
// END; operand and els may be nil. Its args are the operand (when
// present), then each WHEN and its THEN, then the ELSE (when present).
func caseNode(operand *sqlNode, whens, thens []*sqlNode, els *sqlNode) *sqlNode {
	n := &sqlNode{kind: sqlCase, operand: operand != nil, hasElse: els != nil}
	if operand != nil {
		n.args = append(n.args, operand)
	}
	for i := range whens {
		n.args = append(n.args, whens[i], thens[i])
	}
	if els != nil {
		n.args = append(n.args, els)
	}
	return n
}

// caseParts splits the args of a sqlCase node.
func (n *sqlNode) caseParts() (operand *sqlNode, whens, thens []*sqlNode, els *sqlNode) {
	args := n.args
	if n.operand {
		operand, args = args[0], args[1:]
	}
	if n.hasElse {
		els, args = args[len(args)-1], args[:len(args)-1]
	}
	for i := 0; i < len(args); i += 2 {
		whens, thens = append(whens, args[i]), append(thens, args[i+1])
	}
	return operand, whens, thens, els
}

// sqlText renders n as SQL, with its bound arguments in placeholder order.
func sqlText(n *sqlNode) (string, []any) {
	var b strings.Builder
	var args []any
	n.render(&b, &args)
	return b.String(), args
}

func (n *sqlNode) render(b *strings.Builder, args *[]any) {
	switch n.kind {
	case sqlConst:
		switch {
		case n.v == nil:
			b.WriteString("NULL")
		case n.inline:
			b.WriteString(strconv.FormatInt(n.v.(int64), 10))
		default:
			b.WriteByte('?')
			*args = append(*args, n.v)
		}
	case sqlColumn:
		b.WriteString(n.text)
	case sqlNot:
		b.WriteString("(NOT ")
		n.args[0].render(b, args)
		b.WriteByte(')')
	case sqlNeg:
		b.WriteString("(- ")
		n.args[0].render(b, args)
		b.WriteByte(')')
	case sqlBinary:
		if !n.bare {
			b.WriteByte('(')
		}
		n.args[0].render(b, args)
		b.WriteString(opSQL[n.op])
		n.args[1].render(b, args)
		if !n.bare {
			b.WriteByte(')')
		}
	case sqlTest:
		b.WriteByte('(')
		n.args[0].render(b, args)
		b.WriteString(opSQL[n.op])
		b.WriteByte(')')
	case sqlIn:
		b.WriteByte('(')
		n.args[0].render(b, args)
		if n.not {
			b.WriteString(" NOT")
		}
		if n.v != nil {
			b.WriteString(" IN (SELECT value FROM json_each(?)))")
			*args = append(*args, n.v)
			return
		}
		b.WriteString(" IN (")
		renderList(b, args, n.args[1:])
		b.WriteString("))")
	case sqlBetween:
		b.WriteByte('(')
		n.args[0].render(b, args)
		if n.not {
			b.WriteString(" NOT")
		}
		b.WriteString(" BETWEEN ")
		n.args[1].render(b, args)
		b.WriteString(" AND ")
		n.args[2].render(b, args)
		b.WriteByte(')')
	case sqlCase:
		operand, whens, thens, els := n.caseParts()
		b.WriteString("CASE ")
		if operand != nil {
			operand.render(b, args)
			b.WriteByte(' ')
		}
		for i := range whens {
			b.WriteString("WHEN ")
			whens[i].render(b, args)
			b.WriteString(" THEN ")
			thens[i].render(b, args)
			b.WriteByte(' ')
		}
		if els != nil {
			b.WriteString("ELSE ")
			els.render(b, args)
			b.WriteByte(' ')
		}
		b.WriteString("END")
	case sqlCast:
		b.WriteString("CAST(")
		n.args[0].render(b, args)
		b.WriteString(" AS " + n.text + ")")
	case sqlCall:
		b.WriteString(n.text + "(")
		renderList(b, args, n.args)
		b.WriteByte(')')
	}
}

func renderList(b *strings.Builder, args *[]any, ns []*sqlNode) {
	for i, a := range ns {
		if i > 0 {
			b.WriteString(", ")
		}
		a.render(b, args)
	}
}
