// Package conformance is one behavioural test suite for the Lance namespace
// catalog, run against the SQLite store directly and against the full HTTP
// path (server + generated client + client package), so both agree on every
// result and every error code.
package conformance

import (
	"context"
	"errors"
	"testing"

	"github.com/lancens/lancens/store"
)

// Target is what the suite exercises.
type Target interface {
	store.Namespaces
	store.Tables
	store.Versions
	store.Batches
	store.Tags
	store.Branches
	store.Transactions
}

// NewTarget returns a fresh, empty target for one test.
type NewTarget func(t *testing.T) Target

// Run runs every conformance test against targets made by newTarget.
func Run(t *testing.T, newTarget NewTarget) {
	t.Run("Namespaces", func(t *testing.T) { runNamespaces(t, newTarget) })
	t.Run("Tables", func(t *testing.T) { runTables(t, newTarget) })
	t.Run("Versions", func(t *testing.T) { runVersions(t, newTarget) })
	t.Run("Batches", func(t *testing.T) { runBatches(t, newTarget) })
	t.Run("Tags", func(t *testing.T) { runTags(t, newTarget) })
	t.Run("Branches", func(t *testing.T) { runBranches(t, newTarget) })
	t.Run("Transactions", func(t *testing.T) { runTransactions(t, newTarget) })
}

// wantCode fails the test unless err carries the Lance code want.
func wantCode(t *testing.T, err error, want store.Code) {
	t.Helper()
	if err == nil {
		t.Fatalf("got no error, want code %d (%s)", want, want)
	}
	if got := store.ErrorCode(err); got != want {
		t.Fatalf("got code %d (%s): %v; want code %d (%s)", got, got, err, want, want)
	}
	var se *store.Error
	if !errors.As(err, &se) {
		t.Fatalf("error %v does not wrap a *store.Error", err)
	}
}

// must returns a function that fails the test if err is not nil and
// otherwise returns v: must(call())(t).
func must[T any](v T, err error) func(t *testing.T) T {
	return func(t *testing.T) T {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
}

func ctx(t *testing.T) context.Context { return t.Context() }
