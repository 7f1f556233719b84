package expr

import (
	"math"
	"math/big"
	"math/rand"
	"slices"
	"strings"
	"testing"

	"github.com/lancens/lancens/store"
)

// memColumns serves columns from memory by path joined with "/"; paths
// that res resolves but vals lacks are not in memory, others are unknown
// with res's error.
type memColumns struct {
	n    int
	vals map[string]*Values
	res  sqlResolver
}

func (m memColumns) Len() int { return m.n }

func (m memColumns) Column(path []string) (*Values, bool, error) {
	if v, ok := m.vals[strings.Join(path, "/")]; ok {
		return v, true, nil
	}
	if _, err := m.res.Resolve(path); err != nil {
		return nil, false, err
	}
	return nil, false, nil
}

// toInt64 returns an int or int64 as int64, and 0 for anything else.
func toInt64(x any) int64 {
	switch x := x.(type) {
	case int:
		return int64(x)
	case int64:
		return x
	}
	return 0
}

// valuesOf returns the column of type t whose rows hold vs (nil: NULL) as
// stored in SQLite. Kinds Values does not hold get only the type.
func valuesOf(t Type, vs []any) *Values {
	v := &Values{Type: t}
	if !inValues(t) {
		return v
	}
	valid := make([]bool, len(vs))
	for i, x := range vs {
		valid[i] = x != nil
		switch t.Kind {
		case KindBool:
			v.Bools = append(v.Bools, toInt64(x) != 0)
		case KindFloat:
			f, _ := x.(float64)
			v.Floats = append(v.Floats, f)
		case KindString:
			s, _ := x.(string)
			v.Strings = append(v.Strings, s)
		default:
			v.Ints = append(v.Ints, toInt64(x))
		}
	}
	if slices.Contains(valid, false) {
		v.Valid = valid
	}
	return v
}

// inValues reports whether Values holds values of type t.
func inValues(t Type) bool {
	switch t.Kind {
	case KindBool, KindInt, KindFloat, KindString, KindDate32, KindDate64, KindTimestamp, KindTime, KindDuration:
		return true
	}
	return t.Kind == KindDecimal && !t.textDecimal()
}

// testMemColumns returns the rows of table t (testRows) as memColumns.
func testMemColumns() memColumns {
	m := memColumns{n: len(testRows), vals: map[string]*Values{}, res: testColumns}
	for path, col := range testColumns {
		name := strings.TrimSuffix(strings.TrimPrefix(col.SQL, `t."`), `"`)
		j := slices.Index(testColumnNames, name)
		vs := make([]any, len(testRows))
		for i, row := range testRows {
			vs[i] = row[j]
		}
		m.vals[path] = valuesOf(col.Type, vs)
	}
	return m
}

// bitmapIDs returns the ids (1-based row numbers) of the bits set in rows.
func bitmapIDs(rows []uint64, n int) []int64 {
	ids := []int64{}
	for i := range n {
		if rows[i/64]&(1<<(i%64)) != 0 {
			ids = append(ids, int64(i+1))
		}
	}
	return ids
}

// evalSrc parses src and evaluates it over cols.
func evalSrc(t *testing.T, src string, cols Columns) ([]uint64, bool, error) {
	t.Helper()
	e, err := Parse(src)
	if err != nil {
		t.Fatalf("%s: %v", src, err)
	}
	return EvalFilter(e, cols)
}

// readsOutsideValues reports whether src reads a column of a kind Values
// does not hold (then EvalFilter leaves it to SQL).
func readsOutsideValues(t *testing.T, src string, res testResolver) bool {
	e, err := Parse(src)
	if err != nil {
		t.Fatal(err)
	}
	for _, path := range fieldPaths(e) {
		if c, ok := res[strings.Join(path, "/")]; ok && !inValues(c.Type) {
			return true
		}
	}
	return false
}

// TestEvalFilterCases checks EvalFilter on the filters of TestFilters:
// the same rows, and ok unless a column is not in memory.
func TestEvalFilterCases(t *testing.T) {
	cols := testMemColumns()
	for _, tt := range filterCases {
		rows, ok, err := evalSrc(t, tt.src, cols)
		if err != nil {
			t.Errorf("%s: %v", tt.src, err)
			continue
		}
		if ok == readsOutsideValues(t, tt.src, testColumns) {
			t.Errorf("%s: got ok=%v", tt.src, ok)
		}
		if !ok {
			continue
		}
		if got := bitmapIDs(rows, cols.n); !slices.Equal(got, tt.want) {
			t.Errorf("%s: got rows %v, want %v", tt.src, got, tt.want)
		}
	}
}

// TestEvalFilterErrors checks that EvalFilter reports the error of
// CompileFilter, and ok=false without an error for columns not in memory.
func TestEvalFilterErrors(t *testing.T) {
	cols := testMemColumns()
	srcs := []string{"i", "s", "i + 1", "l", "st", "NOT (i = 'x')", "i = 1 AND nope = 2"}
	for _, c := range codeCases {
		srcs = append(srcs, c.src)
	}
	for _, src := range srcs {
		e, err := Parse(src)
		if err != nil {
			t.Fatal(err)
		}
		_, want := compileFilterSQL(e, testColumns)
		_, ok, err := EvalFilter(e, cols)
		if (err == nil) != (want == nil) || (err != nil && (err.Error() != want.Error() || store.ErrorCode(err) != store.ErrorCode(want))) {
			t.Errorf("%s: got error %v, want %v", src, err, want)
		}
		if err != nil && ok {
			t.Errorf("%s: ok with an error", src)
		}
	}
	if _, _, err := EvalFilter(nil, cols); store.ErrorCode(err) != store.CodeInvalidInput {
		t.Errorf("nil expression: got %v", err)
	}
	delete(cols.vals, "i")
	for _, src := range []string{"i = 1", "s = 'x' OR i = 1", "i = 'x'"} {
		if _, ok, err := evalSrc(t, src, cols); ok || err != nil {
			t.Errorf("%s without i in memory: got ok=%v, %v", src, ok, err)
		}
	}
	want := store.Errorf(store.CodeInvalidInput, "resolver says no")
	if _, ok, err := evalSrc(t, "a = 1", memColumns{n: 1, res: failingResolver{want}}); ok || err != want {
		t.Errorf("failing resolver: got ok=%v, %v", ok, err)
	}
}

// TestEvalFilterMalformed checks that columns whose Values do not fit
// their type or the row count are left to SQL.
func TestEvalFilterMalformed(t *testing.T) {
	res := testResolver{"i": {"c", intType}, "s": {"c", stringType}}
	tests := []struct {
		name string
		v    *Values
	}{
		{"short", &Values{Type: intType, Ints: []int64{1}}},
		{"wrong slice", &Values{Type: intType, Floats: []float64{1, 2}}},
		{"short valid", &Values{Type: intType, Ints: []int64{1, 2}, Valid: []bool{true}}},
	}
	for _, tt := range tests {
		cols := memColumns{n: 2, vals: map[string]*Values{"i": tt.v}, res: res}
		if _, ok, err := evalSrc(t, "i = 1", cols); ok || err != nil {
			t.Errorf("%s: got ok=%v, %v", tt.name, ok, err)
		}
	}
	cols := memColumns{n: 0, vals: map[string]*Values{"i": {Type: intType}}, res: res}
	if rows, ok, err := evalSrc(t, "i = 1 OR i IS NULL", cols); !ok || err != nil || len(rows) != 0 {
		t.Errorf("no rows: got %v, %v, %v", rows, ok, err)
	}
}

// TestLikeMatcher checks the fast paths of likeMatcher, which match the
// text of s up to a NUL, against likeMatch.
func TestLikeMatcher(t *testing.T) {
	r := rand.New(rand.NewSource(1))
	parts := []string{"a", "b", "%", "_", `\`, "ä", "ß", "\xff", "\uFFFD", "日", "A"}
	str := func(n int, nul bool) string {
		var b strings.Builder
		for range r.Intn(n) {
			b.WriteString(parts[r.Intn(len(parts))])
			if nul && r.Intn(8) == 0 {
				b.WriteByte(0)
			}
		}
		return b.String()
	}
	for range 30000 {
		s, p, fold := str(7, true), str(5, false), r.Intn(4) == 0
		got := newLikeMatcher(p, '\\', fold).match(s)
		if want := likeMatch(cString(s), p, '\\', fold); got != want {
			t.Fatalf("%q LIKE %q (fold %v): got %v, want %v", s, p, fold, got, want)
		}
	}
}

// TestIntFloatCompare checks the exact integer-float comparisons against
// big.Float.
func TestIntFloatCompare(t *testing.T) {
	r := rand.New(rand.NewSource(2))
	ints := []int64{0, 1, -1, math.MaxInt64, math.MinInt64, 1 << 53, 1<<53 + 1, -(1 << 53) - 1, 1 << 62}
	floats := []float64{0, 0.5, -0.5, 1 << 53, 1<<53 + 2, 0x1p63, -0x1p63, math.Nextafter(0x1p63, 0),
		math.Inf(1), math.Inf(-1), 1e300, -1e300, 2.5, -2.5, 9007199254740993}
	for range 2000 {
		ints = append(ints, r.Int63()>>r.Intn(63)*int64(1-2*r.Intn(2)))
		floats = append(floats, math.Float64frombits(r.Uint64()), r.NormFloat64()*math.Pow10(r.Intn(20)))
	}
	for _, c := range floats {
		if math.IsNaN(c) {
			continue
		}
		for _, i := range ints[:40] {
			want := new(big.Float).SetInt64(i).Cmp(big.NewFloat(c))
			if got := cmpIntFloat(i, c); got != want {
				t.Fatalf("cmpIntFloat(%d, %g) = %d, want %d", i, c, got, want)
			}
			for _, op := range []sqlOp{sqlEq, sqlLt, sqlGt} {
				op2, c2, always, ans := intVsFloat(op, c)
				got := ans
				if !always {
					got = map[sqlOp]bool{sqlEq: i == c2, sqlLt: i < c2, sqlGt: i > c2}[op2]
				}
				if wantOp := map[sqlOp]bool{sqlEq: want == 0, sqlLt: want < 0, sqlGt: want > 0}[op]; got != wantOp {
					t.Fatalf("intVsFloat(%d, %d, %g): got %v, want %v", op, i, c, got, wantOp)
				}
			}
		}
	}
}

// TestSQLiteLength checks sqliteLength against SQLite's length().
func TestSQLiteLength(t *testing.T) {
	db := openTestDB(t)
	for _, s := range []string{"", "abc", "ä日本", "a\x00bc", "\xff", "\x80", "a\x80\x80", "\xe2\x82b\x80\x80", "\xe2\x82\xac\x80", "\xc0\x80x", "\x80\x80", "\xff\x80\xc0\x80\x80"} {
		var want int64
		if err := db.QueryRow(`SELECT length(?)`, s).Scan(&want); err != nil {
			t.Fatal(err)
		}
		if got := sqliteLength(s); got != want {
			t.Errorf("length(%q): got %d, want %d", s, got, want)
		}
	}
}
