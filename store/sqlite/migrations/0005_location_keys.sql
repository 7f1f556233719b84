-- Two tables never share a location nor nest one inside the other. Each
-- table's location is recorded with a normalised key (scheme://host/path/,
-- cleaned, always ending in "/"), so that "one location inside another" is
-- a prefix test. Keys are filled in by Go after migrating; a database from
-- before this migration that already has two tables at one location keeps
-- the key on the older one and leaves the others' NULL (they are reported
-- at start-up; see LocationConflicts).
ALTER TABLE tables ADD COLUMN location_key TEXT;

CREATE UNIQUE INDEX tables_location_key ON tables (location_key);
