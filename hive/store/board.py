"""What the board reads for GET /board and an issue's page. That is the cards, an issue's
bundle without its bytes and the tail of its transcript. A NOTIFY on `hive_board`
(migration 0008) hints that any of it changed; `hive.board.hub` listens for it."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from hive.rules.issue_states import IssueState
from hive.rules.lifecycle import ReviewState
from hive.rules.states import State
from hive.store.db import Db, as_members, dicts, one, pick
from hive.store.people import TranscriptLine

BOARD_CHANNEL = "hive_board"
SAID_MAX_CHARS = 160  # a running card shows this much of its turn's newest line
CLOSED_SHOWN = 100  # the board shows the latest closed issues, not all of them


@dataclass(frozen=True)
class CardRow:
    """An issue and its current order, as its card shows them. The order's fields are
    None when the issue has no order."""

    number: int
    title: str
    issue_state: IssueState
    labels: list[str]
    created_at: datetime
    closed_at: datetime | None
    closed_reason: str | None
    open_blockers: list[int]
    attempt: int | None
    claimed_by: str | None
    queued_at: datetime | None
    key_index: int | None
    ordered_at: datetime | None
    dispatched_at: datetime | None
    finished_at: datetime | None
    outcome: str | None
    detail: str | None
    review_state: ReviewState | str | None  # the text when it is no member (ILLEGAL)
    reviewed_at: datetime | None
    approved_at: datetime | None
    merged_sha: str | None
    merged_at: datetime | None
    order_state: State | None
    said_at: datetime | None
    said: str | None

    def __post_init__(self) -> None:
        as_members(
            self,
            issue_state=IssueState,
            review_state=ReviewState,
            order_state=State,
            text_kept=("review_state",),
        )


@dataclass(frozen=True)
class BundleRow:
    issue: int
    head_sha: str
    size: int
    runner: str | None
    created_at: datetime


@dataclass(frozen=True)
class Tail:
    """The newest lines of a transcript, oldest first. `marks` holds the last seq of each
    of the issue's conversations when they were read; following on starts there."""

    lines: list[TranscriptLine]
    marks: dict[uuid.UUID, int]


def cards(
    db: Db, issues: Sequence[int] | None = None, *, closed_max: int = CLOSED_SHOWN
) -> list[CardRow]:
    """The cards of `issues` and of the issues they block, by number; a blocker's close
    moves those. Without `issues`, the cards of every open issue and of the
    `closed_max` latest closed ones."""
    params = {
        "issues": None if issues is None else list(issues),
        "closed_max": closed_max,
        "said_max_chars": SAID_MAX_CHARS,
    }
    return [pick(CardRow, r) for r in dicts(db, "board_cards", params)]


def watch(db: Db, holder: str, ttl_seconds: float) -> None:
    """Note that a board listens at `holder` for `ttl_seconds` more. The store notifies
    meanwhile."""
    one(db, "board_watch", {"holder": holder, "ttl_seconds": ttl_seconds})


def unwatch(db: Db, holder: str) -> None:
    one(db, "board_unwatch", {"holder": holder})


def closed_count(db: Db) -> int:
    row = one(db, "board_closed_count")
    return int(row[0]) if row else 0


def merged_since(db: Db, since: datetime) -> int:
    row = one(db, "board_merged_since", {"since": since})
    return int(row[0]) if row else 0


def bundle_of(db: Db, issue: int) -> BundleRow | None:
    rows = dicts(db, "board_bundle_of_issue", {"issue": issue})
    return pick(BundleRow, rows[0]) if rows else None


def transcript_tail(db: Db, issue: int, limit: int) -> Tail:
    rows = dicts(db, "board_transcript_tail", {"issue": issue, "limit": limit})
    marks = rows[0]["marks"] if rows and rows[0]["marks"] else {}
    lines = [pick(TranscriptLine, r) for r in rows if r["seq"] is not None]
    return Tail(lines, {uuid.UUID(k): int(v) for k, v in marks.items()})
