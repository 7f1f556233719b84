package expr

import (
	"errors"
	"math"
	"math/big"
	"strconv"
	"strings"
)

// maxExponent bounds the exponent of decimal text, so that parsing cannot
// build enormous numbers.
const maxExponent = 400

var (
	errDecimalSyntax = errors.New("malformed decimal")
	errDecimalRange  = errors.New("value out of range for decimal")
)

// parseDecimal parses [+-]digits[.digits][e[+-]digits] (digits may be
// omitted on one side of the point) into an exact rational. It returns
// errDecimalSyntax on bad input.
func parseDecimal(s string) (*big.Rat, error) {
	s = strings.TrimSpace(s)
	body := strings.TrimLeft(s, "+-")
	if len(s)-len(body) > 1 || body == "" {
		return nil, errDecimalSyntax
	}
	mant, exp, hasExp := strings.Cut(strings.ToLower(body), "e")
	intPart, fracPart, _ := strings.Cut(mant, ".")
	if intPart+fracPart == "" || !allDigits(intPart) || !allDigits(fracPart) {
		return nil, errDecimalSyntax
	}
	if hasExp {
		e, err := strconv.Atoi(exp)
		if err != nil || e > maxExponent || e < -maxExponent {
			return nil, errDecimalSyntax
		}
	}
	r, ok := new(big.Rat).SetString(s)
	if !ok {
		return nil, errDecimalSyntax
	}
	return r, nil
}

func allDigits(s string) bool {
	for _, c := range s {
		if !isDigit(c) {
			return false
		}
	}
	return true
}

// pow10 returns 10^n as a rational (n may be negative).
func pow10(n int) *big.Rat {
	p := new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(abs(n))), nil)
	if n < 0 {
		return new(big.Rat).SetFrac(big.NewInt(1), p)
	}
	return new(big.Rat).SetInt(p)
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}

// unscaled returns r×10^scale rounded half away from zero.
func unscaled(r *big.Rat, scale int) *big.Int {
	x := new(big.Rat).Mul(r, pow10(scale))
	q, m := new(big.Int).QuoRem(x.Num(), x.Denom(), new(big.Int))
	// Round half away from zero: |2m| >= denom.
	if m.Sign() != 0 && new(big.Int).Abs(new(big.Int).Lsh(m, 1)).Cmp(x.Denom()) >= 0 {
		q.Add(q, big.NewInt(int64(x.Sign())))
	}
	return q
}

// formatDecimal renders the unscaled value u at scale as decimal text with
// exactly scale fraction digits (none when scale ≤ 0).
func formatDecimal(u *big.Int, scale int) string {
	if scale <= 0 {
		return new(big.Int).Mul(u, pow10(-scale).Num()).String()
	}
	digits := new(big.Int).Abs(u).String()
	if len(digits) <= scale {
		digits = strings.Repeat("0", scale-len(digits)+1) + digits
	}
	s := digits[:len(digits)-scale] + "." + digits[len(digits)-scale:]
	if u.Sign() < 0 {
		s = "-" + s
	}
	return s
}

// decimalOf returns the exact value of a decimal's storage value v: int64
// (unscaled at scale), float64 or decimal text. It returns an error for
// non-finite floats, malformed text and other types.
func decimalOf(v any, scale int) (*big.Rat, error) {
	switch v := v.(type) {
	case int64:
		return new(big.Rat).Mul(new(big.Rat).SetInt64(v), pow10(-scale)), nil
	case float64:
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, errDecimalRange
		}
		return new(big.Rat).SetFloat64(v), nil
	case string:
		return parseDecimal(v)
	}
	return nil, errDecimalSyntax
}

// decimalStorage returns r as the storage value of a decimal with the given
// scale and precision: int64 unscaled when precision ≤ 18, else canonical
// text. precision 0 skips the range check (and stores as text when asked by
// asText). It returns errDecimalRange when r does not fit.
func decimalStorage(r *big.Rat, scale, precision int, asText bool) (any, error) {
	u := unscaled(r, scale)
	if precision > 0 && len(new(big.Int).Abs(u).String()) > precision && u.Sign() != 0 {
		return nil, errDecimalRange
	}
	if asText {
		return formatDecimal(u, scale), nil
	}
	if !u.IsInt64() {
		return nil, errDecimalRange
	}
	return u.Int64(), nil
}

// decimalType returns the decimal type with precision p and scale s.
func decimalType(p, s int) Type {
	return Type{Kind: KindDecimal, Precision: p, Scale: s}
}
