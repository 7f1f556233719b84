-- Where dropped, deregistered and replaced tables lay, and the namespace
-- each belonged to (a JSON array of its names), so that a table can be
-- placed where another namespace's table lay only by a principal that may
-- write that namespace (see store.LocationHistory). One row per location
-- key and namespace; released_at is the last time.
CREATE TABLE released_locations (
    location_key TEXT    NOT NULL,
    namespace    TEXT    NOT NULL CHECK (json_valid(namespace)),
    released_at  INTEGER NOT NULL,
    PRIMARY KEY (location_key, namespace)
) WITHOUT ROWID;
