package enc21

// Tests against Lance itself: the LanceDB Node SDK writes the datasets of
// testDatasets at storage versions 2.1 and 2.2 (the default), and every
// column of every data file it wrote must decode to the rows written — and
// to the rows Lance reads back from the same dataset.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// nodeDir returns the repository's Node project, whose node_modules holds
// the LanceDB SDK. Without Node or the SDK the test is skipped, unless CI
// is true: CI installs both, so there their absence is a failure.
func nodeDir(t *testing.T) string {
	t.Helper()
	missing := func(format string, args ...any) {
		t.Helper()
		if os.Getenv("CI") == "true" {
			t.Fatalf("Node and the LanceDB SDK are required under CI: "+format, args...)
		}
		t.Skipf("Node and the LanceDB SDK are required: "+format, args...)
	}
	if _, err := exec.LookPath("node"); err != nil {
		missing("%v", err)
	}
	dir, err := filepath.Abs("../../../node")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "@lancedb", "lancedb", "package.json")); err != nil {
		missing("run make node-deps: %v", err)
	}
	return dir
}

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

// sdkVersions are the storage versions asked of the SDK, with the file
// version each must produce.
var sdkVersions = []struct {
	ask          string
	major, minor uint16
}{{"2.1", 2, 1}, {"", 2, 2}}

// writeSDKDatasets has the SDK write every test dataset at every version
// under root and returns the job it ran. With LANCE_SDK_FIXTURES set, the
// datasets are kept in that directory and written only once.
func writeSDKDatasets(t *testing.T) (sdkJob, string) {
	t.Helper()
	node := nodeDir(t)
	root := os.Getenv("LANCE_SDK_FIXTURES")
	if root == "" {
		root = t.TempDir()
	}
	var job sdkJob
	for _, v := range sdkVersions {
		vname := "v" + v.ask
		if v.ask == "" {
			vname = "default"
		}
		for _, d := range testDatasets() {
			ds := sdkJobDataset{
				Dir:     filepath.Join(root, vname, "db"),
				Name:    d.name,
				Version: v.ask,
				Out:     filepath.Join(root, vname, "out", d.name),
			}
			for w := range d.writes {
				ds.Writes = append(ds.Writes, filepath.Join(root, "in", fmt.Sprintf("%s-%d.arrow", d.name, w)))
			}
			job.Datasets = append(job.Datasets, ds)
		}
	}
	if _, err := os.Stat(filepath.Join(root, "done")); err == nil {
		return job, root
	}
	if err := os.MkdirAll(filepath.Join(root, "in"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, d := range testDatasets() {
		for w := range d.writes {
			raw, rec, err := d.write(w)
			if err != nil {
				t.Fatal(err)
			}
			rec.Release()
			if err := os.WriteFile(filepath.Join(root, "in", fmt.Sprintf("%s-%d.arrow", d.name, w)), raw, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	raw, _ := json.Marshal(job)
	jobPath := filepath.Join(root, "job.json")
	if err := os.WriteFile(jobPath, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("node", filepath.Join(node, "lance", "write-datasets.mjs"), jobPath)
	cmd.Dir = node
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("node write-datasets.mjs: %v\n%s", err, out)
	}
	if err := os.WriteFile(filepath.Join(root, "done"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	return job, root
}

func TestSDKFiles(t *testing.T) {
	job, _ := writeSDKDatasets(t)
	datasets := testDatasets()
	for i, ds := range job.Datasets {
		d := datasets[i%len(datasets)]
		v := sdkVersions[i/len(datasets)]
		t.Run(fmt.Sprintf("%s/%s", map[string]string{"2.1": "2.1", "": "default"}[v.ask], d.name), func(t *testing.T) {
			var res sdkResult
			readJSON(t, filepath.Join(ds.Out, "result.json"), &res)
			scan := readScan(t, ds.Out, res.Batches)
			defer scan.Release()
			first := 0
			for w, files := range res.Files {
				if len(files) != 1 {
					t.Fatalf("write %d made %d data files, the test expects one", w, len(files))
				}
				_, want, err := d.write(w)
				if err != nil {
					t.Fatal(err)
				}
				defer want.Release()
				lance := fragmentRows(t, scan, w, d.writes[w])
				for c := range d.cols {
					equalArrays(t, fmt.Sprintf("Lance's scan of %s, write %d", d.cols[c].name, w), want.Column(c), lance.Column(c))
				}
				lance.Release()
				tf := openTestFile(t, filepath.Join(ds.Dir, d.name+".lance", "data", files[0]))
				if tf.major != v.major || tf.minor != v.minor {
					t.Fatalf("file version %d.%d, want %d.%d", tf.major, tf.minor, v.major, v.minor)
				}
				col := 0
				for c, tc := range d.cols {
					n, err := LeafColumns(tc.typ)
					if err != nil {
						t.Fatal(err)
					}
					got, err := tf.readField(t, tc.typ, col, n)
					col += n
					if err != nil {
						t.Errorf("%s (write %d): %v", tc.name, w, err)
						continue
					}
					equalArrays(t, fmt.Sprintf("%s, write %d", tc.name, w), want.Column(c), got)
					got.Release()
				}
				if col != len(tf.columns) {
					t.Errorf("fields take %d columns, the file has %d", col, len(tf.columns))
				}
				first += d.writes[w]
			}
		})
	}
}

// readField decodes the n leaf columns of a field starting at column
// first.
func (tf *testFile) readField(t testing.TB, dt arrow.DataType, first, n int) (arrow.Array, error) {
	cols := make([]*Column, n)
	for i := range cols {
		c, err := tf.readColumn(t, first+i)
		if err != nil {
			return nil, fmt.Errorf("column %d: %w", first+i, err)
		}
		cols[i] = c
	}
	return Assemble(dt, cols, memory.DefaultAllocator)
}

// readScan reads the batches the SDK's scan returned, as one record.
func readScan(t *testing.T, dir string, n int) arrow.RecordBatch {
	t.Helper()
	var recs []arrow.RecordBatch
	var schema *arrow.Schema
	for i := 0; i < n; i++ {
		raw, err := os.ReadFile(filepath.Join(dir, fmt.Sprintf("scan-%d.arrow", i)))
		if err != nil {
			t.Fatal(err)
		}
		rd, err := ipc.NewFileReader(bytes.NewReader(raw))
		if err != nil {
			t.Fatalf("scan batch %d: %v", i, err)
		}
		schema = rd.Schema()
		for k := 0; k < rd.NumRecords(); k++ {
			rec, err := rd.RecordBatchAt(k)
			if err != nil {
				t.Fatalf("scan batch %d: %v", i, err)
			}
			recs = append(recs, rec)
		}
		rd.Close()
	}
	if schema == nil {
		t.Fatal("the scan returned nothing")
	}
	tbl := array.NewTableFromRecords(schema, recs)
	defer tbl.Release()
	for _, r := range recs {
		r.Release()
	}
	cols := make([]arrow.Array, tbl.NumCols())
	for i := range cols {
		c, err := array.Concatenate(tbl.Column(i).Data().Chunks(), memory.DefaultAllocator)
		if err != nil {
			t.Fatal(err)
		}
		cols[i] = c
		defer c.Release()
	}
	return array.NewRecordBatch(schema, cols, tbl.NumRows())
}

// fragmentRows returns the rows of fragment frag in a scan with row ids.
// Lance scans fragments in order, each in row order; the test relies on
// it and checks it.
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

// equalArrays reports the first row where got differs from want.
func equalArrays(t *testing.T, what string, want, got arrow.Array) {
	t.Helper()
	if array.Equal(want, got) {
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
	for i := 0; i < want.Len(); i++ {
		w, _ := json.Marshal(want.GetOneForMarshal(i))
		g, _ := json.Marshal(got.GetOneForMarshal(i))
		if string(w) != string(g) {
			if len(w) > 300 {
				w = append(w[:300], "…"...)
			}
			if len(g) > 300 {
				g = append(g[:300], "…"...)
			}
			t.Errorf("%s: row %d is %s, want %s", what, i, g, w)
			return
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
