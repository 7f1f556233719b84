package client_test

// These examples need a running server, so they are compiled but not run;
// examples/ holds complete programs that make test runs against lancens.

import (
	"context"
	"errors"
	"fmt"
	"log"
	"net/http"
	"time"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/lancens/lancens/client"
)

// Doc is a row of the examples' table.
type Doc struct {
	ID     int64     `arrow:"id"`
	Text   string    `arrow:"text"`
	Vector []float32 `arrow:"vector,fixed_size=3"`
}

func ExampleNew() {
	c, err := client.New("https://lance.example.com",
		client.WithAPIKey("my-key"),
		client.WithHTTPClient(&http.Client{Timeout: time.Minute}),
		client.WithRetry(client.RetryPolicy{MaxRetries: 5, BaseDelay: 200 * time.Millisecond, MaxDelay: 10 * time.Second}),
	)
	if err != nil {
		log.Fatal(err)
	}
	_ = c
}

func ExampleClient_Table() {
	ctx := context.Background()
	c, _ := client.New("http://localhost:2333")
	docs := c.Table("prod", "docs") // the table docs in namespace prod
	rows := []Doc{
		{ID: 1, Text: "rivers and mountains", Vector: []float32{0.1, 0.2, 0.3}},
		{ID: 2, Text: "cats and dogs", Vector: []float32{0.3, 0.2, 0.1}},
	}
	if _, err := docs.Create(ctx, client.Structs(rows), nil); err != nil {
		log.Fatal(err)
	}
	if _, err := docs.Add(ctx, client.Structs([]Doc{{ID: 3, Text: "a quiet lake", Vector: []float32{0, 0, 1}}})); err != nil {
		log.Fatal(err)
	}
	n, _ := docs.CountRows(ctx, "id > 1")
	fmt.Println(n, "rows")
}

func ExampleTable_Search() {
	ctx := context.Background()
	c, _ := client.New("http://localhost:2333")
	docs := c.Table("docs")
	type hit struct {
		ID       int64   `arrow:"id"`
		Text     string  `arrow:"text"`
		Distance float32 `arrow:"_distance"`
	}
	q := docs.Search([]float32{0.1, 0.2, 0.3}).Where("id > 0").DistanceType(client.DistanceCosine).Limit(5)
	for h, err := range client.Scan[hit](ctx, q) {
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println(h.ID, h.Text, h.Distance)
	}
}

func ExampleTable_FullTextSearch() {
	ctx := context.Background()
	c, _ := client.New("http://localhost:2333")
	docs := c.Table("docs")
	if err := docs.CreateIndex(ctx, "text", client.FTS{Stem: client.Ptr(true)}, nil); err != nil {
		log.Fatal(err)
	}
	for row, err := range docs.FullTextSearch("mountains", "text").Select("id", "text").Limit(10).Iter(ctx) {
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println(row["id"], row["text"], row["_score"])
	}
}

func ExampleTable_CreateIndex() {
	ctx := context.Background()
	c, _ := client.New("http://localhost:2333")
	docs := c.Table("docs")
	cfg := client.IVFPQ{DistanceType: client.DistanceL2, NumPartitions: 256, NumSubVectors: 16}
	if err := docs.CreateIndex(ctx, "vector", cfg, &client.IndexOptions{Name: "vector_idx"}); err != nil {
		log.Fatal(err)
	}
	wait, cancel := context.WithTimeout(ctx, 10*time.Minute)
	defer cancel()
	if err := docs.WaitForIndex(wait, "vector_idx"); err != nil {
		log.Fatal(err)
	}
}

func ExampleTable_MergeInsert() {
	ctx := context.Background()
	c, _ := client.New("http://localhost:2333")
	changes := []Doc{{ID: 2, Text: "cats and dogs, updated", Vector: []float32{0.3, 0.2, 0.1}}}
	res, err := c.Table("docs").MergeInsert("id").
		WhenMatchedUpdateAll().
		WhenNotMatchedInsertAll().
		Execute(ctx, client.Structs(changes))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.Inserted, "inserted,", res.Updated, "updated, version", res.Version)
}

func ExampleTable_Checkout() {
	ctx := context.Background()
	c, _ := client.New("http://localhost:2333")
	docs := c.Table("docs")
	if err := docs.Tags().Create(ctx, "before-cleanup", 3); err != nil {
		log.Fatal(err)
	}
	v3, err := docs.Checkout(ctx, 3)
	if err != nil {
		log.Fatal(err)
	}
	tbl, err := v3.Query().Where("id < 10").ToArrow(ctx)
	if err != nil {
		log.Fatal(err)
	}
	defer tbl.Release()
	fmt.Println(tbl.NumRows(), "rows at version 3")
	if err := docs.Restore(ctx, 3); err != nil { // version 3 becomes the latest again
		log.Fatal(err)
	}
}

func ExampleTable_AlterColumns() {
	ctx := context.Background()
	c, _ := client.New("http://localhost:2333")
	docs := c.Table("docs")
	if _, err := docs.AddColumns(ctx, client.NewColumn{Name: "text_length", Expression: "length(text)"}); err != nil {
		log.Fatal(err)
	}
	if _, err := docs.AlterColumns(ctx,
		client.ColumnAlteration{Path: "text", Rename: "body"},
		client.ColumnAlteration{Path: "text_length", DataType: arrow.PrimitiveTypes.Int64},
	); err != nil {
		log.Fatal(err)
	}
	if _, err := docs.DropColumns(ctx, "text_length"); err != nil {
		log.Fatal(err)
	}
}

func ExampleMaps() {
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64},
		{Name: "vector", Type: arrow.FixedSizeListOf(3, arrow.PrimitiveTypes.Float32), Nullable: true},
	}, nil)
	data := client.Maps(schema, []map[string]any{
		{"id": 1, "vector": []float32{1, 0, 0}},
		{"id": 2}, // vector is null
	})
	c, _ := client.New("http://localhost:2333")
	if _, err := c.Table("points").Add(context.Background(), data); err != nil {
		log.Fatal(err)
	}
}

func ExampleError() {
	ctx := context.Background()
	c, _ := client.New("http://localhost:2333")
	_, err := c.CreateNamespace(ctx, []string{"prod"}, nil)
	switch {
	case errors.Is(err, client.ErrNamespaceAlreadyExists):
		fmt.Println("prod exists already")
	case err != nil:
		var e *client.Error
		if errors.As(err, &e) {
			log.Fatalf("HTTP %d, Lance code %d (%s): %s", e.StatusCode, e.Code(), e.Code(), e.Message())
		}
		log.Fatal(err) // a transport error
	}
}

func ExampleClient_BatchCommit() {
	ctx := context.Background()
	c, _ := client.New("http://localhost:2333")
	// Lance wrote (staged) a new manifest for each table; commit both
	// versions or neither.
	_, txID, err := c.BatchCommit(ctx,
		client.BatchOp{ID: []string{"orders"}, CommitVersion: &client.VersionCommit{Version: 8, ManifestPath: "/data/orders.lance/_versions/staged-8"}},
		client.BatchOp{ID: []string{"stock"}, CommitVersion: &client.VersionCommit{Version: 3, ManifestPath: "/data/stock.lance/_versions/staged-3"}},
	)
	if errors.Is(err, client.ErrConcurrentModification) {
		log.Fatal("another writer committed first; nothing was committed")
	}
	fmt.Println("committed in transaction", txID)
}
