package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/lancens/lancens/client"
	"github.com/lancens/lancens/gen/apiclient"
	"github.com/lancens/lancens/store"
)

// The crash trials run the real `lancens serve` (this test binary started
// again as a child process, see TestMain) on a database and warehouse in a
// temporary directory, drive concurrent writes of every kind over HTTP,
// kill -9 the process at a random moment, start it again on the same files
// and check that every acknowledged write is there and that the writes in
// flight at the kill were applied whole or not at all. After every kill,
// before the restart, the warehouse check (crashcheck_test.go) opens every
// version the catalog records, on every branch, and checks that each file
// it and the index records need is there and readable. Each trial repeats
// this for crashRounds rounds on the same files, then checks that the
// vector index builds the rounds started finish.
//
// LANCENS_CRASH_TRIALS sets the number of trials (default 3; make crashtest
// runs 100), LANCENS_CRASH_SYNC the --sync mode (default FULL),
// LANCENS_CRASH_DURABILITY the --commit-durability (full or process;
// default: the two in turn, full first) and LANCENS_CRASH_SEED the seed of the
// first trial (default: from the clock; a failure names the seed that
// reproduces it). A kill -9 leaves the operating system's cache alone, so
// process durability must keep every acknowledged write too.

// crashChildEnv, set to 1, makes the test binary run main instead of the
// tests.
const crashChildEnv = "LANCENS_CRASH_CHILD"

// crashRounds is the number of kill -9 cycles per trial.
const crashRounds = 2

func envInt(t *testing.T, name string, def int64) int64 {
	t.Helper()
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		t.Fatalf("%s=%q: %v", name, v, err)
	}
	return n
}

// TestCrashTrials runs the crash trials.
func TestCrashTrials(t *testing.T) {
	trials := envInt(t, "LANCENS_CRASH_TRIALS", 3)
	seed := envInt(t, "LANCENS_CRASH_SEED", time.Now().UnixNano())
	sync := os.Getenv("LANCENS_CRASH_SYNC")
	if sync == "" {
		sync = "FULL"
	}
	durabilities := []store.CommitDurability{store.DurabilityFull, store.DurabilityProcess}
	if d := os.Getenv("LANCENS_CRASH_DURABILITY"); d != "" {
		only, err := store.ParseCommitDurability(d)
		if err != nil {
			t.Fatalf("LANCENS_CRASH_DURABILITY: %v", err)
		}
		durabilities = []store.CommitDurability{only}
	}
	total := make([]crashStats, len(durabilities))
	runs := make([]int, len(durabilities))
	for i := range trials {
		trialSeed := seed + i
		k := int(i) % len(durabilities)
		d := durabilities[k]
		ok := t.Run(fmt.Sprintf("seed=%d/%s", trialSeed, d), func(t *testing.T) {
			st := runCrashTrial(t, crashFlags{sync: sync, durability: d}, trialSeed)
			total[k].add(st)
			runs[k]++
			t.Logf("%s", st)
		})
		if !ok {
			t.Fatalf("trial %d failed; repeat it with LANCENS_CRASH_SEED=%d LANCENS_CRASH_TRIALS=1 LANCENS_CRASH_DURABILITY=%s", i, trialSeed, d)
		}
	}
	for k, d := range durabilities {
		if runs[k] == 0 {
			continue
		}
		t.Logf("%d trials with --sync %s --commit-durability %s, %d kill -9s: %s", runs[k], sync, d, runs[k]*crashRounds, total[k])
		if total[k].acked == 0 || total[k].uncertain == 0 {
			t.Fatalf("the trials with --commit-durability %s tested nothing: %s", d, total[k])
		}
	}
}

// crashFlags are the durability flags of the server under trial.
type crashFlags struct {
	sync       string
	durability store.CommitDurability
}

// crashStats counts the writes of trials.
type crashStats struct {
	acked     int            // acknowledged writes, all found after the restarts
	commits   int            // of those, namespace-mode version commits
	uncertain int            // writes without an answer: in flight at a kill, or sent after it
	unsent    int            // of those, how many found no server to connect to
	applied   int            // of those, how many had committed
	files     warehouseCheck // the checks of the files after each kill
	// kinds counts the managed tables' acknowledged writes by kind, and
	// what their optimizes removed and rewrote.
	kinds map[string]int
}

func (s *crashStats) add(o crashStats) {
	s.acked += o.acked
	s.commits += o.commits
	s.uncertain += o.uncertain
	s.unsent += o.unsent
	s.applied += o.applied
	s.files.add(o.files)
	s.addKinds(o.kinds)
}

func (s crashStats) String() string {
	return fmt.Sprintf("%d acknowledged writes kept (%d namespace-mode commits); %d writes without an answer at a kill (%d of them never sent): %d committed whole, %d not at all; files after the kills: %s",
		s.acked, s.commits, s.uncertain, s.unsent, s.applied, s.uncertain-s.applied, s.files) + kindsString(s.kinds)
}

// runCrashTrial runs one trial in a new directory.
func runCrashTrial(t *testing.T, flags crashFlags, seed int64) crashStats {
	dir := t.TempDir()
	r := rand.New(rand.NewPCG(uint64(seed), 0))
	w := newWorkload(r)
	for round := range crashRounds + 1 {
		srv := startCrashServer(t, dir, flags, round)
		c := newCrashConn(t, srv.url)
		if round == 0 {
			w.setup(t, c)
		} else {
			w.verify(t, c)
			if t.Failed() {
				srv.kill(t)
				t.FailNow()
			}
		}
		if round == crashRounds {
			w.finish(t, c)
			srv.kill(t)
			w.checkFiles(t, dir)
			break
		}
		w.run(t, c, srv, 200*time.Millisecond+time.Duration(r.Int64N(int64(1300*time.Millisecond))))
		w.stats.unsent += srv.unsent
		w.checkFiles(t, dir)
	}
	return w.stats
}

// crashServer is a running `lancens serve` child process.
type crashServer struct {
	cmd    *exec.Cmd
	url    string
	log    string
	exited chan struct{} // closed when the process has exited
	mu     sync.Mutex
	// killed is set just before the test kills the process.
	killed bool
	// unsent counts the writes that found no process to connect to.
	unsent int
}

// startCrashServer starts lancens on the trial's files and waits until it
// listens.
func startCrashServer(t *testing.T, dir string, flags crashFlags, n int) *crashServer {
	t.Helper()
	logPath := filepath.Join(dir, fmt.Sprintf("server-%d.log", n))
	args := []string{"--db", filepath.Join(dir, "lancens.db"), "--warehouse", filepath.Join(dir, "warehouse"),
		"--sync", flags.sync, "--commit-durability", flags.durability.String()}
	return startServerProcess(t, logPath, args...)
}

// startServerProcess starts `lancens serve` (this test binary standing in)
// on a free port with the given flags, logging to logPath, and waits until
// it listens.
func startServerProcess(t *testing.T, logPath string, flags ...string) *crashServer {
	t.Helper()
	logFile, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], append([]string{"serve", "--addr", "127.0.0.1:0", "--log-level", "warn"}, flags...)...)
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "LANCENS_") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, crashChildEnv+"=1")
	cmd.Stderr = logFile
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	s := &crashServer{cmd: cmd, log: logPath, exited: make(chan struct{})}
	lines := make(chan string, 1)
	go func() {
		rd := bufio.NewReader(stdout)
		line, _ := rd.ReadString('\n')
		lines <- line
		_, _ = io.Copy(io.Discard, rd)
		_ = cmd.Wait()
		logFile.Close()
		close(s.exited)
	}()
	select {
	case line := <-lines:
		s.url = regexp.MustCompile(`http://\S+`).FindString(line)
	case <-time.After(60 * time.Second):
	}
	if s.url == "" {
		_ = cmd.Process.Kill()
		<-s.exited
		t.Fatalf("lancens did not start (%s):\n%s", logPath, s.logTail())
	}
	return s
}

// kill kills the process with SIGKILL and waits for it to exit. The
// process must not have exited before.
func (s *crashServer) kill(t *testing.T) {
	t.Helper()
	s.mu.Lock()
	s.killed = true
	s.mu.Unlock()
	select {
	case <-s.exited:
		t.Errorf("lancens exited before it was killed:\n%s", s.logTail())
		return
	default:
	}
	if err := s.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	<-s.exited
}

// wasKilled reports whether the test has killed the process.
func (s *crashServer) wasKilled() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.killed
}

// logTail returns the end of the server's log.
func (s *crashServer) logTail() string {
	b, _ := os.ReadFile(s.log)
	if len(b) > 4000 {
		b = b[len(b)-4000:]
	}
	return string(b)
}

// crashConn is the clients of one server process.
type crashConn struct {
	c   *client.Client
	api *apiclient.ClientWithResponses
	// url and hc reach lancens's routes beyond the spec (optimize).
	url string
	hc  *http.Client
}

func newCrashConn(t *testing.T, url string) *crashConn {
	t.Helper()
	hc := &http.Client{Timeout: 2 * time.Minute, Transport: &http.Transport{MaxIdleConnsPerHost: 16}}
	c, err := client.New(url, client.WithHTTPClient(hc))
	if err != nil {
		t.Fatal(err)
	}
	api, err := apiclient.NewClientWithResponses(url, apiclient.WithHTTPClient(hc))
	if err != nil {
		t.Fatal(err)
	}
	return &crashConn{c: c, api: api, url: url, hc: hc}
}

// outcome is what a client knows of a write it sent.
type outcome int

const (
	acked     outcome = iota // answered 2xx: committed
	refused                  // answered with an error: not applied
	uncertain                // no answer: the process died with it in flight
)

// outcomeOf classifies the error of a client call.
func outcomeOf(err error) outcome {
	var ce *client.Error
	switch {
	case err == nil:
		return acked
	case errors.As(err, &ce):
		return refused
	}
	return uncertain
}

// checkOutcome reports a refused write (the workload only sends valid
// ones) and a write without an answer while the server was meant to be up.
func checkOutcome(t *testing.T, srv *crashServer, what string, err error) outcome {
	t.Helper()
	o := outcomeOf(err)
	if errors.Is(err, syscall.ECONNREFUSED) {
		srv.mu.Lock()
		srv.unsent++
		srv.mu.Unlock()
	}
	switch {
	case o == refused:
		t.Errorf("%s was refused: %v", what, err)
	case o == uncertain && !srv.wasKilled():
		t.Errorf("%s got no answer from a live server: %v", what, err)
	}
	return o
}
