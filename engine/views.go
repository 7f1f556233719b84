package engine

import (
	"context"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/lancens/lancens/internal/memcache"
	"github.com/lancens/lancens/store"
)

// Materialized views. A view is a table like any other, a Lance dataset
// at a location the warehouse allocates, whose definition the catalog
// keeps beside its entry (store.EngineCatalog; the record is made in the
// transaction that declares the table with its empty first version). A
// refresh is a queued job (store.JobRefreshView): it runs the view's query
// over the main branch of its source, at the version the job names or the
// latest, and replaces the view's rows with the answer in one new version,
// an Overwrite, whose commit also records the source version it read. So
// the view's rows and the source version they reflect never disagree.
// Only refreshes (and housekeeping: optimize) write a view; the other
// writes answer InvalidTableState (19).

// CreateView implements store.Views. The view's query is checked against
// its source before anything is written: a scan is planned, a search run.
func (e *Engine) CreateView(ctx context.Context, id []string, def store.ViewDefinition, refresh bool) (*store.Table, store.WriteResult, string, error) {
	if err := store.CheckViewKind(def.Kind); err != nil {
		return nil, store.WriteResult{}, "", err
	}
	if def.Schema == nil {
		return nil, store.WriteResult{}, "", store.Errorf(store.CodeInvalidInput, "a materialized view needs its output schema")
	}
	tbl, ls, err := newTableSchema(def.Schema)
	if err != nil {
		return nil, store.WriteResult{}, "", err
	}
	main := &Engine{shared: e.shared}
	rec := &store.ViewRecord{Kind: def.Kind, SourceQuery: def.SourceQuery, AutoRefresh: def.AutoRefresh}
	if def.Source != nil {
		src, err := main.findData(ctx, def.Source)
		if err != nil {
			return nil, store.WriteResult{}, "", err
		}
		q := def.Query
		q.Version = nil
		rows, err := main.querySchema(ctx, src, q)
		if err != nil {
			return nil, store.WriteResult{}, "", err
		}
		if err := conformView(tbl, rows); err != nil {
			return nil, store.WriteResult{}, "", err
		}
		rec.SourceUUID, rec.Query = src.t.UUID, &q
	} else {
		refresh = false
	}
	conf, err := newConformer(tbl, tbl)
	if err != nil {
		return nil, store.WriteResult{}, "", err
	}
	t, res, err := main.createNew(ctx, id, store.NewTable{Mode: store.ModeCreate, Data: store.Data{Schema: tbl}}, ls, conf, rec)
	if err != nil {
		return nil, store.WriteResult{}, "", err
	}
	var jobID string
	if refresh {
		if jobID, err = e.cat.QueueViewRefresh(ctx, t.UUID, nil); err != nil {
			return nil, store.WriteResult{}, "", err
		}
	}
	return t, res, jobID, nil
}

// querySchema returns the schema of the rows query q answers on table r:
// a scan is planned, a search run. It returns the query's errors.
func (e *Engine) querySchema(ctx context.Context, r *tableRef, q store.Query) (*arrow.Schema, error) {
	if q.Vector != nil || q.Text != nil {
		res, err := e.Query(ctx, r.id, q)
		if err != nil {
			return nil, err
		}
		for _, b := range res.Batches {
			b.Release()
		}
		return res.Schema, nil
	}
	s, err := e.open(ctx, r, nil)
	if err != nil {
		return nil, err
	}
	p, err := e.reader(r, s).planScan(q)
	if err != nil {
		return nil, err
	}
	return p.outSchm, nil
}

// conformView checks that rows of schema rows fill a view of schema view:
// they can be written to it, and every column of the view is among them.
// It returns TableSchemaValidationError (20) naming the first problem.
func conformView(view, rows *arrow.Schema) error {
	if _, err := newConformer(view, rows); err != nil {
		return err
	}
	for _, f := range view.Fields() {
		if !rows.HasField(f.Name) {
			return store.Errorf(store.CodeTableSchemaValidationError, "the view's column %q is not in the rows of its query", f.Name)
		}
	}
	return nil
}

// QueueRefresh implements store.Views.
func (e *Engine) QueueRefresh(ctx context.Context, id []string, sourceVersion *int64) (string, error) {
	r, err := e.find(ctx, id)
	if err != nil {
		return "", err
	}
	return e.cat.QueueViewRefresh(ctx, r.t.UUID, sourceVersion)
}

// RefreshView implements store.Views. It returns, besides the errors the
// interface names, Unsupported (0) for a view whose source_query lancens
// does not run, InvalidInput (13) for a table that is no longer a view,
// TableSchemaValidationError (20) when the source's rows no longer fit the
// view, and the errors of the query and of writing.
func (e *Engine) RefreshView(ctx context.Context, job store.RefreshView) (store.WriteResult, error) {
	main := &Engine{shared: e.shared}
	t, err := e.cat.DescribeTableByUUID(ctx, job.ViewUUID)
	if err != nil {
		return store.WriteResult{}, err
	}
	v, err := e.cat.DescribeView(ctx, job.ViewUUID)
	switch {
	case err != nil:
		return store.WriteResult{}, err
	case v == nil:
		return store.WriteResult{}, store.Errorf(store.CodeInvalidInput, "table %s is no longer a materialized view", displayID(t.ID))
	case v.SourceUUID == "" || v.Query == nil:
		return store.WriteResult{}, store.Errorf(store.CodeUnsupported, "materialized view %s keeps a source_query lancens does not run, "+
			"so lancens cannot refresh it; it runs %s", displayID(t.ID), store.RunnableViewQueries)
	case v.Source == nil:
		return store.WriteResult{}, store.Errorf(store.CodeTableNotFound, "the source table of materialized view %s was dropped", displayID(t.ID))
	}
	q := *v.Query
	q.Version = job.SourceVersion
	rows, err := main.Query(ctx, v.Source, q)
	if err != nil {
		return store.WriteResult{}, err
	}
	defer func() {
		for _, b := range rows.Batches {
			b.Release()
		}
	}()
	return retryConflicts(ctx, func() (store.WriteResult, error) {
		r, err := main.findData(ctx, t.ID)
		if err != nil {
			return store.WriteResult{}, err
		}
		unlock := e.writers.lock(r.t.UUID)
		defer unlock()
		s, err := main.open(ctx, r, nil)
		if err != nil {
			return store.WriteResult{}, err
		}
		if err := conformView(s.arrow, rows.Schema); err != nil {
			return store.WriteResult{}, err
		}
		conf, err := newConformer(s.arrow, rows.Schema)
		if err != nil {
			return store.WriteResult{}, err
		}
		var n int64
		ls := s.ds.Manifest().Schema
		frags, err := main.writeFragments(ctx, r.id, s.ds.Store(), ls, main.fileOptions(s.ds.Manifest()), conformed(conf, store.NewData(rows.Schema, rows.Batches...), &n))
		if err != nil {
			return store.WriteResult{}, err
		}
		c := &committer{e: main, ref: r, viewSource: &rows.Version}
		ds, err := s.ds.WithOptions(main.writeOptions(r, c)).Overwrite(ctx, ls, frags, nil)
		if err != nil {
			return store.WriteResult{}, dataError(r.id, err)
		}
		return store.WriteResult{Version: int64(ds.Version()), TransactionID: c.txID, Inserted: n}, nil
	})
}

// describeView returns the definition of table r when it is a
// materialized view, nil otherwise.
func (e *Engine) describeView(ctx context.Context, r *tableRef) (*store.View, error) {
	if view, err := e.isView(ctx, r); err != nil || !view {
		return nil, err
	}
	return e.cat.DescribeView(ctx, r.t.UUID)
}

// refuseView returns InvalidTableState (19) when table r is a
// materialized view: only its refreshes write it.
func (e *Engine) refuseView(ctx context.Context, r *tableRef) error {
	view, err := e.isView(ctx, r)
	if err != nil || !view {
		return err
	}
	return store.Errorf(store.CodeInvalidTableState,
		"table %s is a materialized view: its rows change only when it is refreshed (RefreshMaterializedView)", displayID(r.id))
}

// isView reports whether table r is a materialized view, from the cache:
// a table is made a view when it is declared, and stays one.
func (e *Engine) isView(ctx context.Context, r *tableRef) (bool, error) {
	val, err := e.cache.Get(ctx, r.cacheKey()+"view", func() (memcache.Value, error) {
		v, err := e.cat.DescribeView(ctx, r.t.UUID)
		return viewFlag(v != nil), err
	})
	if err != nil {
		return false, err
	}
	return bool(val.(viewFlag)), nil
}

// viewFlag is whether a table is a view, as the cache holds it.
type viewFlag bool

// CacheBytes implements memcache.Value.
func (viewFlag) CacheBytes() int64 { return 64 }
