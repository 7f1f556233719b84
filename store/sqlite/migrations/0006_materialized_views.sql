-- Materialized views: managed tables whose rows a refresh computes from a
-- query over a source table. `query` is the query as lancens runs it
-- (JSON), `source_query` the definition as the client sent it.
CREATE TABLE materialized_views (
    table_id       INTEGER PRIMARY KEY REFERENCES tables (id) ON DELETE CASCADE,
    kind           TEXT    NOT NULL,
    source_uuid    TEXT    NOT NULL,
    source_query   TEXT    NOT NULL,
    query          TEXT    NOT NULL CHECK (json_valid(query)),
    auto_refresh   INTEGER NOT NULL CHECK (auto_refresh IN (0, 1)),
    source_version INTEGER,
    refreshed_at   INTEGER
);

CREATE INDEX materialized_views_source ON materialized_views (source_uuid);
