package engine

import (
	"context"
	"errors"
	"fmt"

	"github.com/lancens/lancens/lance/file"
	"github.com/lancens/lancens/lance/schema"
	"github.com/lancens/lancens/lance/table"
	"github.com/lancens/lancens/store"
	"github.com/lancens/lancens/warehouse"
)

// CreateTable implements store.ManagedData. A table the catalog does not
// have gets a location in the warehouse, where its dataset is written;
// the catalog then declares the table and records its first version in
// one transaction (see committer), so a failed create leaves no table. A
// declared table is materialised at its location. It acts on main
// whatever the engine's branch.
func (e *Engine) CreateTable(ctx context.Context, id []string, nt store.NewTable) (*store.Table, store.WriteResult, error) {
	tbl, ls, err := newTableSchema(nt.Data.Schema)
	if err != nil {
		return nil, store.WriteResult{}, err
	}
	conf, err := newConformer(tbl, nt.Data.Schema)
	if err != nil {
		return nil, store.WriteResult{}, err
	}
	main := &Engine{shared: e.shared}
	existing, err := main.find(ctx, id)
	switch {
	case errors.Is(err, store.ErrTableNotFound):
		return main.createNew(ctx, id, nt, ls, conf, nil)
	case err != nil:
		return nil, store.WriteResult{}, err
	case existing.t.Declared:
		res, err := main.materialise(ctx, existing, ls, conf, nt.Data)
		return existing.t, res, err
	case nt.Mode == store.ModeExistOk:
		v, err := main.latest(ctx, existing)
		return existing.t, store.WriteResult{Version: int64(v)}, err
	case nt.Mode == store.ModeOverwrite:
		if err := main.refuseView(ctx, existing); err != nil {
			return nil, store.WriteResult{}, err
		}
		res, err := main.overwrite(ctx, existing, ls, conf, nt.Data)
		return existing.t, res, err
	}
	return nil, store.WriteResult{}, store.Errorf(store.CodeTableAlreadyExists, "table %s already exists", displayID(id))
}

// createNew writes the dataset of a new table at a location the warehouse
// allocates and declares the table with its first version, as the
// materialized view view when it is not nil. It returns NamespaceNotFound
// (1) and TableAlreadyExists (5) from the catalog (the files written are
// removed then), and the errors of writing.
func (e *Engine) createNew(ctx context.Context, id []string, nt store.NewTable, ls *schema.Schema, conf *conformer, view *store.ViewRecord) (*store.Table, store.WriteResult, error) {
	loc, err := e.wh.Allocate(id[:len(id)-1], id[len(id)-1])
	if err != nil {
		return nil, store.WriteResult{}, err
	}
	root, ok, err := e.wh.Blobs(loc)
	if err != nil {
		return nil, store.WriteResult{}, err
	}
	if !ok {
		return nil, store.WriteResult{}, store.Errorf(store.CodeInternal, "the warehouse allocated %s, which it does not reach", loc)
	}
	_, local := warehouse.LocalPath(loc)
	r := &tableRef{id: id, t: &store.Table{ID: id, Location: loc, ManagedVersioning: true, Owned: true}, root: root, local: local}
	c := &committer{e: e, ref: r, declare: &store.TableDeclaration{Location: loc, Owned: true, Properties: nt.Properties,
		StorageOptions: nt.StorageOptions, View: view}}
	res, err := e.writeFirst(ctx, r, c, ls, conf, nt.Data)
	if err != nil {
		e.discardLocation(ctx, id, loc)
		return nil, store.WriteResult{}, err
	}
	return r.t, res, nil
}

// discardLocation removes the files of a create that failed, unless the
// catalog has the table at that location after all (a commit whose answer
// was lost): nothing else refers to a location the warehouse allocated.
func (e *Engine) discardLocation(ctx context.Context, id []string, loc string) {
	ctx = context.WithoutCancel(ctx)
	if t, err := e.cat.DescribeTable(ctx, id); err == nil && t.Location == loc || err != nil && !errors.Is(err, store.ErrTableNotFound) && !errors.Is(err, store.ErrNamespaceNotFound) {
		return
	}
	if err := e.wh.Remove(ctx, loc); err != nil {
		e.log.Warn("remove the files of a failed create", "table", displayID(id), "location", loc, "error", err)
	}
}

// refuseDeclaredBranch returns InvalidTableState (19) when e writes on a
// branch and r is declared without data: such a table has no branch yet,
// and its first rows make main's first version, which a write on a
// branch must not do. It returns nil on main.
func (e *Engine) refuseDeclaredBranch(r *tableRef) error {
	if e.branch == "" {
		return nil
	}
	return notDataTable(r.t, fmt.Sprintf("is declared but has no data yet, so no branch %q; create it or insert into it first", e.branch))
}

// materialise writes the first version of a table declared without data,
// at its location.
// It takes no lock: the catalog records version 1 once, and a second
// materialisation of the table loses with TableAlreadyExists (5).
func (e *Engine) materialise(ctx context.Context, r *tableRef, ls *schema.Schema, conf *conformer, d store.Data) (store.WriteResult, error) {
	return e.writeFirst(ctx, r, &committer{e: e, ref: r}, ls, conf, d)
}

// writeFirst writes version 1 of the table at r from the rows of d.
func (e *Engine) writeFirst(ctx context.Context, r *tableRef, c *committer, ls *schema.Schema, conf *conformer, d store.Data) (store.WriteResult, error) {
	ls = ls.Clone()
	if _, err := ls.AssignIDs(0); err != nil {
		return store.WriteResult{}, schemaError(err)
	}
	var rows int64
	frags, err := e.writeFragments(ctx, r.id, r.root, ls, e.fileOpts, conformed(conf, d, &rows))
	if err != nil {
		return store.WriteResult{}, err
	}
	version := e.fileOpts.Version
	if version == (file.Version{}) {
		version = file.V2_0
	}
	ds, err := table.Create(ctx, r.root, ls, frags, table.CreateOptions{Options: e.writeOptions(r, c),
		DataFormat: table.DataFormat{FileFormat: "lance", Version: version.String()}})
	if errors.Is(err, table.ErrExists) {
		return store.WriteResult{}, store.Errorf(store.CodeTableAlreadyExists, "table %s already has a dataset at %s", displayID(r.id), r.t.Location)
	}
	if err != nil {
		return store.WriteResult{}, writeError(r.id, err)
	}
	return store.WriteResult{Version: int64(ds.Version()), TransactionID: c.txID, Inserted: rows}, nil
}

// overwrite replaces the rows and the schema of table r with those of d,
// as a new version.
// The rows are written before the table's write lock is taken (a client's
// upload must not hold up the table's other writers).
func (e *Engine) overwrite(ctx context.Context, r *tableRef, ls *schema.Schema, conf *conformer, d store.Data) (store.WriteResult, error) {
	s, err := e.open(ctx, r, nil)
	if err != nil {
		return store.WriteResult{}, err
	}
	ls = ls.Clone()
	if _, err := ls.AssignIDs(0); err != nil {
		return store.WriteResult{}, schemaError(err)
	}
	var rows int64
	frags, err := e.writeFragments(ctx, r.id, s.ds.Store(), ls, e.fileOptions(s.ds.Manifest()), conformed(conf, d, &rows))
	if err != nil {
		return store.WriteResult{}, err
	}
	unlock := e.writers.lock(r.t.UUID)
	defer unlock()
	c := &committer{e: e, ref: r}
	ds, err := s.ds.WithOptions(e.writeOptions(r, c)).Overwrite(ctx, ls, frags, nil)
	if err != nil {
		return store.WriteResult{}, writeError(r.id, err)
	}
	return store.WriteResult{Version: int64(ds.Version()), TransactionID: c.txID, Inserted: rows}, nil
}

// Insert implements store.ManagedData: the rows of d are appended to the
// table's branch, or replace its rows (its schema stays). A table declared
// without data is created from d. The data files are written before the
// table's write lock is taken, so appends to one table write in parallel
// and commit one after the other (an append is rebased on the appends
// committed meanwhile, as in Lance).
func (e *Engine) Insert(ctx context.Context, id []string, mode store.InsertMode, d store.Data) (store.WriteResult, error) {
	r, err := e.find(ctx, id)
	if err != nil {
		return store.WriteResult{}, err
	}
	if r.t.Declared {
		if err := e.refuseDeclaredBranch(r); err != nil {
			return store.WriteResult{}, err
		}
		tbl, ls, err := newTableSchema(d.Schema)
		if err != nil {
			return store.WriteResult{}, err
		}
		conf, err := newConformer(tbl, d.Schema)
		if err != nil {
			return store.WriteResult{}, err
		}
		return e.materialise(ctx, r, ls, conf, d)
	}
	if err := e.refuseView(ctx, r); err != nil {
		return store.WriteResult{}, err
	}
	s, err := e.open(ctx, r, nil)
	if err != nil {
		return store.WriteResult{}, err
	}
	conf, err := newConformer(s.arrow, d.Schema)
	if err != nil {
		return store.WriteResult{}, err
	}
	if mode == store.InsertOverwrite {
		res, err := e.overwrite(ctx, r, s.ds.Manifest().Schema, conf, d)
		if err == nil && e.branch == "" {
			e.rebuildUncovered(ctx, r)
		}
		return res, err
	}
	var rows int64
	frags, err := e.writeFragments(ctx, r.id, s.ds.Store(), s.ds.Manifest().Schema, e.fileOptions(s.ds.Manifest()), conformed(conf, d, &rows))
	if err != nil {
		return store.WriteResult{}, err
	}
	if rows == 0 {
		return store.WriteResult{Version: int64(s.ds.Version())}, nil
	}
	return e.commitAppend(ctx, r, s, frags, rows)
}

// commitAppend commits new fragments of rows on top of snapshot s (the
// version their schema is) under the table's write lock.
func (e *Engine) commitAppend(ctx context.Context, r *tableRef, s *snapshot, frags []*table.Fragment, rows int64) (store.WriteResult, error) {
	unlock := e.writers.lock(r.t.UUID)
	defer unlock()
	c := &committer{e: e, ref: r}
	ds, err := s.ds.WithOptions(e.writeOptions(r, c)).Append(ctx, frags)
	if err != nil {
		return store.WriteResult{}, writeError(r.id, err)
	}
	return store.WriteResult{Version: int64(ds.Version()), TransactionID: c.txID, Inserted: rows}, nil
}
