-- name: lock_migrations
-- Serialise concurrent `hive migrate` calls until this transaction ends.
SELECT pg_advisory_xact_lock(%(key)s);

-- name: create_schema
-- The hive's own schema, so a search_path without `hive` still finds it.
CREATE SCHEMA IF NOT EXISTS hive;

-- name: create_versions_table
-- One row per migration applied.
CREATE TABLE IF NOT EXISTS hive.schema_version (
    version     integer PRIMARY KEY,
    name        text NOT NULL,
    applied_at  timestamptz NOT NULL DEFAULT now()
);

-- name: versions_table_exists
-- Whether this database has ever been migrated.
SELECT to_regclass('hive.schema_version') IS NOT NULL AS present;

-- name: applied_versions
-- The migrations this database has, in order.
SELECT version FROM hive.schema_version ORDER BY version;

-- name: record_version
-- Mark one migration applied (inside its own transaction).
INSERT INTO hive.schema_version (version, name) VALUES (%(version)s, %(name)s);
