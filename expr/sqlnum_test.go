package expr

import (
	"database/sql"
	"math"
	"math/rand"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// numberDB opens an empty database for the conversion oracles.
func numberDB(t testing.TB) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlite", filepath.Join(t.TempDir(), "n.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// randomFloat returns floats of every magnitude and shape: random bit
// patterns, short decimals, integers, halves and powers of two.
func randomFloat(r *rand.Rand) float64 {
	switch r.Intn(7) {
	case 0:
		for {
			f := math.Float64frombits(r.Uint64())
			if !math.IsNaN(f) {
				return f
			}
		}
	case 1:
		f, _ := strconv.ParseFloat(strconv.Itoa(r.Intn(100000)-50000)+"e"+strconv.Itoa(r.Intn(40)-20), 64)
		return f
	case 2:
		return float64(r.Int63()>>uint(r.Intn(63))) * float64(1-2*r.Intn(2))
	case 3:
		return (float64(r.Intn(2000)) + 0.5) / math.Pow10(r.Intn(5))
	case 4:
		return math.Ldexp(1, r.Intn(2100)-1074)
	case 5:
		return r.NormFloat64() * math.Pow10(r.Intn(30)-15)
	}
	return float64(r.Intn(1000)) / float64(r.Intn(999)+1)
}

// randomDecimalText returns decimal text with up to 30 digits, fractions
// and exponents.
func randomDecimalText(r *rand.Rand) string {
	var b strings.Builder
	if r.Intn(3) == 0 {
		b.WriteByte('-')
	}
	for range 1 + r.Intn(25) {
		b.WriteByte(byte('0' + r.Intn(10)))
	}
	if r.Intn(2) == 0 {
		b.WriteByte('.')
		for range r.Intn(12) {
			b.WriteByte(byte('0' + r.Intn(10)))
		}
	}
	if r.Intn(4) == 0 {
		b.WriteString("e" + strconv.Itoa(r.Intn(700)-350))
	}
	return b.String()
}

// TestSQLiteNumberText checks the conversions between numbers and text
// against SQLite's own: CAST of a REAL to text, json_array of a REAL,
// CAST of text to REAL and INTEGER, CAST of a REAL to INTEGER and round().
func TestSQLiteNumberText(t *testing.T) {
	db := numberDB(t)
	r := rand.New(rand.NewSource(5))
	n := 20000
	if testing.Short() {
		n = 2000
	}
	floats := []float64{0, 1, -1, 0.1, 0.5, 1.5, 100, 1e15, 1e16, 1e17, 1.0 / 3, 0.1 + 0.2, 49.47, 9.223372036854776e18,
		1e-7, 2.5e-5, 1e21, 123456.7, 5e-324, math.MaxFloat64, math.SmallestNonzeroFloat64, math.Inf(1), math.Inf(-1),
		math.Ldexp(1, -27), 1.005, 0.285, 1234.5678, -0.5, 2.5, 4503599627370495.5, 4503599627370497}
	for range n {
		floats = append(floats, randomFloat(r))
	}
	text, err := db.Prepare(`SELECT CAST(? AS TEXT), json_array(?), CAST(? AS INTEGER), round(?), round(?, ?)`)
	if err != nil {
		t.Fatal(err)
	}
	defer text.Close()
	for _, f := range floats {
		var got, js string
		var asInt int64
		var r0, rn sql.NullFloat64
		digits := int64(r.Intn(12))
		if err := text.QueryRow(f, f, f, f, f, digits).Scan(&got, &js, &asInt, &r0, &rn); err != nil {
			t.Fatalf("%v: %v", f, err)
		}
		if want := sqlRealText(f); got != want {
			t.Errorf("CAST(%v AS TEXT) = %q, we give %q", f, got, want)
		}
		if want := "[" + sqlJSONReal(f) + "]"; js != want {
			t.Errorf("json_array(%v) = %s, we give %s", f, js, want)
		}
		if want := sqlRealToInt(f); asInt != want {
			t.Errorf("CAST(%v AS INTEGER) = %d, we give %d", f, asInt, want)
		}
		if want := sqlRound(f, 0); !sameFloat(r0.Float64, want) {
			t.Errorf("round(%v) = %v, we give %v", f, r0.Float64, want)
		}
		if want := sqlRound(f, digits); !sameFloat(rn.Float64, want) {
			t.Errorf("round(%v, %d) = %v, we give %v", f, digits, rn.Float64, want)
		}
		if t.Failed() {
			return
		}
	}
	parse, err := db.Prepare(`SELECT CAST(? AS REAL), CAST(? AS INTEGER)`)
	if err != nil {
		t.Fatal(err)
	}
	defer parse.Close()
	texts := []string{"0", "-0", "1e400", "-1e400", "1e-400", "12345678901234567890.1234", "9223372036854775807", "9223372036854775808",
		"-9223372036854775808", "-9223372036854775809", "00012", " 42 ", "+7", "1e5", ".5", "-.5", "5.", "1.7976931348623157e308",
		"4.9406564584124654e-324", "2.4703282292062327e-324", "123abc", "", "-", "e5", "0.30000000000000004", "18446744073709551615",
		"184467440737095516150", "99999999999999999999", "1844674407370955161", "1844674407370955162"}
	for range n {
		texts = append(texts, randomDecimalText(r))
	}
	for _, f := range floats[:n/4] {
		texts = append(texts, strconv.FormatFloat(f, 'g', -1, 64))
	}
	for _, s := range texts {
		var f float64
		var i int64
		if err := parse.QueryRow(s, s).Scan(&f, &i); err != nil {
			t.Fatalf("%q: %v", s, err)
		}
		if want := sqlAtoF(s); !sameFloat(f, want) {
			t.Errorf("CAST(%q AS REAL) = %v, we give %v", s, f, want)
		}
		if want := sqlTextToInt(s); i != want {
			t.Errorf("CAST(%q AS INTEGER) = %d, we give %d", s, i, want)
		}
		if t.Failed() {
			return
		}
	}
}

// sameFloat reports whether a and b are the same float64, bit for bit
// (NaNs alike).
func sameFloat(a, b float64) bool {
	return math.Float64bits(a) == math.Float64bits(b) || (a != a && b != b)
}
