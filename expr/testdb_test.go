package expr

import (
	"database/sql"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/lancens/lancens/store"
)

// testResolver resolves paths joined with "/" from a fixed table.
type testResolver map[string]dbColumn

func (r testResolver) Resolve(path []string) (dbColumn, error) {
	if c, ok := r[strings.Join(path, "/")]; ok {
		return c, nil
	}
	return dbColumn{}, store.Errorf(store.CodeTableColumnNotFound, "column %s not found", strings.Join(path, "."))
}

func ptr(t Type) *Type { return &t }

// testColumns are the columns of the test table t, by path, with the
// SQLite column each is stored in.
var testColumns = testResolver{
	"_rowid":     {`t."id"`, Type{Kind: KindInt}},
	"b":          {`t."c_b"`, Type{Kind: KindBool}},
	"i":          {`t."c_i"`, Type{Kind: KindInt}},
	"f":          {`t."c_f"`, Type{Kind: KindFloat}},
	"d":          {`t."c_d"`, decimalType(10, 2)},
	"dt":         {`t."c_dt"`, decimalType(38, 4)},
	"s":          {`t."c_s"`, Type{Kind: KindString}},
	"bin":        {`t."c_bin"`, Type{Kind: KindBinary}},
	"d32":        {`t."c_d32"`, Type{Kind: KindDate32}},
	"d64":        {`t."c_d64"`, Type{Kind: KindDate64, Unit: Milli}},
	"ts":         {`t."c_ts"`, Type{Kind: KindTimestamp, Unit: Micro}},
	"tsms":       {`t."c_tsms"`, Type{Kind: KindTimestamp, Unit: Milli}},
	"tss":        {`t."c_tss"`, Type{Kind: KindTimestamp, Unit: Second}},
	"tm":         {`t."c_tm"`, Type{Kind: KindTime, Unit: Micro}},
	"dur":        {`t."c_dur"`, Type{Kind: KindDuration, Unit: Milli}},
	"l":          {`t."c_l"`, Type{Kind: KindList, Elem: ptr(Type{Kind: KindInt})}},
	"ls":         {`t."c_ls"`, Type{Kind: KindList, Elem: ptr(Type{Kind: KindString})}},
	"lb":         {`t."c_lb"`, Type{Kind: KindList, Elem: ptr(Type{Kind: KindBool})}},
	"lts":        {`t."c_lts"`, Type{Kind: KindList, Elem: ptr(Type{Kind: KindTimestamp, Unit: Milli})}},
	"st":         {`t."c_st"`, Type{Kind: KindStruct}},
	"st/x":       {`t."c_st_x"`, Type{Kind: KindInt}},
	"st/inner/y": {`t."c_st_inner_y"`, Type{Kind: KindString}},
	"m":          {`t."c_m"`, Type{Kind: KindMap}},
	"v":          {`t."c_v"`, Type{Kind: KindVector, Elem: ptr(Type{Kind: KindFloat})}},
	"My Col":     {`t."c_mycol"`, Type{Kind: KindString}},
	"a.b":        {`t."c_ab"`, Type{Kind: KindInt}},
}

func days(y int, m time.Month, d int) int64 {
	return time.Date(y, m, d, 0, 0, 0, 0, time.UTC).Unix() / 86400
}

// micros returns the microseconds since the epoch of a UTC instant.
func micros(y int, m time.Month, d, hh, mm, ss, us int) int64 {
	return time.Date(y, m, d, hh, mm, ss, us*1000, time.UTC).UnixMicro()
}

// testRows are the rows of t; row 3 is all NULL.
var testRows = [][]any{
	{1, 1, 10, 1.5, 1234, "12345678901234567890.1234", "Hello", []byte{0, 0xff},
		days(2024, 1, 1), days(2024, 1, 1) * 86400000,
		micros(2024, 1, 1, 12, 0, 0, 500000), micros(2024, 1, 1, 12, 0, 0, 500000) / 1000, micros(2024, 1, 1, 12, 0, 0, 0) / 1e6,
		int64(12*3600+30*60) * 1e6, 1500, "[1,2,3]", `["a","b"]`, "[true]",
		"[" + itoa64(micros(2024, 1, 1, 0, 0, 0, 0)/1000) + "]",
		1, 5, "deep", `{"k":1}`, []byte{1, 2, 3, 4}, "x", 7},
	{2, 0, -3, -2.25, -50, "-1.5000", "hello", []byte{1},
		days(2023, 6, 15), days(2023, 6, 15) * 86400000,
		micros(1969, 12, 31, 23, 59, 59, 0), micros(1969, 12, 31, 23, 59, 59, 0) / 1000, int64(-1),
		int64(1e6), -10, "[4]", `["c"]`, "[false]", "[]",
		1, nil, "x", "{}", []byte{0}, "y", 8},
	{3, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil,
		nil, nil, nil, nil, nil, nil, nil},
	{4, 1, 0, 0.0, 0, "0.0000", "a_b%c", []byte{}, days(1970, 1, 1), 0, 0, 0, 0, 0, 0,
		"[]", `["a_b"]`, "[]", "[]", 1, 0, "", "{}", nil, "", 0},
}

var testColumnNames = []string{"id", "c_b", "c_i", "c_f", "c_d", "c_dt", "c_s", "c_bin", "c_d32", "c_d64",
	"c_ts", "c_tsms", "c_tss", "c_tm", "c_dur", "c_l", "c_ls", "c_lb", "c_lts",
	"c_st", "c_st_x", "c_st_inner_y", "c_m", "c_v", "c_mycol", "c_ab"}

// openTestDB registers the functions and returns a database file holding
// table t with testRows.
func openTestDB(t testing.TB) *sql.DB {
	t.Helper()
	if err := Register(); err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("sqlite", filepath.Join(t.TempDir(), "t.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	cols := []string{`"id" INTEGER PRIMARY KEY`}
	for _, c := range testColumnNames[1:] {
		cols = append(cols, `"`+c+`"`)
	}
	if _, err := db.Exec(`CREATE TABLE t (` + strings.Join(cols, ", ") + `)`); err != nil {
		t.Fatal(err)
	}
	marks := strings.TrimSuffix(strings.Repeat("?, ", len(testColumnNames)), ", ")
	for _, row := range testRows {
		if _, err := db.Exec(`INSERT INTO t VALUES (`+marks+`)`, row...); err != nil {
			t.Fatal(err)
		}
	}
	return db
}

func itoa64(n int64) string { return strconv.FormatInt(n, 10) }
