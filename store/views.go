package store

import (
	"context"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
)

// Kinds of materialized view, as the API names them.
const (
	// ViewQuery is defined by a query over a source table: one output row
	// per input row.
	ViewQuery = "query"
	// ViewUDTF runs a batch table function.
	ViewUDTF = "udtf"
	// ViewChunker expands each input row into several.
	ViewChunker = "chunker"
)

// CheckViewKind returns nil for the kind of view lancens computes (query),
// Unsupported (0) naming the kind for the other kinds the API has, and
// InvalidInput (13) for an unknown kind.
func CheckViewKind(kind string) error {
	switch kind {
	case ViewQuery:
		return nil
	case ViewUDTF, ViewChunker:
		return Errorf(CodeUnsupported, "materialized views of kind %s run Python table functions, which lancens does not execute; it offers kind query", kind)
	}
	return Errorf(CodeInvalidInput, "unknown materialized view kind %q (query, udtf or chunker)", kind)
}

// RunnableViewQueries names the forms of source_query lancens runs to
// refresh a view, for messages.
const RunnableViewQueries = `the JSON body of a QueryTableRequest whose id names the source table ` +
	`({"id": ["ns", "t"], "filter": "x > 1", "k": 0}), or SQL over one table (SELECT <columns> FROM <table> [WHERE <filter>])`

// ViewDefinition describes a materialized view to create.
type ViewDefinition struct {
	// Kind is ViewQuery: the only kind lancens computes.
	Kind string
	// SourceQuery is the definition as the client sent it, kept verbatim.
	SourceQuery string
	// Source is the table the query reads; nil when SourceQuery is in a
	// form lancens does not run (a format of the client's own): the view
	// is then stored, described and dropped, but never refreshed.
	Source []string
	// Query is what a refresh reads from the source; its Version is
	// ignored (a refresh names the version).
	Query Query
	// Schema is the schema of the view's rows.
	Schema *arrow.Schema
	// AutoRefresh queues a refresh whenever a write changes the source.
	AutoRefresh bool
}

// View describes a materialized view: a managed table whose rows a refresh
// computes from its source.
type View struct {
	Kind        string
	SourceQuery string
	// Source is the source table's identifier, nil when it was dropped.
	Source     []string
	SourceUUID string
	// SourceVersion is the version of the source the view's rows reflect;
	// nil until the first refresh.
	SourceVersion *int64
	RefreshedAt   time.Time
	AutoRefresh   bool
	// Query is what a refresh reads from the source, nil for a view whose
	// source_query lancens does not run (filled by ViewCatalog only).
	Query *Query
}

// ViewRecord is the definition of a materialized view as the catalog keeps
// it beside the view's table entry.
type ViewRecord struct {
	Kind        string
	SourceQuery string
	// SourceUUID is the source table's uuid; "" for a view whose
	// source_query lancens does not run, which is never refreshed.
	SourceUUID string
	// Query is what a refresh reads from the source (its Version
	// ignored); nil when SourceUUID is "".
	Query       *Query
	AutoRefresh bool
}

// Views keeps materialized views.
type Views interface {
	// CreateView creates managed table id as a materialized view of def,
	// empty, as its version 1; with refresh it also queues a first
	// refresh (never for a view with no Source). It returns the table, the
	// version and the refresh job's transaction id ("" when none). Returns
	// NamespaceNotFound (1),
	// TableAlreadyExists (5), TableNotFound (4) for a missing source,
	// InvalidTableState (19) for a source whose rows lancens does not
	// keep, TableSchemaValidationError (20) when the query's rows do not
	// fit the schema, the query's own errors (12, 13), and Unsupported (0)
	// for a kind lancens does not compute.
	CreateView(ctx context.Context, id []string, def ViewDefinition, refresh bool) (*Table, WriteResult, string, error)

	// QueueRefresh queues a refresh of view id from version sourceVersion
	// of its source (nil: the latest when the refresh runs) and returns the
	// job's transaction id. Returns TableNotFound (4), InvalidInput (13)
	// when id is not a materialized view, Unsupported (0) naming the forms
	// lancens runs (RunnableViewQueries) for one whose source_query is in
	// another.
	QueueRefresh(ctx context.Context, id []string, sourceVersion *int64) (string, error)

	// RefreshView recomputes a view as a queued job describes: the rows of
	// its query over the source replace its rows in one new version, which
	// records the source version. Returns TableNotFound (4) when the view
	// or its source is gone, TableVersionNotFound (11) for a source version
	// that does not exist.
	RefreshView(ctx context.Context, job RefreshView) (WriteResult, error)
}
