-- The rows of a branch of a managed table other than main live in a rows
-- table of their own, rows_<table id>_<line>, with the same physical
-- columns as the table's main rows: the branch's line of versions. A
-- branch's schemas are kept per branch version, like table_schemas for main.
CREATE TABLE branch_lines (
    table_id INTEGER NOT NULL REFERENCES tables (id) ON DELETE CASCADE,
    branch   TEXT    NOT NULL,
    line     INTEGER NOT NULL CHECK (line > 0),
    PRIMARY KEY (table_id, branch),
    UNIQUE (table_id, line)
) WITHOUT ROWID;

CREATE TABLE branch_schemas (
    table_id INTEGER NOT NULL REFERENCES tables (id) ON DELETE CASCADE,
    branch   TEXT    NOT NULL,
    version  INTEGER NOT NULL,
    schema   BLOB    NOT NULL,
    layout   TEXT    NOT NULL CHECK (json_valid(layout)),
    PRIMARY KEY (table_id, branch, version)
) WITHOUT ROWID;
