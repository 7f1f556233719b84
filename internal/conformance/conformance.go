// Package conformance is one behavioural test suite for the Lance namespace
// API. It runs against a store directly (store/sqlite, later other
// backends) and against the full HTTP path (server and client package),
// so every backend and every transport agree on each result and each
// error code. Cases assert results and codes, never messages.
//
// A backend says what it offers with Capabilities; cases that need a
// capability the backend lacks are skipped (and `lancens conformance`
// reports them as gaps). The cases take a T, which *testing.T satisfies, so
// the same cases run under `go test` and in the conformance kit's own
// Runner.
//
//	func TestConformance(t *testing.T) {
//		conformance.Run(t, conformance.Config{
//			New:          func(t conformance.T) store.Catalog { return openStore(t) },
//			Capabilities: conformance.Full(),
//		})
//	}
package conformance

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/lancens/lancens/store"
)

// T is what a case needs from its test: *testing.T satisfies it, and so
// does the conformance kit's Runner. Subtests run through Subtest.
type T interface {
	Helper()
	Name() string
	Logf(format string, args ...any)
	Errorf(format string, args ...any)
	Fatalf(format string, args ...any)
	Skipf(format string, args ...any)
	Failed() bool
	Cleanup(func())
	Context() context.Context
}

var _ T = (*testing.T)(nil)

// subtester is a T that runs subtests itself (the kit's Runner does).
// *testing.T's Run takes a func(*testing.T), so Subtest adapts it.
type subtester interface {
	Run(name string, fn func(T)) bool
}

// gapReporter is a T that counts a capability gap apart from failures and
// skips: a case that needs a capability the target does not claim, or that
// meets an Unsupported (0) error. Without it, the first is a skip and the
// second a failure.
type gapReporter interface {
	Unsupported(format string, args ...any)
}

// Subtest runs fn as the subtest name of t and reports whether it passed
// (skipped and unsupported subtests pass). It panics for a T that can
// run no subtests.
func Subtest(t T, name string, fn func(t T)) bool {
	switch tt := t.(type) {
	case *testing.T:
		return tt.Run(name, func(t *testing.T) { fn(t) })
	case subtester:
		return tt.Run(name, fn)
	}
	panic(fmt.Sprintf("conformance: %T cannot run subtests", t))
}

// The catalog cases exercise a store.Catalog. A backend that offers only
// some of its interfaces implements the others by returning Unsupported
// (0) and leaves their capabilities out.

// DataTarget is a store.Catalog that also keeps rows: what the data-plane
// cases exercise, and what a target serving the API's data operations
// (HTTPTarget) implements. Work a backend queues (vector index builds)
// must finish on its own or before the queuing call returns (see
// InlineJobs). The groups of the other interfaces of a backend (Views,
// BranchedData, VersionCleanup, Jobs, Probe, LocationLocks,
// VersionFinder) need the target to implement that interface of store
// too.
type DataTarget interface {
	store.Catalog
	store.ManagedData
	store.Indexes
}

// Capabilities say what a backend offers; cases needing a capability it
// lacks are skipped. Every interface of store's backend contract has one
// (store.ManagedData several).
type Capabilities struct {
	Namespaces   bool // create, list, describe, drop namespaces
	Tables       bool // declare, register, describe, list, rename, drop tables
	Versions     bool // the strict version chain of declared tables
	Batches      bool // atomic multi-table batch commits
	Tags         bool
	Branches     bool
	Transactions bool // describe and alter transaction records
	// ManagedData: tables whose rows the backend keeps: create with Arrow
	// data, insert, merge_insert, update, delete, count, query, restore.
	ManagedData     bool
	SchemaEvolution bool // add, alter and drop columns of managed tables
	ScalarIndexes   bool // BTREE, BITMAP and LABEL_LIST indexes
	VectorSearch    bool // exact nearest-neighbour queries
	VectorIndexes   bool // IVF vector indexes
	FullTextSearch  bool // INVERTED indexes and full-text queries
	// Views: materialized views (store.Views), refreshed from their source.
	Views bool
	// BranchedData: reads and writes of managed tables on branches
	// (store.BranchedData).
	BranchedData bool
	// VersionCleanup: the retention of the versions of managed tables
	// (store.VersionCleanup).
	VersionCleanup bool
	// Jobs: the queue of deferred work (store.Jobs).
	Jobs bool
	// Probe: readiness and size for operators (store.Probe).
	Probe bool
	// LocationLocks: locks on table locations (store.LocationLocker).
	LocationLocks bool
	// VersionFinder: a table and one of its versions in one read
	// (store.VersionFinder).
	VersionFinder bool
	// DatasetIndexes: the records of the indexes of Lance datasets
	// (store.DatasetIndexes).
	DatasetIndexes bool
}

// Full returns every capability: what lancens with SQLite offers, the
// store tested directly.
func Full() Capabilities {
	c := Data()
	c.Jobs, c.Probe, c.LocationLocks, c.VersionFinder, c.DatasetIndexes = true, true, true, true, true
	c.Views, c.BranchedData, c.VersionCleanup = true, true, true
	return c
}

// Data returns the catalog and the data plane of managed tables as the
// API's data operations serve them, on every branch: what an HTTPTarget
// offers. Views and VersionCleanup are not among them: the API queues
// refreshes and has no cleanup, and their groups run the queued work
// itself, which only a backend tested directly can.
func Data() Capabilities {
	c := Catalog()
	c.ManagedData, c.SchemaEvolution, c.ScalarIndexes = true, true, true
	c.VectorSearch, c.VectorIndexes, c.FullTextSearch = true, true, true
	c.BranchedData = true
	return c
}

// Backend returns what a backend that keeps no rows offers tested
// directly (store/postgres): the catalog, the job queue, the probe, the
// location locks, the version finder and the records of dataset indexes.
func Backend() Capabilities {
	c := Catalog()
	c.Jobs, c.Probe, c.LocationLocks, c.VersionFinder, c.DatasetIndexes = true, true, true, true, true
	return c
}

// Catalog returns the catalog capabilities only: a backend that stores
// catalog entries and versions but no rows.
func Catalog() Capabilities {
	return Capabilities{Namespaces: true, Tables: true, Versions: true, Batches: true, Tags: true, Branches: true, Transactions: true}
}

// Config says what the suite runs against.
type Config struct {
	// New returns a fresh, empty target for one case; it registers its own
	// clean-up with t. Required. It must return a DataTarget when the
	// capabilities include ManagedData.
	New func(t T) store.Catalog
	// Capabilities the target claims.
	Capabilities Capabilities
	// Shared says each target is a view into a live catalog that also
	// holds other data (see Scope): cases about the root namespace itself
	// are skipped, since they would touch that other data.
	Shared bool
	// Groups, when not empty, names the groups to run (see Groups); the
	// others do not run at all.
	Groups []string
}

// Group is one named part of the suite.
type Group struct {
	Name string
	// Doc says in a line what the group checks.
	Doc string
	// Needs are the capabilities the group needs, by name.
	Needs []string
	run   func(s *suite, t T)
}

// groups is the suite in run order.
var groups = []Group{
	{"Namespaces", "create modes, names, listings and pages, describe, exists, drop", []string{"Namespaces"}, (*suite).namespaces},
	{"Tables", "declare, register, list, rename, drop; namespaces with tables", []string{"Namespaces", "Tables"}, (*suite).tables},
	{"Versions", "the strict version chain, listing, deleting, racing commits", []string{"Tables", "Versions"}, (*suite).versions},
	{"Batches", "atomic multi-table commits", []string{"Tables", "Versions", "Batches"}, (*suite).batches},
	{"Tags", "tag lifecycle and pages", []string{"Tables", "Versions", "Tags"}, (*suite).tags},
	{"Branches", "branch lifecycle, branch version chains", []string{"Tables", "Versions", "Branches", "Tags"}, (*suite).branches},
	{"Transactions", "describe and alter transaction records", []string{"Tables", "Versions", "Transactions"}, (*suite).transactions},
	{"Data", "create with rows, insert, merge_insert, update, delete, count, query, time travel, restore", []string{"ManagedData"}, (*suite).data},
	{"Streams", "writes read their rows as a stream: schema first, every batch released, a stream error fails the write whole", []string{"ManagedData"}, (*suite).streams},
	{"SchemaEvolution", "add, alter and drop columns; old versions keep their schema", []string{"ManagedData", "SchemaEvolution"}, (*suite).schemaEvolution},
	{"ScalarIndexes", "BTREE, BITMAP and LABEL_LIST indexes: create, list, stats, drop", []string{"ManagedData", "ScalarIndexes"}, (*suite).scalarIndexes},
	{"VectorSearch", "exact nearest neighbours, filters, metrics, batches of vectors", []string{"ManagedData", "VectorSearch"}, (*suite).vectorSearch},
	{"VectorIndexes", "IVF index builds and searches through them", []string{"ManagedData", "VectorSearch", "VectorIndexes"}, (*suite).vectorIndexes},
	{"FullTextSearch", "INVERTED indexes and full-text queries", []string{"ManagedData", "FullTextSearch"}, (*suite).fullTextSearch},
	{"Views", "materialized views: create, refresh from the source, errors", []string{"ManagedData", "Views"}, (*suite).views},
	{"BranchedData", "rows of managed tables on branches: writes leave other branches alone", []string{"ManagedData", "Branches", "BranchedData"}, (*suite).branchedData},
	{"VersionCleanup", "removing old versions of managed tables and what keeps one", []string{"ManagedData", "Tags", "VersionCleanup"}, (*suite).versionCleanup},
	{"Jobs", "claiming, finishing and releasing queued work; a queued deletion holds its location", []string{"Tables", "Jobs"}, (*suite).jobs},
	{"Probe", "readiness, pending jobs and size", []string{"Tables", "Probe"}, (*suite).probe},
	{"LocationLocks", "locks on table locations are released and taken again", []string{"LocationLocks"}, (*suite).locationLocks},
	{"VersionFinder", "a table and one of its versions in one read; missing versions, branches and tables", []string{"Tables", "Versions", "Branches", "VersionFinder"}, (*suite).versionFinder},
	{"DatasetIndexes", "records of the indexes of Lance datasets: create, build, rebuild, fail, replace, drop", []string{"Tables", "Jobs", "DatasetIndexes"}, (*suite).datasetIndexes},
}

// Groups returns the groups of the suite in run order.
func Groups() []Group { return append([]Group(nil), groups...) }

// GroupsFor returns the names of the groups whose needs c meets, in run
// order: for Config.Groups, to leave out the groups a kind of target can
// never exercise (an HTTPTarget reaches no store.Jobs, for one) rather
// than report them as gaps.
func GroupsFor(c Capabilities) []string {
	var out []string
	for _, g := range groups {
		if !slices.ContainsFunc(g.Needs, func(n string) bool { return !c.has(n) }) {
			out = append(out, g.Name)
		}
	}
	return out
}

// has reports whether c includes the capability named name (a field of
// Capabilities).
func (c Capabilities) has(name string) bool {
	switch name {
	case "Namespaces":
		return c.Namespaces
	case "Tables":
		return c.Tables
	case "Versions":
		return c.Versions
	case "Batches":
		return c.Batches
	case "Tags":
		return c.Tags
	case "Branches":
		return c.Branches
	case "Transactions":
		return c.Transactions
	case "ManagedData":
		return c.ManagedData
	case "SchemaEvolution":
		return c.SchemaEvolution
	case "ScalarIndexes":
		return c.ScalarIndexes
	case "VectorSearch":
		return c.VectorSearch
	case "VectorIndexes":
		return c.VectorIndexes
	case "FullTextSearch":
		return c.FullTextSearch
	case "Views":
		return c.Views
	case "BranchedData":
		return c.BranchedData
	case "VersionCleanup":
		return c.VersionCleanup
	case "Jobs":
		return c.Jobs
	case "Probe":
		return c.Probe
	case "LocationLocks":
		return c.LocationLocks
	case "VersionFinder":
		return c.VersionFinder
	case "DatasetIndexes":
		return c.DatasetIndexes
	}
	panic("conformance: unknown capability " + name)
}

// suite runs the cases of one Config.
type suite struct {
	cfg Config
}

// Run runs every group of the suite against cfg's targets, each group as a
// subtest of t. A group whose capabilities the target lacks is skipped (or,
// under the kit's Runner, reported as a gap).
func Run(t T, cfg Config) {
	t.Helper()
	if cfg.New == nil {
		t.Fatalf("conformance: Config.New is required")
	}
	s := &suite{cfg: cfg}
	for _, g := range groups {
		if len(cfg.Groups) > 0 && !slices.Contains(cfg.Groups, g.Name) {
			continue
		}
		Subtest(t, g.Name, func(t T) {
			var missing []string
			for _, n := range g.Needs {
				if !cfg.Capabilities.has(n) {
					missing = append(missing, n)
				}
			}
			if len(missing) > 0 {
				Gap(t, "the target does not claim %s", strings.Join(missing, ", "))
			}
			g.run(s, t)
		})
	}
}

// target returns a fresh target for one case.
func (s *suite) target(t T) store.Catalog {
	t.Helper()
	tg := s.cfg.New(t)
	if tg == nil {
		t.Fatalf("conformance: Config.New returned no target")
	}
	return tg
}

// dataTarget returns a fresh target that keeps rows.
func (s *suite) dataTarget(t T) DataTarget {
	t.Helper()
	tg := s.target(t)
	dt, ok := tg.(DataTarget)
	if !ok {
		t.Fatalf("conformance: the target claims ManagedData but %T does not implement DataTarget", tg)
	}
	return dt
}

// implementing returns tg as an I, and fails the case when the target
// claims the capability named capability but does not implement I.
func implementing[I any](t T, tg store.Catalog, capability string) I {
	t.Helper()
	x, ok := tg.(I)
	if !ok {
		var want *I
		t.Fatalf("conformance: the target claims %s but %T does not implement %T", capability, tg, want)
	}
	return x
}

// skipShared skips a case that would touch the root of a shared catalog.
func (s *suite) skipShared(t T) {
	t.Helper()
	if s.cfg.Shared {
		t.Skipf("about the root namespace itself, which a shared catalog's conformance run leaves alone")
	}
}

// Gap ends the case as a capability gap: a skip under go test, a
// gap under the kit's Runner.
func Gap(t T, format string, args ...any) {
	t.Helper()
	if g, ok := t.(gapReporter); ok {
		g.Unsupported(format, args...)
		return
	}
	t.Skipf("unsupported: "+format, args...)
}

// failUnexpected ends the case for an error it did not expect. An
// Unsupported (0) error is a capability gap under the kit's Runner.
func failUnexpected(t T, err error) {
	t.Helper()
	if _, ok := t.(gapReporter); ok && store.ErrorCode(err) == store.CodeUnsupported {
		Gap(t, "%v", err)
	}
	t.Fatalf("unexpected error: %v", err)
}

// wantCode fails the test unless err carries the Lance code want.
func wantCode(t T, err error, want store.Code) {
	t.Helper()
	if err == nil {
		t.Fatalf("got no error, want code %d (%s)", want, want)
	}
	got := store.ErrorCode(err)
	if got != want && want != store.CodeUnsupported {
		if _, ok := t.(gapReporter); ok && got == store.CodeUnsupported {
			Gap(t, "%v", err)
		}
	}
	if got != want {
		t.Fatalf("got code %d (%s): %v; want code %d (%s)", got, got, err, want, want)
	}
	var se *store.Error
	if !errors.As(err, &se) {
		t.Fatalf("error %v does not wrap a *store.Error", err)
	}
}

// noErr fails the test if err is not nil.
func noErr(t T, err error) {
	t.Helper()
	if err != nil {
		failUnexpected(t, err)
	}
}

// must returns a function that fails the test if err is not nil and
// otherwise returns v: must(call())(t).
func must[V any](v V, err error) func(t T) V {
	return func(t T) V {
		t.Helper()
		noErr(t, err)
		return v
	}
}

// must3 is must for calls that also return a transaction id.
func must3[V any](v V, _ string, err error) func(t T) V {
	return must(v, err)
}

func ctx(t T) context.Context { return t.Context() }

// Empty drops every namespace and every table of tg's catalog, so that one
// backend can serve case after case as a fresh one (Config.New may call
// it). It returns the first error of the listing or the drops.
func Empty(ctx context.Context, tg store.Catalog) error {
	for {
		names, _, err := tg.ListNamespaces(ctx, []string{}, store.Page{})
		if err != nil {
			return err
		}
		tables, _, err := tg.ListTables(ctx, []string{}, true, store.Page{})
		if err != nil {
			return err
		}
		if len(names) == 0 && len(tables) == 0 {
			return nil
		}
		for _, n := range names {
			if _, _, err := tg.DropNamespace(ctx, []string{n}, store.DropSkip, store.DropCascade); err != nil {
				return err
			}
		}
		for _, n := range tables {
			if _, _, err := tg.DropTable(ctx, []string{n}); err != nil {
				return err
			}
		}
	}
}
