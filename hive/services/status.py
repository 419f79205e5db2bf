"""Status: orders, runners, keys and drain state, read from the store and this process's
settings. Keys show as index, variable and fingerprint, never the value."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from hive.rules.drain import drain_cap_seconds
from hive.rules.keys import key_slots
from hive.settings import Settings
from hive.store import orders, runners
from hive.store.db import Db


def report(settings: Settings, db: Db, now: datetime | None = None) -> dict[str, Any]:
    """Everything `hive status` shows, JSON-ready."""
    now = now or datetime.now(UTC)
    order_rows = orders.listing(db)
    runner_rows = runners.listing(db)
    return {
        "orders": [_order(o, now) for o in order_rows],
        "runners": [
            {
                "name": r.name,
                "slots": r.slots,
                "running": r.running,
                "draining": r.draining,
                "seen_seconds_ago": round((now - r.seen_at).total_seconds(), 1),
            }
            for r in runner_rows
        ],
        "keys": [
            {
                "index": slot.index,
                "variable": slot.variable,
                "fingerprint": slot.fingerprint,
                "lanes": settings.worker_lanes_per_key,
            }
            for slot in key_slots(settings.worker_keys)
        ],
        "drain": {
            "draining_runners": sorted(r.name for r in runner_rows if r.draining),
            "runner_drain_seconds": settings.runner_drain_seconds,
            "platform_drain_seconds": settings.platform_drain_seconds,
            "cap_seconds": drain_cap_seconds(
                settings.runner_drain_seconds, settings.platform_drain_seconds
            ),
        },
    }


def _order(o: orders.Order, now: datetime) -> dict[str, Any]:
    if o.finished_at is not None:
        state = "ended"
    elif o.queued_at is not None and o.claimed_by is None:
        state = "queued"
    else:
        state = "running"
    since = o.finished_at or o.dispatched_at or o.queued_at or o.created_at
    return {
        "issue": o.issue,
        "state": state,
        "outcome": o.outcome,
        "review_state": o.review_state,
        "runner": o.claimed_by or ("queen" if o.queued_at is None else None),
        "attempt": o.attempt,
        "key_index": o.key_index,
        "key_fingerprint": o.key_fingerprint,
        "seconds_in_state": round((now - since).total_seconds(), 1),
        "detail": o.detail,
    }
