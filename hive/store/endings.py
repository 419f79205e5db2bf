"""An attempt's ending, as the store writes it.

`OrderEnding` is what an ending writes. `end` writes one alone. `end_many` writes
several in one statement, each exactly as it would be written alone: its own fence and
states, its bundle, conversation, key rest and NOTIFY. A bee's ending calls `end`. A
runner's group commit calls `end_many` for what its bees hand over together
(hive/actors/ending_group.py). `hive.rules.ending_batches` says which endings may share
a statement."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from psycopg.types.json import Jsonb

from hive.agents.conversation import Conversation
from hive.rules.ending_batches import Waiting, one_statement
from hive.rules.lifecycle import sources
from hive.rules.outcome_codes import OutcomeCode, code_of
from hive.rules.rests import QUOTA_REST_SECONDS, KeyEnding, moves_rest
from hive.rules.spend import Cost
from hive.rules.states import END, Outcome
from hive.store import keyrests
from hive.store.bundles import NewBundle
from hive.store.db import Db, connection
from hive.store.orders import Fence
from hive.store.sql import q
from hive.store.transitions import Move, missed, move

ENDS_FROM = [int(s) for s in sources(END)]  # the states an ending may leave

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


@dataclass(frozen=True)
class OrderEnding:
    """How one attempt ends: everything `end` writes, in one statement.

    `bundle` is what the turn left beyond base. None means nothing, and a stale bundle of
    the issue is dropped. `salvaged_sha` is the commit the ending made of what the turn
    left uncommitted. None means it made none, and the salvage columns stay as they are.
    A None detail, token count, provider or model keeps the row's value. The provider
    and model the agent reported replace the Queen's guess from her settings. A None
    `cost` leaves the cost unknown.

    An ending in `refused` or `quota exhausted` rests the order's key
    (hive/store/keyrests.py). A quota rests it until `resets_at` when the agent gave
    one, else for `quota_rest_seconds`. Any other ending ends the key's run of refusals.

    `keeps_conversation` is set when the agent resumes conversations
    (hive/agents/conversation.py). Then the ending stores `conversation` as the issue's
    for the next attempt, or drops the issue's earlier one when it is None. Otherwise
    the issue's conversation is left as it is. It is stored with the ending because a
    next attempt may be claimed elsewhere as soon as the ending lands."""

    fence: Fence
    outcome: Outcome
    detail: str | None = None
    input_tokens: int | None = None
    output_tokens: int | None = None
    provider: str | None = None
    model: str | None = None
    cost: Cost | None = None
    resets_at: datetime | None = None
    quota_rest_seconds: int = QUOTA_REST_SECONDS
    salvaged_sha: str | None = None
    salvaged_files: tuple[str, ...] = ()
    bundle: NewBundle | None = None
    keeps_conversation: bool = False
    conversation: Conversation | None = None

    @property
    def code(self) -> OutcomeCode:
        """The ending's code, which the store and the rules decide on (the outcome
        sentence is for people)."""
        return code_of(self.outcome)


def end_params(ending: OrderEnding) -> dict[str, Any]:
    """`ending` as the parameters of `end_order` (also what the claim bench's bare loop
    sends), the states END may leave included."""
    bundle, kept = ending.bundle, ending.conversation
    code = ending.code
    return {
        "issue": ending.fence.issue,
        "conversation_id": ending.fence.conversation_id,
        "runner": ending.fence.runner,
        "from_states": ENDS_FROM,
        "outcome": str(ending.outcome),
        "outcome_code": code,
        "detail": ending.detail,
        "input_tokens": ending.input_tokens,
        "output_tokens": ending.output_tokens,
        "provider": ending.provider,
        "model": ending.model,
        "ends_rest": not moves_rest(code),
        "cost_usd": ending.cost.usd if ending.cost else None,
        "cost_source": ending.cost.source.value if ending.cost else None,
        "salvaged_sha": ending.salvaged_sha,
        "salvaged_files": list(ending.salvaged_files),
        "branch": bundle.branch if bundle else None,
        "base": bundle.base if bundle else None,
        "base_sha": bundle.base_sha if bundle else None,
        "head_sha": bundle.head_sha if bundle else None,
        "bytes": bundle.data if bundle else None,
        "size": len(bundle.data) if bundle else None,
        "keeps_conversation": ending.keeps_conversation,
        "agent": kept.agent if kept else None,
        "session_id": kept.session_id if kept else None,
        "conversation_bytes": kept.data if kept else None,
        "note": kept.note if kept else None,
    }


def end(db: Db, ending: OrderEnding) -> Move:
    """End the attempt as `ending` says (event END).

    One statement, one round trip, stores the bundle and the conversation and NOTIFYs
    `hive_orders` with 'ended:<issue>', so a Queen elsewhere rounds at once. No ended row
    is without its bundle and conversation, and no NOTIFY without the ending.

    The Move is false when it did not land. Either the fence no longer matches (reaped,
    re-dispatched, another claimant), or END may not leave the attempt's state. The
    second is `illegal`: it is logged and the caller counts it.

    An ending that is no refusal ends its key's rest in the same statement. A refusal
    rests the key (`keyrests.after_ending`) in the ending's transaction. So no refused
    ending lands without resting its key."""
    fence, code = ending.fence, ending.code
    if not moves_rest(code):  # the hot path: one statement
        return _end(db, ending)
    with connection(db) as conn, conn.transaction():
        moved = _end(conn, ending)
        if moved.landed:
            keyrests.after_ending(
                conn,
                fence.issue,
                fence.conversation_id,
                KeyEnding(code, ending.resets_at, ending.quota_rest_seconds),
            )
    return moved


def _end(db: Db, ending: OrderEnding) -> Move:
    fence = ending.fence
    return move(
        db,
        "end_order",
        end_params(ending),
        issue=fence.issue,
        conversation_id=fence.conversation_id,
        event=END,
    )


def end_many(db: Db, endings: Sequence[OrderEnding]) -> list[Move]:
    """End several attempts in one statement (`end_orders`). Each is ended exactly as
    `end` ends it alone, with its own fence and states, bundle, conversation, key rest
    and NOTIFY. An ending whose claim was lost does not land; the others still do. The
    moves answer in the order of `endings`. Refusals among them rest their keys in the
    statement's transaction, in that order, as `end` does. Without refusals it is one
    round trip. Raises ValueError for endings that no one statement may hold
    (`hive.rules.ending_batches`): an issue twice, or a refusal before a non-refusal."""
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
