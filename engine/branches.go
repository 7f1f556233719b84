package engine

import (
	"context"
	"errors"
	"fmt"

	"github.com/lancens/lancens/lance/blob"
	"github.com/lancens/lancens/lance/table"
	"github.com/lancens/lancens/store"
)

// Branches. The catalog's CreateBranch records a branch (its parent and
// the version it forks from) and nothing else: the branch has no version
// yet. Its files are Lance's, below tree/<branch>/ in the table's root: a
// branch file in _refs/branches/ and the branch's own versions, the first
// of which (the fork version, numbered as the parent's version it forks
// from) is a shallow clone of that version, its data files reached through
// a base path to the parent's root (lance/table's CreateBranch). The
// engine makes them the first time it reads or writes the branch
// (forkBranch), committing the fork version through the catalog like any
// other, so that a branch a Lance client made itself (its fork version
// committed in namespace mode) is served as it is. Writes on a branch
// then make versions of it alone; cleanup keeps the parent's files that a
// branch's versions refer to.

// forkBranch makes the files of branch r.branch, which the catalog has
// but which has no version yet, and records its fork version. It returns
// TableBranchNotFound (22) when the branch is gone, the errors of opening
// the parent's version, and InvalidTableState (19) when writing or
// committing the fork fails.
func (e *Engine) forkBranch(ctx context.Context, r *tableRef) error {
	b, err := e.findBranch(ctx, r.id, r.branch)
	if err != nil {
		return err
	}
	parent := *r
	parent.branch = b.ParentBranch
	s, err := e.open(ctx, &parent, &b.ParentVersion)
	if err != nil {
		return err
	}
	unlock := e.writers.lock(r.t.UUID)
	defer unlock()
	for attempt := 0; ; attempt++ {
		if _, err := e.cat.DescribeVersion(ctx, r.id, r.branch, nil); !errors.Is(err, store.ErrTableVersionNotFound) {
			return err // made meanwhile (nil), or gone
		}
		c := &committer{e: e, ref: r}
		_, err := s.ds.WithOptions(e.writeOptions(r, c)).CreateBranch(ctx, r.branch)
		if !errors.Is(err, table.ErrExists) || attempt > 0 {
			return dataError(r.id, err)
		}
		// Another process made it meanwhile, or files of a branch of this
		// name that did not get its fork recorded are in the way.
		if err := e.removeStaleBranch(ctx, r, s.ds); err != nil {
			return err
		}
	}
}

// findBranch returns branch name of table id as the catalog records it.
// Returns TableBranchNotFound (22).
func (e *Engine) findBranch(ctx context.Context, id []string, name string) (*store.Branch, error) {
	page := store.Page{}
	for {
		bs, next, err := e.cat.ListBranches(ctx, id, page)
		if err != nil {
			return nil, err
		}
		for i := range bs {
			if bs[i].Name == name {
				return &bs[i], nil
			}
		}
		if next == "" {
			return nil, store.Errorf(store.CodeTableBranchNotFound, "branch %q of table %s not found", name, displayID(id))
		}
		page.Token = next
	}
}

// removeStaleBranch removes, under the table's commit lock, the files of
// branch r.branch when the catalog still records no version of it: what a
// fork cut short or a deleted branch left behind.
func (e *Engine) removeStaleBranch(ctx context.Context, r *tableRef, ds *table.Dataset) error {
	unlock, err := e.commits.Lock(ctx, r.t.Location)
	if err != nil {
		return err
	}
	defer unlock()
	if _, err := e.cat.DescribeVersion(ctx, r.id, r.branch, nil); !errors.Is(err, store.ErrTableVersionNotFound) {
		return err
	}
	return e.deleteBranchFiles(ctx, r, ds, r.branch)
}

// deleteBranchFiles removes the files of branch name of the table at r,
// ds being any version of it: its branch file and what is below
// tree/<name>/ (lance/table's DeleteBranch), or, with no branch file, the
// manifests of a fork cut short.
func (e *Engine) deleteBranchFiles(ctx context.Context, r *tableRef, ds *table.Dataset, name string) error {
	err := ds.DeleteBranch(ctx, name)
	if !errors.Is(err, table.ErrNotFound) {
		return dataError(r.id, err)
	}
	old, err := table.OpenBranch(ctx, r.root, name, e.readOptions(r))
	if errors.Is(err, table.ErrNotFound) {
		return nil
	}
	if err != nil {
		return dataError(r.id, err)
	}
	versions, err := old.Versions(ctx)
	if err != nil {
		return dataError(r.id, err)
	}
	st := blob.Sub(r.root, branchPrefix(name))
	for _, v := range versions {
		if err := st.Delete(ctx, v.Path); err != nil && !errors.Is(err, blob.ErrNotFound) {
			return dataError(r.id, err)
		}
	}
	return nil
}

// DeleteBranch implements store.Branches: the catalog deletes the branch
// (see its errors), then its files go. A failure to remove them is logged,
// not returned: the branch is gone for every reader, and a branch made
// again under its name clears what is left before its fork.
func (b Backend) DeleteBranch(ctx context.Context, id []string, name string) (string, error) {
	txID, err := b.Backend.DeleteBranch(ctx, id, name)
	if err != nil {
		return "", err
	}
	if err := b.Engine.removeBranch(ctx, id, name); err != nil {
		b.Engine.log.Warn("remove the files of a deleted branch", "table", displayID(id), "branch", name, "error", err)
	}
	return txID, nil
}

// removeBranch removes the files of branch name of table id, which the
// catalog no longer has, under the table's commit lock, unless a branch of
// that name was made again meanwhile.
func (e *Engine) removeBranch(ctx context.Context, id []string, name string) error {
	main := &Engine{shared: e.shared}
	r, err := main.findData(ctx, id)
	if err != nil {
		return nil // nothing of ours to remove
	}
	unlock, err := e.commits.Lock(ctx, r.t.Location)
	if err != nil {
		return err
	}
	defer unlock()
	if _, err := e.findBranch(ctx, id, name); err == nil || !errors.Is(err, store.ErrTableBranchNotFound) {
		return err
	}
	ds, err := table.OpenBranch(ctx, r.root, "", e.readOptions(r))
	if err != nil {
		return fmt.Errorf("open the table: %w", err)
	}
	return e.deleteBranchFiles(ctx, r, ds, name)
}
