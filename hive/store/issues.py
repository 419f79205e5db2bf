"""`queen_issue`: the units of work (title, body, labels, boundary, criteria)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from psycopg.types.json import Jsonb

from hive.rules.issue_states import ClosedCode, IssueState
from hive.store.db import Db, dicts, one, pick

# NOTIFYed by every write that may let an issue go (added, reopened, edited): the Queen
# LISTENs and rounds at once, so an issue from another process is queued in milliseconds
ISSUES_CHANNEL = "hive_issues"


@dataclass(frozen=True)
class NewIssue:
    title: str
    body: str = ""
    labels: tuple[str, ...] = ()
    boundary: tuple[str, ...] = ()
    criteria: tuple[Any, ...] = ()
    blocked_by: tuple[int, ...] = ()
    account: str | None = None  # who pays for its turns (None: the default account)


@dataclass(frozen=True)
class Issue:
    number: int
    title: str
    body: str
    labels: list[str]
    boundary: list[str]
    criteria: list[Any]
    state: IssueState
    blocked_by: list[int]
    created_at: datetime
    updated_at: datetime
    closed_reason: str | None = None  # "merged as <sha>", "closed by hand": for people
    closed_code: ClosedCode | None = None  # why it closed, as the hive decides on it
    account: str | None = None  # who pays for its turns (None: the default account)
    origin: str | None = None  # "hive", "github"; None: from before origins were kept
    forge_updated_at: datetime | None = None  # the GitHub issue's updated_at last followed

    def __post_init__(self) -> None:
        object.__setattr__(self, "state", IssueState(self.state))  # the column reads as text
        if self.closed_code is not None:  # the column reads as its text
            object.__setattr__(self, "closed_code", ClosedCode(self.closed_code))


def _params(issue: NewIssue) -> dict[str, Any]:
    return {
        "title": issue.title,
        "body": issue.body,
        "labels": list(issue.labels),
        "boundary": list(issue.boundary),
        "criteria": Jsonb(list(issue.criteria)),
        "blocked_by": list(issue.blocked_by),
        "account": issue.account,
    }


def create(db: Db, issue: NewIssue) -> Issue:
    """A new issue with the next free number (`POST /api/issues`). Two concurrent creates
    may collide on the number: one raises UniqueViolation and may simply retry."""
    return pick(Issue, dicts(db, "create_issue", _params(issue))[0])


def upsert(db: Db, number: int, issue: NewIssue) -> Issue:
    """Create issue `number` or replace its fields (keeps its state)."""
    return pick(Issue, dicts(db, "upsert_issue", {"number": number, **_params(issue)})[0])


def get(db: Db, number: int) -> Issue | None:
    rows = dicts(db, "get_issue", {"number": number})
    return pick(Issue, rows[0]) if rows else None


def listing(db: Db, *, open_only: bool = False) -> list[Issue]:
    return [pick(Issue, r) for r in dicts(db, "list_issues", {"open_only": open_only})]


def set_state(db: Db, number: int, state: str) -> bool:
    """`state` is `open` or `closed`; False when there is no such issue."""
    return one(db, "set_issue_state", {"number": number, "state": state}) is not None


__all__: Sequence[str] = ("Issue", "NewIssue", "create", "get", "listing", "set_state", "upsert")


def follow_forge(db: Db, number: int, updated_at: datetime | None) -> bool:
    """Mark issue `number` as GitHub's, followed up to `updated_at` (never back); False
    when it is the hive's own (or gone)."""
    params = {"number": number, "forge_updated_at": updated_at}
    return bool(dicts(db, "follow_forge_issue", params))
