package file_test

// Tests against Lance itself for formats 2.1 and 2.2: the LanceDB Node SDK
// writes the datasets of testDatasets (sdkdata21_test.go) from Arrow IPC
// that Go wrote, at storage version 2.1 and at the SDK's default (2.2),
// three fragments each by appends. Every data file must read back as the
// rows written, whole, by row ranges, by taken rows, scanned and
// projected (checkFile), and Lance's own scan of the dataset must give the
// same rows, so the expectation is Lance's too.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"google.golang.org/protobuf/proto"

	"github.com/lancens/lancens/lance/blob"
	"github.com/lancens/lancens/lance/file"
	"github.com/lancens/lancens/lance/internal/pb/enc21pb"
	"github.com/lancens/lancens/lance/schema"
)

// sdkVersions are the storage versions asked of the SDK ("" for its
// default), with the file version each must produce.
var sdkVersions = []struct {
	name, ask string
	version   file.Version
}{{"2.1", "2.1", file.V2_1}, {"default", "", file.V2_2}}

type sdkJob struct {
	Datasets []sdkJobDataset `json:"datasets"`
}

type sdkJobDataset struct {
	Dir     string   `json:"dir"`
	Name    string   `json:"name"`
	Version string   `json:"version"`
	Writes  []string `json:"writes"`
	Out     string   `json:"out"`
}

type sdkResult struct {
	Files   [][]string `json:"files"`
	Batches int        `json:"batches"`
}

var (
	sdkOnce sync.Once
	sdkRoot string
	sdkErr  error
)

// sdkDatasets has the SDK write every test dataset at every version (once
// per test binary) and returns the directory: <version>/db holds the
// datasets, <version>/out/<dataset> what the SDK's scan returned. With
// LANCE_SDK_FIXTURES set, that directory is used and written only once,
// to save time while working on the decoders. Without Node or the SDK the
// test is skipped, except under CI=true, where it fails (see lanceFiles).
func sdkDatasets(t *testing.T) string {
	t.Helper()
	tmp := lanceFiles(t) // skips or fails without Node and the SDK; removed by TestMain
	sdkOnce.Do(func() {
		root := os.Getenv("LANCE_SDK_FIXTURES")
		if root == "" {
			root = filepath.Join(tmp, "sdk21")
		}
		sdkRoot = root
		if _, err := os.Stat(filepath.Join(root, "done")); err == nil {
			return
		}
		sdkErr = writeSDKDatasets(root)
	})
	if sdkErr != nil {
		t.Fatal(sdkErr)
	}
	return sdkRoot
}

func sdkJobFor(root string) sdkJob {
	var job sdkJob
	for _, v := range sdkVersions {
		for _, d := range testDatasets() {
			ds := sdkJobDataset{
				Dir:     filepath.Join(root, v.name, "db"),
				Name:    d.name,
				Version: v.ask,
				Out:     filepath.Join(root, v.name, "out", d.name),
			}
			for w := range d.writes {
				ds.Writes = append(ds.Writes, filepath.Join(root, "in", fmt.Sprintf("%s-%d.arrow", d.name, w)))
			}
			job.Datasets = append(job.Datasets, ds)
		}
	}
	return job
}

func writeSDKDatasets(root string) error {
	if err := os.MkdirAll(filepath.Join(root, "in"), 0o755); err != nil {
		return err
	}
	for _, d := range testDatasets() {
		for w := range d.writes {
			raw, rec, err := d.write(w)
			if err != nil {
				return err
			}
			rec.Release()
			if err := os.WriteFile(filepath.Join(root, "in", fmt.Sprintf("%s-%d.arrow", d.name, w)), raw, 0o644); err != nil {
				return err
			}
		}
	}
	raw, _ := json.Marshal(sdkJobFor(root))
	jobPath := filepath.Join(root, "job.json")
	if err := os.WriteFile(jobPath, raw, 0o644); err != nil {
		return err
	}
	cmd := exec.Command("node", filepath.Join("lance", "write-datasets.mjs"), jobPath)
	cmd.Dir = filepath.Join("..", "..", "node")
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("node write-datasets.mjs: %v\n%s", err, out)
	}
	return os.WriteFile(filepath.Join(root, "done"), nil, 0o644)
}

func TestReadsSDKDatasets(t *testing.T) {
	root := sdkDatasets(t)
	ctx := context.Background()
	datasets := testDatasets()
	for i, ds := range sdkJobFor(root).Datasets {
		d := datasets[i%len(datasets)]
		v := sdkVersions[i/len(datasets)]
		t.Run(v.name+"/"+d.name, func(t *testing.T) {
			var res sdkResult
			readJSON(t, filepath.Join(ds.Out, "result.json"), &res)
			scan := readScan(t, ds.Out, res.Batches)
			defer scan.Release()
			store := blob.NewDir(filepath.Join(ds.Dir, d.name+".lance", "data"))
			for w, files := range res.Files {
				if len(files) != 1 {
					t.Fatalf("write %d made %d data files, the test expects one", w, len(files))
				}
				_, rec, err := d.write(w)
				if err != nil {
					t.Fatal(err)
				}
				defer rec.Release()
				want := map[string]arrow.Array{}
				lance := fragmentRows(t, scan, w, d.writes[w])
				defer lance.Release()
				for c, col := range d.cols {
					want[col.name] = rec.Column(c)
					sameRows(t, fmt.Sprintf("Lance's scan of %s, write %d", col.name, w), rec.Column(c), lance.Column(c))
				}
				r, err := file.Open(ctx, store, files[0], nil)
				if err != nil {
					t.Fatal(err)
				}
				if r.Version() != v.version {
					t.Fatalf("file version %s, want %s", r.Version(), v.version)
				}
				t.Run(fmt.Sprintf("write%d", w), func(t *testing.T) {
					checkFile(t, ctx, r, want, listed{Rows: uint64(d.writes[w])})
					checkLeafProjections(t, ctx, r, rec)
				})
			}
		})
	}
}

// checkLeafProjections reads each leaf inside a struct alone (a struct
// projected to one of its fields) and checks it against the struct's
// column in want.
func checkLeafProjections(t *testing.T, ctx context.Context, r *file.Reader, want arrow.RecordBatch) {
	t.Helper()
	s := r.Schema()
	for i, f := range s.Fields {
		if !f.IsStruct() {
			continue
		}
		st := want.Column(i).(*array.Struct)
		for k, c := range f.Children {
			proj, err := s.Project(schema.FormatPath(f.Name, c.Name))
			if err != nil {
				t.Fatal(err)
			}
			rec, err := r.ReadRange(ctx, proj, 0, r.NumRows())
			if err != nil {
				t.Fatalf("projection %s.%s: %v", f.Name, c.Name, err)
			}
			got := rec.Column(0).(*array.Struct)
			if got.NumField() != 1 {
				t.Fatalf("projection %s.%s has %d fields", f.Name, c.Name, got.NumField())
			}
			for row := 0; row < got.Len(); row++ {
				if got.IsNull(row) != st.IsNull(row) {
					t.Fatalf("projection %s.%s: row %d null %v, want %v", f.Name, c.Name, row, got.IsNull(row), st.IsNull(row))
				}
			}
			wantChild := st.Field(k)
			gotChild := got.Field(0)
			for row := 0; row < got.Len(); row++ {
				if st.IsNull(row) {
					continue
				}
				if !array.SliceEqual(wantChild, int64(row), int64(row+1), gotChild, int64(row), int64(row+1)) {
					t.Fatalf("projection %s.%s: row %d is %v, want %v", f.Name, c.Name, row,
						array.NewSlice(gotChild, int64(row), int64(row+1)), array.NewSlice(wantChild, int64(row), int64(row+1)))
				}
			}
			rec.Release()
		}
	}
}

func readJSON(t testing.TB, path string, v any) {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

// readScan reads the batches the SDK's scan returned, as one record.
func readScan(t *testing.T, dir string, n int) arrow.RecordBatch {
	t.Helper()
	var recs []arrow.RecordBatch
	var s *arrow.Schema
	for i := 0; i < n; i++ {
		raw, err := os.ReadFile(filepath.Join(dir, fmt.Sprintf("scan-%d.arrow", i)))
		if err != nil {
			t.Fatal(err)
		}
		rd, err := ipc.NewFileReader(bytes.NewReader(raw))
		if err != nil {
			t.Fatalf("scan batch %d: %v", i, err)
		}
		s = rd.Schema()
		for k := 0; k < rd.NumRecords(); k++ {
			rec, err := rd.RecordBatchAt(k)
			if err != nil {
				t.Fatalf("scan batch %d: %v", i, err)
			}
			recs = append(recs, rec)
		}
		rd.Close()
	}
	if s == nil {
		t.Fatal("the scan returned nothing")
	}
	cols := make([]arrow.Array, s.NumFields())
	var rows int64
	for c := range cols {
		parts := make([]arrow.Array, len(recs))
		for i, r := range recs {
			parts[i] = r.Column(c)
		}
		arr, err := array.Concatenate(parts, memory.DefaultAllocator)
		if err != nil {
			t.Fatal(err)
		}
		defer arr.Release()
		cols[c], rows = arr, int64(arr.Len())
	}
	for _, r := range recs {
		r.Release()
	}
	return array.NewRecordBatch(s, cols, rows)
}

// fragmentRows returns the rows of fragment frag in a scan with row ids.
// Lance scans fragments in order, each in row order; the test relies on
// that and checks it.
func fragmentRows(t *testing.T, scan arrow.RecordBatch, frag, rows int) arrow.RecordBatch {
	t.Helper()
	idCol := -1
	for i, f := range scan.Schema().Fields() {
		if f.Name == "_rowid" {
			idCol = i
		}
	}
	if idCol < 0 {
		t.Fatal("the scan has no _rowid")
	}
	ids := scan.Column(idCol).(*array.Uint64)
	start := -1
	for i := 0; i < ids.Len(); i++ {
		if int(ids.Value(i)>>32) == frag {
			start = i
			break
		}
	}
	if start < 0 || start+rows > ids.Len() {
		t.Fatalf("the scan has no %d rows of fragment %d", rows, frag)
	}
	for i := 0; i < rows; i++ {
		if want := uint64(frag)<<32 | uint64(i); ids.Value(start+i) != want {
			t.Fatalf("scan row %d has row id %#x, want %#x", start+i, ids.Value(start+i), want)
		}
	}
	var cols []arrow.Array
	var fields []arrow.Field
	for i, f := range scan.Schema().Fields() {
		if i == idCol {
			continue
		}
		c := array.NewSlice(scan.Column(i), int64(start), int64(start+rows))
		defer c.Release()
		cols = append(cols, c)
		fields = append(fields, f)
	}
	return array.NewRecordBatch(arrow.NewSchema(fields, nil), cols, int64(rows))
}

// TestSDKEncodings checks that the SDK's 2.1 and 2.2 files use every
// encoding the decoder reads, so that TestReadsSDKDatasets covers them.
// With LANCE_ENC_TABLE set to a path, it writes there a table of each
// column's encodings per version.
func TestSDKEncodings(t *testing.T) {
	root := sdkDatasets(t)
	ctx := context.Background()
	datasets := testDatasets()
	seen := map[string]bool{}
	rows := map[string][]string{}
	var keys []string
	for i, ds := range sdkJobFor(root).Datasets {
		d := datasets[i%len(datasets)]
		v := i / len(datasets)
		var res sdkResult
		readJSON(t, filepath.Join(ds.Out, "result.json"), &res)
		r, err := file.Open(ctx, blob.NewDir(filepath.Join(ds.Dir, d.name+".lance", "data")), res.Files[0][0], nil)
		if err != nil {
			t.Fatal(err)
		}
		// The file's columns are its leaves in schema order.
		var leaves []string
		var walk func(f *schema.Field, path string)
		walk = func(f *schema.Field, path string) {
			if f.IsLeaf() {
				leaves = append(leaves, path)
			}
			for _, c := range f.Children {
				walk(c, path+"."+c.Name)
			}
		}
		for _, f := range r.Schema().Fields {
			walk(f, f.Name)
		}
		if len(leaves) != file.NumColumns(r) {
			t.Fatalf("%s: %d leaves, %d columns", d.name, len(leaves), file.NumColumns(r))
		}
		for c, leaf := range leaves {
			types, encs, err := file.PageEncodings(r, c)
			if err != nil {
				t.Fatal(err)
			}
			var pages []string
			for p := range encs {
				if types[p] != "/lance.encodings21.PageLayout" {
					t.Fatalf("%s: page encoding %s", leaf, types[p])
				}
				var pl enc21pb.PageLayout
				if err := proto.Unmarshal(encs[p], &pl); err != nil {
					t.Fatal(err)
				}
				pages = append(pages, describeLayout(&pl, seen))
			}
			key := d.name + " | " + leaf
			if rows[key] == nil {
				rows[key] = make([]string, len(sdkVersions))
				keys = append(keys, key)
			}
			rows[key][v] = strings.Join(pages, "; ")
		}
	}
	want := []string{"mini-block", "full-zip", "constant", "constant(inline value)", "dictionary", "large chunks",
		"rep levels", "def levels", "control words", "flat", "variable", "inline-bitpack", "ool-bitpack", "rle",
		"bss", "fsst", "lz4", "zstd", "fsl", "+validity"}
	var missing []string
	for _, w := range want {
		if !seen[w] {
			missing = append(missing, w)
		}
	}
	if len(missing) > 0 {
		t.Errorf("no SDK file uses %v", missing)
	}
	if path := os.Getenv("LANCE_ENC_TABLE"); path != "" {
		sort.Strings(keys)
		var sb strings.Builder
		sb.WriteString("| dataset | column | 2.1 | 2.2 |\n|---|---|---|---|\n")
		for _, k := range keys {
			fmt.Fprintf(&sb, "| %s | %s | %s |\n", k, rows[k][0], rows[k][1])
		}
		if err := os.WriteFile(path, []byte(sb.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func describeLayout(l *enc21pb.PageLayout, seen map[string]bool) string {
	mark := func(s string) string { seen[s] = true; return s }
	switch l := l.GetLayout().(type) {
	case *enc21pb.PageLayout_MiniBlockLayout:
		m := l.MiniBlockLayout
		var parts []string
		if m.GetRepCompression() != nil {
			mark("rep levels")
			parts = append(parts, "rep="+describeEncoding(m.GetRepCompression(), seen))
		}
		if m.GetDefCompression() != nil {
			mark("def levels")
			parts = append(parts, "def="+describeEncoding(m.GetDefCompression(), seen))
		}
		parts = append(parts, "values="+describeEncoding(m.GetValueCompression(), seen))
		if m.GetDictionary() != nil {
			mark("dictionary")
			parts = append(parts, fmt.Sprintf("dict[%d]=%s", m.GetNumDictionaryItems(), describeEncoding(m.GetDictionary(), seen)))
		}
		if m.GetHasLargeChunk() {
			mark("large chunks")
		}
		return mark("mini-block") + "(" + strings.Join(parts, " ") + ")"
	case *enc21pb.PageLayout_FullZipLayout:
		f := l.FullZipLayout
		s := mark("full-zip") + "("
		if f.GetBitsRep() > 0 || f.GetBitsDef() > 0 {
			mark("control words")
			s += fmt.Sprintf("ctl=%d+%d ", f.GetBitsRep(), f.GetBitsDef())
		}
		return s + describeEncoding(f.GetValueCompression(), seen) + ")"
	case *enc21pb.PageLayout_ConstantLayout:
		c := l.ConstantLayout
		s := "constant"
		if c.InlineValue != nil {
			s += mark("(inline value)")
		}
		if c.GetRepCompression() != nil || c.GetDefCompression() != nil {
			s += "(levels=" + describeEncoding(c.GetDefCompression(), seen) + "/" + describeEncoding(c.GetRepCompression(), seen) + ")"
		}
		return mark(s)
	}
	return "?"
}

func describeEncoding(e *enc21pb.CompressiveEncoding, seen map[string]bool) string {
	mark := func(s string) string { seen[s] = true; return s }
	switch c := e.GetCompression().(type) {
	case nil:
		return "-"
	case *enc21pb.CompressiveEncoding_Flat:
		if c.Flat.GetData() != nil {
			return fmt.Sprintf("%s(%d,%s)", mark("flat"), c.Flat.GetBitsPerValue(), c.Flat.GetData().GetScheme())
		}
		return fmt.Sprintf("%s(%d)", mark("flat"), c.Flat.GetBitsPerValue())
	case *enc21pb.CompressiveEncoding_Variable:
		return fmt.Sprintf("%s(%d)", mark("variable"), c.Variable.GetOffsets().GetFlat().GetBitsPerValue())
	case *enc21pb.CompressiveEncoding_Constant:
		return mark("const")
	case *enc21pb.CompressiveEncoding_OutOfLineBitpacking:
		return fmt.Sprintf("%s(%d→%d)", mark("ool-bitpack"), c.OutOfLineBitpacking.GetUncompressedBitsPerValue(), c.OutOfLineBitpacking.GetValues().GetFlat().GetBitsPerValue())
	case *enc21pb.CompressiveEncoding_InlineBitpacking:
		return fmt.Sprintf("%s(%d)", mark("inline-bitpack"), c.InlineBitpacking.GetUncompressedBitsPerValue())
	case *enc21pb.CompressiveEncoding_Fsst:
		return mark("fsst") + ">" + describeEncoding(c.Fsst.GetValues(), seen)
	case *enc21pb.CompressiveEncoding_Rle:
		return fmt.Sprintf("%s(%s,%s)", mark("rle"), describeEncoding(c.Rle.GetValues(), seen), describeEncoding(c.Rle.GetRunLengths(), seen))
	case *enc21pb.CompressiveEncoding_ByteStreamSplit:
		return mark("bss") + ">" + describeEncoding(c.ByteStreamSplit.GetValues(), seen)
	case *enc21pb.CompressiveEncoding_General:
		s := strings.ToLower(strings.TrimPrefix(c.General.GetCompression().GetScheme().String(), "COMPRESSION_ALGORITHM_"))
		return mark(s) + ">" + describeEncoding(c.General.GetValues(), seen)
	case *enc21pb.CompressiveEncoding_FixedSizeList:
		v := ""
		if c.FixedSizeList.GetHasValidity() {
			v = mark("+validity")
		}
		return fmt.Sprintf("%s(%d%s)>%s", mark("fsl"), c.FixedSizeList.GetItemsPerValue(), v, describeEncoding(c.FixedSizeList.GetValues(), seen))
	default:
		return fmt.Sprintf("%T", c)
	}
}
