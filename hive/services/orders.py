"""Orders: the listing the API serves, the queue numbers the metrics read, and a
person's cancel of an order in flight."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from hive.metrics import QueueNumbers
from hive.rules.outcome_codes import OutcomeCode
from hive.rules.retry import failures_after, retry_after_seconds
from hive.rules.states import RUNNING
from hive.services.standing import refusal, unknown
from hive.store import orders, people
from hive.store.db import Db, connection

# The brief is the agent's whole prompt: long, and nobody's business in a listing.
HIDDEN_ORDER_FIELDS = frozenset({"brief"})
CANCELLED_BY_HAND = "cancelled by hand"  # the order's detail


def listing(db: Db) -> list[dict[str, Any]]:
    """Every order as a JSON-ready dict (no brief; keys appear as index and fingerprint)."""
    found = orders.listing(db)
    if not found:
        return []
    # the field names once, and no deep copy of each row (dataclasses.asdict's cost)
    names = [f.name for f in dataclasses.fields(found[0]) if f.name not in HIDDEN_ORDER_FIELDS]
    return [{name: plain(getattr(order, name)) for name in names} for order in found]


def queue_numbers(db: Db, now: Callable[[], datetime] = lambda: datetime.now(UTC)) -> QueueNumbers:
    """Queue depth, orders in flight and the oldest queued order's age, from the orders
    not yet finished (few: bounded by the hive's width and its queue)."""
    in_flight = orders.listing(db, unfinished_only=True)
    queued = [o for o in in_flight if o.queued_at is not None and o.claimed_by is None]
    oldest = min((o.queued_at for o in queued if o.queued_at is not None), default=None)
    age = max(0.0, (now() - oldest).total_seconds()) if oldest is not None else 0.0
    return QueueNumbers(queued=len(queued), in_flight=len(in_flight), oldest_queued_seconds=age)


_AS_IS = frozenset({str, int, float, bool, type(None)})


def plain(value: Any) -> Any:
    """`value` as JSON can hold it: times in ISO 8601, a uuid as text."""
    if type(value) in _AS_IS:  # most fields: one set lookup, not four isinstance calls
        return value
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, list | tuple):
        return [plain(v) for v in value]
    if isinstance(value, dict):
        return {str(k): plain(v) for k, v in value.items()}
    if value is None or isinstance(value, bool | int | float | str):
        return value
    return str(value)  # uuid and the like


@dataclass(frozen=True)
class Cancelled:
    """An order in flight a person cancelled: who ran it and when its issue goes again."""

    issue: int
    attempt: int
    runner: str | None  # None: the Queen ran it herself, or it was still queued
    queued: bool  # it was queued and no runner had claimed it yet
    redispatch_after_seconds: int  # the retry card's back-off after a `cancelled` ending

    def __str__(self) -> str:
        n = self.issue
        if self.queued:
            how = "it was still queued: no runner had claimed it"
        elif self.runner is not None:
            how = f"runner {self.runner} stops the turn at its next heartbeat"
        else:
            how = "the Queen ran it herself: its turn runs on, and its ending is not written"
        when = (
            "in the Queen's next round"
            if self.redispatch_after_seconds == 0
            else f"after {self.redispatch_after_seconds} s of back-off"
        )
        return (
            f"cancelled #{n} (attempt {self.attempt}): {how}. #{n} is dispatched again {when} "
            f"unless a person closes it (hive issue close {n}) or blocks it "
            f"(hive issue block {n} --by M)"
        )


def cancel(db: Db, issue: int) -> Cancelled:
    """End `issue`'s order in flight with outcome `cancelled` (RUNNING -> REAPED): a
    runner's heartbeat then finds its row gone and stops the turn. NotNow for an order
    not in flight, UnknownIssue for an unknown number."""
    with connection(db) as conn, conn.transaction():
        f = people.facts(conn, issue)
        if f is None:
            raise unknown(issue)
        if f.order_state != RUNNING:
            raise refusal(f, "cancel it", "only an order in flight is cancelled")
        assert f.conversation_id is not None and f.attempt is not None
        moved = people.cancel(conn, issue, f.conversation_id, CANCELLED_BY_HAND)
        if not moved.landed:
            raise refusal(people.facts(conn, issue) or f, "cancel it (it moved meanwhile)")
    failures = failures_after(f.failures_in_a_row or 0, OutcomeCode.CANCELLED)
    return Cancelled(
        issue=issue,
        attempt=f.attempt,
        runner=f.claimed_by,
        queued=f.queued_at is not None and f.claimed_by is None,
        redispatch_after_seconds=retry_after_seconds(failures),
    )
