"""One module per `hive` verb: `register(subparsers)` adds its parser and sets `func`.

A verb parses its arguments, calls a use case of `hive.services` and prints the answer.
Names defined here must not be a verb's (`from hive.commands import migrate` would find
them first).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import psycopg

from hive.errors import HiveError
from hive.settings import Settings
from hive.store.connect import check_reachable, database_url, where
from hive.store.migrate import check as schema_version
from hive.store.migrate import known_version


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
