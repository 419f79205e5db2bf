"""Forward-only migrations (DESIGN 4): `migrations/NNNN_*.sql`, each in its own
transaction, recorded in `hive.schema_version`, serialised by a transaction-level
advisory lock so two `hive migrate` at once are safe. Applying twice applies nothing."""

from __future__ import annotations

import re
from dataclasses import dataclass
from importlib import resources

import psycopg

from hive.errors import HiveError
from hive.store.sql import q

# pg_advisory_xact_lock key shared by every `hive migrate` ("hive" in ASCII)
MIGRATE_LOCK_KEY = 0x68697665
_FILE = re.compile(r"^(?P<version>\d{4})_(?P<name>[a-z0-9_]+)\.sql$")


@dataclass(frozen=True)
class Migration:
    version: int
    name: str
    text: str


def migrations() -> list[Migration]:
    """Every migration this code knows, in version order."""
    found = []
    folder = resources.files("hive.store") / "migrations"
    for entry in folder.iterdir():
        match = _FILE.match(entry.name)
        if match:
            found.append(Migration(int(match["version"]), match["name"], entry.read_text("utf-8")))
    found.sort(key=lambda m: m.version)
    return found


def known_version() -> int:
    return max((m.version for m in migrations()), default=0)


def _applied(conn: psycopg.Connection) -> list[int]:
    row = conn.execute(q("versions_table_exists")).fetchone()
    if row is None or not row[0]:
        return []
    return [v for (v,) in conn.execute(q("applied_versions"))]


def _refuse_newer(applied: list[int]) -> None:
    newest, known = max(applied, default=0), known_version()
    if newest > known:
        raise HiveError(
            f"the database schema is at version {newest}, newer than this hive knows "
            f"({known}): upgrade the hive before running it against this database"
        )


def check(url: str) -> int:
    """The schema version of the database at `url` (0 when never migrated); raise
    HiveError when it is newer than this code knows, for callers that must not start."""
    with psycopg.connect(url, autocommit=True) as conn:
        applied = _applied(conn)
    _refuse_newer(applied)
    return max(applied, default=0)


def apply(url: str) -> list[int]:
    """Apply every pending migration; return the versions applied by this call."""
    done: list[int] = []
    with psycopg.connect(url) as conn:
        with conn.transaction():
            conn.execute(q("lock_migrations"), {"key": MIGRATE_LOCK_KEY})
            conn.execute(q("create_schema"))
            conn.execute(q("create_versions_table"))
        for migration in migrations():
            with conn.transaction():
                # the lock is held to the end of this migration's transaction; the
                # versions are read under it, so a concurrent migrate sees ours
                conn.execute(q("lock_migrations"), {"key": MIGRATE_LOCK_KEY})
                applied = _applied(conn)
                _refuse_newer(applied)
                if migration.version in applied:
                    continue
                conn.execute(migration.text.encode())
                conn.execute(
                    q("record_version"), {"version": migration.version, "name": migration.name}
                )
            done.append(migration.version)
    return done
