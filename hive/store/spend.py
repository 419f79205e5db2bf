"""What attempts spent (lesson module 7): by key since a time (the cap's UTC day, `hive
status`), and over one issue's attempts (the API). Archived attempts count as well as
the orders' current ones; an attempt counts once it has ended. A cost the store does not
know (no figure from the agent, no price in the table) adds nothing and is counted as
`unpriced`, so a reader sees that the sum is a floor."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from hive.store.db import Db, dicts, one_dict, pick


@dataclass(frozen=True)
class Spent:
    attempts: int
    cost_usd: float
    unpriced: int  # attempts whose cost is unknown
    input_tokens: int
    output_tokens: int


@dataclass(frozen=True)
class KeySpent(Spent):
    key_index: int | None = None


def by_key_since(db: Db, since: datetime) -> list[KeySpent]:
    """What attempts that ended at or after `since` spent, by key index."""
    return [pick(KeySpent, row) for row in dicts(db, "spend_by_key_since", {"since": since})]


def since(db: Db, when: datetime) -> float:
    """US dollars spent by attempts that ended at or after `when` (known costs only)."""
    return sum(k.cost_usd for k in by_key_since(db, when))


def of_issue(db: Db, issue: int) -> Spent:
    """What every ended attempt of `issue` spent."""
    row = one_dict(db, "spend_of_issue", {"issue": issue})
    assert row is not None, "an aggregate answers one row"
    return pick(Spent, row)
