// Command search builds a table whose rows lancens keeps from Go structs,
// indexes it for vector and full-text search, and queries it: nearest
// neighbours with a filter, full-text search, a sorted scan, and a query
// plan.
//
// It talks to the server at LANCENS_URL (default http://localhost:2333),
// with the API key in LANCENS_API_KEY or the bearer token in LANCENS_TOKEN
// if it needs one, works in a namespace of its own that it drops at the
// end, and exits non-zero on any failure.
package main

import (
	"context"
	"fmt"
	"log"
	"math"
	"os"
	"strings"
	"time"

	"github.com/lancens/lancens/client"
)

// Article is one row. The arrow tags name the columns; the vector is a
// fixed-size list of 8 float32.
type Article struct {
	ID       int64     `arrow:"id"`
	Title    string    `arrow:"title"`
	Topic    string    `arrow:"topic"`
	Views    int32     `arrow:"views"`
	Embedded []float32 `arrow:"embedding,fixed_size=8"`
}

// Hit is a search result: some columns and the distance to the query.
type Hit struct {
	ID       int64   `arrow:"id"`
	Title    string  `arrow:"title"`
	Distance float32 `arrow:"_distance"`
}

var topics = []string{"rivers", "mountains", "cities", "forests"}

// articles makes n rows whose embeddings cluster by topic.
func articles(n int) []Article {
	out := make([]Article, n)
	for i := range out {
		topic := i % len(topics)
		vec := make([]float32, 8)
		for d := range vec {
			vec[d] = float32(math.Sin(float64(i*7+d))) * 0.1
		}
		vec[topic*2] += 1
		out[i] = Article{
			ID: int64(i), Topic: topics[topic], Views: int32(i * 37 % 1000), Embedded: vec,
			Title: fmt.Sprintf("Notes on %s, part %d", topics[topic], i/len(topics)+1),
		}
	}
	return out
}

func main() {
	ctx := context.Background()
	c, err := connect()
	check(err)
	ns := fmt.Sprintf("search_example_%d", time.Now().UnixNano())
	_, err = c.CreateNamespace(ctx, []string{ns}, nil)
	check(err)
	defer func() {
		_, err := c.DropNamespace(ctx, []string{ns}, &client.DropNamespaceOptions{Behavior: client.BehaviorCascade})
		check(err)
	}()

	// Create the table from Go values, then append more.
	tbl := c.Table(ns, "articles")
	rows := articles(200)
	_, err = tbl.Create(ctx, client.Structs(rows[:150]), nil)
	check(err)
	res, err := tbl.Add(ctx, client.Structs(rows[150:]))
	check(err)
	fmt.Printf("added %d rows, table at version %d\n", res.Inserted, res.Version)

	// A vector index, built in the background, and a full-text index.
	check(tbl.CreateIndex(ctx, "embedding", client.IVFPQ{DistanceType: client.DistanceL2, NumPartitions: 4, NumSubVectors: 2}, nil))
	check(tbl.CreateIndex(ctx, "title", client.FTS{Stem: client.Ptr(true)}, nil))
	wait, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	check(tbl.WaitForIndex(wait, "embedding_idx", "title_idx"))
	indexes, err := tbl.ListIndices(ctx)
	check(err)
	for _, ix := range indexes {
		fmt.Printf("index %s: %s on %v, %d rows indexed\n", ix.Name, ix.Type, ix.Columns, ix.NumIndexedRows)
	}

	// Nearest neighbours of a "mountains" vector among popular articles.
	query := make([]float32, 8)
	query[2] = 1
	hits, err := client.ScanAll[Hit](ctx, tbl.Search(query).Where("views > 100").Nprobes(4).RefineFactor(2).Limit(5))
	check(err)
	expect(len(hits) == 5, "got %d hits", len(hits))
	for _, h := range hits {
		fmt.Printf("  %-28s distance %.3f\n", h.Title, h.Distance)
		expect(strings.Contains(h.Title, "mountains"), "%q is not about mountains", h.Title)
	}

	// Full-text search, rows as maps.
	n := 0
	for row, err := range tbl.FullTextSearch("river", "title").Select("id", "title").Limit(3).Iter(ctx) {
		check(err)
		fmt.Printf("  text hit %v: %v (score %.2f)\n", row["id"], row["title"], row["_score"])
		expect(strings.Contains(row["title"].(string), "rivers"), "text hit %v", row)
		n++
	}
	expect(n == 3, "got %d text hits", n)

	// A scan, sorted, as an Arrow table.
	top, err := tbl.Query().Select("id", "views").Where("topic = 'cities'").OrderBy(client.Desc("views")).Limit(3).ToArrow(ctx)
	check(err)
	defer top.Release()
	expect(top.NumRows() == 3, "top cities: %d rows", top.NumRows())
	fmt.Printf("the three most viewed city articles: %v\n", top.Column(0).Data().Chunk(0))

	count, err := tbl.CountRows(ctx, "topic = 'forests'")
	check(err)
	expect(count == 50, "%d forest articles", count)

	plan, err := tbl.Search(query).Where("views > 100").Limit(5).Explain(ctx, false)
	check(err)
	fmt.Printf("plan:\n%s\n", plan)
	expect(strings.Contains(plan, "IVF_PQ"), "the plan does not use the index: %s", plan)
	fmt.Println("search example: ok")
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
