"""A bee's answer in `chat_outbox` while its turn runs (hive.rules.chat_turn).

A row with no body is owed. A process that runs turns claims it (`claim`). It answers
with what the turn said (`answer`). The answer is fenced on the claim, so a claim that
ran out and was taken again writes nothing. A stopping process lets its rows go
(`let_go`). What each turn spent goes on the row (`spend`), whoever holds it. The day's
spend (`hive.store.spend`) reads it there.
"""

from __future__ import annotations

from dataclasses import dataclass

from hive.store.db import Db, dicts, one

# the channel a row owed or let go NOTIFYs (migration 0018's trigger), with its id
CHAT_CHANNEL = "hive_chat"


@dataclass(frozen=True)
class Claim:
    """A claimed row. It holds the id, bot, issue and the person's question. `tries` is 1
    for the first claim; more means a restart cut the turn before. It holds the issue's
    title (None: no such issue) and the key its order ran on (None: no order, or no
    key)."""

    row_id: int
    bot: str
    issue: int | None
    asked: str
    tries: int
    title: str | None = None
    key_index: int | None = None


@dataclass(frozen=True)
class Spent:
    """What one turn spent. It holds its key's index, its tokens and its cost (None:
    unknown)."""

    key_index: int | None = None
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float | None = None


def claim(db: Db, by: str, hold_seconds: float) -> Claim | None:
    """Hold the oldest owed turn that no process holds for `by`, and return it. None
    when there is none."""
    row = one(db, "chat_turn_claim", {"by": by, "hold_seconds": hold_seconds})
    return None if row is None else Claim(*row)


def answer(db: Db, held: Claim, by: str, body: str) -> bool:
    """Write the answer. False when this claim no longer holds the row."""
    params = {"row_id": held.row_id, "by": by, "tries": held.tries, "body": body}
    return one(db, "chat_turn_answer", params) is not None


def spend(db: Db, row_id: int, spent: Spent) -> None:
    params = {"row_id": row_id, **spent.__dict__}
    one(db, "chat_turn_spend", params)


def let_go(db: Db, held: Claim, by: str) -> bool:
    """Let go of a turn this process cut. False when the claim no longer held it."""
    params = {"row_id": held.row_id, "by": by, "tries": held.tries}
    return one(db, "chat_turn_let_go", params) is not None


def let_go_mine(db: Db, by: str) -> int:
    """Let go of the turns an earlier life of `by` held, and return how many. A process
    calls it at its start."""
    return len(dicts(db, "chat_turns_let_go_mine", {"by": by}))


def unclaimed(db: Db, seconds: float) -> list[tuple[int, int | None]]:
    """(row id, issue) of the answers owed longer than `seconds` that no process claimed."""
    return [(d["id"], d["issue"]) for d in dicts(db, "chat_turns_unclaimed", {"seconds": seconds})]


def answer_unclaimed(db: Db, row_id: int, body: str) -> bool:
    """Answer an owed turn nobody claimed. False when a process claimed it meanwhile."""
    return one(db, "chat_turn_answer_unclaimed", {"row_id": row_id, "body": body}) is not None
