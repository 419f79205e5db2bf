"""Orders: the listing the API serves and the queue numbers the metrics read."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from hive.metrics import QueueNumbers
from hive.store import orders
from hive.store.db import Db

# The brief is the agent's whole prompt: long, and nobody's business in a listing.
HIDDEN_ORDER_FIELDS = frozenset({"brief"})


def listing(db: Db) -> list[dict[str, Any]]:
    """Every order as a JSON-ready dict (no brief; keys appear as index and fingerprint)."""
    return [
        {
            name: _plain(value)
            for name, value in dataclasses.asdict(order).items()
            if name not in HIDDEN_ORDER_FIELDS
        }
        for order in orders.listing(db)
    ]


def queue_numbers(db: Db, now: Callable[[], datetime] = lambda: datetime.now(UTC)) -> QueueNumbers:
    """Queue depth, orders in flight and the oldest queued order's age, from the orders
    not yet finished (few: bounded by the hive's width and its queue)."""
    in_flight = orders.listing(db, unfinished_only=True)
    queued = [o for o in in_flight if o.queued_at is not None and o.claimed_by is None]
    oldest = min((o.queued_at for o in queued if o.queued_at is not None), default=None)
    age = max(0.0, (now() - oldest).total_seconds()) if oldest is not None else 0.0
    return QueueNumbers(queued=len(queued), in_flight=len(in_flight), oldest_queued_seconds=age)


def _plain(value: Any) -> Any:
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    if value is None or isinstance(value, bool | int | float | str):
        return value
    return str(value)  # uuid and the like
