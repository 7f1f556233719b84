package expr

import (
	"slices"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/lancens/lancens/store"
)

// fuzzSeeds returns every expression of the table-driven tests plus a few
// hostile ones.
func fuzzSeeds() []string {
	var seeds []string
	for _, c := range filterCases {
		seeds = append(seeds, c.src)
	}
	for _, c := range codeCases {
		seeds = append(seeds, c.src)
	}
	for _, c := range parseCases {
		seeds = append(seeds, c.src)
	}
	for _, c := range parseErrorCases {
		seeds = append(seeds, c.src)
	}
	return append(seeds,
		`s = '''; DROP TABLE t; --'`,
		`s = 'x'' OR 1=1 --'`,
		"`t\".\"c_s` = 1",
		`"c_s"" OR 1=1 --" = 1`,
		`s = 'OR 1'`,
		`lower('CASE WHEN 1 THEN 0 END') = s`,
		`s LIKE '%' ESCAPE ''''`,
		`regexp_like(s, ''')(')`,
		`CAST('1' AS DECIMAL(76, 76))`,
		`CAST('1e400' AS DECIMAL(5,2))`,
		`CAST('99999999999999999999' AS DECIMAL(38,0)) = dt`,
		`ts = '9999-12-31 23:59:59.999999999'`,
		`tss = TIMESTAMP '0001-01-01 00:00:00'`,
		`round(f, -9223372036854775808)`,
		`substr(s, -9223372036854775808, 9223372036854775807)`,
		`[1.5, 'x', NULL]`,
		`array_has_all(lts, ['2024-01-01 00:00:00.000001'])`,
		`CAST(CAST('NaN' AS DOUBLE) AS DECIMAL(5,2))`,
		`[CAST('Infinity' AS DOUBLE)]`,
	)
}

// checkErrCode fails t unless err is nil or a *store.Error with code 13
// (invalid input), or 12 (unknown column) when unknownColumnOK: the only
// errors the expression language may report.
func checkErrCode(t *testing.T, src string, err error, unknownColumnOK bool) {
	t.Helper()
	if err == nil {
		return
	}
	switch code := store.ErrorCode(err); {
	case code == store.CodeInvalidInput:
	case code == store.CodeTableColumnNotFound && unknownColumnOK:
	default:
		t.Fatalf("%q: error %v has code %d", src, err, code)
	}
}

// FuzzParse checks that Parse never panics and fails only with code 13,
// and that what it accepts can be compiled without panicking,
// failing only with code 13 or 12.
func FuzzParse(f *testing.F) {
	for _, s := range fuzzSeeds() {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		e, err := Parse(src)
		checkErrCode(t, src, err, false)
		if err != nil {
			return
		}
		_, err = compileSQL(e, testColumns)
		checkErrCode(t, src, err, true)
	})
}

// FuzzEvalFilter is the differential oracle of the filter language: on the
// generated table, the in-memory evaluator must select exactly the rows
// SQLite selects with the compiled filter, or report the same error, or
// decline (and leave the filter to SQLite).
func FuzzEvalFilter(f *testing.F) {
	for _, s := range evalDiffCases {
		if len(s) < 200 {
			f.Add(s)
		}
	}
	f.Add(`s ILIKE 'STRASSE' OR big > f`)
	et := newEvalTable(f, 7)
	f.Fuzz(func(t *testing.T, src string) {
		e, err := Parse(src)
		checkErrCode(t, src, err, false)
		if err != nil {
			return
		}
		_, err = compileFilterSQL(e, et.res)
		checkErrCode(t, src, err, true)
		et.check(t, src)
	})
}

// FuzzSQLOracle checks that SQLite accepts the SQL of every expression
// that compiles, so the differential tests can check the evaluator on
// any of them.
func FuzzSQLOracle(f *testing.F) {
	for _, s := range fuzzSeeds() {
		f.Add(s)
	}
	db := openTestDB(f)
	f.Fuzz(func(t *testing.T, src string) {
		e, err := Parse(src)
		if err != nil {
			return
		}
		c, err := compileSQL(e, testColumns)
		if err != nil {
			return
		}
		stmt, err := db.Prepare(`SELECT ` + c.SQL + ` FROM t`)
		if err != nil {
			t.Fatalf("%q compiled to SQL that SQLite rejects: %s: %v", src, c.SQL, err)
		}
		stmt.Close()
	})
}

// FuzzEvalArrow checks the evaluator over Arrow on arbitrary input: parse
// and plan fail only with codes 13 and 12, evaluation never panics and
// fails only with code 13, and where the evaluator and SQLite both
// compute a filter or a value, they agree.
func FuzzEvalArrow(f *testing.F) {
	for _, s := range append(append(fuzzSeeds(), arrowFilterCases...), arrowValueCases...) {
		if len(s) < 300 {
			f.Add(s)
		}
	}
	at := newArrowTable(f, 11, 64)
	binder := SchemaBinder(at.schema)
	f.Fuzz(func(t *testing.T, src string) {
		e, err := Parse(src)
		checkErrCode(t, src, err, false)
		if err != nil {
			return
		}
		if p, err := PlanFilter(e, binder); err == nil {
			rows, err := p.Filter(at.batch)
			checkErrCode(t, src, err, false)
			c, cerr := compileFilterSQL(e, at.res)
			if cerr != nil {
				t.Fatalf("%q: planned, but does not compile: %v", src, cerr)
			}
			if want, qerr := at.sqlFilterIDs(c); err == nil && qerr == nil && !slices.Equal(bitmapIDs(rows, at.n), want) {
				t.Fatalf("%q: rows %v, SQL selects %v", src, bitmapIDs(rows, at.n), want)
			}
		} else {
			checkErrCode(t, src, err, true)
		}
		p, err := PlanValue(e, binder)
		checkErrCode(t, src, err, true)
		if err != nil {
			return
		}
		v, err := p.p.value(at.n, p.loader([]arrow.RecordBatch{at.batch}))
		checkErrCode(t, src, err, false)
		c, cerr := compileSQL(e, at.res)
		if cerr != nil {
			t.Fatalf("%q: planned, but does not compile: %v", src, cerr)
		}
		if want, qerr := at.sqlValues(c); err == nil && qerr == nil {
			for i, w := range want {
				if !sameStored(v.at(i), w) {
					t.Fatalf("%q: row %d: %s, SQL gives %#v", src, i+1, describeValue(v.at(i)), w)
				}
			}
		}
		if arr, err := p.Value(memory.DefaultAllocator, at.batch); err == nil {
			arr.Release()
		} else {
			checkErrCode(t, src, err, false)
		}
	})
}
