"""The board's data (GET /board, an issue's page): each issue as a card in its column,
and everything an issue's page shows, read from the store. Sentences for people are
made here from the rows' values; `hive.board.render` turns them into HTML.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from hive.rules.board import Column, column_of
from hive.rules.issue_states import IssueState
from hive.rules.lifecycle import ReviewState
from hive.rules.states import RUNNING
from hive.services import credits, history
from hive.services.standing import standing, state_name, unknown
from hive.store import board, issues, people, publish, spend
from hive.store.db import Db
from hive.store.people import TranscriptLine as TranscriptLine  # the issue page shows them

_SHA = re.compile(r"\b[0-9a-f]{40}(?:[0-9a-f]{24})?\b")
CARDS_PER_COLUMN_MAX = 200  # the whole board shows at most this many cards a column
SHA_SHOWN = 12  # a card names a merge by the first 12 hex digits of its commit
WHY_SHOWN = 50  # the Queen's sentences an issue's page shows, newest first
CHECKS_SHOWN = 20
TRANSCRIPT_SHOWN = 500  # an issue's page opens on the transcript's newest lines
VERDICTS = {
    "accept": "accepted",
    "sendback": "sent back",
    "escalate": "escalated: a person decides",
    "wait": "the reviewer looks again",
    "empty": "no work to judge",
    "stale": "stale: criteria changed",
    "released": "released",
}
# columns whose newest card comes first (the others: oldest first, so the one waiting
# longest leads)
_NEWEST_FIRST = frozenset({Column.DONE, Column.DROPPED})
_BY_NUMBER = frozenset({Column.BACKLOG, Column.BLOCKED})


@dataclass(frozen=True)
class Event:
    at: datetime
    text: str


@dataclass(frozen=True)
class Card:
    number: int
    title: str
    column: Column
    since: datetime  # when it came into its column (what its age counts from)
    last: Event  # the newest thing that happened to it
    attempt: int | None
    runner: str | None  # a runner's name, "the Queen", or None (queued, or no order)
    key_index: int | None
    labels: tuple[str, ...] = ()
    blockers: tuple[int, ...] = ()
    queued: bool = False  # waiting for a runner to claim it
    needs_person: bool = False  # escalated: a person decides
    merged_sha: str | None = None

    @property
    def sort_key(self) -> float:
        """Where the card goes in its column: ascending."""
        if self.column in _BY_NUMBER:
            return float(self.number)
        stamp = self.since.timestamp()
        return -stamp if self.column in _NEWEST_FIRST else stamp


@dataclass(frozen=True)
class Cards:
    cards: list[Card]
    closed_total: int  # closed issues in the store (the board shows the latest ones)
    # cards of a column past CARDS_PER_COLUMN_MAX, left out of the whole board
    hidden: dict[Column, int] = field(default_factory=dict)


def cards(db: Db, numbers: Sequence[int] | None = None) -> Cards:
    """The cards of the issues `numbers` and of those they block, or the whole board's
    (every open issue and the latest closed ones, at most CARDS_PER_COLUMN_MAX a column,
    in the column's order); an unknown number has no card."""
    rows = board.cards(db, numbers)
    if numbers is not None:
        return Cards([card_of(r) for r in rows], 0)
    kept, hidden = _capped([card_of(r) for r in rows])
    return Cards(kept, board.closed_count(db), hidden)


def _capped(found: list[Card]) -> tuple[list[Card], dict[Column, int]]:
    """The first CARDS_PER_COLUMN_MAX cards of each column, and how many each left out:
    2,000 open issues made a board of 986 KB."""
    by_column: dict[Column, list[Card]] = {}
    for c in sorted(found, key=lambda c: (c.sort_key, c.number)):
        by_column.setdefault(c.column, []).append(c)
    kept: list[Card] = []
    hidden: dict[Column, int] = {}
    for column, in_it in by_column.items():
        kept += in_it[:CARDS_PER_COLUMN_MAX]
        if len(in_it) > CARDS_PER_COLUMN_MAX:
            hidden[column] = len(in_it) - CARDS_PER_COLUMN_MAX
    return kept, hidden


def card_of(row: board.CardRow) -> Card:
    merged = row.merged_sha is not None
    column = column_of(
        issue_open=row.issue_state == IssueState.OPEN,
        order_state=row.order_state,
        merged=merged,
        open_blockers=len(row.open_blockers),
    )
    running = row.order_state == RUNNING
    queued = running and row.queued_at is not None and row.claimed_by is None
    if row.claimed_by is not None:
        runner: str | None = row.claimed_by
    elif row.attempt is not None and row.queued_at is None:
        runner = "the Queen"
    else:
        runner = None
    return Card(
        number=row.number,
        title=row.title,
        column=column,
        since=_since(row, column),
        last=_last_event(row),
        attempt=row.attempt,
        runner=runner,
        key_index=row.key_index,
        labels=tuple(row.labels),
        blockers=tuple(row.open_blockers),
        queued=queued,
        needs_person=row.review_state == ReviewState.ESCALATE and column is Column.REVIEW,
        merged_sha=row.merged_sha,
    )


def _since(row: board.CardRow, column: Column) -> datetime:
    if column in (Column.DONE, Column.DROPPED):
        return row.merged_at or row.closed_at or row.finished_at or row.created_at
    if column is Column.RUNNING:
        return row.dispatched_at or row.ordered_at or row.created_at
    if column is Column.REVIEW:
        return row.reviewed_at or row.finished_at or row.created_at
    return row.finished_at or row.created_at


def _last_event(row: board.CardRow) -> Event:
    k = f"attempt {row.attempt}"
    found = [Event(row.created_at, "opened")]

    def add(at: datetime | None, text: str) -> None:
        if at is not None:
            found.append(Event(at, text))

    queued = " (queued for a runner)" if row.queued_at is not None else ""
    add(row.ordered_at, f"{k} dispatched{queued}")
    add(row.dispatched_at, f"{k} started" + (f" on {row.claimed_by}" if row.claimed_by else ""))
    add(row.finished_at, f"{k} ended {row.outcome}")
    if row.review_state:
        add(row.reviewed_at, f"{k} {VERDICTS.get(row.review_state, row.review_state)}")
    add(row.approved_at, f"{k} approved")
    if row.merged_sha:
        add(row.merged_at, f"merged as {row.merged_sha[:SHA_SHOWN]}")
    add(row.closed_at, f"closed: {row.closed_reason}" if row.closed_reason else "closed")
    if row.said:
        add(row.said_at, f"said: {row.said}")
    # on a tie (one statement wrote both) the later step of the life wins
    last = max(enumerate(found), key=lambda pair: (pair[1].at, pair[0]))[1]
    return Event(last.at, short_shas(last.text))


def short_shas(text: str) -> str:
    """`text` with each whole commit sha cut to SHA_SHOWN hex digits: 40 of them would
    wrap a card over three lines."""
    return _SHA.sub(lambda m: m.group()[:SHA_SHOWN], text)


# ---- an issue's page ------------------------------------------------------------------


@dataclass(frozen=True)
class Attempt:
    attempt: int
    conversation_id: str | None
    runner: str | None
    key_index: int | None
    model: str | None
    ordered_at: str | None
    dispatched_at: str | None
    finished_at: str | None
    outcome: str | None
    detail: str | None
    verdict: str | None
    review_note: str | None
    reviewed_at: str | None
    input_tokens: int
    output_tokens: int
    cost_usd: float | None


@dataclass(frozen=True)
class IssueView:
    card: Card
    body: str
    boundary: list[str]
    criteria: list[Any]
    stands: str
    state: str | None  # the order's state's name, None: no order
    attempts: list[Attempt]  # newest first
    sentences: list[history.Sentence]  # the Queen's, newest first
    checks: list[dict[str, Any]]  # newest first
    spend: spend.Spent  # of the ended attempts, archived ones too (as the API counts it)
    bundle: board.BundleRow | None
    transcript: board.Tail
    attempt_of: dict[uuid.UUID, int] = field(default_factory=dict)
    credit: dict[str, Any] | None = None  # who pays and what it holds (hive/services/credits.py)


def issue_view(db: Db, number: int) -> IssueView:
    """Everything issue `number`'s page shows; UnknownIssue when there is none."""
    f = people.facts(db, number)
    found = [c for c in board.cards(db, [number]) if c.number == number]
    row = issues.get(db, number)
    if f is None or not found or row is None:
        raise unknown(number)
    attempts = sorted(
        (_attempt(a) for a in people.attempts(db, number) if a.get("attempt") is not None),
        key=lambda a: a.attempt,
        reverse=True,
    )
    return IssueView(
        card=card_of(found[0]),
        body=row.body,
        boundary=list(row.boundary),
        criteria=list(row.criteria),
        stands=standing(f),
        state=state_name(f.order_state),
        attempts=attempts,
        sentences=history.why(db, number, limit=WHY_SHOWN),
        checks=publish.checks_of(db, number, limit=CHECKS_SHOWN),
        spend=spend.of_issue(db, number),
        bundle=board.bundle_of(db, number),
        transcript=board.transcript_tail(db, number, TRANSCRIPT_SHOWN),
        attempt_of=attempt_numbers(attempts),
        credit=credits.of_issue(db, number, row.account),
    )


def attempt_numbers(attempts: Sequence[Attempt]) -> dict[uuid.UUID, int]:
    return {
        uuid.UUID(a.conversation_id): a.attempt for a in attempts if a.conversation_id is not None
    }


def _attempt(row: dict[str, Any]) -> Attempt:
    cost = row.get("cost_usd")
    verdict = row.get("review_state")
    return Attempt(
        attempt=int(row["attempt"]),
        conversation_id=row.get("conversation_id"),
        runner=row.get("claimed_by") or (None if row.get("queued_at") else "the Queen"),
        key_index=row.get("key_index"),
        model=row.get("model"),
        ordered_at=row.get("created_at"),
        dispatched_at=row.get("dispatched_at"),
        finished_at=row.get("finished_at"),
        outcome=row.get("outcome"),
        detail=row.get("detail"),
        verdict=VERDICTS.get(verdict, verdict) if verdict else None,
        review_note=row.get("review_note"),
        reviewed_at=row.get("reviewed_at"),
        input_tokens=int(row.get("input_tokens") or 0),
        output_tokens=int(row.get("output_tokens") or 0),
        cost_usd=float(cost) if isinstance(cost, int | float) else None,
    )


@dataclass(frozen=True)
class TranscriptPage:
    lines: list[TranscriptLine]
    marks: dict[uuid.UUID, int]  # where the next page starts
    attempt_of: dict[uuid.UUID, int]


def transcript_after(db: Db, number: int, seen: dict[uuid.UUID, int]) -> TranscriptPage:
    """The issue's transcript lines past `seen` (the last seq of each conversation; one
    not named: from its start); UnknownIssue for an unknown number."""
    f = people.facts(db, number)
    if f is None:
        raise unknown(number)
    lines = people.transcript_after(db, number, seen)
    marks = dict(seen)
    for line in lines:
        marks[line.conversation_id] = max(marks.get(line.conversation_id, 0), line.seq)
    attempts = [_attempt(a) for a in people.attempts(db, number) if a.get("attempt") is not None]
    return TranscriptPage(lines, marks, attempt_numbers(attempts))
