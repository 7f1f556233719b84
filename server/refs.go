package server

import (
	"github.com/labstack/echo/v4"

	"github.com/lancens/lancens/gen"
	"github.com/lancens/lancens/store"
)

// contextAllPages, set on the request context by the remote dialect
// adapter, asks ListTableTags for every page at once: the LanceDB SDK reads
// the tags as one map and cannot follow a page token.
const contextAllPages = "lancens.all_pages"

// ListTableTags handles POST /v1/table/{id}/tags/list.
func (s *Server) ListTableTags(c echo.Context, _ gen.Id, p gen.ListTableTagsParams) error {
	id, err := resolveID(c, p.Delimiter, nil)
	if err != nil {
		return err
	}
	all, _ := c.Get(contextAllPages).(bool)
	out := map[string]gen.TagContents{}
	pg, err := s.page(p.PageToken, p.Limit)
	if err != nil {
		return err
	}
	for {
		tags, next, err := s.store.ListTags(c.Request().Context(), id, pg)
		if err != nil {
			return err
		}
		for _, g := range tags {
			out[g.Name] = gen.TagContents{Version: g.Version, ManifestSize: g.ManifestSize, Branch: optional(g.Branch)}
		}
		if !all || next == "" {
			return ok(c, gen.ListTableTagsResponse{Tags: out, PageToken: optional(next)})
		}
		pg.Token = next
	}
}

// GetTableTagVersion handles POST /v1/table/{id}/tags/version.
func (s *Server) GetTableTagVersion(c echo.Context, _ gen.Id, p gen.GetTableTagVersionParams) error {
	var req gen.GetTableTagVersionRequest
	if err := bindJSON(c, &req); err != nil {
		return err
	}
	id, err := resolveID(c, p.Delimiter, req.Id)
	if err != nil {
		return err
	}
	g, err := s.store.GetTag(c.Request().Context(), id, req.Tag)
	if err != nil {
		return err
	}
	return ok(c, gen.GetTableTagVersionResponse{Version: g.Version, Branch: optional(g.Branch)})
}

// CreateTableTag handles POST /v1/table/{id}/tags/create.
func (s *Server) CreateTableTag(c echo.Context, _ gen.Id, p gen.CreateTableTagParams) error {
	var req gen.CreateTableTagRequest
	if err := bindJSON(c, &req); err != nil {
		return err
	}
	id, err := resolveID(c, p.Delimiter, req.Id)
	if err != nil {
		return err
	}
	branch, err := store.NormalizeBranch(deref(req.Branch))
	if err != nil {
		return err
	}
	txID, err := s.store.CreateTag(c.Request().Context(), id, req.Tag, branch, req.Version)
	if err != nil {
		return err
	}
	return ok(c, gen.CreateTableTagResponse{TransactionId: optional(txID)})
}

// UpdateTableTag handles POST /v1/table/{id}/tags/update.
func (s *Server) UpdateTableTag(c echo.Context, _ gen.Id, p gen.UpdateTableTagParams) error {
	var req gen.UpdateTableTagRequest
	if err := bindJSON(c, &req); err != nil {
		return err
	}
	id, err := resolveID(c, p.Delimiter, req.Id)
	if err != nil {
		return err
	}
	branch, err := store.NormalizeBranch(deref(req.Branch))
	if err != nil {
		return err
	}
	txID, err := s.store.UpdateTag(c.Request().Context(), id, req.Tag, branch, req.Version)
	if err != nil {
		return err
	}
	return ok(c, gen.UpdateTableTagResponse{TransactionId: optional(txID)})
}

// DeleteTableTag handles POST /v1/table/{id}/tags/delete.
func (s *Server) DeleteTableTag(c echo.Context, _ gen.Id, p gen.DeleteTableTagParams) error {
	var req gen.DeleteTableTagRequest
	if err := bindJSON(c, &req); err != nil {
		return err
	}
	id, err := resolveID(c, p.Delimiter, req.Id)
	if err != nil {
		return err
	}
	txID, err := s.store.DeleteTag(c.Request().Context(), id, req.Tag)
	if err != nil {
		return err
	}
	return ok(c, gen.DeleteTableTagResponse{TransactionId: optional(txID)})
}

// CreateTableBranch handles POST /v1/table/{id}/branches/create.
func (s *Server) CreateTableBranch(c echo.Context, _ gen.Id, p gen.CreateTableBranchParams) error {
	var req gen.CreateTableBranchRequest
	if err := bindJSON(c, &req); err != nil {
		return err
	}
	id, err := resolveID(c, p.Delimiter, req.Id)
	if err != nil {
		return err
	}
	name, err := store.NormalizeBranch(req.Name)
	if err != nil {
		return err
	}
	if name == "" {
		name = store.MainBranch
	}
	from, err := store.NormalizeBranch(deref(req.FromBranch))
	if err != nil {
		return err
	}
	txID, err := s.store.CreateBranch(c.Request().Context(), id, name, from, req.FromVersion)
	if err != nil {
		return err
	}
	return ok(c, gen.CreateTableBranchResponse{TransactionId: optional(txID)})
}

// ListTableBranches handles POST /v1/table/{id}/branches/list.
func (s *Server) ListTableBranches(c echo.Context, _ gen.Id, p gen.ListTableBranchesParams) error {
	id, err := resolveID(c, p.Delimiter, nil)
	if err != nil {
		return err
	}
	pg, err := s.page(p.PageToken, p.Limit)
	if err != nil {
		return err
	}
	branches, next, err := s.store.ListBranches(c.Request().Context(), id, pg)
	if err != nil {
		return err
	}
	out := make(map[string]gen.BranchContents, len(branches))
	for _, b := range branches {
		bc := gen.BranchContents{
			ParentBranch:  optional(b.ParentBranch),
			ParentVersion: b.ParentVersion,
			CreateAt:      b.CreatedAt.Unix(),
			ManifestSize:  b.ManifestSize,
		}
		if len(b.Metadata) > 0 {
			bc.Metadata = &b.Metadata
		}
		out[b.Name] = bc
	}
	return ok(c, gen.ListTableBranchesResponse{Branches: out, PageToken: optional(next)})
}

// DeleteTableBranch handles POST /v1/table/{id}/branches/delete.
func (s *Server) DeleteTableBranch(c echo.Context, _ gen.Id, p gen.DeleteTableBranchParams) error {
	var req gen.DeleteTableBranchRequest
	if err := bindJSON(c, &req); err != nil {
		return err
	}
	id, err := resolveID(c, p.Delimiter, req.Id)
	if err != nil {
		return err
	}
	txID, err := s.store.DeleteBranch(c.Request().Context(), id, req.Name)
	if err != nil {
		return err
	}
	return ok(c, gen.DeleteTableBranchResponse{TransactionId: optional(txID)})
}

// DescribeTransaction handles POST /v1/transaction/{id}/describe.
func (s *Server) DescribeTransaction(c echo.Context, _ gen.Id, p gen.DescribeTransactionParams) error {
	var req gen.DescribeTransactionRequest
	if err := bindJSON(c, &req); err != nil {
		return err
	}
	// Clients disagree on the body's id for transactions (the full
	// identifier, or without its last element), so the path alone decides.
	id, err := resolveID(c, p.Delimiter, nil)
	if err != nil {
		return err
	}
	t, err := s.store.DescribeTransaction(c.Request().Context(), id)
	if err != nil {
		return err
	}
	return ok(c, gen.DescribeTransactionResponse{Status: string(t.Status), Properties: &t.Properties})
}

// AlterTransaction handles POST /v1/transaction/{id}/alter.
func (s *Server) AlterTransaction(c echo.Context, _ gen.Id, p gen.AlterTransactionParams) error {
	var req gen.AlterTransactionRequest
	if err := bindJSON(c, &req); err != nil {
		return err
	}
	// Clients disagree on the body's id for transactions (the full
	// identifier, or without its last element), so the path alone decides.
	id, err := resolveID(c, p.Delimiter, nil)
	if err != nil {
		return err
	}
	actions := make([]store.TransactionAction, len(req.Actions))
	for i, a := range req.Actions {
		if actions[i], err = transactionAction(a); err != nil {
			return invalidInput("action %d: %s", i, store.ErrorMessage(err))
		}
	}
	t, err := s.store.AlterTransaction(c.Request().Context(), id, actions)
	if err != nil {
		return err
	}
	return ok(c, gen.AlterTransactionResponse{Status: string(t.Status), Properties: &t.Properties})
}

func transactionAction(a gen.AlterTransactionAction) (store.TransactionAction, error) {
	var out store.TransactionAction
	n := 0
	if a.SetStatusAction != nil {
		n++
		st, err := store.ParseTransactionStatus(deref(a.SetStatusAction.Status))
		if err != nil {
			return out, err
		}
		out.SetStatus = &st
	}
	if a.SetPropertyAction != nil {
		n++
		mode, err := store.ParsePropertyMode(deref(a.SetPropertyAction.Mode), store.PropertyOverwrite)
		if err != nil {
			return out, err
		}
		if a.SetPropertyAction.Key == nil {
			return out, invalidInput("setPropertyAction needs a key")
		}
		out.SetProperty = &store.PropertyChange{Key: *a.SetPropertyAction.Key, Value: deref(a.SetPropertyAction.Value), Mode: mode}
	}
	if a.UnsetPropertyAction != nil {
		n++
		mode, err := store.ParsePropertyMode(deref(a.UnsetPropertyAction.Mode), store.PropertySkip)
		if err != nil {
			return out, err
		}
		if mode == store.PropertyOverwrite {
			return out, invalidInput("unsetPropertyAction mode must be Skip or Fail")
		}
		if a.UnsetPropertyAction.Key == nil {
			return out, invalidInput("unsetPropertyAction needs a key")
		}
		out.Unset = &store.PropertyChange{Key: *a.UnsetPropertyAction.Key, Mode: mode}
	}
	if n != 1 {
		return out, invalidInput("an action must set exactly one of setStatusAction, setPropertyAction, unsetPropertyAction")
	}
	return out, nil
}
