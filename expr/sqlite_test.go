package expr

import (
	"database/sql"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/lancens/lancens/store"
)

// filterIDs returns the ids of the rows of t that the filter src selects.
func filterIDs(t *testing.T, db *sql.DB, src string) ([]int64, error) {
	t.Helper()
	e, err := Parse(src)
	if err != nil {
		return nil, err
	}
	c, err := compileFilterSQL(e, testColumns)
	if err != nil {
		return nil, err
	}
	rows, err := db.Query(`SELECT t."id" FROM t WHERE `+c.SQL+` ORDER BY 1`, c.Args...)
	if err != nil {
		t.Fatalf("%s: SQL %s %v: %v", src, c.SQL, c.Args, err)
	}
	defer rows.Close()
	ids := []int64{}
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	return ids, rows.Err()
}

// filterCases are filters and the ids of the rows of t they select.
var filterCases = []struct {
	src  string
	want []int64
}{
	// Comparisons and three-valued logic.
	{"i > 0", []int64{1}},
	{"i >= 0", []int64{1, 4}},
	{"i = 10 OR i = -3", []int64{1, 2}},
	{"i == 10", []int64{1}},
	{"i != 10", []int64{2, 4}},
	{"i <> 10", []int64{2, 4}},
	{"NOT (i > 0)", []int64{2, 4}},
	{"i IS NULL", []int64{3}},
	{"i IS NOT NULL", []int64{1, 2, 4}},
	{"i > 0 OR i IS NULL", []int64{1, 3}},
	{"NOT (i > 0 AND b)", []int64{2, 4}},
	{"(i > 0) IS NOT TRUE", []int64{2, 3, 4}},
	{"i IS DISTINCT FROM 10", []int64{2, 3, 4}},
	{"i IS NOT DISTINCT FROM NULL", []int64{3}},
	{"NULL", []int64{}},
	{"i = NULL", []int64{}},
	{"TRUE", []int64{1, 2, 3, 4}},
	// Booleans.
	{"b", []int64{1, 4}},
	{"NOT b", []int64{2}},
	{"b IS TRUE", []int64{1, 4}},
	{"b IS NOT TRUE", []int64{2, 3}},
	{"b IS FALSE", []int64{2}},
	{"b IS NOT FALSE", []int64{1, 3, 4}},
	{"b = TRUE", []int64{1, 4}},
	{"b == false", []int64{2}},
	// IN and BETWEEN.
	{"i IN (10, 0)", []int64{1, 4}},
	{"i NOT IN (10, 0)", []int64{2}},
	{"i NOT IN (10, NULL)", []int64{}},
	{"i IN (10.0, 0.5)", []int64{1}},
	{"i BETWEEN -5 AND 5", []int64{2, 4}},
	{"i NOT BETWEEN -5 AND 5", []int64{1}},
	{"s IN ('Hello', 'nope')", []int64{1}},
	// Integers and floats mix numerically.
	{"f > 1", []int64{1}},
	{"f = 1.5", []int64{1}},
	{"i = 10.0", []int64{1}},
	{"i = 1e1", []int64{1}},
	{"i < 10.5", []int64{1, 2, 4}},
	{"f < i", []int64{1}},
	// Arithmetic.
	{"i / 4 = 2", []int64{1}},
	{"i / 4 = 0", []int64{2, 4}},
	{"i % 3 = 1", []int64{1}},
	{"i * 2 + 1 = 21", []int64{1}},
	{"1 + 2 * 3 = 7", []int64{1, 2, 3, 4}},
	{"(1 + 2) * 3 = 9", []int64{1, 2, 3, 4}},
	{"f * 2 = 3", []int64{1}},
	{"f % 1 = 0.5", []int64{1}},
	{"i + f = 11.5", []int64{1}},
	{"-i = 3", []int64{2}},
	{"- -i = 10", []int64{1}},
	{"+i = 10", []int64{1}},
	{"i / 0 IS NULL", []int64{1, 2, 3, 4}},
	// Decimals.
	{"d = 12.34", []int64{1}},
	{"d > 0", []int64{1}},
	{"d < 0", []int64{2}},
	{"d = -0.5", []int64{2}},
	{"d = 12.345", []int64{}},
	{"d < 12.345", []int64{1, 2, 4}},
	{"d > 12.339", []int64{1}},
	{"d IN (12.34, 0)", []int64{1, 4}},
	{"d IN (12.34, 0.001)", []int64{1}},
	{"d BETWEEN -1 AND 13", []int64{1, 2, 4}},
	{"d > f", []int64{1, 2}},
	{"d * 2 > 24.6", []int64{1}},
	{"-d = -12.34", []int64{1}},
	{"abs(d) = 0.5", []int64{2}},
	{"dt > 1000", []int64{1}},
	{"dt = -1.5", []int64{2}},
	{"dt < 0", []int64{2}},
	{"dt > d", []int64{1}},
	// Strings, LIKE and ILIKE.
	{"s = 'Hello'", []int64{1}},
	{"s > 'Z'", []int64{2, 4}},
	{"s LIKE 'h%'", []int64{2}},
	{"s ILIKE 'h%'", []int64{1, 2}},
	{"s NOT LIKE 'h%'", []int64{1, 4}},
	{"s NOT ILIKE 'H%'", []int64{4}},
	{"s LIKE '%l_o'", []int64{1, 2}},
	{`s LIKE 'a\_b\%c'`, []int64{4}},
	{`s LIKE 'a\_x%'`, []int64{}},
	{"s LIKE 'a!_b%' ESCAPE '!'", []int64{4}},
	{"s LIKE '_____'", []int64{1, 2, 4}},
	{"s LIKE NULL", []int64{}},
	{"'it''s' LIKE 'it''%'", []int64{1, 2, 3, 4}},
	{"lower(s) = 'hello'", []int64{1, 2}},
	{"upper(s) = 'HELLO'", []int64{1, 2}},
	{"s || '!' = 'Hello!'", []int64{1}},
	{"s || i = 'Hello10'", []int64{1}},
	{"concat(s, NULL, i) = 'Hello10'", []int64{1}},
	{"concat(s, b) = 'Hellotrue'", []int64{1}},
	{"length(s) = 5", []int64{1, 2, 4}},
	{"char_length(s) = 5", []int64{1, 2, 4}},
	{"starts_with(s, 'He')", []int64{1}},
	{"ends_with(s, 'llo')", []int64{1, 2}},
	{"regexp_match(s, '^h')", []int64{2}},
	{"regexp_like(s, '^h', 'i')", []int64{1, 2}},
	{"regexp_like(s, 'l+o$')", []int64{1, 2}},
	{"substring(s, 2, 3) = 'ell'", []int64{1, 2}},
	{"substring(s FROM 1 FOR 1) = 'H'", []int64{1}},
	{"substr(s, -1, 3) = 'H'", []int64{1}},
	{"substr(s, 4) = 'lo'", []int64{1, 2}},
	{"trim('  x ') = 'x'", []int64{1, 2, 3, 4}},
	{"ltrim('xxy', 'x') = 'y'", []int64{1, 2, 3, 4}},
	{"replace(s, 'l', 'L') = 'HeLLo'", []int64{1}},
	{`"My Col" = 'x'`, []int64{1}},
	{"`a.b` = 7", []int64{1}},
	{"length(bin) = 2", []int64{1}},
	// Numeric functions.
	{"abs(i) = 3", []int64{2}},
	{"round(f) = 2", []int64{1}},
	{"round(f, 1) = -2.3", []int64{2}},
	{"floor(f) = -3", []int64{2}},
	{"ceil(f) = 2", []int64{1}},
	{"sqrt(i) = 0", []int64{4}},
	{"power(i, 2) = 100", []int64{1}},
	{"coalesce(i, 42) = 42", []int64{3}},
	{"coalesce(st.x, -1) = -1", []int64{2, 3}},
	{"coalesce(f, i, 0) = 1.5", []int64{1}},
	// Dates and timestamps.
	{"d32 = DATE '2024-01-01'", []int64{1}},
	{"d32 = '2024-01-01'", []int64{1}},
	{"d32 > '2023-12-31'", []int64{1}},
	{"d32 < DATE '2024-01-01'", []int64{2, 4}},
	{"d32 BETWEEN '2023-01-01' AND '2023-12-31'", []int64{2}},
	{"d32 IN ('2023-06-15', DATE '1970-01-01')", []int64{2, 4}},
	{"d64 = '2024-01-01'", []int64{1}},
	{"d64 = d32", []int64{1, 2, 4}},
	{"d32 < TIMESTAMP '2024-01-01 00:00:01'", []int64{1, 2, 4}},
	{"d32 = TIMESTAMP '2024-01-01 00:00:00'", []int64{1}},
	{"d32 = '2024-01-01 00:00:01'", []int64{}},
	{"ts = TIMESTAMP '2024-01-01 12:00:00.5'", []int64{1}},
	{"ts > '2024-01-01'", []int64{1}},
	{"ts = '2024-01-01T12:00:00.5Z'", []int64{1}},
	{"ts = '2024-01-01 13:00:00.500+01:00'", []int64{1}},
	{"ts < '1970-01-01'", []int64{2}},
	{"ts = '1970-01-01'", []int64{4}},
	{"tsms = ts", []int64{1, 2, 4}},
	{"tss < ts", []int64{1}},
	{"tss = TIMESTAMP '2024-01-01 12:00:00.5'", []int64{}},
	{"tss < TIMESTAMP '2024-01-01 12:00:00.5'", []int64{1, 2, 4}},
	{"tss = '2024-01-01 12:00:00'", []int64{1}},
	{"tsms BETWEEN '2024-01-01' AND '2024-01-02'", []int64{1}},
	{"ts > d32", []int64{1}},
	{"tm = '12:30:00'", []int64{1}},
	{"tm < TIME '00:00:02'", []int64{2, 4}},
	{"dur = -dur", []int64{4}},
	{"dur > dur", []int64{}},
	// Casts.
	{"CAST(ts AS DATE) = DATE '2024-01-01'", []int64{1}},
	{"CAST(tss AS DATE) = '1969-12-31'", []int64{2}},
	{"CAST(ts AS TIMESTAMP(0)) = tss", []int64{1, 2, 4}},
	{"CAST(i AS VARCHAR) = '10'", []int64{1}},
	{"CAST('5' AS INT) = 5", []int64{1, 2, 3, 4}},
	{"CAST(f AS INT) = -2", []int64{2}},
	{"CAST(b AS STRING) = 'true'", []int64{1, 4}},
	{"CAST(d AS VARCHAR) = '-0.50'", []int64{2}},
	{"CAST(ts AS STRING) = '2024-01-01T12:00:00.500'", []int64{1}},
	{"CAST(d32 AS STRING) = '2023-06-15'", []int64{2}},
	{"CAST(tm AS STRING) = '12:30:00'", []int64{1}},
	{"CAST(i AS DECIMAL(5,1)) = 10", []int64{1}},
	{"CAST(f AS DECIMAL(10,1)) = -2.3", []int64{2}},
	{"CAST(d AS DECIMAL(10,1)) = 12.3", []int64{1}},
	{"CAST(dt AS DECIMAL(30,1)) = -1.5", []int64{2}},
	{"i::double = 10", []int64{1}},
	{"CAST('2024-01-01' AS DATE) = d32", []int64{1}},
	{"CAST(CAST(d32 AS VARCHAR) AS DATE) = d32", []int64{1, 2, 4}},
	{"CAST(CAST(ts AS VARCHAR) AS TIMESTAMP(6)) = ts", []int64{1, 2, 4}},
	{"CAST(dt AS DOUBLE) < 0", []int64{2}},
	{"CAST(d AS INT) = 12", []int64{1}},
	{"CAST(i AS BOOLEAN)", []int64{1, 2}},
	{"CAST(s AS BINARY) = CAST('Hello' AS BYTEA)", []int64{1}},
	{"CAST(d64 AS DATE) = d32", []int64{1, 2, 4}},
	// Lists.
	{"array_has(l, 2)", []int64{1}},
	{"array_has(l, 2.0)", []int64{1}},
	{"array_has(l, NULL)", []int64{}},
	{"array_contains(ls, 'c')", []int64{2}},
	{"array_has(ls, 'a_b')", []int64{4}},
	{"array_has(lb, true)", []int64{1}},
	{"array_has(lb, false)", []int64{2}},
	{"array_has(lts, '2024-01-01')", []int64{1}},
	{"array_length(l) = 3", []int64{1}},
	{"cardinality(l) = 0", []int64{4}},
	{"array_has_any(l, [3, 4])", []int64{1, 2}},
	{"array_has_all(l, make_array(1, 2))", []int64{1}},
	{"array_has_all(l, [])", []int64{1, 2, 4}},
	{"array_has_any(l, [i, 4])", []int64{2}},
	{"array_has_any(lts, ['2024-01-01'])", []int64{1}},
	{"array_has_any(ls, ls)", []int64{1, 2, 4}},
	{"array_has(make_array(s, 'x'), 'Hello')", []int64{1}},
	// Structs, maps, vectors, row ids.
	{"st IS NULL", []int64{3}},
	{"st IS NOT NULL", []int64{1, 2, 4}},
	{"st.x = 5", []int64{1}},
	{"st.inner.y = 'deep'", []int64{1}},
	{"st.`inner`.\"y\" = 'deep'", []int64{1}},
	{"m IS NULL", []int64{3}},
	{"v IS NOT NULL", []int64{1, 2}},
	{"l IS NULL", []int64{3}},
	{"_rowid = 2", []int64{2}},
	{"_rowid IN (1, 4)", []int64{1, 4}},
	// CASE.
	{"CASE WHEN i > 0 THEN 'pos' WHEN i < 0 THEN 'neg' ELSE 'zero' END = 'neg'", []int64{2}},
	{"CASE i WHEN 10 THEN 1 ELSE 0 END = 1", []int64{1}},
	{"CASE WHEN i > 0 THEN d ELSE 0 END = 12.34", []int64{1}},
	{"CASE d32 WHEN '2024-01-01' THEN TRUE END", []int64{1}},
	{"CASE WHEN b THEN f ELSE i END < 0", []int64{2}},
}

// longIn returns "x IN (items...)" for n items made by item, with NOT
// when not is set.
func longIn(x string, not bool, n int, item func(i int) string) string {
	items := make([]string, n)
	for i := range items {
		items[i] = item(i)
	}
	op := " IN ("
	if not {
		op = " NOT IN ("
	}
	return x + op + strings.Join(items, ", ") + ")"
}

func TestFilters(t *testing.T) {
	db := openTestDB(t)
	num := func(i int) string { return strconv.Itoa(i + 10) }
	cases := slices.Concat(filterCases, []struct {
		src  string
		want []int64
	}{
		{longIn("i", false, 40000, num), []int64{1}},
		{longIn("i", true, 40000, num), []int64{2, 4}},
		{longIn("i", true, 300, func(i int) string { return map[bool]string{true: "NULL", false: num(i)}[i == 299] }), []int64{}},
		{longIn("f", false, 300, func(i int) string { return strconv.Itoa(i) + ".5" }), []int64{1}},
		{longIn("s", false, 300, func(i int) string { return "'Hello" + strings.Repeat("o", i) + "'" }), []int64{1}},
		{longIn("d32", false, 300, func(i int) string { return "'2024-01-" + fmt.Sprintf("%02d", i%28+1) + "'" }), []int64{1}},
		{longIn("bin", false, 300, func(i int) string { return "'x'" }), []int64{}},
		{longIn("i", false, 300, func(i int) string { return "_rowid + " + num(i) }), []int64{}},
	})
	for _, tt := range cases {
		got, err := filterIDs(t, db, tt.src)
		if err != nil {
			t.Errorf("%.80s: %v", tt.src, err)
			continue
		}
		if !slices.Equal(got, tt.want) {
			t.Errorf("%.80s: got rows %v, want %v", tt.src, got, tt.want)
		}
	}
}

// sqlValueOf compiles src against row 1 of t and returns the value SQLite
// computes.
func sqlValueOf(t *testing.T, db *sql.DB, src string) (any, Type, error) {
	t.Helper()
	e, err := Parse(src)
	if err != nil {
		return nil, Type{}, err
	}
	c, err := compileSQL(e, testColumns)
	if err != nil {
		return nil, Type{}, err
	}
	var v any
	err = db.QueryRow(`SELECT `+c.SQL+` FROM t WHERE t."id" = 1`, c.Args...).Scan(&v)
	return v, c.Type, err
}

func TestValues(t *testing.T) {
	db := openTestDB(t)
	tests := []struct {
		src  string
		want any
		kind Kind
	}{
		{"i + 1", int64(11), KindInt},
		{"i / 4", int64(2), KindInt},
		{"-7 / 2", int64(-3), KindInt},
		{"-7 % 3", int64(-1), KindInt},
		{"f * 2", 3.0, KindFloat},
		{"i / 4.0", 2.5, KindFloat},
		{"-9223372036854775808", int64(-9223372036854775808), KindInt},
		{"s || '!'", "Hello!", KindString},
		{"NULL || 'x'", nil, KindString},
		{"concat(NULL)", "", KindString},
		{"CAST(ts AS STRING)", "2024-01-01T12:00:00.500", KindString},
		{"CAST(d AS STRING)", "12.34", KindString},
		{"CAST(dt AS DECIMAL(38,2))", "12345678901234567890.12", KindDecimal},
		{"CAST(dt AS VARCHAR)", "12345678901234567890.1234", KindString},
		{"CAST(d AS DOUBLE)", 12.34, KindFloat},
		{"d + 0", 12.34, KindFloat},
		{"-d", int64(-1234), KindDecimal},
		{"abs(-d)", int64(1234), KindDecimal},
		{"lower('ÄB')", "äb", KindString},
		{"upper('äb')", "ÄB", KindString},
		{"substr('hello', 0, 2)", "h", KindString},
		{"substr('héllo', 2, 2)", "él", KindString},
		{"round(1234.5, -2)", 1200.0, KindFloat},
		{"round(2.5)", 3.0, KindFloat},
		{"[1, 2.5]", "[1,2.5]", KindList},
		{"[TRUE, NULL]", "[true,null]", KindList},
		{"['a\"b']", `["a\"b"]`, KindList},
		{"make_array(s, 'x')", `["Hello","x"]`, KindList},
		{"make_array(b, FALSE)", "[true,false]", KindList},
		{"make_array(d)", "[12.34]", KindList},
		{"CAST('1.005' AS DECIMAL(5,2))", int64(101), KindDecimal},
		{"CAST(-1.005 AS DECIMAL(5,2))", int64(-101), KindDecimal},
		{"CAST(1.5 AS INT)", int64(1), KindInt},
		{"CAST(TRUE AS VARCHAR)", "true", KindString},
		{"CAST(b AS VARCHAR)", "true", KindString},
		{"CAST(tsms AS TIMESTAMP)", int64(1704110400500000000), KindTimestamp},
		{"CAST(' 42 ' AS BIGINT)", int64(42), KindInt},
		{"CAST('t' AS BOOLEAN)", int64(1), KindBool},
		{"coalesce(NULL, i)", int64(10), KindInt},
		{"coalesce(i, f)", 10.0, KindFloat},
		{"CASE WHEN FALSE THEN 1 END", nil, KindInt},
		{"CAST('2024-01-02' AS TIMESTAMP(3))", int64(1704153600000), KindTimestamp},
		{"CAST(TIMESTAMP '2024-01-02 00:00:00.001' AS TIMESTAMP(3))", int64(1704153600001), KindTimestamp},
		{"CAST(ts AS TIMESTAMP(3))", int64(1704110400500), KindTimestamp},
		{"CAST('2024-01-01' AS DATE)", int64(19723), KindDate32},
		{"CAST(TIMESTAMP '2024-01-01 23:59:59' AS DATE)", int64(19723), KindDate32},
		{"CAST(i * 1.5 AS DECIMAL(10,3))", int64(15000), KindDecimal},
		{"CAST('3.14159' AS DECIMAL(10,3))", int64(3142), KindDecimal},
		{"CAST(d AS DECIMAL(30,2))", "12.34", KindDecimal},
		{"CAST(d AS DECIMAL(10,3))", int64(12340), KindDecimal},
		{"CAST(NULL AS DECIMAL(10,3))", nil, KindDecimal},
		{"CAST(dt AS DOUBLE)", 12345678901234567890.1234, KindFloat},
	}
	for _, tt := range tests {
		got, typ, err := sqlValueOf(t, db, tt.src)
		if err != nil {
			t.Errorf("%s: %v", tt.src, err)
			continue
		}
		if got != tt.want || typ.Kind != tt.kind {
			t.Errorf("%s: got %#v (%v), want %#v (%v)", tt.src, got, typ, tt.want, tt.kind)
		}
	}
}

// TestRuntimeErrors checks that bad values met at run time fail the query.
func TestRuntimeErrors(t *testing.T) {
	db := openTestDB(t)
	for _, src := range []string{
		"CAST(s AS BOOLEAN)",
		"CAST(s AS DATE)",
		"substr(s, 1, -1)",
		"regexp_like(s, s || '(')",
	} {
		if _, _, err := sqlValueOf(t, db, src); err == nil {
			t.Errorf("%s: want an error", src)
		}
	}
}

// codeCases are expressions that parse and the error codes of compiling
// them (-1: no error).
var codeCases = []struct {
	src  string
	code store.Code
}{
	{"nope = 1", store.CodeTableColumnNotFound},
	{"st.nope IS NULL", store.CodeTableColumnNotFound},
	{"s + 1", store.CodeInvalidInput},
	{"s = 1", store.CodeInvalidInput},
	{"i = 'x'", store.CodeInvalidInput},
	{"b = 1", store.CodeInvalidInput},
	{"nofunc(i)", store.CodeInvalidInput},
	{"lower(s, s)", store.CodeInvalidInput},
	{"lower()", store.CodeInvalidInput},
	{"abs(s)", store.CodeInvalidInput},
	{"NOT i", store.CodeInvalidInput},
	{"i AND b", store.CodeInvalidInput},
	{"st = 1", store.CodeInvalidInput},
	{"st.x = st", store.CodeInvalidInput},
	{"m = m", store.CodeInvalidInput},
	{"v + 1", store.CodeInvalidInput},
	{"l = l", store.CodeInvalidInput},
	{"i LIKE 'x'", store.CodeInvalidInput},
	{"s LIKE 'x' ESCAPE 'ab'", store.CodeInvalidInput},
	{"s LIKE 'x' ESCAPE s", store.CodeInvalidInput},
	{"ts = 'not a time'", store.CodeInvalidInput},
	{"ts = 5", store.CodeInvalidInput},
	{"d32 + 1", store.CodeInvalidInput},
	{"CAST('x' AS INT)", store.CodeInvalidInput},
	{"CAST(st AS VARCHAR)", store.CodeInvalidInput},
	{"CAST(dur AS VARCHAR)", store.CodeInvalidInput},
	{"CAST(1e30 AS DECIMAL(5,2))", store.CodeInvalidInput},
	{"CAST(ts AS INT) + 1", -1},
	{"regexp_like(s, '(')", store.CodeInvalidInput},
	{"regexp_like(s, 'a', 'g')", store.CodeInvalidInput},
	{"array_has(s, 1)", store.CodeInvalidInput},
	{"array_has(l, 'x')", store.CodeInvalidInput},
	{"array_has_any(l, ls)", store.CodeInvalidInput},
	{"array_has_any(l, ['x'])", store.CodeInvalidInput},
	{"array_length(s)", store.CodeInvalidInput},
	{"[1, 'a']", store.CodeInvalidInput},
	{"[bin]", store.CodeInvalidInput},
	{"CASE WHEN i THEN 1 END", store.CodeInvalidInput},
	{"CASE WHEN b THEN 1 ELSE 'x' END", store.CodeInvalidInput},
	{"coalesce(i, s)", store.CodeInvalidInput},
	{"substr(s, 'a')", store.CodeInvalidInput},
	{"-s", store.CodeInvalidInput},
	{"i IN (1, 'a')", store.CodeInvalidInput},
	{"i BETWEEN 'a' AND 2", store.CodeInvalidInput},
	{"b IS TRUE AND i IS TRUE", store.CodeInvalidInput},
}

// TestCodes checks the error codes of expressions that must not compile.
func TestCodes(t *testing.T) {
	for _, tt := range codeCases {
		e, err := Parse(tt.src)
		if err != nil {
			t.Errorf("%s: parse: %v", tt.src, err)
			continue
		}
		_, err = compileSQL(e, testColumns)
		if got := store.ErrorCode(err); got != tt.code {
			t.Errorf("%s: got code %v (%v), want %v", tt.src, got, err, tt.code)
		}
	}
}

func TestCompileFilterNeedsBoolean(t *testing.T) {
	for _, src := range []string{"i", "s", "i + 1", "l", "st"} {
		e, err := Parse(src)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := compileFilterSQL(e, testColumns); store.ErrorCode(err) != store.CodeInvalidInput {
			t.Errorf("%s: got %v, want code 13", src, err)
		}
	}
	if _, err := compileSQL(nil, testColumns); store.ErrorCode(err) != store.CodeInvalidInput {
		t.Errorf("nil expression: got %v", err)
	}
}

// TestDeepExpressionsRun checks that expressions at the nesting limit
// compile to SQL within SQLite's own expression depth limit.
func TestDeepExpressionsRun(t *testing.T) {
	db := openTestDB(t)
	n := maxDepth - 2
	rep := strings.Repeat
	tests := []string{
		rep("NOT ", n) + "b",
		rep("- ", n) + "i",
		"i" + rep(" + i", n),
		"b" + rep(" = b", n),
		rep("abs(", n) + "i" + rep(")", n),
		rep("lower(", n) + "s" + rep(")", n),
		rep("coalesce(", n) + "i" + rep(", 1)", n),
		rep("CASE WHEN ", n/2) + "b" + rep(" THEN TRUE END", n/2),
		rep("CASE ", n/2) + "i" + rep(" WHEN 1 THEN 2 ELSE 3 END", n/2),
		"i" + rep("::varchar::int", n/2),
		"ts" + rep("::date::timestamp(6)", n/2),
		"d" + rep("::decimal(12,3)::decimal(10,2)", n/2),
		"b" + rep(" IS TRUE", n),
		rep("concat(", n) + "s" + rep(", 'x')", n),
		rep("array_has([", n/2) + "b" + rep("], TRUE)", n/2),
		rep("(", n) + "i" + rep(")", n),
	}
	for _, src := range tests {
		if _, _, err := sqlValueOf(t, db, src); err != nil {
			t.Errorf("%.40s...: %v", src, err)
		}
	}
}
