package main

import (
	"context"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
)

// The managed workers' branches: a worker forks a branch of its table
// from its latest version and inserts into it, so that the branch's
// versions (the fork, a shallow clone referring to main's files, and the
// inserts, with files of their own) live through kills, through main's
// later writes and through optimizes cleaning main up.

// maxBranches bounds the branches of one table.
const maxBranches = 3

// branchModel is what a branch of a managed table must hold.
type branchModel struct {
	rows map[int64]string // the rows of its latest version
	// pending are the rows an insert in flight at the kill makes.
	pending map[int64]string
}

// pendingBranch is a branch whose creation was in flight at the kill.
type pendingBranch struct {
	name string
	rows map[int64]string
}

// branchWrite forks a new branch from the latest version (while the table
// has fewer than maxBranches, and always for the first), or inserts a few
// rows into one. It reports whether the worker goes on: the write was
// acknowledged.
func (w *managedWorker) branchWrite(ctx context.Context, t *testing.T, c *crashConn, srv *crashServer, r *rand.Rand) bool {
	if w.branches == nil {
		w.branches = map[string]*branchModel{}
	}
	names := slices.Sorted(maps.Keys(w.branches))
	if len(names) == 0 || (len(names) < maxBranches && r.IntN(3) == 0) {
		name := fmt.Sprintf("b%d", w.seq)
		latest := w.latest
		_, err := c.c.CreateTableBranch(ctx, w.id, name, "", &latest)
		switch checkOutcome(t, srv, "branch create", err) {
		case acked:
			w.branches[name] = &branchModel{rows: maps.Clone(w.versions[latest])}
			w.acked("branch create", 1)
			return true
		case uncertain:
			w.pendingBranch = &pendingBranch{name: name, rows: maps.Clone(w.versions[latest])}
		}
		return false
	}
	name := names[r.IntN(len(names))]
	b := w.branches[name]
	add := map[int64]string{}
	for range 1 + r.IntN(10) {
		add[w.nextID] = fmt.Sprintf("%s row %d", name, w.nextID)
		w.nextID++
	}
	rows := maps.Clone(b.rows)
	maps.Copy(rows, add)
	_, err := c.c.OnBranch(name).Insert(ctx, w.id, managedSchema, []arrow.RecordBatch{managedRecord(add)}, "")
	switch checkOutcome(t, srv, "insert into branch "+name, err) {
	case acked:
		b.rows = rows
		w.acked("branch insert", 1)
		return true
	case uncertain:
		b.pending = rows
	}
	return false
}

// verifyBranches checks after a restart that every branch holds the rows
// of its last acknowledged write, or of the one in flight at the kill,
// whole, and resolves what was pending.
func (w *managedWorker) verifyBranches(t *testing.T, c *crashConn, st *crashStats) {
	if p := w.pendingBranch; p != nil {
		w.pendingBranch = nil
		st.uncertain++
		for b, err := range c.c.ListTableBranches(t.Context(), w.id) {
			if err != nil {
				t.Errorf("list the branches of %q: %v", w.id, err)
				return
			}
			if b.Name == p.name {
				st.applied++
				w.branches[p.name] = &branchModel{rows: p.rows}
			}
		}
	}
	for _, name := range slices.Sorted(maps.Keys(w.branches)) {
		b := w.branches[name]
		rows, err := queryRows(t, c.c.OnBranch(name), w.id, nil, "branch "+name)
		switch {
		case err != nil:
			t.Errorf("%q branch %s: %v", w.id, name, err)
		case b.pending != nil && maps.Equal(rows, b.pending):
			st.uncertain++
			st.applied++
			b.rows = b.pending
		case !maps.Equal(rows, b.rows):
			t.Errorf("%q branch %s holds %d rows, want %d (a write pending: %v): %s", w.id, name, len(rows), len(b.rows), b.pending != nil, diffRows(rows, b.rows))
		case b.pending != nil:
			st.uncertain++
		}
		b.pending = nil
	}
}
