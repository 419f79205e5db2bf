"""The reviewer's rows: finished work waiting for review, and its verdicts (RULES 8)."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Any

from psycopg.rows import class_row
from psycopg_pool import ConnectionPool

from hive.rules.lifecycle import ReviewState
from hive.store.sql import q
from hive.store.transitions import Move, move


@dataclass(frozen=True)
class ReviewRow:
    """An attempt whose finished work waits for review, with what a review needs."""

    issue: int
    conversation_id: uuid.UUID
    attempt: int
    branch: str
    base: str
    base_sha: str | None
    owned_paths: list[str]
    salvaged_files: list[str] | None
    sendbacks: int
    review_visits: int
    review_pause_seconds: int
    queued_at: Any
    review_failures: int  # reviews in a row of this attempt that gave no verdict
    key_index: int | None  # the attempt's key: a model reviewer's too
    brief: str | None  # the attempt's brief (a send-back's notes are in it)
    title: str
    body: str
    criteria: list[str]
    head_sha: str | None
    last_visit_at: int | None  # epoch seconds of the last review; None: never visited


def due(db: ConnectionPool[Any]) -> list[ReviewRow]:
    """Rows to review now, never-visited first, then the longest since its last visit."""
    with db.connection() as conn:
        cur = conn.cursor(row_factory=class_row(ReviewRow))
        return list(cur.execute(q("review_rows")).fetchall())


@dataclass(frozen=True)
class Verdict:
    """A review's verdict on one attempt: the event, the review_state it writes, the
    note (reasons, for the next attempt's brief or a person), the next pause, and the
    reviews in a row that gave no verdict (0 for a verdict on the work)."""

    event: int
    review_state: ReviewState
    note: str
    pause_seconds: int = 0
    failures: int = 0


def write_verdict(
    db: ConnectionPool[Any], issue: int, conversation_id: uuid.UUID, verdict: Verdict
) -> Move:
    """Record `verdict` on this attempt, held to the state table."""
    params = {
        "issue": issue,
        "conversation_id": conversation_id,
        "review_state": verdict.review_state.value,
        "note": verdict.note,
        "pause_seconds": verdict.pause_seconds,
        "failures": verdict.failures,
    }
    return move(
        db,
        "write_verdict",
        params,
        issue=issue,
        conversation_id=conversation_id,
        event=verdict.event,
    )
