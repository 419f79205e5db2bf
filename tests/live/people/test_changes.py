"""A person's changes to an issue on the real database: close, reopen, edit, block."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from hive.actors.queen.facts import candidates_of
from hive.git.facts import BaseFacts
from hive.rules.jobs import JobKind, JobState, Step
from hive.rules.states import (
    ACCEPT,
    EMPTY,
    ENDED,
    ESCALATE,
    REAPED,
    RUNNING,
    SENDBACK,
    STALE,
    WAIT,
)
from hive.services import changes
from hive.services.errors import BadRequest, NotFound
from hive.services.issues import BadIssue
from hive.services.standing import NotNow
from hive.store import issues, jobs, orders, people
from hive.store.people import IssueChange

from .conftest import review_of

pytestmark = pytest.mark.live

BASE = BaseFacts(sha="0" * 40, files=frozenset({"a.txt"}), dirs=frozenset(), symlinks={})


def closed_fields(db, issue: int) -> tuple[str, str | None, object]:
    row = db.execute(
        "SELECT state, closed_reason, closed_at FROM hive.queen_issue WHERE number = %s", (issue,)
    ).fetchone()
    assert row is not None
    return row


# ---- close --------------------------------------------------------------------------------


def test_close_by_hand_cancels_the_order_in_flight(db, make_order):
    made = make_order(3, RUNNING, runner="runner-1")
    done = changes.close(db, 3)
    state, reason, at = closed_fields(db, 3)
    assert (state, reason) == ("closed", "closed by hand") and at is not None
    row = review_of(db, 3)
    assert (row["state"], row["outcome"]) == (REAPED, "cancelled")
    assert row["detail"] == "cancelled: its issue was closed by hand"
    assert not orders.heartbeat(db, orders.Fence(3, made.conversation_id, "runner-1"))
    assert done.cancelled_attempt == 1 and "attempt 1 in flight was cancelled" in str(done)


def test_close_cancels_a_live_publish_job_and_leaves_judged_work_as_it_is(db, make_order):
    make_order(3, ACCEPT)
    job = jobs.create(db, JobKind.PUBLISH, 3, Step.CHECKS, attempt=1).job
    done = changes.close(db, 3)
    after = jobs.get(db, job.id)
    assert after is not None and after.state == JobState.CANCELLED
    assert review_of(db, 3)["state"] == ACCEPT
    assert (done.cancelled_attempt, done.cancelled_jobs) == (None, 1)


def test_close_of_a_closed_issue_is_refused(db, make_issue):
    make_issue(3, state="closed")
    with pytest.raises(NotNow, match=r"^#3 is closed already \(closed by hand\)$"):
        changes.close(db, 3)


def test_close_of_an_unknown_issue_is_not_found(db):
    with pytest.raises(NotFound, match=r"^no issue #99$"):
        changes.close(db, 99)


# ---- reopen -------------------------------------------------------------------------------


def test_reopen_clears_why_and_when_it_closed(db, make_issue):
    make_issue(3, state="closed")
    done = changes.reopen(db, 3)
    assert closed_fields(db, 3) == ("open", None, None)
    assert str(done) == "reopened #3: #3 has no order yet"


def test_reopen_gives_accepted_unmerged_work_its_publish_job_back(db, make_order):
    make_order(3, ACCEPT)
    changes.close(db, 3)
    done = changes.reopen(db, 3)
    live = jobs.live(db, JobKind.PUBLISH, 3)
    assert live is not None and done.publish_job == live.id
    assert (live.step, live.attempt) == (Step.CHECKS, 1)


def test_reopen_of_an_open_issue_is_refused(db, make_issue):
    make_issue(3)
    with pytest.raises(NotNow, match=r"^#3 is open already$"):
        changes.reopen(db, 3)


def test_reopen_of_an_unknown_issue_is_not_found(db):
    with pytest.raises(NotFound):
        changes.reopen(db, 99)


# ---- edit ---------------------------------------------------------------------------------


def test_edit_replaces_only_the_fields_given(db, make_issue):
    make_issue(3)
    done = changes.edit(db, 3, IssueChange(title=" New title ", boundary=("./docs/a.md",)))
    issue = issues.get(db, 3)
    assert issue is not None
    assert (issue.title, issue.body, issue.boundary) == ("New title", "do it", ["docs/a.md"])
    assert issue.criteria == ["file `a.txt` contains `a`"]
    assert done.fields == ("title", "boundary") and not done.went_stale


@pytest.mark.parametrize("state", [ENDED, WAIT, SENDBACK, ESCALATE, EMPTY])
def test_changed_criteria_make_judged_work_stale(db, make_order, state):
    make_order(3, state)
    done = changes.edit(db, 3, IssueChange(criteria=("file `a.txt` contains `b`",)))
    row = review_of(db, 3)
    assert row["state"] == STALE
    assert row["review_note"] is None  # it judged the old criteria: no brief carries it
    assert done.went_stale and "dispatched again" in str(done)
    issue = issues.get(db, 3)
    assert issue is not None and issue.criteria == ["file `a.txt` contains `b`"]


def test_the_same_criteria_again_change_nothing(db, make_order):
    make_order(3, ENDED)
    done = changes.edit(db, 3, IssueChange(criteria=("file `a.txt` contains `a`",)))
    assert review_of(db, 3)["state"] == ENDED and not done.went_stale


def test_new_criteria_under_an_attempt_in_flight_are_what_its_review_reads(db, make_order):
    make_order(3, RUNNING)
    done = changes.edit(db, 3, IssueChange(criteria=("c",)))
    assert review_of(db, 3)["state"] == RUNNING
    assert "reviewed against the new criteria" in str(done)


def test_new_criteria_for_accepted_work_are_refused_and_nothing_changes(db, make_order):
    make_order(3, ACCEPT)
    with pytest.raises(NotNow) as refused:
        changes.edit(db, 3, IssueChange(title="Other", criteria=("c",)))
    assert str(refused.value).startswith(
        "#3 is accepted and waits at the merge gate: cannot change its criteria; reject it"
    )
    issue = issues.get(db, 3)
    assert issue is not None and issue.title == "issue 3"
    assert issue.criteria == ["file `a.txt` contains `a`"]
    assert review_of(db, 3)["state"] == ACCEPT


def test_an_edit_with_nothing_to_change_is_a_bad_request(db, make_issue):
    make_issue(3)
    with pytest.raises(BadRequest, match=r"^nothing to change"):
        changes.edit(db, 3, IssueChange())


def test_a_bad_field_is_named_and_nothing_changes(db, make_issue):
    make_issue(3)
    with pytest.raises(BadIssue, match=r"^boundary\[1\]: '\.\./x'"):
        changes.edit(db, 3, IssueChange(title="T", boundary=("a.txt", "../x")))
    issue = issues.get(db, 3)
    assert issue is not None and issue.title == "issue 3"


def test_edit_of_an_unknown_issue_is_not_found(db):
    with pytest.raises(NotFound):
        changes.edit(db, 99, IssueChange(title="x"))


# ---- block --------------------------------------------------------------------------------


def blocked(db, issue: int) -> bool:
    now = datetime.now(UTC)
    found = candidates_of(issues.listing(db, open_only=True), orders.listing(db), BASE, now)
    return next(c for c in found.candidates if c.number == issue).open_blocker


def test_a_block_holds_until_the_blocker_closes(db, make_issue):
    make_issue(3)
    make_issue(4)
    done = changes.block(db, 3, by=4)
    issue = issues.get(db, 3)
    assert issue is not None and issue.blocked_by == [4]
    assert "not dispatched until #4 closes" in str(done)
    assert blocked(db, 3)
    changes.close(db, 4)
    assert not blocked(db, 3)  # the priority rule reads only open blockers


def test_blocking_twice_by_the_same_issue_adds_it_once(db, make_issue):
    make_issue(3, blocked_by=(4,))
    make_issue(4)
    done = changes.block(db, 3, by=4)
    issue = issues.get(db, 3)
    assert issue is not None and issue.blocked_by == [4]
    assert not done.added and str(done) == "#3 was blocked by #4 already"


def test_blocking_an_issue_in_flight_says_its_attempt_runs_on(db, make_order, make_issue):
    make_order(3, RUNNING)
    make_issue(4)
    assert "hive order cancel 3 stops it" in str(changes.block(db, 3, by=4))


def test_a_block_that_closes_a_cycle_is_refused(db, make_issue):
    make_issue(3)
    make_issue(4, blocked_by=(5,))
    make_issue(5, blocked_by=(3,))
    with pytest.raises(NotNow, match=r"^#4 waits on #5 waits on #3 already: blocking #3 by #4"):
        changes.block(db, 3, by=4)
    with pytest.raises(NotNow, match=r"^#5 waits on #3 already"):
        changes.block(db, 3, by=5)
    issue = issues.get(db, 3)
    assert issue is not None and issue.blocked_by == []


def test_a_closed_blocker_is_refused(db, make_issue):
    make_issue(3)
    make_issue(4, state="closed")
    with pytest.raises(NotNow, match=r"^#4 is closed: a closed issue blocks nothing$"):
        changes.block(db, 3, by=4)


def test_an_issue_cannot_block_itself(db, make_issue):
    make_issue(3)
    with pytest.raises(BadRequest, match=r"cannot block itself"):
        changes.block(db, 3, by=3)


@pytest.mark.parametrize(("issue", "by"), [(99, 3), (3, 99)])
def test_a_block_naming_an_unknown_issue_is_not_found(db, make_issue, issue, by):
    make_issue(3)
    with pytest.raises(NotFound, match=r"^no issue #99$"):
        changes.block(db, issue, by=by)


def test_people_facts_is_none_for_an_unknown_issue(db):
    assert people.facts(db, 99) is None
