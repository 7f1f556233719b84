package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"strconv"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/lancens/lancens/store"
)

// Materialized views are managed tables with a record in
// materialized_views: the source table (by uuid, so that a rename keeps the
// view), the query a refresh runs over it, and the source version the
// view's rows reflect. A view whose source_query lancens does not run has
// source_uuid '' and query null, and is never refreshed. A refresh is a queued job (JobRefreshView): it runs
// the query in one read, then replaces the view's rows in one write that
// also records the source version, as one new version of the view. Only
// refreshes write a view.

var _ store.Views = (*DB)(nil)

// CreateView implements store.Views.
func (db *DB) CreateView(ctx context.Context, id []string, def store.ViewDefinition, refresh bool) (*store.Table, store.WriteResult, string, error) {
	if err := store.CheckViewKind(def.Kind); err != nil {
		return nil, store.WriteResult{}, "", err
	}
	if def.Schema == nil {
		return nil, store.WriteResult{}, "", store.Errorf(store.CodeInvalidInput, "a materialized view needs its output schema")
	}
	schema, err := storedSchema(def.Schema)
	if err != nil {
		return nil, store.WriteResult{}, "", err
	}
	layout, defs, next := planColumns(schema.Fields(), 0)
	c := &newTable{id: id, nt: store.NewTable{Mode: store.ModeCreate, Data: store.Data{Schema: schema}},
		ts: &tableSchema{version: 1, arrow: schema, fields: layout}, defs: defs, next: next}
	// A view lancens does not run keeps no source and the query null.
	source, queryJSON := "", []byte("null")
	if def.Source != nil {
		q := def.Query
		q.Version = nil
		if source, err = db.checkViewQuery(ctx, def.Source, q, c.ts); err != nil {
			return nil, store.WriteResult{}, "", err
		}
		if queryJSON, err = json.Marshal(q); err != nil {
			return nil, store.WriteResult{}, "", internal("encode view query", err)
		}
	} else {
		refresh = false
	}
	empty, err := db.staging.rows(c.ts, replayOf(nil), true).next()
	if err != nil {
		return nil, store.WriteResult{}, "", err
	}
	var out *store.Table
	var res store.WriteResult
	var jobID string
	err = db.write(ctx, func(tx *Tx) error {
		if source != "" {
			if _, err := findManagedByUUID(ctx, tx, source); err != nil {
				return err // dropped or replaced since it was checked
			}
		}
		if out, res, err = c.create(ctx, tx, empty, nil); err != nil {
			return err
		}
		t, err := findTable(ctx, tx, id)
		if err != nil {
			return err
		}
		if _, err := tx.ExecCached(ctx, `INSERT INTO materialized_views (table_id, kind, source_uuid, source_query, query, auto_refresh)
			VALUES (?, ?, ?, ?, ?, ?)`, t.rowID, def.Kind, source, def.SourceQuery, string(queryJSON), def.AutoRefresh); err != nil {
			return internal("create materialized view", err)
		}
		if refresh {
			jobID, err = queueRefresh(ctx, tx, t, nil)
		}
		return err
	})
	if err != nil {
		return nil, store.WriteResult{}, "", err
	}
	return out, res, jobID, nil
}

// checkViewQuery checks that query q can run on managed table source and
// that its rows fit view schema ts, and returns the source's uuid. A scan
// is planned, a search run. Returns TableNotFound (4), InvalidTableState
// (19), TableSchemaValidationError (20) and the query's errors.
func (db *DB) checkViewQuery(ctx context.Context, source []string, q store.Query, ts *tableSchema) (string, error) {
	var uuid string
	var out *arrow.Schema
	err := db.read(ctx, func(tx *Tx) error {
		t, err := findManaged(ctx, tx, source)
		if err != nil {
			return err
		}
		uuid = t.UUID
		if q.Vector != nil || q.Text != nil {
			return nil
		}
		pq, err := db.planQuery(ctx, tx, t, q)
		if err != nil {
			return err
		}
		out = pq.schema
		return nil
	})
	if err != nil {
		return "", err
	}
	if out == nil {
		res, err := db.Query(ctx, source, q)
		if err != nil {
			return "", err
		}
		out = res.Schema
	}
	return uuid, conformView(ts, out)
}

// conformView checks that rows of schema ds fill view schema ts: they can
// be written to it (conform), and every column of the view is among them.
// Returns TableSchemaValidationError (20) naming the first problem.
func conformView(ts *tableSchema, ds *arrow.Schema) error {
	if err := conform(ts, ds); err != nil {
		return err
	}
	for _, f := range ts.arrow.Fields() {
		if !ds.HasField(f.Name) {
			return store.Errorf(store.CodeTableSchemaValidationError, "the view's column %q is not in the rows of its query", f.Name)
		}
	}
	return nil
}

// findManagedByUUID returns the managed table with the given uuid (on
// main). Returns TableNotFound (4) when it is gone, InvalidTableState (19)
// when it keeps no rows in lancens.
func findManagedByUUID(ctx context.Context, tx *Tx, uuid string) (*tableRow, error) {
	id, err := tableIDByUUID(ctx, tx, uuid)
	if err != nil {
		return nil, err
	}
	return findManaged(onBranch(ctx, ""), tx, id)
}

// findView returns the view definition of managed table t, nil when it is
// a plain table.
func findView(ctx context.Context, tx *Tx, t *tableRow) (*store.View, error) {
	v := &store.View{}
	var auto bool
	var srcVersion, refreshed sql.NullInt64
	err := tx.QueryRowCached(ctx, `SELECT kind, source_uuid, source_query, auto_refresh, source_version, refreshed_at
		FROM materialized_views WHERE table_id = ?`, t.rowID).Scan(&v.Kind, &v.SourceUUID, &v.SourceQuery, &auto, &srcVersion, &refreshed)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, internal("find materialized view", err)
	}
	v.AutoRefresh = auto
	if srcVersion.Valid {
		v.SourceVersion = &srcVersion.Int64
	}
	if refreshed.Valid {
		v.RefreshedAt = msTime(refreshed.Int64)
	}
	src, err := tableIDByUUID(ctx, tx, v.SourceUUID)
	switch {
	case err == nil:
		v.Source = src
	case !errors.Is(err, store.ErrTableNotFound):
		return nil, err
	}
	return v, nil
}

// refuseViewWrite returns InvalidTableState (19) when t is a materialized
// view: only its refreshes write it.
func refuseViewWrite(ctx context.Context, tx *Tx, t *tableRow) error {
	var n int
	if err := tx.QueryRowCached(ctx, `SELECT count(*) FROM materialized_views WHERE table_id = ?`, t.rowID).Scan(&n); err != nil {
		return internal("find materialized view", err)
	}
	if n > 0 {
		return store.Errorf(store.CodeInvalidTableState,
			"table %s is a materialized view: its rows change only when it is refreshed (RefreshMaterializedView)", displayID(t.ID))
	}
	return nil
}

// QueueRefresh implements store.Views.
func (db *DB) QueueRefresh(ctx context.Context, id []string, sourceVersion *int64) (string, error) {
	var txID string
	err := db.write(ctx, func(tx *Tx) error {
		t, err := findTable(ctx, tx, id)
		if err != nil {
			return err
		}
		v := (*store.View)(nil)
		if t.Kind == store.Managed {
			if v, err = findView(ctx, tx, t); err != nil {
				return err
			}
		}
		if v == nil {
			return store.Errorf(store.CodeInvalidInput, "table %s is not a materialized view", displayID(id))
		}
		if v.SourceUUID == "" {
			return errNotRunnable(id)
		}
		src, err := findManagedByUUID(ctx, tx, v.SourceUUID)
		if errors.Is(err, store.ErrTableNotFound) {
			return store.Errorf(store.CodeTableNotFound, "the source table of materialized view %s was dropped", displayID(id))
		}
		if err != nil {
			return err
		}
		if sourceVersion != nil {
			if _, err := getVersion(ctx, tx, src, "", *sourceVersion); err != nil {
				return err
			}
		}
		txID, err = queueRefresh(ctx, tx, t, sourceVersion)
		return err
	})
	return txID, err
}

// errNotRunnable is the error of refreshing view id, whose source_query
// lancens does not run: Unsupported (0), naming the forms it runs.
func errNotRunnable(id []string) error {
	return store.Errorf(store.CodeUnsupported, "materialized view %s keeps a source_query lancens does not run, so lancens cannot refresh it; "+
		"it runs %s", displayID(id), store.RunnableViewQueries)
}

// queueRefresh queues a refresh of view t from sourceVersion (nil: the
// latest) and returns the job's transaction id.
func queueRefresh(ctx context.Context, tx *Tx, t *tableRow, sourceVersion *int64) (string, error) {
	props := map[string]string{}
	if sourceVersion != nil {
		props["source_version"] = strconv.FormatInt(*sourceVersion, 10)
	}
	return recordTx(ctx, tx, store.JobRefreshView, &t.Table, store.TxQueued, props, store.RefreshView{ViewUUID: t.UUID, SourceVersion: sourceVersion})
}

// queueAutoRefreshes queues a refresh of every view of source t that asked
// for automatic refreshes and has none queued yet.
func queueAutoRefreshes(ctx context.Context, tx *Tx, t *tableRow) error {
	uuids, err := queryStrings(ctx, tx, `SELECT v.uuid FROM materialized_views m JOIN tables v ON v.id = m.table_id
		WHERE m.source_uuid = ? AND m.auto_refresh = 1 AND NOT EXISTS (SELECT 1 FROM transactions x
			WHERE x.status = 'Queued' AND x.kind = ? AND x.table_uuid = v.uuid)`, t.UUID, store.JobRefreshView)
	if err != nil {
		return err
	}
	for _, uuid := range uuids {
		view, err := findManagedByUUID(ctx, tx, uuid)
		if err != nil {
			return err
		}
		if _, err := queueRefresh(ctx, tx, view, nil); err != nil {
			return err
		}
	}
	return nil
}

// RefreshView implements store.Views.
func (db *DB) RefreshView(ctx context.Context, job store.RefreshView) (store.WriteResult, error) {
	ctx = onBranch(ctx, "")
	for {
		var viewID, sourceID []string
		var ts *tableSchema
		var q store.Query
		err := db.read(ctx, func(tx *Tx) error {
			t, err := findManagedByUUID(ctx, tx, job.ViewUUID)
			if err != nil {
				return err
			}
			viewID = t.ID
			if _, ts, err = schemaAt(ctx, tx, t, nil); err != nil {
				return err
			}
			var srcUUID, queryJSON string
			err = tx.QueryRowCached(ctx, `SELECT source_uuid, query FROM materialized_views WHERE table_id = ?`, t.rowID).Scan(&srcUUID, &queryJSON)
			if errors.Is(err, sql.ErrNoRows) {
				return store.Errorf(store.CodeInvalidInput, "table %s is no longer a materialized view", displayID(t.ID))
			}
			if err != nil {
				return internal("find materialized view", err)
			}
			if srcUUID == "" {
				return errNotRunnable(t.ID)
			}
			if err := json.Unmarshal([]byte(queryJSON), &q); err != nil {
				return internal("decode view query", err)
			}
			sourceID, err = tableIDByUUID(ctx, tx, srcUUID)
			if errors.Is(err, store.ErrTableNotFound) {
				return store.Errorf(store.CodeTableNotFound, "the source table of materialized view %s was dropped", displayID(t.ID))
			}
			return err
		})
		if err != nil {
			return store.WriteResult{}, err
		}
		q.Version = job.SourceVersion
		rows, err := db.Query(ctx, sourceID, q)
		if err != nil {
			return store.WriteResult{}, err
		}
		if err := conformView(ts, rows.Schema); err != nil {
			return store.WriteResult{}, err
		}
		w := &rowsWrite{overwrite: true, ts: ts, op: "RefreshMaterializedView", after: func(ctx context.Context, tx *Tx, t *tableRow) error {
			_, err := tx.ExecCached(ctx, `UPDATE materialized_views SET source_version = ?, refreshed_at = ? WHERE table_id = ?`,
				rows.Version, tx.Now().UnixMilli(), t.rowID)
			if err != nil {
				return internal("record refresh", err)
			}
			return nil
		}}
		res, err := db.refreshRows(ctx, viewID, job.ViewUUID, ts, w, store.NewData(rows.Schema, rows.Batches...))
		if !errors.Is(err, errStale) {
			return res, err
		}
		if err := ctx.Err(); err != nil {
			return store.WriteResult{}, err
		}
	}
}

// refreshRows replaces the rows of view id (which must still have the
// given uuid and schema ts, or errStale) with the query's rows in d, as w
// says.
func (db *DB) refreshRows(ctx context.Context, id []string, uuid string, ts *tableSchema, w *rowsWrite, d store.Data) (store.WriteResult, error) {
	rows := replayOf(d.Batches)
	defer rows.settle()
	src := db.staging.rows(ts, rows, true)
	defer src.close()
	first, err := src.next()
	if err != nil {
		return store.WriteResult{}, err
	}
	defer first.release()
	return db.writeRows(ctx, id, uuid, ts.version, w, first, src)
}
