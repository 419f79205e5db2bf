"""The chat's bot messages and the room's sync token, in `chat_outbox` and
`chat_cursor`. Each bot message is a row before it is a message (DESIGN 11).

A row is owed once per cause; `owe` returns None for a cause already owed. It is marked
sent as the Matrix event it became (`sent`), or dropped with its reason (`drop`). The
clocks read `waiting` and `sends_since`, both in the store's epoch seconds.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from hive.rules.chat import Kind
from hive.store.db import Db, dicts, one

WAITING_MAX_ROWS = 500  # the clocks look at this many waiting rows a pass, oldest first


@dataclass(frozen=True)
class Owed:
    """A bot message owed. It holds its cause, bot, kind, chain depth and the issue it
    speaks of. It holds the Matrix event it answers, that event's thread and the
    question. Its body is None when a bee's turn composes it."""

    cause: str
    bot: str
    kind: Kind
    depth: int = 1
    issue: int | None = None
    reply_to: str | None = None
    thread_root: str | None = None
    asked: str = ""
    body: str | None = None
    asked_at: datetime | None = None


@dataclass(frozen=True)
class Row:
    id: int
    owed: Owed
    since: float  # when it was owed, in the store's epoch seconds


def owe(db: Db, owed: Owed) -> int | None:
    """Write the owed row and return its id. None when its cause owes a message already."""
    params: dict[str, Any] = dict(owed.__dict__)
    params["message_kind"] = int(params.pop("kind"))
    row = one(db, "chat_owe", params)
    return None if row is None else int(row[0])


def _row(d: dict[str, Any]) -> Row:
    owed = Owed(
        cause=d["cause"],
        bot=d["bot"],
        kind=Kind(d["kind"]),
        depth=d["depth"],
        issue=d["issue"],
        reply_to=d["reply_to"],
        thread_root=d["thread_root"],
        asked=d["asked"],
        body=d["body"],
    )
    return Row(d["id"], owed, d["since"])


def waiting(db: Db, limit: int = WAITING_MAX_ROWS) -> tuple[list[Row], float | None]:
    """The rows ready to send, oldest first, and the store's time. The time is None when
    there is no row."""
    found = dicts(db, "chat_waiting", {"limit": limit})
    return [_row(d) for d in found], (found[0]["now"] if found else None)


def sends_since(db: Db, seconds: float) -> list[tuple[str, float]]:
    """(bot, epoch seconds) of each message sent in the last `seconds`, oldest first."""
    return [(d["bot"], d["at"]) for d in dicts(db, "chat_sends_since", {"seconds": seconds})]


def sent(db: Db, row_id: int, event_id: str) -> tuple[bool, float | None]:
    """Mark the row sent. Returns (False, None) when it was sent already. When a person
    asked, the float is the seconds from the person's message to now."""
    row = one(db, "chat_sent", {"row_id": row_id, "event_id": event_id})
    if row is None:
        return False, None
    return True, (None if row[0] is None else float(row[0]))


def drop(db: Db, row_id: int, reason: str) -> bool:
    return one(db, "chat_drop", {"row_id": row_id, "reason": reason}) is not None


def cursor(db: Db, room: str) -> tuple[str | None, datetime]:
    """The room's sync token (None: never synced), and since when moves are posted."""
    row = one(db, "chat_cursor", {"room": room})
    assert row is not None  # an upsert returns its row
    return row[0], row[1]


def set_token(db: Db, room: str, next_batch: str) -> None:
    one(db, "chat_set_token", {"room": room, "next_batch": next_batch})


def set_moves_since(db: Db, room: str, moves_since: datetime) -> None:
    one(db, "chat_set_moves_since", {"room": room, "moves_since": moves_since})


def moves(db: Db, since: datetime, limit: int) -> list[dict[str, Any]]:
    """The moves since `since`, oldest first. Each has `move` (merged, sendback,
    escalate, rest), `issue`, `key_index`, `attempt`, `detail`, `until` and `at`. For a
    rest, `attempt` is its strikes and `until` its end. `detail` is the merge's sha, the
    note, or the rest's reason."""
    return dicts(db, "chat_moves", {"since": since, "limit": limit})


def rows(db: Db) -> list[dict[str, Any]]:
    """Every row, oldest first (a person's or a test's look)."""
    return dicts(db, "chat_rows")
