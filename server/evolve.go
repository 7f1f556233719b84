package server

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/lancens/lancens/gen"
	"github.com/lancens/lancens/store"
)

// AlterTableAddColumns handles POST /v1/table/{id}/add_columns. Columns
// defined by an expression are computed once over the existing rows.
func (s *Server) AlterTableAddColumns(c echo.Context, _ gen.Id, p gen.AlterTableAddColumnsParams) error {
	var req gen.AlterTableAddColumnsRequest
	if err := bindJSON(c, &req); err != nil {
		return err
	}
	id, data, err := s.resolveData(c, p.Delimiter, req.Id, req.Branch)
	if err != nil {
		return err
	}
	cols := make([]store.NewColumn, len(req.NewColumns))
	for i, nc := range req.NewColumns {
		switch {
		case nc.VirtualColumn != nil:
			return store.Errorf(store.CodeUnsupported, "column %q: virtual (UDF) columns are not supported by lancens", nc.Name)
		case nc.Computed != nil && nc.Expression != nil:
			return invalidInput("column %q sets both expression and computed", nc.Name)
		case nc.Computed != nil:
			cols[i] = store.NewColumn{Name: nc.Name, Expr: *nc.Computed, Computed: true}
		case nc.Expression == nil:
			return invalidInput("column %q needs an expression", nc.Name)
		default:
			cols[i] = store.NewColumn{Name: nc.Name, Expr: *nc.Expression}
		}
	}
	texts := make([]sqlText, 0, 2*len(cols))
	for _, col := range cols {
		texts = append(texts, sqlText{"a new column's name", col.Name}, sqlText{"the expression of new column " + col.Name, col.Expr})
	}
	if err := s.checkSQL(c, texts...); err != nil {
		return err
	}
	res, err := data.AddColumns(c.Request().Context(), id, cols)
	if err != nil {
		return err
	}
	return ok(c, gen.AlterTableAddColumnsResponse{Version: res.Version})
}

// AlterTableBackfillColumns handles POST /v1/table/{id}/backfill_column: it
// queues the filling of a computed column and answers 202 with the job id,
// a transaction id whose status tracks the job. The tuning knobs of
// distributed backfills do not apply to lancens and are ignored.
func (s *Server) AlterTableBackfillColumns(c echo.Context, _ gen.Id, p gen.AlterTableBackfillColumnsParams) error {
	var req gen.AlterTableBackfillColumnsRequest
	if err := bindJSON(c, &req); err != nil {
		return err
	}
	id, err := resolveMainID(c, p.Delimiter, req.Id, req.Branch, "backfills")
	if err != nil {
		return err
	}
	if err := s.checkSQL(c, sqlText{"column", req.Column}, sqlText{"where", deref(req.Where)}); err != nil {
		return err
	}
	txID, err := s.store.QueueBackfill(c.Request().Context(), id, req.Column, deref(req.Where))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusAccepted, gen.AlterTableBackfillColumnsResponse{JobId: txID})
}

// AlterTableAlterColumns handles POST /v1/table/{id}/alter_columns: rename,
// change nullability, or cast. data_type is a JSON type object or a type
// name.
func (s *Server) AlterTableAlterColumns(c echo.Context, _ gen.Id, p gen.AlterTableAlterColumnsParams) error {
	var req gen.AlterTableAlterColumnsRequest
	if err := bindJSON(c, &req); err != nil {
		return err
	}
	id, data, err := s.resolveData(c, p.Delimiter, req.Id, req.Branch)
	if err != nil {
		return err
	}
	alts := make([]store.ColumnAlteration, len(req.Alterations))
	for i, a := range req.Alterations {
		if a.VirtualColumn != nil {
			return store.Errorf(store.CodeUnsupported, "virtual (UDF) columns are not supported by lancens")
		}
		alts[i] = store.ColumnAlteration{Path: a.Path, Rename: a.Rename, Nullable: a.Nullable}
		if a.DataType != nil {
			if alts[i].Type, err = parseTypeJSON(map[string]any(*a.DataType)); err != nil {
				return err
			}
		}
	}
	res, err := data.AlterColumns(c.Request().Context(), id, alts)
	if err != nil {
		return err
	}
	return ok(c, gen.AlterTableAlterColumnsResponse{Version: res.Version})
}

// AlterTableDropColumns handles POST /v1/table/{id}/drop_columns.
func (s *Server) AlterTableDropColumns(c echo.Context, _ gen.Id, p gen.AlterTableDropColumnsParams) error {
	var req gen.AlterTableDropColumnsRequest
	if err := bindJSON(c, &req); err != nil {
		return err
	}
	id, data, err := s.resolveData(c, p.Delimiter, req.Id, req.Branch)
	if err != nil {
		return err
	}
	res, err := data.DropColumns(c.Request().Context(), id, req.Columns)
	if err != nil {
		return err
	}
	return ok(c, gen.AlterTableDropColumnsResponse{Version: res.Version, TransactionId: optional(res.TransactionID)})
}

// UpdateFieldMetadata handles POST /v1/table/{id}/update_field_metadata.
func (s *Server) UpdateFieldMetadata(c echo.Context, _ gen.Id, p gen.UpdateFieldMetadataParams) error {
	var req gen.UpdateFieldMetadataRequest
	if err := bindJSON(c, &req); err != nil {
		return err
	}
	id, data, err := s.resolveData(c, p.Delimiter, req.Id, req.Branch)
	if err != nil {
		return err
	}
	updates := make([]store.FieldMetadataUpdate, len(req.Updates))
	for i, u := range req.Updates {
		updates[i] = store.FieldMetadataUpdate{Path: u.Path, Metadata: u.Metadata, Replace: boolOr(u.Replace, false)}
	}
	res, fields, err := data.UpdateFieldMetadata(c.Request().Context(), id, updates)
	if err != nil {
		return err
	}
	return ok(c, gen.UpdateFieldMetadataResponse{Version: res.Version, Fields: &fields})
}

// UpdateTableSchemaMetadata handles POST
// /v1/table/{id}/schema_metadata/update: the body is the bare map of keys to
// set, and so is the answer (the resulting metadata).
func (s *Server) UpdateTableSchemaMetadata(c echo.Context, _ gen.Id, p gen.UpdateTableSchemaMetadataParams) error {
	var set map[string]string
	if err := bindJSON(c, &set); err != nil {
		return err
	}
	id, err := resolveID(c, p.Delimiter, nil)
	if err != nil {
		return err
	}
	data, err := s.onBranch(p.Branch)
	if err != nil {
		return err
	}
	_, md, err := data.UpdateSchemaMetadata(c.Request().Context(), id, set)
	if err != nil {
		return err
	}
	return ok(c, md)
}
