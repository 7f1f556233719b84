package expr

import (
	"sort"
	"strings"
	"testing"
	"unicode"
)

// allowedWords are the only words compiled SQL may contain outside the
// resolver's column SQL: keywords, function names and the constants 0 and 1.
var allowedWords = map[string]bool{}

func init() {
	for _, w := range strings.Fields(`CASE WHEN THEN ELSE END NOT AND OR IS NULL TRUE FALSE IN
		BETWEEN CAST AS REAL INTEGER TEXT BLOB 0 1 SELECT value FROM json_each
		length abs coalesce nullif concat trim ltrim rtrim replace round floor ceil sqrt power mod
		json json_array json_array_length`) {
		allowedWords[w] = true
	}
	for _, f := range sqlFuncs {
		allowedWords[f.name] = true
	}
}

// allowedSymbols are the operator and punctuation characters of compiled SQL.
const allowedSymbols = "()?,=<>+-*/%|"

// checkSQL reports why the compiled SQL is unsafe, or "" when, after
// removing the resolver's column SQL, it consists only of allowed words,
// symbols and spaces, and has one placeholder per argument.
func checkSQL(c Compiled) string {
	cols := make([]string, 0, len(testColumns))
	for _, col := range testColumns {
		cols = append(cols, col.SQL)
	}
	sort.Slice(cols, func(i, j int) bool { return len(cols[i]) > len(cols[j]) })
	rest := c.SQL
	for _, col := range cols {
		rest = strings.ReplaceAll(rest, col, " ")
	}
	if n := strings.Count(rest, "?"); n != len(c.Args) {
		return "placeholder count differs from argument count"
	}
	words := strings.FieldsFunc(rest, func(r rune) bool {
		return unicode.IsSpace(r) || strings.ContainsRune(allowedSymbols, r)
	})
	for _, w := range words {
		if !allowedWords[w] {
			return "unexpected word " + w
		}
	}
	return ""
}

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

// FuzzParse checks that Parse never panics, and that what it accepts can
// be walked and compiled without panicking.
func FuzzParse(f *testing.F) {
	for _, s := range fuzzSeeds() {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		e, err := Parse(src)
		if err != nil {
			return
		}
		Fields(e)
		_, _ = Compile(e, testColumns)
	})
}

// FuzzCompile checks that compiled SQL never carries text of the input and
// that SQLite accepts it.
func FuzzCompile(f *testing.F) {
	for _, s := range fuzzSeeds() {
		f.Add(s)
	}
	db := openTestDB(f)
	f.Fuzz(func(t *testing.T, src string) {
		e, err := Parse(src)
		if err != nil {
			return
		}
		c, err := Compile(e, testColumns)
		if err != nil {
			return
		}
		if why := checkSQL(c); why != "" {
			t.Fatalf("%q compiled to unsafe SQL %s: %s", src, c.SQL, why)
		}
		stmt, err := db.Prepare(`SELECT ` + c.SQL + ` FROM t`)
		if err != nil {
			t.Fatalf("%q compiled to SQL that SQLite rejects: %s: %v", src, c.SQL, err)
		}
		stmt.Close()
	})
}
