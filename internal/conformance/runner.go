package conformance

import (
	"context"
	"fmt"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"
	"sync"
	"time"
)

// Status is how a case ended.
type Status int

// Case outcomes.
const (
	Passed Status = iota
	Failed
	Skipped
	// Unsupported: the target lacks a capability the case needs (it does
	// not claim it, or answered Unsupported (0) / HTTP 406).
	Unsupported
)

func (s Status) String() string {
	return [...]string{"PASS", "FAIL", "SKIP", "UNSUPPORTED"}[s]
}

// Result is the outcome of one case and of its subtests.
type Result struct {
	// Path names the case from the top: "Tables/Rename/ToRoot".
	Path   string
	Status Status
	// Messages are the failures, the skip or gap reason, and the logs of
	// the case, in order.
	Messages []string
	Elapsed  time.Duration
	Children []*Result
}

// Counts are the numbers of cases by outcome.
type Counts struct {
	Passed, Failed, Skipped, Unsupported int
}

// Add adds o to c.
func (c *Counts) Add(o Counts) {
	c.Passed += o.Passed
	c.Failed += o.Failed
	c.Skipped += o.Skipped
	c.Unsupported += o.Unsupported
}

// Count counts the cases of r: every case without subtests, and every case
// with subtests that failed, skipped or met a gap itself.
func (r *Result) Count() Counts {
	var c Counts
	for _, ch := range r.Children {
		c.Add(ch.Count())
	}
	if len(r.Children) > 0 && r.Status == Passed {
		return c
	}
	switch r.Status {
	case Passed:
		c.Passed++
	case Failed:
		c.Failed++
	case Skipped:
		c.Skipped++
	case Unsupported:
		c.Unsupported++
	}
	return c
}

// Walk calls fn for r and every result under it, parents first.
func (r *Result) Walk(fn func(*Result)) {
	fn(r)
	for _, ch := range r.Children {
		ch.Walk(fn)
	}
}

// RunnerOptions configure a Runner.
type RunnerOptions struct {
	// Only selects cases by path, as `go test -run` does with its slash
	// separated parts, but matching whole names case-insensitively:
	// "Tables" runs the group, "Tables/Rename" one case of it. Empty runs
	// everything.
	Only []string
	// OnDone, when set, is called as each top-level case ends.
	OnDone func(*Result)
}

// Runner runs the suite outside `go test`: its cases get a T that records
// results instead of reporting to the testing package. A Fatalf, Skipf or
// Unsupported ends the case's goroutine as it does under go test.
type Runner struct {
	opts    RunnerOptions
	only    [][]string
	helpers sync.Map // function name → struct{}: frames Errorf skips
}

// NewRunner returns a Runner.
func NewRunner(opts RunnerOptions) *Runner {
	r := &Runner{opts: opts}
	for _, p := range opts.Only {
		if p = strings.Trim(strings.TrimSpace(p), "/"); p != "" {
			r.only = append(r.only, strings.Split(p, "/"))
		}
	}
	return r
}

// Run runs fn as the root of a tree of cases (fn's subtests are the
// top-level cases) and returns the tree's results when every case has
// ended. ctx bounds the whole run.
func (r *Runner) Run(ctx context.Context, fn func(T)) *Result {
	root := &caseT{runner: r, res: &Result{}}
	root.run(ctx, fn)
	return root.res
}

// selected reports whether the case at path runs under the Only patterns.
func (r *Runner) selected(path []string) bool {
	if len(r.only) == 0 {
		return true
	}
	for _, p := range r.only {
		ok := true
		for i := 0; i < len(p) && i < len(path); i++ {
			if !strings.EqualFold(p[i], path[i]) {
				ok = false
				break
			}
		}
		if ok {
			return true
		}
	}
	return false
}

// caseT is the T of one case run by a Runner.
type caseT struct {
	runner *Runner
	parent *caseT
	path   []string
	res    *Result

	ctx    context.Context
	cancel context.CancelFunc

	mu       sync.Mutex
	cleanups []func()
	failed   bool // this case or a subtest failed
}

var _ T = (*caseT)(nil)

// run runs fn in a goroutine of its own, so that Fatalf, Skipf and
// Unsupported can end it with runtime.Goexit, then runs the clean-ups.
func (c *caseT) run(ctx context.Context, fn func(T)) {
	c.ctx, c.cancel = context.WithCancel(ctx)
	start := time.Now()
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer func() {
			if p := recover(); p != nil {
				c.fail(fmt.Sprintf("panic: %v\n%s", p, trimStack(debug.Stack())))
			}
		}()
		fn(c)
	}()
	<-done
	c.cancel()
	c.mu.Lock()
	cleanups := c.cleanups
	c.cleanups = nil
	c.mu.Unlock()
	for i := len(cleanups) - 1; i >= 0; i-- {
		c.runCleanup(cleanups[i])
	}
	c.res.Elapsed = time.Since(start)
}

func (c *caseT) runCleanup(fn func()) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer func() {
			if p := recover(); p != nil {
				c.fail(fmt.Sprintf("panic in clean-up: %v", p))
			}
		}()
		fn()
	}()
	<-done
}

// trimStack keeps the first lines of a panic's stack.
func trimStack(b []byte) string {
	lines := strings.Split(string(b), "\n")
	if len(lines) > 24 {
		lines = lines[:24]
	}
	return strings.Join(lines, "\n")
}

// Run runs fn as subtest name and reports whether it passed; a subtest the
// Only patterns leave out does not run and passes.
func (c *caseT) Run(name string, fn func(T)) bool {
	path := append(append([]string(nil), c.path...), name)
	if !c.runner.selected(path) {
		return true
	}
	ch := &caseT{runner: c.runner, parent: c, path: path, res: &Result{Path: strings.Join(path, "/")}}
	c.mu.Lock()
	c.res.Children = append(c.res.Children, ch.res)
	c.mu.Unlock()
	ch.run(c.ctx, fn)
	if len(c.path) == 0 && c.runner.opts.OnDone != nil {
		c.runner.opts.OnDone(ch.res)
	}
	return !ch.Failed()
}

// Name returns the case's path.
func (c *caseT) Name() string { return c.res.Path }

// Context returns a context that ends when the case does.
func (c *caseT) Context() context.Context { return c.ctx }

// Cleanup registers fn to run when the case ends, last registered first.
func (c *caseT) Cleanup(fn func()) {
	c.mu.Lock()
	c.cleanups = append(c.cleanups, fn)
	c.mu.Unlock()
}

// Helper marks the calling function as a helper: messages name its
// caller's line instead.
func (c *caseT) Helper() {
	pc, _, _, ok := runtime.Caller(1)
	if ok {
		c.runner.helpers.Store(runtime.FuncForPC(pc).Name(), struct{}{})
	}
}

// Failed reports whether the case or one of its subtests failed.
func (c *caseT) Failed() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.failed
}

// Logf records a message shown with the case's result.
func (c *caseT) Logf(format string, args ...any) {
	c.record(fmt.Sprintf(format, args...))
}

// Errorf records a failure and lets the case go on.
func (c *caseT) Errorf(format string, args ...any) {
	c.fail(c.where() + fmt.Sprintf(format, args...))
}

// Fatalf records a failure and ends the case.
func (c *caseT) Fatalf(format string, args ...any) {
	c.fail(c.where() + fmt.Sprintf(format, args...))
	runtime.Goexit()
}

// Skipf ends the case as skipped.
func (c *caseT) Skipf(format string, args ...any) {
	c.end(Skipped, fmt.Sprintf(format, args...))
}

// Unsupported ends the case as a capability gap.
func (c *caseT) Unsupported(format string, args ...any) {
	c.end(Unsupported, fmt.Sprintf(format, args...))
}

func (c *caseT) end(s Status, msg string) {
	c.mu.Lock()
	if !c.failed {
		c.res.Status = s
	}
	c.res.Messages = append(c.res.Messages, msg)
	c.mu.Unlock()
	runtime.Goexit()
}

func (c *caseT) record(msg string) {
	c.mu.Lock()
	c.res.Messages = append(c.res.Messages, msg)
	c.mu.Unlock()
}

// fail marks the case and its ancestors failed.
func (c *caseT) fail(msg string) {
	c.mu.Lock()
	c.failed = true
	c.res.Status = Failed
	c.res.Messages = append(c.res.Messages, msg)
	c.mu.Unlock()
	for p := c.parent; p != nil; p = p.parent {
		p.mu.Lock()
		p.failed = true
		p.mu.Unlock()
	}
}

// where returns "file.go:line: " of the first caller of Errorf or Fatalf
// that is not a helper.
func (c *caseT) where() string {
	pcs := make([]uintptr, 32)
	n := runtime.Callers(3, pcs)
	frames := runtime.CallersFrames(pcs[:n])
	for {
		f, more := frames.Next()
		if _, helper := c.runner.helpers.Load(f.Function); !helper && f.Function != "" {
			return fmt.Sprintf("%s:%d: ", filepath.Base(f.File), f.Line)
		}
		if !more {
			return ""
		}
	}
}
