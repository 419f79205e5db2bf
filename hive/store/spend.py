"""What turns spent (lesson module 7). It is read by key since a time (the cap's UTC
day, `hive status`), and over one issue's turns (the API).

Archived attempts count as well as the orders' current ones. An attempt counts once it
has ended, and a chat turn when it ended. A review or shaping turn counts when it was
spent (`add`), once, on its own row. A cost the store does not know adds nothing and is
counted as `unpriced`; the agent gave no figure and the table has no price. So a reader
sees that the sum is a floor."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import datetime

from hive.agents.protocol import Usage
from hive.rules.spend import Cost
from hive.store.db import Db, dicts, one, one_dict, pick

REVIEW = "review"
SHAPING = "shaping"


@dataclass(frozen=True)
class Spent:
    attempts: int
    cost_usd: float
    unpriced: int  # turns whose cost is unknown
    input_tokens: int
    output_tokens: int


@dataclass(frozen=True)
class KeySpent(Spent):
    key_index: int | None = None


def by_key_since(db: Db, since: datetime) -> list[KeySpent]:
    """What turns that ended at or after `since` spent, by key index."""
    return [pick(KeySpent, row) for row in dicts(db, "spend_by_key_since", {"since": since})]


def since(db: Db, when: datetime) -> float:
    """US dollars spent by turns that ended at or after `when` (known costs only)."""
    return sum(k.cost_usd for k in by_key_since(db, when))


def of_issue(db: Db, issue: int) -> Spent:
    """What every ended turn of `issue` spent."""
    row = one_dict(db, "spend_of_issue", {"issue": issue})
    assert row is not None, "an aggregate answers one row"
    return pick(Spent, row)


@dataclass(frozen=True)
class TurnSpend:
    """A review or shaping turn's usage and cost. A cost of None is unknown."""

    kind: str  # REVIEW or SHAPING
    issue: int
    conversation_id: uuid.UUID | None  # the attempt a review judged; None for shaping
    key_index: int | None
    input_tokens: int
    output_tokens: int
    cost_usd: float | None
    cost_source: str | None


def turn_spend(
    kind: str,
    issue: int,
    conversation_id: uuid.UUID | None,
    key_index: int | None,
    usage: Usage | None,
    cost: Cost | None,
) -> TurnSpend:
    """The row of a review or shaping turn that reported `usage` and cost `cost`. A
    `usage` of None means no tokens. A `cost` of None is unknown, counted as unpriced."""
    return TurnSpend(
        kind,
        issue,
        conversation_id,
        key_index,
        usage.input_tokens if usage else 0,
        usage.output_tokens if usage else 0,
        cost.usd if cost else None,
        cost.source.value if cost else None,
    )


def add(db: Db, turn: TurnSpend) -> None:
    """Record what a review or shaping turn spent, now. The day's spend counts it today."""
    assert turn.kind in (REVIEW, SHAPING), turn.kind
    row = one(db, "add_turn_spend", turn.__dict__)
    assert row is not None, "an insert answers its id"
