package conformance

import (
	"context"

	"github.com/lancens/lancens/client"
	"github.com/lancens/lancens/store"
)

// ClientTarget runs the suite through the HTTP client: each store method is
// answered by the matching API call.
type ClientTarget struct {
	C *client.Client
}

var _ Target = ClientTarget{}

// CreateNamespace implements store.Namespaces over HTTP.
func (a ClientTarget) CreateNamespace(ctx context.Context, id []string, mode store.CreateMode, properties map[string]string) (*store.Namespace, error) {
	props, err := a.C.CreateNamespace(ctx, id, &client.CreateNamespaceOptions{Mode: mode.String(), Properties: properties})
	if err != nil {
		return nil, err
	}
	return &store.Namespace{ID: id, Properties: props}, nil
}

// ListNamespaces implements store.Namespaces over HTTP.
func (a ClientTarget) ListNamespaces(ctx context.Context, parent []string, page store.Page) ([]string, string, error) {
	return a.C.ListNamespacesPage(ctx, parent, page.Token, page.Limit)
}

// DescribeNamespace implements store.Namespaces over HTTP.
func (a ClientTarget) DescribeNamespace(ctx context.Context, id []string) (*store.Namespace, error) {
	props, err := a.C.DescribeNamespace(ctx, id)
	if err != nil {
		return nil, err
	}
	return &store.Namespace{ID: id, Properties: props}, nil
}

// DropNamespace implements store.Namespaces over HTTP.
func (a ClientTarget) DropNamespace(ctx context.Context, id []string, mode store.DropMode, behavior store.DropBehavior) (*store.Namespace, error) {
	props, err := a.C.DropNamespace(ctx, id, &client.DropNamespaceOptions{Mode: mode.String(), Behavior: behavior.String()})
	if err != nil || props == nil {
		return nil, err
	}
	return &store.Namespace{ID: id, Properties: props}, nil
}

// NamespaceExists implements store.Namespaces over HTTP.
func (a ClientTarget) NamespaceExists(ctx context.Context, id []string) error {
	ok, err := a.C.NamespaceExists(ctx, id)
	if err != nil {
		return err
	}
	if !ok {
		return store.Errorf(store.CodeNamespaceNotFound, "namespace %q not found", id)
	}
	return nil
}
