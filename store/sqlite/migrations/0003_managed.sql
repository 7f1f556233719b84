-- Managed tables keep their rows in a table of their own, rows_<tables.id>,
-- with one physical column per stored leaf field. Each row is visible from
-- version _from up to (not including) version _to.

CREATE TABLE managed_tables (
    table_id    INTEGER PRIMARY KEY REFERENCES tables (id) ON DELETE CASCADE,
    next_column INTEGER NOT NULL
);

-- The logical schema of a managed table from `version` until the next row:
-- the Arrow schema (IPC schema message) and which physical column holds
-- each field.
CREATE TABLE table_schemas (
    table_id INTEGER NOT NULL REFERENCES tables (id) ON DELETE CASCADE,
    version  INTEGER NOT NULL,
    schema   BLOB    NOT NULL,
    layout   TEXT    NOT NULL CHECK (json_valid(layout)),
    PRIMARY KEY (table_id, version)
) WITHOUT ROWID;
