"""The publish job's rows (DESIGN 10). They are an accepted attempt's facts, its checks,
a red check's send-back and the close of a merged issue."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from psycopg_pool import ConnectionPool

from hive.rules.issue_states import IssueState
from hive.rules.lifecycle import ReviewState
from hive.rules.modes import CheckResult
from hive.rules.states import State
from hive.store.db import Db, as_members, dicts, pick
from hive.store.transitions import Move, move


@dataclass(frozen=True)
class PublishFacts:
    issue: int
    conversation_id: uuid.UUID
    attempt: int
    base: str
    base_sha: str | None
    sendbacks: int
    approved_at: datetime | None
    merged_sha: str | None
    state: State
    head_sha: str | None
    title: str
    issue_state: IssueState
    issue_created_at: datetime

    def __post_init__(self) -> None:
        as_members(self, state=State, issue_state=IssueState)


@dataclass(frozen=True)
class CheckRow:
    name: str
    result: CheckResult
    exit_code: int | None
    seconds: float
    output_tail: str
    merge_sha: str | None
    at: datetime
    inherited: bool = False  # red on the base too: not the work's fault

    def __post_init__(self) -> None:
        as_members(self, result=CheckResult)


def facts(db: ConnectionPool[Any], issue: int) -> PublishFacts | None:
    rows = dicts(db, "publish_facts", {"issue": issue})
    return pick(PublishFacts, rows[0]) if rows else None


def record_check(
    db: ConnectionPool[Any],
    *,
    issue: int,
    attempt: int,
    job: int,
    merge_sha: str,
    name: str,
    result: str,
    exit_code: int | None,
    seconds: float,
    output_tail: str,
    inherited: bool = False,
) -> None:
    dicts(
        db,
        "record_check",
        {
            "issue": issue,
            "attempt": attempt,
            "check_job": job,
            "merge_sha": merge_sha,
            "name": name,
            "check_result": result,
            "exit_code": exit_code,
            "seconds": seconds,
            "output_tail": output_tail,
            "inherited": inherited,
        },
    )


def checks_on(db: ConnectionPool[Any], issue: int, attempt: int, merge_sha: str) -> list[CheckRow]:
    """The latest run of each check on this merge result of this attempt."""
    rows = dicts(db, "checks_on", {"issue": issue, "attempt": attempt, "merge_sha": merge_sha})
    return [pick(CheckRow, row) for row in rows]


def checks_of(db: Db, issue: int, limit: int = 50) -> list[dict[str, Any]]:
    return dicts(db, "checks_of_issue", {"issue": issue, "limit": limit})


def ci_red(
    db: ConnectionPool[Any],
    facts: PublishFacts,
    event: int,
    review_state: ReviewState,
    note: str,
) -> Move:
    """Send accepted work back (or escalate it) with `note`, held to the state table."""
    params = {
        "issue": facts.issue,
        "conversation_id": facts.conversation_id,
        "review_state": review_state.value,
        "note": note,
    }
    return move(
        db,
        "ci_red",
        params,
        issue=facts.issue,
        conversation_id=facts.conversation_id,
        event=event,
    )


def close_merged(db: ConnectionPool[Any], facts: PublishFacts, merge_sha: str) -> float | None:
    """Record the merge and close the issue. Returns the issue's age in seconds. None
    when the attempt is no longer the accepted current one; nothing is then written."""
    params = {
        "issue": facts.issue,
        "conversation_id": facts.conversation_id,
        "merge_sha": merge_sha,
    }
    rows = dicts(db, "close_merged", params)
    return float(rows[0]["age_seconds"]) if rows else None


def pushed_sha(db: ConnectionPool[Any], job: int) -> str | None:
    """The sha the job's last done push effect landed, if any."""
    rows = dicts(db, "pushed_sha", {"job": job})
    return str(rows[0]["sha"]) if rows else None


def approve(db: Db, issue: int, by: str) -> bool:
    """Open the gate of `issue`'s accepted work and wake its publish job parked on it.
    False when the issue has no accepted work waiting for approval."""
    from hive.store import waits

    rows = dicts(db, "approve_order", {"issue": issue, "by": by})
    if not rows:
        return False
    waits.resolve(db, f"approve:{issue}")
    return True


def accepted_without_job(db: Db, older_than_seconds: float) -> list[tuple[int, int]]:
    """(issue, attempt) of each accepted, unmerged attempt that has no publish job and was
    accepted more than `older_than_seconds` ago. Its job was lost."""
    rows = dicts(db, "accepted_without_job", {"older_than_seconds": older_than_seconds})
    return [(int(r["issue"]), int(r["attempt"])) for r in rows]
