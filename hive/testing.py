"""pytest fixtures for embedding the hive in tests (a pytest plugin, entry point `hive`).

- `hive_pg_url`: a running PostgreSQL for the session: `HIVE_DATABASE_URL` when set,
  else an embedded server in a temporary directory, stopped when the session ends.
- `hive_fresh_database`: a factory of brand-new, empty databases (no `hive` schema).
- `hive_db_url`: a fresh database with every migration applied, one per test.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import psycopg
import pytest
from psycopg import sql

from hive.store import embedded


def database_conninfo(url: str, dbname: str) -> str:
    """The same server as `url`, another database."""
    return psycopg.conninfo.make_conninfo(url, dbname=dbname)


@pytest.fixture(scope="session")
def hive_pg_url() -> Iterator[str]:
    given = os.environ.get("HIVE_DATABASE_URL")
    if given:
        yield given
        return
    # never under /root: as root the server's user must traverse every ancestor
    base = Path(tempfile.mkdtemp(prefix="hive-pg-", dir="/tmp"))
    pgdata = base / "pg"
    url = embedded.start(pgdata)
    try:
        yield url
    finally:
        embedded.stop(pgdata)
        shutil.rmtree(base, ignore_errors=True)


def _create(url: str, name: str, template: str = "template0") -> None:
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(
            sql.SQL("CREATE DATABASE {} TEMPLATE {}").format(
                sql.Identifier(name), sql.Identifier(template)
            )
        )


def _drop(url: str, name: str) -> None:
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name)))


@pytest.fixture
def hive_fresh_database(hive_pg_url: str) -> Iterator[Callable[[], str]]:
    made: list[str] = []

    def make() -> str:
        name = f"hive_t_{uuid.uuid4().hex[:12]}"
        _create(hive_pg_url, name)
        made.append(name)
        return database_conninfo(hive_pg_url, name)

    yield make
    for name in made:
        _drop(hive_pg_url, name)


@pytest.fixture(scope="session")
def _hive_template(hive_pg_url: str) -> Iterator[str]:
    """One migrated database per session, copied for each test (CREATE DATABASE ...
    TEMPLATE is much faster than migrating each time)."""
    from hive.store.migrate import apply

    name = f"hive_tpl_{uuid.uuid4().hex[:12]}"
    _create(hive_pg_url, name)
    apply(database_conninfo(hive_pg_url, name))
    yield name
    _drop(hive_pg_url, name)


@pytest.fixture
def hive_db_url(hive_pg_url: str, _hive_template: str) -> Iterator[str]:
    name = f"hive_t_{uuid.uuid4().hex[:12]}"
    _create(hive_pg_url, name, template=_hive_template)
    try:
        yield database_conninfo(hive_pg_url, name)
    finally:
        _drop(hive_pg_url, name)
