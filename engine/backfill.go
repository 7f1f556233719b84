package engine

import (
	"context"
	"strconv"

	"github.com/lancens/lancens/store"
)

// Backfills. A computed column keeps its expression as a binding in its
// field's metadata (store.ComputedBinding); a backfill sets the column to
// it over the rows matching a filter, as an update. QueueBackfill checks
// the request against the latest version and queues the work as a job
// (store.JobBackfillColumn) in the catalog, which a job runner of any
// replica claims once; the job then updates the rows as they are when it
// runs. Backfills act on main whatever the engine's branch.

// QueueBackfill implements store.ManagedData. It returns TableNotFound
// (4), InvalidTableState (19) for a table without data or a materialized
// view, TableColumnNotFound (12) for a missing column or one the filter
// names, and InvalidInput (13) for a column that is not computed or a
// filter that does not parse.
func (e *Engine) QueueBackfill(ctx context.Context, id []string, column, where string) (string, error) {
	main := &Engine{shared: e.shared}
	r, err := main.findData(ctx, id)
	if err != nil {
		return "", err
	}
	if err := main.refuseView(ctx, r); err != nil {
		return "", err
	}
	s, err := main.open(ctx, r, nil)
	if err != nil {
		return "", err
	}
	if _, err := computedBinding(s, column); err != nil {
		return "", err
	}
	if _, err := planFilter(s.arrow, where); err != nil {
		return "", err
	}
	return e.cat.RecordWork(ctx, r.t.UUID, store.JobBackfillColumn, store.TxQueued,
		map[string]string{"column": column, "read_version": strconv.FormatUint(s.ds.Version(), 10)},
		store.BackfillColumn{TableUUID: r.t.UUID, Column: column, Where: where})
}

// Backfill implements store.ManagedData: the queued backfill job runs as
// an update of the column to its binding. It returns TableNotFound (4)
// when the table is gone, and the errors of QueueBackfill and Update.
func (e *Engine) Backfill(ctx context.Context, job store.BackfillColumn) (store.WriteResult, error) {
	t, err := e.cat.DescribeTableByUUID(ctx, job.TableUUID)
	if err != nil {
		return store.WriteResult{}, err
	}
	main := &Engine{shared: e.shared}
	r, err := main.findData(ctx, t.ID)
	if err != nil {
		return store.WriteResult{}, err
	}
	s, err := main.open(ctx, r, nil)
	if err != nil {
		return store.WriteResult{}, err
	}
	binding, err := computedBinding(s, job.Column)
	if err != nil {
		return store.WriteResult{}, err
	}
	return main.Update(ctx, t.ID, []store.ColumnUpdate{{Path: job.Column, Expr: binding}}, job.Where)
}

// computedBinding returns the expression computed column column of
// snapshot s is bound to. It returns TableColumnNotFound (12), and
// InvalidInput (13) for a column that is not computed.
func computedBinding(s *snapshot, column string) (string, error) {
	c, ok := lookupColumn(s.arrow, column)
	if !ok {
		return "", store.Errorf(store.CodeTableColumnNotFound, "column %s not found", column)
	}
	binding, ok := c.field.Metadata.GetValue(store.ComputedBinding)
	if !ok {
		return "", store.Errorf(store.CodeInvalidInput, "column %s is not a computed column", column)
	}
	return binding, nil
}
