"""What every store function takes first: a psycopg connection, a pool, or a
`pool.HeldConnection`.

A store function runs one statement. On an autocommit connection (what `pool.make_pool`
and `pool.connect` give) that statement is its own transaction; inside the caller's
`with conn.transaction():` it joins that transaction instead.
"""

from __future__ import annotations

import enum
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any, TypeVar

import psycopg
from psycopg.rows import dict_row
from psycopg_pool import ConnectionPool

from hive.store.pool import HeldConnection
from hive.store.sql import q

Db = psycopg.Connection[Any] | ConnectionPool[Any] | HeldConnection
Params = Mapping[str, Any]
T = TypeVar("T")


@contextmanager
def connection(db: Db, wait_seconds: float | None = None) -> Iterator[psycopg.Connection[Any]]:
    """A connection of `db`; a pool's lends one within `wait_seconds` (its own bound when
    None), else raises `psycopg_pool.PoolTimeout`."""
    if isinstance(db, ConnectionPool):
        with db.connection(timeout=wait_seconds) as conn:
            yield conn
    elif isinstance(db, HeldConnection):
        yield db.get()
    else:
        yield db


def one(db: Db, name: str, params: Params | None = None) -> tuple[Any, ...] | None:
    """The first row of the named query, as a tuple, or None."""
    # the hot path (claim, heartbeat, end): no context manager
    if isinstance(db, HeldConnection):
        return db.get().execute(q(name), params).fetchone()
    if isinstance(db, psycopg.Connection):
        return db.execute(q(name), params).fetchone()
    with connection(db) as conn:
        return conn.execute(q(name), params).fetchone()


def one_dict(db: Db, name: str, params: Params | None = None) -> dict[str, Any] | None:
    """The first row of the named query, as a dict keyed by column name, or None."""
    with connection(db) as conn, conn.cursor(row_factory=dict_row) as cur:
        return cur.execute(q(name), params).fetchone()


def dicts(db: Db, name: str, params: Params | None = None) -> list[dict[str, Any]]:
    """Every row of the named query, as dicts keyed by column name."""
    with connection(db) as conn, conn.cursor(row_factory=dict_row) as cur:
        return cur.execute(q(name), params).fetchall()


def as_members(row: object, *, text_kept: tuple[str, ...] = (), **kinds: type[enum.Enum]) -> None:
    """Make each named field of a row the member of its enum. Call it from a frozen row's
    `__post_init__`, where the row becomes its object.

    psycopg reads a text or enum column as str and an integer as int. A StrEnum's member
    equals its text, so a missed conversion passes `==` and fails `is`. None stays None.
    A value outside the enum raises ValueError, unless its field is named in
    `text_kept`. Such a field is a text column with no CHECK, which the hive reads on
    (review_state: `hive.order_state` answers ILLEGAL for a value no writer makes), so
    its value stays the text."""
    for name, kind in kinds.items():
        value = getattr(row, name)
        if value is None:
            continue
        try:
            member = kind(value)
        except ValueError:
            if name not in text_kept:
                raise
            continue
        object.__setattr__(row, name, member)


def pick(kind: type[T], row: Mapping[str, Any]) -> T:
    """A dataclass `kind` from the columns it names (a column added later is ignored)."""
    names: dict[str, Any] = getattr(kind, "__dataclass_fields__")  # noqa: B009
    return kind(**{f: row[f] for f in names})
