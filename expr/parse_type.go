package expr

import (
	"strconv"
	"strings"
)

// simpleTypes maps SQL type names without parameters to types.
var simpleTypes = map[string]Type{
	"boolean": {Kind: KindBool}, "bool": {Kind: KindBool},
	"tinyint": {Kind: KindInt}, "smallint": {Kind: KindInt}, "int": {Kind: KindInt},
	"integer": {Kind: KindInt}, "bigint": {Kind: KindInt},
	"float": {Kind: KindFloat}, "real": {Kind: KindFloat}, "double": {Kind: KindFloat},
	"varchar": {Kind: KindString}, "string": {Kind: KindString}, "text": {Kind: KindString},
	"char": {Kind: KindString},
	"date": {Kind: KindDate32}, "time": {Kind: KindTime, Unit: Nano},
	"timestamp": {Kind: KindTimestamp, Unit: Nano},
	"binary":    {Kind: KindBinary}, "varbinary": {Kind: KindBinary},
	"bytea": {Kind: KindBinary}, "blob": {Kind: KindBinary},
	"decimal": decimalType(38, 10), "numeric": decimalType(38, 10),
}

// typeName parses a type of CAST: a name from simpleTypes, DOUBLE
// PRECISION, VARCHAR(n), TIMESTAMP(p) with p in 0–9, or DECIMAL(p[,s]) with
// 1 ≤ p ≤ 76 and 0 ≤ s ≤ p. It returns a syntax error otherwise.
func (p *parser) typeName() (Type, error) {
	t := p.next()
	name := strings.ToLower(t.text)
	typ, ok := simpleTypes[name]
	if t.kind != tIdent || !ok {
		return Type{}, syntaxErr(t.pos, "unknown type %s", t.describe())
	}
	if name == "double" {
		p.accept("precision")
	}
	if !p.peek().is("(") {
		return typ, nil
	}
	open := p.next().pos
	args, err := p.typeArgs()
	if err != nil {
		return Type{}, err
	}
	switch {
	case (typ.Kind == KindString || typ.Kind == KindBinary) && len(args) == 1:
		return typ, nil
	case typ.Kind == KindTimestamp && len(args) == 1 && args[0] <= 9:
		typ.Unit = TimeUnit((args[0] + 2) / 3)
		return typ, nil
	case typ.Kind == KindDecimal && len(args) <= 2 && args[0] >= 1 && args[0] <= 76:
		typ.Precision, typ.Scale = args[0], 0
		if len(args) == 2 {
			typ.Scale = args[1]
		}
		if typ.Scale <= typ.Precision {
			return typ, nil
		}
	}
	return Type{}, syntaxErr(open, "invalid parameters for type %s", strings.ToUpper(name))
}

// typeArgs parses "n[, n...])" after the opening parenthesis of a type. It
// returns a syntax error for a non-integer parameter.
func (p *parser) typeArgs() ([]int, error) {
	var out []int
	for {
		t := p.next()
		n, err := strconv.Atoi(t.text)
		if t.kind != tNumber || err != nil {
			return nil, syntaxErr(t.pos, "expected a type parameter, found %s", t.describe())
		}
		out = append(out, n)
		if p.accept(")") {
			return out, nil
		}
		if err := p.expect(","); err != nil {
			return nil, err
		}
	}
}
