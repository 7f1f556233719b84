package pgtest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"testing"
)

// shared is the cluster of the test binary, started by the first test
// that asks for a database.
var shared struct {
	once    sync.Once
	cluster *Cluster
	err     error
	dbs     atomic.Int64
}

// Main runs the tests of a package, then stops the cluster they started,
// if any. Call it from TestMain:
//
//	func TestMain(m *testing.M) { pgtest.Main(m) }
func Main(m *testing.M) {
	code := m.Run()
	if shared.cluster != nil {
		if err := shared.cluster.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, "pgtest: stop:", err)
		}
	}
	os.Exit(code)
}

// cluster returns the test binary's cluster, starting it on first use.
func cluster() (*Cluster, error) {
	shared.once.Do(func() {
		shared.cluster, shared.err = Start(Options{})
	})
	return shared.cluster, shared.err
}

// Database returns the connection string of a new, empty database on the
// test binary's cluster (started on first use, stopped by Main); the
// database is dropped when t ends. Without PostgreSQL it skips t, or fails
// it under CI=true; it fails t when the cluster cannot start.
func Database(t testing.TB) string {
	t.Helper()
	c := Shared(t)
	name := fmt.Sprintf("test_%d", shared.dbs.Add(1))
	url, err := c.CreateDatabase(context.Background(), name)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := c.DropDatabase(context.Background(), name); err != nil {
			t.Errorf("drop database %s: %v", name, err)
		}
	})
	return url
}

// Shared returns the test binary's cluster, started on first use and
// stopped by Main. Without PostgreSQL it skips t, or fails it under
// CI=true; it fails t when the cluster cannot start.
func Shared(t testing.TB) *Cluster {
	t.Helper()
	c, err := cluster()
	if errors.Is(err, ErrNoBinaries) {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%v (CI must run the PostgreSQL tests)", err)
		}
		t.Skip(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	return c
}
