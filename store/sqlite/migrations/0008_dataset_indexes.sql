-- Indexes of tables stored as Lance datasets (package engine): their files
-- are under the table's location (_lancens/indices/<uuid>/), and this is
-- their record. definition holds what the index was asked for and build
-- what its last build made (the fragments it covers, its files), both JSON
-- of the engine's; built_version is the first version of main the index
-- exists at.
CREATE TABLE dataset_indexes (
    id            INTEGER PRIMARY KEY,
    table_id      INTEGER NOT NULL REFERENCES tables (id) ON DELETE CASCADE,
    name          TEXT    NOT NULL,
    uuid          TEXT    NOT NULL UNIQUE,
    index_type    TEXT    NOT NULL,
    status        TEXT    NOT NULL,
    error         TEXT,
    created_at    INTEGER NOT NULL,
    built_version INTEGER,
    definition    TEXT    NOT NULL,
    build         TEXT,
    UNIQUE (table_id, name)
);
