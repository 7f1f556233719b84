package sqlcatalog

import (
	"context"
	crand "crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/lancens/lancens/store"
)

// Tx is one transaction of a backend, as the catalog uses it. Every query is
// fixed text with positional placeholders (?), one per argument in order:
// a backend whose database numbers its parameters rewrites them (see the
// package comment).
type Tx interface {
	// Exec runs a statement and returns how many rows it changed.
	Exec(ctx context.Context, query string, args ...any) (int64, error)
	// QueryRow runs a query of at most one row; its Scan reports the
	// dialect's no-row error when there is none.
	QueryRow(ctx context.Context, query string, args ...any) Row
	// Query runs a query of any number of rows.
	Query(ctx context.Context, query string, args ...any) (Rows, error)
	// Now returns the time the transaction started, in UTC: every time an
	// operation records agrees.
	Now() time.Time
	// JobQueued notes that the transaction leaves a job queued (see
	// store.Jobs): the backend wakes the job runners once it commits. It
	// returns the error of telling other processes, where the backend
	// does so in the transaction.
	JobQueued(ctx context.Context) error
}

// Row is the result of Tx.QueryRow.
type Row interface {
	Scan(dest ...any) error
}

// Rows is the result of Tx.Query.
type Rows interface {
	Next() bool
	Scan(dest ...any) error
	Err() error
	Close() error
}

// Transactions runs the catalog's transactions. Each function runs fn in a
// new transaction and commits it when fn returns nil; an error of fn undoes
// everything fn did and is returned, classified by the backend (a database
// that cannot serve is ServiceUnavailable (17)). A backend may run fn more
// than once (after a conflict with a concurrent transaction), so fn sets
// its results on every run.
type Transactions interface {
	// Read runs fn in a read-only transaction: one consistent snapshot.
	Read(ctx context.Context, fn func(tx Tx) error) error
	// Write runs fn, a change to the shape of the catalog (namespaces,
	// table entries, batches, transaction records), whose rules span many
	// rows.
	Write(ctx context.Context, fn func(tx Tx) error) error
	// WriteTable runs fn, a change to one table's versions, tags or
	// branches, which takes the table's row lock (see Dialect.RowLocks)
	// before it reads what it checks.
	WriteTable(ctx context.Context, fn func(tx Tx) error) error
}

// Dialect is what the SQL of the two backends spells differently.
type Dialect interface {
	// NoRows reports whether err is the no-row error of Row.Scan.
	NoRows(err error) bool
	// UniqueViolation reports whether err is the violation of a unique
	// constraint or a primary key.
	UniqueViolation(err error) bool
	// RowLocks reports whether concurrent writers of one table must take
	// its row lock (SELECT … FOR UPDATE) to run one after the other. A
	// database that runs one write transaction at a time (SQLite) needs
	// none.
	RowLocks() bool
	// InList returns a condition that is true when column equals one of
	// the strings of a list parameter (one placeholder), which List
	// encodes.
	InList(column string) string
	// List encodes values as one list parameter (see InList).
	List(values []string) any
	// WalkNamespaces follows the names of id down from the root namespace
	// (row 1) and returns the row id of the deepest namespace it reached
	// and how many names it followed: len(id) when the whole of id exists.
	// It returns the database's error.
	WalkNamespaces(ctx context.Context, tx Tx, id []string) (rowID int64, depth int, err error)
}

// Managed is the part of a backend that keeps the rows of an earlier
// release's managed tables, until they are converted into Lance datasets
// (store/sqlite). The catalog calls it inside its own transactions, with
// the backend's Tx, so that the rows and the catalog commit together. Its
// errors stop the operation and are returned as they are.
type Managed interface {
	// Deleting is called before the catalog entry of t is deleted (a drop,
	// a deregistration or an overwrite): what the backend keeps for t
	// goes too.
	Deleting(ctx context.Context, tx Tx, t *Table) error
	// DeleteVersions deletes the version records of managed table t on
	// branch in ranges (checked already), with what only they keep, and
	// returns how many it deleted.
	DeleteVersions(ctx context.Context, tx Tx, t *Table, branch string, ranges []store.VersionRange) (int64, error)
	// BranchCreated is called once branch name of table t is recorded,
	// forked from branch from at version v in transaction txID.
	BranchCreated(ctx context.Context, tx Tx, t *Table, name, from string, v int64, txID string) error
	// BranchDeleting is called before the records of branch name of table
	// t are deleted.
	BranchDeleting(ctx context.Context, tx Tx, t *Table, name string) error
}

// Table is a catalog entry with the row ids the schema keys it by.
type Table struct {
	RowID       int64
	NamespaceID int64
	store.Table
}

// Ops runs the catalog's operations inside a transaction of its backend.
type Ops struct {
	d Dialect
	m Managed // nil: no managed tables
	q statements
}

// NewOps returns the operations of the catalog on a database of dialect d;
// m is nil for a backend that keeps no managed tables.
func NewOps(d Dialect, m Managed) *Ops {
	return &Ops{d: d, m: m, q: newStatements(d, m != nil)}
}

// Catalog implements store.Namespaces, store.Tables, store.Versions,
// store.Batches, store.Tags, store.Branches and store.Transactions, and the
// PendingJobs of store.Probe, in transactions of its backend.
type Catalog struct {
	db  Transactions
	ops *Ops
}

var _ store.Catalog = (*Catalog)(nil)

// New returns the catalog of a backend that runs its transactions with db
// and its statements with ops.
func New(db Transactions, ops *Ops) *Catalog {
	return &Catalog{db: db, ops: ops}
}

// rootNamespaceID is the row id of the root namespace.
const rootNamespaceID = 1

// DisplayID renders an identifier for messages: its names joined by "$",
// or "the root namespace" for none.
func DisplayID(id []string) string {
	if len(id) == 0 {
		return "the root namespace"
	}
	return strings.Join(id, "$")
}

// NewUUID returns a random (version 4) UUID.
func NewUUID() string {
	var b [16]byte
	_, _ = crand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:])
}

// msTime converts milliseconds since the Unix epoch to a UTC time.
func msTime(ms int64) time.Time { return time.UnixMilli(ms).UTC() }

// orEmpty returns m, or an empty map for nil.
func orEmpty(m map[string]string) map[string]string {
	if m == nil {
		return map[string]string{}
	}
	return m
}

// encodeMap returns m as a JSON object ("{}" for nil).
func encodeMap(m map[string]string) (string, error) {
	b, err := json.Marshal(orEmpty(m))
	if err != nil {
		return "", internal("encode map", err)
	}
	return string(b), nil
}

// decodeMap reads a JSON object of strings; "" is an empty map.
func decodeMap(s string) (map[string]string, error) {
	m := map[string]string{}
	if s == "" || s == "{}" { // most maps are empty: no need to parse them
		return m, nil
	}
	if err := json.Unmarshal([]byte(s), &m); err != nil {
		return nil, internal("decode map", err)
	}
	return m, nil
}

// internal wraps an unexpected error of operation op; errors that carry a
// Lance code, and nil, are returned as they are. The backend classifies
// what the database reported when the transaction ends.
func internal(op string, err error) error {
	var se *store.Error
	if err == nil || errors.As(err, &se) {
		return err
	}
	return fmt.Errorf("catalog: %s: %w", op, err)
}

// conflict returns the error of a unique violation err, which the checks
// before the write should have foreseen: code with message, and err as its
// cause, so that a backend that retries conflicts runs the operation again
// (see the package comment).
func conflict(err error, code store.Code, format string, args ...any) error {
	return &store.Error{Code: code, Message: fmt.Sprintf(format, args...), Cause: err}
}

// readTable runs fn on table id in a read transaction.
func (c *Catalog) readTable(ctx context.Context, id []string, fn func(tx Tx, t *Table) error) error {
	return c.db.Read(ctx, func(tx Tx) error {
		t, err := c.ops.FindTable(ctx, tx, id)
		if err != nil {
			return err
		}
		return fn(tx, t)
	})
}

// queryRows runs a query and returns its rows as scan reads each (an
// empty slice for none).
func queryRows[T any](ctx context.Context, tx Tx, scan func(r Row) (T, error), query string, args ...any) ([]T, error) {
	rows, err := tx.Query(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []T{}
	for rows.Next() {
		v, err := scan(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, rows.Err()
}

// QueryStrings runs a query of one string column in tx and returns its
// values (an empty slice for none), or the database's error. Backends use
// it for statements of their own.
func QueryStrings(ctx context.Context, tx Tx, query string, args ...any) ([]string, error) {
	out, err := queryRows(ctx, tx, func(r Row) (s string, err error) { return s, r.Scan(&s) }, query, args...)
	return out, internal("query", err)
}
