-- Tables, their version records, branches and tags, and transaction records.

CREATE TABLE tables (
    id                 INTEGER PRIMARY KEY,
    uuid               TEXT    NOT NULL UNIQUE,
    namespace_id       INTEGER NOT NULL REFERENCES namespaces (id) ON DELETE CASCADE,
    name               TEXT    NOT NULL,
    kind               TEXT    NOT NULL CHECK (kind IN ('external', 'managed')),
    location           TEXT    NOT NULL,
    owned              INTEGER NOT NULL CHECK (owned IN (0, 1)),
    managed_versioning INTEGER NOT NULL CHECK (managed_versioning IN (0, 1)),
    declared           INTEGER NOT NULL CHECK (declared IN (0, 1)),
    properties         TEXT    NOT NULL DEFAULT '{}' CHECK (json_valid(properties)),
    storage_options    TEXT    NOT NULL DEFAULT '{}' CHECK (json_valid(storage_options)),
    created_at         INTEGER NOT NULL,
    UNIQUE (namespace_id, name)
);

-- Branch '' is main. Versions of a branch form a gapless chain.
CREATE TABLE table_versions (
    table_id         INTEGER NOT NULL REFERENCES tables (id) ON DELETE CASCADE,
    branch           TEXT    NOT NULL,
    version          INTEGER NOT NULL CHECK (version >= 0),
    manifest_path    TEXT    NOT NULL,
    staged_path      TEXT    NOT NULL,
    manifest_size    INTEGER,
    e_tag            TEXT,
    timestamp_millis INTEGER NOT NULL,
    metadata         TEXT    CHECK (metadata IS NULL OR json_valid(metadata)),
    transaction_id   TEXT    NOT NULL,
    PRIMARY KEY (table_id, branch, version)
) WITHOUT ROWID;

CREATE TABLE table_branches (
    table_id       INTEGER NOT NULL REFERENCES tables (id) ON DELETE CASCADE,
    name           TEXT    NOT NULL,
    parent_branch  TEXT    NOT NULL,
    parent_version INTEGER NOT NULL,
    metadata       TEXT    NOT NULL DEFAULT '{}' CHECK (json_valid(metadata)),
    created_at     INTEGER NOT NULL,
    PRIMARY KEY (table_id, name)
) WITHOUT ROWID;

CREATE TABLE table_tags (
    table_id   INTEGER NOT NULL REFERENCES tables (id) ON DELETE CASCADE,
    name       TEXT    NOT NULL,
    branch     TEXT    NOT NULL,
    version    INTEGER NOT NULL,
    created_at INTEGER NOT NULL,
    PRIMARY KEY (table_id, name)
) WITHOUT ROWID;

-- Every operation that returns a transaction id records it here. Work that
-- finishes after the response (data deletion, index builds) is queued here
-- too: `kind` says what to do and `payload` holds its input.
CREATE TABLE transactions (
    id         TEXT    PRIMARY KEY,
    kind       TEXT    NOT NULL,
    status     TEXT    NOT NULL CHECK (status IN ('Queued', 'Running', 'Succeeded', 'Failed', 'Canceled')),
    table_uuid TEXT,
    properties TEXT    NOT NULL DEFAULT '{}' CHECK (json_valid(properties)),
    payload    TEXT    NOT NULL DEFAULT '{}' CHECK (json_valid(payload)),
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL
);

CREATE INDEX transactions_pending ON transactions (status, kind) WHERE status IN ('Queued', 'Running');
