package file_test

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"google.golang.org/protobuf/encoding/protowire"

	"github.com/lancens/lancens/lance/blob"
	"github.com/lancens/lancens/lance/file"
)

// TestWrite21RoundTrip writes every dataset of testDatasets (all the type
// families, nulls at every level, vectors, long strings) in formats 2.1
// and 2.2, in small pages so that every column has several and chunks
// split rows, and reads each file back whole, by ranges, by taken rows,
// scanned and projected.
func TestWrite21RoundTrip(t *testing.T) {
	ctx := context.Background()
	for _, v := range []file.Version{file.V2_1, file.V2_2} {
		for _, d := range testDatasets() {
			t.Run(fmt.Sprintf("%s/%s", v, d.name), func(t *testing.T) {
				var batches []arrow.RecordBatch
				rows := 0
				for w := range d.writes {
					_, rec, err := d.write(w)
					if err != nil {
						t.Fatal(err)
					}
					defer rec.Release()
					batches = append(batches, rec)
					rows += int(rec.NumRows())
				}
				s := lanceSchema(t, d.schema())
				store, name, written := writeFile(t, s, &file.WriteOptions{Version: v, PageBytes: 64 << 10}, batches...)
				if written.Version != v || written.Rows != uint64(rows) {
					t.Errorf("Written = %+v", written)
				}
				r, err := file.Open(ctx, store, name, nil)
				if err != nil {
					t.Fatal(err)
				}
				if r.Version() != v {
					t.Fatalf("Version = %s", r.Version())
				}
				want := map[string]arrow.Array{}
				all := concatBatches(t, batches...)
				for _, c := range d.cols {
					want[c.name] = all[c.name]
				}
				checkFile(t, ctx, r, want, listed{Rows: uint64(rows)})
			})
		}
	}
}

// TestLanceReadsGo21Files checks that Lance reads the 2.1 and 2.2 files
// this writer writes. Until lance/table writes manifests, it borrows the
// SDK's datasets of sdk21_test.go: every data file is replaced by the Go
// writer's file of the same rows and version, the newest manifest forgets
// the files' sizes (which Lance then asks the store for), and the SDK
// scans every table; each fragment's rows must be the batch written.
func TestLanceReadsGo21Files(t *testing.T) {
	src := sdkDatasets(t)
	dir := t.TempDir()
	ctx := context.Background()
	datasets := testDatasets()
	var job sdkJob
	for i, ds := range sdkJobFor(src).Datasets {
		d := datasets[i%len(datasets)]
		v := sdkVersions[i/len(datasets)]
		table := filepath.Join(dir, v.name, d.name+".lance")
		if err := os.CopyFS(table, os.DirFS(filepath.Join(ds.Dir, d.name+".lance"))); err != nil {
			t.Fatal(err)
		}
		var res sdkResult
		readJSON(t, filepath.Join(ds.Out, "result.json"), &res)
		data := blob.NewDir(filepath.Join(table, "data"))
		for _, files := range res.Files {
			r, err := file.Open(ctx, data, files[0], nil)
			if err != nil {
				t.Fatal(err)
			}
			rec, err := r.ReadRange(ctx, nil, 0, r.NumRows())
			if err != nil {
				t.Fatal(err)
			}
			if err := data.Delete(ctx, files[0]); err != nil {
				t.Fatal(err)
			}
			w, err := file.Create(ctx, data, files[0], r.Schema(), &file.WriteOptions{Version: r.Version()})
			if err != nil {
				t.Fatal(err)
			}
			if err := w.Write(rec); err != nil {
				t.Fatal(err)
			}
			if _, err := w.Close(); err != nil {
				t.Fatal(err)
			}
			rec.Release()
		}
		forgetFileSizes(t, table)
		job.Datasets = append(job.Datasets, sdkJobDataset{
			Dir: filepath.Join(dir, v.name), Name: d.name, Out: filepath.Join(dir, "out", v.name, d.name),
		})
	}
	raw, _ := json.Marshal(job)
	jobPath := filepath.Join(dir, "job.json")
	if err := os.WriteFile(jobPath, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("node", filepath.Join("lance", "write-datasets.mjs"), jobPath)
	cmd.Dir = filepath.Join("..", "..", "node")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("node write-datasets.mjs: %v\n%s", err, out)
	}
	for i, ds := range job.Datasets {
		d := datasets[i%len(datasets)]
		t.Run(fmt.Sprintf("%s/%s", sdkVersions[i/len(datasets)].name, d.name), func(t *testing.T) {
			var res sdkResult
			readJSON(t, filepath.Join(ds.Out, "result.json"), &res)
			scan := readScan(t, ds.Out, res.Batches)
			defer scan.Release()
			for w := range d.writes {
				_, rec, err := d.write(w)
				if err != nil {
					t.Fatal(err)
				}
				lance := fragmentRows(t, scan, w, d.writes[w])
				for c, col := range d.cols {
					sameRows(t, fmt.Sprintf("Lance's scan of %s, write %d", col.name, w), rec.Column(c), lance.Column(c))
				}
				lance.Release()
				rec.Release()
			}
		})
	}
}

// forgetFileSizes rewrites the newest manifest of the dataset at dir
// without its data files' sizes (Manifest.fragments = 2,
// DataFragment.files = 2, DataFile.file_size_bytes = 6: facts of Lance's
// table format), so that files of another size can stand in for them.
func forgetFileSizes(t *testing.T, dir string) {
	t.Helper()
	names, err := filepath.Glob(filepath.Join(dir, "_versions", "*.manifest"))
	if err != nil || len(names) == 0 {
		t.Fatalf("no manifests in %s: %v", dir, err)
	}
	sort.Strings(names) // V2 names: the newest version sorts first
	raw, err := os.ReadFile(names[0])
	if err != nil {
		t.Fatal(err)
	}
	le := binary.LittleEndian
	n := len(raw)
	pos := le.Uint64(raw[n-16:])
	size := uint64(le.Uint32(raw[pos:]))
	msg := raw[pos+4 : pos+4+size]
	// Rewrites field `field` of a message with f, keeping the rest.
	rewrite := func(msg []byte, field protowire.Number, f func([]byte) []byte) []byte {
		var out []byte
		for len(msg) > 0 {
			num, typ, n := protowire.ConsumeTag(msg)
			if n < 0 {
				t.Fatal("malformed manifest")
			}
			m := protowire.ConsumeFieldValue(num, typ, msg[n:])
			if m < 0 {
				t.Fatal("malformed manifest")
			}
			if num == field && typ == protowire.BytesType {
				v, _ := protowire.ConsumeBytes(msg[n:])
				out = protowire.AppendTag(out, num, typ)
				out = protowire.AppendBytes(out, f(v))
			} else {
				out = append(out, msg[:n+m]...)
			}
			msg = msg[n+m:]
		}
		return out
	}
	dropSize := func(file []byte) []byte {
		var out []byte
		for len(file) > 0 {
			num, typ, n := protowire.ConsumeTag(file)
			m := protowire.ConsumeFieldValue(num, typ, file[n:])
			if num != 6 {
				out = append(out, file[:n+m]...)
			}
			file = file[n+m:]
		}
		return out
	}
	msg = rewrite(msg, 2, func(frag []byte) []byte { return rewrite(frag, 2, dropSize) })
	out := append([]byte(nil), raw[:pos]...)
	out = le.AppendUint32(out, uint32(len(msg)))
	out = append(out, msg...)
	out = append(out, raw[n-16:]...)
	if err := os.WriteFile(names[0], out, 0o644); err != nil {
		t.Fatal(err)
	}
}
