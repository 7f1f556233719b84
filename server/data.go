package server

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/lancens/lancens/gen"
	"github.com/lancens/lancens/store"
)

// Answers carry in headers what the spec's bodies have no field for: how
// many rows a delete removed, and the table version a query read.
const (
	headerDeletedRows  = "X-Lancens-Deleted-Rows"
	headerTableVersion = "X-Lancens-Table-Version"
)

// jsonParamMap reads a query parameter holding a JSON object of strings.
// Returns InvalidInput (13) when it is not one.
func jsonParamMap(name string, v *string) (map[string]string, error) {
	if v == nil || *v == "" {
		return nil, nil
	}
	var m map[string]string
	if err := json.Unmarshal([]byte(*v), &m); err != nil {
		return nil, invalidInput("query parameter %s must be a JSON object of strings: %v", name, err)
	}
	return m, nil
}

// mainBranchOnly refuses the operations that act on the main branch of
// managed tables only (indexes, backfills) on another branch.
func mainBranchOnly(branch *string, what string) error {
	b, err := store.NormalizeBranch(deref(branch))
	if err != nil {
		return err
	}
	if b != "" {
		return store.Errorf(store.CodeUnsupported, "%s of a table whose rows lancens keeps belong to its main branch; branch %q has none of its own", what, b)
	}
	return nil
}

// resolveMainID returns the table a request about indexes or backfills
// names (see resolveID), which must be addressed on its main branch (see
// mainBranchOnly). Returns their errors.
func resolveMainID(c echo.Context, delimiter *string, bodyID *[]string, branch *string, what string) ([]string, error) {
	id, err := resolveID(c, delimiter, bodyID)
	if err != nil {
		return nil, err
	}
	if err := mainBranchOnly(branch, what); err != nil {
		return nil, err
	}
	return id, nil
}

// onBranch returns the data operations of managed tables on the branch a
// request names (none or "main": main). Returns InvalidInput (13) for a
// malformed branch name.
func (s *Server) onBranch(branch *string) (store.ManagedData, error) {
	b, err := store.NormalizeBranch(deref(branch))
	if err != nil {
		return nil, err
	}
	return s.store.OnBranch(b), nil
}

// resolveData returns the table a data request names (see resolveID) and
// the data operations on the branch it names (see onBranch).
func (s *Server) resolveData(c echo.Context, delimiter *string, bodyID *[]string, branch *string) ([]string, store.ManagedData, error) {
	id, err := resolveID(c, delimiter, bodyID)
	if err != nil {
		return nil, nil, err
	}
	data, err := s.onBranch(branch)
	if err != nil {
		return nil, nil, err
	}
	return id, data, nil
}

// CreateTable handles POST /v1/table/{id}/create: a managed table from an
// Arrow IPC stream.
func (s *Server) CreateTable(c echo.Context, _ gen.Id, p gen.CreateTableParams) error {
	id, err := resolveID(c, p.Delimiter, nil)
	if err != nil {
		return err
	}
	mode, err := store.ParseCreateMode(deref(p.Mode))
	if err != nil {
		return err
	}
	props, err := jsonParamMap("properties", p.Properties)
	if err != nil {
		return err
	}
	opts, err := jsonParamMap("storage_options", p.StorageOptions)
	if err != nil {
		return err
	}
	data, done, err := s.readArrow(c)
	if err != nil {
		return err
	}
	t, res, err := s.store.CreateTable(c.Request().Context(), id, store.NewTable{Mode: mode, Data: data, Properties: props, StorageOptions: opts})
	if err := done(err); err != nil {
		return err
	}
	return ok(c, gen.CreateTableResponse{
		Location: &t.Location, Version: &res.Version, Properties: &t.Properties, StorageOptions: &t.StorageOptions,
		TransactionId: optional(res.TransactionID),
	})
}

// InsertIntoTable handles POST /v1/table/{id}/insert.
func (s *Server) InsertIntoTable(c echo.Context, _ gen.Id, p gen.InsertIntoTableParams) error {
	id, err := resolveID(c, p.Delimiter, nil)
	if err != nil {
		return err
	}
	mode, err := store.ParseInsertMode(deref(p.Mode))
	if err != nil {
		return err
	}
	onBranch, err := s.onBranch(p.Branch)
	if err != nil {
		return err
	}
	data, done, err := s.readArrow(c)
	if err != nil {
		return err
	}
	res, err := onBranch.Insert(c.Request().Context(), id, mode, data)
	if err := done(err); err != nil {
		return err
	}
	return ok(c, gen.InsertIntoTableResponse{NumInsertedRows: &res.Inserted, Version: &res.Version, TransactionId: optional(res.TransactionID)})
}

// MergeInsertIntoTable handles POST /v1/table/{id}/merge_insert. The key may
// be repeated (on=a&on=b, as spec 0.12 has it) for a composite key; the
// store refuses an empty or repeated key with InvalidInput (13).
func (s *Server) MergeInsertIntoTable(c echo.Context, _ gen.Id, p gen.MergeInsertIntoTableParams) error {
	id, err := resolveID(c, p.Delimiter, nil)
	if err != nil {
		return err
	}
	onBranch, err := s.onBranch(p.Branch)
	if err != nil {
		return err
	}
	ctx := c.Request().Context()
	if p.Timeout != nil && *p.Timeout != "" {
		d, err := time.ParseDuration(*p.Timeout)
		if err != nil || d <= 0 {
			return invalidInput("timeout %q is not a duration such as 30s or 5m", *p.Timeout)
		}
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, d)
		defer cancel()
	}
	keys := []string{p.On}
	if all, ok := c.Get(contextMergeKeys).([]string); ok {
		keys = all
	}
	m := store.Merge{
		On:                                 keys,
		WhenMatchedUpdateAll:               boolOr(p.WhenMatchedUpdateAll, false),
		WhenMatchedUpdateFilter:            deref(p.WhenMatchedUpdateAllFilt),
		WhenNotMatchedInsertAll:            boolOr(p.WhenNotMatchedInsertAll, false),
		WhenNotMatchedBySourceDelete:       boolOr(p.WhenNotMatchedBySourceDelete, false),
		WhenNotMatchedBySourceDeleteFilter: deref(p.WhenNotMatchedBySourceDeleteFilt),
	}
	if err := s.checkSQL(c, sqlText{"when_matched_update_all_filt", m.WhenMatchedUpdateFilter},
		sqlText{"when_not_matched_by_source_delete_filt", m.WhenNotMatchedBySourceDeleteFilter}); err != nil {
		return err
	}
	var done func(error) error
	if m.Data, done, err = s.readArrow(c); err != nil {
		return err
	}
	res, err := onBranch.MergeInsert(ctx, id, m)
	if err := done(err); err != nil {
		return err
	}
	return ok(c, gen.MergeInsertIntoTableResponse{
		NumInsertedRows: &res.Inserted, NumUpdatedRows: &res.Updated, NumDeletedRows: &res.Deleted,
		Version: &res.Version, TransactionId: optional(res.TransactionID),
	})
}

// UpdateTable handles POST /v1/table/{id}/update.
func (s *Server) UpdateTable(c echo.Context, _ gen.Id, p gen.UpdateTableParams) error {
	var req gen.UpdateTableRequest
	if err := bindJSON(c, &req); err != nil {
		return err
	}
	id, data, err := s.resolveData(c, p.Delimiter, req.Id, req.Branch)
	if err != nil {
		return err
	}
	updates := make([]store.ColumnUpdate, len(req.Updates))
	texts := []sqlText{{"predicate", deref(req.Predicate)}}
	for i, u := range req.Updates {
		if len(u) != 2 {
			return invalidInput("update %d must be a [column, expression] pair", i)
		}
		updates[i] = store.ColumnUpdate{Path: u[0], Expr: u[1]}
		texts = append(texts, sqlText{fmt.Sprintf("the column of update %d", i), u[0]}, sqlText{fmt.Sprintf("the expression of update %d", i), u[1]})
	}
	if err := s.checkSQL(c, texts...); err != nil {
		return err
	}
	res, err := data.Update(c.Request().Context(), id, updates, deref(req.Predicate))
	if err != nil {
		return err
	}
	return ok(c, gen.UpdateTableResponse{UpdatedRows: res.Updated, Version: res.Version, TransactionId: optional(res.TransactionID)})
}

// DeleteFromTable handles POST /v1/table/{id}/delete.
func (s *Server) DeleteFromTable(c echo.Context, _ gen.Id, p gen.DeleteFromTableParams) error {
	var req gen.DeleteFromTableRequest
	if err := bindJSON(c, &req); err != nil {
		return err
	}
	id, data, err := s.resolveData(c, p.Delimiter, req.Id, req.Branch)
	if err != nil {
		return err
	}
	if err := s.checkSQL(c, sqlText{"predicate", req.Predicate}); err != nil {
		return err
	}
	res, err := data.Delete(c.Request().Context(), id, req.Predicate)
	if err != nil {
		return err
	}
	c.Response().Header().Set(headerDeletedRows, strconv.FormatInt(res.Deleted, 10))
	return ok(c, gen.DeleteFromTableResponse{Version: &res.Version, TransactionId: optional(res.TransactionID)})
}

// CountTableRows handles POST /v1/table/{id}/count_rows; the answer is a
// bare JSON integer.
func (s *Server) CountTableRows(c echo.Context, _ gen.Id, p gen.CountTableRowsParams) error {
	var req gen.CountTableRowsRequest
	if err := bindJSON(c, &req); err != nil {
		return err
	}
	id, data, err := s.resolveData(c, p.Delimiter, req.Id, req.Branch)
	if err != nil {
		return err
	}
	if err := s.checkSQL(c, sqlText{"predicate", deref(req.Predicate)}); err != nil {
		return err
	}
	n, v, err := data.CountRows(c.Request().Context(), id, req.Version, deref(req.Predicate))
	if err != nil {
		return err
	}
	c.Response().Header().Set(headerTableVersion, strconv.FormatInt(v, 10))
	return c.JSON(http.StatusOK, n)
}

// RestoreTable handles POST /v1/table/{id}/restore.
func (s *Server) RestoreTable(c echo.Context, _ gen.Id, p gen.RestoreTableParams) error {
	var req gen.RestoreTableRequest
	if err := bindJSON(c, &req); err != nil {
		return err
	}
	id, data, err := s.resolveData(c, p.Delimiter, req.Id, req.Branch)
	if err != nil {
		return err
	}
	if req.Version < 0 {
		return invalidInput("version must not be negative")
	}
	res, err := data.Restore(c.Request().Context(), id, req.Version)
	if err != nil {
		return err
	}
	return ok(c, gen.RestoreTableResponse{TransactionId: optional(res.TransactionID)})
}

// GetTableStats handles POST /v1/table/{id}/stats.
func (s *Server) GetTableStats(c echo.Context, _ gen.Id, p gen.GetTableStatsParams) error {
	var req gen.GetTableStatsRequest
	if err := bindJSON(c, &req); err != nil {
		return err
	}
	id, data, err := s.resolveData(c, p.Delimiter, req.Id, req.Branch)
	if err != nil {
		return err
	}
	st, err := data.Stats(c.Request().Context(), id)
	if err != nil {
		return err
	}
	return ok(c, gen.GetTableStatsResponse{
		NumRows: st.NumRows, TotalBytes: st.TotalBytes, NumIndices: st.NumIndices,
		FragmentStats: fragmentStats(st.FragmentRows),
	})
}

// smallFragmentRows is the row count under which LanceDB's table stats
// call a fragment small.
const smallFragmentRows = 100_000

// fragmentStats summarises fragment sizes as LanceDB's table stats do:
// percentile p of n sorted sizes is sorted[n·p/100] (integer division),
// the mean is truncated.
func fragmentStats(rows []int64) gen.FragmentStats {
	out := gen.FragmentStats{NumFragments: int64(len(rows))}
	if len(rows) == 0 {
		return out
	}
	sorted := append([]int64(nil), rows...)
	slices.Sort(sorted)
	var sum int64
	for _, n := range sorted {
		sum += n
		if n < smallFragmentRows {
			out.NumSmallFragments++
		}
	}
	pct := func(p int) int64 { return sorted[len(sorted)*p/100] }
	out.Lengths = gen.FragmentSummary{
		Min: sorted[0], Max: sorted[len(sorted)-1], Mean: sum / int64(len(sorted)),
		P25: pct(25), P50: pct(50), P75: pct(75), P99: pct(99),
	}
	return out
}
