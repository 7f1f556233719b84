package expr

import (
	"math"
	"math/big"
	"math/bits"
	"strconv"
)

// SQLite converts between numbers and text with its own algorithms, which
// are not always correctly rounded: CAST(x AS REAL) of text, CAST(x AS
// TEXT) of a REAL, the numbers that json_array writes and round() all
// depend on them. The evaluator reproduces them bit for bit (SQLite
// 3.54, the version modernc.org/sqlite v1.62.0 embeds), so that a value
// computed over Arrow columns is the value the SQL computes. The
// algorithms: a decimal significand s of at most 19 digits scales to
// binary by one 64×96-bit multiplication with a table of powers of ten
// (fp10to2), a binary significand scales to 18 decimal digits by one
// 64×64-bit multiplication (fp2to10), and text renders those digits the
// way SQLite's printf does.

// pow10Base[p] is 10^p (p < 27) normalised to 64 bits with the top bit
// set, rounded; pow10Scale[g+13] is 10^(27g) (g in [-13, 12]) normalised
// to 96 bits, rounded, as a 64-bit hi and a 32-bit lo (the slot of g = 0,
// which the lookup never needs, holds 10^-1, truncated). These are the
// values of SQLite's own tables, computed here.
var pow10Base [27]uint64

var pow10Scale [26]struct {
	hi uint64
	lo uint32
}

func init() {
	ten := big.NewInt(10)
	// top returns x normalised to 96 bits, rounded to nearest (or
	// truncated) at the last.
	top := func(x *big.Int, round bool) (uint64, uint32) {
		y := new(big.Int).Set(x)
		if shift := x.BitLen() - 96; shift > 0 {
			if round {
				y.Add(y, new(big.Int).Lsh(big.NewInt(1), uint(shift-1)))
			}
			y.Rsh(y, uint(shift))
			if y.BitLen() > 96 {
				y.Rsh(y, 1)
			}
		} else {
			y.Lsh(y, uint(-shift))
		}
		return new(big.Int).Rsh(y, 32).Uint64(), uint32(y.Uint64())
	}
	for p := range pow10Base {
		hi, lo := top(new(big.Int).Exp(ten, big.NewInt(int64(p)), nil), false)
		if lo >= 1<<31 {
			hi++
		}
		pow10Base[p] = hi
	}
	for i := range pow10Scale {
		g := i - 13
		switch {
		case g == 0:
			pow10Scale[i].hi, pow10Scale[i].lo = top(scaledInverse(ten), false)
		case g > 0:
			pow10Scale[i].hi, pow10Scale[i].lo = top(new(big.Int).Exp(ten, big.NewInt(int64(27*g)), nil), true)
		default:
			pow10Scale[i].hi, pow10Scale[i].lo = top(scaledInverse(new(big.Int).Exp(ten, big.NewInt(int64(-27*g)), nil)), true)
		}
	}
}

// scaledInverse returns 1/d as an integer with at least 200 significant
// bits (its binary exponent does not matter to the table).
func scaledInverse(d *big.Int) *big.Int {
	shift := uint(d.BitLen() + 200)
	q := new(big.Int).Lsh(big.NewInt(1), shift)
	return q.Quo(q, d)
}

// powerOfTen returns the 64 most significant bits of 10^p (p in [-348,
// 347]) and the 32 after them, as SQLite's powerOfTen computes them.
func powerOfTen(p int) (uint64, uint32) {
	var g, n int
	switch {
	case p == -1:
		return pow10Scale[13].hi, pow10Scale[13].lo
	case p < 0:
		g, n = p/27, p%27
		if n != 0 {
			g--
			n += 27
		}
	case p < 27:
		return pow10Base[p], 0
	default:
		g, n = p/27, p%27
	}
	s := pow10Scale[g+13]
	if n == 0 {
		return s.hi, s.lo
	}
	x, lo := mul160(s.hi, s.lo, pow10Base[n])
	if x&(1<<63) == 0 {
		x = x<<1 | uint64(lo>>31&1)
		lo = lo<<1 | 1
	}
	return x, lo
}

// mul160 multiplies the 96-bit a<<32|aLo by b and returns the 64 most
// significant bits of the 160-bit product and the 32 after them.
func mul160(a uint64, aLo uint32, b uint64) (uint64, uint32) {
	h, l := bits.Mul64(a, b)
	h2, l2 := bits.Mul64(uint64(aLo), b)
	// product = (h:l)<<32 + (h2:l2), as three words w2:w1:w0.
	w0 := l << 32
	w1 := h<<32 | l>>32
	w2 := h >> 32
	var c uint64
	w0, c = bits.Add64(w0, l2, 0)
	w1, c = bits.Add64(w1, h2, c)
	w2 += c
	_ = w0
	return w2<<32 | w1>>32, uint32(w1)
}

// pwr10to2 returns floor(log2(10^p)); pwr2to10 returns floor(log10(2^p)).
func pwr10to2(p int) int { return (p * 108853) >> 15 }
func pwr2to10(p int) int { return (p * 78913) >> 18 }

// fp2to10 returns d and p with m·2^e ≈ d·10^p, d having at least n
// significant digits (m has its top bit set). With n = 18 the last digit
// is rounded, else truncated.
func fp2to10(m uint64, e, n int) (uint64, int) {
	p := n - 1 - pwr2to10(e+63)
	pw, _ := powerOfTen(p)
	h, _ := bits.Mul64(m, pw)
	if n == 18 {
		h >>= uint(-(e + pwr10to2(p) + 2))
		return (h + h<<1&2) >> 1, -p
	}
	return h >> uint(-(e + pwr10to2(p) + 1)), -p
}

// fp10to2 returns the float64 nearest d·10^p as SQLite computes it (d > 0
// with its top bit clear).
func fp10to2(d uint64, p int) float64 {
	if p < -348 {
		return 0
	}
	if p > 347 {
		return math.Inf(1)
	}
	b := 64 - bits.LeadingZeros64(d)
	lp := pwr10to2(p)
	e := 53 - b - lp
	if e > 1074 {
		if e >= 1130 {
			return 0
		}
		e = 1074
	}
	s := uint(-(e - (64 - b) + lp + 3))
	pwh, pwl := powerOfTen(p)
	if pwl != 0 {
		pwh++
		pwl = ^pwl
	}
	x := d << uint(64-b)
	hi, lo := bits.Mul64(x, pwh)
	mid1 := uint32(lo >> 32)
	sticky := uint64(1)
	if hi&(1<<s-1) == 0 {
		h2, _ := bits.Mul64(x, uint64(pwl)<<32)
		mid2 := uint32(h2 >> 32)
		sticky = b2u(mid1-mid2 > 1)
		hi -= b2u(mid1 < mid2)
	}
	u := hi>>s | sticky
	if u >= 1<<55-2 {
		u = u>>1 | u&1
		e--
	}
	m := (u + 1 + u>>2&1) >> 2
	if e <= -972 {
		return math.Inf(1)
	}
	if m&(1<<52) != 0 {
		m = m&^(1<<52) | uint64(1075-e)<<52
	}
	return math.Float64frombits(m)
}

// fpDigits is a float64 decoded into decimal digits: the value is
// 0.digits × 10^dp with sign neg; special is 1 for an infinity and 2 for
// NaN (then digits is empty).
type fpDigits struct {
	neg     bool
	digits  []byte
	dp      int
	special int
}

// fpDecode decodes r as SQLite's sqlite3FpDecode does: to iRound
// significant digits when iRound > 0, or to -iRound digits after the
// decimal point when iRound ≤ 0, and at most mxRound digits in all; 17
// digits become fewer when fewer read back as r.
func fpDecode(r float64, iRound, mxRound int) fpDigits {
	var p fpDigits
	switch {
	case r < 0:
		p.neg, r = true, -r
	case r == 0:
		return fpDigits{digits: []byte{'0'}, dp: 1}
	}
	v := math.Float64bits(r)
	e := int(v >> 52 & 0x7ff)
	if e == 0x7ff {
		p.special = 1
		if v != 0x7ff0000000000000 {
			p.special = 2
		}
		return p
	}
	v &= 1<<52 - 1
	if e == 0 {
		nn := bits.LeadingZeros64(v)
		v <<= uint(nn)
		e = -1074 - nn
	} else {
		v = v<<11 | 1<<63
		e -= 1086
	}
	want := 18
	if iRound > 0 && iRound < 18 {
		want = iRound + 1
	}
	d, exp := fp2to10(v, e, want)
	// One spare position in front for a rounding carry.
	buf := append([]byte{'0'}, strconv.AppendUint(nil, d, 10)...)
	z := buf[1:]
	n := len(z)
	p.dp = n + exp
	if iRound <= 0 {
		iRound = p.dp - iRound
		if iRound == 0 && z[0] >= '5' {
			iRound = 1
			z = buf
			n++
			p.dp++
		}
	}
	if iRound > 0 && (iRound < n || n > mxRound) {
		iRound = min(iRound, mxRound)
		if iRound == 17 {
			iRound = shorter(z, n, exp, p.dp, r, iRound)
		}
		n = iRound
		if z[iRound] >= '5' {
			for j := iRound - 1; ; j-- {
				z[j]++
				if z[j] <= '9' {
					break
				}
				z[j] = '0'
				if j == 0 {
					buf[0] = '1'
					z = buf[:len(z)+1]
					n++
					p.dp++
					break
				}
			}
		}
	}
	for z[n-1] == '0' {
		n--
	}
	p.digits = z[:n]
	return p
}

// shorter returns the number of digits (less than 17) that fpDecode keeps
// of the 17-digit rendering z (n digits, value z·10^exp, decimal point
// after dp digits) of r when fewer
// digits read back as r, else 17.
func shorter(z []byte, n, exp, dp int, r float64, iRound int) int {
	prefix := func(k int) uint64 {
		var v uint64
		for _, c := range z[:k] {
			v = v*10 + uint64(c-'0')
		}
		return v
	}
	if z[15] == '9' && z[14] == '9' {
		jj := 14
		for jj > 0 && z[jj-1] == '9' {
			jj--
		}
		v := uint64(1)
		if jj > 0 {
			v = prefix(jj) + 1
		}
		if r == fp10to2(v, exp+n-jj) {
			return jj + 1
		}
		return iRound
	}
	if dp >= n || (z[15] == '0' && z[14] == '0' && z[13] == '0') {
		jj := 13
		for z[jj-1] == '0' {
			jj--
		}
		if r == fp10to2(prefix(jj), exp+n-jj) {
			return jj + 1
		}
	}
	return iRound
}

// sqlRealText returns the text of the REAL r as SQLite's CAST(r AS TEXT)
// writes it (printf "%!.17g"); NaN never reaches it (SQLite holds NaN as
// NULL).
func sqlRealText(r float64) string { return formatGeneric(r, 17, false) }

// sqlJSONReal returns the number json_array writes for the REAL r (printf
// "%!0.17g": infinities as ±9.0e+999).
func sqlJSONReal(r float64) string { return formatGeneric(r, 17, true) }

// formatGeneric renders r like SQLite's printf "%!.<precision>g", with the
// '0' flag when zeropad is set.
func formatGeneric(r float64, precision int, zeropad bool) string {
	d := fpDecode(r, precision, 20)
	if d.special == 2 {
		if zeropad {
			return "null"
		}
		return "NaN"
	}
	if d.special == 1 {
		if !zeropad {
			if d.neg {
				return "-Inf"
			}
			return "Inf"
		}
		d.digits, d.dp = []byte{'9'}, 1000
	}
	exp := d.dp - 1
	precision--
	if exp < -4 || exp > precision {
		return renderFloat(d, 0, true)
	}
	return renderFloat(d, precision-exp, false)
}

// formatFixed renders r like SQLite's printf "%!.<precision>f".
func formatFixed(r float64, precision int) string {
	d := fpDecode(r, -precision, 20)
	if d.special != 0 {
		// round() never formats these: they have no fraction.
		return strconv.FormatFloat(r, 'f', -1, 64)
	}
	return renderFloat(d, precision, false)
}

// renderFloat writes d as SQLite's printf does with the '!' flag: in
// exponent form when expForm is set (one digit before the point), else
// with precision digits after the point; trailing zeros are removed but a
// point is always followed by a digit.
func renderFloat(d fpDigits, precision int, expForm bool) string {
	var b []byte
	if d.neg {
		b = append(b, '-')
	}
	e2 := d.dp - 1
	if expForm {
		e2 = 0
		precision = max(len(d.digits)-1, 0)
	}
	j := 0
	if e2 < 0 {
		b = append(b, '0')
	} else {
		j = min(e2+1, len(d.digits))
		b = append(b, d.digits[:j]...)
		for range e2 + 1 - j {
			b = append(b, '0')
		}
		e2 = -1
	}
	b = append(b, '.')
	if e2 < -1 && precision > 0 {
		nn := min(-1-e2, precision)
		for range nn {
			b = append(b, '0')
		}
		precision -= nn
	}
	if precision > 0 {
		nn := min(len(d.digits)-j, precision)
		if nn > 0 {
			b = append(b, d.digits[j:j+nn]...)
		}
	}
	for b[len(b)-1] == '0' {
		b = b[:len(b)-1]
	}
	if b[len(b)-1] == '.' {
		b = append(b, '0')
	}
	if expForm {
		exp := d.dp - 1
		b = append(b, 'e')
		if exp < 0 {
			b = append(b, '-')
			exp = -exp
		} else {
			b = append(b, '+')
		}
		if exp >= 100 {
			b = append(b, byte('0'+exp/100))
			exp %= 100
		}
		b = append(b, byte('0'+exp/10), byte('0'+exp%10))
	}
	return string(b)
}

// sqlAtoF returns the REAL that SQLite reads from text s
// (sqlite3AtoF): the longest prefix that is a number, 0 when there is
// none. Digits past the 19th or 20th are dropped, not rounded.
func sqlAtoF(s string) float64 {
	const limit = (math.MaxUint64 - 9) / 10
	at := func(i int) byte {
		if i < len(s) {
			return s[i]
		}
		return 0
	}
	i, neg := 0, false
	var sig uint64
	d, state := 0, 0
	for at(i) == ' ' || (at(i) >= '\t' && at(i) <= '\r') {
		i++
	}
	switch at(i) {
	case '-':
		neg = true
		i++
	case '+':
		i++
	}
	if isDigit(rune(at(i))) {
		state = 1
		for isDigit(rune(at(i))) {
			sig = sig*10 + uint64(at(i)-'0')
			i++
			if sig >= limit {
				for isDigit(rune(at(i))) {
					i++
					d++
				}
				break
			}
		}
	}
	if at(i) == '.' {
		i++
		if isDigit(rune(at(i))) {
			state |= 1
			for ; isDigit(rune(at(i))); i++ {
				if sig < limit {
					sig = sig*10 + uint64(at(i)-'0')
					d--
				}
			}
		} else if state == 0 {
			return 0
		}
	} else if state == 0 {
		return 0
	}
	if c := at(i); c == 'e' || c == 'E' {
		i++
		esign := 1
		switch at(i) {
		case '-':
			esign = -1
			i++
		case '+':
			i++
		}
		if isDigit(rune(at(i))) {
			exp := 0
			for ; isDigit(rune(at(i))); i++ {
				exp = min(exp*10+int(at(i)-'0'), 10000)
			}
			d += esign * exp
		}
	}
	r := 0.0
	if sig != 0 {
		r = fp10to2(sig, d)
	}
	if neg {
		r = -r
	}
	return r
}

// sqlRealToInt returns the INTEGER SQLite makes of the REAL r: truncated
// toward zero, saturated at the int64 range.
func sqlRealToInt(r float64) int64 {
	switch {
	case r < -9.223372036854775e18:
		return math.MinInt64
	case r > 9.223372036854775e18:
		return math.MaxInt64
	}
	return int64(r)
}

// sqlTextToInt returns the INTEGER SQLite makes of text s
// (sqlite3Atoi64): the leading integer after spaces and a sign, saturated
// at the int64 range, 0 when there is none.
func sqlTextToInt(s string) int64 {
	i := 0
	for i < len(s) && (s[i] == ' ' || (s[i] >= '\t' && s[i] <= '\r')) {
		i++
	}
	neg := false
	if i < len(s) && (s[i] == '-' || s[i] == '+') {
		neg = s[i] == '-'
		i++
	}
	for i < len(s) && s[i] == '0' {
		i++
	}
	var u uint64
	n := 0
	for ; i < len(s) && s[i] >= '0' && s[i] <= '9'; i++ {
		u = u*10 + uint64(s[i]-'0')
		n++
	}
	switch {
	case n > 19 || (n == 19 && u > math.MaxInt64 && !(neg && u == 1<<63)):
		if neg {
			return math.MinInt64
		}
		return math.MaxInt64
	case neg:
		return -int64(u)
	}
	return int64(u)
}

// sqlRound returns SQLite's round(r, n) for n clamped to [0, 30].
func sqlRound(r float64, n int64) float64 {
	n = min(max(n, 0), 30)
	switch {
	case r < -4503599627370496.0 || r > 4503599627370496.0:
		return r
	case n == 0:
		half := 0.5
		if r < 0 {
			half = -0.5
		}
		return float64(int64(r + half))
	}
	return sqlAtoF(formatFixed(r, int(n)))
}
