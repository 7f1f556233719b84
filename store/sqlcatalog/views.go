package sqlcatalog

import (
	"context"
	"encoding/json"
	"strconv"

	"github.com/lancens/lancens/store"
)

// Materialized views. A view is a table with a row in materialized_views:
// its kind, its source_query as the client sent it, the source table (by
// uuid, so that a rename keeps the view; '' for a source_query lancens does
// not run), the query a refresh runs over it (JSON; null when it runs
// none), whether writes to the source queue refreshes on their own, and
// the source version its rows reflect with the time of that refresh. The
// row is made in the transaction that declares the view's table
// (TableDeclaration.View) and goes with the table's entry (ON DELETE
// CASCADE); a refresh's version commit records the source version
// (VersionCommit.ViewSourceVersion), so the view's rows and the version
// they reflect never disagree. A commit on the main branch of a source
// queues a refresh of each of its views that asked for automatic
// refreshes and has none queued yet, in the commit's transaction.

// findTableByUUID returns the table whose uuid is uuid, with its
// identifier. Returns TableNotFound (4).
func (o *Ops) findTableByUUID(ctx context.Context, tx Tx, uuid string) (*Table, error) {
	t, err := scanTable(tx.QueryRow(ctx, o.q.findTableByUUID, uuid))
	if o.d.NoRows(err) {
		return nil, store.Errorf(store.CodeTableNotFound, "table %s no longer exists", uuid)
	}
	if err != nil {
		return nil, internal("find table", err)
	}
	if t.ID, err = o.TableIDByUUID(ctx, tx, uuid); err != nil {
		return nil, err
	}
	return t, nil
}

// DescribeTableByUUID implements store.EngineCatalog.
func (c *Catalog) DescribeTableByUUID(ctx context.Context, uuid string) (*store.Table, error) {
	var out *store.Table
	err := c.db.Read(ctx, func(tx Tx) error {
		t, err := c.ops.findTableByUUID(ctx, tx, uuid)
		if err != nil {
			return err
		}
		out = &t.Table
		return nil
	})
	return out, err
}

// recordView records the table whose row id is rowID as materialized view
// v. Returns TableNotFound (4) when v's source is gone.
func (o *Ops) recordView(ctx context.Context, tx Tx, rowID int64, v *store.ViewRecord) error {
	if v.SourceUUID != "" {
		if _, err := o.findTableByUUID(ctx, tx, v.SourceUUID); err != nil {
			return store.Errorf(store.CodeTableNotFound, "the source table of the view was dropped")
		}
	}
	query, err := json.Marshal(v.Query)
	if err != nil {
		return internal("encode view query", err)
	}
	_, err = tx.Exec(ctx, `INSERT INTO materialized_views (table_id, kind, source_uuid, source_query, query, auto_refresh)
		VALUES (?, ?, ?, ?, ?, ?)`, rowID, v.Kind, v.SourceUUID, v.SourceQuery, string(query), v.AutoRefresh)
	return internal("record materialized view", err)
}

// findView returns the view record of the table whose row id is rowID,
// nil when the table is not a view.
func (o *Ops) findView(ctx context.Context, tx Tx, rowID int64) (*store.View, error) {
	v := &store.View{}
	var query string
	var srcVersion, refreshed *int64
	err := tx.QueryRow(ctx, `SELECT kind, source_uuid, source_query, query, auto_refresh, source_version, refreshed_at
		FROM materialized_views WHERE table_id = ?`, rowID).Scan(&v.Kind, &v.SourceUUID, &v.SourceQuery, &query, &v.AutoRefresh, &srcVersion, &refreshed)
	if o.d.NoRows(err) {
		return nil, nil
	}
	if err != nil {
		return nil, internal("find materialized view", err)
	}
	if err := json.Unmarshal([]byte(query), &v.Query); err != nil {
		return nil, internal("decode view query", err)
	}
	v.SourceVersion = srcVersion
	if refreshed != nil {
		v.RefreshedAt = msTime(*refreshed)
	}
	if v.SourceUUID != "" {
		src, err := o.TableIDByUUID(ctx, tx, v.SourceUUID)
		switch {
		case err == nil:
			v.Source = src
		case store.ErrorCode(err) != store.CodeTableNotFound:
			return nil, err
		}
	}
	return v, nil
}

// DescribeView implements store.EngineCatalog.
func (c *Catalog) DescribeView(ctx context.Context, uuid string) (*store.View, error) {
	var out *store.View
	err := c.db.Read(ctx, func(tx Tx) error {
		var rowID int64
		err := tx.QueryRow(ctx, `SELECT id FROM tables WHERE uuid = ?`, uuid).Scan(&rowID)
		if c.ops.d.NoRows(err) {
			return nil
		}
		if err != nil {
			return internal("find table", err)
		}
		out, err = c.ops.findView(ctx, tx, rowID)
		return err
	})
	return out, err
}

// QueueViewRefresh implements store.EngineCatalog.
func (c *Catalog) QueueViewRefresh(ctx context.Context, uuid string, sourceVersion *int64) (string, error) {
	var txID string
	err := c.db.Write(ctx, func(tx Tx) error {
		o := c.ops
		t, err := o.findTableByUUID(ctx, tx, uuid)
		if err != nil {
			return err
		}
		v, err := o.findView(ctx, tx, t.RowID)
		switch {
		case err != nil:
			return err
		case v == nil:
			return store.Errorf(store.CodeInvalidInput, "table %s is not a materialized view", DisplayID(t.ID))
		case v.SourceUUID == "":
			return store.Errorf(store.CodeUnsupported, "materialized view %s keeps a source_query lancens does not run, so lancens cannot refresh it; "+
				"it runs %s", DisplayID(t.ID), store.RunnableViewQueries)
		case v.Source == nil:
			return store.Errorf(store.CodeTableNotFound, "the source table of materialized view %s was dropped", DisplayID(t.ID))
		}
		if sourceVersion != nil {
			src, err := o.findTableByUUID(ctx, tx, v.SourceUUID)
			if err != nil {
				return err
			}
			if _, err := o.GetVersion(ctx, tx, src, "", *sourceVersion); err != nil {
				return err
			}
		}
		txID, err = o.queueRefresh(ctx, tx, &t.Table, sourceVersion)
		return err
	})
	return txID, err
}

// queueRefresh queues a refresh of view t from sourceVersion (nil: the
// latest) and returns the job's transaction id.
func (o *Ops) queueRefresh(ctx context.Context, tx Tx, t *store.Table, sourceVersion *int64) (string, error) {
	props := map[string]string{}
	if sourceVersion != nil {
		props["source_version"] = strconv.FormatInt(*sourceVersion, 10)
	}
	return o.RecordTx(ctx, tx, store.JobRefreshView, t, store.TxQueued, props, store.RefreshView{ViewUUID: t.UUID, SourceVersion: sourceVersion})
}

// viewCommitted records, in the transaction committing version vc of
// table t, what the version means to materialized views: a refresh's
// source version when t is a view, and a refresh queued for each view of
// t that follows its writes when vc is on t's main branch.
func (o *Ops) viewCommitted(ctx context.Context, tx Tx, t *Table, vc store.VersionCommit) error {
	if vc.ViewSourceVersion != nil {
		if _, err := tx.Exec(ctx, `UPDATE materialized_views SET source_version = ?, refreshed_at = ? WHERE table_id = ?`,
			*vc.ViewSourceVersion, tx.Now().UnixMilli(), t.RowID); err != nil {
			return internal("record refresh", err)
		}
	}
	if vc.Branch != "" {
		return nil
	}
	uuids, err := QueryStrings(ctx, tx, `SELECT v.uuid FROM materialized_views m JOIN tables v ON v.id = m.table_id
		WHERE m.source_uuid = ? AND m.auto_refresh AND NOT EXISTS (SELECT 1 FROM transactions x
			WHERE x.status = 'Queued' AND x.kind = ? AND x.table_uuid = v.uuid)`, t.UUID, store.JobRefreshView)
	if err != nil {
		return internal("find views to refresh", err)
	}
	for _, uuid := range uuids {
		view, err := o.findTableByUUID(ctx, tx, uuid)
		if err != nil {
			return err
		}
		if _, err := o.queueRefresh(ctx, tx, &view.Table, nil); err != nil {
			return err
		}
	}
	return nil
}
