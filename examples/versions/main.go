// Command versions shows that every write makes a version: it updates and
// deletes rows, evolves the schema, tags versions, reads old versions back
// (time travel) and restores one.
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
	"time"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/lancens/lancens/client"
)

// Product is one row; Price is nullable because it is a pointer.
type Product struct {
	SKU   string   `arrow:"sku"`
	Name  string   `arrow:"name"`
	Price *float64 `arrow:"price"`
	Stock int32    `arrow:"stock"`
}

func price(p float64) *float64 { return &p }

func main() {
	ctx := context.Background()
	c, err := connect()
	check(err)
	ns := fmt.Sprintf("versions_example_%d", time.Now().UnixNano())
	_, err = c.CreateNamespace(ctx, []string{ns}, nil)
	check(err)
	defer func() {
		_, err := c.DropNamespace(ctx, []string{ns}, &client.DropNamespaceOptions{Behavior: client.BehaviorCascade})
		check(err)
	}()

	tbl := c.Table(ns, "products")
	_, err = tbl.Create(ctx, client.Structs([]Product{
		{SKU: "A-1", Name: "kettle", Price: price(30), Stock: 4},
		{SKU: "B-2", Name: "toaster", Price: price(45), Stock: 0},
		{SKU: "C-3", Name: "mug", Stock: 120},
	}), nil)
	check(err)
	check(tbl.Tags().Create(ctx, "launch", 1))

	// Each write makes a version. Update takes Go values, written as SQL
	// literals; UpdateSQL takes expressions over the row.
	_, err = tbl.Update(ctx, "sku = 'C-3'", map[string]any{"price": 7.5, "name": "mug 'classic'"})
	check(err)
	_, err = tbl.UpdateSQL(ctx, "price IS NOT NULL", map[string]string{"price": "price * 1.1"})
	check(err)
	del, err := tbl.Delete(ctx, "stock = 0")
	check(err)
	fmt.Printf("deleted %d out-of-stock rows in version %d\n", del.Deleted, del.Version)

	// Schema evolution: computed column, rename, cast, drop.
	_, err = tbl.AddColumns(ctx, client.NewColumn{Name: "value", Expression: "price * stock"})
	check(err)
	_, err = tbl.AlterColumns(ctx,
		client.ColumnAlteration{Path: "name", Rename: "title"},
		client.ColumnAlteration{Path: "stock", DataType: arrow.PrimitiveTypes.Int64},
	)
	check(err)
	_, err = tbl.DropColumns(ctx, "value")
	check(err)
	schema, err := tbl.Schema(ctx)
	check(err)
	fmt.Printf("latest schema: %v\n", schema)
	expect(schema.HasField("title") && !schema.HasField("name") && !schema.HasField("value"), "schema %v", schema)

	latest, err := tbl.Version(ctx)
	check(err)
	for v, err := range tbl.Versions(ctx) {
		check(err)
		fmt.Printf("version %d at %s\n", v.Version, v.Timestamp.Format(time.RFC3339))
	}
	expect(latest == 7, "latest version %d, want 7", latest)

	// Time travel: a handle checked out at a tag reads that version, with
	// its schema. It cannot write.
	launch, err := tbl.CheckoutTag(ctx, "launch")
	check(err)
	old, err := client.ScanAll[Product](ctx, launch.Query().OrderBy(client.Asc("sku")))
	check(err)
	expect(len(old) == 3 && old[1].Name == "toaster" && *old[0].Price == 30, "launch rows %+v", old)
	_, err = launch.Add(ctx, client.Structs([]Product{{SKU: "X"}}))
	expect(errors.Is(err, client.ErrInvalidInput), "a write through a checked-out handle: %v", err)
	v3, err := tbl.Checkout(ctx, 3)
	check(err)
	n, err := v3.CountRows(ctx, "price > 40")
	check(err)
	expect(n == 1, "version 3 has %d rows priced over 40", n)

	_, err = tbl.Checkout(ctx, 99)
	expect(errors.Is(err, client.ErrTableVersionNotFound), "checkout of a missing version: %v", err)

	// Restore makes an old version the newest one.
	check(tbl.Restore(ctx, 1))
	rows, err := tbl.CountRows(ctx, "")
	check(err)
	schema, err = tbl.Schema(ctx)
	check(err)
	expect(rows == 3 && schema.HasField("name"), "after restore: %d rows, schema %v", rows, schema)
	tags, err := collectTags(ctx, tbl)
	check(err)
	fmt.Printf("restored version 1 as the latest; tags: %v\n", tags)
	fmt.Println("versions example: ok")
}

func collectTags(ctx context.Context, tbl *client.Table) (map[string]int64, error) {
	out := map[string]int64{}
	for tag, err := range tbl.Tags().List(ctx) {
		if err != nil {
			return nil, err
		}
		out[tag.Name] = tag.Version
	}
	return out, nil
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
