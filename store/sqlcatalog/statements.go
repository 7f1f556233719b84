package sqlcatalog

import "fmt"

// statements are the texts that depend on the backend: its dialect, and
// whether its tables record their kind (a backend with managed tables;
// the others' tables are all external). Each is built once, so each is
// still one fixed text. The comments list their parameters.
type statements struct {
	findTable        string // namespace row id, name
	findTableByUUID  string // uuid
	tablesUnder      string // namespace row id, idSeparator
	insertTable      string
	locationAncestor string // the ancestors' keys (a list), a row id to leave out
}

// tableColumns are the columns scanTable reads, after the kind (see
// newStatements).
const tableColumns = `t.id, t.namespace_id, t.uuid, %s, t.location, t.owned, t.managed_versioning,
	t.declared, t.properties, t.storage_options, t.created_at`

// idSeparator joins the names of an identifier into one sort key in SQL:
// names hold no control characters (store.ValidateName), so the key splits
// back unambiguously, and sorts as the identifiers do name by name, since
// it sorts before every character a name may hold. PostgreSQL's text
// cannot hold NUL, hence 0x01.
const idSeparator = "\x01"

// namespacePaths is a recursive query of every namespace under the one
// whose row id is its first parameter (itself included), with its path
// below it: its names, each followed by the second (idSeparator). The path
// starts from the empty name of a column, so that it has the collation of
// names in both databases (a recursive query needs one collation
// throughout).
const namespacePaths = `WITH RECURSIVE ns_path (id, path) AS (
		SELECT id, substr(name, 1, 0) FROM namespaces WHERE id = ?
		UNION ALL
		SELECT n.id, p.path || n.name || ? FROM namespaces n JOIN ns_path p ON n.parent_id = p.id
	)`

func newStatements(d Dialect, kinds bool) statements {
	kind, kindColumn, kindValue := `'external'`, ``, ``
	if kinds {
		kind, kindColumn, kindValue = `t.kind`, `, kind`, `, ?`
	}
	columns := fmt.Sprintf(tableColumns, kind)
	return statements{
		findTable:       `SELECT ` + columns + ` FROM tables t WHERE t.namespace_id = ? AND t.name = ?`,
		findTableByUUID: `SELECT ` + columns + ` FROM tables t WHERE t.uuid = ?`,
		tablesUnder: namespacePaths + `
			SELECT p.path || t.name, ` + columns + ` FROM tables t JOIN ns_path p ON p.id = t.namespace_id`,
		insertTable: `INSERT INTO tables (uuid, namespace_id, name, location, location_key, owned, managed_versioning,
			declared, properties, storage_options, created_at` + kindColumn + `)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?` + kindValue + `)`,
		locationAncestor: `SELECT uuid, location FROM tables WHERE ` + d.InList("location_key") + ` AND id <> ? LIMIT 1`,
	}
}
