"""Orders no runner can take end, after a window, as `refused` (hive/rules/refusals.py):
the facts are the queued orders and the runners seen within the window; the stall
reaper calls this on each pass."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from hive.rules.refusals import refusal_sentence, refused_everywhere, waits_for_no_runner
from hive.store import orders, runners
from hive.store.db import Db

log = logging.getLogger("hive.reaper")


@dataclass(frozen=True)
class Ended:
    """The issues whose orders ended as refused, and how many such moves were illegal."""

    issues: tuple[int, ...] = ()
    illegal: int = 0


def end_refused_orders(db: Db, window_seconds: float, now: datetime | None = None) -> Ended:
    """End every queued, unclaimed order that each runner seen within `window_seconds`
    refused, once it has waited that long."""
    now = now or datetime.now(UTC)
    waiting = [
        o
        for o in orders.listing(db, unfinished_only=True)
        if o.queued_at is not None and o.claimed_by is None and o.refused_by
    ]
    if not waiting:
        return Ended()
    since = now - timedelta(seconds=window_seconds)
    live = {r.name for r in runners.listing(db) if r.seen_at >= since}
    ended, illegal = [], 0
    for order in waiting:
        assert order.queued_at is not None
        queued_seconds = (now - order.queued_at).total_seconds()
        if not refused_everywhere(order.refused_by, live, queued_seconds, window_seconds):
            continue
        sentence = refusal_sentence(order.refused_by, order.key_index)
        moved = orders.end_refused(db, order.issue, order.conversation_id, sentence)
        if moved:
            log.warning("ended: %s", sentence, extra={"issue": order.issue})
            ended.append(order.issue)
        illegal += moved.illegal
    return Ended(tuple(ended), illegal)


def waiting_for_no_runner(
    db: Db, window_seconds: float, now: datetime | None = None
) -> tuple[int, ...]:
    """The issues whose queued, unclaimed order waited the window while no runner was
    seen (`waits_for_no_runner`), in order."""
    now = now or datetime.now(UTC)
    since = now - timedelta(seconds=window_seconds)
    live = {r.name for r in runners.listing(db) if r.seen_at >= since}
    return tuple(
        o.issue
        for o in orders.listing(db, unfinished_only=True)
        if o.queued_at is not None
        and o.claimed_by is None
        and waits_for_no_runner(
            o.refused_by, live, (now - o.queued_at).total_seconds(), window_seconds
        )
    )
