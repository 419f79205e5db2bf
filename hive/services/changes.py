"""A person's changes to an issue (DESIGN 10): close and reopen it by hand, edit its
fields, block it by another issue.

Each runs in one transaction: what it changes on the issue and what that does to its
order and its publish job land together or not at all. Refusals: UnknownIssue (404 /
exit 3), NotNow (409 / exit 4) naming where the issue stands, BadIssue and BadRequest
(400 / exit 2) for a wrong field.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from hive.rules.issue_states import IssueState
from hive.rules.jobs import JobKind, Step
from hive.rules.lifecycle import sources
from hive.rules.states import ACCEPT, CRITERIA_CHANGED, RUNNING
from hive.services import issues
from hive.services.errors import BadRequest
from hive.services.standing import CLOSED_BY_HAND, NotNow, refusal, standing, unknown
from hive.store import issues as issue_rows
from hive.store import jobs, people
from hive.store.db import Db, connection
from hive.store.issues import NewIssue
from hive.store.people import Facts
from hive.store.people import IssueChange as IssueChange  # a face names a change by it

# the detail of an order in flight cancelled by its issue's close
CANCELLED_BY_CLOSE = "cancelled: its issue was closed by hand"


@dataclass(frozen=True)
class Closed:
    issue: int
    cancelled_attempt: int | None  # the order in flight this close cancelled, if any
    cancelled_jobs: int

    def __str__(self) -> str:
        parts = [f"closed #{self.issue} ({CLOSED_BY_HAND})"]
        if self.cancelled_attempt is not None:
            parts.append(f"its attempt {self.cancelled_attempt} in flight was cancelled")
        if self.cancelled_jobs:
            parts.append("its publish job was cancelled")
        return "; ".join(parts)


@dataclass(frozen=True)
class Reopened:
    issue: int
    stands: str  # where its work stands now (standing)
    publish_job: int | None  # the publish job made again for accepted, unmerged work

    def __str__(self) -> str:
        text = f"reopened #{self.issue}: {self.stands}"
        if self.publish_job is not None:
            text += f"; its publish job {self.publish_job} takes it on again"
        return text


@dataclass(frozen=True)
class Edited:
    issue: int
    fields: tuple[str, ...]
    went_stale: bool  # its judged work goes again under the new criteria
    running: bool  # an attempt in flight is judged against the new criteria

    def __str__(self) -> str:
        text = f"edited #{self.issue}: {', '.join(self.fields)}"
        if self.went_stale:
            text += "; its judged work is stale under the new criteria: it is dispatched again"
        elif self.running and "criteria" in self.fields:
            text += "; its attempt in flight is reviewed against the new criteria"
        return text


@dataclass(frozen=True)
class Blocked:
    issue: int
    by: int
    added: bool  # False: it was blocked by that issue already
    running: bool

    def __str__(self) -> str:
        if not self.added:
            return f"#{self.issue} was blocked by #{self.by} already"
        n, m = self.issue, self.by
        text = f"#{n} is blocked by #{m}: it is not dispatched until #{m} closes"
        if self.running:
            text += f"; its attempt in flight runs on (hive order cancel {self.issue} stops it)"
        return text


def close(db: Db, issue: int) -> Closed:
    """Close `issue` by hand: an order in flight is cancelled, its live publish job too."""
    with connection(db) as conn, conn.transaction():
        f = _facts(conn, issue)
        if not people.close_issue(conn, issue, CLOSED_BY_HAND):
            why = f.closed_reason or "no reason recorded"
            raise NotNow(f"#{issue} is closed already ({why})")
        cancelled = None
        conversation = f.conversation_id if f.order_state == RUNNING else None
        if conversation and people.cancel(conn, issue, conversation, CANCELLED_BY_CLOSE).landed:
            cancelled = f.attempt
        dropped = jobs.cancel(conn, issue, "its issue was closed by hand", JobKind.PUBLISH)
        return Closed(issue, cancelled, len(dropped))


def reopen(db: Db, issue: int) -> Reopened:
    """Open a closed issue again; accepted work not yet merged gets its publish job back
    (the close cancelled it)."""
    with connection(db) as conn, conn.transaction():
        f = _facts(conn, issue)
        if not people.reopen_issue(conn, issue):
            raise NotNow(f"#{issue} is open already")
        job = None
        if f.order_state == ACCEPT and f.merged_sha is None:
            made = jobs.create(conn, JobKind.PUBLISH, issue, Step.CHECKS, attempt=f.attempt)
            job = made.job.id
        stands = standing(replace(f, issue_state=IssueState.OPEN))
        return Reopened(issue, stands, job)


def edit(db: Db, issue: int, change: IssueChange) -> Edited:
    """Replace the fields `change` gives, checked as a new issue's are. Changed criteria
    make judged work (ended, waiting, sent back, escalated, empty) stale, so it is
    dispatched again; accepted work refuses them (reject it first)."""
    given = tuple(
        name
        for name in ("title", "body", "labels", "boundary", "criteria")
        if getattr(change, name) is not None
    )
    if not given:
        raise BadRequest(
            "nothing to change: give --title, --body, --label, --boundary or --criterion"
        )
    with connection(db) as conn, conn.transaction():
        f = _facts(conn, issue)
        now = issue_rows.get(conn, issue)
        if now is None:
            raise unknown(issue)
        checked = issues.check(
            NewIssue(
                title=now.title if change.title is None else change.title,
                body=now.body if change.body is None else change.body,
                labels=tuple(now.labels if change.labels is None else change.labels),
                boundary=tuple(now.boundary if change.boundary is None else change.boundary),
                criteria=tuple(now.criteria if change.criteria is None else change.criteria),
            )
        )
        new_criteria = change.criteria is not None and list(checked.criteria) != now.criteria
        if new_criteria and f.order_state == ACCEPT:
            raise refusal(
                f, "change its criteria", f"reject it with a note first (hive reject {issue})"
            )
        people.edit_issue(
            conn,
            issue,
            IssueChange(
                title=checked.title if change.title is not None else None,
                body=checked.body if change.body is not None else None,
                labels=checked.labels if change.labels is not None else None,
                boundary=checked.boundary if change.boundary is not None else None,
                criteria=checked.criteria if change.criteria is not None else None,
            ),
        )
        stale = False
        if new_criteria and f.order_state in sources(CRITERIA_CHANGED):
            assert f.conversation_id is not None
            if not people.criteria_changed(conn, issue, f.conversation_id).landed:
                raise refusal(_facts(conn, issue), "change its criteria (it moved meanwhile)")
            stale = True
        return Edited(issue, given, stale, f.order_state == RUNNING)


def block(db: Db, issue: int, by: int) -> Blocked:
    """Add `by` to the issue's blocked_by: it is skipped while `by` is open (the priority
    rule), so the block ends when the blocker closes. A block that would close a cycle is
    refused (both would wait forever), and so is a closed blocker (it blocks nothing)."""
    if issue == by:
        raise BadRequest(f"--by: #{issue} cannot block itself")
    with connection(db) as conn, conn.transaction():
        f = _facts(conn, issue)
        blocker = _facts(conn, by)
        if blocker.issue_state == IssueState.CLOSED:
            raise NotNow(f"#{by} is closed: a closed issue blocks nothing")
        path = people.blocker_path(conn, by, issue)
        if path is not None:
            chain = " waits on ".join(f"#{n}" for n in path)
            raise NotNow(
                f"{chain} already: blocking #{issue} by #{by} would make both wait forever"
            )
        added = people.block(conn, issue, by)
        return Blocked(issue, by, added, f.order_state == RUNNING)


def _facts(db: Db, issue: int) -> Facts:
    f = people.facts(db, issue)
    if f is None:
        raise unknown(issue)
    return f
