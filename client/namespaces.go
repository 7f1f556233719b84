package client

import (
	"context"
	"errors"
	"iter"

	"github.com/lancens/lancens/gen/apiclient"
)

// CreateNamespaceOptions are the optional parts of CreateNamespace.
type CreateNamespaceOptions struct {
	// Mode is ModeCreate (the default: fail if it exists), ModeExistOK or
	// ModeOverwrite.
	Mode Mode
	// Properties are stored on the namespace.
	Properties map[string]string
}

// CreateNamespace creates the namespace id and returns its properties as the
// server stored them. opts may be nil.
func (c *Client) CreateNamespace(ctx context.Context, id []string, opts *CreateNamespaceOptions) (map[string]string, error) {
	path, err := c.pathID(id)
	if err != nil {
		return nil, err
	}
	body := apiclient.CreateNamespaceRequest{Id: &id}
	if opts != nil {
		body.Mode = optional(string(opts.Mode))
		if opts.Properties != nil {
			body.Properties = &opts.Properties
		}
	}
	resp, err := c.api.CreateNamespaceWithResponse(ctx, path, &apiclient.CreateNamespaceParams{Delimiter: &c.delimiter}, body)
	if err != nil {
		return nil, err
	}
	if err := checkResponse(resp.HTTPResponse, resp.Body); err != nil {
		return nil, err
	}
	return propertiesOf(resp.JSON200.Properties), nil
}

// DescribeNamespace returns the properties of namespace id.
func (c *Client) DescribeNamespace(ctx context.Context, id []string) (map[string]string, error) {
	path, err := c.pathID(id)
	if err != nil {
		return nil, err
	}
	resp, err := c.api.DescribeNamespaceWithResponse(ctx, path, &apiclient.DescribeNamespaceParams{Delimiter: &c.delimiter}, apiclient.DescribeNamespaceRequest{Id: &id})
	if err != nil {
		return nil, err
	}
	if err := checkResponse(resp.HTTPResponse, resp.Body); err != nil {
		return nil, err
	}
	return propertiesOf(resp.JSON200.Properties), nil
}

// NamespaceExists reports whether namespace id exists.
func (c *Client) NamespaceExists(ctx context.Context, id []string) (bool, error) {
	path, err := c.pathID(id)
	if err != nil {
		return false, err
	}
	resp, err := c.api.NamespaceExistsWithResponse(ctx, path, &apiclient.NamespaceExistsParams{Delimiter: &c.delimiter}, apiclient.NamespaceExistsRequest{Id: &id})
	if err != nil {
		return false, err
	}
	err = checkResponse(resp.HTTPResponse, resp.Body)
	if errors.Is(err, ErrNamespaceNotFound) {
		return false, nil
	}
	return err == nil, err
}

// DropNamespaceOptions are the optional parts of DropNamespace.
type DropNamespaceOptions struct {
	// Mode is ModeFail (the default: error if missing) or ModeSkip.
	Mode Mode
	// Behavior is BehaviorRestrict (the default: error if not empty) or
	// BehaviorCascade.
	Behavior Behavior
}

// DroppedNamespace is what DropNamespace reports.
type DroppedNamespace struct {
	// Properties the namespace had.
	Properties map[string]string
	// TransactionIDs track the deletion of the data of the tables a cascade
	// dropped, when the server deletes it in the background.
	TransactionIDs []string
}

// DropNamespace drops namespace id and reports what it was (nil if it was
// missing and Mode is ModeSkip). opts may be nil.
func (c *Client) DropNamespace(ctx context.Context, id []string, opts *DropNamespaceOptions) (*DroppedNamespace, error) {
	path, err := c.pathID(id)
	if err != nil {
		return nil, err
	}
	body := apiclient.DropNamespaceRequest{Id: &id}
	if opts != nil {
		body.Mode = optional(string(opts.Mode))
		body.Behavior = optional(string(opts.Behavior))
	}
	resp, err := c.api.DropNamespaceWithResponse(ctx, path, &apiclient.DropNamespaceParams{Delimiter: &c.delimiter}, body)
	if err != nil {
		return nil, err
	}
	if err := checkResponse(resp.HTTPResponse, resp.Body); err != nil {
		return nil, err
	}
	if resp.JSON200.Properties == nil {
		return nil, nil
	}
	return &DroppedNamespace{Properties: *resp.JSON200.Properties, TransactionIDs: deref(resp.JSON200.TransactionId)}, nil
}

// ListNamespacesPage returns one page of the names of parent's direct
// children and the token of the next page ("" at the end). limit 0 lets the
// server choose the page size.
func (c *Client) ListNamespacesPage(ctx context.Context, parent []string, pageToken string, limit int) ([]string, string, error) {
	path, err := c.pathID(parent)
	if err != nil {
		return nil, "", err
	}
	params := &apiclient.ListNamespacesParams{Delimiter: &c.delimiter, PageToken: optional(pageToken), Limit: positive(limit)}
	resp, err := c.api.ListNamespacesWithResponse(ctx, path, params)
	if err != nil {
		return nil, "", err
	}
	if err := checkResponse(resp.HTTPResponse, resp.Body); err != nil {
		return nil, "", err
	}
	return resp.JSON200.Namespaces, deref(resp.JSON200.PageToken), nil
}

// ListNamespaces iterates over the names of parent's direct children,
// following page tokens. It stops at the first error, which it yields.
func (c *Client) ListNamespaces(ctx context.Context, parent []string) iter.Seq2[string, error] {
	return paginate(func(token string) ([]string, string, error) {
		return c.ListNamespacesPage(ctx, parent, token, 0)
	})
}
