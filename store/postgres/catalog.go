package postgres

// The catalog (namespaces, table entries, versions, batches, tags,
// branches, transaction records) is package sqlcatalog's, shared with
// store/sqlite. This file gives it PostgreSQL's transactions and dialect.

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/lancens/lancens/store"
	"github.com/lancens/lancens/store/sqlcatalog"
)

var _ store.Backend = (*DB)(nil)

// catalog is the name under which DB embeds the shared catalog, whose
// methods implement the catalog interfaces of store.
type catalog = sqlcatalog.Catalog

// transactions runs the catalog's transactions (see DB.write, writeTable
// and read).
type transactions struct{ db *DB }

func (t transactions) Read(ctx context.Context, fn func(tx sqlcatalog.Tx) error) error {
	return t.db.read(ctx, func(tx *tx) error { return fn(catalogTx{tx}) })
}

func (t transactions) Write(ctx context.Context, fn func(tx sqlcatalog.Tx) error) error {
	return t.db.write(ctx, func(tx *tx) error { return fn(catalogTx{tx}) })
}

func (t transactions) WriteTable(ctx context.Context, fn func(tx sqlcatalog.Tx) error) error {
	return t.db.writeTable(ctx, func(tx *tx) error { return fn(catalogTx{tx}) })
}

// catalogTx is a transaction as the catalog uses it. Its statements get
// PostgreSQL's placeholders (rebind); pgx then prepares each text once per
// connection and keeps it (its statement cache).
type catalogTx struct{ tx *tx }

func (c catalogTx) Exec(ctx context.Context, query string, args ...any) (int64, error) {
	tag, err := c.tx.Exec(ctx, rebind(query), args...)
	if err != nil {
		return 0, err
	}
	return tag.RowsAffected(), nil
}

func (c catalogTx) QueryRow(ctx context.Context, query string, args ...any) sqlcatalog.Row {
	return c.tx.QueryRow(ctx, rebind(query), args...)
}

func (c catalogTx) Query(ctx context.Context, query string, args ...any) (sqlcatalog.Rows, error) {
	rows, err := c.tx.Query(ctx, rebind(query), args...)
	if err != nil {
		return nil, err
	}
	return catalogRows{rows}, nil
}

func (c catalogTx) Now() time.Time { return c.tx.now }

func (c catalogTx) JobQueued(ctx context.Context) error { return c.tx.queueJob(ctx) }

// catalogRows gives pgx's rows the Close of database/sql's.
type catalogRows struct{ pgx.Rows }

func (r catalogRows) Close() error {
	r.Rows.Close()
	return nil
}

// dialect is PostgreSQL's SQL for the catalog.
type dialect struct{}

func (dialect) NoRows(err error) bool { return errors.Is(err, pgx.ErrNoRows) }

func (dialect) UniqueViolation(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && pe.Code == uniqueViolation
}

// RowLocks is true: writers of different tables run concurrently, and
// writers of one table one after the other, under its row lock.
func (dialect) RowLocks() bool { return true }

// InList reads a list parameter as a text array.
func (dialect) InList(column string) string {
	return column + ` = ANY(CAST(? AS text[]))`
}

func (dialect) List(values []string) any {
	if values == nil {
		return []string{}
	}
	return values
}

// walkNamespaces is a query that follows the names in its parameter (a
// text array) down from the root and yields the deepest namespace reached
// (id) and how many names it followed (depth).
const walkNamespaces = `WITH RECURSIVE walk (id, depth, names) AS (
		SELECT 1::bigint, 0, CAST(? AS text[])
		UNION ALL
		SELECT n.id, w.depth + 1, w.names FROM walk w JOIN namespaces n ON n.parent_id = w.id AND n.name = w.names[w.depth + 1]
		WHERE w.depth < cardinality(w.names)
	)
	SELECT id, depth FROM walk ORDER BY depth DESC LIMIT 1`

// WalkNamespaces follows id in one query, however deep it is: one round
// trip to the server.
func (dialect) WalkNamespaces(ctx context.Context, tx sqlcatalog.Tx, id []string) (int64, int, error) {
	var rowID int64
	var depth int
	err := tx.QueryRow(ctx, walkNamespaces, id).Scan(&rowID, &depth)
	return rowID, depth, err
}

// rebound holds the PostgreSQL text of each catalog statement.
var rebound struct {
	sync.RWMutex
	texts map[string]string
}

// rebind returns query with its placeholders (?) numbered $1, $2, … in
// order, as PostgreSQL wants them; a ? inside quotes is text and stays.
// The catalog's statements are fixed texts, so each is rewritten once.
func rebind(query string) string {
	rebound.RLock()
	q, ok := rebound.texts[query]
	rebound.RUnlock()
	if ok {
		return q
	}
	var b strings.Builder
	n, quote := 0, byte(0)
	for i := 0; i < len(query); i++ {
		c := query[i]
		switch {
		case quote != 0:
			if c == quote {
				quote = 0
			}
		case c == '\'' || c == '"':
			quote = c
		case c == '?':
			n++
			b.WriteString("$" + strconv.Itoa(n))
			continue
		}
		b.WriteByte(c)
	}
	q = b.String()
	rebound.Lock()
	if rebound.texts == nil {
		rebound.texts = map[string]string{}
	}
	rebound.texts[query] = q
	rebound.Unlock()
	return q
}
