package file_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/lancens/lancens/lance/blob"
	"github.com/lancens/lancens/lance/file"
	"github.com/lancens/lancens/lance/schema"
)

// storageVersions are the versions the Node SDK writes test files in, and
// whether this package reads them yet. A version without a registered
// decoder must be refused with ErrUnsupported; once its decoder is
// registered in decoders.go, flip it here and every check below runs on
// its files too.
var storageVersions = []struct {
	name  string
	reads bool
}{
	{"2.0", true},
	{"2.1", true},
	{"2.2", true},
}

var (
	generateOnce sync.Once
	generated    string
	generateErr  error
)

// lanceFiles returns the directory the Node script node/lance/files.mjs
// wrote its data files into (once per test binary), one subdirectory per
// storage version. Without Node or the LanceDB SDK the test is skipped,
// except under CI=true, where it fails.
func lanceFiles(t *testing.T) string {
	t.Helper()
	sdk := filepath.Join("..", "..", "node", "node_modules", "@lancedb", "lancedb")
	_, nodeErr := exec.LookPath("node")
	_, sdkErr := os.Stat(sdk)
	if nodeErr != nil || sdkErr != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("Node or the LanceDB SDK is missing (node: %v, SDK: %v): run make node-deps", nodeErr, sdkErr)
		}
		t.Skipf("Node or the LanceDB SDK is missing (node: %v, SDK: %v)", nodeErr, sdkErr)
	}
	generateOnce.Do(func() {
		dir, err := os.MkdirTemp("", "lance-file-test-")
		if err != nil {
			generateErr = err
			return
		}
		generated = dir
		args := []string{filepath.Join("lance", "files.mjs"), dir}
		for _, v := range storageVersions {
			args = append(args, v.name)
		}
		cmd := exec.Command("node", args...)
		cmd.Dir = filepath.Join("..", "..", "node")
		if out, err := cmd.CombinedOutput(); err != nil {
			generateErr = fmt.Errorf("node %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	})
	if generateErr != nil {
		t.Fatal(generateErr)
	}
	return generated
}

func TestMain(m *testing.M) {
	code := m.Run()
	if generated != "" {
		os.RemoveAll(generated)
	}
	os.Exit(code)
}

// listed is one data file files.mjs wrote.
type listed struct {
	Family   string
	File     string
	Expected json.RawMessage // one IPC file, or (derived) one per batch
	Rows     uint64
	Derived  map[string]*string
}

func readListing(t *testing.T, dir string) []listed {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(dir, "files.json"))
	if err != nil {
		t.Fatal(err)
	}
	var files []listed
	if err := json.Unmarshal(raw, &files); err != nil {
		t.Fatal(err)
	}
	return files
}

// readIPC returns the one record batch of an Arrow IPC file.
func readIPC(t *testing.T, path string) arrow.RecordBatch {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r, err := ipc.NewFileReader(f)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var parts []arrow.RecordBatch
	for i := 0; i < r.NumRecords(); i++ {
		rec, err := r.RecordBatch(i)
		if err != nil {
			t.Fatal(err)
		}
		rec.Retain() // the reader releases it at the next call
		parts = append(parts, rec)
	}
	if len(parts) == 1 {
		return parts[0]
	}
	// apache-arrow may split a table into several batches: join them.
	cols := make([]arrow.Array, r.Schema().NumFields())
	var n int64
	for c := range cols {
		var chunks []arrow.Array
		for _, p := range parts {
			chunks = append(chunks, p.Column(c))
		}
		arr, err := array.Concatenate(chunks, memory.DefaultAllocator)
		if err != nil {
			t.Fatal(err)
		}
		cols[c] = arr
		n = int64(arr.Len())
	}
	return array.NewRecordBatch(r.Schema(), cols, n)
}

// expectedColumns returns, by name, the columns data file f must hold.
func expectedColumns(t *testing.T, dir string, f listed, rows uint64) map[string]arrow.Array {
	t.Helper()
	out := map[string]arrow.Array{}
	if f.Derived == nil {
		var name string
		if err := json.Unmarshal(f.Expected, &name); err != nil {
			t.Fatal(err)
		}
		rec := readIPC(t, filepath.Join(dir, name))
		for i, fld := range rec.Schema().Fields() {
			out[fld.Name] = rec.Column(i)
		}
		return out
	}
	var names []string
	if err := json.Unmarshal(f.Expected, &names); err != nil {
		t.Fatal(err)
	}
	for _, name := range names {
		rec := readIPC(t, filepath.Join(dir, name))
		if uint64(rec.NumRows()) != rows {
			continue
		}
		for col, from := range f.Derived {
			if from == nil {
				out[col] = nil // all null, of the file's type
				continue
			}
			idx := rec.Schema().FieldIndices(*from)
			if len(idx) != 1 {
				t.Fatalf("%s: no expected column %s", name, *from)
			}
			out[col] = toLarge(t, rec.Column(idx[0]))
		}
		return out
	}
	t.Fatalf("%s: no expected batch of %d rows", f.File, rows)
	return nil
}

// toLarge returns arr with 64-bit offsets: Lance casts lists, strings and
// binaries to their large types for the derived columns.
func toLarge(t *testing.T, arr arrow.Array) arrow.Array {
	t.Helper()
	var large arrow.DataType
	switch dt := arr.DataType().(type) {
	case *arrow.ListType:
		large = arrow.LargeListOfField(dt.ElemField())
	case *arrow.StringType:
		large = arrow.BinaryTypes.LargeString
	case *arrow.BinaryType:
		large = arrow.BinaryTypes.LargeBinary
	default:
		t.Fatalf("no large type for %s", arr.DataType())
	}
	d := arr.Data()
	if d.Offset() != 0 {
		t.Fatal("toLarge: a sliced array")
	}
	offsets := arrow.Int32Traits.CastFromBytes(d.Buffers()[1].Bytes())[:d.Len()+1]
	wide := make([]int64, len(offsets))
	for i, o := range offsets {
		wide[i] = int64(o)
	}
	buffers := []*memory.Buffer{d.Buffers()[0], memory.NewBufferBytes(arrow.Int64Traits.CastToBytes(wide))}
	if len(d.Buffers()) > 2 {
		buffers = append(buffers, d.Buffers()[2])
	}
	return array.MakeFromData(array.NewData(large, d.Len(), buffers, d.Children(), d.NullN(), 0))
}

// sameRows fails t unless got holds want's values (want nil: all nulls).
func sameRows(t *testing.T, what string, want, got arrow.Array) {
	t.Helper()
	if want == nil {
		if got.NullN() != got.Len() {
			t.Errorf("%s: %d of %d rows are null, want all", what, got.NullN(), got.Len())
		}
		return
	}
	if !arrow.TypeEqual(want.DataType(), got.DataType()) {
		t.Errorf("%s: type %s, want %s", what, got.DataType(), want.DataType())
		return
	}
	if want.Len() != got.Len() {
		t.Errorf("%s: %d rows, want %d", what, got.Len(), want.Len())
		return
	}
	if array.Equal(want, got) {
		return
	}
	for i := 0; i < want.Len(); i++ {
		if !array.SliceEqual(want, int64(i), int64(i+1), got, int64(i), int64(i+1)) {
			w, g := array.NewSlice(want, int64(i), int64(i+1)), array.NewSlice(got, int64(i), int64(i+1))
			t.Errorf("%s: row %d is %v, want %v", what, i, g, w)
			return
		}
	}
	t.Errorf("%s: arrays differ", what)
}

// takeRows returns the rows of arr at idx, through Go slices of arr.
func takeRows(t *testing.T, arr arrow.Array, idx []uint64) arrow.Array {
	t.Helper()
	if arr == nil {
		return nil
	}
	parts := make([]arrow.Array, len(idx))
	for i, r := range idx {
		parts[i] = array.NewSlice(arr, int64(r), int64(r)+1)
	}
	if len(parts) == 0 {
		return array.MakeArrayOfNull(memory.DefaultAllocator, arr.DataType(), 0)
	}
	out, err := array.Concatenate(parts, memory.DefaultAllocator)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func column(rec arrow.RecordBatch, name string) arrow.Array {
	idx := rec.Schema().FieldIndices(name)
	if len(idx) != 1 {
		return nil
	}
	return rec.Column(idx[0])
}

// TestReadsLanceFiles reads every data file the LanceDB SDK wrote, for
// every type family and storage version, and checks it row for row
// against the batch written: whole, by row ranges, by taken rows, scanned
// in batches, and projected.
func TestReadsLanceFiles(t *testing.T) {
	root := lanceFiles(t)
	ctx := context.Background()
	for _, v := range storageVersions {
		t.Run(v.name, func(t *testing.T) {
			dir := filepath.Join(root, v.name)
			store := blob.NewDir(dir)
			for _, f := range readListing(t, dir) {
				t.Run(filepath.Base(f.File), func(t *testing.T) {
					r, err := file.Open(ctx, store, f.File, nil)
					if !v.reads {
						if !errors.Is(err, file.ErrUnsupported) {
							t.Fatalf("Open(%s file) = %v, want ErrUnsupported until its decoder is registered", v.name, err)
						}
						return
					}
					if err != nil {
						t.Fatal(err)
					}
					if got := r.Version().String(); got != v.name {
						t.Errorf("Version = %s, want %s", got, v.name)
					}
					checkFile(t, ctx, r, expectedColumns(t, dir, f, r.NumRows()), f)
				})
			}
		})
	}
}

func checkFile(t *testing.T, ctx context.Context, r *file.Reader, want map[string]arrow.Array, f listed) {
	n := r.NumRows()
	if f.Rows != 0 && n != f.Rows {
		t.Fatalf("NumRows = %d, want %d", n, f.Rows)
	}
	if len(r.Schema().Fields) != len(want) {
		t.Errorf("the file has %d fields, want %d", len(r.Schema().Fields), len(want))
	}
	check := func(what string, rec arrow.RecordBatch, rows func(arrow.Array) arrow.Array) {
		t.Helper()
		for _, fld := range rec.Schema().Fields() {
			exp, ok := want[fld.Name]
			if !ok {
				t.Errorf("%s: unexpected column %s", what, fld.Name)
				continue
			}
			sameRows(t, what+" "+fld.Name, rows(exp), column(rec, fld.Name))
		}
	}
	whole, err := r.ReadRange(ctx, nil, 0, n)
	if err != nil {
		t.Fatal(err)
	}
	check("whole file", whole, func(a arrow.Array) arrow.Array { return a })

	rng := rand.New(rand.NewPCG(uint64(n), 7))
	for range 3 {
		a := rng.Uint64N(n)
		b := a + rng.Uint64N(n-a) + 1
		rec, err := r.ReadRange(ctx, nil, a, b)
		if err != nil {
			t.Fatal(err)
		}
		check(fmt.Sprintf("rows [%d, %d)", a, b), rec, func(x arrow.Array) arrow.Array {
			if x == nil {
				return nil
			}
			return array.NewSlice(x, int64(a), int64(b))
		})
	}

	idx := []uint64{n - 1, 0}
	for range 20 {
		idx = append(idx, rng.Uint64N(n))
	}
	idx = append(idx, idx[2]) // a repeat
	rec, err := r.Take(ctx, nil, idx)
	if err != nil {
		t.Fatal(err)
	}
	check(fmt.Sprintf("take %v", idx), rec, func(x arrow.Array) arrow.Array { return takeRows(t, x, idx) })

	var parts []arrow.RecordBatch
	for rec, err := range r.Scan(ctx, nil, 97) {
		if err != nil {
			t.Fatal(err)
		}
		parts = append(parts, rec)
	}
	var start int64
	for _, p := range parts {
		check(fmt.Sprintf("scan batch at %d", start), p, func(x arrow.Array) arrow.Array {
			if x == nil {
				return nil
			}
			return array.NewSlice(x, start, start+p.NumRows())
		})
		start += p.NumRows()
	}
	if uint64(start) != n {
		t.Errorf("Scan yielded %d rows, want %d", start, n)
	}

	// Each field alone, by name and by id, and the fields in reverse.
	s := r.Schema()
	var ids []int32
	for _, fld := range s.Fields {
		ids = append([]int32{fld.ID}, ids...)
		proj, err := s.Project(schema.FormatPath(fld.Name))
		if err != nil {
			t.Fatal(err)
		}
		rec, err := r.ReadRange(ctx, proj, 0, n)
		if err != nil {
			t.Fatal(err)
		}
		if rec.NumCols() != 1 {
			t.Fatalf("projection of %s has %d columns", fld.Name, rec.NumCols())
		}
		check("projected "+fld.Name, rec, func(a arrow.Array) arrow.Array { return a })
	}
	proj, err := s.ProjectIDs(ids...)
	if err != nil {
		t.Fatal(err)
	}
	rec, err = r.Take(ctx, proj, []uint64{n / 2})
	if err != nil {
		t.Fatal(err)
	}
	for i, fld := range rec.Schema().Fields() {
		if want := s.Fields[len(s.Fields)-1-i].Name; fld.Name != want {
			t.Errorf("reversed projection: column %d is %s, want %s", i, fld.Name, want)
		}
	}
	check("reversed projection", rec, func(x arrow.Array) arrow.Array { return takeRows(t, x, []uint64{n / 2}) })
}
