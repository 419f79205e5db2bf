"""What a person's verbs write and read (DESIGN 10). The verbs are reject, cancel, and
an issue's close, reopen, edit and block. The reads are the rows `hive why` and
`hive logs` show.

A write that moves an order goes through `transitions.move`. So it lands only from a
state its event may leave. The other writes are plain updates of `queen_issue`. Each
function runs one statement on `db`. A caller that needs several at once runs them
inside its own transaction on one connection.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from psycopg.types.json import Jsonb

from hive.rules.issue_states import IssueState
from hive.rules.jobs import JobState
from hive.rules.lifecycle import ReviewState
from hive.rules.states import CRITERIA_CHANGED, REAP_STALL, State
from hive.store.db import Db, as_members, dicts, pick
from hive.store.transitions import Move, move

# a cycle check walks at most this many issues deep
BLOCKER_DEPTH_MAX = 64
# a transcript is read this many lines at a time
TRANSCRIPT_PAGE_LINES = 1000


@dataclass(frozen=True)
class Facts:
    """An issue and its current order, as a person's verb sees them. The order's fields
    are None when the issue has no order."""

    number: int
    title: str
    issue_state: IssueState
    criteria: list[Any]
    blocked_by: list[int]
    closed_reason: str | None
    closed_at: datetime | None
    created_at: datetime
    updated_at: datetime
    conversation_id: uuid.UUID | None
    attempt: int | None
    detail: str | None
    queued_at: datetime | None
    claimed_by: str | None
    dispatched_at: datetime | None
    finished_at: datetime | None
    outcome: str | None
    review_state: ReviewState | str | None  # the text when it is no member (ILLEGAL)
    review_note: str | None
    reviewed_at: datetime | None
    sendbacks: int | None
    failures_in_a_row: int | None
    approved_at: datetime | None
    approved_by: str | None
    merged_sha: str | None
    merged_at: datetime | None
    order_state: State | None  # hive.order_state of the row; None: no order

    def __post_init__(self) -> None:
        as_members(
            self,
            issue_state=IssueState,
            review_state=ReviewState,
            order_state=State,
            text_kept=("review_state",),
        )


@dataclass(frozen=True)
class IssueChange:
    """The fields an edit replaces; None keeps a field as it is."""

    title: str | None = None
    body: str | None = None
    labels: Sequence[str] | None = None
    boundary: Sequence[str] | None = None
    criteria: Sequence[Any] | None = None


@dataclass(frozen=True)
class ReportRow:
    id: int
    at: datetime
    headline: str
    body: str


@dataclass(frozen=True)
class JobRow:
    id: int
    kind: str
    attempt: int | None
    step: str
    state: JobState
    detail: str | None
    created_at: datetime
    updated_at: datetime
    finished_at: datetime | None

    def __post_init__(self) -> None:
        as_members(self, state=JobState)


@dataclass(frozen=True)
class TranscriptLine:
    conversation_id: uuid.UUID
    seq: int
    issue: int
    at: datetime
    kind: str
    text: str


def facts(db: Db, issue: int) -> Facts | None:
    """Issue `issue` and its order, or None when there is no such issue."""
    rows = dicts(db, "person_facts", {"issue": issue})
    return pick(Facts, rows[0]) if rows else None


def reject(
    db: Db,
    issue: int,
    conversation_id: uuid.UUID,
    event: int,
    review_state: ReviewState,
    note: str,
) -> Move:
    """Send this attempt's work back, or escalate it, with a person's `note`, by `event`.
    Work that is merged never moves."""
    params = {
        "issue": issue,
        "conversation_id": conversation_id,
        "review_state": review_state.value,
        "note": note,
    }
    return _move(db, "reject_order", params, issue, conversation_id, event)


def cancel(db: Db, issue: int, conversation_id: uuid.UUID, detail: str) -> Move:
    """End this attempt in flight with outcome `cancelled`. A person's cancel is a reaping
    by hand. It moves RUNNING to REAPED, as REAP_STALL does."""
    params = {"issue": issue, "conversation_id": conversation_id, "detail": detail}
    return _move(db, "cancel_order", params, issue, conversation_id, REAP_STALL)


def criteria_changed(db: Db, issue: int, conversation_id: uuid.UUID) -> Move:
    """Make judged work whose criteria changed stale, so it is dispatched again. Its
    review note judged the old criteria, so it is cleared."""
    params = {"issue": issue, "conversation_id": conversation_id}
    return _move(db, "criteria_changed", params, issue, conversation_id, CRITERIA_CHANGED)


def close_issue(db: Db, issue: int, reason: str) -> bool:
    """Close an open issue with `reason`. False: unknown, or closed already."""
    return bool(dicts(db, "close_issue", {"issue": issue, "reason": reason}))


def reopen_issue(db: Db, issue: int) -> bool:
    """Open a closed issue again; why and when it closed are cleared. False: unknown, or
    open already."""
    return bool(dicts(db, "reopen_issue", {"issue": issue}))


def edit_issue(db: Db, issue: int, change: IssueChange) -> bool:
    """Replace the fields `change` gives. False: no such issue."""
    params = {
        "issue": issue,
        "title": change.title,
        "body": change.body,
        "labels": None if change.labels is None else list(change.labels),
        "boundary": None if change.boundary is None else list(change.boundary),
        "criteria": None if change.criteria is None else Jsonb(list(change.criteria)),
    }
    return bool(dicts(db, "edit_issue", params))


def block(db: Db, issue: int, blocker: int) -> bool:
    """Add `blocker` to the issue's blocked_by. False: unknown issue, or blocked by it
    already."""
    return bool(dicts(db, "block_issue", {"issue": issue, "blocker": blocker}))


def blocker_path(db: Db, start: int, target: int) -> list[int] | None:
    """The numbers by which `start` waits on `target` through blocked_by (start first,
    target last), or None when it does not."""
    params = {"start": start, "target": target, "max_depth": BLOCKER_DEPTH_MAX}
    rows = dicts(db, "blocker_path", params)
    return [int(n) for n in rows[0]["path"]] if rows else None


def reports_naming(db: Db, issue: int, *, days: int, limit: int) -> list[ReportRow]:
    """Round reports of the last `days` whose headline or body names `#issue`, newest
    first."""
    params = {"pattern": f"#{issue}(?![0-9])", "days": days, "limit": limit}
    return [pick(ReportRow, r) for r in dicts(db, "reports_naming_issue", params)]


def attempts(db: Db, issue: int) -> list[dict[str, Any]]:
    """Every attempt of `issue` (current and archived) as its row in JSON (timestamps as
    ISO 8601 text), in no order."""
    return [row["attempt"] for row in dicts(db, "attempts_of_issue", {"issue": issue})]


def jobs_of(db: Db, issue: int, *, limit: int = 20) -> list[JobRow]:
    """Every job of `issue`, newest first."""
    return [pick(JobRow, r) for r in dicts(db, "jobs_of_issue", {"issue": issue, "limit": limit})]


def transcript_after(
    db: Db, issue: int, seen: Mapping[uuid.UUID, int], *, limit: int = TRANSCRIPT_PAGE_LINES
) -> list[TranscriptLine]:
    """Up to `limit` lines of the issue's transcript, oldest first. For each
    conversation they start past the last seq in `seen`. A conversation not in `seen`
    starts from its beginning."""
    conversations = list(seen)
    params = {
        "issue": issue,
        "conversations": conversations,
        "seqs": [seen[c] for c in conversations],
        "limit": limit,
    }
    return [pick(TranscriptLine, r) for r in dicts(db, "transcript_of_issue", params)]


def _move(
    db: Db,
    query: str,
    params: dict[str, Any],
    issue: int,
    conversation_id: uuid.UUID,
    event: int,
) -> Move:
    return move(db, query, params, issue=issue, conversation_id=conversation_id, event=event)
