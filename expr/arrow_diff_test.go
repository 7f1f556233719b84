package expr

import (
	"fmt"
	"math/rand"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	arrays "github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/lancens/lancens/store"
)

// outcome is what one differential check found.
type outcome int

const (
	outcomeCompileError outcome = iota // both failed to compile, alike
	outcomeRunError                    // both failed while running, with code 13
	outcomeValues                      // both computed, the same values
	outcomeMismatch                    // they differ (the test fails)
)

// sqlFilterIDs returns the row ids SQLite selects with the compiled filter
// c, or the error of running it.
func (at *arrowTable) sqlFilterIDs(c sqlCompiled) ([]int64, error) {
	rows, err := at.db.Query(`SELECT e."_rowid" FROM e WHERE `+c.SQL+` ORDER BY e.rowid`, c.Args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	ids := []int64{}
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			return nil, err
		}
		ids = append(ids, id)
	}
	return ids, rows.Err()
}

// sqlValues returns the values SQLite computes for c on every row, as
// database/sql scans them.
func (at *arrowTable) sqlValues(c sqlCompiled) ([]any, error) {
	rows, err := at.db.Query(`SELECT `+c.SQL+` FROM e ORDER BY e.rowid`, c.Args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []any
	for rows.Next() {
		var v any
		if err := rows.Scan(&v); err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, rows.Err()
}

// sortRows returns o's permutation of the rows of b, as a query orders
// them: by CompareRows on the keys, ties in row order.
func sortRows(o *Order, b arrow.RecordBatch) ([]int, error) {
	sk, err := o.Keys(b)
	if err != nil {
		return nil, err
	}
	perm := make([]int, b.NumRows())
	for i := range perm {
		perm[i] = i
	}
	slices.SortStableFunc(perm, func(i, j int) int { return CompareRows(sk, i, sk, j) })
	return perm, nil
}

// sameCompileErrors reports whether the compiler and the planner failed
// alike (both or neither, with the same message and code).
func sameCompileErrors(cerr, perr error) bool {
	if (cerr == nil) != (perr == nil) {
		return false
	}
	return cerr == nil || (cerr.Error() == perr.Error() && store.ErrorCode(cerr) == store.ErrorCode(perr))
}

// checkFilter runs src as a filter both ways and reports any difference
// on t: compile errors must be identical, a run must fail both ways (ours
// with code 13) or select the same rows.
func (at *arrowTable) checkFilter(t *testing.T, src string, binder Binder) outcome {
	t.Helper()
	e, err := Parse(src)
	if err != nil {
		t.Fatalf("%s: %v", src, err)
	}
	c, cerr := compileFilterSQL(e, at.res)
	p, perr := PlanFilter(e, binder)
	if !sameCompileErrors(cerr, perr) {
		t.Errorf("%s: planner error %v, compiler error %v", src, perr, cerr)
		return outcomeMismatch
	}
	if cerr != nil {
		return outcomeCompileError
	}
	rows, err := p.Filter(at.batch)
	want, qerr := at.sqlFilterIDs(c)
	switch {
	case err != nil && store.ErrorCode(err) != store.CodeInvalidInput:
		t.Errorf("%s: error %v has code %d", src, err, store.ErrorCode(err))
	case (err != nil) != (qerr != nil):
		t.Errorf("%s: evaluator error %v, SQL error %v\n SQL %s %v", src, err, qerr, c.SQL, c.Args)
	case err != nil:
		return outcomeRunError
	default:
		got := make([]int64, 0)
		for _, i := range bitmapIDs(rows, at.n) {
			got = append(got, i)
		}
		if !slices.Equal(got, want) {
			t.Errorf("%s:\n got rows %v\nwant rows %v\n SQL %s %v", src, got, want, c.SQL, c.Args)
			return outcomeMismatch
		}
		return outcomeValues
	}
	return outcomeMismatch
}

// checkValue runs src as a value both ways: the same compile errors, the
// same run errors, the same value (storage class and value) on every row,
// and the same Arrow array when the value's type has one.
func (at *arrowTable) checkValue(t *testing.T, src string) outcome {
	t.Helper()
	e, err := Parse(src)
	if err != nil {
		t.Fatalf("%s: %v", src, err)
	}
	c, cerr := compileSQL(e, at.res)
	p, perr := PlanValue(e, SchemaBinder(at.schema))
	if !sameCompileErrors(cerr, perr) {
		t.Errorf("%s: planner error %v, compiler error %v", src, perr, cerr)
		return outcomeMismatch
	}
	if cerr != nil {
		return outcomeCompileError
	}
	if !sameType(p.Type(), c.Type) {
		t.Errorf("%s: planned type %v, compiled %v", src, p.Type(), c.Type)
	}
	v, err := p.p.value(at.n, p.loader([]arrow.RecordBatch{at.batch}))
	want, qerr := at.sqlValues(c)
	switch {
	case err != nil && store.ErrorCode(err) != store.CodeInvalidInput:
		t.Errorf("%s: error %v has code %d", src, err, store.ErrorCode(err))
		return outcomeMismatch
	case (err != nil) != (qerr != nil):
		t.Errorf("%s: evaluator error %v, SQL error %v\n SQL %s %v", src, err, qerr, c.SQL, c.Args)
		return outcomeMismatch
	case err != nil:
		return outcomeRunError
	}
	for i, w := range want {
		if got := v.at(i); !sameStored(got, w) {
			t.Errorf("%s: row %d: got %s, SQL gives %#v\n SQL %s %v", src, i+1, describeValue(got), w, c.SQL, c.Args)
			return outcomeMismatch
		}
	}
	dt, err := ArrowType(c.Type)
	if err != nil {
		return outcomeValues
	}
	b := arrays.NewBuilder(memory.DefaultAllocator, dt)
	defer b.Release()
	var readErr error
	for _, w := range want {
		if readErr = appendStored(b, w); readErr != nil {
			break
		}
	}
	wantArr := b.NewArray()
	defer wantArr.Release()
	arr, err := p.Value(memory.DefaultAllocator, at.batch)
	switch {
	case readErr != nil && store.ErrorCode(err) != store.CodeInvalidInput:
		t.Errorf("%s: the SQL's values do not read as %s (%v), Value gives %v", src, dt, readErr, err)
		return outcomeMismatch
	case readErr != nil:
		return outcomeRunError
	case err != nil:
		t.Errorf("%s: Value: %v", src, err)
		return outcomeMismatch
	}
	defer arr.Release()
	if !arrays.ApproxEqual(arr, wantArr, arrays.WithNaNsEqual(true), arrays.WithAbsTolerance(0)) {
		t.Errorf("%s: array %v, SQL reads back %v", src, arr, wantArr)
		return outcomeMismatch
	}
	return outcomeValues
}

// sameStored reports whether the evaluator's value x is the value
// database/sql scanned from SQLite (floats by value: the row store does
// not keep the sign of a zero).
func sameStored(x value, w any) bool {
	switch w := w.(type) {
	case nil:
		return x.cls == clsNull
	case int64:
		return x.cls == clsInt && x.i == w
	case float64:
		return x.cls == clsFloat && (x.f == w || (x.f != x.f && w != w))
	case string:
		return x.cls == clsText && x.s == w
	case []byte:
		return x.cls == clsBlob && x.s == string(w)
	}
	return false
}

func describeValue(x value) string {
	switch x.cls {
	case clsNull:
		return "NULL"
	case clsInt:
		return "INTEGER " + strconv.FormatInt(x.i, 10)
	case clsFloat:
		return "REAL " + strconv.FormatFloat(x.f, 'g', -1, 64)
	case clsText:
		return fmt.Sprintf("TEXT %q", x.s)
	}
	return fmt.Sprintf("BLOB %q", x.s)
}

// tally counts outcomes.
type tally map[outcome]int

func (c tally) String() string {
	return fmt.Sprintf("%d compile errors, %d run errors, %d computed", c[outcomeCompileError], c[outcomeRunError], c[outcomeValues])
}

// arrowFilterCases are filters over the generated batch, one or more for
// every operator, function and conversion; together with the filters of
// TestFilters and TestEvalFilterDifferential.
var arrowFilterCases = []string{
	// Every integer width, unsigned ones wrapping as SQLite stores them.
	"i8 < 0", "i16 = 32767", "u8 = 255", "u16 > 100", "u32 = 4294967295", "u64 < 0", "u64 = -1", "u64 = 9223372036854775807",
	"a.b = 7", "`a.b` = 7", `"My Col" = 'x'`, "j + i8 > 0", "i8 * i16 < 0", "u32 * u32 > 0", "u64 + 1 > 0", "big + big > 0",
	"big * 3 > 0", "(big + 1) % 3 = 1", "(big + 1) / 2 > 0", "(big * 2) - big > 0", "-(big + 1) < 0", "abs(big + 1) > 0",
	// Floats of every width.
	"f32 = 0.1", "f32 > 1", "f16 = 0.5", "f16 = 0.0999755859375", "f32 = f16", "f + f32 > 0", "CAST(f32 AS VARCHAR) = '0.10000000149011612'",
	// Decimals: integer-stored and text-stored, every width.
	"dc32 = 1.5", "dc32 > d", "dt > 1000", "dt = -12345678901234567890.1234", "dt < 0", "dt > d", "dw = 1.5", "dw IS NULL",
	"dt IN (1.5, 0)", "CAST(dt AS DECIMAL(38,2)) > 1", "CAST(dt AS INT) > 0", "CAST(dt AS DOUBLE) < 0", "-dt < 0", "abs(dt) > 1",
	"CAST(dt AS VARCHAR) LIKE '%.5000'", "CAST(d AS DECIMAL(20,3)) = 12.34", "CAST(f AS DECIMAL(30,2)) > 0", "coalesce(dt, 1) > 0",
	// Strings of every layout.
	"t = 'Hello'", "sv = 'Hello'", "sv LIKE 'a long%'", "dict = 'red'", "dict IN ('red', 'blue')", "dict > t", "length(sv) > 10",
	"s || t = 'ab'", "concat(s, t, i) = 'a'", "lower(t) = lower(sv)", "upper(dict) = 'RED'",
	// Binary.
	"bin = CAST('Hello' AS BYTEA)", "bin > lbin", "length(bin) = 2", "fbin = CAST('ab' AS BYTEA)", "bin IS NULL", "bin IN ('x', 'Hello')",
	"CAST(bin AS VARCHAR) = 'Hello'", "CAST(bin AS VARCHAR) LIKE 'a%'", "length(CAST(bin AS VARCHAR)) = 1",
	// Temporal values of every unit and zone.
	"tsz > '2024-01-01'", "tsz = ts", "tsz IN ('2024-01-01 12:00:00.5', TIMESTAMP '1970-01-01 00:00:00')", "tms = '12:30:00'",
	"tmms < TIME '00:00:02'", "tmns > tm", "tms < tmms", "durns > dur", "durns = durs", "-durns < 0", "abs(durns) > 1",
	"CAST(ts AS DATE) = DATE '2024-01-01'", "CAST(d32 AS TIMESTAMP) < ts", "CAST(tss AS TIMESTAMP(3)) = tsms", "CAST(tsns AS TIMESTAMP(0)) = tss",
	"CAST(ts AS VARCHAR) LIKE '2024-%'", "CAST(tm AS VARCHAR) = '12:30:00'", "CAST(tms AS VARCHAR) > '12'", "CAST(d64 AS DATE) = d32",
	"CAST(far AS TIMESTAMP) > tsns", "far < '2000-01-01'", "CAST(ts AS INT) > 0", "CAST(i AS TIMESTAMP) < ts",
	"d32 = s", "ts < s", "tm > s", "CAST(s AS DATE) > d32",
	// Lists, structs, maps, vectors.
	"l IS NULL", "ls IS NOT NULL", "array_has(l, 2)", "array_has(l, 2.0)", "array_has(ls, 'a')", "array_has(ls, s)", "array_has(lb, b)",
	"array_has(lf, 0.1)", "array_has(lf, 1.5)", "array_has(lg, 9007199254740993)", "array_has(lg, 1e20)", "array_has(lts, '2024-01-01')",
	"array_has(ld, 12.34)", "array_has(ld, 1.5)", "array_has(lbn, CAST('x' AS BYTEA))", "array_has(ll, 9223372036854775807)",
	"array_has(lu, -1)", "array_has_any(l, [3, 4])", "array_has_all(l, [1, 2])", "array_has_any(l, [i, 4])", "array_has_all(ls, [s, 'a'])",
	"array_has_any(lll, lll)", "array_has_any(lf, [f, 0.1])", "array_has(fl, 2)", "array_length(l) = 2", "cardinality(ls) = 0",
	"array_length(fl) = 2", "array_length(lll) > 1", "array_has([s, t], 'a')", "array_has(make_array(i, j), 3)", "array_has([f, g], 1.5)",
	"array_has([d, d0], 7)", "array_has([dt, 1], 1.5)", "array_has([b, NULL], TRUE)", "array_has([ts, tsms], '2024-01-01')",
	"st IS NULL", "st.x = 5", "st.inner IS NULL", "st.inner.y = 'deep'", "st.`inner`.\"y\" LIKE 'd%'", "coalesce(st.x, -1) = -1",
	"m IS NOT NULL", "v IS NULL", "vu8 IS NOT NULL", "nul IS NULL", "nul IS NOT NULL", "fl IS NULL",
	// Run-time errors, and the rows SQLite evaluates (or skips).
	"CAST(s AS INT) > 0", "CAST(t AS INT) > 0", "s IN ('10', '-7') AND CAST(s AS INT) > 0", "CASE WHEN s IN ('10', '-7') THEN CAST(s AS INT) > 0 END",
	"coalesce(i, CAST(s AS INT)) > 0", "i IN (i, CAST(s AS INT))", "CAST(s AS INT) IN (i, 1)", "s = '10' OR CAST(s AS INT) > 0",
	"NOT (s <> '10' OR CAST(s AS INT) > 0)", "(s = '10' AND CAST(s AS INT) > 0) IS TRUE", "(s <> '10' AND CAST(s AS INT) > 0) IS NOT TRUE",
	"i BETWEEN 100 AND CAST(s AS INT)", "i NOT BETWEEN -100 AND CAST(s AS INT)", "CASE s WHEN '10' THEN CAST(s AS INT) END > 0",
	"CAST(s AS DATE) > d32", "CAST(s AS BOOLEAN)", "CAST(s AS DECIMAL(5,2)) > 0", "CAST(s AS DOUBLE) > 0", "CAST(s AS TIME) > tm",
	"substr(s, 1, i) = 'a'", "substr(s, i, j) = ''", "regexp_like(s, t)", "regexp_like(s, 'a', t)", "abs(big) > 0", "abs(i8) > 0",
	"CAST(dt AS DECIMAL(5,2)) > 0", "CAST(f AS DECIMAL(5,2)) > 0", "CAST(tsz AS TIMESTAMP(0)) > far", "CAST(far AS TIMESTAMP) IS NULL",
	"i > 100 AND CAST(s AS INT) > 0", "FALSE AND CAST(s AS INT) > 0", "CAST(s AS INT) > 0 AND FALSE", "NULL AND CAST(s AS INT) > 0",
	"i = 3 OR i <> 3 OR CAST(s AS INT) > 0", "(i > 0 OR i IS NULL) AND (i <= 0 OR CAST(s AS INT) = 1)",
	// Functions.
	"trim(s) = 'pad'", "ltrim(s) = 'pad  '", "rtrim(s, 'y') = 'x'", "trim(s, 'x') = 'y'", "btrim(s, 'xy') = ''", "trim(s, t) = ''",
	"trim(s, 'äb') = ''", "rtrim(s, '\xe2\x82') = ''", "replace(s, 'l', 'L') = 'HeLLo'", "replace(s, '', 'x') = s", "replace(s, t, '') = ''",
	"replace(s, s, t) = t", "round(f) = 2", "round(f, 1) = -2.3", "round(f, i) > 0", "round(d, 1) > 12", "round(f, -1) = 10", "round(f, -400) = 0",
	"floor(f) = -3", "ceil(f) = 2", "floor(d) = 12", "ceil(i) = 3", "sqrt(f) > 1", "sqrt(i) = 0", "power(i, 2) = 100", "power(f, g) > 1",
	"power(f32, 3) > 0", "power(2, i) > 100", "mod(f, 2) > 0", "mod(i, j) = 0", "mod(f, 0) IS NULL", "nullif(i, 3) IS NULL", "nullif(s, t) IS NULL",
	"nullif(d32, '2024-01-01') IS NULL", "substring(s FROM 2 FOR 3) = 'ell'", "substr(s, -1, 3) = 'H'", "substr(s, 4) = 'lo'",
	"regexp_match(s, '^h')", "regexp_like(s, '^H', 'i')", "regexp_like(s, 'l+o$', 'c')", "regexp_like(s, '(?s).*', 'sU')",
	"starts_with(sv, 'a ')", "ends_with(dict, 'e')", "concat(f, d, ts, b) LIKE '%'", "concat(NULL, NULL) = ''",
	"s || f LIKE 'a%'", "CAST(f AS VARCHAR) = '1.5'", "CAST(f AS VARCHAR) LIKE '%e+%'", "CAST(d AS VARCHAR) = '12.34'",
	"CAST(b AS VARCHAR) = 'true'", "CAST(i AS BOOLEAN)", "CAST(f AS BOOLEAN)", "CAST(d AS BOOLEAN)", "CAST(b AS INT) = 1", "CAST(b AS DOUBLE) = 1",
	"CAST(f AS INT) = -2", "CAST(big AS DOUBLE) > 0", "CAST(CAST(big AS DOUBLE) AS INT) = big", "CAST(f AS BIGINT) > 0",
	// Aliases of functions and type names.
	"character_length(s) = 5", "nvl(i, 0) = 0", "ifnull(s, 'x') = 'x'", "ceiling(f) = 2", "pow(i, 2) = 9", "list_length(l) = 2",
	"list_contains(ls, 'a')", "list_has(l, 1)", "list_has_all(l, [1])", "list_has_any(ls, ['a', 'z'])", "array_contains(lb, TRUE)",
	"CAST(i AS TINYINT) = 3", "CAST(i AS SMALLINT) = 3", "CAST(i AS INTEGER) = 3", "CAST(f AS REAL) > 1", "CAST(f AS DOUBLE PRECISION) > 1",
	"CAST(s AS VARBINARY) = CAST('a' AS BLOB)", "CAST(i AS NUMERIC(4)) = 3", "CAST(i AS DECIMAL) = 3", "CAST(s AS CHAR) = 'a'",
	"CAST(ts AS TIMESTAMP(9)) = tsns", "CAST(ts AS TIMESTAMP(1)) > tss", "CAST(tsns AS TIMESTAMP(4)) = ts", "CAST(tm AS TIME) = tmns",
	"i::double > 1", "s::int > 0", "ts::date = d32", "d32::timestamp(3) = tsms", "CAST(b AS BOOL)", "CAST(s AS BOOL)",
	// Long IN lists are bound as JSON and read by json_each.
	longIn("f", false, 300, func(i int) string { return strconv.FormatFloat(float64(i)/3, 'g', -1, 64) }),
	longIn("f", false, 300, func(i int) string { return strconv.FormatFloat(1e20*float64(i)+0.1, 'g', -1, 64) }),
	longIn("big", false, 300, func(i int) string { return strconv.Itoa(i*3037000500 - 1) }),
	longIn("dt", false, 300, func(i int) string { return strconv.Itoa(i-150) + ".25" }),
	longIn("dict", true, 300, func(i int) string { return "'c" + strconv.Itoa(i) + "'" }),
	longIn("tsz", false, 300, func(i int) string { return fmt.Sprintf("'2024-01-01 12:00:00.%d'", i) }),
	longIn("u64", false, 300, func(i int) string { return strconv.Itoa(i - 2) }),
	longIn("s", false, 300, func(i int) string { return map[bool]string{true: "NULL", false: "'" + strconv.Itoa(i) + "'"}[i == 7] }),
	longIn("i", false, 300, func(i int) string { return "CAST(s AS INT) + " + strconv.Itoa(i) }),
	// SQLite evaluates the right operand of AND/OR first when only the left
	// one holds a subquery (a long IN list).
	"NOT (" + longIn("_rowid", false, 300, func(i int) string { return strconv.Itoa(i + 1000) }) + " AND CAST(s AS INT) > 0)",
	"(" + longIn("_rowid", false, 300, func(i int) string { return strconv.Itoa(i - 20) }) + " OR CAST(s AS INT) > 0) AND i > 0",
	"NOT (" + longIn("i", false, 300, func(i int) string { return strconv.Itoa(i + 1000) }) + " AND " + longIn("j", false, 300, strconv.Itoa) + ")",
}

// arrowValueCases are value expressions over the generated batch.
var arrowValueCases = []string{
	"i", "j", "i8", "u64", "big", "f", "f32", "f16", "d", "dc32", "dt", "dw", "s", "t", "sv", "dict", "bin", "lbin", "fbin",
	"d32", "d64", "ts", "tsz", "tms", "tmms", "tm", "tmns", "dur", "durs", "durns", "b", "bn", "st.x", "st.inner.y", "_rowid",
	"l", "ls", "lb", "lf", "lg", "lts", "ld", "lbn", "ll", "lu", "lll", "fl", "v", "st", "m", "nul", "NULL",
	"i + 1", "big + 1", "big * 2", "-big", "big / -1", "(big + 1) % 3", "i / 0", "f / 0", "f * 2", "f + i", "d + 0", "-d", "abs(-d)",
	"-dt", "abs(dt)", "dt + 1", "d * d", "i % -1", "j % i", "f % g", "mod(f, g)", "-f", "-(f * 0)", "f - f",
	"s || '!'", "s || i", "s || f", "s || d", "s || ts", "s || b", "s || bin", "NULL || s", "concat(s, NULL, i)", "concat(NULL)",
	"CAST(f AS VARCHAR)", "CAST(big AS DOUBLE)", "CAST(i AS DECIMAL(5,1))", "CAST(f AS DECIMAL(10,1))", "CAST(d AS DECIMAL(10,1))",
	"CAST(dt AS DECIMAL(30,1))", "CAST(d AS DECIMAL(30,2))", "CAST(f AS DECIMAL(38,10))", "CAST(s AS BYTEA)", "CAST(bin AS VARCHAR)",
	"CAST(ts AS VARCHAR)", "CAST(tsz AS STRING)", "CAST(d32 AS STRING)", "CAST(d64 AS STRING)", "CAST(tm AS STRING)", "CAST(tmns AS STRING)",
	"CAST(far AS STRING)", "CAST(dt AS DOUBLE)", "CAST(dt AS INT)", "CAST(dw AS VARCHAR)", "CAST(b AS VARCHAR)", "CAST(d AS INT)",
	"CAST(ts AS DATE)", "CAST(tss AS TIMESTAMP(3))", "CAST(tsms AS TIMESTAMP)", "CAST(far AS TIMESTAMP)", "CAST(d32 AS TIMESTAMP(6))",
	"lower(s)", "upper(s)", "lower(dict)", "length(s)", "length(bin)", "substr(s, 2)", "substr(s, 0, 2)", "substr(s, i, j)",
	"trim(s)", "ltrim(s, 'x')", "rtrim(s, t)", "replace(s, 'l', 'L')", "replace(s, t, 'z')", "round(f)", "round(f, 2)", "round(f, i)",
	"round(d, 1)", "round(f, -2)", "floor(f)", "ceil(d)", "sqrt(f)", "power(f, 2)", "power(i, j)", "power(f, 0.5)", "mod(i, 3)",
	"coalesce(i, j, 0)", "coalesce(f, i)", "coalesce(s, t)", "coalesce(dt, d)", "coalesce(ts, '2024-01-01')", "coalesce(b, bn)",
	"nullif(i, 3)", "nullif(s, t)", "nullif(ts, tsms)", "nullif(f, 1.5)",
	"CASE WHEN i > 0 THEN 'pos' WHEN i < 0 THEN 'neg' END", "CASE i WHEN 1 THEN f WHEN 2 THEN d END", "CASE WHEN b THEN ts ELSE tsms END",
	"CASE WHEN b THEN dt ELSE 1 END", "CASE s WHEN t THEN bin END", "CASE WHEN b THEN NULL END",
	"[1, 2.5]", "[TRUE, NULL]", "['a\"b']", "make_array(s, 'x')", "make_array(b, FALSE)", "make_array(d)", "make_array(dt, d)",
	"[f, g]", "[i, big]", "[ts, tsz]", "[d32, d64]", "['x'::bytea]", "[tm]", "[dur]", "[l]", "make_array()",
	"i > 0", "s LIKE 'a%'", "b AND bn", "b OR i > 0", "NOT b", "i IN (1, 2)", "array_has(l, 1)", "regexp_like(s, 'a')",
	"CAST(s AS INT)", "CAST(s AS DOUBLE)", "CAST(s AS DATE)", "abs(big)", "substr(s, 1, -1)",
}

// TestArrowDifferential runs every case both ways over the generated
// batch.
func TestArrowDifferential(t *testing.T) {
	at := newArrowTable(t, 3, 400)
	binder := SchemaBinder(at.schema)
	counts := tally{}
	filters := slices.Concat(arrowFilterCases, evalDiffCases, evalMoreCases)
	for _, tt := range filterCases {
		filters = append(filters, tt.src)
	}
	for _, c := range codeCases {
		filters = append(filters, c.src)
	}
	for _, src := range filters {
		counts[at.checkFilter(t, src, binder)]++
	}
	t.Logf("%d filters × %d rows: %v", len(filters), at.n, counts)
	values := tally{}
	for _, src := range arrowValueCases {
		values[at.checkValue(t, src)]++
	}
	for _, src := range filters {
		values[at.checkValue(t, src)]++
	}
	t.Logf("%d values × %d rows: %v", len(arrowValueCases)+len(filters), at.n, values)
	if counts[outcomeValues] < len(filters)*3/4 {
		t.Errorf("only %d of %d filters computed", counts[outcomeValues], len(filters))
	}
}

// TestArrowDifferentialRandom runs random expressions of every type both
// ways over the generated batch, as filters and as values.
func TestArrowDifferentialRandom(t *testing.T) {
	at := newArrowTable(t, 4, 300)
	binder := SchemaBinder(at.schema)
	g := &arrowGen{r: rand.New(rand.NewSource(12))}
	n := 4000
	if testing.Short() {
		n = 400
	}
	filters, values := tally{}, tally{}
	for range n {
		filters[at.checkFilter(t, g.boolean(1+g.r.Intn(4)), binder)]++
		values[at.checkValue(t, g.any(1+g.r.Intn(3)))]++
		if t.Failed() {
			break
		}
	}
	t.Logf("%d random filters × %d rows: %v", n, at.n, filters)
	t.Logf("%d random values × %d rows: %v", n, at.n, values)
	if filters[outcomeValues] < n/2 || values[outcomeValues] < n/2 {
		t.Errorf("too few computed: filters %v; values %v", filters, values)
	}
}

// arrowGen generates random expressions over the generated batch.
type arrowGen struct{ r *rand.Rand }

func (g *arrowGen) pick(vs ...string) string { return vs[g.r.Intn(len(vs))] }

// chance reports true with probability 1/n.
func (g *arrowGen) chance(n int) bool { return g.r.Intn(n) == 0 }

var (
	genIntCols    = []string{"i", "j", "i8", "i16", "u8", "u16", "u32", "u64", "big", "_rowid", "st.x", "`a.b`"}
	genFloatCols  = []string{"f", "g", "fn", "f32", "f16"}
	genDecCols    = []string{"d", "e4", "d0", "dc32", "dt", "dw"}
	genStrCols    = []string{"s", "t", "sv", "dict", "st.inner.y", `"My Col"`}
	genBinCols    = []string{"bin", "lbin", "fbin"}
	genListCols   = []string{"l", "ls", "lb", "lf", "lg", "lts", "ld", "lbn", "ll", "lu", "lll", "fl"}
	genOpaqueCols = []string{"v", "vu8", "st", "st.inner", "m", "nul"}
	genIntLits    = []string{"0", "1", "-1", "2", "3", "7", "10", "-3", "9223372036854775807", "-9223372036854775808", "4294967296", "255", "NULL"}
	genFloatLits  = []string{"0.5", "1.5", "-2.25", "10.0", "1e1", "0.001", "12.34", "-0.5", "1e300", "9007199254740993.0", "0.1", "2.5e-5", "NULL"}
	genStrLits    = []string{"''", "'a'", "'A'", "'abc'", "'Hello'", "'hello'", "'ä'", "'ß'", "'a_b%c'", "'x y'", "'it''s'", "'lo'",
		"'10'", "' 42 '", "'-7'", "'1.5'", "'1e3'", "'2024-01-01'", "'12:30:00'", "'true'", "'no'", "'  pad  '", "NULL"}
)

// num returns a numeric expression of nesting up to d.
func (g *arrowGen) num(d int) string {
	if d <= 0 || g.chance(3) {
		switch g.r.Intn(5) {
		case 0:
			return g.pick(genIntLits...)
		case 1:
			return g.pick(genFloatLits...)
		case 2:
			return g.pick(genFloatCols...)
		case 3:
			return g.pick(genDecCols...)
		}
		return g.pick(genIntCols...)
	}
	switch g.r.Intn(16) {
	case 0, 1, 2:
		return "(" + g.num(d-1) + " " + g.pick("+", "-", "*", "/", "%") + " " + g.num(d-1) + ")"
	case 3:
		return "(-" + g.num(d-1) + ")"
	case 4:
		return g.pick("abs(", "floor(", "ceil(", "sqrt(") + g.num(d-1) + ")"
	case 5:
		return g.pick("length(", "char_length(") + g.pick(g.str(d-1), g.bin(0)) + ")"
	case 6:
		return "coalesce(" + g.num(d-1) + ", " + g.num(d-1) + ")"
	case 7:
		return "CASE WHEN " + g.boolean(d-1) + " THEN " + g.num(d-1) + " ELSE " + g.num(d-1) + " END"
	case 8:
		return "CASE " + g.num(d-1) + " WHEN " + g.num(0) + " THEN " + g.num(d-1) + " WHEN " + g.num(0) + " THEN " + g.num(0) + " END"
	case 9:
		return "CAST(" + g.pick(g.num(d-1), g.str(d-1), g.boolean(0), g.temporal(d-1)) + " AS " +
			g.pick("INT", "BIGINT", "DOUBLE", "FLOAT", "DECIMAL(5,2)", "DECIMAL(12,3)", "DECIMAL(20,4)", "DECIMAL(38,10)", "NUMERIC(4)") + ")"
	case 10:
		if g.chance(2) {
			return "round(" + g.num(d-1) + ")"
		}
		return "round(" + g.num(d-1) + ", " + g.pick("0", "1", "2", "-1", "-2", "i", "j", "NULL") + ")"
	case 11:
		return g.pick("power(", "mod(", "pow(") + g.num(d-1) + ", " + g.num(d-1) + ")"
	case 12:
		return "nullif(" + g.num(d-1) + ", " + g.num(0) + ")"
	case 13:
		return g.pick("array_length(", "cardinality(") + g.list() + ")"
	case 14:
		return "ifnull(" + g.num(d-1) + ", " + g.num(0) + ")"
	}
	return "(" + g.num(d-1) + ")"
}

// str returns a string expression of nesting up to d.
func (g *arrowGen) str(d int) string {
	if d <= 0 || g.chance(3) {
		if g.chance(2) {
			return g.pick(genStrCols...)
		}
		return g.pick(genStrLits...)
	}
	switch g.r.Intn(13) {
	case 0:
		return g.pick("lower(", "upper(") + g.str(d-1) + ")"
	case 1:
		return "coalesce(" + g.str(d-1) + ", " + g.str(d-1) + ")"
	case 2:
		return "CASE WHEN " + g.boolean(d-1) + " THEN " + g.str(d-1) + " END"
	case 3:
		return "(" + g.any(d-1) + " || " + g.any(d-1) + ")"
	case 4:
		return "concat(" + g.any(d-1) + ", " + g.any(0) + ", " + g.str(0) + ")"
	case 5:
		if g.chance(2) {
			return "substring(" + g.str(d-1) + " FROM " + g.num(0) + " FOR " + g.pick("1", "2", "0", "-1", "i", "NULL") + ")"
		}
		return "substr(" + g.str(d-1) + ", " + g.pick("0", "1", "2", "-1", "i", "j", "NULL", "9223372036854775807", "big") + ")"
	case 6:
		if g.chance(2) {
			return g.pick("trim(", "ltrim(", "rtrim(", "btrim(") + g.str(d-1) + ")"
		}
		return g.pick("trim(", "ltrim(", "rtrim(") + g.str(d-1) + ", " + g.pick("'x'", "'xy'", "' '", "''", "'ä'", "t", "s", "NULL") + ")"
	case 7:
		return "replace(" + g.str(d-1) + ", " + g.pick("'l'", "''", "'a'", "t", "s", "NULL") + ", " + g.pick("'L'", "''", "'xyz'", "s", "NULL") + ")"
	case 8:
		return "CAST(" + g.any(d-1) + " AS " + g.pick("VARCHAR", "STRING", "TEXT", "CHAR", "VARCHAR(10)") + ")"
	case 9:
		return "nullif(" + g.str(d-1) + ", " + g.str(0) + ")"
	case 10:
		return "CASE " + g.str(d-1) + " WHEN " + g.str(0) + " THEN " + g.str(d-1) + " ELSE " + g.str(0) + " END"
	}
	return g.str(d - 1)
}

// bin returns a binary expression of nesting up to d.
func (g *arrowGen) bin(d int) string {
	if d <= 0 || g.chance(2) {
		return g.pick(append(genBinCols, "CAST('x' AS BYTEA)", "'Hello'::blob", "NULL")...)
	}
	switch g.r.Intn(3) {
	case 0:
		return "CAST(" + g.str(d-1) + " AS " + g.pick("BINARY", "VARBINARY", "BYTEA", "BLOB") + ")"
	case 1:
		return "coalesce(" + g.bin(d-1) + ", " + g.bin(0) + ")"
	}
	return "CASE WHEN " + g.boolean(d-1) + " THEN " + g.bin(d-1) + " ELSE " + g.bin(0) + " END"
}

// temporal returns a date, timestamp, time or duration expression.
func (g *arrowGen) temporal(d int) string {
	a, _ := g.temporalPair(d, g.r.Intn(3))
	return a
}

// temporalPair returns two values of one temporal family (0: dates and
// timestamps, 1: times, 2: durations) to compare, of nesting up to d.
func (g *arrowGen) temporalPair(d, family int) (string, string) {
	var cols, lits []string
	switch family {
	case 0:
		cols = []string{"d32", "d64", "ts", "tsms", "tss", "tsns", "tsz", "far", "CAST(ts AS DATE)", "CAST(d32 AS TIMESTAMP)",
			"CAST(tss AS TIMESTAMP(3))", "CAST(tsns AS TIMESTAMP(6))", "CAST(far AS TIMESTAMP)"}
		lits = []string{"DATE '2024-01-01'", "TIMESTAMP '2024-01-01 12:00:00.5'", "'2023-06-15'", "'2024-01-01T12:00:00Z'",
			"'1969-12-31 23:59:59'", "'2024-01-01 12:00:00.500123456'", "TIMESTAMP '1970-01-01 00:00:00'", "'2024-01-01'",
			"'2024-01-01 13:00:00+01:00'", "'9999-12-31'", "NULL", "'soon'", "CAST(s AS DATE)", "CAST(t AS TIMESTAMP)"}
	case 1:
		cols = []string{"tm", "tms", "tmms", "tmns"}
		lits = []string{"'12:30:00'", "TIME '00:00:01'", "'12:00'", "NULL", "'25:00'", "CAST(s AS TIME)"}
	default:
		cols = []string{"dur", "durs", "durns", "(-dur)", "abs(durs)", "(- durns)"}
		lits = []string{"NULL"}
	}
	a := g.pick(cols...)
	if d > 0 && g.chance(3) {
		a = "coalesce(" + a + ", " + g.pick(cols...) + ")"
	}
	if d > 0 && g.chance(4) {
		a = "CASE WHEN " + g.boolean(d-1) + " THEN " + a + " ELSE " + g.pick(cols...) + " END"
	}
	if g.chance(2) {
		return a, g.pick(cols...)
	}
	if g.chance(4) {
		return g.pick(lits...), a
	}
	return a, g.pick(lits...)
}

// list returns a list expression.
func (g *arrowGen) list() string {
	switch g.r.Intn(4) {
	case 0:
		return "[" + g.num(0) + ", " + g.num(0) + "]"
	case 1:
		return "make_array(" + g.str(0) + ", " + g.str(0) + ")"
	}
	return g.pick(genListCols...)
}

// search returns a call of the array_has family on a list and values
// that compare with its elements (or not: a type error).
func (g *arrowGen) search(d int) string {
	type listKind struct{ list, value, literal string }
	kinds := []listKind{
		{"l", g.num(d), "[1, 2]"}, {"ls", g.str(d), "['a', s]"}, {"lb", g.boolean(0), "[TRUE, b]"}, {"lf", g.num(d), "[0.1, f]"},
		{"lg", g.num(d), "[1e20, 1.5]"}, {"lts", g.temporal(0), "['2024-01-01', NULL]"}, {"ld", g.num(d), "[12.34, 1.5]"},
		{"lbn", g.bin(0), "[CAST('x' AS BYTEA)]"}, {"ll", g.num(d), "[i, 9223372036854775807]"}, {"lu", g.num(d), "[-1]"},
		{"fl", g.num(d), "[2, j]"}, {"[" + g.num(0) + ", " + g.num(0) + "]", g.num(d), "[3]"}, {"make_array(s, t)", g.str(d), "['a']"},
	}
	k := kinds[g.r.Intn(len(kinds))]
	switch g.r.Intn(3) {
	case 0:
		return g.pick("array_has(", "array_contains(", "list_has(") + k.list + ", " + k.value + ")"
	case 1:
		return g.pick("array_has_any(", "array_has_all(", "list_has_any(") + k.list + ", " + k.literal + ")"
	}
	return g.pick("array_has_any(", "array_has_all(") + k.list + ", " + g.pick(genListCols...) + ")"
}

// pattern returns a LIKE pattern.
func (g *arrowGen) pattern() string {
	if g.chance(6) {
		return g.pick("t", "s", "NULL", "lower(t)")
	}
	var b strings.Builder
	for range g.r.Intn(6) {
		b.WriteString(g.pick("a", "A", "b", "l", "o", "H", "ä", "ß", "%", "%", "_", `\`, "!", "''", "s", "1", " "))
	}
	return "'" + b.String() + "'"
}

// boolean returns a boolean expression of nesting up to d.
func (g *arrowGen) boolean(d int) string {
	cmp := func(a, b string) string { return "(" + a + " " + g.pick(genCmpOps...) + " " + b + ")" }
	if d <= 0 {
		switch g.r.Intn(7) {
		case 0:
			return g.pick("b", "bn", "NULL", "TRUE", "FALSE", "(NOT b)")
		case 1:
			return cmp(g.str(0), g.str(0))
		case 2:
			return cmp(g.temporalPair(0, g.r.Intn(3)))
		case 3:
			return "(" + g.pick(append(append(genListCols, genOpaqueCols...), genIntCols...)...) + g.pick(" IS NULL)", " IS NOT NULL)")
		}
		return cmp(g.num(0), g.num(0))
	}
	switch g.r.Intn(24) {
	case 0:
		return "(NOT " + g.boolean(d-1) + ")"
	case 1, 2:
		terms := []string{g.boolean(d - 1), g.boolean(d - 1)}
		if g.chance(2) {
			terms = append(terms, g.boolean(d-1))
		}
		return "(" + strings.Join(terms, g.pick(" AND ", " OR ")) + ")"
	case 3:
		return cmp(g.num(d-1), g.num(d-1))
	case 4:
		return cmp(g.str(d-1), g.str(d-1))
	case 5:
		return cmp(g.temporalPair(d-1, g.r.Intn(3)))
	case 6:
		return "(" + g.any(d-1) + g.pick(" IS NULL)", " IS NOT NULL)")
	case 7:
		return "(" + g.boolean(d-1) + g.pick(" IS TRUE)", " IS NOT TRUE)", " IS FALSE)", " IS NOT FALSE)")
	case 8:
		items := []string{g.num(d - 1)}
		for range g.r.Intn(12) {
			items = append(items, g.num(0))
		}
		if g.chance(8) {
			for k := range 260 {
				items = append(items, strconv.Itoa(k-130))
			}
		}
		return "(" + g.num(d-1) + g.pick(" IN (", " NOT IN (") + strings.Join(items, ", ") + "))"
	case 9:
		items := []string{g.str(0)}
		for range g.r.Intn(12) {
			items = append(items, g.str(0))
		}
		return "(" + g.str(d-1) + g.pick(" IN (", " NOT IN (") + strings.Join(items, ", ") + "))"
	case 10:
		a, b := g.temporalPair(d-1, g.r.Intn(3))
		if g.chance(2) {
			return "(" + a + g.pick(" IN (", " NOT IN (") + b + ", " + g.temporal(0) + "))"
		}
		_, c := g.temporalPair(0, 0)
		if g.chance(2) {
			return "(" + a + g.pick(" BETWEEN ", " NOT BETWEEN ") + b + " AND " + c + ")"
		}
		return "(" + g.num(d-1) + g.pick(" BETWEEN ", " NOT BETWEEN ") + g.num(0) + " AND " + g.num(0) + ")"
	case 11:
		esc := ""
		if g.chance(4) {
			esc = " ESCAPE " + g.pick("'!'", "'a'", "'\\'", "'ä'")
		}
		return "(" + g.str(d-1) + g.pick(" LIKE ", " ILIKE ", " NOT LIKE ", " NOT ILIKE ") + g.pattern() + esc + ")"
	case 12:
		return g.pick("starts_with(", "ends_with(") + g.str(d-1) + ", " + g.str(0) + ")"
	case 13:
		a, b := g.num(d-1), g.num(0)
		switch g.r.Intn(3) {
		case 0:
			a, b = g.str(d-1), g.str(0)
		case 1:
			a, b = g.temporalPair(d-1, g.r.Intn(3))
		}
		return "(" + a + g.pick(" IS DISTINCT FROM ", " IS NOT DISTINCT FROM ") + b + ")"
	case 14:
		return "CASE WHEN " + g.boolean(d-1) + " THEN " + g.boolean(d-1) + " ELSE " + g.boolean(d-1) + " END"
	case 15:
		return "coalesce(" + g.boolean(d-1) + ", " + g.boolean(0) + ")"
	case 16:
		return cmp(g.boolean(d-1), g.boolean(0))
	case 17:
		pat := g.pick("'^h'", "'l+o$'", "'a'", "'(?i)ä'", "'^$'", "'.'", "t", "'['")
		if g.chance(2) {
			return g.pick("regexp_like(", "regexp_match(") + g.str(d-1) + ", " + pat + ")"
		}
		return "regexp_like(" + g.str(d-1) + ", " + pat + ", " + g.pick("'i'", "'c'", "'s'", "'m'", "'U'", "'x'", "t") + ")"
	case 18:
		return g.search(d - 1)
	case 19:
		return "CAST(" + g.pick(g.num(d-1), g.str(d-1), g.boolean(d-1)) + " AS " + g.pick("BOOLEAN", "BOOL") + ")"
	case 20:
		return cmp(g.bin(d-1), g.pick(g.bin(0), g.str(0)))
	case 21:
		return "nullif(" + g.boolean(d-1) + ", " + g.boolean(0) + ")"
	case 22:
		return cmp(g.num(d-1), g.pick(genDecCols...))
	}
	return cmp(g.any(d-1), g.any(d-1)) // often a type error
}

// any returns an expression of a random type.
func (g *arrowGen) any(d int) string {
	switch g.r.Intn(7) {
	case 0:
		return g.boolean(d)
	case 1, 2:
		return g.str(d)
	case 3:
		return g.temporal(d)
	case 4:
		if g.chance(3) {
			return g.list()
		}
		return g.bin(d)
	}
	return g.num(d)
}

// TestArrowInputs checks what Filter and Value do with inputs that do not
// fit the program: missing batches, batches of other lengths.
func TestArrowInputs(t *testing.T) {
	at := newArrowTable(t, 5, 10)
	e, err := Parse("target.i = source.i AND j > 0")
	if err != nil {
		t.Fatal(err)
	}
	p, err := PlanFilter(e, MergeBinder(at.schema, at.schema))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Filter(at.batch); store.ErrorCode(err) != store.CodeInvalidInput {
		t.Errorf("one batch for a merge condition: got %v", err)
	}
	if _, err := p.Filter(); store.ErrorCode(err) != store.CodeInvalidInput {
		t.Errorf("no batch: got %v", err)
	}
	short := at.batch.NewSlice(0, 5)
	defer short.Release()
	if _, err := p.Filter(at.batch, short); store.ErrorCode(err) != store.CodeInvalidInput {
		t.Errorf("batches of different lengths: got %v", err)
	}
	rows, err := p.Filter(at.batch, at.batch)
	if err != nil {
		t.Fatal(err)
	}
	single, _ := PlanFilter(mustParse(t, "i = i AND j > 0"), SchemaBinder(at.schema))
	want, err := single.Filter(at.batch)
	if err != nil || !slices.Equal(rows, want) {
		t.Errorf("merge condition over a batch and itself: got %v, want %v (%v)", rows, want, err)
	}
	if _, err := PlanFilter(mustParse(t, "source.nope = 1"), MergeBinder(at.schema, at.schema)); store.ErrorCode(err) != store.CodeTableColumnNotFound {
		t.Errorf("unknown source column: got %v", err)
	}
	for _, src := range []string{"NULL", "st", "m", "v"} {
		p, err := PlanValue(mustParse(t, src), SchemaBinder(at.schema))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := p.Value(memory.DefaultAllocator, at.batch); store.ErrorCode(err) != store.CodeInvalidInput {
			t.Errorf("%s as a column: got %v", src, err)
		}
	}
}

func mustParse(t *testing.T, src string) Expr {
	t.Helper()
	e, err := Parse(src)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// TestArrowOrder compares Order.Sort with SQLite's ORDER BY over the
// generated batch: single and composite keys of every sortable column
// and of expressions, ascending and descending, NULLs first and last.
func TestArrowOrder(t *testing.T) {
	at := newArrowTable(t, 6, 300)
	binder := SchemaBinder(at.schema)
	r := rand.New(rand.NewSource(13))
	sortable := []string{"i", "j", "i8", "u64", "big", "f", "g", "fn", "f32", "f16", "d", "e4", "dc32", "dt", "dw", "s", "t", "sv",
		"dict", "bin", "fbin", "d32", "d64", "ts", "tsz", "far", "tm", "tms", "dur", "durns", "b", "bn", "st.x", "st.inner.y", "nul",
		"i + f", "-big", "big + 1", "lower(s)", "CAST(f AS VARCHAR)", "coalesce(i, 5)", "i > 0", "CASE WHEN b THEN s ELSE bin END"}
	run := func(keys []string, desc, nullsFirst []bool) {
		t.Helper()
		var ok []OrderKey
		var sqlKeys []string
		var args []any
		for k, src := range keys {
			e := mustParse(t, src)
			ok = append(ok, OrderKey{Expr: e, Descending: desc[k], NullsFirst: nullsFirst[k]})
			c, err := compileSQL(e, at.res)
			if err != nil {
				t.Fatalf("%s: %v", src, err)
			}
			key := "(" + c.SQL + ")"
			if desc[k] {
				key += " DESC"
			}
			if nullsFirst[k] {
				key += " NULLS FIRST"
			} else {
				key += " NULLS LAST"
			}
			sqlKeys, args = append(sqlKeys, key), append(args, c.Args...)
		}
		o, err := PlanOrder(ok, binder)
		if err != nil {
			t.Fatalf("%v: %v", keys, err)
		}
		perm, err := sortRows(o, at.batch)
		if err != nil {
			t.Fatalf("%v: %v", keys, err)
		}
		rows, err := at.db.Query(`SELECT e."_rowid" FROM e ORDER BY `+strings.Join(sqlKeys, ", ")+`, e.rowid`, args...)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		var want []int
		for rows.Next() {
			var id int
			if err := rows.Scan(&id); err != nil {
				t.Fatal(err)
			}
			want = append(want, id-1)
		}
		if !slices.Equal(perm, want) {
			t.Errorf("ORDER BY %v (desc %v, nulls first %v):\n got %v\nwant %v", keys, desc, nullsFirst, perm, want)
		}
		sk, err := o.Keys(at.batch)
		if err != nil {
			t.Fatal(err)
		}
		for k := 1; k < len(want); k++ {
			if c := CompareRows(sk, want[k-1], sk, want[k]); c > 0 || (c == 0 && want[k-1] > want[k]) {
				t.Fatalf("ORDER BY %v: CompareRows puts row %d after row %d", keys, want[k-1], want[k])
			}
		}
	}
	for _, src := range sortable {
		for _, desc := range []bool{false, true} {
			for _, nf := range []bool{false, true} {
				run([]string{src}, []bool{desc}, []bool{nf})
			}
		}
	}
	for range 200 {
		n := 2 + r.Intn(2)
		keys, desc, nf := make([]string, n), make([]bool, n), make([]bool, n)
		for k := range keys {
			keys[k], desc[k], nf[k] = sortable[r.Intn(len(sortable))], r.Intn(2) == 0, r.Intn(2) == 0
		}
		run(keys, desc, nf)
	}
	for _, src := range []string{"l", "st", "m", "v"} {
		if _, err := PlanOrder([]OrderKey{{Expr: mustParse(t, src)}}, binder); store.ErrorCode(err) != store.CodeInvalidInput {
			t.Errorf("ORDER BY %s: got %v", src, err)
		}
	}
	if _, err := PlanOrder([]OrderKey{{Expr: Path("nope")}}, binder); store.ErrorCode(err) != store.CodeTableColumnNotFound {
		t.Errorf("ORDER BY nope: got %v", err)
	}
	p, err := PlanOrder([]OrderKey{{Expr: Path("st", "inner", "y")}, {Expr: Path("a.b"), Descending: true}}, binder)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sortRows(p, at.batch); err != nil {
		t.Fatal(err)
	}
}

// mergeResolver resolves the paths of a merge condition for SQLite:
// target. and bare paths read table e, source. paths table s.
type mergeResolver struct{ target, source testResolver }

func (r mergeResolver) Resolve(path []string) (dbColumn, error) {
	if len(path) > 1 && path[0] == "source" {
		return r.source.Resolve(path[1:])
	}
	if len(path) > 1 && path[0] == "target" {
		return r.target.Resolve(path[1:])
	}
	return r.target.Resolve(path)
}

// TestArrowMergeConditions evaluates merge_insert conditions over a target
// batch and a source batch matched with it row for row, against SQLite
// over the two tables joined on their row numbers.
func TestArrowMergeConditions(t *testing.T) {
	at := newArrowTable(t, 7, 200)
	src := loadArrowTable(t, at.db, "s", 8, 200)
	res := mergeResolver{target: at.res, source: src.res}
	binder := MergeBinder(at.schema, src.schema)
	g := &arrowGen{r: rand.New(rand.NewSource(14))}
	conds := []string{
		"target.i = source.i", "source.i > target.j", "i < source.i", "target.s = source.s OR source.s IS NULL",
		"source.ts > target.tsms", "source.d + target.d > 0", "target.st.x = source.st.x", "source.st IS NULL",
		"source.dt > dt", "CAST(source.s AS INT) > i", "source.b AND NOT target.b", "array_has(source.l, target.i)",
		"source.bin = target.bin", "coalesce(source.f, target.f) > 0", "source.s LIKE target.t", "target.nope = 1", "source.nope = 1",
		"source.i IS DISTINCT FROM target.i", "CASE WHEN source.b THEN target.i ELSE source.i END > 0",
	}
	qualify := func(q string, e string) string {
		for _, c := range append(append(append([]string{}, genIntCols[:9]...), genFloatCols...), genStrCols[:4]...) {
			e = strings.ReplaceAll(e, "("+c+" ", "("+q+"."+c+" ")
		}
		return e
	}
	for range 600 {
		a, b := g.boolean(1+g.r.Intn(2)), g.boolean(1+g.r.Intn(2))
		conds = append(conds, "("+qualify("source", a)+") "+g.pick("AND", "OR")+" ("+qualify("target", b)+")")
	}
	counts := tally{}
	for _, cond := range conds {
		e := mustParse(t, cond)
		c, cerr := compileFilterSQL(e, res)
		p, perr := PlanFilter(e, binder)
		if !sameCompileErrors(cerr, perr) {
			t.Errorf("%s: planner error %v, compiler error %v", cond, perr, cerr)
			continue
		}
		if cerr != nil {
			counts[outcomeCompileError]++
			continue
		}
		rows, err := p.Filter(at.batch, src.batch)
		want, qerr := func() ([]int64, error) {
			// One WHERE term (IS TRUE tests it with the jumps of a WHERE
			// term): a join evaluates each AND term with the first table
			// it needs, so a term on the outer table alone runs before
			// the others, which a condition over matched pairs does not.
			q, err := at.db.Query(`SELECT e."_rowid" FROM e JOIN s ON s.rowid = e.rowid WHERE (`+c.SQL+`) IS TRUE ORDER BY e.rowid`, c.Args...)
			if err != nil {
				return nil, err
			}
			defer q.Close()
			ids := []int64{}
			for q.Next() {
				var id int64
				if err := q.Scan(&id); err != nil {
					return nil, err
				}
				ids = append(ids, id)
			}
			return ids, q.Err()
		}()
		switch {
		case (err != nil) != (qerr != nil):
			t.Errorf("%s: evaluator error %v, SQL error %v", cond, err, qerr)
		case err != nil:
			counts[outcomeRunError]++
		case !slices.Equal(bitmapIDs(rows, at.n), want):
			t.Errorf("%s:\n got %v\nwant %v", cond, bitmapIDs(rows, at.n), want)
		default:
			counts[outcomeValues]++
		}
	}
	t.Logf("%d merge conditions × %d row pairs: %v", len(conds), at.n, counts)
}

// TestArrowCasts compares CAST to every type the language names, of
// fixed and generated values, with SQLite: the conversions that update
// values and new columns go through.
func TestArrowCasts(t *testing.T) {
	at := newArrowTable(t, 9, 200)
	g := &arrowGen{r: rand.New(rand.NewSource(15))}
	types := []string{"BIGINT", "DOUBLE", "VARCHAR", "BOOLEAN", "BYTEA", "DECIMAL(10,3)", "DECIMAL(30,2)", "DECIMAL(5,0)",
		"DATE", "TIMESTAMP(3)", "TIMESTAMP(9)", "TIMESTAMP(0)", "TIMESTAMP(6)", "TIME"}
	srcs := []string{"'2024-01-02'", "TIMESTAMP '2024-01-02 00:00:00.001'", "ts", "'2024-01-01'", "i * 1.5", "'3.14159'", "d", "NULL",
		"dt", "f", "s", "i", "big", "b", "tsz", "d32", "tm", "dur", "'12:30:00'", "[]", "l", "ls", "[1, 2]", "['a']", "CAST(s AS BYTEA)"}
	for range 1500 {
		srcs = append(srcs, g.any(1+g.r.Intn(2)))
	}
	counts := tally{}
	for k, src := range srcs {
		to := types[k%len(types)]
		if k < 25 {
			to = types[g.r.Intn(len(types))]
		}
		counts[at.checkValue(t, "CAST(("+src+") AS "+to+")")]++
	}
	t.Logf("%d values as %d types × %d rows: %v", len(srcs), len(types), at.n, counts)
}

// TestArrowConcurrent runs one set of Programs and an Order from several
// goroutines at once: the results are those of a single run.
func TestArrowConcurrent(t *testing.T) {
	at := newArrowTable(t, 10, 200)
	binder := SchemaBinder(at.schema)
	var progs []*Program
	var want [][]uint64
	for _, src := range arrowFilterCases[:120] {
		p, err := PlanFilter(mustParse(t, src), binder)
		if err != nil {
			continue
		}
		rows, err := p.Filter(at.batch)
		if err != nil {
			continue
		}
		progs, want = append(progs, p), append(want, rows)
	}
	o, err := PlanOrder([]OrderKey{{Expr: Path("s")}, {Expr: Path("f"), Descending: true}}, binder)
	if err != nil {
		t.Fatal(err)
	}
	perm, err := sortRows(o, at.batch)
	if err != nil {
		t.Fatal(err)
	}
	errs := make(chan error, 4)
	for range 4 {
		go func() {
			for i, p := range progs {
				rows, err := p.Filter(at.batch)
				if err != nil || !slices.Equal(rows, want[i]) {
					errs <- fmt.Errorf("program %d: %v", i, err)
					return
				}
			}
			if got, err := sortRows(o, at.batch); err != nil || !slices.Equal(got, perm) {
				errs <- fmt.Errorf("order: %v", err)
				return
			}
			errs <- nil
		}()
	}
	for range 4 {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
}

// TestArrowSlices evaluates over slices of a batch (Arrow arrays with an
// offset, including offsets that are not a multiple of 8): the results are
// those of the whole batch, restricted.
func TestArrowSlices(t *testing.T) {
	at := newArrowTable(t, 16, 300)
	binder := SchemaBinder(at.schema)
	srcs := slices.Concat(arrowFilterCases[:200], evalDiffCases[:150])
	for _, bounds := range [][2]int64{{0, 300}, {64, 200}, {13, 290}, {101, 102}, {7, 7}} {
		slice := at.batch.NewSlice(bounds[0], bounds[1])
		n := int(bounds[1] - bounds[0])
		for _, src := range srcs {
			p, err := PlanFilter(mustParse(t, src), binder)
			if err != nil {
				continue
			}
			whole, err := p.Filter(at.batch)
			if err != nil {
				continue
			}
			part, err := p.Filter(slice)
			if err != nil {
				t.Errorf("%s over rows %v: %v", src, bounds, err)
				continue
			}
			for i := range n {
				if has(part, i) != has(whole, int(bounds[0])+i) {
					t.Errorf("%s over rows %v: row %d differs", src, bounds, i)
					break
				}
			}
			v, err := PlanValue(mustParse(t, src), binder)
			if err != nil {
				continue
			}
			wv, err1 := v.p.value(at.n, v.loader([]arrow.RecordBatch{at.batch}))
			pv, err2 := v.p.value(n, v.loader([]arrow.RecordBatch{slice}))
			if err1 != nil || err2 != nil {
				continue
			}
			for i := range n {
				if a, b := pv.at(i), wv.at(int(bounds[0])+i); a != b && !(a.cls == clsFloat && b.cls == clsFloat && a.f != a.f && b.f != b.f) {
					t.Errorf("%s over rows %v: row %d is %s, %s in the whole batch", src, bounds, i, describeValue(a), describeValue(b))
					break
				}
			}
		}
		slice.Release()
	}
	for _, src := range []string{"l", "ls", "lll", "fl", "v", "m", "st.inner.y", "dict", "sv", "bin", "dt", "b"} {
		p, err := PlanValue(mustParse(t, src), binder)
		if err != nil {
			t.Fatal(err)
		}
		slice := at.batch.NewSlice(13, 290)
		wv, _ := p.p.value(at.n, p.loader([]arrow.RecordBatch{at.batch}))
		pv, err := p.p.value(277, p.loader([]arrow.RecordBatch{slice}))
		if err != nil {
			t.Fatal(err)
		}
		for i := range 277 {
			if pv.at(i) != wv.at(13+i) {
				t.Errorf("%s: row %d of the slice is %s, %s in the whole batch", src, i, describeValue(pv.at(i)), describeValue(wv.at(13+i)))
				break
			}
		}
		slice.Release()
	}
}

// TestArrowSchemaMismatch runs a program on a batch of another schema:
// a code-13 error, not a panic.
func TestArrowSchemaMismatch(t *testing.T) {
	at := newArrowTable(t, 17, 20)
	other := newArrowTable(t, 17, 20)
	for _, src := range []string{"st.inner.y = 'x'", "i > 0", "nul IS NULL"} {
		p, err := PlanFilter(mustParse(t, src), SchemaBinder(at.schema))
		if err != nil {
			t.Fatal(err)
		}
		small := arrays.NewRecordBatch(arrow.NewSchema(at.schema.Fields()[:2], nil), other.batch.Columns()[:2], 20)
		if _, err := p.Filter(small); store.ErrorCode(err) != store.CodeInvalidInput {
			t.Errorf("%s over fewer columns: got %v", src, err)
		}
		fields := slices.Clone(other.schema.Fields())
		fields[0], fields[1] = fields[1], fields[0]
		swapped := arrays.NewRecordBatch(arrow.NewSchema(fields, nil), append([]arrow.Array{other.batch.Column(1), other.batch.Column(0)}, other.batch.Columns()[2:]...), 20)
		if _, err := p.Filter(swapped); err != nil && store.ErrorCode(err) != store.CodeInvalidInput {
			t.Errorf("%s over swapped columns: got %v", src, err)
		}
		small.Release()
		swapped.Release()
	}
}
