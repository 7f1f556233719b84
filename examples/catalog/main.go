// Command catalog walks through the catalog: nested namespaces with
// properties, listing page by page, declaring tables, and the typed errors
// the server answers.
//
// It talks to the server at LANCENS_URL (default http://localhost:2333),
// with the API key in LANCENS_API_KEY or the bearer token in LANCENS_TOKEN
// if it needs one, works in a namespace of its own that it drops at the
// end, and exits non-zero on any failure.
package main

import (
	"context"
	"errors"
	"fmt"
	"log"
	"os"
	"slices"
	"time"

	"github.com/lancens/lancens/client"
)

func main() {
	ctx := context.Background()
	c, err := connect()
	check(err)
	root := fmt.Sprintf("catalog_example_%d", time.Now().UnixNano())

	// Namespaces nest; each may carry string properties.
	_, err = c.CreateNamespace(ctx, []string{root}, &client.CreateNamespaceOptions{Properties: map[string]string{"owner": "examples"}})
	check(err)
	defer func() {
		_, err := c.DropNamespace(ctx, []string{root}, &client.DropNamespaceOptions{Behavior: client.BehaviorCascade})
		check(err)
	}()
	teams := []string{"search", "billing", "ads", "growth", "infra"}
	for _, team := range teams {
		_, err := c.CreateNamespace(ctx, []string{root, team}, &client.CreateNamespaceOptions{Properties: map[string]string{"team": team}})
		check(err)
	}
	props, err := c.DescribeNamespace(ctx, []string{root, "ads"})
	check(err)
	expect(props["team"] == "ads", "ads has properties %v", props)

	// Creating again fails with a typed error, unless asked to accept it.
	_, err = c.CreateNamespace(ctx, []string{root, "ads"}, nil)
	expect(errors.Is(err, client.ErrNamespaceAlreadyExists), "second create: %v", err)
	_, err = c.CreateNamespace(ctx, []string{root, "ads"}, &client.CreateNamespaceOptions{Mode: client.ModeExistOK})
	check(err)

	// Listing one page at a time ...
	var pages [][]string
	token := ""
	for {
		page, next, err := c.ListNamespacesPage(ctx, []string{root}, token, 2)
		check(err)
		pages = append(pages, page)
		if next == "" {
			break
		}
		token = next
	}
	fmt.Printf("namespaces of %s, two per page: %v\n", root, pages)
	expect(len(pages) == 3, "expected 3 pages, got %v", pages)
	// ... or with an iterator that follows the page tokens.
	var names []string
	for name, err := range c.ListNamespaces(ctx, []string{root}) {
		check(err)
		names = append(names, name)
	}
	expect(slices.Equal(names, slices.Sorted(slices.Values(teams))), "namespaces %v", names)

	// Declared tables reserve a name and a location for Lance to write to.
	for _, name := range []string{"clicks", "impressions"} {
		info, err := c.DeclareTable(ctx, []string{root, "ads", name}, &client.DeclareTableOptions{Properties: map[string]string{"source": "kafka"}})
		check(err)
		fmt.Printf("declared %s at %s (versions committed through the catalog: %v)\n", name, info.Location, info.ManagedVersioning)
	}
	var tables []string
	for name, err := range c.ListTables(ctx, []string{root, "ads"}) {
		check(err)
		tables = append(tables, name)
	}
	expect(slices.Equal(tables, []string{"clicks", "impressions"}), "tables %v", tables)
	exists, err := c.TableExists(ctx, []string{root, "ads", "clicks"}, nil)
	check(err)
	expect(exists, "clicks does not exist")

	// Each Lance error code has a sentinel for errors.Is; *client.Error
	// carries the HTTP status and the server's message.
	_, err = c.DescribeNamespace(ctx, []string{root, "nope"})
	expect(errors.Is(err, client.ErrNamespaceNotFound), "describe missing: %v", err)
	var apiErr *client.Error
	expect(errors.As(err, &apiErr) && apiErr.StatusCode == 404, "missing namespace: %#v", err)
	fmt.Printf("a missing namespace: HTTP %d, code %d (%s)\n", apiErr.StatusCode, apiErr.Code(), apiErr.Code())

	_, err = c.DropNamespace(ctx, []string{root, "ads"}, nil)
	expect(errors.Is(err, client.ErrNamespaceNotEmpty), "drop of a namespace with tables: %v", err)
	_, err = c.DescribeTable(ctx, []string{root, "ads", "views"}, nil)
	expect(errors.Is(err, client.ErrTableNotFound), "describe missing table: %v", err)
	_, err = c.DropNamespace(ctx, []string{root, "ads"}, &client.DropNamespaceOptions{Behavior: client.BehaviorCascade})
	check(err)
	ok, err := c.NamespaceExists(ctx, []string{root, "ads"})
	check(err)
	expect(!ok, "ads still exists after the cascading drop")
	fmt.Println("catalog example: ok")
}

// connect returns a client for the server at LANCENS_URL (default
// http://localhost:2333) that sends the API key in LANCENS_API_KEY, or
// the bearer token in LANCENS_TOKEN, when they are set.
func connect() (*client.Client, error) {
	url := os.Getenv("LANCENS_URL")
	if url == "" {
		url = "http://localhost:2333"
	}
	var opts []client.Option
	if key := os.Getenv("LANCENS_API_KEY"); key != "" {
		opts = append(opts, client.WithAPIKey(key))
	}
	if token := os.Getenv("LANCENS_TOKEN"); token != "" {
		opts = append(opts, client.WithBearerToken(token))
	}
	return client.New(url, opts...)
}

func check(err error) {
	if err != nil {
		log.Fatal(err)
	}
}

func expect(ok bool, format string, args ...any) {
	if !ok {
		log.Fatalf(format, args...)
	}
}
