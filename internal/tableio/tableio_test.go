package tableio

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
)

func TestParseSchema(t *testing.T) {
	for _, tc := range []struct {
		in, want string // want: FormatSchema of the result, "" for an error
	}{
		{"id:int64,vec:fixed_size_list<float32>[768]", "id:int64,vec:vector[768]"},
		{"id:int64, name : utf8", "id:int64,name:string"},
		{"v:vector[3]", "v:vector[3]"},
		{"v:fixed_size_list<float64>[2]", "v:fixed_size_list<float64>[2]"},
		{"t:timestamp[us, UTC],d:date,ts:timestamp[ms]", "t:timestamp[us, UTC],d:date32,ts:timestamp[ms]"},
		{"tags:list<string>,big:large_list<int32>", "tags:list<string>,big:large_list<int32>"},
		{"s:struct<a:int64,b:list<double>>", "s:struct<a:int64,b:list<float64>>"},
		{`"a,b":bool,"x y":float`, `"a,b":bool,"x y":float32`},
		{"", ""},
		{"id", ""},
		{"id:int65", ""},
		{"v:vector[0]", ""},
		{"v:vector[x]", ""},
		{"v:list<int64", ""},
		{"a:int64,a:string", ""},
		{"t:timestamp[days]", ""},
		{"a:int64 junk", ""},
	} {
		fields, err := ParseSchema(tc.in)
		if tc.want == "" {
			if err == nil {
				t.Errorf("ParseSchema(%q) = %s, want an error", tc.in, FormatSchema(fields))
			}
			continue
		}
		if err != nil {
			t.Errorf("ParseSchema(%q): %v", tc.in, err)
			continue
		}
		if got := FormatSchema(fields); got != tc.want {
			t.Errorf("ParseSchema(%q) = %s, want %s", tc.in, got, tc.want)
		}
		again, err := ParseSchema(FormatSchema(fields))
		if err != nil || FormatSchema(again) != tc.want {
			t.Errorf("%s does not read back: %v", tc.want, err)
		}
	}
}

// writeFile writes content to a file named name in a new directory.
func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// readAll reads every batch of src into one table of JSON lines, and
// closes it.
func readAll(t *testing.T, src Source) (string, error) {
	t.Helper()
	defer src.Close()
	var buf bytes.Buffer
	w, err := NewWriter(&buf, JSONL, src.Schema())
	if err != nil {
		t.Fatal(err)
	}
	for {
		rec, err := src.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return buf.String(), err
		}
		err = w.Write(rec)
		rec.Release()
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.String(), nil
}

func TestInferAndRead(t *testing.T) {
	for _, tc := range []struct {
		name, file, content, schema string
		// wantSchema is the schema read; wantRows the rows as JSON lines,
		// wantErr a fragment of the error (the line and column).
		wantSchema, wantRows, wantErr string
	}{
		{name: "csv types", file: "a.csv",
			content:    "id,score,ok,name,day,at,vec\n1,0.5,true,x,2024-01-31,2024-01-31 12:00:00Z,\"[0.5, 1]\"\n2,1,false,,2024-02-01,2024-02-01T00:00:00Z,\"[1.5, 2]\"\n",
			wantSchema: "id:int64,score:float64,ok:bool,name:string,day:date32,at:timestamp[us, UTC],vec:vector[2]",
			wantRows: `{"id":1,"score":0.5,"ok":true,"name":"x","day":"2024-01-31","at":"2024-01-31T12:00:00Z","vec":[0.5,1]}` + "\n" +
				`{"id":2,"score":1,"ok":false,"name":"","day":"2024-02-01","at":"2024-02-01T00:00:00Z","vec":[1.5,2]}` + "\n"},
		{name: "csv nulls and mixed", file: "a.csv",
			content:    "a,b,c,d\n1,,x,[1]\n,2,3,\"[1,2]\"\n",
			wantSchema: "a:int64,b:int64,c:string,d:list<int64>",
			wantRows:   `{"a":1,"b":null,"c":"x","d":[1]}` + "\n" + `{"a":null,"b":2,"c":"3","d":[1,2]}` + "\n"},
		{name: "csv override", file: "a.csv", schema: "id:int32,vec:fixed_size_list<float64>[2]",
			content:    "id,vec\n7,\"[1,2]\"\n",
			wantSchema: "id:int32,vec:fixed_size_list<float64>[2]",
			wantRows:   `{"id":7,"vec":[1,2]}` + "\n"},
		{name: "csv value past the sample", file: "a.csv",
			content: "id\n1\n2\nthree\n", wantSchema: "id:int64", wantErr: "line 4"},
		{name: "csv vector of the wrong size", file: "a.csv", schema: "v:vector[2]",
			content: "v\n\"[1,2]\"\n\"[1,2,3]\"\n", wantSchema: "v:vector[2]", wantErr: "line 3, column v"},
		{name: "csv override of a missing column", file: "a.csv", schema: "nope:int64",
			content: "id\n1\n", wantErr: "nope"},
		{name: "jsonl types", file: "a.jsonl",
			content: `{"id":1,"vec":[0.25,0.5],"tags":["a"],"meta":{"k":1},"big":9223372036854775807}` + "\n\n" +
				`{"id":2,"vec":[1.5,2.5],"tags":[],"meta":null,"extra":null,"big":-1}` + "\n",
			wantSchema: "id:int64,vec:vector[2],tags:list<string>,meta:struct<k:int64>,big:int64,extra:string",
			wantRows: `{"id":1,"vec":[0.25,0.5],"tags":["a"],"meta":{"k":1},"big":9223372036854775807,"extra":null}` + "\n" +
				`{"id":2,"vec":[1.5,2.5],"tags":[],"meta":null,"big":-1,"extra":null}` + "\n"},
		{name: "jsonl mixed values are strings", file: "a.jsonl",
			content:    `{"v":1}` + "\n" + `{"v":"x"}` + "\n" + `{"v":[1]}` + "\n",
			wantSchema: "v:string",
			wantRows:   `{"v":"1"}` + "\n" + `{"v":"x"}` + "\n" + `{"v":"[1]"}` + "\n"},
		{name: "jsonl member past the sample", file: "a.jsonl",
			content: strings.Repeat(`{"a":1}`+"\n", 3) + `{"a":1,"b":2}` + "\n", wantSchema: "a:int64", wantErr: `line 4: member "b"`},
		{name: "jsonl not an object", file: "a.jsonl", content: `{"a":1}` + "\n[1]\n", wantErr: "line 2"},
		{name: "jsonl value that does not fit", file: "a.jsonl", schema: "a:int64",
			content: `{"a":1}` + "\n" + `{"a":1.5}` + "\n", wantSchema: "a:int64", wantErr: "line 2, column a"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := writeFile(t, tc.file, tc.content)
			f, err := FormatOf(path)
			if err != nil {
				t.Fatal(err)
			}
			opts := Options{InferRows: 2, BatchRows: 1}
			if tc.schema != "" {
				if opts.Overrides, err = ParseSchema(tc.schema); err != nil {
					t.Fatal(err)
				}
			}
			src, err := Open(path, f, opts)
			if err != nil {
				if tc.wantSchema == "" && tc.wantErr != "" && strings.Contains(err.Error(), tc.wantErr) {
					return
				}
				t.Fatalf("Open: %v", err)
			}
			if got := FormatSchema(src.Schema().Fields()); got != tc.wantSchema {
				t.Errorf("schema %s, want %s", got, tc.wantSchema)
			}
			rows, err := readAll(t, src)
			switch {
			case tc.wantErr != "":
				var re *RowError
				if err == nil || !errors.As(err, &re) || !strings.Contains(err.Error(), tc.wantErr) {
					t.Errorf("error %v, want a RowError with %q", err, tc.wantErr)
				}
			case err != nil:
				t.Errorf("read: %v", err)
			case rows != tc.wantRows:
				t.Errorf("rows\n%s\nwant\n%s", rows, tc.wantRows)
			}
		})
	}
}

// TestTableSchemaWins reads a file into an existing table's schema: its
// columns take the table's types, an override wins over both.
func TestTableSchemaWins(t *testing.T) {
	table := arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int32},
		{Name: "vec", Type: arrow.FixedSizeListOf(2, arrow.PrimitiveTypes.Float32)},
		{Name: "score", Type: arrow.PrimitiveTypes.Float32},
	}, nil)
	path := writeFile(t, "a.jsonl", `{"id":1,"vec":[1,2],"score":1}`+"\n")
	over, _ := ParseSchema("score:float64")
	src, err := Open(path, JSONL, Options{Table: table, Overrides: over})
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	if got, want := FormatSchema(src.Schema().Fields()), "id:int32,vec:vector[2],score:float64"; got != want {
		t.Fatalf("schema %s, want %s", got, want)
	}
}

// TestWriteReadBack writes batches of many types in each format and reads
// them back: the same types (for CSV and JSON lines, the types inference
// gives them) and rows.
func TestWriteReadBack(t *testing.T) {
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: "name", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "score", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
		{Name: "ok", Type: arrow.FixedWidthTypes.Boolean, Nullable: true},
		{Name: "vec", Type: arrow.FixedSizeListOf(3, arrow.PrimitiveTypes.Float32), Nullable: true},
		{Name: "tags", Type: arrow.ListOf(arrow.BinaryTypes.String), Nullable: true},
		{Name: "at", Type: &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}, Nullable: true},
	}, nil)
	rows := `{"id":1,"name":"a \"quoted\", name","score":0.1,"ok":true,"vec":[0.1,0.2,0.3],"tags":["x","y"],"at":"2024-01-31T12:00:00.5Z"}` + "\n" +
		`{"id":-9223372036854775808,"name":"b","score":-1e+300,"ok":false,"vec":[1e-10,-2,3.4028235e+38],"tags":[],"at":"1970-01-01T00:00:00Z"}` + "\n"
	rec, _, err := array.RecordFromJSON(memory.DefaultAllocator, schema, strings.NewReader("["+strings.ReplaceAll(strings.TrimSpace(rows), "\n", ",")+"]"))
	if err != nil {
		t.Fatal(err)
	}
	defer rec.Release()
	for _, f := range []Format{CSV, JSONL, Parquet} {
		t.Run(string(f), func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "out."+string(f))
			out, err := os.Create(path)
			if err != nil {
				t.Fatal(err)
			}
			w, err := NewWriter(out, f, schema)
			if err != nil {
				t.Fatal(err)
			}
			if err := w.Write(rec); err != nil {
				t.Fatal(err)
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			out.Close()
			src, err := Open(path, f, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if got, want := FormatSchema(src.Schema().Fields()), FormatSchema(schema.Fields()); got != want {
				t.Errorf("schema %s, want %s", got, want)
			}
			got, err := readAll(t, src)
			if err != nil {
				t.Fatal(err)
			}
			if got != rows {
				t.Errorf("rows\n%s\nwant\n%s", got, rows)
			}
		})
	}
}

// TestWriteNoRows closes each writer without a batch, as an export of a
// query that matched nothing does (a server may answer it with no batch at
// all): a CSV file still has its header line, a JSON-lines file is empty,
// and a Parquet file still has the schema.
func TestWriteNoRows(t *testing.T) {
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: "name", Type: arrow.BinaryTypes.String, Nullable: true},
	}, nil)
	for _, f := range []Format{CSV, JSONL, Parquet} {
		t.Run(string(f), func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "out."+string(f))
			out, err := os.Create(path)
			if err != nil {
				t.Fatal(err)
			}
			w, err := NewWriter(out, f, schema)
			if err != nil {
				t.Fatal(err)
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			out.Close()
			b, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			switch f {
			case CSV:
				if string(b) != "id,name\n" {
					t.Errorf("wrote %q, want the header line", b)
				}
			case JSONL:
				if len(b) != 0 {
					t.Errorf("wrote %q, want nothing", b)
				}
			case Parquet:
				src, err := Open(path, f, Options{})
				if err != nil {
					t.Fatal(err)
				}
				if got, want := FormatSchema(src.Schema().Fields()), FormatSchema(schema.Fields()); got != want {
					t.Errorf("schema %s, want %s", got, want)
				}
			}
		})
	}
}

// TestParquetListsBecomeVectors reads a Parquet file without an Arrow
// schema whose float lists all have one length: they read as vectors,
// null lists included; with --schema they stay lists.
func TestParquetListsBecomeVectors(t *testing.T) {
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "emb", Type: arrow.ListOf(arrow.PrimitiveTypes.Float64), Nullable: true},
		{Name: "ragged", Type: arrow.ListOf(arrow.PrimitiveTypes.Float32), Nullable: true},
	}, nil)
	rec, _, err := array.RecordFromJSON(memory.DefaultAllocator, schema, strings.NewReader(
		`[{"emb":[1.5,2],"ragged":[1]},{"emb":null,"ragged":[1,2]},{"emb":[3,4.25],"ragged":null}]`))
	if err != nil {
		t.Fatal(err)
	}
	defer rec.Release()
	path := filepath.Join(t.TempDir(), "lists.parquet")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w, err := pqarrow.NewFileWriter(schema, f, nil, pqarrow.DefaultWriterProps())
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Write(rec); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ schema, wantSchema, wantRows string }{
		{"", "emb:vector[2],ragged:list<float32>",
			`{"emb":[1.5,2],"ragged":[1]}` + "\n" + `{"emb":null,"ragged":[1,2]}` + "\n" + `{"emb":[3,4.25],"ragged":null}` + "\n"},
		{"emb:list<float64>", "emb:list<float64>,ragged:list<float32>",
			`{"emb":[1.5,2],"ragged":[1]}` + "\n" + `{"emb":null,"ragged":[1,2]}` + "\n" + `{"emb":[3,4.25],"ragged":null}` + "\n"},
	} {
		opts := Options{BatchRows: 2}
		if tc.schema != "" {
			opts.Overrides, _ = ParseSchema(tc.schema)
		}
		src, err := Open(path, Parquet, opts)
		if err != nil {
			t.Fatal(err)
		}
		if got := FormatSchema(src.Schema().Fields()); got != tc.wantSchema {
			t.Errorf("schema %s, want %s", got, tc.wantSchema)
		}
		rows, err := readAll(t, src)
		if err != nil || rows != tc.wantRows {
			t.Errorf("rows (%v)\n%s\nwant\n%s", err, rows, tc.wantRows)
		}
	}
}
