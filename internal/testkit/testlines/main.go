// Command testlines reads `go test -json` on standard input and prints one
// line per package as soon as the package's tests end, in the words of
// `go test` ("ok", "FAIL", "?"), with the output of failed tests and of
// builds that failed. Plain `go test ./...` holds each package's line back
// until every package listed before it has finished, so one slow package
// hides the progress of all the others; the JSON events arrive as they
// happen. It exits with status 1 when a test, a package or a build failed.
//
//	go test -json ./... | go run ./internal/testkit/testlines
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
)

// event is one line of `go test -json` (see `go doc test2json`).
type event struct {
	Action     string
	Package    string
	Test       string
	Elapsed    float64
	Output     string
	ImportPath string // of build-output and build-fail events
}

func main() {
	failed, err := report(os.Stdin, os.Stdout)
	if err != nil {
		fmt.Fprintln(os.Stderr, "testlines:", err)
		os.Exit(2)
	}
	if failed {
		os.Exit(1)
	}
}

// report copies the results of the events in r to w and reports whether
// anything failed. It returns an error when r is not a stream of events.
func report(r io.Reader, w io.Writer) (bool, error) {
	failed := false
	// Output held back until we know whether it is needed: per test (of
	// a package), per package, per build.
	tests := map[[2]string][]string{}
	packages := map[string][]string{}
	builds := map[string][]string{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		line := sc.Bytes()
		var e event
		if err := json.Unmarshal(line, &e); err != nil || e.Action == "" {
			// Not an event: something go test printed itself.
			fmt.Fprintf(w, "%s\n", line)
			continue
		}
		key := [2]string{e.Package, e.Test}
		switch e.Action {
		case "build-output":
			builds[e.ImportPath] = append(builds[e.ImportPath], e.Output)
		case "build-fail":
			failed = true
			fmt.Fprint(w, strings.Join(builds[e.ImportPath], ""))
			delete(builds, e.ImportPath)
		case "output":
			if e.Test != "" {
				tests[key] = append(tests[key], e.Output)
			} else {
				packages[e.Package] = append(packages[e.Package], e.Output)
			}
		case "pass", "skip":
			if e.Test != "" {
				delete(tests, key)
				continue
			}
			if e.Action == "skip" {
				fmt.Fprintf(w, "?   \t%s\t[no test files]\n", e.Package)
			} else {
				fmt.Fprintf(w, "ok  \t%s\t%.3fs\n", e.Package, e.Elapsed)
			}
			delete(packages, e.Package)
		case "fail":
			failed = true
			if e.Test != "" {
				// A failed test's output is printed when its package ends,
				// with the package's own output (a panic, a timeout).
				packages[e.Package] = append(packages[e.Package], tests[key]...)
				delete(tests, key)
				continue
			}
			for k, out := range tests { // tests cut short by a panic or a timeout
				if k[0] == e.Package {
					packages[e.Package] = append(packages[e.Package], out...)
					delete(tests, k)
				}
			}
			fmt.Fprint(w, strings.Join(packages[e.Package], ""))
			fmt.Fprintf(w, "FAIL\t%s\t%.3fs\n", e.Package, e.Elapsed)
			delete(packages, e.Package)
		}
	}
	return failed, sc.Err()
}
