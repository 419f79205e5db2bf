"""Status: orders, runners, keys and drain state, read from the store and this process's
settings. Keys show as index, variable and fingerprint, never the value."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from hive.rules.drain import drain_cap_seconds
from hive.rules.keys import key_slots
from hive.rules.spend import day_start, next_day_start, spend_stops
from hive.settings import Settings
from hive.store import keyrests, orders, runners, spend
from hive.store.db import Db


def report(settings: Settings, db: Db, now: datetime | None = None) -> dict[str, Any]:
    """Everything `hive status` shows, JSON-ready."""
    now = now or datetime.now(UTC)
    order_rows = orders.listing(db)
    runner_rows = runners.listing(db)
    slots = key_slots(settings.worker_keys)
    rests = {r.key_index: r for r in keyrests.resting(db, {k.index: k.fingerprint for k in slots})}
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
                "rests_seconds": rests[slot.index].seconds_left if slot.index in rests else 0,
                "rest_reason": rests[slot.index].reason if slot.index in rests else None,
            }
            for slot in slots
        ],
        "spend": spend_today(settings, db, now),
        "drain": {
            "draining_runners": sorted(r.name for r in runner_rows if r.draining),
            "runner_drain_seconds": settings.runner_drain_seconds,
            "platform_drain_seconds": settings.platform_drain_seconds,
            "cap_seconds": drain_cap_seconds(
                settings.runner_drain_seconds, settings.platform_drain_seconds
            ),
        },
    }


def spend_today(settings: Settings, db: Db, now: datetime) -> dict[str, Any]:
    """The UTC day's spend (every attempt that ended since 00:00 UTC), by key, against
    HIVE_SPEND_CAP_USD (0: none). `unpriced` counts attempts whose cost is unknown (the
    agent gave no figure and the price table has no price): the total is then a floor."""
    since = day_start(now)
    by_key = spend.by_key_since(db, since)
    total = sum(k.cost_usd for k in by_key)
    cap = settings.spend_cap_usd
    return {
        "day_started_at": since.isoformat(),
        "resets_at": next_day_start(now).isoformat(),
        "today_usd": round(total, 6),
        "cap_usd": cap,
        "capped": spend_stops(total, cap),
        "attempts": sum(k.attempts for k in by_key),
        "unpriced": sum(k.unpriced for k in by_key),
        "by_key": [
            {
                "key_index": k.key_index,
                "attempts": k.attempts,
                "cost_usd": round(k.cost_usd, 6),
                "unpriced": k.unpriced,
                "input_tokens": k.input_tokens,
                "output_tokens": k.output_tokens,
            }
            for k in by_key
        ],
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
        "provider": o.provider,
        "model": o.model,
        "input_tokens": o.input_tokens,
        "output_tokens": o.output_tokens,
        "cost_usd": o.cost_usd,
        "cost_source": o.cost_source,
    }
