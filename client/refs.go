package client

import (
	"context"
	"iter"
	"maps"
	"slices"
	"time"

	"github.com/lancens/lancens/gen/apiclient"
)

// Tag names a version of a table.
type Tag struct {
	Name         string
	Version      int64
	Branch       string // "" is main
	ManifestSize int64
}

// ListTableTagsPage returns one page of the tags of table id, sorted by
// name, and the token of the next page ("" at the end).
func (c *Client) ListTableTagsPage(ctx context.Context, id []string, pageToken string, limit int) ([]Tag, string, error) {
	path, err := c.pathID(id)
	if err != nil {
		return nil, "", err
	}
	params := &apiclient.ListTableTagsParams{Delimiter: &c.delimiter, PageToken: optional(pageToken), Limit: positive(limit)}
	resp, err := c.api.ListTableTagsWithResponse(ctx, path, params)
	if err != nil {
		return nil, "", err
	}
	if err := checkResponse(resp.HTTPResponse, resp.Body); err != nil {
		return nil, "", err
	}
	tags := resp.JSON200.Tags
	out := make([]Tag, 0, len(tags))
	for _, name := range slices.Sorted(maps.Keys(tags)) {
		t := tags[name]
		out = append(out, Tag{Name: name, Version: t.Version, Branch: deref(t.Branch), ManifestSize: t.ManifestSize})
	}
	return out, deref(resp.JSON200.PageToken), nil
}

// ListTableTags iterates over the tags of table id, following page tokens.
func (c *Client) ListTableTags(ctx context.Context, id []string) iter.Seq2[Tag, error] {
	return paginate(func(token string) ([]Tag, string, error) {
		return c.ListTableTagsPage(ctx, id, token, 0)
	})
}

// GetTableTag returns the version (and branch) a tag of table id names.
func (c *Client) GetTableTag(ctx context.Context, id []string, tag string) (*Tag, error) {
	path, err := c.pathID(id)
	if err != nil {
		return nil, err
	}
	resp, err := c.api.GetTableTagVersionWithResponse(ctx, path, &apiclient.GetTableTagVersionParams{Delimiter: &c.delimiter},
		apiclient.GetTableTagVersionRequest{Id: &id, Tag: tag})
	if err != nil {
		return nil, err
	}
	if err := checkResponse(resp.HTTPResponse, resp.Body); err != nil {
		return nil, err
	}
	return &Tag{Name: tag, Version: resp.JSON200.Version, Branch: deref(resp.JSON200.Branch)}, nil
}

// CreateTableTag points a new tag at a version of a branch ("" is main) and
// returns the transaction id.
func (c *Client) CreateTableTag(ctx context.Context, id []string, tag string, version int64, branch string) (string, error) {
	path, err := c.pathID(id)
	if err != nil {
		return "", err
	}
	resp, err := c.api.CreateTableTagWithResponse(ctx, path, &apiclient.CreateTableTagParams{Delimiter: &c.delimiter},
		apiclient.CreateTableTagRequest{Id: &id, Tag: tag, Version: version, Branch: optional(branch)})
	if err != nil {
		return "", err
	}
	if err := checkResponse(resp.HTTPResponse, resp.Body); err != nil {
		return "", err
	}
	return deref(resp.JSON200.TransactionId), nil
}

// UpdateTableTag re-points an existing tag and returns the transaction id.
func (c *Client) UpdateTableTag(ctx context.Context, id []string, tag string, version int64, branch string) (string, error) {
	path, err := c.pathID(id)
	if err != nil {
		return "", err
	}
	resp, err := c.api.UpdateTableTagWithResponse(ctx, path, &apiclient.UpdateTableTagParams{Delimiter: &c.delimiter},
		apiclient.UpdateTableTagRequest{Id: &id, Tag: tag, Version: version, Branch: optional(branch)})
	if err != nil {
		return "", err
	}
	if err := checkResponse(resp.HTTPResponse, resp.Body); err != nil {
		return "", err
	}
	return deref(resp.JSON200.TransactionId), nil
}

// DeleteTableTag deletes a tag and returns the transaction id.
func (c *Client) DeleteTableTag(ctx context.Context, id []string, tag string) (string, error) {
	path, err := c.pathID(id)
	if err != nil {
		return "", err
	}
	resp, err := c.api.DeleteTableTagWithResponse(ctx, path, &apiclient.DeleteTableTagParams{Delimiter: &c.delimiter},
		apiclient.DeleteTableTagRequest{Id: &id, Tag: tag})
	if err != nil {
		return "", err
	}
	if err := checkResponse(resp.HTTPResponse, resp.Body); err != nil {
		return "", err
	}
	return deref(resp.JSON200.TransactionId), nil
}

// Branch is a line of versions of a table forked from another branch.
type Branch struct {
	Name          string
	ParentBranch  string // "" is main
	ParentVersion int64
	CreatedAt     time.Time
	ManifestSize  int64
	Metadata      map[string]string
}

// CreateTableBranch forks branch name from fromBranch ("" is main) at
// fromVersion (nil: its latest) and returns the transaction id.
func (c *Client) CreateTableBranch(ctx context.Context, id []string, name, fromBranch string, fromVersion *int64) (string, error) {
	path, err := c.pathID(id)
	if err != nil {
		return "", err
	}
	resp, err := c.api.CreateTableBranchWithResponse(ctx, path, &apiclient.CreateTableBranchParams{Delimiter: &c.delimiter},
		apiclient.CreateTableBranchRequest{Id: &id, Name: name, FromBranch: optional(fromBranch), FromVersion: fromVersion})
	if err != nil {
		return "", err
	}
	if err := checkResponse(resp.HTTPResponse, resp.Body); err != nil {
		return "", err
	}
	return deref(resp.JSON200.TransactionId), nil
}

// ListTableBranchesPage returns one page of the branches of table id, sorted
// by name, and the token of the next page ("" at the end).
func (c *Client) ListTableBranchesPage(ctx context.Context, id []string, pageToken string, limit int) ([]Branch, string, error) {
	path, err := c.pathID(id)
	if err != nil {
		return nil, "", err
	}
	params := &apiclient.ListTableBranchesParams{Delimiter: &c.delimiter, PageToken: optional(pageToken), Limit: positive(limit)}
	resp, err := c.api.ListTableBranchesWithResponse(ctx, path, params)
	if err != nil {
		return nil, "", err
	}
	if err := checkResponse(resp.HTTPResponse, resp.Body); err != nil {
		return nil, "", err
	}
	branches := resp.JSON200.Branches
	out := make([]Branch, 0, len(branches))
	for _, name := range slices.Sorted(maps.Keys(branches)) {
		b := branches[name]
		out = append(out, Branch{Name: name, ParentBranch: deref(b.ParentBranch), ParentVersion: b.ParentVersion,
			CreatedAt: time.Unix(b.CreateAt, 0).UTC(), ManifestSize: b.ManifestSize, Metadata: propertiesOf(b.Metadata)})
	}
	return out, deref(resp.JSON200.PageToken), nil
}

// ListTableBranches iterates over the branches of table id, following page
// tokens.
func (c *Client) ListTableBranches(ctx context.Context, id []string) iter.Seq2[Branch, error] {
	return paginate(func(token string) ([]Branch, string, error) {
		return c.ListTableBranchesPage(ctx, id, token, 0)
	})
}

// DeleteTableBranch deletes a branch with its versions and tags and returns
// the transaction id.
func (c *Client) DeleteTableBranch(ctx context.Context, id []string, name string) (string, error) {
	path, err := c.pathID(id)
	if err != nil {
		return "", err
	}
	resp, err := c.api.DeleteTableBranchWithResponse(ctx, path, &apiclient.DeleteTableBranchParams{Delimiter: &c.delimiter},
		apiclient.DeleteTableBranchRequest{Id: &id, Name: name})
	if err != nil {
		return "", err
	}
	if err := checkResponse(resp.HTTPResponse, resp.Body); err != nil {
		return "", err
	}
	return deref(resp.JSON200.TransactionId), nil
}

// Transaction is the state of an operation the server recorded.
type Transaction struct {
	Status     TransactionStatus
	Properties map[string]string
}

// DescribeTransaction returns a transaction. id is usually one element, a
// transaction id an operation returned.
func (c *Client) DescribeTransaction(ctx context.Context, id []string) (*Transaction, error) {
	path, err := c.pathID(id)
	if err != nil {
		return nil, err
	}
	resp, err := c.api.DescribeTransactionWithResponse(ctx, path, &apiclient.DescribeTransactionParams{Delimiter: &c.delimiter},
		apiclient.DescribeTransactionRequest{Id: &id})
	if err != nil {
		return nil, err
	}
	if err := checkResponse(resp.HTTPResponse, resp.Body); err != nil {
		return nil, err
	}
	return &Transaction{Status: TransactionStatus(resp.JSON200.Status), Properties: propertiesOf(resp.JSON200.Properties)}, nil
}

// TransactionAction is one change to a transaction: set exactly one field.
type TransactionAction struct {
	SetStatus TransactionStatus
	// SetProperty sets Key to Value; Mode says what to do when it is set
	// already: ModeOverwrite (the default), ModeFail or ModeSkip.
	SetProperty *PropertyAction
	// UnsetProperty removes Key; Mode says what to do when it is missing:
	// ModeSkip (the default) or ModeFail.
	UnsetProperty *PropertyAction
}

// PropertyAction sets or unsets one transaction property.
type PropertyAction struct {
	Key, Value string
	Mode       Mode
}

// AlterTransaction applies actions to a transaction atomically and returns
// its new state.
func (c *Client) AlterTransaction(ctx context.Context, id []string, actions ...TransactionAction) (*Transaction, error) {
	path, err := c.pathID(id)
	if err != nil {
		return nil, err
	}
	req := apiclient.AlterTransactionRequest{Id: &id, Actions: make([]apiclient.AlterTransactionAction, len(actions))}
	for i, a := range actions {
		if a.SetStatus != "" {
			req.Actions[i].SetStatusAction = &apiclient.AlterTransactionSetStatus{Status: optional(string(a.SetStatus))}
		}
		if p := a.SetProperty; p != nil {
			req.Actions[i].SetPropertyAction = &apiclient.AlterTransactionSetProperty{Key: &p.Key, Value: &p.Value, Mode: optional(string(p.Mode))}
		}
		if p := a.UnsetProperty; p != nil {
			req.Actions[i].UnsetPropertyAction = &apiclient.AlterTransactionUnsetProperty{Key: &p.Key, Mode: optional(string(p.Mode))}
		}
	}
	resp, err := c.api.AlterTransactionWithResponse(ctx, path, &apiclient.AlterTransactionParams{Delimiter: &c.delimiter}, req)
	if err != nil {
		return nil, err
	}
	if err := checkResponse(resp.HTTPResponse, resp.Body); err != nil {
		return nil, err
	}
	return &Transaction{Status: TransactionStatus(resp.JSON200.Status), Properties: propertiesOf(resp.JSON200.Properties)}, nil
}
