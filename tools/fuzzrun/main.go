// Command fuzzrun runs every Go fuzz target of the module, one after the
// other, each for a while, and exits 1 if any of them fails. `make fuzz`
// and CI run it:
//
//	go run ./tools/fuzzrun [-fuzztime 10m] [-minimizetime 10s] [packages]
//
// The packages (default ./...) are those whose test files define a
// func FuzzXxx(*testing.F). Each is built once, instrumented for fuzzing
// (go test -c -fuzz), and its binary is run for each target it lists.
//
// A target stops the way a person stops fuzzing, with an interrupt: once
// its coordinator has started (its first "fuzz: elapsed:" line), fuzzrun
// waits -fuzztime and sends the coordinator SIGINT, which stops the workers
// and passes. It does not use the test binary's own -test.fuzztime
// deadline, because Go 1.26's coordinator can lose a race with that
// deadline and fail a target that found nothing ("context deadline
// exceeded", go.dev/issue/75804); an interrupt cannot lose it. A count such
// as -fuzztime 1000x is passed to the binary as it is. A failing input is
// written under the package's testdata/fuzz/ by the fuzzing engine, as with
// go test -fuzz: commit it with the fix, as a regression seed.
package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"time"
)

func main() {
	fuzzTime := flag.String("fuzztime", "10m", "how long to fuzz each target: a duration, or a count of calls such as 1000x")
	r := runner{out: os.Stdout}
	flag.StringVar(&r.minimizeTime, "minimizetime", "10s", "how long the fuzzing engine may minimise a new input (-test.fuzzminimizetime)")
	flag.StringVar(&r.goCmd, "go", "go", "the go command")
	flag.Parse()
	patterns := flag.Args()
	if len(patterns) == 0 {
		patterns = []string{"./..."}
	}
	var err error
	if r.limit, err = parseFuzzTime(*fuzzTime); err != nil {
		fmt.Fprintln(os.Stderr, "fuzzrun:", err)
		os.Exit(2)
	}
	failed, err := r.fuzzAll(context.Background(), patterns)
	if err != nil {
		fmt.Fprintln(os.Stderr, "fuzzrun:", err)
		os.Exit(2)
	}
	if len(failed) > 0 {
		fmt.Fprintln(os.Stderr, "fuzz targets failed:", strings.Join(failed, " "))
		os.Exit(1)
	}
}

// fuzzLimit is how long each target is fuzzed: for a duration, or for a count
// of calls the test binary enforces itself.
type fuzzLimit struct {
	duration time.Duration
	count    string // "1000x", or "" for a duration
}

func (l fuzzLimit) String() string {
	if l.count != "" {
		return l.count
	}
	return l.duration.String()
}

// parseFuzzTime reads a -fuzztime value; it returns an error for anything
// but a positive duration or a positive count ending in x.
func parseFuzzTime(s string) (fuzzLimit, error) {
	if n, ok := strings.CutSuffix(s, "x"); ok {
		if !regexp.MustCompile(`^[1-9][0-9]*$`).MatchString(n) {
			return fuzzLimit{}, fmt.Errorf("-fuzztime %q: a count is a positive number followed by x", s)
		}
		return fuzzLimit{count: s}, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d <= 0 {
		return fuzzLimit{}, fmt.Errorf("-fuzztime %q: want a positive duration or a count such as 1000x", s)
	}
	return fuzzLimit{duration: d}, nil
}

// A fuzzPackage is a package whose tests define fuzz targets.
type fuzzPackage struct {
	importPath, dir string
}

// A runner fuzzes targets one after the other.
type runner struct {
	goCmd        string    // the go command
	dir          string    // where patterns are resolved ("" for the working directory)
	out          io.Writer // where the targets' output goes
	limit        fuzzLimit
	minimizeTime string // -test.fuzzminimizetime
}

// fuzzAll fuzzes each target of the packages patterns names and returns
// the targets that failed. It returns an error when the packages cannot be
// listed or built, or a test binary cannot be started.
func (r runner) fuzzAll(ctx context.Context, patterns []string) ([]string, error) {
	pkgs, err := r.fuzzPackages(ctx, patterns)
	if err != nil {
		return nil, err
	}
	bin, err := os.MkdirTemp("", "fuzzrun-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(bin)
	cacheDir, err := output(ctx, r.dir, r.goCmd, "env", "GOCACHE")
	if err != nil {
		return nil, err
	}
	cacheDir = strings.TrimSpace(cacheDir)
	var failed []string
	for i, p := range pkgs {
		exe := filepath.Join(bin, fmt.Sprintf("pkg%d.test", i))
		if _, err := output(ctx, r.dir, r.goCmd, "test", "-c", "-fuzz=^Fuzz", "-o", exe, p.importPath); err != nil {
			return nil, err
		}
		list, err := output(ctx, p.dir, exe, "-test.list=^Fuzz")
		if err != nil {
			return nil, fmt.Errorf("listing the fuzz targets of %s: %w", p.importPath, err)
		}
		for target := range strings.FieldsSeq(list) {
			if !strings.HasPrefix(target, "Fuzz") {
				continue
			}
			fmt.Fprintf(r.out, "== %s (%s, %s)\n", target, p.importPath, r.limit)
			args := []string{
				"-test.run=^$", "-test.fuzz=^" + target + "$", "-test.timeout=0", "-test.paniconexit0",
				"-test.fuzzcachedir=" + filepath.Join(cacheDir, "fuzz", p.importPath),
				"-test.fuzzminimizetime=" + r.minimizeTime,
			}
			if r.limit.count != "" {
				args = append(args, "-test.fuzztime="+r.limit.count)
			}
			if err := fuzzTarget(ctx, r.out, p.dir, exe, args, r.limit.duration); err != nil {
				fmt.Fprintf(r.out, "== %s: %v\n", target, err)
				failed = append(failed, target)
			}
		}
	}
	return failed, nil
}

// fuzzFuncPattern finds a fuzz target's definition in a test file.
var fuzzFuncPattern = regexp.MustCompile(`(?m)^func Fuzz\w*\(\w+ \*testing\.F\)`)

// fuzzPackages returns the packages patterns names whose test files define
// a fuzz target, or an error when go list fails or a file cannot be read.
func (r runner) fuzzPackages(ctx context.Context, patterns []string) ([]fuzzPackage, error) {
	list, err := output(ctx, r.dir, r.goCmd, append([]string{"list", "-f", "{{.ImportPath}}\t{{.Dir}}\t{{join .TestGoFiles \"\\t\"}}\t{{join .XTestGoFiles \"\\t\"}}"}, patterns...)...)
	if err != nil {
		return nil, err
	}
	var pkgs []fuzzPackage
	for line := range strings.Lines(list) {
		fields := strings.Split(strings.TrimRight(line, "\n"), "\t")
		if len(fields) < 2 {
			continue
		}
		for _, name := range fields[2:] {
			if name == "" {
				continue
			}
			src, err := os.ReadFile(filepath.Join(fields[1], name))
			if err != nil {
				return nil, err
			}
			if fuzzFuncPattern.Match(src) {
				pkgs = append(pkgs, fuzzPackage{importPath: fields[0], dir: fields[1]})
				break
			}
		}
	}
	return pkgs, nil
}

// stopGrace is how long a target may take to stop after its interrupt
// before fuzzrun kills it and its workers and fails it.
const stopGrace = 2 * time.Minute

// fuzzTarget runs the test binary exe with args in dir, copying its output
// to out. With a duration, it interrupts the binary that long after the
// fuzzing coordinator starts. It returns nil when the binary exits 0, and
// otherwise an error saying how it ended.
func fuzzTarget(ctx context.Context, out io.Writer, dir, exe string, args []string, duration time.Duration) error {
	cmd := exec.CommandContext(ctx, exe, args...)
	cmd.Dir = dir
	// Its own process group, so that a target that will not stop can be
	// killed with its workers.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	pipe, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	cmd.Stderr = cmd.Stdout
	if err := cmd.Start(); err != nil {
		return err
	}
	started := make(chan struct{})
	exited := make(chan error, 1)
	// Copy the output, noting the coordinator's start, then wait for the
	// binary: its output must be read to the end before Wait.
	go func() {
		r := bufio.NewReader(pipe)
		seen := false
		var readErr error
		for {
			line, err := r.ReadString('\n')
			io.WriteString(out, line)
			if !seen && strings.HasPrefix(line, "fuzz: elapsed:") {
				seen = true
				close(started)
			}
			if err != nil {
				if err != io.EOF {
					readErr = err
				}
				break
			}
		}
		exited <- errors.Join(cmd.Wait(), readErr)
	}()
	if duration == 0 {
		return <-exited
	}
	select {
	case err := <-exited:
		return err
	case <-started:
	}
	select {
	case err := <-exited:
		return err
	case <-time.After(duration):
	}
	// Only the coordinator: it stops its workers itself.
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		return <-exited
	}
	select {
	case err := <-exited:
		return err
	case <-time.After(stopGrace):
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-exited
		return fmt.Errorf("did not stop within %s of its interrupt", stopGrace)
	}
}

// output runs name with args in dir and returns its standard output, or an
// error carrying its standard error when it fails.
func output(ctx context.Context, dir, name string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	var stderr strings.Builder
	cmd.Stderr = &stderr
	b, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("%s %s: %w\n%s", filepath.Base(name), strings.Join(args, " "), err, stderr.String())
	}
	return string(b), nil
}
