"""Endings in one statement (`end_orders`): several attempts ended at once, each exactly
as `orders.end` ends one alone (its own fence and states, its bundle, conversation, key
rest and NOTIFY). A runner's group commit writes what its bees hand over together
(hive/actors/ending_group.py); `hive.rules.ending_batches` says which endings may share a
statement."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from psycopg.types.json import Jsonb

from hive.rules.ending_batches import Waiting, one_statement
from hive.rules.rests import KeyEnding, moves_rest
from hive.rules.states import END
from hive.store import keyrests
from hive.store.db import Db, connection
from hive.store.orders import ENDS_FROM, OrderEnding, end_params
from hive.store.sql import q
from hive.store.transitions import Move, missed

# what `end_orders` takes as arrays, one element an ending (salvaged_files apart: jsonb)
_MANY_COLUMNS = (
    "issue",
    "conversation_id",
    "runner",
    "outcome",
    "outcome_code",
    "detail",
    "input_tokens",
    "output_tokens",
    "provider",
    "model",
    "cost_usd",
    "cost_source",
    "ends_rest",
    "salvaged_sha",
    "branch",
    "base",
    "base_sha",
    "head_sha",
    "bytes",
    "keeps_conversation",
    "agent",
    "session_id",
    "conversation_bytes",
    "note",
)


def end_many(db: Db, endings: Sequence[OrderEnding]) -> list[Move]:
    """End several attempts in one statement (`end_orders`), each exactly as `end` ends
    it alone: its own fence and states (an ending whose claim was lost does not land, and
    the others do), its bundle, conversation, key rest and NOTIFY. The moves answer in
    the order of `endings`. Refusals among them rest their keys in the statement's
    transaction, in that order, as `end` does; with none, it is one round trip.
    Raises ValueError for endings no one statement may hold (`hive.rules.ending_batches`:
    an issue twice, or a refusal before an ending that is none)."""
    if not one_statement([waiting(e) for e in endings]):
        raise ValueError(
            "these endings are no one statement's (an issue twice, or a refusal first): "
            + ", ".join(f"{e.fence.issue} {e.outcome}" for e in endings)
        )
    if not endings:
        return []
    if not any(moves_rest(e.code) for e in endings):  # the hot path: one statement
        return _end_many(db, endings)
    with connection(db) as conn, conn.transaction():
        moves = _end_many(conn, endings)
        for ending, moved in zip(endings, moves, strict=True):
            if moved.landed and moves_rest(ending.code):
                keyrests.after_ending(
                    conn,
                    ending.fence.issue,
                    ending.fence.conversation_id,
                    KeyEnding(ending.code, ending.resets_at, ending.quota_rest_seconds),
                )
    return moves


def waiting(ending: OrderEnding) -> Waiting:
    """`ending` as `hive.rules.ending_batches` weighs it."""
    kept = ending.conversation
    size = (len(ending.bundle.data) if ending.bundle else 0) + (len(kept.data) if kept else 0)
    return Waiting(ending.fence.issue, size, moves_rest(ending.code))


def end_many_params(endings: Sequence[OrderEnding]) -> dict[str, Any]:
    """`endings` as the parameters of `end_orders`: each of `end_params`' an array, one
    element an ending."""
    each = [end_params(e) for e in endings]
    columns: dict[str, Any] = {name: [p[name] for p in each] for name in _MANY_COLUMNS}
    columns["salvaged_files"] = [Jsonb(p["salvaged_files"]) for p in each]
    return {**columns, "from_states": ENDS_FROM}


def _end_many(db: Db, endings: Sequence[OrderEnding]) -> list[Move]:
    with connection(db) as conn:
        landed = {row[0] for row in conn.execute(q("end_orders"), end_many_params(endings))}
        return [
            Move(e.fence.issue, END, True)
            if e.fence.issue in landed
            else missed(conn, e.fence.issue, e.fence.conversation_id, END)
            for e in endings
        ]
