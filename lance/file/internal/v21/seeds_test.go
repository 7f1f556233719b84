package v21

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestFuzzSeedsDecode decodes every seed of the page fuzz targets. Those
// named after a column and version are real pages the SDK wrote (cut to
// their first rows) and must decode without error, with or without Node
// at hand; the others are inputs the fuzzer once found failing, kept as
// regression tests, and must fail cleanly.
func TestFuzzSeedsDecode(t *testing.T) {
	var files []string
	for _, target := range []string{"FuzzMiniBlock", "FuzzFullZip", "FuzzConstant"} {
		f, _ := filepath.Glob(filepath.Join("testdata", "fuzz", target, "*"))
		files = append(files, f...)
	}
	for _, f := range files {
		raw, _ := os.ReadFile(f)
		s := strings.TrimSpace(strings.SplitN(string(raw), "\n", 2)[1])
		s = strings.TrimSuffix(strings.TrimPrefix(s, "[]byte("), ")")
		b, err := strconv.Unquote(s)
		if err != nil {
			t.Fatal(err)
		}
		p, ok := unmarshalFuzzPage([]byte(b))
		if !ok {
			t.Errorf("%s: does not parse", f)
			continue
		}
		err = decodeFuzzPage(p, fuzzBudget)
		if strings.Contains(filepath.Base(f), "-2.") && err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
	if len(files) < 100 {
		t.Errorf("only %d seeds", len(files))
	}
}
