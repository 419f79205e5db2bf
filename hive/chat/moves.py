"""The moves the Queen posts in the room (DESIGN 11): work merged, sent back with the
reviewer's note, escalated, a key put to rest, the day's spend cap reached. One line per
move, each owed once (its cause names the move), read from the store since the chat
first looked (nothing that happened before it joined is posted).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import UTC, datetime
from enum import StrEnum
from typing import Any

from hive.chat.config import QUEEN
from hive.rules.chat import Kind
from hive.rules.spend import day_start, spend_stops
from hive.rules.text import shown
from hive.store import chat as store
from hive.store import spend
from hive.store.db import Db

log = logging.getLogger("hive.chat")

MOVES_MAX_ROWS = 200  # moves read in one look (the rest at the next)
NOTE_MAX_CHARS = 200  # a note is cut in a move's one line
SHA_SHOWN = 12


class MoveKind(StrEnum):
    """What a move is: the `move` column `chat_moves` reads (and a move's cause names)."""

    MERGED = "merged"
    SENDBACK = "sendback"
    ESCALATE = "escalate"
    REST = "rest"


# what a judged move says of its issue
_SAID = {MoveKind.SENDBACK: "sent back", MoveKind.ESCALATE: "escalated: a person decides"}


@dataclass(frozen=True)
class Move:
    cause: str
    line: str
    issue: int | None


def line_of(row: dict[str, Any]) -> Move:
    """One move's line and cause from its row of `chat_moves`."""
    what, issue, at = MoveKind(row["move"]), row["issue"], row["at"]
    note = _one_line(row["detail"] or "")
    if what is MoveKind.MERGED:
        sha = (row["detail"] or "")[:SHA_SHOWN]
        return Move(f"move:merged:{issue}:{row['detail']}", f"#{issue} merged as {sha}.", issue)
    if what is MoveKind.REST:
        until = f"{row['until']:%H:%M}Z"
        line = f"Key {row['key_index']} rests until {until} ({note or 'refused'})."
        return Move(f"move:rest:{row['key_index']}:{row['until'].isoformat()}", line, None)
    said = _SAID[what]
    line = f"#{issue} {said} (attempt {row['attempt']})" + (f": {note}" if note else ".")
    return Move(f"move:{what}:{issue}:{row['attempt']}:{at.isoformat()}", line, issue)


def _one_line(text: str) -> str:
    flat = shown(" ".join(text.split()))
    return flat if len(flat) <= NOTE_MAX_CHARS else flat[: NOTE_MAX_CHARS - 1] + "…"


def owe_moves(db: Db, room: str, spend_cap_usd: float, now: datetime | None = None) -> int:
    """Owe the Queen's post of each move since the room's cursor; the rows owed."""
    _, since = store.cursor(db, room)
    owed = 0
    newest = since
    for row in store.moves(db, since, MOVES_MAX_ROWS):
        move = line_of(row)
        owed += _owe(db, move)
        newest = max(newest, row["at"])
    if spend_cap_usd > 0:
        now = now or datetime.now(UTC)
        start = day_start(now)
        total = sum(k.cost_usd for k in spend.by_key_since(db, start))
        if spend_stops(total, spend_cap_usd):
            line = (
                f"The day's spend cap is reached (${total:.2f} of ${spend_cap_usd:.2f}):"
                " no new orders until 00:00 UTC."
            )
            owed += _owe(db, Move(f"move:cap:{start:%Y-%m-%d}", line, None))
    if newest > since:
        store.set_moves_since(db, room, newest)
    return owed


def _owe(db: Db, move: Move) -> int:
    owed = store.Owed(move.cause, QUEEN, Kind.MOVE, depth=1, issue=move.issue, body=move.line)
    row = store.owe(db, owed)
    if row is not None:
        log.info("chat: the Queen posts a move: %s", move.line)
    return 0 if row is None else 1
