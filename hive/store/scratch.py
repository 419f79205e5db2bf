"""Databases beside the hive's own, on the same server: created and dropped here only.

The benchmarks measure the configured server in a throwaway database (`database`), the
demo drops and creates its own, and the test fixtures copy a migrated template for each
test. A name is always quoted as an identifier.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from contextlib import contextmanager

import psycopg
from psycopg import sql

from hive.errors import HiveError
from hive.store import migrate


def url_of(url: str, name: str) -> str:
    """The URL of database `name` on the server of `url`."""
    return psycopg.conninfo.make_conninfo(url, dbname=name)


def create(url: str, name: str, *, refused: str, template: str | None = None) -> str:
    """Create database `name` on the server of `url` (copied from `template` when named)
    and return its URL. A user without CREATEDB raises HiveError naming the database,
    then `refused`: who needs it and what to do about it."""
    statement = sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name))
    if template is not None:
        statement = sql.SQL("CREATE DATABASE {} TEMPLATE {}").format(
            sql.Identifier(name), sql.Identifier(template)
        )
    try:
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute(statement)
    except psycopg.errors.InsufficientPrivilege:
        raise HiveError(f"could not create the database {name}: {refused}") from None
    return url_of(url, name)


def drop(url: str, name: str) -> None:
    """Drop database `name` on the server of `url`, if it exists, whoever is connected.
    Raises HiveError when the hive's user may not (it does not own that database)."""
    try:
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute(
                sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name))
            )
    except psycopg.errors.InsufficientPrivilege:
        raise HiveError(
            f"could not drop the database {name}: the hive's user does not own it"
        ) from None


@contextmanager
def database(url: str, prefix: str = "hive_bench") -> Iterator[str]:
    """Create `<prefix>_<random>` beside the database of `url`, migrate it, yield its
    URL, and drop it afterwards."""
    name = f"{prefix}_{uuid.uuid4().hex[:12]}"
    scratch_url = create(
        url,
        name,
        refused="the benchmark needs a scratch database: grant CREATEDB to the hive's user"
        " or run it against the embedded server",
    )
    try:
        migrate.apply(scratch_url)
        yield scratch_url
    finally:
        drop(url, name)
