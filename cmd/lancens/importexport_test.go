package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/lancens/lancens/client"
	"github.com/lancens/lancens/internal/testkit/apitest"
	"github.com/lancens/lancens/store"
)

const transferKey = "import-export-key"

// transfer runs `lancens import` or `lancens export` with args against
// url, with the key in LANCENS_API_KEY, and returns its output.
func transfer(t *testing.T, url string, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	getenv := func(k string) string {
		if k == "LANCENS_API_KEY" {
			return transferKey
		}
		return ""
	}
	var out, errOut bytes.Buffer
	args = append(args[:1:1], append([]string{"--url", url, "--progress", "lines"}, args[1:]...)...)
	err = run(context.Background(), args, getenv, &out, &errOut)
	return out.String(), errOut.String(), err
}

// bigSchema is the schema of the Parquet file of TestImportExportParquet.
var bigSchema = arrow.NewSchema([]arrow.Field{
	{Name: "id", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
	{Name: "name", Type: arrow.BinaryTypes.String, Nullable: true},
	{Name: "score", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
	{Name: "vec", Type: arrow.FixedSizeListOf(8, arrow.PrimitiveTypes.Float32), Nullable: true},
}, nil)

// writeBigParquet writes n rows of bigSchema to a Parquet file with
// Arrow's writer, in row groups of 128Ki rows, and returns its path.
func writeBigParquet(t *testing.T, n int) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "big.parquet")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	w, err := pqarrow.NewFileWriter(bigSchema, f, parquet.NewWriterProperties(parquet.WithCompression(compress.Codecs.Snappy),
		parquet.WithMaxRowGroupLength(128<<10), parquet.WithDictionaryDefault(false)), pqarrow.NewArrowWriterProperties(pqarrow.WithStoreSchema()))
	if err != nil {
		t.Fatal(err)
	}
	b := array.NewRecordBuilder(memory.DefaultAllocator, bigSchema)
	defer b.Release()
	ids := b.Field(0).(*array.Int64Builder)
	names := b.Field(1).(*array.StringBuilder)
	scores := b.Field(2).(*array.Float64Builder)
	vecs := b.Field(3).(*array.FixedSizeListBuilder)
	vals := vecs.ValueBuilder().(*array.Float32Builder)
	const batch = 64 << 10
	for start := 0; start < n; start += batch {
		for i := start; i < min(start+batch, n); i++ {
			ids.Append(int64(i))
			if i%10 == 3 {
				names.AppendNull()
			} else {
				names.Append(fmt.Sprintf("row %d", i))
			}
			scores.Append(float64(i) / 7)
			vecs.Append(true)
			for k := range 8 {
				vals.Append(float32(i%1000) + float32(k)/8)
			}
		}
		rec := b.NewRecordBatch()
		if err := w.WriteBuffered(rec); err != nil {
			t.Fatal(err)
		}
		rec.Release()
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

// readParquet reads a whole Parquet file.
func readParquet(t *testing.T, path string) arrow.Table {
	t.Helper()
	f, err := file.OpenParquetFile(path, false)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	fr, err := pqarrow.NewFileReader(f, pqarrow.ArrowReadProperties{BatchSize: 64 << 10}, memory.DefaultAllocator)
	if err != nil {
		t.Fatal(err)
	}
	tbl, err := fr.ReadTable(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return tbl
}

// sameTables fails t unless a and b have the same column names, types and
// values.
func sameTables(t *testing.T, a, b arrow.Table) {
	t.Helper()
	if a.NumRows() != b.NumRows() || a.NumCols() != b.NumCols() {
		t.Fatalf("%d rows, %d columns; want %d rows, %d columns", b.NumRows(), b.NumCols(), a.NumRows(), a.NumCols())
	}
	for i := range int(a.NumCols()) {
		fa, fb := a.Schema().Field(i), b.Schema().Field(i)
		if fa.Name != fb.Name || !arrow.TypeEqual(fa.Type, fb.Type) {
			t.Fatalf("column %d is %s %s, want %s %s", i, fb.Name, fb.Type, fa.Name, fa.Type)
		}
		if !array.ChunkedEqual(a.Column(i).Data(), b.Column(i).Data()) {
			t.Fatalf("column %s differs", fa.Name)
		}
	}
}

// TestImportExportParquet imports a Parquet file of a million rows into a
// new table over the API, checks the rows arrived, exports the table to
// Parquet and checks that the export has the file's rows and types.
func TestImportExportParquet(t *testing.T) {
	const rows = 1_000_000
	srv := apitest.Start(t, apitest.Options{APIKeys: []string{transferKey}})
	path := writeBigParquet(t, rows)
	st, _ := os.Stat(path)

	start := time.Now()
	out, errOut, err := transfer(t, srv.URL, "import", "--table", "big", path)
	took := time.Since(start)
	if err != nil {
		t.Fatalf("import: %v\n%s", err, errOut)
	}
	t.Logf("imported %d rows (%.1f MiB of Parquet) in %s: %.0f rows/s", rows, float64(st.Size())/(1<<20), took.Round(time.Millisecond), rows/took.Seconds())
	if !strings.Contains(out, fmt.Sprintf("imported %d rows into big", rows)) || !strings.Contains(errOut, "schema: id:int64,name:string,score:float64,vec:vector[8]") {
		t.Errorf("import said\n%s%s", out, errOut)
	}
	n, err := srv.Client.CountRows(context.Background(), []string{"big"}, "", nil)
	if err != nil || n != rows {
		t.Fatalf("the table has %d rows (%v), want %d", n, err, rows)
	}

	exported := filepath.Join(t.TempDir(), "out.parquet")
	start = time.Now()
	if _, errOut, err := transfer(t, srv.URL, "export", "--table", "big", "--page-rows", "300000", exported); err != nil {
		t.Fatalf("export: %v\n%s", err, errOut)
	}
	t.Logf("exported %d rows in %s: %.0f rows/s", rows, time.Since(start).Round(time.Millisecond), rows/time.Since(start).Seconds())
	want, got := readParquet(t, path), readParquet(t, exported)
	defer want.Release()
	defer got.Release()
	sameTables(t, want, got)
}

// jsonRows are the rows of TestImportExportJSONLines, each line written as
// export writes it.
var jsonRows = []string{
	`{"id":1,"title":"première \"ligne\"","score":0.25,"ok":true,"vec":[0.5,-1,2.25],"tags":["a","b"],"meta":{"lang":"fr","words":3},"at":"2024-01-31T12:00:00Z"}`,
	`{"id":2,"title":"","score":-1e+300,"ok":false,"vec":[1e-10,3.4028235e+38,0],"tags":[],"meta":{"lang":null,"words":0},"at":"1970-01-01T00:00:00.000001Z"}`,
	`{"id":9223372036854775807,"title":null,"score":null,"ok":null,"vec":null,"tags":null,"meta":null,"at":null}`,
}

// TestImportExportJSONLines imports a JSON-lines file, exports the table
// to JSON lines, and checks the export holds the same rows; a second
// import of the export makes a table of the same schema.
func TestImportExportJSONLines(t *testing.T) {
	srv := apitest.Start(t, apitest.Options{APIKeys: []string{transferKey}})
	ctx := context.Background()
	if _, err := srv.Client.CreateNamespace(ctx, []string{"docs"}, nil); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	in := filepath.Join(dir, "in.jsonl")
	if err := os.WriteFile(in, []byte(strings.Join(jsonRows, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, errOut, err := transfer(t, srv.URL, "import", in, "--table", "docs$notes", "--batch-rows", "2"); err != nil {
		t.Fatalf("import: %v\n%s", err, errOut)
	} else if want := "schema: id:int64,title:string,score:float64,ok:bool,vec:vector[3],tags:list<string>,meta:struct<lang:string,words:int64>,at:timestamp[us, UTC]"; !strings.Contains(errOut, want) {
		t.Errorf("import said %s, want %s", errOut, want)
	}
	out := filepath.Join(dir, "out.jsonl")
	if _, errOut, err := transfer(t, srv.URL, "export", "--table", "docs$notes", "--page-rows", "2", out); err != nil {
		t.Fatalf("export: %v\n%s", err, errOut)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	if len(got) != len(jsonRows) {
		t.Fatalf("exported %d rows, want %d:\n%s", len(got), len(jsonRows), b)
	}
	want := slices.Clone(jsonRows)
	// A null struct is stored as a struct of nulls: data files of format
	// 2.0 keep no validity for structs (see the README).
	want[2] = strings.Replace(want[2], `"meta":null`, `"meta":{"lang":null,"words":null}`, 1)
	for i := range got {
		if !sameJSON(t, got[i], want[i]) {
			t.Errorf("row %d exported as\n%s\nwant\n%s", i, got[i], want[i])
		}
	}
	if _, errOut, err := transfer(t, srv.URL, "import", out, "--table", "docs$again"); err != nil {
		t.Fatalf("import of the export: %v\n%s", err, errOut)
	}
	a, err := srv.Client.Table("docs", "notes").Schema(ctx)
	if err != nil {
		t.Fatal(err)
	}
	b2, err := srv.Client.Table("docs", "again").Schema(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !a.Equal(b2) {
		t.Errorf("the export imports as\n%s\nnot\n%s", b2, a)
	}
}

// sameJSON reports whether two JSON texts hold the same value (numbers
// compared as written).
func sameJSON(t *testing.T, a, b string) bool {
	t.Helper()
	decode := func(s string) any {
		dec := json.NewDecoder(strings.NewReader(s))
		dec.UseNumber()
		var v any
		if err := dec.Decode(&v); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
		return v
	}
	return reflect.DeepEqual(decode(a), decode(b))
}

// TestExportQuery exports a filtered projection of an older version, as
// CSV to standard output, with a limit.
func TestExportQuery(t *testing.T) {
	srv := apitest.Start(t, apitest.Options{APIKeys: []string{transferKey}})
	dir := t.TempDir()
	in := filepath.Join(dir, "in.csv")
	if err := os.WriteFile(in, []byte("id,name,vec\n1,a,\"[0.5,1]\"\n2,b,\"[1.5,2]\"\n3,c,\"[2.5,3]\"\n4,d,\"[3.5,4]\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, errOut, err := transfer(t, srv.URL, "import", "--table", "t", in); err != nil {
		t.Fatalf("import: %v\n%s", err, errOut)
	}
	v, err := srv.Client.Table("t").Version(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if _, errOut, err := transfer(t, srv.URL, "import", "--table", "t", "--mode", "append", in); err != nil {
		t.Fatalf("append: %v\n%s", err, errOut)
	}
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"filter and columns", []string{"--filter", "id >= 2", "--columns", "vec,id", "--version", fmt.Sprint(v)},
			"vec,id\n\"[1.5,2]\",2\n\"[2.5,3]\",3\n\"[3.5,4]\",4\n"},
		{"limit over pages", []string{"--limit", "5", "--page-rows", "2", "--columns", "id"}, "id\n1\n2\n3\n4\n1\n"},
		{"no rows", []string{"--filter", "id > 100", "--columns", "name"}, "name\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, errOut, err := transfer(t, srv.URL, append([]string{"export", "--table", "t", "--format", "csv", "-"}, tc.args...)...)
			if err != nil {
				t.Fatalf("export: %v\n%s", err, errOut)
			}
			if out != tc.want {
				t.Errorf("exported\n%s\nwant\n%s", out, tc.want)
			}
		})
	}
}

// TestImportFailures checks what a failed import says and leaves: nothing
// of a table it created, and an appended table as it was.
func TestImportFailures(t *testing.T) {
	srv := apitest.Start(t, apitest.Options{APIKeys: []string{transferKey}})
	ctx := context.Background()
	dir := t.TempDir()
	good := filepath.Join(dir, "good.jsonl")
	var lines []string
	for i := range 10 {
		lines = append(lines, fmt.Sprintf(`{"id":%d,"v":[%d.5,1.5]}`, i, i))
	}
	if err := os.WriteFile(good, []byte(strings.Join(lines, "\n")), 0o644); err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(dir, "bad.jsonl")
	if err := os.WriteFile(bad, []byte(strings.Join(append(lines[:8:8], `{"id":"x","v":[1.5,2]}`), "\n")), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, errOut, err := transfer(t, srv.URL, "import", "--table", "kept", good); err != nil {
		t.Fatalf("import: %v\n%s", err, errOut)
	}
	before, err := srv.Client.Table("kept").Version(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name     string
		args     []string
		wantErr  string // in the error
		wantCode store.Code
		wantSaid string // in stderr
	}{
		{name: "bad value, new table", args: []string{"--table", "fresh", "--commit-rows", "2", "--batch-rows", "2", "--infer-rows", "4", bad},
			wantErr: "line 9, column id", wantSaid: "dropped table fresh"},
		{name: "bad value, appended table", args: []string{"--table", "kept", "--mode", "append", "--commit-rows", "2", "--batch-rows", "2", bad},
			wantErr: "line 9, column id", wantSaid: fmt.Sprintf("restored table kept to version %d", before)},
		{name: "create an existing table", args: []string{"--table", "kept", good}, wantErr: "--mode append"},
		{name: "append to a missing table", args: []string{"--table", "missing", "--mode", "append", good}, wantErr: "--mode create"},
		{name: "schema of a missing column", args: []string{"--table", "other", "--schema", "nope:int64", writeFileT(t, dir, "a.csv", "id\n1\n")},
			wantErr: `"nope"`},
		{name: "rows that do not fit the table", args: []string{"--table", "kept", "--mode", "append", "--schema", "v:vector[3]",
			writeFileT(t, dir, "wide.jsonl", `{"id":1,"v":[1.5,2,3]}`)}, wantCode: store.CodeTableSchemaValidationError},
		{name: "no key", args: []string{"--table", "fresh", "--api-key-file", writeFileT(t, dir, "wrong.key", "wrong\n"), good},
			wantCode: store.CodeUnauthenticated},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, errOut, err := transfer(t, srv.URL, append([]string{"import"}, tc.args...)...)
			switch {
			case err == nil:
				t.Fatalf("import succeeded:\n%s", errOut)
			case tc.wantErr != "" && !strings.Contains(err.Error(), tc.wantErr):
				t.Errorf("error %v, want %q in it", err, tc.wantErr)
			case tc.wantCode != 0 && store.ErrorCode(err) != tc.wantCode:
				t.Errorf("error %v (code %d), want code %d", err, store.ErrorCode(err), tc.wantCode)
			}
			if !strings.Contains(errOut, tc.wantSaid) {
				t.Errorf("stderr\n%s\nwant %q in it", errOut, tc.wantSaid)
			}
		})
	}
	if _, err := srv.Client.DescribeTable(ctx, []string{"fresh"}, nil); !errors.Is(err, client.ErrTableNotFound) {
		t.Errorf("the failed import left table fresh: %v", err)
	}
	if n, err := srv.Client.CountRows(ctx, []string{"kept"}, "", nil); err != nil || n != 10 {
		t.Errorf("table kept has %d rows (%v) after the failed append, want 10", n, err)
	}
}

func writeFileT(t *testing.T, dir, name, content string) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestImportProgressLines checks that an import not on a terminal prints
// plain progress lines, the last one with every row.
func TestImportProgressLines(t *testing.T) {
	srv := apitest.Start(t, apitest.Options{APIKeys: []string{transferKey}})
	path := writeFileT(t, t.TempDir(), "a.csv", "id\n1\n2\n3\n")
	_, errOut, err := transfer(t, srv.URL, "import", "--table", "p", path)
	if err != nil {
		t.Fatalf("import: %v\n%s", err, errOut)
	}
	var last string
	for sc := bufio.NewScanner(strings.NewReader(errOut)); sc.Scan(); {
		last = sc.Text()
	}
	if strings.Contains(errOut, "\r") || !strings.HasPrefix(last, "import p: 100% ") || !strings.Contains(last, ", 3 rows, ") {
		t.Errorf("progress output %q, want plain lines ending with one of 100%% and 3 rows", errOut)
	}
}

// TestImportKeyFile imports with the key from --api-key-file, the
// environment having none.
func TestImportKeyFile(t *testing.T) {
	srv := apitest.Start(t, apitest.Options{APIKeys: []string{transferKey}})
	dir := t.TempDir()
	path := writeFileT(t, dir, "a.jsonl", `{"id":1}`)
	keyFile := writeFileT(t, dir, "key", transferKey+"\n")
	var out, errOut bytes.Buffer
	err := run(context.Background(), []string{"import", "--url", srv.URL, "--api-key-file", keyFile, "--table", "k", "--progress", "none", path},
		func(string) string { return "" }, &out, &errOut)
	if err != nil || !strings.Contains(out.String(), "imported 1 rows into k") {
		t.Fatalf("import: %v\n%s%s", err, out.String(), errOut.String())
	}
}
