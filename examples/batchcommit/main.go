// Command batchcommit uses lancens as the commit coordinator of tables whose
// files Lance writes itself (LanceDB's namespace mode): it declares two
// tables, and commits a version of both in one atomic batch, so that a
// reader never sees one table updated without the other.
//
// A Lance writer stages each version's manifest in the table's directory
// and then asks the catalog to commit it; this program stands in for that
// writer with placeholder manifests, so it must see the server's warehouse
// directory (run it on the server's machine). It talks to the server at
// LANCENS_URL (default http://localhost:2333), with the API key in
// LANCENS_API_KEY or the bearer token in LANCENS_TOKEN if it needs one,
// works in a namespace of its own that it drops at the end, and exits
// non-zero on any failure.
package main

import (
	"context"
	"errors"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/lancens/lancens/client"
)

func main() {
	ctx := context.Background()
	c, err := connect()
	check(err)
	ns := fmt.Sprintf("batch_example_%d", time.Now().UnixNano())
	_, err = c.CreateNamespace(ctx, []string{ns}, nil)
	check(err)
	defer func() {
		_, err := c.DropNamespace(ctx, []string{ns}, &client.DropNamespaceOptions{Behavior: client.BehaviorCascade})
		check(err)
	}()
	orders, stock := []string{ns, "orders"}, []string{ns, "stock"}

	// Declare both tables in one batch; the server chooses their locations.
	results, _, err := c.BatchCommit(ctx,
		client.BatchOp{ID: orders, Declare: &client.DeclareTableOptions{}},
		client.BatchOp{ID: stock, Declare: &client.DeclareTableOptions{}},
	)
	check(err)
	locations := map[string]string{}
	for i, id := range [][]string{orders, stock} {
		loc := results[i].Declared.Location
		expect(filepath.IsAbs(loc), "location %q is not a local directory; run this next to the server", loc)
		locations[id[1]] = loc
		fmt.Printf("declared %s at %s\n", id[1], loc)
	}

	// Versions 1 and 2 of both tables, each pair committed atomically.
	for v := int64(1); v <= 2; v++ {
		results, txID, err := c.BatchCommit(ctx,
			client.BatchOp{ID: orders, CommitVersion: &client.VersionCommit{Version: v, ManifestPath: stage(locations["orders"], v)}},
			client.BatchOp{ID: stock, CommitVersion: &client.VersionCommit{Version: v, ManifestPath: stage(locations["stock"], v)}},
		)
		check(err)
		fmt.Printf("committed version %d of both tables (transaction %s): %s\n", v, txID, results[0].Version.ManifestPath)
	}

	// A batch with one stale entry commits nothing: version 2 of stock
	// exists already, so version 3 of orders is not committed either.
	_, _, err = c.BatchCommit(ctx,
		client.BatchOp{ID: orders, CommitVersion: &client.VersionCommit{Version: 3, ManifestPath: stage(locations["orders"], 3)}},
		client.BatchOp{ID: stock, CommitVersion: &client.VersionCommit{Version: 2, ManifestPath: stage(locations["stock"], 2)}},
	)
	expect(errors.Is(err, client.ErrConcurrentModification), "a conflicting batch: %v", err)
	for _, id := range [][]string{orders, stock} {
		latest, err := c.LatestTableVersion(ctx, id, "")
		check(err)
		expect(latest.Version == 2, "%s is at version %d after the refused batch", id[1], latest.Version)
		fmt.Printf("%s stays at version %d\n", id[1], latest.Version)
	}

	// The same, commit only: BatchCreateTableVersions.
	versions, _, err := c.CommitVersions(ctx,
		client.TableCommit{ID: orders, VersionCommit: client.VersionCommit{Version: 3, ManifestPath: stage(locations["orders"], 3)}},
		client.TableCommit{ID: stock, VersionCommit: client.VersionCommit{Version: 3, ManifestPath: stage(locations["stock"], 3)}},
	)
	check(err)
	expect(len(versions) == 2 && versions[1].Version == 3, "versions %+v", versions)

	// Readers find the latest version through the catalog, and the
	// manifest lancens put in place.
	latest, err := c.DescribeTableVersion(ctx, orders, "", nil)
	check(err)
	expect(strings.Contains(latest.ManifestPath, "_versions"), "manifest path %q", latest.ManifestPath)
	fmt.Printf("orders: latest version %d, manifest %s\n", latest.Version, latest.ManifestPath)

	// Batches also delete version records and deregister tables.
	results, _, err = c.BatchCommit(ctx,
		client.BatchOp{ID: orders, DeleteVersions: &client.BatchDelete{Ranges: []client.VersionRange{{Start: 1, End: 2}}}},
		client.BatchOp{ID: stock, Deregister: true},
	)
	check(err)
	expect(results[0].DeletedCount == 1 && results[1].Deregistered != nil, "results %+v", results)
	exists, err := c.TableExists(ctx, stock, nil)
	check(err)
	expect(!exists, "stock is still registered")
	fmt.Println("batchcommit example: ok")
}

// stage writes a placeholder manifest for version v into the table
// directory, as a Lance writer stages its manifest, and returns its path.
func stage(tableDir string, v int64) string {
	dir := filepath.Join(tableDir, "_versions")
	check(os.MkdirAll(dir, 0o755))
	path := filepath.Join(dir, fmt.Sprintf("staged-%d-%d.manifest", v, time.Now().UnixNano()))
	check(os.WriteFile(path, []byte(fmt.Sprintf("manifest of version %d", v)), 0o644))
	return path
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
