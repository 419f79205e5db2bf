"""The database as the faces reach it: where it is, whether it answers, its schema
brought up to date, one checked connection for a command, a check through the server's
pool, and the embedded server (`hive db`).

Each problem is one line that names host and port, never a password (`where`). The
store's own functions are named here as they are; a face imports them from here.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import psycopg

from hive.errors import HiveError
from hive.settings import Settings
from hive.store import embedded
from hive.store.connect import check_reachable, database_url, wait_reachable, where
from hive.store.db import Db, connection
from hive.store.migrate import apply as apply_migrations
from hive.store.migrate import check as schema_version
from hive.store.migrate import known_version
from hive.store.pool import check_connection

__all__ = [
    "Db",
    "apply_migrations",
    "check_pooled",
    "check_reachable",
    "database_url",
    "embedded",
    "schema_version",
    "store_connection",
    "wait_reachable",
    "where",
]


@contextmanager
def store_connection(settings: Settings) -> Iterator[psycopg.Connection[Any]]:
    """One autocommit connection for a command, after checking the database is reachable
    and migrated (each problem one line, naming host and port, never a password)."""
    url = database_url(settings)
    check_reachable(url)
    version = schema_version(url)
    if version < known_version():
        raise HiveError(
            f"the database at {where(url)} has hive schema version {version}, not "
            f"{known_version()}: run `hive migrate` first"
        )
    with psycopg.connect(url, autocommit=True) as conn:
        yield conn


def check_pooled(db: Db, wait_seconds: float) -> None:
    """Check one connection of `db` (a pool lends one within `wait_seconds`, else raises
    `psycopg_pool.PoolTimeout`); raises psycopg.Error when the server does not answer."""
    with connection(db, wait_seconds=wait_seconds) as conn:
        check_connection(conn)
