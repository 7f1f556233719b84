package enc21

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/lancens/lancens/lance/internal/pb/enc21pb"
)

// describeLayout names a page's layout and the encodings inside it, e.g.
// "mini-block(def=ool-bitpack(1) values=inline-bitpack(32))".
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

// TestSDKEncodings checks that the SDK's files exercise every encoding
// this package claims to read, so that TestSDKFiles tests them. With
// LANCE_ENC_TABLE set to a path, it writes there a table of the encodings
// of each column, per storage version.
func TestSDKEncodings(t *testing.T) {
	job, _ := writeSDKDatasets(t)
	datasets := testDatasets()
	seen := map[string]bool{}
	rows := map[string][]string{} // dataset/column → description per version
	var keys []string
	for i, ds := range job.Datasets {
		d := datasets[i%len(datasets)]
		v := i / len(datasets)
		var res sdkResult
		readJSON(t, filepath.Join(ds.Out, "result.json"), &res)
		tf := openTestFile(t, filepath.Join(ds.Dir, d.name+".lance", "data", res.Files[0][0]))
		col := 0
		for _, tc := range d.cols {
			n, _ := LeafColumns(tc.typ)
			for k := 0; k < n; k++ {
				key := fmt.Sprintf("%s | %s | %s", d.name, tc.name, tc.typ)
				if n > 1 {
					key = fmt.Sprintf("%s | %s (leaf %d) | %s", d.name, tc.name, k, tc.typ)
				}
				var pages []string
				for p := range tf.columns[col].GetPages() {
					layout, _, _ := tf.page(t, col, p)
					pages = append(pages, describeLayout(layout, seen))
				}
				if rows[key] == nil {
					rows[key] = make([]string, len(sdkVersions))
					keys = append(keys, key)
				}
				rows[key][v] = strings.Join(pages, "; ")
				col++
			}
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
		sb.WriteString("| dataset | column | type | 2.1 | 2.2 |\n|---|---|---|---|---|\n")
		for _, k := range keys {
			fmt.Fprintf(&sb, "| %s | %s | %s |\n", k, rows[k][0], rows[k][1])
		}
		if err := os.WriteFile(path, []byte(sb.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
