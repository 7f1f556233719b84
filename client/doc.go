// Package client is a typed Go client for servers of the Lance Namespace
// REST API: lancens, LanceDB Cloud or Enterprise, or any other
// implementation of the spec. It has a method for each of the API's 54
// operations, and a table handle and query builder in the manner of the
// LanceDB SDKs.
//
// # Connecting
//
// New takes the server's base URL and options for credentials
// (WithAPIKey, WithBearerToken), extra headers, an *http.Client, retries
// and timeouts:
//
//	c, err := client.New("http://localhost:2333", client.WithAPIKey(key))
//
// Calls that only read are retried when the server answers 429 or 503
// (DefaultRetryPolicy: three times, with exponential backoff and jitter);
// calls that change something are never repeated.
//
// # Identifiers
//
// Namespaces and tables are named by identifiers: the names from the root
// down, as []string. The root namespace is the empty identifier. In request
// paths names are joined with "$" (see WithDelimiter for names that
// contain it).
//
// # Errors
//
// Every error the server answers is an *Error carrying the HTTP status and
// the Lance error code and message; errors.Is matches it against the
// sentinels of this package, one per code (ErrTableNotFound, …):
//
//	if _, err := c.DescribeTable(ctx, []string{"docs"}, nil); errors.Is(err, client.ErrTableNotFound) { … }
//
// Mistakes the client catches before sending (such as an invalid
// identifier) match ErrInvalidInput.
//
// # Tables and queries
//
// Client.Table returns a handle on a table whose rows the server keeps.
// Rows go in as Data: Go structs with arrow tags (Structs), maps with an
// Arrow schema (Maps), or Arrow record batches (Records, FromReader).
// Queries start with Table.Search (nearest vectors), Table.FullTextSearch or
// Table.Query (a scan), and end in ToArrow, Reader, Iter or Scan:
//
//	type Doc struct {
//		ID     int64     `arrow:"id"`
//		Text   string    `arrow:"text"`
//		Vector []float32 `arrow:"vector,fixed_size=3"`
//	}
//	docs := c.Table("docs")
//	_, err := docs.Create(ctx, client.Structs([]Doc{{1, "hello", []float32{1, 0, 0}}}), nil)
//	hits, err := client.ScanAll[Doc](ctx, docs.Search([]float32{1, 0, 0}).Where("id > 0").Limit(5))
//
// # Catalog and commit coordination
//
// For tables whose files Lance writes itself (LanceDB's namespace mode), the
// catalog calls declare and describe tables (DeclareTable, DescribeTable),
// commit versions (CreateTableVersion, CommitVersions, BatchCommit, which
// commit across tables atomically) and manage tags, branches and
// transactions.
//
// Client.Query runs a query given whole as a QueryRequest, which has every
// member of the API's request; OnBranch returns a client whose data calls
// act on a branch of each table.
//
// # Standing alone
//
// The package imports no other package of lancens but the client code
// generated from the spec (gen/apiclient), which needs only the standard
// library and oapi-codegen's runtime: a program using it links no server,
// database or object-store code. Its errors carry the Lance codes in a
// Code of its own.
//
// # What the typed methods leave out
//
// Raw returns the generated client (package gen/apiclient, standalone too),
// for what the typed methods do not expose: virtual (UDF) columns and the
// identity and context members of request bodies.
package client
