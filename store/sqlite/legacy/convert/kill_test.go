package convert_test

import (
	"bufio"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/lancens/lancens/engine"
	"github.com/lancens/lancens/store/sqlite"
	"github.com/lancens/lancens/store/sqlite/legacy/convert"
	"github.com/lancens/lancens/warehouse"
)

// killChildEnv, set to a directory, makes the test binary convert the
// database in it (lancens.db, warehouse wh) instead of running the tests,
// printing a line per durable step.
const killChildEnv = "LANCENS_CONVERT_CHILD"

func TestMain(m *testing.M) {
	if dir := os.Getenv(killChildEnv); dir != "" {
		if err := convertIn(dir); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// convertIn converts the database in dir, printing each durable step.
func convertIn(dir string) error {
	ctx := context.Background()
	db, err := sqlite.Open(ctx, filepath.Join(dir, "lancens.db"), sqlite.Options{Synchronous: "NORMAL"})
	if err != nil {
		return err
	}
	defer db.Close()
	wh, err := warehouse.Open(filepath.Join(dir, "wh"))
	if err != nil {
		return err
	}
	_, err = convert.Run(ctx, db, convert.WithStep(convert.Options{Warehouse: wh}, func(what string) { fmt.Println("step", what) }))
	return err
}

// TestConvertSurvivesKill converts the fixture in a child process and
// kills it (SIGKILL) after a random durable step and a random delay, so
// that it dies between steps or in the middle of writing files or a
// database transaction; then converts again in this process and checks
// every version against f365447's answers. LANCENS_KILL_TRIALS sets the
// number of trials (default 3), LANCENS_KILL_SEED the seed (default:
// from the clock; a failure names it).
func TestConvertSurvivesKill(t *testing.T) {
	trials := 3
	if s := os.Getenv("LANCENS_KILL_TRIALS"); s != "" {
		n, err := strconv.Atoi(s)
		check(t, err)
		trials = n
	}
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("LANCENS_KILL_SEED"); s != "" {
		n, err := strconv.ParseUint(s, 10, 64)
		check(t, err)
		seed = n
	}
	t.Logf("LANCENS_KILL_SEED=%d", seed)
	r := rand.New(rand.NewPCG(seed, 0))
	fx := loadFixture(t)
	for trial := range trials {
		dir := t.TempDir()
		b, err := os.ReadFile(filepath.Join(fixtureDir, "fixture.db"))
		check(t, err)
		check(t, os.WriteFile(filepath.Join(dir, "lancens.db"), b, 0o644))
		check(t, os.Mkdir(filepath.Join(dir, "wh"), 0o755))

		steps, delay := 1+r.IntN(20), time.Duration(r.IntN(30))*time.Millisecond
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), killChildEnv+"="+dir)
		out, err := cmd.StdoutPipe()
		check(t, err)
		check(t, cmd.Start())
		lines := bufio.NewScanner(out)
		seen := 0
		for seen < steps && lines.Scan() {
			seen++
		}
		time.Sleep(delay)
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		t.Logf("trial %d: killed %s after step %d", trial, delay, seen)

		db, err := sqlite.Open(t.Context(), filepath.Join(dir, "lancens.db"), sqlite.Options{Synchronous: "NORMAL"})
		check(t, err)
		wh, err := warehouse.Open(filepath.Join(dir, "wh"))
		check(t, err)
		e, err := engine.New(engine.Options{Catalog: db, Warehouse: wh})
		check(t, err)
		v := &env{dir: dir, db: db, wh: wh, e: e}
		sum, err := v.run(t, convert.Options{})
		checkOnlyUnconvertible(t, fx, sum, err)
		checkConverted(t, v, fx)
		check(t, db.Close())
		if t.Failed() {
			t.Fatalf("trial %d (LANCENS_KILL_SEED=%d): killed %s after step %d", trial, seed, delay, seen)
		}
	}
}
