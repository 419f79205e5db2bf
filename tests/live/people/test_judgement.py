"""`approve` and `reject` on the real database: what each state allows, and one clear
refusal naming where the work stands for every other."""

from __future__ import annotations

import pytest

from hive.actors.queen.facts import carried_notes
from hive.rules.jobs import JobKind, JobState, Step
from hive.rules.lifecycle import ReviewState
from hive.rules.states import (
    ACCEPT,
    CI_RED_UNDER_CEILING,
    EMPTY,
    ENDED,
    ESCALATE,
    NONE,
    REAPED,
    REFUSED,
    RELEASED,
    RUNNING,
    SENDBACK,
    STALE,
    WAIT,
)
from hive.rules.waits import RESOLVED
from hive.services import judgement
from hive.services.errors import NotFound
from hive.services.judgement import BadNote
from hive.services.standing import NotNow
from hive.store import jobs, orders, people, waits

from .conftest import review_of

pytestmark = pytest.mark.live


def parked_publish_job(db, issue: int) -> jobs.Job:
    """A publish job of `issue` parked at its gate on the wait `approve:<issue>`."""
    jobs.create(db, JobKind.PUBLISH, issue, Step.GATE, attempt=1)
    (claimed,) = jobs.claim(db, "queen-1", kind=JobKind.PUBLISH)
    parked = jobs.park(db, claimed, key=f"approve:{issue}", wake_in_seconds=300)
    assert parked is not None and parked.state == JobState.PARKED
    return parked


# ---- approve ------------------------------------------------------------------------------


def test_approve_opens_the_gate_and_wakes_the_job_parked_on_it(db, make_order):
    make_order(3, ACCEPT)
    parked = parked_publish_job(db, 3)
    done = judgement.approve(db, 3, by="ann (cli)")
    assert (done.issue, done.attempt, done.by) == (3, 1, "ann (cli)")
    row = review_of(db, 3)
    assert row["approved_at"] is not None and row["approved_by"] == "ann (cli)"
    job = jobs.get(db, parked.id)
    assert job is not None and job.state == JobState.READY
    assert parked.wait_id is not None
    wait = waits.get(db, parked.wait_id)
    assert wait is not None and wait.state == RESOLVED


@pytest.mark.parametrize(
    ("state", "says"),
    [
        (NONE, "#4 has no order yet: cannot approve it"),
        (RUNNING, "#4 is running (attempt 1): cannot approve it; its work is not accepted yet"),
        (ENDED, "#4's finished work waits for review (attempt 1): cannot approve it"),
        (WAIT, "#4's review is not over yet"),
        (SENDBACK, "#4 was sent back"),
        (
            ESCALATE,
            "#4 is escalated: cannot approve it; a person decides: edit its criteria or "
            "reject it with a note",
        ),
        (EMPTY, "#4's attempt 1 left no work to judge: cannot approve it"),
        (STALE, "#4's criteria changed after attempt 1 was judged"),
        (REAPED, "#4's attempt 1 ended reaped: runner silent"),
        (RELEASED, "#4's attempt 1 ended (handed back) with nothing to judge"),
        (REFUSED, "#4's attempt 1 ended (refused)"),
    ],
)
def test_approve_refuses_work_that_is_not_accepted(db, make_order, state, says):
    make_order(4, state)
    with pytest.raises(NotNow) as refused:
        judgement.approve(db, 4, by="ann")
    assert str(refused.value).startswith(says)
    assert "cannot approve it" in str(refused.value)
    assert refused.value.status == 409 and refused.value.exit_code == 4
    assert review_of(db, 4)["approved_at"] is None


def test_approve_refuses_an_issue_without_an_order(db, make_issue):
    make_issue(5)
    with pytest.raises(NotNow, match=r"^#5 has no order yet: cannot approve it"):
        judgement.approve(db, 5, by="ann")


def test_approve_refuses_merged_work(db, make_order):
    make_order(6, ACCEPT, merged_sha="a" * 40, issue_state="closed")
    with pytest.raises(NotNow, match=r"^#6 is merged already as a{40}: cannot approve it again"):
        judgement.approve(db, 6, by="ann")


def test_approve_refuses_work_approved_already(db, make_order):
    make_order(7, ACCEPT, approved=True)
    with pytest.raises(NotNow, match=r"^#7 is accepted and was approved by ann: cannot approve"):
        judgement.approve(db, 7, by="bob")
    assert review_of(db, 7)["approved_by"] == "ann"


def test_approve_refuses_accepted_work_of_an_issue_closed_by_hand(db, make_order):
    make_order(8, ACCEPT, issue_state="closed")
    with pytest.raises(NotNow, match=r"^#8 is closed \(closed by hand\): cannot approve it; reo"):
        judgement.approve(db, 8, by="ann")
    assert review_of(db, 8)["approved_at"] is None


def test_approve_of_an_unknown_issue_is_not_found(db):
    with pytest.raises(NotFound, match=r"^no issue #99$") as refused:
        judgement.approve(db, 99, by="ann")
    assert refused.value.status == 404 and refused.value.exit_code == 3


# ---- reject -------------------------------------------------------------------------------


@pytest.mark.parametrize("state", [ENDED, WAIT])
def test_reject_sends_finished_work_back_with_the_note(db, make_order, state):
    make_order(3, state, sendbacks=1)
    done = judgement.reject(db, 3, "  greet() must say hello, not hi  ")
    row = review_of(db, 3)
    assert (row["state"], row["review_state"]) == (SENDBACK, "sendback")
    assert row["review_note"] == "greet() must say hello, not hi"
    assert row["sendbacks"] == 2
    assert "sent back with your note" in str(done)
    assert carried_notes(orders.listing(db)) == {3: "greet() must say hello, not hi"}


def test_reject_sends_accepted_work_back_and_cancels_its_publish_job(db, make_order):
    make_order(3, ACCEPT)
    job = parked_publish_job(db, 3)
    done = judgement.reject(db, 3, "the merge breaks the docs")
    row = review_of(db, 3)
    assert (row["state"], row["review_note"], row["sendbacks"]) == (
        SENDBACK,
        "the merge breaks the docs",
        1,
    )
    after = jobs.get(db, job.id)
    assert after is not None and after.state == JobState.CANCELLED
    assert jobs.live(db, JobKind.PUBLISH, 3) is None
    assert done.cancelled_jobs == 1 and "publish job was cancelled" in str(done)


def test_reject_of_accepted_work_at_the_send_back_ceiling_escalates(db, make_order):
    make_order(3, ACCEPT, sendbacks=2)
    done = judgement.reject(db, 3, "still wrong")
    row = review_of(db, 3)
    assert (row["state"], row["review_note"], row["sendbacks"]) == (ESCALATE, "still wrong", 2)
    assert "escalated with your note" in str(done)


def test_reject_of_escalated_work_makes_it_stale_with_the_note(db, make_order):
    make_order(3, ESCALATE, sendbacks=2)
    done = judgement.reject(db, 3, "use the new API")
    row = review_of(db, 3)
    assert (row["state"], row["review_note"], row["sendbacks"]) == (STALE, "use the new API", 2)
    assert "dispatched again" in str(done)
    assert carried_notes(orders.listing(db)) == {3: "use the new API"}  # the next brief's


@pytest.mark.parametrize(
    ("state", "says"),
    [
        (NONE, "#4 has no order yet: cannot reject it"),
        (RUNNING, "#4 is running (attempt 1): cannot reject it; its work is not done yet"),
        (SENDBACK, "#4 was sent back: its next attempt comes after attempt 1: cannot reject it"),
        (EMPTY, "#4's attempt 1 left no work to judge: cannot reject it"),
        (STALE, "#4's criteria changed after attempt 1 was judged"),
        (REAPED, "#4's attempt 1 ended reaped: runner silent"),
        (RELEASED, "#4's attempt 1 ended (handed back)"),
        (REFUSED, "#4's attempt 1 ended (refused)"),
    ],
)
def test_reject_refuses_work_it_cannot_send_back(db, make_order, state, says):
    make_order(4, state)
    before = review_of(db, 4)
    with pytest.raises(NotNow) as refused:
        judgement.reject(db, 4, "no")
    assert str(refused.value).startswith(says)
    assert "cannot reject it" in str(refused.value)
    assert review_of(db, 4) == before


def test_reject_refuses_merged_work(db, make_order):
    make_order(4, ACCEPT, merged_sha="b" * 40, issue_state="closed")
    with pytest.raises(NotNow, match=r"^#4 is merged already as b{40}: cannot reject it"):
        judgement.reject(db, 4, "too late")
    assert review_of(db, 4)["review_state"] == "accept"


def test_reject_refuses_work_of_an_issue_closed_by_hand(db, make_order):
    make_order(4, ENDED, issue_state="closed")
    with pytest.raises(NotNow, match=r"^#4 is closed \(closed by hand\): cannot reject it"):
        judgement.reject(db, 4, "no")
    assert review_of(db, 4)["review_state"] is None


@pytest.mark.parametrize("note", ["", "   \n", "x" * (judgement.NOTE_MAX_CHARS + 1)])
def test_reject_needs_a_note_of_sensible_size(db, make_order, note):
    make_order(4, ENDED)
    with pytest.raises(BadNote, match=r"^note: ") as refused:
        judgement.reject(db, 4, note)
    assert refused.value.exit_code == 2
    assert review_of(db, 4)["review_state"] is None


def test_reject_of_an_unknown_issue_is_not_found(db):
    with pytest.raises(NotFound, match=r"^no issue #99$"):
        judgement.reject(db, 99, "no")


def test_the_store_never_sends_merged_work_back_even_when_asked_directly(db, make_order):
    made = make_order(4, ACCEPT, merged_sha="b" * 40)
    moved = people.reject(
        db, 4, made.conversation_id, CI_RED_UNDER_CEILING, ReviewState.SENDBACK, "x"
    )
    assert not moved.landed
    assert review_of(db, 4)["review_state"] == "accept"
