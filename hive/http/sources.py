"""The surface's facts from the real store (hive.store): orders, issues, queue numbers,
and the `Surface` a process serves.

Shared by the HTTP routes and the command line (`hive issue`, `hive status`), so both
answer alike. `db` is anything the store functions take: a pool for
the server's request threads, one connection for a command.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from typing import Any

import psycopg
from prometheus_client import CollectorRegistry

from hive.errors import HiveError
from hive.http.export import StoreExports
from hive.http.server import Surface, store_probe
from hive.metrics import QueueNumbers
from hive.settings import Settings
from hive.store import issues, migrate, orders
from hive.store.connect import check_reachable, database_url, where
from hive.store.db import Db

log = logging.getLogger("hive.http")

CREATE_ATTEMPTS = 3  # two creates may pick the same next number; the loser retries
# The brief is the agent's whole prompt: long, and nobody's business in a listing.
HIDDEN_ORDER_FIELDS = frozenset({"brief"})


def order_rows(db: Db) -> list[dict[str, Any]]:
    """Every order as a JSON-ready dict (no brief; keys appear as index and fingerprint)."""
    rows = []
    for order in orders.listing(db):
        row = {
            name: _plain(value)
            for name, value in dataclasses.asdict(order).items()
            if name not in HIDDEN_ORDER_FIELDS
        }
        rows.append(row)
    return rows


def queue_numbers(db: Db, now: Callable[[], datetime] = lambda: datetime.now(UTC)) -> QueueNumbers:
    """Queue depth, orders in flight and the oldest queued order's age, from the orders
    not yet finished (few: bounded by the hive's width and its queue)."""
    in_flight = orders.listing(db, unfinished_only=True)
    queued = [o for o in in_flight if o.queued_at is not None and o.claimed_by is None]
    oldest = min((o.queued_at for o in queued if o.queued_at is not None), default=None)
    age = max(0.0, (now() - oldest).total_seconds()) if oldest is not None else 0.0
    return QueueNumbers(queued=len(queued), in_flight=len(in_flight), oldest_queued_seconds=age)


def add_issue(db: Db, issue: issues.NewIssue) -> int:
    """Create `issue` with the next free number and return the number."""
    for attempt in range(1, CREATE_ATTEMPTS + 1):
        try:
            return issues.create(db, issue).number
        except psycopg.errors.UniqueViolation:
            if attempt == CREATE_ATTEMPTS:
                raise
    raise AssertionError("unreachable")


def _plain(value: Any) -> Any:
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    if value is None or isinstance(value, bool | int | float | str):
        return value
    return str(value)  # uuid and the like


def store_surface(
    settings: Settings,
    db: Db,
    url: str,
    registry: CollectorRegistry,
    draining: Callable[[], bool],
) -> Surface:
    """The `Surface` a process serves: every route on the store `db` (a pool: the routes
    run on request threads), readiness from `draining` and a probe of `url`."""
    return Surface(
        registry=registry,
        draining=draining,
        store_reachable=store_probe(url),
        exports=StoreExports.from_settings(settings, db),
        orders=lambda: order_rows(db),
        add_issue=lambda issue: add_issue(db, issue),
    )


@contextmanager
def store_connection(settings: Settings) -> Iterator[psycopg.Connection[Any]]:
    """One autocommit connection for a command, after checking the database is reachable
    and migrated (each problem one line, naming host and port, never a password)."""
    url = database_url(settings)
    check_reachable(url)
    version = migrate.check(url)
    if version < migrate.known_version():
        raise HiveError(
            f"the database at {where(url)} has hive schema version {version}, not "
            f"{migrate.known_version()}: run `hive migrate` first"
        )
    with psycopg.connect(url, autocommit=True) as conn:
        yield conn
