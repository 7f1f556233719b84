-- The namespace tree. The root namespace is row 1: it has no parent and no
-- name, and always exists.
CREATE TABLE namespaces (
    id          INTEGER PRIMARY KEY,
    parent_id   INTEGER REFERENCES namespaces (id) ON DELETE CASCADE,
    name        TEXT    NOT NULL,
    properties  TEXT    NOT NULL DEFAULT '{}' CHECK (json_valid(properties)),
    created_at  INTEGER NOT NULL,
    CHECK ((parent_id IS NULL) = (id = 1))
);

CREATE UNIQUE INDEX namespaces_parent_name ON namespaces (parent_id, name);

INSERT INTO namespaces (id, parent_id, name, properties, created_at)
VALUES (1, NULL, '', '{}', CAST(unixepoch('subsec') * 1000 AS INTEGER));
