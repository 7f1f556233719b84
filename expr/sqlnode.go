package expr

// The compiler's output is a tree of sqlNodes: the SQLite expression an
// expression compiles to, one node per SQL construct, which the evaluator
// (machine.go) computes over columns with SQLite's semantics. The tests
// render the tree as SQL text and run it in SQLite, as the oracle the
// evaluator is checked against.

// sqlKind is the construct of a node.
type sqlKind uint8

const (
	sqlConst   sqlKind = iota // v (nil for NULL)
	sqlColumn                 // a resolved field: path is its field path
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

// isComparison reports whether op compares its operands.
func (op sqlOp) isComparison() bool { return op <= sqlIsNot }

// sqlNode is one node of compiled SQL.
type sqlNode struct {
	kind sqlKind
	op   sqlOp
	text string // sqlCall: the function's name; sqlCast: the type
	args []*sqlNode
	v    any      // sqlConst: nil, int64, float64, string or []byte; sqlIn: the JSON list
	path []string // sqlColumn
	// not negates sqlIn and sqlBetween; operand and hasElse shape a
	// sqlCase.
	not, operand, hasElse bool
	// fixed is set by the evaluator's planner on nodes that read no
	// column: their value is the same for every row.
	fixed bool
}

func constNode(v any) *sqlNode { return &sqlNode{kind: sqlConst, v: v} }

func columnNode(path []string) *sqlNode { return &sqlNode{kind: sqlColumn, path: path} }

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
