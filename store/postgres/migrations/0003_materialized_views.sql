-- Materialized views: tables whose rows a refresh computes from a query over
-- a source table (see store/sqlcatalog/views.go). `source_query` is the
-- definition as the client sent it; `query` the query lancens runs (JSON,
-- null for a source_query it does not run, whose `source_uuid` is '').
-- `source_version` and `refreshed_at` (milliseconds since the Unix epoch)
-- are set by each refresh's version commit.
CREATE TABLE materialized_views (
    table_id       BIGINT PRIMARY KEY REFERENCES tables (id) ON DELETE CASCADE,
    kind           TEXT NOT NULL,
    source_uuid    TEXT NOT NULL,
    source_query   TEXT NOT NULL,
    query          JSONB NOT NULL,
    auto_refresh   BOOLEAN NOT NULL,
    source_version BIGINT,
    refreshed_at   BIGINT
);

CREATE INDEX materialized_views_source ON materialized_views (source_uuid);
