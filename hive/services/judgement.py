"""A person's judgement of an issue's work: `approve` opens the merge gate of accepted
work, `reject` sends work back with the person's note (DESIGN 10).

Each refuses (NotNow, 409 / exit 4) with one line naming where the work stands when the
state table does not allow it, and UnknownIssue (404 / exit 3) for an unknown number.
"""

from __future__ import annotations

from dataclasses import dataclass

from hive.rules.issue_states import IssueState
from hive.rules.jobs import JobKind
from hive.rules.lifecycle import REVIEW_STATE_OF, ReviewState
from hive.rules.states import (
    ACCEPT,
    CRITERIA_CHANGED,
    ENDED,
    ESCALATE,
    RUNNING,
    VERDICT_SENDBACK,
    WAIT,
    ci_red_event,
    next_state,
)
from hive.services.errors import BadRequest
from hive.services.standing import refusal, unknown
from hive.store import jobs, people, publish
from hive.store.db import Db, connection
from hive.store.people import Facts

NOTE_MAX_CHARS = 4000  # a note is read by a person and put into a brief


class BadNote(BadRequest):
    """The note of a rejection is empty or too long."""


@dataclass(frozen=True)
class Approved:
    issue: int
    attempt: int
    by: str

    def __str__(self) -> str:
        return (
            f"approved #{self.issue} (attempt {self.attempt}): the merge gate is open and "
            "its publish job goes on to merge it"
        )


@dataclass(frozen=True)
class Rejected:
    issue: int
    attempt: int
    review_state: ReviewState
    cancelled_jobs: int

    def __str__(self) -> str:
        n = f"#{self.issue}"
        if self.review_state is ReviewState.ESCALATE:
            head = (
                f"{n} reached its send-back ceiling and is escalated with your note: "
                f"edit its criteria (hive issue edit {self.issue} --criterion ...) to have "
                "it done again"
            )
        elif self.review_state is ReviewState.STALE:
            head = f"{n} goes back with your note and is dispatched again"
        else:
            head = f"{n} is sent back with your note: its next attempt carries it"
        jobs_note = "; its publish job was cancelled" if self.cancelled_jobs else ""
        return f"rejected attempt {self.attempt}: {head}{jobs_note}"


def approve(db: Db, issue: int, by: str) -> Approved:
    """Open the merge gate of `issue`'s accepted work, which waits for a person (zero
    checks never open it alone), and wake its publish job."""
    with connection(db) as conn, conn.transaction():
        f = _facts(conn, issue)
        if f.order_state == ACCEPT and (f.merged_sha is not None or f.approved_at is not None):
            raise refusal(f, "approve it again")
        if f.issue_state == IssueState.CLOSED or f.order_state != ACCEPT:
            raise refusal(f, "approve it", _not_accepted_hint(f))
        if not publish.approve(conn, issue, by):
            raise refusal(_facts(conn, issue), "approve it (it moved meanwhile)")
        assert f.attempt is not None
        return Approved(issue, f.attempt, by)


def reject(db: Db, issue: int, note: str) -> Rejected:
    """Send `issue`'s work back with `note` as its review note (the next attempt's brief
    carries it) and cancel its live publish job: finished work waiting for review (a
    send-back), accepted work not yet merged (a red CI's move: sent back, or escalated at
    the send-back ceiling), or escalated work (a person's note changes what is asked:
    stale, dispatched again)."""
    text = note.strip()
    if not text:
        raise BadNote("note: say what is wrong; the next attempt's brief carries it")
    if len(text) > NOTE_MAX_CHARS:
        raise BadNote(f"note: at most {NOTE_MAX_CHARS} characters")
    with connection(db) as conn, conn.transaction():
        f = _facts(conn, issue)
        event = _reject_event(f)
        if f.issue_state == IssueState.CLOSED or event is None:
            raise refusal(f, "reject it", _reject_hint(f))
        assert f.conversation_id is not None and f.order_state is not None
        review_state = REVIEW_STATE_OF[next_state(f.order_state, event)]
        moved = people.reject(conn, issue, f.conversation_id, event, review_state, text)
        if not moved.landed:
            raise refusal(_facts(conn, issue), "reject it (it moved meanwhile)")
        cancelled = jobs.cancel(conn, issue, "its work was rejected by a person", JobKind.PUBLISH)
        assert f.attempt is not None
        return Rejected(issue, f.attempt, review_state, len(cancelled))


def _facts(db: Db, issue: int) -> Facts:
    f = people.facts(db, issue)
    if f is None:
        raise unknown(issue)
    return f


def _reject_event(f: Facts) -> int | None:
    if f.order_state in (ENDED, WAIT):
        return VERDICT_SENDBACK
    if f.order_state == ACCEPT and f.merged_sha is None:
        return ci_red_event(f.sendbacks or 0)
    if f.order_state == ESCALATE:
        return CRITERIA_CHANGED
    return None


def _not_accepted_hint(f: Facts) -> str | None:
    if f.order_state in (ENDED, WAIT, RUNNING):
        return "its work is not accepted yet"
    return None


def _reject_hint(f: Facts) -> str | None:
    if f.order_state == RUNNING:
        return f"its work is not done yet; hive order cancel {f.number} stops it"
    return None
