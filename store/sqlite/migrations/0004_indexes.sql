-- Indexes of managed tables. Vector indexes keep their trained structure in
-- data and cover the rows with row id <= max_rowid; rows written later are
-- searched exactly. Scalar and full-text indexes are SQLite indexes and
-- tables named after the index's row id (a full-text index's table holds
-- each row's analysed terms).
CREATE TABLE table_indexes (
    id            INTEGER PRIMARY KEY,
    table_id      INTEGER NOT NULL REFERENCES tables (id) ON DELETE CASCADE,
    name          TEXT    NOT NULL,
    uuid          TEXT    NOT NULL UNIQUE,
    index_type    TEXT    NOT NULL,
    column_path   TEXT    NOT NULL,
    physical      TEXT    NOT NULL,
    metric        TEXT    NOT NULL DEFAULT '',
    params        TEXT    NOT NULL DEFAULT '{}' CHECK (json_valid(params)),
    status        TEXT    NOT NULL,
    error         TEXT,
    created_at    INTEGER NOT NULL,
    built_version INTEGER,
    max_rowid     INTEGER,
    data          BLOB,
    UNIQUE (table_id, name)
);
