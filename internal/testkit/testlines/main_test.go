package main

import (
	"strings"
	"testing"
)

// TestReport feeds events of two packages, one passing and one with a
// failed test, a build failure and a package without tests, and checks the
// lines printed and the failure reported.
func TestReport(t *testing.T) {
	for _, tc := range []struct {
		name       string
		events     string
		want       []string // lines that must appear, in this order
		wantAbsent []string
		wantFailed bool
	}{
		{"Pass", `{"Action":"start","Package":"p/a"}
{"Action":"run","Package":"p/a","Test":"TestX"}
{"Action":"output","Package":"p/a","Test":"TestX","Output":"=== RUN   TestX\n"}
{"Action":"pass","Package":"p/a","Test":"TestX","Elapsed":0.1}
{"Action":"pass","Package":"p/a","Elapsed":1.25}
{"Action":"skip","Package":"p/none"}
`, []string{"ok  \tp/a\t1.250s", "?   \tp/none\t[no test files]"}, []string{"=== RUN"}, false},
		{"FailedTest", `{"Action":"run","Package":"p/b","Test":"TestY"}
{"Action":"output","Package":"p/b","Test":"TestY","Output":"    b_test.go:9: boom\n"}
{"Action":"fail","Package":"p/b","Test":"TestY","Elapsed":0.1}
{"Action":"output","Package":"p/b","Output":"FAIL\n"}
{"Action":"fail","Package":"p/b","Elapsed":2}
`, []string{"b_test.go:9: boom", "FAIL\tp/b\t2.000s"}, nil, true},
		{"Panic", `{"Action":"run","Package":"p/c","Test":"TestZ"}
{"Action":"output","Package":"p/c","Test":"TestZ","Output":"panic: nil map\n"}
{"Action":"fail","Package":"p/c","Elapsed":0.5}
`, []string{"panic: nil map", "FAIL\tp/c"}, nil, true},
		{"BuildFailure", `{"ImportPath":"p/d [p/d.test]","Action":"build-output","Output":"d.go:1: undefined: x\n"}
{"ImportPath":"p/d [p/d.test]","Action":"build-fail"}
{"Action":"start","Package":"p/d"}
{"Action":"output","Package":"p/d","Output":"FAIL\tp/d [build failed]\n"}
{"Action":"fail","Package":"p/d","Elapsed":0}
`, []string{"d.go:1: undefined: x", "FAIL\tp/d"}, nil, true},
		{"NotJSON", "go: downloading example.com/m v1.0.0\n", []string{"go: downloading example.com/m v1.0.0"}, nil, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out strings.Builder
			failed, err := report(strings.NewReader(tc.events), &out)
			if err != nil {
				t.Fatal(err)
			}
			if failed != tc.wantFailed {
				t.Errorf("failed = %v, want %v", failed, tc.wantFailed)
			}
			got := out.String()
			at := 0
			for _, want := range tc.want {
				i := strings.Index(got[at:], want)
				if i < 0 {
					t.Fatalf("output lacks %q (in order):\n%s", want, got)
				}
				at += i + len(want)
			}
			for _, absent := range tc.wantAbsent {
				if strings.Contains(got, absent) {
					t.Errorf("output has %q:\n%s", absent, got)
				}
			}
		})
	}
}
