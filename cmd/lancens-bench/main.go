// Command lancens-bench measures lancens against peers run on the same
// machine in the same run, and prints each result as a ratio to its peer.
//
//	go run ./cmd/lancens-bench -suite catalog
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"runtime/pprof"
	"runtime/trace"
	"slices"
	"strings"
	"time"

	"github.com/lancens/lancens/client"
	"github.com/lancens/lancens/coord"
	"github.com/lancens/lancens/engine"
	"github.com/lancens/lancens/internal/memcache"
	"github.com/lancens/lancens/internal/sysmem"
	"github.com/lancens/lancens/server"
	"github.com/lancens/lancens/store"
	"github.com/lancens/lancens/store/sqlite"
	"github.com/lancens/lancens/vend"
	"github.com/lancens/lancens/warehouse"
)

func main() {
	suites := flag.String("suite", "catalog,data,search,objectstore,remote-s3,replicas,soak,lance", "comma-separated suites to run: catalog, data, search, objectstore, remote-s3, replicas, soak, lance")
	flag.StringVar(&nodeDir, "node", nodeDir, "directory of the Node project with the LanceDB peer")
	scale := flag.Float64("scale", 1, "multiply workload sizes by this factor (e.g. 0.1 for a quick run)")
	cpuProfile := flag.String("cpuprofile", "", "write a CPU profile of this process (lancens and the bench's client) to this file")
	memProfile := flag.String("memprofile", "", "write an allocation profile of this process to this file at the end")
	traceFile := flag.String("trace", "", "write an execution trace of this process to this file (go tool trace: where the wall-clock time of writes goes, syscalls and waits included)")
	flag.Parse()
	err := profiled(*cpuProfile, *memProfile, *traceFile, func() error { return run(*suites, *scale) })
	if err != nil {
		fmt.Fprintln(os.Stderr, "lancens-bench:", err)
		os.Exit(1)
	}
}

// profiled runs fn, writing a CPU profile of it to cpuFile, an execution
// trace of it to traceFile and an allocation profile at its end to
// memFile, each unless empty. It returns fn's error, or the error of
// creating or writing a profile or the trace.
func profiled(cpuFile, memFile, traceFile string, fn func() error) error {
	if cpuFile != "" {
		f, err := os.Create(cpuFile)
		if err != nil {
			return err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
		defer pprof.StopCPUProfile()
	}
	if traceFile != "" {
		f, err := os.Create(traceFile)
		if err != nil {
			return err
		}
		defer f.Close()
		if err := trace.Start(f); err != nil {
			return err
		}
		defer trace.Stop()
	}
	if err := fn(); err != nil {
		return err
	}
	if memFile == "" {
		return nil
	}
	f, err := os.Create(memFile)
	if err != nil {
		return err
	}
	defer f.Close()
	return pprof.Lookup("allocs").WriteTo(f, 0)
}

// result is one measured line: ours against a peer's.
type result struct {
	suite, metric, unit string
	ours, peer          float64
	peerName            string
	higherIsBetter      bool
}

// suite measures one area; it gets a fresh directory and a lancens
// serving from it (nil for ownServers), and adds each result to rep as
// soon as it is measured.
type suite func(dir string, inst *instance, scale float64, rep *report) error

var suites = map[string]suite{"catalog": catalogSuite, "data": dataSuite, "search": searchSuite, "objectstore": objectStoreSuite, "remote-s3": remoteS3Suite, "replicas": replicasSuite, "soak": soakSuite, "lance": lanceSuite}

// ownServers are the suites that start the lancens servers they need
// themselves (on object storage, on PostgreSQL, one per table), or need
// none (lance, which measures the Lance library): they get no shared one.
var ownServers = map[string]bool{"objectstore": true, "remote-s3": true, "replicas": true, "soak": true, "lance": true}

func run(names string, scale float64) error {
	rep := &report{w: os.Stdout}
	for _, name := range strings.Split(names, ",") {
		name = strings.TrimSpace(name)
		s, ok := suites[name]
		if !ok {
			return fmt.Errorf("unknown suite %q", name)
		}
		if err := runSuite(name, s, scale, rep); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
	}
	return nil
}

// runSuite runs s in a temporary directory, which it removes after.
func runSuite(name string, s suite, scale float64, rep *report) error {
	dir, err := os.MkdirTemp("", "lancens-bench-"+name+"-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	if ownServers[name] {
		return s(dir, nil, scale, rep)
	}
	inst, err := startLancens(dir)
	if err != nil {
		return err
	}
	defer inst.close()
	return s(dir, inst, scale, rep)
}

// report prints results as the rows of a table, each as soon as it is
// measured (a run takes minutes), under a header printed with the first.
// The ratio is always "how many times better lancens is": above 1 means
// lancens wins.
type report struct {
	w       io.Writer
	started bool
}

// The table's columns: suite, metric, lancens, peer, peer is, advantage.
const reportRow = "%-8s %-52s %14s %14s  %-16s %10s\n"

// header prints the table's header before its first row.
func (r *report) header() {
	if !r.started {
		r.started = true
		fmt.Fprintf(r.w, reportRow, "suite", "metric", "lancens", "peer", "peer is", "advantage")
	}
}

func (r *report) add(results ...result) {
	r.header()
	for _, res := range results {
		ratio := res.peer / res.ours
		if res.higherIsBetter {
			ratio = res.ours / res.peer
		}
		fmt.Fprintf(r.w, reportRow, res.suite, res.metric, format(res.ours, res.unit), format(res.peer, res.unit), res.peerName, fmt.Sprintf("%.2fx", ratio))
	}
}

// skip prints a row for a measurement that could not be made, and why.
func (r *report) skip(suite, metric, why string) {
	r.header()
	fmt.Fprintf(r.w, "%-8s %-52s skipped: %s\n", suite, metric, why)
}

func format(v float64, unit string) string {
	switch unit {
	case "ms":
		return fmt.Sprintf("%.3f ms", v)
	case "/s":
		return fmt.Sprintf("%.0f/s", v)
	case "s":
		return fmt.Sprintf("%.2f s", v)
	case "":
		return fmt.Sprintf("%.3f", v)
	case "MB/s":
		return fmt.Sprintf("%.1f MB/s", v)
	}
	return fmt.Sprintf("%.3g %s", v, unit)
}

// instance is a lancens server running on a loopback port for a benchmark.
type instance struct {
	url    string
	db     *sqlite.DB
	wh     *warehouse.Warehouse
	client *client.Client
	close  func()
}

// startLancens starts lancens as `lancens serve` would, with the default
// (durable) SQLite settings, in dir.
func startLancens(dir string) (*instance, error) {
	return startLancensWith(dir, store.DurabilityFull)
}

// startLancensWith starts lancens as `lancens serve --commit-durability
// d` would, in dir.
func startLancensWith(dir string, d store.CommitDurability) (*instance, error) {
	ctx := context.Background()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	jobsQueued := coord.NewSignal()
	db, err := sqlite.Open(ctx, filepath.Join(dir, "lancens.db"), sqlite.Options{OnJobQueued: jobsQueued.Notify, CommitDurability: d})
	if err != nil {
		return nil, err
	}
	wh, err := warehouse.Open(filepath.Join(dir, "warehouse"))
	if err != nil {
		db.Close()
		return nil, err
	}
	wh.SetCommitDurability(d)
	st, commits, err := withLanceEngine(db, wh)
	if err != nil {
		db.Close()
		return nil, err
	}
	srv, stop, err := newServer(st, commits, wh, nil, jobsQueued)
	if err != nil {
		return nil, err
	}
	url, c, stopServing, err := listen(srv)
	if err != nil {
		stop()
		db.Close()
		return nil, err
	}
	return &instance{url: url, db: db, wh: wh, client: c, close: func() {
		stopServing()
		stop()
		db.Close()
	}}, nil
}

// withLanceEngine returns db with the Lance engine serving the rows of its
// tables from wh, within a read cache of the default size, as `lancens
// serve` does, and the committer both commit through (pass
// it to newServer). It returns engine.New's error.
func withLanceEngine(db store.Backend, wh *warehouse.Warehouse) (store.ManagedBackend, *coord.Committer, error) {
	commits := coord.NewCommitter(db, wh, slog.New(slog.DiscardHandler))
	e, err := engine.New(engine.Options{Catalog: db, Warehouse: wh, Commits: commits, Cache: memcache.New(sysmem.Available() / 4)})
	if err != nil {
		return nil, nil, err
	}
	return engine.WithBackend(db, e), commits, nil
}

// newServer builds a server over db and wh, committing through commits
// (nil: a committer of its own; pass the one an engine serving db commits
// through), vending v's options (nil: none), with its background services
// started; stop stops them, once the HTTP server has stopped.
func newServer(db store.ManagedBackend, commits *coord.Committer, wh *warehouse.Warehouse, v *vend.Vendor, jobsQueued *coord.Signal) (srv *server.Server, stop func(), err error) {
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	services := coord.NewServices(coord.ServicesConfig{Store: db, Committer: commits, Warehouse: wh, JobsQueued: jobsQueued, Logger: logger})
	if srv, err = server.New(server.Config{Store: db, Warehouse: wh, Vendor: v, Services: services, Logger: logger}); err != nil {
		return nil, nil, err
	}
	services.Start()
	return srv, services.Stop, nil
}

// latencies summarises a set of durations.
type latencies []time.Duration

func (l latencies) percentile(p float64) time.Duration {
	s := slices.Clone(l)
	slices.Sort(s)
	if len(s) == 0 {
		return 0
	}
	return s[int(float64(len(s)-1)*p)]
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// post sends a JSON request to the instance and decodes the answer.
func (inst *instance) post(ctx context.Context, path, body string, out any) error {
	req, err := http.NewRequestWithContext(ctx, "POST", inst.url+path, strings.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		return err
	}
	if res.StatusCode != http.StatusOK {
		return fmt.Errorf("POST %s: %s: %s", path, res.Status, b)
	}
	return json.Unmarshal(b, out)
}
