package file

import (
	"context"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/lancens/lancens/lance/blob"
	"github.com/lancens/lancens/lance/internal/pb/enc21pb"
)

// TestWriteFuzzSeeds21 writes the seed corpora of internal/v21's fuzz
// targets from data files the SDK wrote: with LANCE_FUZZ_SEEDS_FROM set to
// a directory of 2.1 and 2.2 .lance files (sdk21_test.go's datasets, kept
// with LANCE_SDK_FIXTURES), every leaf page becomes a seed of the target
// for its layout, cut to its first rows when large. It does nothing
// otherwise: the seeds are committed.
func TestWriteFuzzSeeds21(t *testing.T) {
	from := os.Getenv("LANCE_FUZZ_SEEDS_FROM")
	if from == "" {
		t.Skip("LANCE_FUZZ_SEEDS_FROM is not set")
	}
	ctx := context.Background()
	var paths []string
	filepath.WalkDir(from, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && filepath.Ext(p) == ".lance" {
			paths = append(paths, p)
		}
		return nil
	})
	seen := map[string]bool{}
	for _, p := range paths {
		r, err := Open(ctx, blob.NewDir(filepath.Dir(p)), filepath.Base(p), nil)
		if err != nil || r.Version() == V2_0 {
			continue
		}
		raw, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range r.schema.Fields {
			dt, err := f.ArrowType()
			if err != nil {
				t.Fatal(err)
			}
			// A seed is one page that is the whole field: one leaf.
			leaf := f
			for !leaf.IsLeaf() && len(leaf.Children) == 1 {
				leaf = leaf.Children[0]
			}
			idx, ok := r.columnOf[leaf.ID]
			if !ok || !leaf.IsLeaf() {
				continue
			}
			c, err := r.column(idx)
			if err != nil {
				t.Fatal(err)
			}
			pg := c.Pages[0]
			var pl enc21pb.PageLayout
			if err := proto.Unmarshal(pg.Encoding, &pl); err != nil {
				t.Fatal(err)
			}
			bufs := make([][]byte, len(pg.Buffers))
			for i, b := range pg.Buffers {
				bufs[i] = raw[b.Offset : b.Offset+b.Length]
			}
			rows, encoding := pg.Length, pg.Encoding
			target := "FuzzMiniBlock"
			switch {
			case pl.GetMiniBlockLayout() != nil:
				rows, bufs = cutMiniBlock(pl.GetMiniBlockLayout(), rows, bufs)
				if encoding, err = proto.Marshal(&pl); err != nil {
					t.Fatal(err)
				}
			case pl.GetFullZipLayout() != nil:
				target = "FuzzFullZip"
				rows, bufs = cutFullZip(pl.GetFullZipLayout(), rows, bufs)
			case pl.GetConstantLayout() != nil:
				target = "FuzzConstant"
			}
			size := 0
			for _, b := range bufs {
				size += len(b)
			}
			if size > 16<<10 {
				continue
			}
			seed := []byte{byte(len(dt.String()))}
			seed = append(seed, dt.String()...)
			seed = binary.LittleEndian.AppendUint32(seed, uint32(rows))
			seed = binary.LittleEndian.AppendUint32(seed, uint32(len(encoding)))
			seed = append(seed, encoding...)
			for _, b := range bufs {
				seed = binary.LittleEndian.AppendUint32(seed, uint32(len(b)))
				seed = append(seed, b...)
			}
			name := fmt.Sprintf("%s-%d.%d-%s", f.Name, r.Version().Major, r.Version().Minor, target)
			if seen[name] {
				continue
			}
			seen[name] = true
			dir := filepath.Join("internal", "v21", "testdata", "fuzz", target)
			if err := os.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			corpus := fmt.Sprintf("go test fuzz v1\n[]byte(%q)\n", seed)
			if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("%s-%d.%d", f.Name, r.Version().Major, r.Version().Minor)), []byte(corpus), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// cutFullZip keeps the first rows of a full-zip page (at most 8), with
// the repetition index cut to match.
func cutFullZip(l *enc21pb.FullZipLayout, rows uint64, bufs [][]byte) (uint64, [][]byte) {
	keep := min(rows, 8)
	if len(bufs) == 1 {
		size := uint64(len(bufs[0])) / rows
		return keep, [][]byte{bufs[0][:keep*size]}
	}
	width := uint64(len(bufs[1])) / (rows + 1)
	entry := func(i uint64) uint64 {
		var v uint64
		for k := uint64(0); k < width; k++ {
			v |= uint64(bufs[1][i*width+k]) << (8 * k)
		}
		return v
	}
	return keep, [][]byte{bufs[0][:entry(keep)], bufs[1][:(keep+1)*width]}
}

// cutMiniBlock keeps the first chunk of a mini-block page, changing the
// layout's item count (and its repetition index) to match.
func cutMiniBlock(l *enc21pb.MiniBlockLayout, rows uint64, bufs [][]byte) (uint64, [][]byte) {
	word := 2
	if l.GetHasLargeChunk() {
		word = 4
	}
	if len(bufs[0]) <= word {
		return rows, bufs
	}
	var w uint64
	for k := 0; k < word; k++ {
		w |= uint64(bufs[0][k]) << (8 * k)
	}
	size := ((w >> 4) + 1) * 8
	items := uint64(1) << (w & 0xf)
	out := [][]byte{bufs[0][:word], bufs[1][:size]}
	l.NumItems = items
	rows = items
	if l.GetDictionary() != nil {
		out = append(out, bufs[2])
	}
	if depth := l.GetRepetitionIndexDepth(); depth > 0 {
		index := append([]byte(nil), bufs[len(bufs)-1][:8*(depth+1)]...)
		ends := binary.LittleEndian.Uint64(index)
		if binary.LittleEndian.Uint64(index[8:]) > 0 {
			ends++ // the chunk's last row is cut short: count it whole
			binary.LittleEndian.PutUint64(index, ends)
			binary.LittleEndian.PutUint64(index[8:], 0)
		}
		rows = ends
		out = append(out, index)
	}
	return rows, out
}
