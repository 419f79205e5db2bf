"""A throwaway, migrated database on the same server, for the benchmarks: they measure
the configured server without writing a single row into its hive schema."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from contextlib import contextmanager

import psycopg
from psycopg import sql

from hive.errors import HiveError
from hive.store import migrate


@contextmanager
def database(url: str, prefix: str = "hive_bench") -> Iterator[str]:
    """Create `<prefix>_<random>` beside the database of `url`, migrate it, yield its
    URL, and drop it afterwards."""
    name = f"{prefix}_{uuid.uuid4().hex[:12]}"
    try:
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    except psycopg.errors.InsufficientPrivilege:
        raise HiveError(
            f"the benchmark needs to create a scratch database ({name}): grant CREATEDB "
            "to the hive's user or run it against the embedded server"
        ) from None
    try:
        scratch_url = psycopg.conninfo.make_conninfo(url, dbname=name)
        migrate.apply(scratch_url)
        yield scratch_url
    finally:
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute(
                sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name))
            )
