"""The order, in `queen_dispatch` and `queen_dispatch_history` (DESIGN 5). The row is
the protocol.

Every write after the claim is fenced on (issue, conversation_id, claimed_by,
finished_at IS NULL). It says whether it matched. False means the order was reaped or
re-dispatched; its writer must stop and write nothing more to it. An attempt's ending is
written by `hive.store.endings`, and the reapers' statement by `hive.store.reaping`.
"""

from __future__ import annotations

import enum
import logging
import uuid
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from decimal import Decimal
from typing import Any

from hive.rules.lifecycle import ReviewState, may_replace
from hive.rules.outcome_codes import OutcomeCode
from hive.rules.retry import FAILED_CODES
from hive.rules.states import END, FLOOR_STATES, NONE, RUNNING, State
from hive.store.db import Db, as_members, dicts, one, one_dict, pick
from hive.store.leases import Lease
from hive.store.transitions import Move, move

log = logging.getLogger("hive.store")


@dataclass(frozen=True)
class NewOrder:
    """The Queen's decision for one issue."""

    issue: int
    branch: str
    base: str
    base_sha: str | None = None
    owned_paths: tuple[str, ...] = ()
    key_index: int | None = None
    key_fingerprint: str | None = None
    brief: str | None = None
    detail: str | None = None
    provider: str | None = None
    model: str | None = None
    conversation_id: uuid.UUID = field(default_factory=uuid.uuid4)
    # credits (hive/rules/credits.py): the account its turns are sold to (None: credits
    # are off), the markup they are sold at, and who lent its key (who earns nothing)
    credit_account: str | None = None
    credit_markup: Decimal | None = None
    key_owner: str | None = None


@dataclass(frozen=True)
class Fence:
    """Whose write this is: the attempt and its claimant (None: the Queen's own bee)."""

    issue: int
    conversation_id: uuid.UUID
    runner: str | None


@dataclass(frozen=True)
class ClaimedOrder:
    """What a runner needs to run the order it just claimed."""

    issue: int
    conversation_id: uuid.UUID
    attempt: int
    branch: str
    base: str
    base_sha: str | None
    owned_paths: list[str]
    key_index: int | None
    key_fingerprint: str | None
    brief: str | None
    queued_at: datetime
    claimed_at: datetime
    runner: str
    credit_account: str | None = None  # its turn is sold to this account (None: not sold)

    @property
    def fence(self) -> Fence:
        return Fence(self.issue, self.conversation_id, self.runner)


@dataclass(frozen=True)
class Order:
    """A whole `queen_dispatch` row."""

    issue: int
    branch: str
    base: str
    base_sha: str | None
    started: bool
    detail: str | None
    conversation_id: uuid.UUID
    owned_paths: list[str]
    key_index: int | None
    key_fingerprint: str | None
    brief: str | None
    queued_at: datetime | None
    claimed_by: str | None
    claimed_at: datetime | None
    refused_by: list[str]
    dispatched_at: datetime | None
    finished_at: datetime | None
    outcome: str | None
    outcome_code: OutcomeCode | None
    salvaged_at: datetime | None
    salvaged_sha: str | None
    salvaged_files: list[str] | None
    review_state: ReviewState | str | None  # the text when it is no member (ILLEGAL)
    review_note: str | None
    reviewed_at: datetime | None
    sendbacks: int
    provider: str | None
    model: str | None
    input_tokens: int | None
    output_tokens: int | None
    attempt: int
    created_at: datetime
    failures_in_a_row: int  # of the attempts before this one (the retry card)
    merged_sha: str | None = None  # the commit its work landed as on the base
    cost_usd: float | None = None  # US dollars (None: unknown); see hive/rules/spend.py
    cost_source: str | None = None  # 'agent' (its own figure) or 'prices' (the table's)
    credit_account: str | None = None  # its turns are sold to this account (None: not sold)
    key_owner: str | None = None  # who lent its key (HIVE_WORKER_KEY_OWNERS)

    def __post_init__(self) -> None:
        as_members(
            self, outcome_code=OutcomeCode, review_state=ReviewState, text_kept=("review_state",)
        )

    @property
    def fence(self) -> Fence:
        return Fence(self.issue, self.conversation_id, self.claimed_by)


@dataclass(frozen=True)
class ArchivedOrder:
    """An attempt that a later one replaced. `snapshot` is its row as JSON (`to_jsonb`),
    so its values are text. Read its code through `outcome_code`, never from the
    snapshot."""

    id: int
    issue: int
    archived_at: datetime
    snapshot: dict[str, Any]

    @property
    def outcome_code(self) -> OutcomeCode | None:
        """How the attempt ended, as the member. None means it had not ended. A snapshot
        archived before the code existed (migration 0013) has only its sentence, and
        reads as OTHER."""
        code = self.snapshot.get("outcome_code")
        if code is not None:
            return OutcomeCode(code)
        return None if self.snapshot.get("outcome") is None else OutcomeCode.OTHER


class Insertion(enum.Enum):
    """What `insert` did. WRITTEN: it wrote the order. IN_FLIGHT: the issue's order is
    still in flight. HELD: the last attempt is in a state no new attempt replaces,
    judged work or work waiting for its judgement. LEASE_GONE: the lease it was written
    under is gone, let go or another Queen's now."""

    WRITTEN = "written"
    IN_FLIGHT = "in flight"
    HELD = "held"
    LEASE_GONE = "lease gone"


# the states a new attempt replaces (RULES 4), and the ones an unfinished row is in
REPLACEABLE = [int(s) for s in State if may_replace(s)]
_IN_FLIGHT = [int(NONE), int(RUNNING)]


def insert(db: Db, order: NewOrder, *, queued: bool, lease: Lease | None = None) -> Insertion:
    """Write the order. The Queen calls it when she dispatches an issue.

    With `queued` (elsewhere mode) it sets queued_at and NOTIFYs hive_orders. Otherwise
    queued_at stays NULL and dispatched_at is now, because the Queen runs the bee.

    The issue's row is archived and replaced (attempt + 1) when `may_replace` allows its
    state. An unfinished row is left alone (IN_FLIGHT). A row in any other state is left
    alone too (HELD), and that state is logged. The new row's `failures_in_a_row` is the
    old one's plus one when the old attempt failed (the retry card), else 0.

    `lease` is the Queen lease the order is written under. Every write made under a
    lease carries its fence (RULES 3). The statement writes only while that lease is
    held by its holder at its fence and has not expired. Otherwise it writes nothing
    and answers LEASE_GONE, which wins over IN_FLIGHT. None means no lease, for tests
    and benches; the Queen always passes hers."""
    params = {
        "lease_name": lease.name if lease else None,
        "lease_holder": lease.holder if lease else None,
        "lease_fence": lease.fence if lease else None,
        "issue": order.issue,
        "branch": order.branch,
        "base": order.base,
        "base_sha": order.base_sha,
        "detail": order.detail,
        "conversation_id": order.conversation_id,
        "owned_paths": list(order.owned_paths),
        "key_index": order.key_index,
        "key_fingerprint": order.key_fingerprint,
        "brief": order.brief,
        "queued": queued,
        "provider": order.provider,
        "model": order.model,
        "credit_account": order.credit_account,
        "credit_markup": order.credit_markup,
        "key_owner": order.key_owner,
        "failed_codes": sorted(FAILED_CODES),
        "replaceable": REPLACEABLE,
        "in_flight": _IN_FLIGHT,
    }
    row = one(db, "insert_order", params)
    assert row is not None, "insert_order answers one row"
    verdict = Insertion(row[0])
    if verdict is Insertion.HELD:
        log.info(
            "its last attempt is %s: not replaced", State(row[2]).name, extra={"issue": order.issue}
        )
    return verdict


def claim(db: Db, runner: str) -> ClaimedOrder | None:
    """Claim the oldest claimable order for `runner` (one statement), or None."""
    row = one_dict(db, "claim_order", {"runner": runner})
    return None if row is None else pick(ClaimedOrder, {**row, "runner": runner})


def claim_many(db: Db, runner: str, limit: int) -> list[ClaimedOrder]:
    """Claim up to `limit` of the oldest claimable orders for `runner`, oldest first, in
    one statement. A runner calls it for its free slots. `claim` takes the same rows,
    one at a time."""
    if limit < 1:
        return []
    rows = dicts(db, "claim_orders", {"runner": runner, "limit": limit})
    return [pick(ClaimedOrder, {**row, "runner": runner}) for row in rows]


def refuse(db: Db, fence: Fence) -> bool:
    """Release the claim and add the runner to refused_by; other runners are woken."""
    return one(db, "refuse_order", _fence(fence)) is not None


def end_refused(db: Db, issue: int, conversation_id: uuid.UUID, detail: str) -> Move:
    """End a queued, unclaimed attempt as `refused`, with `detail`. It runs once every
    runner refused the attempt. The event is END, and the outcome makes it REFUSED. It
    does not land when a runner claimed the attempt or it ended meanwhile."""
    params = {"issue": issue, "conversation_id": conversation_id, "detail": detail}
    return move(
        db, "end_refused_order", params, issue=issue, conversation_id=conversation_id, event=END
    )


def release(db: Db, fence: Fence) -> bool:
    """Give back a claim this runner could not start. Its `queued_at` keeps its place in
    the queue. Other runners are woken."""
    return one(db, "release_order", _fence(fence)) is not None


def mark_started(db: Db, fence: Fence) -> bool:
    """Reset dispatched_at, the two-hour rule's clock, once the turn really started."""
    return one(db, "mark_order_started", _fence(fence)) is not None


def heartbeat(db: Db, fence: Fence) -> bool:
    """Renew claimed_at. False means the order was reaped or re-dispatched, and the turn
    must stop."""
    return one(db, "heartbeat_order", _fence(fence)) is not None


def record_salvage(
    db: Db, issue: int, conversation_id: uuid.UUID, sha: str, files: Sequence[str]
) -> bool:
    """Record the salvage commit a reaper made for an attempt it ended. False means the
    attempt is no longer the row's; it was re-dispatched since."""
    params = {
        "issue": issue,
        "conversation_id": conversation_id,
        "salvaged_sha": sha,
        "salvaged_files": list(files),
    }
    return one(db, "record_salvage", params) is not None


def get(db: Db, issue: int) -> Order | None:
    rows = dicts(db, "get_order", {"issue": issue})
    return pick(Order, rows[0]) if rows else None


def listing(db: Db, *, unfinished_only: bool = False) -> list[Order]:
    """Every order by issue (the status listing); only in-flight ones if asked."""
    return _orders(db, "list_orders", {"unfinished_only": unfinished_only})


def live(db: Db, open_issues: Iterable[int], held_since: datetime) -> list[Order]:
    """The orders a Queen round decides by, by issue (the `live_orders` query). They are
    the orders in flight, those of an open issue, those ended after `held_since` (one
    may still hold its files) and those resting in a state with a floor."""
    params = {
        "open_issues": list(open_issues),
        "held_since": held_since,
        "floor_states": [int(state) for state in FLOOR_STATES],
    }
    return _orders(db, "live_orders", params)


def history(db: Db, issue: int) -> list[ArchivedOrder]:
    """The archived attempts of `issue`, oldest first."""
    return [pick(ArchivedOrder, r) for r in dicts(db, "order_history", {"issue": issue})]


def _fence(fence: Fence) -> dict[str, Any]:
    return {"issue": fence.issue, "conversation_id": fence.conversation_id, "runner": fence.runner}


def _orders(db: Db, name: str, params: dict[str, Any]) -> list[Order]:
    return [pick(Order, r) for r in dicts(db, name, params)]
